package integration

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	typedtenant "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned/typed/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestDataPathServiceNetwork checks a tenant's service network at the
// packet level, on ovn-trace's verdicts: acme serves Service web from a
// second Network (svcnet, Shared). While acme's Network default is
// Private, acme's pod there does not reach web's address; once default is
// Shared too (the syncer's ClusterNetworkConnect, ServiceNetwork
// connectivity), it does, through web's load balancer, to the server
// pod; it still does not reach the server pod's own address (Services
// are shared, not pods); and globex's pod never reaches web.
func TestDataPathServiceNetwork(t *testing.T) {
	isoDemoTenants(t)
	ctx := framework.Context(t, 5*time.Minute)
	dp := dataPath(t)
	s := framework.Current()
	kube, _, err := s.Clients(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	acme := isoAlice.clientset(t).TenantV1alpha1()
	setMode := func(network string, mode tenantv1alpha1.ServiceNetworkMode) {
		t.Helper()
		patch := fmt.Sprintf(`{"spec":{"serviceNetwork":%q}}`, mode)
		if _, stderr, err := s.Kubectl(ctx, alice, "patch", "networks.tenant.io", network, "--type=merge", "-p", patch); err != nil {
			t.Fatalf("setting Network %s %s: %v: %s", network, mode, err, stderr)
		}
	}

	// acme's second Network, Shared, with a Namespace on it.
	if _, err := acme.Networks().Create(ctx, &tenantv1alpha1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "svcnet"},
		Spec:       tenantv1alpha1.NetworkSpec{ServiceNetwork: tenantv1alpha1.ServiceNetworkShared},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "svcns"}, Spec: tenantv1alpha1.NamespaceSpec{Network: "svcnet"}}
	if _, err := acme.Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Cleanups run last in, first out: the pods go first, then these.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		_, _, _ = s.Kubectl(ctx, alice, "patch", "networks.tenant.io", "default", "--type=merge", "-p", `{"spec":{"serviceNetwork":"Private"}}`)
		_ = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
			err := acme.Namespaces().Delete(ctx, "svcns", metav1.DeleteOptions{})
			return err == nil || apierrors.IsNotFound(err), nil
		})
		_ = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
			err := acme.Networks().Delete(ctx, "svcnet", metav1.DeleteOptions{})
			return apierrors.IsNotFound(err), nil
		})
	})
	svcNS := hostNamespaceOf(ctx, t, alice, "svcns")
	server := placePod(ctx, t, kube, dp, svcNS, "web")
	if _, err := kube.CoreV1().Services(svcNS).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: svcNS},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	runPod(ctx, t, kube, svcNS, "web")
	svc, err := kube.CoreV1().Services(svcNS).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	clusterIP := svc.Spec.ClusterIP
	// ovnkube-controller's load balancer of web on svcnet, with the
	// server's address there as its backend.
	svcnet := waitNetworkStatus(ctx, t, acme, "svcnet", func(n *tenantv1alpha1.Network) bool { return n.Status.HostNetwork != "" })
	lb := "cluster_udn_" + svcnet.Status.HostNetwork + "_Service_" + svcNS + "/web_TCP_cluster"
	backend := net.JoinHostPort(server.ip, "8080")
	var vips string
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		vips, _ = dp.NBCtl(ctx, "--bare", "--columns=vips", "find", "Load_Balancer", "name="+lb)
		return strings.Contains(vips, backend), nil
	}); err != nil {
		t.Fatalf("load balancer %s never gets backend %s (vips %q)", lb, backend, vips)
	}

	a := placePod(ctx, t, kube, dp, hostNamespaceOf(ctx, t, alice, "dev"), "sn-a1")
	g := placePod(ctx, t, kube, dp, hostNamespaceOf(ctx, t, "bob", "dev"), "sn-g1")
	toServer := func(from port, dstIP, dstPort string) bool {
		t.Helper()
		out := traceL4(ctx, t, dp, from, gatewayMAC(ctx, t, dp, from), dstIP, from.ip, "tcp && tcp.src == 40000 && tcp.dst == "+dstPort)
		t.Logf("%s -> %s:%s: outputs %v", from, dstIP, dstPort, out)
		return slices.Contains(out, server.lsp)
	}

	// acme's default Network is Private: its pod does not reach web.
	if toServer(a, clusterIP, "80") {
		t.Errorf("acme's pod on its Private Network default to Service web %s:80 of Network svcnet: delivered", clusterIP)
	}

	// Shared too: one service network.
	setMode("default", tenantv1alpha1.ServiceNetworkShared)
	for _, n := range []string{"default", "svcnet"} {
		waitNetworkStatus(ctx, t, acme, n, func(n *tenantv1alpha1.Network) bool {
			return meta.IsStatusConditionTrue(n.Status.Conditions, tenantv1alpha1.ConditionServicesShared)
		})
	}
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return toServer(a, clusterIP, "80"), nil
	}); err != nil {
		t.Errorf("acme's pod on its Shared Network default to Service web %s:80 of its Shared Network svcnet: not delivered to the server", clusterIP)
	}
	if toServer(a, server.ip, "8080") {
		t.Errorf("acme's pod to the server pod's own address %s: delivered (the service network connects Services, not pods)", server.ip)
	}
	if toServer(g, clusterIP, "80") {
		t.Errorf("globex's pod to acme's Service web %s:80: delivered", clusterIP)
	}
	acmeTenant, err := isoAdmin.clientset(t).TenantV1alpha1().Tenants().Get(ctx, "acme", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cnc, _, err := s.Kubectl(ctx, stack.AdminUser, "get", "clusternetworkconnects", hostnames.ServiceNetworkConnect(acmeTenant.UID), "-o", "jsonpath={.spec.connectivity}")
	if err != nil || !strings.Contains(cnc, "ServiceNetwork") || strings.Contains(cnc, "PodNetwork") {
		t.Errorf("acme's ClusterNetworkConnect connectivity %q (%v), want ServiceNetwork only", cnc, err)
	}

	// Private again: the connection goes, and with it the way to web.
	setMode("default", tenantv1alpha1.ServiceNetworkPrivate)
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return !toServer(a, clusterIP, "80"), nil
	}); err != nil {
		t.Errorf("acme's pod, its Network default Private again, to Service web %s:80: still delivered", clusterIP)
	}
}

// waitNetworkStatus waits until the Network name of the tenant of cs
// satisfies ok.
func waitNetworkStatus(ctx context.Context, t *testing.T, cs typedtenant.TenantV1alpha1Interface, name string, ok func(*tenantv1alpha1.Network) bool) *tenantv1alpha1.Network {
	t.Helper()
	var n *tenantv1alpha1.Network
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := cs.Networks().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		n = got
		return ok(got), nil
	})
	if err != nil {
		t.Fatalf("Network %s: %v; last seen %+v", name, err, n)
	}
	return n
}
