package integration

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// The registry's rules for Networks, through the real stack: subnets
// inside the tenant's block and not overlapping, defaulted when omitted,
// race-free on two replicas; NAT gateway addresses from the tenant's public
// IPs; no Network deleted while Namespaces name it. The tests use tenants
// of their own, and expect their Network "default" (onboarding's, or
// isoTenant's) to hold the first free /24 of the block.

// localIPAMPrefix is the tenant space of the stack's
// tenant-apiserver (--etcd-prefix=/tenant.io).
const localIPAMPrefix = "/tenant.io/ipam-local"

// ensurePublicIPs raises tenant's spec.publicIPs.count to at least count,
// as the provider admin, and returns its public IPs.
func ensurePublicIPs(ctx context.Context, t *testing.T, tenant string, count int32) []string {
	t.Helper()
	tenants := isoAdmin.clientset(t).TenantV1alpha1().Tenants()
	var ips []string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		tn, err := tenants.Get(ctx, tenant, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if tn.Spec.PublicIPs.Count < count {
			tn.Spec.PublicIPs.Count = count
			if tn, err = tenants.Update(ctx, tn, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
		ips = tn.Status.PublicIPs
		return nil
	})
	if err != nil {
		t.Fatalf("giving tenant %s %d public IPs: %v", tenant, count, err)
	}
	if len(ips) < int(count) {
		t.Fatalf("tenant %s has public IPs %v, want %d", tenant, ips, count)
	}
	return ips
}

// ensureTenantNetwork creates tenant's Network name (Layer2, subnet
// defaulted), as a member by group, unless it exists: onboarding creates
// "default" too, a moment after the Tenant, and the tenant's Namespaces
// name it. It waits until the server resolves the member to the tenant.
func ensureTenantNetwork(ctx context.Context, t *testing.T, tenant, name string) {
	t.Helper()
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		last = ensureNetwork(ctx, isoGroupMember(tenant).config(), name)
		return last == nil, nil
	}); err != nil {
		t.Fatalf("tenant %s: %v (last error: %v)", tenant, err, last)
	}
}

// netTenant creates tenant name (block cidr, room for many Networks) for
// the test, with public IPs, and returns a member of it.
func netTenant(ctx context.Context, t *testing.T, name, cidr string, publicIPs int32) isoCaller {
	t.Helper()
	isoTenant(ctx, t, name, cidr, tenantv1alpha1.TenantQuota{Networks: ptr.To[int32](64), Namespaces: ptr.To[int32](10)})
	if publicIPs > 0 {
		ensurePublicIPs(ctx, t, name, publicIPs)
	}
	return isoGroupMember(name)
}

func networkManifest(name string, spec map[string]interface{}) map[string]interface{} {
	return map[string]interface{}{
		"apiVersion": tenantv1alpha1.SchemeGroupVersion.String(),
		"kind":       "Network",
		"metadata":   map[string]interface{}{"name": name},
		"spec":       spec,
	}
}

// kubectlCreateNetwork creates Network name with spec through kubectl as c and
// deletes it when the test ends; it returns kubectl's stderr and error.
func kubectlCreateNetwork(ctx context.Context, t *testing.T, c isoCaller, name string, spec map[string]interface{}) (string, error) {
	t.Helper()
	_, stderr, err := c.kubectl(ctx, "create", "-f", writeManifest(t, networkManifest(name, spec)))
	if err == nil {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c.kubectl(ctx, "delete", "networks.tenant.io", name, "--ignore-not-found") //nolint:errcheck
		})
	}
	return stderr, err
}

// wantKubectlError checks that kubectl failed with an error output that
// has every one of contains.
func wantKubectlError(t *testing.T, what, stderr string, err error, contains ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: kubectl succeeded, want an error with %q", what, contains)
		return
	}
	for _, c := range contains {
		if !strings.Contains(stderr, c) {
			t.Errorf("%s: kubectl said %q, want %q in it", what, strings.TrimSpace(stderr), c)
		}
	}
}

func getNetwork(ctx context.Context, t *testing.T, c isoCaller, name string) *tenantv1alpha1.Network {
	t.Helper()
	n, err := c.clientset(t).TenantV1alpha1().Networks().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// tenantNetworks lists c's Networks.
func tenantNetworks(ctx context.Context, t *testing.T, c isoCaller) []tenantv1alpha1.Network {
	t.Helper()
	list, err := c.clientset(t).TenantV1alpha1().Networks().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// firstFree24 is the subnet the server gives a Network that names none:
// the lowest /24 of block that overlaps no subnet of networks.
func firstFree24(t *testing.T, block string, networks []tenantv1alpha1.Network) string {
	t.Helper()
	var taken []netip.Prefix
	for _, n := range networks {
		for _, s := range n.Spec.Subnets {
			taken = append(taken, netip.MustParsePrefix(s))
		}
	}
	for _, free := range ipam.Subtract([]netip.Prefix{netip.MustParsePrefix(block)}, taken) {
		if free.Bits() <= 24 {
			return netip.PrefixFrom(free.Addr(), 24).String()
		}
	}
	t.Fatalf("no free /24 in %s", block)
	return ""
}

// localClaims reads the claims in the tenant space inside the prefixes of space
// from the stack's etcd: block -> Owner.Purpose.
func localClaims(ctx context.Context, t *testing.T, space ...string) map[string]string {
	t.Helper()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{framework.Current().EtcdURL()}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Close() }()
	a := ipam.New(client, localIPAMPrefix)
	defer a.Close()
	pool := ipam.Pool{Name: "test"}
	for _, s := range space {
		if p, err := netip.ParsePrefix(s); err == nil {
			pool.CIDRs = append(pool.CIDRs, p)
		} else {
			pool.CIDRs = append(pool.CIDRs, netip.PrefixFrom(netip.MustParseAddr(s), 32))
		}
	}
	allocs, err := a.List(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, al := range allocs {
		out[al.Block.String()] = al.Owner.Purpose
	}
	return out
}

// recordedClaims are the claims networks record, as localClaims returns them.
func recordedClaims(networks ...tenantv1alpha1.Network) map[string]string {
	out := map[string]string{}
	for _, n := range networks {
		for _, s := range n.Spec.Subnets {
			out[s] = "network:" + string(n.UID)
		}
		if n.Status.NATGatewayIP != "" {
			out[n.Status.NATGatewayIP+"/32"] = "natgateway:" + string(n.UID)
		}
	}
	return out
}

func expectClaims(ctx context.Context, t *testing.T, what string, c isoCaller, space ...string) {
	t.Helper()
	got, want := localClaims(ctx, t, space...), recordedClaims(tenantNetworks(ctx, t, c)...)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: claims in the tenant space %v, want exactly what the Networks record: %v", what, got, want)
	}
}

// TestNetworkSubnets: subnets lie inside the tenant's block and overlap no
// other Network's (422 naming it), an omitted subnet is the first free
// /24 (shown by a dry run, which keeps nothing), and a deleted Network's
// subnet is free again.
func TestNetworkSubnets(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	const block = "10.61.0.0/16"
	c := netTenant(ctx, t, "nets", block, 0)

	stderr, err := kubectlCreateNetwork(ctx, t, c, "outside", map[string]interface{}{"subnets": []interface{}{"10.62.0.0/24"}})
	wantKubectlError(t, "a subnet outside the block", stderr, err, "is invalid", "spec.subnets[0]", "must be inside the tenant's block "+block)

	if stderr, err := kubectlCreateNetwork(ctx, t, c, "a", map[string]interface{}{"subnets": []interface{}{"10.61.200.0/24"}}); err != nil {
		t.Fatalf("creating network a: %v %s", err, stderr)
	}
	a := getNetwork(ctx, t, c, "a")
	if !slices.Equal(a.Status.Subnets, []string{"10.61.200.0/24"}) {
		t.Errorf("status.subnets of a: %v, want its spec.subnets", a.Status.Subnets)
	}
	stderr, err = kubectlCreateNetwork(ctx, t, c, "b", map[string]interface{}{"subnets": []interface{}{"10.61.200.128/25"}})
	wantKubectlError(t, "a subnet inside another network's", stderr, err, "is invalid", "spec.subnets[0]", "overlaps subnet 10.61.200.0/24 of network a")
	stderr, err = kubectlCreateNetwork(ctx, t, c, "b", map[string]interface{}{"topology": "Layer3", "subnets": []interface{}{"10.61.201.0/24", "10.61.200.128/25"}})
	wantKubectlError(t, "a Layer3 network with one subnet inside another network's", stderr, err, "is invalid", "spec.subnets[1]", "overlaps subnet 10.61.200.0/24 of network a")
	if stderr, err := kubectlCreateNetwork(ctx, t, c, "b", map[string]interface{}{"topology": "Layer3", "subnets": []interface{}{"10.61.201.0/24", "10.61.202.0/24"}}); err != nil {
		t.Errorf("the refused Layer3 network kept 10.61.201.0/24: %v %s", err, stderr)
	}

	// An omitted subnet: the first free /24, as a dry run shows first.
	want := firstFree24(t, block, tenantNetworks(ctx, t, c))
	var dry tenantv1alpha1.Network
	c.kubectlJSON(ctx, t, &dry, "create", "--dry-run=server", "-f", writeManifest(t, networkManifest("defaulted", map[string]interface{}{"topology": "Layer2"})))
	if !slices.Equal(dry.Spec.Subnets, []string{want}) || !slices.Equal(dry.Status.Subnets, []string{want}) {
		t.Errorf("dry run of a network without subnets: spec %v status %v, want %s", dry.Spec.Subnets, dry.Status.Subnets, want)
	}
	if _, err := c.clientset(t).TenantV1alpha1().Networks().Get(ctx, "defaulted", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the dry run stored network defaulted: %v", err)
	}
	expectClaims(ctx, t, "after the dry run", c, block)
	if stderr, err := kubectlCreateNetwork(ctx, t, c, "defaulted", map[string]interface{}{"topology": "Layer2"}); err != nil {
		t.Fatalf("creating network defaulted: %v %s", err, stderr)
	}
	if got := getNetwork(ctx, t, c, "defaulted"); !slices.Equal(got.Spec.Subnets, []string{want}) || !slices.Equal(got.Status.Subnets, got.Spec.Subnets) {
		t.Errorf("network without subnets got spec %v status %v, want %s", got.Spec.Subnets, got.Status.Subnets, want)
	}
	// Replacing it without subnets keeps them (as a Service's clusterIP).
	if _, _, err := c.kubectl(ctx, "replace", "-f", writeManifest(t, networkManifest("defaulted", map[string]interface{}{"topology": "Layer2"}))); err != nil {
		t.Errorf("replacing network defaulted without subnets: %v", err)
	}
	if got := getNetwork(ctx, t, c, "defaulted"); !slices.Equal(got.Spec.Subnets, []string{want}) {
		t.Errorf("after a replace without subnets: %v, want %s", got.Spec.Subnets, want)
	}

	// A deleted Network's subnet is free again.
	if _, _, err := c.kubectl(ctx, "delete", "networks.tenant.io", "a"); err != nil {
		t.Fatal(err)
	}
	if stderr, err := kubectlCreateNetwork(ctx, t, c, "a-again", map[string]interface{}{"subnets": []interface{}{"10.61.200.0/24"}}); err != nil {
		t.Errorf("taking the subnet of a deleted network: %v %s", err, stderr)
	}
	expectClaims(ctx, t, "at the end", c, block)
}

// TestNetworkSmallBlock: in a block smaller than a /24 the default subnet
// is the whole block, and when there is no room the answer is 409.
func TestNetworkSmallBlock(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	const block = "10.62.0.0/26"
	c := netTenant(ctx, t, "netsmall", block, 0)
	// Network "default" took the whole block; another one finds no room.
	if def := getNetwork(ctx, t, c, "default"); !slices.Equal(def.Spec.Subnets, []string{block}) {
		t.Errorf("network default of a /26 block: %v, want the whole block", def.Spec.Subnets)
	}
	stderr, err := kubectlCreateNetwork(ctx, t, c, "more", map[string]interface{}{"topology": "Layer2"})
	wantKubectlError(t, "a default subnet in a full block", stderr, err, "(Conflict)", "no free /26 left in tenant netsmall's block "+block)
	stderr, err = kubectlCreateNetwork(ctx, t, c, "more", map[string]interface{}{"subnets": []interface{}{"10.62.0.32/27"}})
	wantKubectlError(t, "a subnet in a full block", stderr, err, "is invalid", "spec.subnets[0]", "overlaps subnet "+block+" of network default")
	expectClaims(ctx, t, "after the refusals", c, block)
}

// TestNetworkCreatesRaceOnTwoReplicas sends creates of overlapping
// Networks, and of Networks without subnets, to two tenant-apiservers
// sharing etcd at once: exactly one of the overlapping ones is stored, the
// others get distinct /24s, and no claim is left behind.
func TestNetworkCreatesRaceOnTwoReplicas(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	const tenant, block = "netrace", "10.64.0.0/16"
	c := netTenant(ctx, t, tenant, block, 0)
	replica, err := framework.Current().StartTenantAPIServerReplica(ctx, "tenant-apiserver-netrace")
	if err != nil {
		t.Fatal(err)
	}
	defer replica.Stop() //nolint:errcheck
	var clients []clientset.Interface
	for _, cfg := range []*rest.Config{c.config(), replica.DirectConfig(c.as, c.groups...)} {
		cs, err := clientset.NewForConfig(framework.Unthrottled(cfg))
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, cs)
	}
	// The replica knows the tenant once its membership index has it.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := clients[1].TenantV1alpha1().Tenants().Get(ctx, tenant, metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the replica does not resolve %s to tenant %s: %v", c, tenant, err)
	}

	// Every two overlap: all hold 10.64.100.100.
	subnets := []string{"10.64.100.0/24", "10.64.100.0/25", "10.64.100.96/27", "10.64.100.64/26", "10.64.100.0/23", "10.64.96.0/21"}
	const racers = 30
	errs := make([]error, racers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			_, errs[i] = clients[i%2].TenantV1alpha1().Networks().Create(ctx, &tenantv1alpha1.Network{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("race-%02d", i)},
				Spec:       tenantv1alpha1.NetworkSpec{Subnets: []string{subnets[i%len(subnets)]}},
			}, metav1.CreateOptions{})
		})
	}
	close(start)
	wg.Wait()
	var stored []string
	for i, err := range errs {
		var status apierrors.APIStatus
		switch {
		case err == nil:
			stored = append(stored, fmt.Sprintf("race-%02d", i))
		case errors.As(err, &status) && status.Status().Code == 422 && strings.Contains(err.Error(), "overlaps subnet"):
		default:
			t.Errorf("race-%02d: %v, want success or 422 overlaps", i, err)
		}
	}
	if len(stored) != 1 {
		t.Errorf("stored %v of %d overlapping networks, want exactly one", stored, racers)
	}
	for _, name := range stored {
		if err := c.clientset(t).TenantV1alpha1().Networks().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	}

	// Networks without subnets, at once on both replicas: a /24 each.
	const defaulted = 20
	out := make([]*tenantv1alpha1.Network, defaulted)
	errs = make([]error, defaulted)
	start = make(chan struct{})
	for i := range defaulted {
		wg.Go(func() {
			<-start
			out[i], errs[i] = clients[i%2].TenantV1alpha1().Networks().Create(ctx, &tenantv1alpha1.Network{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("auto-%02d", i)},
			}, metav1.CreateOptions{})
		})
	}
	close(start)
	wg.Wait()
	seen := map[string]string{}
	for i, n := range out {
		if errs[i] != nil {
			t.Errorf("auto-%02d: %v", i, errs[i])
			continue
		}
		if len(n.Spec.Subnets) != 1 || netip.MustParsePrefix(n.Spec.Subnets[0]).Bits() != 24 {
			t.Errorf("%s got subnets %v, want one /24", n.Name, n.Spec.Subnets)
			continue
		}
		if other, dup := seen[n.Spec.Subnets[0]]; dup {
			t.Errorf("%s and %s both got %s", other, n.Name, n.Spec.Subnets[0])
		}
		seen[n.Spec.Subnets[0]] = n.Name
	}
	expectClaims(ctx, t, "after the races", c, block)
	for _, n := range out {
		if n != nil {
			_ = c.clientset(t).TenantV1alpha1().Networks().Delete(ctx, n.Name, metav1.DeleteOptions{})
		}
	}
}

// TestNetworkNATGateway: a NAT gateway gets one of the tenant's public IPs
// that no other object uses (409 naming the user; 422 if not the
// tenant's; 409 when all are in use), gives it back when disabled, and
// neither spec nor status writes can set status.natGatewayIP.
func TestNetworkNATGateway(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	const tenant, block = "netnat", "10.63.0.0/16"
	c := netTenant(ctx, t, tenant, block, 2)
	ips := ensurePublicIPs(ctx, t, tenant, 2)
	sorted := slices.Clone(ips)
	sort.Slice(sorted, func(i, j int) bool { return netip.MustParseAddr(sorted[i]).Less(netip.MustParseAddr(sorted[j])) })
	space := append([]string{block}, ips...)
	nat := func(address string, subnet string) map[string]interface{} {
		gw := map[string]interface{}{"enabled": true}
		if address != "" {
			gw["address"] = address
		}
		return map[string]interface{}{"subnets": []interface{}{subnet}, "natGateway": gw}
	}

	if stderr, err := kubectlCreateNetwork(ctx, t, c, "n1", nat("", "10.63.10.0/24")); err != nil {
		t.Fatalf("creating n1: %v %s", err, stderr)
	}
	n1 := getNetwork(ctx, t, c, "n1")
	// The allocator takes the lowest free address unless it has been
	// losing races (then a random one of the lowest, see pkg/ipam): either
	// way one of the tenant's. From then on there is one free address left
	// at each step, so every later choice is determined.
	if !slices.Contains(ips, n1.Status.NATGatewayIP) {
		t.Fatalf("NAT address of n1 %q, want one of the tenant's public IPs %v", n1.Status.NATGatewayIP, ips)
	}
	first, second := sorted[0], sorted[1]
	if n1.Status.NATGatewayIP == second {
		first, second = second, first
	}
	stderr, err := kubectlCreateNetwork(ctx, t, c, "n2", nat(n1.Status.NATGatewayIP, "10.63.11.0/24"))
	wantKubectlError(t, "a NAT address another network uses", stderr, err, "(Conflict)", fmt.Sprintf("address %s is in use by networks n1", n1.Status.NATGatewayIP))
	notOurs := "203.0.113.250"
	if slices.Contains(ips, notOurs) {
		notOurs = "203.0.113.249"
	}
	stderr, err = kubectlCreateNetwork(ctx, t, c, "n2", nat(notOurs, "10.63.11.0/24"))
	wantKubectlError(t, "a NAT address not the tenant's", stderr, err, "is invalid", "spec.natGateway.address", "is not one of tenant netnat's public IPs")
	if stderr, err := kubectlCreateNetwork(ctx, t, c, "n2", nat("", "10.63.11.0/24")); err != nil {
		t.Fatalf("creating n2: %v %s", err, stderr)
	}
	n2 := getNetwork(ctx, t, c, "n2")
	if n2.Status.NATGatewayIP != second {
		t.Errorf("NAT address of n2 %q, want %s", n2.Status.NATGatewayIP, second)
	}
	stderr, err = kubectlCreateNetwork(ctx, t, c, "n3", nat("", "10.63.12.0/24"))
	wantKubectlError(t, "a NAT gateway with every public IP in use", stderr, err, "(Conflict)", "no free public IP in tenant netnat: all 2 are in use")
	expectClaims(ctx, t, "after the refusals", c, space...)

	// Disabling gives the address back; moving to a taken one is refused.
	if _, _, err := c.kubectl(ctx, "patch", "networks.tenant.io", "n1", "--type=merge", "-p", `{"spec":{"natGateway":{"enabled":false}}}`); err != nil {
		t.Fatal(err)
	}
	if n1 = getNetwork(ctx, t, c, "n1"); n1.Status.NATGatewayIP != "" {
		t.Errorf("NAT address of n1 after disabling: %q", n1.Status.NATGatewayIP)
	}
	if stderr, err := kubectlCreateNetwork(ctx, t, c, "n3", nat("", "10.63.12.0/24")); err != nil {
		t.Fatalf("creating n3 once n1 gave its address back: %v %s", err, stderr)
	}
	n3 := getNetwork(ctx, t, c, "n3")
	if n3.Status.NATGatewayIP != first {
		t.Errorf("NAT address of n3 %q, want n1's former %s", n3.Status.NATGatewayIP, first)
	}
	_, stderr, err = c.kubectl(ctx, "patch", "networks.tenant.io", "n3", "--type=merge", "-p", fmt.Sprintf(`{"spec":{"natGateway":{"address":%q}}}`, n2.Status.NATGatewayIP))
	wantKubectlError(t, "moving the NAT address to n2's", stderr, err, "(Conflict)", fmt.Sprintf("address %s is in use by networks n2", n2.Status.NATGatewayIP))
	if got := getNetwork(ctx, t, c, "n3"); got.Status.NATGatewayIP != first || got.Generation != n3.Generation {
		t.Errorf("the refused move changed n3: NAT address %s generation %d", got.Status.NATGatewayIP, got.Generation)
	}

	// Only the registry sets status.natGatewayIP: a provider's status
	// write does not change it, nor does a spec write that carries it.
	args := append([]string{"patch", "networks.tenant.io", "n3", "--subresource=status", "--type=merge", "-p",
		fmt.Sprintf(`{"status":{"natGatewayIP":%q,"subnets":["10.63.99.0/24"]}}`, n2.Status.NATGatewayIP)},
		"--as=admin", "--as-group=tenant.io:"+tenant, "--as-group=system:masters")
	if _, _, err := framework.Current().Kubectl(ctx, stack.AdminUser, args...); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.kubectl(ctx, "patch", "networks.tenant.io", "n3", "--type=merge", "-p", fmt.Sprintf(`{"metadata":{"labels":{"x":"y"}},"status":{"natGatewayIP":%q}}`, n2.Status.NATGatewayIP)); err != nil {
		t.Fatal(err)
	}
	if got := getNetwork(ctx, t, c, "n3"); got.Status.NATGatewayIP != first || !slices.Equal(got.Status.Subnets, []string{"10.63.12.0/24"}) {
		t.Errorf("after status and spec writes carrying them: NAT address %s, status.subnets %v, want %s and [10.63.12.0/24]", got.Status.NATGatewayIP, got.Status.Subnets, first)
	}

	// Enabling again on update takes a free address; a deleted Network's
	// address is free again.
	if _, _, err := c.kubectl(ctx, "delete", "networks.tenant.io", "n3"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.kubectl(ctx, "patch", "networks.tenant.io", "n1", "--type=merge", "-p", `{"spec":{"natGateway":{"enabled":true}}}`); err != nil {
		t.Fatal(err)
	}
	if n1 = getNetwork(ctx, t, c, "n1"); n1.Status.NATGatewayIP != first {
		t.Errorf("NAT address of n1 enabled again: %q, want %s (n3's, deleted)", n1.Status.NATGatewayIP, first)
	}
	expectClaims(ctx, t, "at the end", c, space...)
}

// TestNetworkInUse: a Namespace must name an existing Network of its
// tenant (422), may not change it, and a Network that Namespaces name is
// not deleted (409 listing them). A deleted Tenant leaves no claim.
func TestNetworkInUse(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	const tenant, block = "netuse", "10.65.0.0/16"
	c := netTenant(ctx, t, tenant, block, 1)
	tenantUID := func() string {
		tn, err := isoAdmin.clientset(t).TenantV1alpha1().Tenants().Get(ctx, tenant, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return string(tn.UID)
	}()
	nsManifest := func(name, network string) string {
		return writeManifest(t, map[string]interface{}{
			"apiVersion": tenantv1alpha1.SchemeGroupVersion.String(), "kind": "Namespace",
			"metadata": map[string]interface{}{"name": name}, "spec": map[string]interface{}{"network": network},
		})
	}
	_, stderr, err := c.kubectl(ctx, "create", "-f", nsManifest("dev-a", "blue"))
	wantKubectlError(t, "a namespace of a missing network", stderr, err, "is invalid", `spec.network: Not found: "blue"`)

	if stderr, err := kubectlCreateNetwork(ctx, t, c, "blue", map[string]interface{}{"natGateway": map[string]interface{}{"enabled": true}}); err != nil {
		t.Fatalf("creating network blue: %v %s", err, stderr)
	}
	namespaces := c.clientset(t).TenantV1alpha1().Namespaces()
	for _, ns := range []string{"dev-a", "dev-b"} {
		if _, stderr, err := c.kubectl(ctx, "create", "-f", nsManifest(ns, "blue")); err != nil {
			t.Fatalf("creating namespace %s: %v %s", ns, err, stderr)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = namespaces.Delete(ctx, ns, metav1.DeleteOptions{})
		})
	}
	_, stderr, err = c.kubectl(ctx, "patch", "namespaces.tenant.io", "dev-a", "--type=merge", "-p", `{"spec":{"network":"default"}}`)
	wantKubectlError(t, "moving a namespace to another network", stderr, err, "is invalid", "spec.network", "immutable")

	_, stderr, err = c.kubectl(ctx, "delete", "networks.tenant.io", "blue")
	wantKubectlError(t, "deleting a network namespaces name", stderr, err, "(Conflict)", "network blue is the network of 2 namespace(s)")
	err = c.clientset(t).TenantV1alpha1().Networks().Delete(ctx, "blue", metav1.DeleteOptions{})
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Code != 409 || status.Status().Details == nil {
		t.Fatalf("deleting network blue with namespaces: %v, want 409 with causes", err)
	}
	var causes []string
	for _, cause := range status.Status().Details.Causes {
		causes = append(causes, string(cause.Type)+" "+cause.Field)
	}
	if want := []string{"Attached namespaces dev-a", "Attached namespaces dev-b"}; !slices.Equal(causes, want) {
		t.Errorf("409 causes %v, want %v", causes, want)
	}
	if _, err := c.clientset(t).TenantV1alpha1().Networks().Get(ctx, "blue", metav1.GetOptions{}); err != nil {
		t.Errorf("the refused delete removed network blue: %v", err)
	}

	for _, ns := range []string{"dev-a", "dev-b"} {
		if err := namespaces.Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, stderr, err := c.kubectl(ctx, "delete", "networks.tenant.io", "blue"); err != nil {
		t.Errorf("deleting network blue once nothing names it: %v %s", err, stderr)
	}

	// The Tenant goes (its Networks with it): none of its claims stay.
	if stderr, err := kubectlCreateNetwork(ctx, t, c, "green", map[string]interface{}{"natGateway": map[string]interface{}{"enabled": true}}); err != nil {
		t.Fatalf("creating network green: %v %s", err, stderr)
	}
	if len(localClaims(ctx, t, block)) < 2 {
		t.Errorf("tenant %s has claims %v, want those of default and green", tenant, localClaims(ctx, t, block))
	}
	tenants := isoAdmin.clientset(t).TenantV1alpha1().Tenants()
	// The delete is conditional on the Tenant it checked; the syncer may
	// write its status meanwhile.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		return tenants.Delete(ctx, tenant, metav1.DeleteOptions{})
	}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := tenants.Get(ctx, tenant, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatalf("tenant %s still there a minute after its delete: %v", tenant, err)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{framework.Current().EtcdURL()}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Close() }()
	local := ipam.New(client, localIPAMPrefix)
	defer local.Close()
	if left, err := local.ListOwner(ctx, tenantUID); err != nil || len(left) != 0 {
		t.Errorf("claims of the deleted tenant %s: %+v (%v), want none", tenant, left, err)
	}
}

// TestTenantClaimsSeePoolsOfAnotherReplica creates an AddressPool through
// one tenant-apiserver and, at once, a Tenant whose block only that pool
// holds through the other: the claim reads the pools consistently (a list
// at no resourceVersion, which the server answers from etcd's current
// revision), so it never refuses a valid block for a pool the second
// replica's cache has not seen yet.
func TestTenantClaimsSeePoolsOfAnotherReplica(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	replica, err := framework.Current().StartTenantAPIServerReplica(ctx, "tenant-apiserver-pools")
	if err != nil {
		t.Fatal(err)
	}
	defer replica.Stop() //nolint:errcheck
	viaReplica, err := clientset.NewForConfig(framework.Unthrottled(replica.DirectConfig(stack.AdminUser)))
	if err != nil {
		t.Fatal(err)
	}
	admin := isoAdmin.clientset(t)
	for i := range 10 {
		pool, name := fmt.Sprintf("replica-pool-%d", i), fmt.Sprintf("replica-pools-%d", i)
		block := fmt.Sprintf("172.31.%d.0/24", 200+i)
		if _, err := viaReplica.TenantV1alpha1().AddressPools().Create(ctx, &tenantv1alpha1.AddressPool{
			ObjectMeta: metav1.ObjectMeta{Name: pool},
			Spec:       tenantv1alpha1.AddressPoolSpec{Purpose: tenantv1alpha1.AddressPoolPurposeTenantNetworks, CIDRs: []string{block}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating pool %s through the replica: %v", pool, err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = admin.TenantV1alpha1().Tenants().Delete(ctx, name, metav1.DeleteOptions{})
			_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 45*time.Second, true, func(ctx context.Context) (bool, error) {
				_, err := admin.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
				return apierrors.IsNotFound(err), nil
			})
			_ = admin.TenantV1alpha1().AddressPools().Delete(ctx, pool, metav1.DeleteOptions{})
		})
		created, err := admin.TenantV1alpha1().Tenants().Create(ctx, &tenantv1alpha1.Tenant{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       tenantv1alpha1.TenantSpec{Network: tenantv1alpha1.TenantNetwork{CIDR: block}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating Tenant %s with block %s right after its pool was created through the other replica: %v", name, block, err)
		}
		if created.Status.Network == nil || created.Status.Network.CIDR != block {
			t.Errorf("Tenant %s: status.network %+v, want %s", name, created.Status.Network, block)
		}
	}
}
