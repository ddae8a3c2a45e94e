package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// externalPort is the logical port by which traffic from the machine
// network enters network ls's gateway router on the data path node (a
// localnet port of its external switch), with the router port's MAC.
func externalPort(ctx context.Context, t *testing.T, dp *stack.DataPath, network string) (port, string) {
	t.Helper()
	ext := "ext_" + network + "_" + stack.DataPathNode
	lsp := "breth0_" + network + "_" + stack.DataPathNode
	rtoe := "rtoe-GR_" + network + "_" + stack.DataPathNode
	var mac string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		out, err := dp.NBCtl(ctx, "--bare", "--columns=mac", "list", "Logical_Router_Port", rtoe)
		if err != nil {
			return false, nil
		}
		mac = strings.TrimSpace(out)
		return mac != "", nil
	})
	if err != nil {
		t.Fatalf("network %s has no gateway router port %s on %s: %v", network, rtoe, stack.DataPathNode, err)
	}
	// A client on the machine network, beyond its router.
	return port{pod: "client beyond " + ext, lsp: lsp, ls: ext, mac: "52:54:00:c0:02:01", ip: "198.51.100.7"}, mac
}

// networkOf is the OVN network name of pod p's switch
// ("cluster_udn_<cudn>" of "cluster_udn_<cudn>_ovn_layer2_switch").
func networkOf(p port) string {
	return strings.TrimSuffix(strings.TrimSuffix(p.ls, "_ovn_layer2_switch"), "_ovn_cluster_switch")
}

// TestDataPathLoadBalancer checks a tenant LoadBalancer, and a FloatingIP's
// inbound ports, on OVN's verdicts: a new connection from the machine
// network to the public address, as it enters acme's gateway router, is
// delivered to the pod selected (or bound) and to no other (not acme's
// other pod, not globex's), on its ports only; the same packet entering
// globex's gateway router reaches nothing of acme's.
func TestDataPathLoadBalancer(t *testing.T) {
	isoDemoTenants(t)
	isoDemoPublicIPs(t, 2)
	ctx := framework.Context(t, 3*time.Minute)
	dp := dataPath(t)
	kube, _, err := framework.Current().Clients(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	acmeNS, globexNS := hostNamespaceOf(ctx, t, alice, "dev"), hostNamespaceOf(ctx, t, "bob", "dev")
	web, other := placePod(ctx, t, kube, dp, acmeNS, "lb-web"), placePod(ctx, t, kube, dp, acmeNS, "lb-other")
	g := placePod(ctx, t, kube, dp, globexNS, "lb-g1")
	for _, name := range []string{"lb-web", "lb-other"} {
		runPod(ctx, t, kube, acmeNS, name)
	}
	acme := isoAlice.clientset(t).TenantV1alpha1()
	lb := &tenantv1alpha1.LoadBalancer{
		ObjectMeta: metav1.ObjectMeta{Name: "dp-web"},
		Spec: tenantv1alpha1.LoadBalancerSpec{
			Selector: map[string]string{"app": "lb-web"},
			Ports:    []tenantv1alpha1.LoadBalancerPort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if _, err := acme.LoadBalancers("dev").Create(ctx, lb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = acme.LoadBalancers("dev").Delete(context.Background(), lb.Name, metav1.DeleteOptions{}) })
	var address string
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := acme.LoadBalancers("dev").Get(ctx, lb.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		address = got.Status.Address
		return address != "", nil
	}); err != nil {
		t.Fatalf("LoadBalancer dp-web never gets an address: %v", err)
	}

	from, gwMAC := externalPort(ctx, t, dp, networkOf(web))
	l4 := "tcp && tcp.src == 40000 && tcp.dst == 80"
	var out []string
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		out = traceL4(ctx, t, dp, from, gwMAC, address, from.ip, l4)
		for _, o := range out {
			if o == web.lsp {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("a connection from the machine network to acme's LoadBalancer %s:80: not delivered to %s (outputs %v)", address, web, out)
	}
	t.Logf("%s -> %s:80 through acme's gateway router: outputs %v", from.ip, address, out)
	for _, o := range out {
		if o == other.lsp || o == g.lsp {
			t.Errorf("a connection to acme's LoadBalancer %s:80 reached %s", address, o)
		}
	}
	// The other port of the address is not balanced.
	for _, o := range traceL4(ctx, t, dp, from, gwMAC, address, from.ip, "tcp && tcp.src == 40000 && tcp.dst == 8080") {
		if o == web.lsp || o == other.lsp {
			t.Errorf("a connection to %s:8080 (not a port of the LoadBalancer) reached %s", address, o)
		}
	}
	// The tenant moves the LoadBalancer to its other pod: the connection
	// follows the selector.
	got, err := acme.LoadBalancers("dev").Get(ctx, lb.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Spec.Selector = map[string]string{"app": "lb-other"}
	if _, err := acme.LoadBalancers("dev").Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		out = traceL4(ctx, t, dp, from, gwMAC, address, from.ip, l4)
		return len(out) == 1 && out[0] == other.lsp, nil
	}); err != nil {
		t.Errorf("after the selector moved to lb-other, a connection to %s:80 reaches %v, want only %s", address, out, other)
	}
	// A FloatingIP bound to lb-web with port 22: its inbound is a
	// LoadBalancer Service on its own address, selecting that pod alone.
	fip := &tenantv1alpha1.FloatingIP{
		ObjectMeta: metav1.ObjectMeta{Name: "dp-fip"},
		Spec: tenantv1alpha1.FloatingIPSpec{
			Target: &tenantv1alpha1.FloatingIPTarget{Kind: tenantv1alpha1.FloatingIPTargetPod, Name: "lb-web"},
			Ports:  []tenantv1alpha1.FloatingIPPort{{Port: 22}},
		},
	}
	if _, err := acme.FloatingIPs("dev").Create(ctx, fip, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = acme.FloatingIPs("dev").Delete(context.Background(), fip.Name, metav1.DeleteOptions{}) })
	var fipAddress string
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := acme.FloatingIPs("dev").Get(ctx, fip.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		fipAddress = got.Status.Address
		if fipAddress == "" {
			return false, nil
		}
		out = traceL4(ctx, t, dp, from, gwMAC, fipAddress, from.ip, "tcp && tcp.src == 40000 && tcp.dst == 22")
		return len(out) == 1 && out[0] == web.lsp, nil
	}); err != nil {
		t.Errorf("a connection to FloatingIP %s:22 bound to %s reaches %v, want only that pod", fipAddress, web, out)
	}
	t.Logf("%s -> FloatingIP %s:22: outputs %v", from.ip, fipAddress, out)
	for _, o := range traceL4(ctx, t, dp, from, gwMAC, fipAddress, from.ip, "tcp && tcp.src == 40000 && tcp.dst == 80") {
		if o == web.lsp || o == other.lsp {
			t.Errorf("a connection to FloatingIP %s:80 (not one of its ports) reached %s", fipAddress, o)
		}
	}
	// The same packet entering globex's gateway router.
	gFrom, gMAC := externalPort(ctx, t, dp, networkOf(g))
	out = traceL4(ctx, t, dp, gFrom, gMAC, address, gFrom.ip, l4)
	t.Logf("%s -> %s:80 through globex's gateway router: outputs %v", gFrom.ip, address, out)
	for _, o := range out {
		if o == web.lsp || o == other.lsp || o == g.lsp {
			t.Errorf("acme's LoadBalancer address %s:80 entering globex's gateway router reached %s", address, o)
		}
	}
}
