package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// runPod plays the kubelet for pod namespace/name, which no kubelet runs
// here: it reports the pod running and ready, with the address the pod's
// sandbox gets on the cluster's default network (the one a kubelet
// reports for a pod of a primary user-defined network), so that the
// EndpointSlice controller makes it an endpoint. A stand-in: the data
// path's node has no kubelet.
func runPod(ctx context.Context, t *testing.T, kube kubernetes.Interface, namespace, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pod, err := kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		var nets map[string]struct {
			IPAddress string `json:"ip_address"`
		}
		if json.Unmarshal([]byte(pod.Annotations["k8s.ovn.org/pod-networks"]), &nets) != nil || nets["default"].IPAddress == "" {
			return false, nil
		}
		ip, _, _ := strings.Cut(nets["default"].IPAddress, "/")
		now := metav1.Now()
		pod.Status.Phase = corev1.PodRunning
		pod.Status.HostIP = strings.SplitN(stack.SimulatedNodes[0].PrimaryIP, "/", 2)[0]
		pod.Status.PodIP = ip
		pod.Status.PodIPs = []corev1.PodIP{{IP: ip}}
		pod.Status.StartTime = &now
		pod.Status.Conditions = nil
		for _, c := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue, LastTransitionTime: now})
		}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}}
		_, err = kube.CoreV1().Pods(namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("reporting pod %s/%s running: %v", namespace, name, err)
	}
}

// TestDataPathProviderService checks a provider service at the packet
// level: the demo's DNS resolver (Service resolver in the provider's
// namespace infra, on provider network infra) offered to acme and not to
// globex. OVN-Kubernetes' controllers connect them (the syncer's
// ClusterNetworkConnect, ServiceNetwork connectivity): acme's pod reaches
// the resolver through the Service's address, globex's does not, and
// neither reaches the resolver pod's own address (the offer connects the
// service network, not the pod network). Asserted on ovn-trace's verdicts
// and, where the machine allows, with real UDP through the chassis.
func TestDataPathProviderService(t *testing.T) {
	isoDemoTenants(t)
	ctx := framework.Context(t, 4*time.Minute)
	dp := dataPath(t)
	s := framework.Current()
	kube, _, err := s.Clients(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	infra := filepath.Join(root, "artifacts", "examples", "provider-infra.yaml")
	if _, stderr, err := s.Kubectl(ctx, stack.AdminUser, "apply", "--server-side", "-f", infra); err != nil {
		t.Fatalf("applying %s: %v: %s", infra, err, stderr)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _, _ = s.Kubectl(ctx, stack.AdminUser, "delete", "--ignore-not-found", "--wait=false", "-f", infra)
	})
	admin := isoAdmin.clientset(t).TenantV1alpha1()
	offer := &tenantv1alpha1.ProviderService{
		ObjectMeta: metav1.ObjectMeta{Name: "dp-resolver"},
		Spec: tenantv1alpha1.ProviderServiceSpec{
			Service: tenantv1alpha1.ServiceReference{Namespace: "infra", Name: "resolver"},
			Alias:   "dp-resolver", Tenants: []string{"acme"},
		},
	}
	if _, err := admin.ProviderServices().Create(ctx, offer, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.ProviderServices().Delete(context.Background(), offer.Name, metav1.DeleteOptions{})
	})
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		ps, err := admin.ProviderServices().Get(ctx, offer.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range ps.Status.Tenants {
			if e.Name == "acme" && e.Connected {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the offer of infra/resolver to acme never reports acme connected: %v", err)
	}
	svc, err := kube.CoreV1().Services("infra").Get(ctx, "resolver", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	clusterIP := svc.Spec.ClusterIP

	resolver := placePod(ctx, t, kube, dp, "infra", "resolver")
	runPod(ctx, t, kube, "infra", "resolver")
	// ovnkube-controller's load balancer of the Service on the provider
	// network, with the resolver pod's address there as its backend.
	lb := "cluster_udn_infra_Service_infra/resolver_UDP_cluster"
	backend := net.JoinHostPort(resolver.ip, "5353")
	var vips string
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		vips, _ = dp.NBCtl(ctx, "--bare", "--columns=vips", "find", "Load_Balancer", "name="+lb)
		return strings.Contains(vips, backend), nil
	}); err != nil {
		t.Fatalf("load balancer %s never gets backend %s (vips %q)", lb, backend, vips)
	}

	acmeNS, globexNS := hostNamespaceOf(ctx, t, alice, "dev"), hostNamespaceOf(ctx, t, "bob", "dev")
	a, g := placePod(ctx, t, kube, dp, acmeNS, "sv-a1"), placePod(ctx, t, kube, dp, globexNS, "sv-g1")
	toResolver := func(from port, dstIP, dstPort string) bool {
		t.Helper()
		out := traceL4(ctx, t, dp, from, gatewayMAC(ctx, t, dp, from), dstIP, from.ip, "udp && udp.src == 40000 && udp.dst == "+dstPort)
		t.Logf("%s -> %s:%s: outputs %v", from, dstIP, dstPort, out)
		for _, o := range out {
			if o == resolver.lsp {
				return true
			}
		}
		return false
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return toResolver(a, clusterIP, "53"), nil
	}); err != nil {
		t.Errorf("acme's pod to the offered Service %s:53: not delivered to the resolver", clusterIP)
	}
	if toResolver(g, clusterIP, "53") {
		t.Errorf("globex's pod (not offered) to the Service %s:53: delivered to the resolver", clusterIP)
	}
	for _, from := range []port{a, g} {
		if toResolver(from, resolver.ip, "5353") {
			t.Errorf("%s to the resolver pod's own address %s: delivered (the offer connects the service network only)", from, resolver.ip)
		}
	}

	// Real packets, where the machine allows.
	if why := stack.PacketsUnavailable(); why != "" {
		t.Skip("the real-packet rows need what this machine lacks: " + why)
	}
	pk, err := s.StartPackets(ctx)
	if err != nil {
		t.Fatalf("starting Open vSwitch and ovn-controller: %v", err)
	}
	plugged := map[string]*stack.PodHost{}
	for _, p := range []port{resolver, a, g} {
		ns, name, _ := strings.Cut(p.pod, "/")
		h, err := pk.Plug(ctx, kube, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = pk.Unplug(context.Background(), h) })
		plugged[p.pod] = h
	}
	_, l, err := plugged[resolver.pod].Listen("udp", ":5353")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	received := make(chan string, 64)
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := l.ReadFrom(buf)
			if err != nil {
				return
			}
			received <- string(buf[:n])
			_, _ = l.WriteTo(buf[:n], from) // the answer
		}
	}()
	ask := func(h *stack.PodHost) (answered bool, arrived int) {
		t.Helper()
		token := fmt.Sprintf("query-%s-%d", h.IP, time.Now().UnixNano())
		c, err := h.Dial(ctx, "udp", "", net.JoinHostPort(clusterIP, "53"))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		_, _ = c.Write([]byte(token))
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		buf := make([]byte, 512)
		n, err := c.Read(buf)
		answered = err == nil && string(buf[:n]) == token
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && !strings.Contains(err.Error(), "refused") {
			t.Logf("%s reading the answer: %v", h, err)
		}
		deadline := time.After(200 * time.Millisecond)
		for {
			select {
			case m := <-received:
				if m == token {
					arrived++
				}
			case <-deadline:
				return answered, arrived
			}
		}
	}
	acme, globex := plugged[a.pod], plugged[g.pod]
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		answered, _ := ask(acme)
		return answered, nil
	}); err != nil {
		t.Errorf("UDP from acme's %s to the offered Service %s:53: no answer from the resolver", acme, clusterIP)
	}
	if answered, arrived := ask(globex); answered || arrived != 0 {
		t.Errorf("UDP from globex's %s to the Service %s:53: answered=%v, %d datagrams reached the resolver", globex, clusterIP, answered, arrived)
	}

	// Offered to globex too: now it is answered, so the zero above is the
	// offer's doing, not a probe that cannot succeed.
	ps, err := admin.ProviderServices().Get(ctx, offer.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ps.Spec.Tenants = []string{"acme", "globex"}
	if _, err := admin.ProviderServices().Update(ctx, ps, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		answered, _ := ask(globex)
		return answered, nil
	}); err != nil {
		t.Errorf("UDP from globex's %s to the Service %s:53 once offered to globex: no answer", globex, clusterIP)
	}
	if !toResolver(g, clusterIP, "53") {
		t.Errorf("globex's pod to the Service %s:53 once offered to globex: not delivered in ovn-trace", clusterIP)
	}
}
