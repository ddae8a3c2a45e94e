package integration

// The logical data path: what OVN itself does with tenants' packets. The
// stack runs OVN 25.03's databases and ovn-northd with OVN-Kubernetes'
// ovnkube-controller for one zone (stack.DataPath); pods scheduled to that
// zone's node get logical switch ports on their tenant Network's switch,
// and ovn-trace evaluates a packet through the logical flows ovn-northd
// compiled. Each verdict below is OVN's, on the topology the syncer's host
// objects made.

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// tracedPod is a pod the data-path tests trace packets of: scheduled to the
// data path's node, in a host namespace; nothing runs it.
func tracedPod(ns, name string) *corev1.Pod {
	no, yes := false, true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			NodeName: stack.DataPathNode,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   &yes,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.invalid/app:1",
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: &no,
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}

// port is a pod's logical switch port on its primary network.
type port struct {
	pod, lsp, ls, mac, ip string
}

func (p port) String() string { return p.pod + " (" + p.ip + ")" }

// dataPath is the stack's logical data path, or a skip.
func dataPath(t *testing.T) *stack.DataPath {
	t.Helper()
	dp := framework.Current().DataPath()
	if dp == nil {
		t.Fatal("the stack runs without its data path (stack.Options.SkipDataPath)")
	}
	return dp
}

// placePod creates pod name in host namespace ns, scheduled to the data
// path's node, deletes it when the test ends, and returns its logical port
// on its primary (tenant) network once ovnkube-controller has made it.
func placePod(ctx context.Context, t *testing.T, kube kubernetes.Interface, dp *stack.DataPath, ns, name string) port {
	t.Helper()
	if _, err := kube.CoreV1().Pods(ns).Create(ctx, tracedPod(ns, name), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating pod %s/%s: %v", ns, name, err)
	}
	t.Cleanup(func() {
		_ = kube.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	})
	var p port
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		out, err := dp.NBCtl(ctx, "--format=csv", "--data=bare", "--no-headings", "--columns=name,addresses",
			"find", "Logical_Switch_Port", "external_ids:namespace="+ns, `external_ids:pod="true"`)
		if err != nil {
			return false, err
		}
		last = out
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			name2, addrs, ok := strings.Cut(line, ",")
			// The primary network's port is "<nad>_<ns>_<pod>"; the
			// default network's (infrastructure only) "<ns>_<pod>".
			if !ok || !strings.HasSuffix(name2, "_"+ns+"_"+name) {
				continue
			}
			f := strings.Fields(addrs)
			if len(f) != 2 {
				continue
			}
			ls, err := dp.NBCtl(ctx, "lsp-get-ls", name2)
			if err != nil {
				return false, err
			}
			p = port{pod: ns + "/" + name, lsp: name2, ls: strings.Trim(strings.TrimSpace(ls), "()"), mac: f[0], ip: f[1]}
			if i := strings.LastIndex(p.ls, "("); i >= 0 {
				p.ls = strings.TrimSuffix(p.ls[i+1:], ")")
			}
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s has no port on its tenant network: %v (ports of its namespace: %q)", ns, name, err, last)
	}
	return p
}

// gatewayMAC is the MAC of the router port on the switch of pod p that
// holds an address of p's subnet: the pod's gateway, which leads (through
// the network's transit router for a Layer2 network) to its gateway router,
// built from the node's gateway facts.
func gatewayMAC(ctx context.Context, t *testing.T, dp *stack.DataPath, p port) string {
	t.Helper()
	var last string
	var mac string
	podIP, err := netip.ParseAddr(p.ip)
	if err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		out, err := dp.NBCtl(ctx, "--format=csv", "--data=bare", "--no-headings", "--columns=name,options", "find", "Logical_Switch_Port", "type=router")
		if err != nil {
			return false, err
		}
		last = out
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			name, opts, _ := strings.Cut(line, ",")
			on, err := dp.NBCtl(ctx, "lsp-get-ls", name)
			if err != nil || !strings.Contains(on, "("+p.ls+")") {
				continue
			}
			for _, o := range strings.Fields(opts) {
				lrp, ok := strings.CutPrefix(o, "router-port=")
				if !ok {
					continue
				}
				nets, err := dp.NBCtl(ctx, "--bare", "--columns=networks,mac", "list", "Logical_Router_Port", lrp)
				if err != nil {
					return false, err
				}
				f := strings.Fields(nets)
				for _, n := range f {
					if pfx, err := netip.ParsePrefix(n); err == nil && pfx.Masked().Contains(podIP) && len(f) > 0 {
						mac = f[len(f)-1]
						return true, nil
					}
				}
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("switch %s has no router port on the subnet of %s: %v (router ports: %q)", p.ls, p, err, last)
	}
	return mac
}

var traceOutput = regexp.MustCompile(`output\("([^"]+)"\)`)

// trace sends, in OVN's evaluation, a new TCP connection from from's port,
// with the given destination MAC and IP and source IP, and returns the
// logical ports it is delivered to.
func trace(ctx context.Context, t *testing.T, dp *stack.DataPath, from port, dstMAC, dstIP, srcIP string) []string {
	t.Helper()
	return traceL4(ctx, t, dp, from, dstMAC, dstIP, srcIP, "tcp && tcp.src == 40000 && tcp.dst == 8080")
}

// traceL4 is trace with the packet's transport part given as an ovn-trace
// match (e.g. "udp && udp.src == 40000 && udp.dst == 53").
func traceL4(ctx context.Context, t *testing.T, dp *stack.DataPath, from port, dstMAC, dstIP, srcIP, l4 string) []string {
	t.Helper()
	flow := fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip4.src == %s && ip4.dst == %s && ip.ttl == 64 && %s`,
		from.lsp, from.mac, dstMAC, srcIP, dstIP, l4)
	out, err := dp.Trace(ctx, "--minimal", "--ct=new", from.ls, flow)
	if err != nil {
		t.Fatalf("ovn-trace: %v", err)
	}
	var to []string
	for _, m := range traceOutput.FindAllStringSubmatch(out, -1) {
		to = append(to, m[1])
	}
	sort.Strings(to)
	return to
}

// delivered says whether a packet from from to to, by to's MAC and IP, reaches to.
func delivered(ctx context.Context, t *testing.T, dp *stack.DataPath, from, to port) bool {
	t.Helper()
	for _, o := range trace(ctx, t, dp, from, to.mac, to.ip, from.ip) {
		if o == to.lsp {
			return true
		}
	}
	return false
}

// TestDataPathIsolation is the isolation matrix on OVN's verdicts: within
// a tenant Network packets are delivered; to another tenant, and to
// another Network of the same tenant, they are not, both ways; a spoofed
// source is dropped; a tenant's NetworkPolicy holds.
func TestDataPathIsolation(t *testing.T) {
	isoDemoTenants(t)
	ctx := framework.Context(t, 3*time.Minute)
	dp := dataPath(t)
	kube, _, err := framework.Current().Clients(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	// What the data path's processes hold, for docs/perf/stack.md.
	for _, name := range []string{"ovsdb-server-nb", "ovsdb-server-sb", "ovn-northd", "ovnkube-controller", "ovnkube-cluster-manager"} {
		t.Logf("%s: %s", name, vmRSS(framework.Current().PID(name)))
	}
	acmeNS, globexNS := hostNamespaceOf(ctx, t, alice, "dev"), hostNamespaceOf(ctx, t, "bob", "dev")
	a1, a2 := placePod(ctx, t, kube, dp, acmeNS, "a1"), placePod(ctx, t, kube, dp, acmeNS, "a2")
	g1 := placePod(ctx, t, kube, dp, globexNS, "g1")
	if a1.ls != a2.ls || a1.ls == g1.ls {
		t.Fatalf("logical switches: acme's pods on %s and %s, globex's on %s: want acme's together, globex's apart", a1.ls, a2.ls, g1.ls)
	}

	// A second Network of acme's, with a Namespace and a pod on it.
	acme := isoAlice.clientset(t).TenantV1alpha1()
	blue := &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: "dp-blue"}, Spec: tenantv1alpha1.NetworkSpec{Topology: tenantv1alpha1.NetworkTopologyLayer2}}
	if _, err := acme.Networks().Create(ctx, blue, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	blueNS := &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dp-blue"}, Spec: tenantv1alpha1.NamespaceSpec{Network: "dp-blue"}}
	if _, err := acme.Namespaces().Create(ctx, blueNS, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = acme.Namespaces().Delete(ctx, "dp-blue", metav1.DeleteOptions{})
		_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			return apierrors.IsNotFound(acme.Networks().Delete(ctx, "dp-blue", metav1.DeleteOptions{})), nil
		})
	})
	b1 := placePod(ctx, t, kube, dp, hostNamespaceOf(ctx, t, alice, "dp-blue"), "b1")
	if b1.ls == a1.ls {
		t.Fatalf("acme's Networks default and dp-blue share logical switch %s", b1.ls)
	}

	for _, c := range []struct {
		what     string
		from, to port
		want     bool
	}{
		{"within acme's Network", a1, a2, true},
		{"back within acme's Network", a2, a1, true},
		{"acme to globex", a1, g1, false},
		{"globex to acme", g1, a1, false},
		{"acme's default to acme's dp-blue", a1, b1, false},
		{"acme's dp-blue to acme's default", b1, a1, false},
	} {
		t.Logf("%s: %s -> %s: outputs %v", c.what, c.from, c.to, trace(ctx, t, dp, c.from, c.to.mac, c.to.ip, c.from.ip))
		if got := delivered(ctx, t, dp, c.from, c.to); got != c.want {
			t.Errorf("%s: %s -> %s delivered=%v, want %v (outputs %v)", c.what, c.from, c.to, got, c.want,
				trace(ctx, t, dp, c.from, c.to.mac, c.to.ip, c.from.ip))
		}
	}
	// Through acme's gateway router, addressed to globex's pod: the packet
	// leaves by the node's external port, never onto globex's switch.
	gwMAC := gatewayMAC(ctx, t, dp, a1)
	for _, o := range trace(ctx, t, dp, a1, gwMAC, g1.ip, a1.ip) {
		if o == g1.lsp {
			t.Errorf("a1 to %s through acme's gateway router (%s): delivered", g1, gwMAC)
		}
	}
	t.Logf("a1 to %s through acme's gateway router (%s): outputs %v", g1, gwMAC, trace(ctx, t, dp, a1, gwMAC, g1.ip, a1.ip))
	// A spoofed source: a1's port with a2's address, or with globex's.
	for _, src := range []string{a2.ip, g1.ip} {
		if out := trace(ctx, t, dp, a1, a2.mac, a2.ip, src); len(out) != 0 {
			t.Errorf("a1 sending as %s to a2: delivered to %v, want dropped by port security", src, out)
		}
	}
	// Broadcast and unknown MACs do not carry a packet to another tenant.
	for _, mac := range []string{"ff:ff:ff:ff:ff:ff", "0a:58:de:ad:be:ef"} {
		for _, o := range trace(ctx, t, dp, a1, mac, g1.ip, a1.ip) {
			if o == g1.lsp || o == b1.lsp {
				t.Errorf("a1 to %s by MAC %s: delivered to %s", g1, mac, o)
			}
		}
	}

	// acme's own NetworkPolicy: nothing may reach a2.
	deny := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "dp-deny-a2", Namespace: acmeNS},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "a2"}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
	if _, err := kube.NetworkingV1().NetworkPolicies(acmeNS).Create(ctx, deny, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.NetworkingV1().NetworkPolicies(acmeNS).Delete(context.Background(), deny.Name, metav1.DeleteOptions{})
	})
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return !delivered(ctx, t, dp, a1, a2), nil
	}); err != nil {
		t.Errorf("acme's NetworkPolicy denying ingress to a2: a1 -> a2 still delivered")
	}
	if !delivered(ctx, t, dp, a2, a1) {
		t.Errorf("acme's NetworkPolicy denying ingress to a2 also stops a2 -> a1")
	}
	if err := kube.NetworkingV1().NetworkPolicies(acmeNS).Delete(ctx, deny.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return delivered(ctx, t, dp, a1, a2), nil
	}); err != nil {
		t.Errorf("after the NetworkPolicy's delete: a1 -> a2 not delivered")
	}
}

// TestDataPathSeesABrokenIsolation makes the matrix's check fail on
// purpose: a host ClusterUserDefinedNetwork that selects the namespaces of
// two tenants (no syncer writes one) puts their pods on one switch, and
// delivered says so.
func TestDataPathSeesABrokenIsolation(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	dp := dataPath(t)
	kube, dyn, err := framework.Current().Clients(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	var nss []string
	for _, tn := range []string{"broken-x", "broken-y"} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tn + "-000000-dev", Labels: map[string]string{
			"tenant.io/tenant": tn, "dp-broken": "true", "k8s.ovn.org/primary-user-defined-network": "",
			"pod-security.kubernetes.io/enforce": "restricted",
		}}}
		if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) })
		nss = append(nss, ns.Name)
	}
	cudns := dyn.Resource(schema.GroupVersionResource{Group: "k8s.ovn.org", Version: "v1", Resource: "clusteruserdefinednetworks"})
	cudn := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "k8s.ovn.org/v1", "kind": "ClusterUserDefinedNetwork",
		"metadata": map[string]interface{}{"name": "dp-broken"},
		"spec": map[string]interface{}{
			"namespaceSelector": map[string]interface{}{"matchLabels": map[string]interface{}{"dp-broken": "true"}},
			"network": map[string]interface{}{"topology": "Layer2", "layer2": map[string]interface{}{
				"role": "Primary", "subnets": []interface{}{"10.199.0.0/24"}}},
		},
	}}
	if _, err := cudns.Create(ctx, cudn, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cudns.Delete(context.Background(), "dp-broken", metav1.DeleteOptions{}) })
	x, y := placePod(ctx, t, kube, dp, nss[0], "x1"), placePod(ctx, t, kube, dp, nss[1], "y1")
	if !delivered(ctx, t, dp, x, y) {
		t.Fatalf("a network shared by two tenants' namespaces: %s -> %s not delivered; the matrix's check would miss a broken isolation", x, y)
	}
	// And real packets get across, so the packet tier's zero counts
	// would see it too.
	if why := stack.PacketsUnavailable(); why != "" {
		t.Skip("the real-packet check of this row needs what this machine lacks: " + why)
	}
	pk, err := framework.Current().StartPackets(ctx)
	if err != nil {
		t.Fatalf("starting Open vSwitch and ovn-controller: %v", err)
	}
	var hosts []*stack.PodHost
	for i, ns := range nss {
		h, err := pk.Plug(ctx, kube, ns, []string{"x1", "y1"}[i])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = pk.Unplug(context.Background(), h) })
		hosts = append(hosts, h)
	}
	_, l, err := hosts[1].Listen("udp", fmt.Sprintf(":%d", probePort))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return udpReceived(ctx, t, hosts[0], "", hosts[1].IP.String(), l, 5) > 0, nil
	}); err != nil {
		t.Fatalf("a network shared by two tenants' namespaces: no UDP datagram from %s reached %s; the packet tier would miss a broken isolation", hosts[0], hosts[1])
	}
}
