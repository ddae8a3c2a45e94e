package network_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/registry/registrytest"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/claims"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

var (
	admin, alice, bob, tina = registrytest.Admin, registrytest.Alice, registrytest.Bob, registrytest.Tina
	as, asIn                = registrytest.As, registrytest.AsIn
)

// replica is one tenant-apiserver's storage on a shared etcd.
type replica struct{ *registrytest.Replica }

func newReplica(t testing.TB, url string, withIPAM bool) *replica {
	return &replica{registrytest.NewReplica(t, url, withIPAM)}
}

func int32p(i int32) *int32 { return &i }

// setup starts etcd and one replica with the demo pools and tenants acme
// (alice, 10.42.0.0/16, 4 public IPs), globex (bob, 10.43.0.0/16, 2 public
// IPs) and tiny (tina, 10.44.0.0/26, no public IP).
func setup(t testing.TB) (*replica, string) {
	t.Helper()
	url := registrytest.StartEtcd(t)
	r := newReplica(t, url, true)
	for _, p := range []*tenant.AddressPool{
		{ObjectMeta: metav1.ObjectMeta{Name: "tenant-networks"}, Spec: tenant.AddressPoolSpec{
			Purpose: tenant.AddressPoolPurposeTenantNetworks, CIDRs: []string{"10.0.0.0/8"}, DefaultPrefixLength: int32p(16)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "public"}, Spec: tenant.AddressPoolSpec{
			Purpose: tenant.AddressPoolPurposePublicIPs, CIDRs: []string{"203.0.113.0/24"}, Exclude: []string{"203.0.113.0", "203.0.113.255"}}},
	} {
		if _, err := r.Storage.AddressPools.Main.Create(as(admin), p, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tn := range []struct {
		name, cidr, user string
		ips              int32
	}{{"acme", "10.42.0.0/16", "alice", 4}, {"globex", "10.43.0.0/16", "bob", 2}, {"tiny", "10.44.0.0/26", "tina", 0}} {
		obj := &tenant.Tenant{
			ObjectMeta: metav1.ObjectMeta{Name: tn.name},
			Spec: tenant.TenantSpec{
				Members:   tenant.TenantMembers{Users: []string{tn.user}},
				Network:   tenant.TenantNetwork{CIDR: tn.cidr},
				PublicIPs: tenant.TenantPublicIPs{Count: tn.ips},
				Quota:     tenant.TenantQuota{Namespaces: int32p(10), Networks: int32p(64), FloatingIPs: int32p(4), LoadBalancers: int32p(4)},
			},
		}
		if _, err := r.Storage.Tenants.Main.Create(as(admin), obj, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return r, url
}

func (r *replica) tenant(t *testing.T, name string) *tenant.Tenant {
	t.Helper()
	obj, err := r.Storage.Tenants.Store.Get(genericapirequest.WithNamespace(context.Background(), ""), name, &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*tenant.Tenant)
}

func net(name string, subnets ...string) *tenant.Network {
	return &tenant.Network{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       tenant.NetworkSpec{Topology: tenant.NetworkTopologyLayer2, Subnets: subnets},
	}
}

func natNet(name, address string, subnets ...string) *tenant.Network {
	n := net(name, subnets...)
	n.Spec.NATGateway = &tenant.NATGateway{Enabled: true, Address: address}
	return n
}

func (r *replica) createNetwork(u user.Info, n *tenant.Network, dryRun bool) (*tenant.Network, error) {
	opts := &metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	out, err := r.Storage.Networks.Main.Create(as(u), n, rest.ValidateAllObjectFunc, opts)
	if err != nil {
		return nil, err
	}
	return out.(*tenant.Network), nil
}

func (r *replica) mustCreateNetwork(t *testing.T, u user.Info, n *tenant.Network) *tenant.Network {
	t.Helper()
	out, err := r.createNetwork(u, n, false)
	if err != nil {
		t.Fatalf("creating network %s as %s: %v", n.Name, u.GetName(), err)
	}
	return out
}

func (r *replica) getNetwork(t *testing.T, u user.Info, name string) *tenant.Network {
	t.Helper()
	out, err := r.Storage.Networks.Main.Get(as(u), name, &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out.(*tenant.Network)
}

// updateNetwork changes Network name as u through the main resource.
func (r *replica) updateNetwork(u user.Info, name string, change func(*tenant.Network), dryRun bool) (*tenant.Network, error) {
	opts := &metav1.UpdateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	out, _, err := r.Storage.Networks.Main.Update(as(u), name, rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		n := old.(*tenant.Network).DeepCopy()
		change(n)
		return n, nil
	}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, opts)
	if err != nil {
		return nil, err
	}
	return out.(*tenant.Network), nil
}

func (r *replica) deleteNetwork(u user.Info, name string) error {
	_, _, err := r.Storage.Networks.Main.Delete(as(u), name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
	return err
}

// claims returns the claims in the tenant space, by block.
func (r *replica) claims(t *testing.T) map[netip.Prefix]ipam.Owner {
	t.Helper()
	allocs, err := r.TenantSpace.ListAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[netip.Prefix]ipam.Owner{}
	for _, a := range allocs {
		out[a.Block] = a.Owner
	}
	return out
}

// expectClaims checks that the tenant space holds exactly the
// claims that the stored Networks record, with their owners.
func (r *replica) expectClaims(t *testing.T, networks ...*tenant.Network) {
	t.Helper()
	want := map[netip.Prefix]string{}
	for _, n := range networks {
		for _, s := range n.Spec.Subnets {
			want[netip.MustParsePrefix(s)] = claims.Purpose(claims.UseNetwork, n.UID)
		}
		if n.Status.NATGatewayIP != "" {
			want[netip.PrefixFrom(netip.MustParseAddr(n.Status.NATGatewayIP), 32)] = claims.Purpose(claims.UseNATGateway, n.UID)
		}
	}
	got := r.claims(t)
	for b, purpose := range want {
		if o, ok := got[b]; !ok || o.Purpose != purpose {
			t.Errorf("claim of %s: %+v (present %v), want purpose %s", b, o, ok, purpose)
		}
	}
	for b, o := range got {
		if _, ok := want[b]; !ok {
			t.Errorf("claim of %s by %+v: no Network records it", b, o)
		}
	}
}

// wantStatus checks that err is an API error of code whose message has
// every one of contains.
func wantStatus(t *testing.T, what string, err error, code int32, contains ...string) {
	t.Helper()
	var s apierrors.APIStatus
	if !errors.As(err, &s) {
		t.Errorf("%s: %v, want an API error %d", what, err, code)
		return
	}
	if s.Status().Code != code {
		t.Errorf("%s: %d %v, want %d", what, s.Status().Code, err, code)
	}
	for _, c := range contains {
		if !strings.Contains(err.Error(), c) {
			t.Errorf("%s: %q lacks %q", what, err.Error(), c)
		}
	}
}

// wantInvalidAt checks that err is a 422 with a cause at field.
func wantInvalidAt(t *testing.T, what string, err error, fieldPath string, contains ...string) {
	t.Helper()
	wantStatus(t, what, err, 422, contains...)
	var s apierrors.APIStatus
	if !errors.As(err, &s) || s.Status().Details == nil {
		return
	}
	for _, c := range s.Status().Details.Causes {
		if c.Field == fieldPath {
			return
		}
	}
	t.Errorf("%s: causes %+v, want one at %s", what, s.Status().Details.Causes, fieldPath)
}

func TestSubnetsInsideBlockWithoutOverlap(t *testing.T) {
	r, _ := setup(t)
	a := r.mustCreateNetwork(t, alice, net("a", "10.42.5.0/24"))
	if !slices.Equal(a.Status.Subnets, []string{"10.42.5.0/24"}) {
		t.Errorf("status.subnets %v, want the spec's", a.Status.Subnets)
	}

	_, err := r.createNetwork(alice, net("outside", "10.99.0.0/24"), false)
	wantInvalidAt(t, "a subnet outside the block", err, "spec.subnets[0]", "must be inside the tenant's block 10.42.0.0/16")
	_, err = r.createNetwork(alice, net("neighbour", "10.43.5.0/24"), false)
	wantInvalidAt(t, "a subnet in globex's block", err, "spec.subnets[0]", "10.42.0.0/16")

	_, err = r.createNetwork(alice, net("inside-a", "10.42.5.128/25"), false)
	wantInvalidAt(t, "a subnet inside another network's", err, "spec.subnets[0]", "overlaps subnet 10.42.5.0/24 of network a")
	_, err = r.createNetwork(alice, net("around-a", "10.42.4.0/23"), false)
	wantInvalidAt(t, "a subnet around another network's", err, "spec.subnets[0]", "overlaps subnet 10.42.5.0/24 of network a")

	// Layer3, one good subnet and one taken: refused, and the good one is
	// not kept.
	l3 := net("l3", "10.42.6.0/24", "10.42.5.0/26")
	l3.Spec.Topology = tenant.NetworkTopologyLayer3
	_, err = r.createNetwork(alice, l3, false)
	wantInvalidAt(t, "a Layer3 network with one taken subnet", err, "spec.subnets[1]", "of network a")
	r.expectClaims(t, a)

	l3 = net("l3", "10.42.6.0/24", "10.42.7.0/24")
	l3.Spec.Topology = tenant.NetworkTopologyLayer3
	l3 = r.mustCreateNetwork(t, alice, l3)

	// Another tenant's block is its own business.
	g := r.mustCreateNetwork(t, bob, net("a", "10.43.5.0/24"))
	r.expectClaims(t, a, l3, g)
	if owner := r.claims(t)[netip.MustParsePrefix("10.42.5.0/24")]; owner.Ref != "networks a" || owner.Tenant != "acme" || owner.TenantUID != string(r.tenant(t, "acme").UID) {
		t.Errorf("owner of a's subnet %+v, want tenant acme, ref networks a", owner)
	}
}

func TestDefaultSubnets(t *testing.T) {
	r, _ := setup(t)
	first := r.mustCreateNetwork(t, alice, net("first"))
	if !slices.Equal(first.Spec.Subnets, []string{"10.42.0.0/24"}) || !slices.Equal(first.Status.Subnets, first.Spec.Subnets) {
		t.Errorf("defaulted subnets spec %v status %v, want 10.42.0.0/24 in both", first.Spec.Subnets, first.Status.Subnets)
	}
	taken := r.mustCreateNetwork(t, alice, net("taken", "10.42.1.0/25"))
	second := r.mustCreateNetwork(t, alice, net("second"))
	if !slices.Equal(second.Spec.Subnets, []string{"10.42.2.0/24"}) {
		t.Errorf("second default %v, want 10.42.2.0/24 (10.42.1.0/24 is partly taken)", second.Spec.Subnets)
	}

	// An update that omits the subnets keeps them; one that changes them is refused.
	kept, err := r.updateNetwork(alice, "first", func(n *tenant.Network) { n.Spec.Subnets = nil; n.Labels = map[string]string{"app": "web"} }, false)
	if err != nil || !slices.Equal(kept.Spec.Subnets, first.Spec.Subnets) || !slices.Equal(kept.Status.Subnets, first.Spec.Subnets) {
		t.Errorf("update omitting the subnets: %v %+v", err, kept)
	}
	_, err = r.updateNetwork(alice, "first", func(n *tenant.Network) { n.Spec.Subnets = []string{"10.42.9.0/24"} }, false)
	wantInvalidAt(t, "changing the subnets", err, "spec.subnets", "immutable")
	r.expectClaims(t, first, taken, second)

	// A block smaller than a /24 goes whole to the first Network that
	// names no subnet; then there is no room.
	whole := r.mustCreateNetwork(t, tina, net("whole"))
	if !slices.Equal(whole.Spec.Subnets, []string{"10.44.0.0/26"}) {
		t.Errorf("default subnet in a /26 block: %v, want the whole block", whole.Spec.Subnets)
	}
	_, err = r.createNetwork(tina, net("more"), false)
	wantStatus(t, "a default subnet in a full block", err, 409, "tenant tiny's block 10.44.0.0/26")
	_, err = r.createNetwork(tina, net("more", "10.44.0.0/28"), false)
	wantInvalidAt(t, "an explicit subnet in a full block", err, "spec.subnets[0]", "of network whole")
	r.expectClaims(t, first, taken, second, whole)
}

// TestConcurrentOverlappingCreates races 30 creates of Networks with
// overlapping subnets, on two replicas sharing etcd: exactly one is
// stored, and only its claim is left.
func TestConcurrentOverlappingCreates(t *testing.T) {
	r1, url := setup(t)
	r2 := newReplica(t, url, true)
	// Every two overlap: all hold 10.42.8.100.
	subnets := []string{"10.42.8.0/24", "10.42.8.0/25", "10.42.8.96/27", "10.42.8.64/26", "10.42.8.0/23", "10.42.8.0/22"}
	var wg sync.WaitGroup
	errs := make([]error, 30)
	for i := range errs {
		r := []*replica{r1, r2}[i%2]
		wg.Go(func() {
			_, errs[i] = r.createNetwork(alice, net(fmt.Sprintf("race-%d", i), subnets[i%len(subnets)]), false)
		})
	}
	wg.Wait()
	var stored []string
	for i, err := range errs {
		switch {
		case err == nil:
			stored = append(stored, fmt.Sprintf("race-%d", i))
		case apierrors.IsInvalid(err) && strings.Contains(err.Error(), "overlaps subnet"):
		default:
			t.Errorf("race-%d: %v", i, err)
		}
	}
	if len(stored) != 1 {
		t.Fatalf("stored %v, want exactly one of the overlapping networks", stored)
	}
	r1.expectClaims(t, r1.getNetwork(t, alice, stored[0]))
	list, err := r1.Storage.Networks.Main.List(as(alice), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list.(*tenant.NetworkList).Items); n != 1 {
		t.Errorf("%d networks stored, want 1", n)
	}
}

// TestConcurrentDefaults creates 30 Networks without subnets at once, on
// two replicas: each gets a /24 of its own.
func TestConcurrentDefaults(t *testing.T) {
	r1, url := setup(t)
	r2 := newReplica(t, url, true)
	var wg sync.WaitGroup
	out := make([]*tenant.Network, 30)
	errs := make([]error, 30)
	for i := range out {
		r := []*replica{r1, r2}[i%2]
		wg.Go(func() {
			out[i], errs[i] = r.createNetwork(alice, net(fmt.Sprintf("default-%d", i)), false)
		})
	}
	wg.Wait()
	seen := map[string]string{}
	for i, n := range out {
		if errs[i] != nil {
			t.Errorf("default-%d: %v", i, errs[i])
			continue
		}
		if len(n.Spec.Subnets) != 1 || netip.MustParsePrefix(n.Spec.Subnets[0]).Bits() != 24 {
			t.Errorf("%s got %v, want one /24", n.Name, n.Spec.Subnets)
			continue
		}
		if other, dup := seen[n.Spec.Subnets[0]]; dup {
			t.Errorf("%s and %s both got %s", other, n.Name, n.Spec.Subnets[0])
		}
		seen[n.Spec.Subnets[0]] = n.Name
	}
	r1.expectClaims(t, out...)
}

func TestNATGateway(t *testing.T) {
	r, _ := setup(t)
	ips := r.tenant(t, "acme").Status.PublicIPs
	if len(ips) != 4 {
		t.Fatalf("acme has public IPs %v, want 4", ips)
	}

	a := r.mustCreateNetwork(t, alice, natNet("a", "", "10.42.1.0/24"))
	if a.Status.NATGatewayIP != ips[0] {
		t.Errorf("NAT address %q, want the first free public IP %s", a.Status.NATGatewayIP, ips[0])
	}
	b := r.mustCreateNetwork(t, alice, natNet("b", ips[2], "10.42.2.0/24"))
	if b.Status.NATGatewayIP != ips[2] {
		t.Errorf("explicit NAT address %q, want %s", b.Status.NATGatewayIP, ips[2])
	}
	_, err := r.createNetwork(alice, natNet("c", ips[2], "10.42.3.0/24"), false)
	wantStatus(t, "a NAT address another network uses", err, 409, fmt.Sprintf("address %s is in use by networks b", ips[2]))
	_, err = r.createNetwork(alice, natNet("c", "203.0.113.200", "10.42.3.0/24"), false)
	wantInvalidAt(t, "a NAT address not the tenant's", err, "spec.natGateway.address", "is not one of tenant acme's public IPs: "+strings.Join(ips, ", "))
	globexIP := r.tenant(t, "globex").Status.PublicIPs[0]
	_, err = r.createNetwork(alice, natNet("c", globexIP, "10.42.3.0/24"), false)
	wantInvalidAt(t, "another tenant's public IP", err, "spec.natGateway.address", "is not one of tenant acme's public IPs")
	r.expectClaims(t, a, b)

	c := r.mustCreateNetwork(t, alice, natNet("c", "", "10.42.3.0/24"))
	d := r.mustCreateNetwork(t, alice, natNet("d", "", "10.42.4.0/24"))
	if c.Status.NATGatewayIP != ips[1] || d.Status.NATGatewayIP != ips[3] {
		t.Errorf("NAT addresses of c and d: %s %s, want %s %s", c.Status.NATGatewayIP, d.Status.NATGatewayIP, ips[1], ips[3])
	}
	_, err = r.createNetwork(alice, natNet("e", "", "10.42.5.0/24"), false)
	wantStatus(t, "a NAT gateway with every public IP in use", err, 409, "no free public IP in tenant acme: all 4 are in use")
	_, err = r.createNetwork(tina, natNet("e", ""), false)
	wantStatus(t, "a NAT gateway in a tenant without public IPs", err, 409, "no free public IP in tenant tiny")
	r.expectClaims(t, a, b, c, d)

	// Disabling gives the address back, once stored.
	a, err = r.updateNetwork(alice, "a", func(n *tenant.Network) { n.Spec.NATGateway.Enabled = false }, false)
	if err != nil || a.Status.NATGatewayIP != "" {
		t.Fatalf("disabling the NAT gateway: %v %+v", err, a)
	}
	r.expectClaims(t, a, b, c, d)
	r.mustCreateNetwork(t, alice, natNet("e", ips[0], "10.42.5.0/24"))
	// Removing natGateway is disabling it.
	e, err := r.updateNetwork(alice, "e", func(n *tenant.Network) { n.Spec.NATGateway = nil }, false)
	if err != nil || e.Status.NATGatewayIP != "" {
		t.Fatalf("removing the NAT gateway: %v %+v", err, e)
	}
	// Enabling on update allocates, also through a replace that carries
	// only the name and spec (as kubectl replace -f of a manifest).
	a, err = r.updateNetwork(alice, "a", func(n *tenant.Network) {
		n.ObjectMeta = metav1.ObjectMeta{Name: n.Name}
		n.Spec.Subnets = nil
		n.Spec.NATGateway.Enabled = true
	}, false)
	if err != nil || a.Status.NATGatewayIP != ips[0] {
		t.Fatalf("enabling the NAT gateway: %v %+v", err, a)
	}
	r.expectClaims(t, a, b, c, d, e)

	// Moving the address: taken (nothing changes), then free.
	_, err = r.updateNetwork(alice, "b", func(n *tenant.Network) { n.Spec.NATGateway.Address = ips[1] }, false)
	wantStatus(t, "moving to a taken address", err, 409, fmt.Sprintf("address %s is in use by networks c", ips[1]))
	if _, err := r.updateNetwork(alice, "c", func(n *tenant.Network) { n.Spec.NATGateway.Enabled = false }, false); err != nil {
		t.Fatal(err)
	}
	b, err = r.updateNetwork(alice, "b", func(n *tenant.Network) { n.Spec.NATGateway.Address = ips[1] }, false)
	if err != nil || b.Status.NATGatewayIP != ips[1] {
		t.Fatalf("moving the NAT address: %v %+v", err, b)
	}
	c = r.getNetwork(t, alice, "c")
	r.expectClaims(t, a, b, c, d, e)
	if got := r.claims(t)[netip.MustParsePrefix(ips[2]+"/32")]; got.Purpose != "" {
		t.Errorf("the former address of b is still claimed by %+v", got)
	}

	// Neither the main resource nor the status subresource changes it.
	b, err = r.updateNetwork(alice, "b", func(n *tenant.Network) { n.Status.NATGatewayIP = ips[2]; n.Status.Subnets = []string{"10.42.200.0/24"} }, false)
	if err != nil || b.Status.NATGatewayIP != ips[1] || !slices.Equal(b.Status.Subnets, []string{"10.42.2.0/24"}) {
		t.Errorf("a spec write changed the NAT address or status subnets: %v %+v", err, b)
	}
	obj, _, err := r.Storage.Networks.StatusStore.Update(tenancy.WithTenant(genericapirequest.WithNamespace(context.Background(), ""), "acme"), "b",
		rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			n := old.(*tenant.Network).DeepCopy()
			n.Status.NATGatewayIP, n.Status.Subnets, n.Status.HostNetwork = ips[2], nil, "acme-b"
			return n, nil
		}), nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if b := obj.(*tenant.Network); err != nil || b.Status.NATGatewayIP != ips[1] || !slices.Equal(b.Status.Subnets, []string{"10.42.2.0/24"}) || b.Status.HostNetwork != "acme-b" {
		t.Errorf("a status write: %v %+v, want the NAT address and subnets kept and hostNetwork written", err, b)
	}
	r.expectClaims(t, a, b, c, d, e)
}

// TestNATGatewayAvoidsFloatingIPs: an address a FloatingIP names is not
// given to a NAT gateway, and asking for it names the FloatingIP.
func TestNATGatewayAvoidsFloatingIPs(t *testing.T) {
	r, _ := setup(t)
	ips := r.tenant(t, "acme").Status.PublicIPs
	r.mustCreateNetwork(t, alice, net("default", "10.42.0.0/24"))
	if _, err := r.Storage.Namespaces.Main.Create(as(alice), &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Spec: tenant.NamespaceSpec{Network: "default"}}, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fip := &tenant.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: "fip1"}, Spec: tenant.FloatingIPSpec{Address: ips[0], Ports: []tenant.FloatingIPPort{{Port: 22, Protocol: tenant.ProtocolTCP}}}}
	if _, err := r.Storage.FloatingIPs.Main.Create(asIn(alice, "dev"), fip, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := r.createNetwork(alice, natNet("n", ips[0], "10.42.1.0/24"), false)
	wantStatus(t, "a NAT address a FloatingIP uses", err, 409, fmt.Sprintf("address %s is in use by floatingips dev/fip1", ips[0]))
	n := r.mustCreateNetwork(t, alice, natNet("n", "", "10.42.1.0/24"))
	if n.Status.NATGatewayIP != ips[1] {
		t.Errorf("NAT address %s, want %s: %s is the FloatingIP's", n.Status.NATGatewayIP, ips[1], ips[0])
	}
}

// TestFailedWritesLeaveNoClaim: a create or update refused after its
// claims were made gives them back.
func TestFailedWritesLeaveNoClaim(t *testing.T) {
	r, _ := setup(t)
	ips := r.tenant(t, "acme").Status.PublicIPs
	a := r.mustCreateNetwork(t, alice, natNet("a", "", "10.42.1.0/24"))

	// The name is taken: AlreadyExists, whatever the subnets, and the
	// claims of the second "a" go.
	_, err := r.createNetwork(alice, natNet("a", ips[1], "10.42.2.0/24"), false)
	wantStatus(t, "a second network a", err, 409, "already exists")
	_, err = r.createNetwork(alice, natNet("a", a.Status.NATGatewayIP, "10.42.1.0/24"), false)
	wantStatus(t, "a second network a with the first one's subnet and address", err, 409, "already exists")
	r.expectClaims(t, a)

	// Over quota: refused after IPAM, like admission.
	if _, _, err := r.Storage.Tenants.Main.Update(as(admin), "acme", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		tn := old.(*tenant.Tenant).DeepCopy()
		tn.Spec.Quota.Networks = int32p(1)
		return tn, nil
	}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = r.createNetwork(alice, natNet("b", "", "10.42.2.0/24"), false)
	wantStatus(t, "a network over quota", err, 403, "exceeded quota: networks")
	_, err = r.createNetwork(alice, net("b"), false)
	wantStatus(t, "a defaulted network over quota", err, 403, "exceeded quota: networks")
	r.expectClaims(t, a)

	// An update whose NAT claim fails, and one that fails after it.
	_, err = r.updateNetwork(alice, "a", func(n *tenant.Network) { n.Spec.NATGateway.Address = "203.0.113.250" }, false)
	wantInvalidAt(t, "moving to an address not the tenant's", err, "spec.natGateway.address")
	_, err = r.updateNetwork(alice, "a", func(n *tenant.Network) {
		n.Spec.NATGateway.Address = ips[2]
		n.Spec.Topology = tenant.NetworkTopologyLayer3
	}, false)
	wantInvalidAt(t, "moving the address with an invalid change", err, "spec.topology")
	_, err = r.updateNetwork(alice, "a", func(n *tenant.Network) {
		n.Spec.NATGateway.Address = ips[2]
		n.Labels = map[string]string{tenancy.TenantLabel: "globex"}
	}, false)
	wantInvalidAt(t, "moving the address while moving tenants", err, "metadata.labels["+tenancy.TenantLabel+"]")
	if got := r.getNetwork(t, alice, "a"); got.Status.NATGatewayIP != a.Status.NATGatewayIP {
		t.Errorf("NAT address %s after failed updates, want %s", got.Status.NATGatewayIP, a.Status.NATGatewayIP)
	}
	r.expectClaims(t, a)
}

func TestDryRunClaimsNothing(t *testing.T) {
	r, _ := setup(t)
	ips := r.tenant(t, "acme").Status.PublicIPs
	a := r.mustCreateNetwork(t, alice, natNet("a", "", "10.42.0.0/24"))

	n, err := r.createNetwork(alice, natNet("dry", ""), true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(n.Spec.Subnets, []string{"10.42.1.0/24"}) || !slices.Equal(n.Status.Subnets, n.Spec.Subnets) || n.Status.NATGatewayIP != ips[1] {
		t.Errorf("dry run shows subnets %v / %v and NAT address %q, want 10.42.1.0/24 and %s", n.Spec.Subnets, n.Status.Subnets, n.Status.NATGatewayIP, ips[1])
	}
	_, err = r.createNetwork(alice, net("dry", "10.42.0.128/25"), true)
	wantInvalidAt(t, "a dry run of an overlapping subnet", err, "spec.subnets[0]", "overlaps subnet 10.42.0.0/24 of network a")
	_, err = r.createNetwork(alice, net("dry", "10.41.0.0/24"), true)
	wantInvalidAt(t, "a dry run of a subnet outside the block", err, "spec.subnets[0]", "10.42.0.0/16")
	_, err = r.createNetwork(alice, natNet("dry", ips[0], "10.42.1.0/24"), true)
	wantStatus(t, "a dry run of a taken NAT address", err, 409, "in use by networks a")
	if _, err := r.createNetwork(alice, natNet("dry", ips[3], "10.42.1.0/24"), true); err != nil {
		t.Errorf("a dry run of a free explicit subnet and NAT address: %v", err)
	}
	// A dry-run update shows the address it would take.
	out, err := r.updateNetwork(alice, "a", func(n *tenant.Network) { n.Spec.NATGateway.Address = ips[2] }, true)
	if err != nil || out.Status.NATGatewayIP != ips[2] {
		t.Errorf("dry-run update moving the NAT address: %v %+v", err, out)
	}
	out, err = r.updateNetwork(alice, "a", func(n *tenant.Network) { n.Spec.NATGateway = nil }, true)
	if err != nil || out.Status.NATGatewayIP != "" {
		t.Errorf("dry-run update disabling the NAT gateway: %v %+v", err, out)
	}
	r.expectClaims(t, r.getNetwork(t, alice, "a"))
	if got := r.getNetwork(t, alice, "a"); got.Status.NATGatewayIP != ips[0] {
		t.Errorf("NAT address %s after dry runs, want %s", got.Status.NATGatewayIP, ips[0])
	}
	if _, err := r.Storage.Networks.Main.Get(as(alice), "dry", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("dry runs stored a network: %v", err)
	}
	// Nothing else was claimed by any of it.
	r.expectClaims(t, a)
}

func TestDeleteReleases(t *testing.T) {
	r, _ := setup(t)
	ips := r.tenant(t, "acme").Status.PublicIPs
	r.mustCreateNetwork(t, alice, natNet("a", ips[2], "10.42.1.0/24"))
	if err := r.deleteNetwork(alice, "a"); err != nil {
		t.Fatal(err)
	}
	r.expectClaims(t)
	b := r.mustCreateNetwork(t, alice, natNet("b", ips[2], "10.42.1.0/24"))
	r.expectClaims(t, b)
}

// TestNetworkInUse: a Namespace names an existing Network, which is not
// deleted while Namespaces name it.
func TestNetworkInUse(t *testing.T) {
	r, _ := setup(t)
	namespaces := r.Storage.Namespaces.Main
	createNS := func(u user.Info, name, network string) error {
		_, err := namespaces.Create(as(u), &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: tenant.NamespaceSpec{Network: network}}, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		return err
	}
	err := createNS(alice, "dev", "blue")
	wantInvalidAt(t, "a namespace of a missing network", err, "spec.network", `Not found: "blue"`)
	r.mustCreateNetwork(t, bob, net("blue", "10.43.1.0/24"))
	err = createNS(alice, "dev", "blue")
	wantInvalidAt(t, "a namespace of another tenant's network", err, "spec.network", `Not found: "blue"`)

	blue := r.mustCreateNetwork(t, alice, net("blue", "10.42.1.0/24"))
	for _, ns := range []string{"dev", "prod"} {
		if err := createNS(alice, ns, "blue"); err != nil {
			t.Fatal(err)
		}
	}
	// A create by apply of tenant.io's namespaces/<name> carries the name
	// as its namespace until the strategy clears it.
	applied := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "applied", Namespace: "applied"}, Spec: tenant.NamespaceSpec{Network: "blue"}}
	if _, err := namespaces.Create(asIn(alice, "applied"), applied, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Errorf("a namespace created with its name as namespace: %v", err)
	} else if _, _, err := namespaces.Delete(as(alice), "applied", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, _, err = namespaces.Update(as(alice), "dev", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		ns := old.(*tenant.Namespace).DeepCopy()
		ns.Spec.Network = "green"
		return ns, nil
	}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	wantInvalidAt(t, "changing a namespace's network", err, "spec.network", "immutable")

	err = r.deleteNetwork(alice, "blue")
	wantStatus(t, "deleting a network in use", err, 409, "network blue", "2 namespace(s)")
	var s apierrors.APIStatus
	if errors.As(err, &s) && s.Status().Details != nil {
		var fields []string
		for _, c := range s.Status().Details.Causes {
			if c.Type != kindstore.CauseTypeAttached {
				t.Errorf("cause %+v, want type %s", c, kindstore.CauseTypeAttached)
			}
			fields = append(fields, c.Field)
		}
		slices.Sort(fields)
		if !slices.Equal(fields, []string{"namespaces dev", "namespaces prod"}) {
			t.Errorf("causes %v, want namespaces dev and prod", fields)
		}
	}
	r.expectClaims(t, blue, r.getNetwork(t, bob, "blue"))
	for _, ns := range []string{"dev", "prod"} {
		if _, _, err := namespaces.Delete(as(alice), ns, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.deleteNetwork(alice, "blue"); err != nil {
		t.Errorf("deleting a network nothing names: %v", err)
	}
	r.expectClaims(t, r.getNetwork(t, bob, "blue"))
}

// TestTenantDeleteReleasesLocalClaims: once a Tenant is gone, so are its
// Networks' claims, whoever deletes the Networks.
func TestTenantDeleteReleasesLocalClaims(t *testing.T) {
	r, _ := setup(t)
	r.mustCreateNetwork(t, alice, natNet("a", "", "10.42.1.0/24"))
	r.mustCreateNetwork(t, alice, net("b"))
	g := r.mustCreateNetwork(t, bob, natNet("a", "", "10.43.1.0/24"))
	acme := r.tenant(t, "acme")
	ctx := genericapirequest.WithNamespace(context.Background(), "")
	// As offboarding does: the Tenant goes once the syncer removes its
	// finalizer (its Networks are the syncer's to delete).
	setFinalizers := func(f []string) {
		t.Helper()
		if _, _, err := r.Storage.Tenants.Store.Update(ctx, "acme", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			tn := old.(*tenant.Tenant).DeepCopy()
			tn.Finalizers = f
			return tn, nil
		}), nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setFinalizers([]string{tenant.FinalizerOffboarding})
	if _, _, err := r.Storage.Tenants.Main.Delete(as(admin), "acme", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	setFinalizers(nil)
	if _, err := r.Storage.Tenants.Store.Get(ctx, "acme", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("tenant acme still there: %v", err)
	}
	left, err := r.TenantSpace.ListOwner(context.Background(), string(acme.UID))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("claims of the deleted tenant left: %+v", left)
	}
	r.expectClaims(t, g)
}

// TestSweeperReclaimsUnrecordedClaims: a claim no Network records (what a
// crash between claiming and storing leaves) is reclaimed once old
// enough; recorded claims, and claims the sweeper cannot place, stay. The
// same whether the sweep reads the object of each allocation, or the
// periodic pass reads the objects once (what it asks about each
// allocation then is that read, and the object only where the read does
// not have the claim).
func TestSweeperReclaimsUnrecordedClaims(t *testing.T) {
	t.Run("a-read-per-allocation", func(t *testing.T) {
		sweeperReclaimsUnrecordedClaims(t, func(r *replica, minAge time.Duration) (int, error) {
			return ipam.SweepUnused(context.Background(), r.TenantSpace, r.IPAM.Keep(r.TenantSpace), ipam.MinAge(minAge))
		})
	})
	t.Run("one-read-per-pass", func(t *testing.T) {
		sweeperReclaimsUnrecordedClaims(t, func(r *replica, minAge time.Duration) (int, error) {
			c := *r.IPAM
			c.SweepMinAge = minAge
			released, claimed, err := c.Pass(context.Background())
			if claimed != 0 {
				t.Errorf("the pass claimed %d again; every recorded claim is held", claimed)
			}
			return released, err
		})
	})
}

func sweeperReclaimsUnrecordedClaims(t *testing.T, sweep func(r *replica, minAge time.Duration) (int, error)) {
	r, _ := setup(t)
	ctx := context.Background()
	acme := r.tenant(t, "acme")
	a := r.mustCreateNetwork(t, alice, natNet("a", "", "10.42.1.0/24"))
	block := ipam.Pool{Name: "acme", CIDRs: []netip.Prefix{netip.MustParsePrefix("10.42.0.0/16")}}
	claim := func(b, purpose, ref string) {
		t.Helper()
		owner := ipam.Owner{Tenant: "acme", TenantUID: string(acme.UID), Purpose: purpose, Ref: ref}
		if err := r.TenantSpace.ClaimBlock(ctx, block, netip.MustParsePrefix(b), owner); err != nil {
			t.Fatal(err)
		}
	}
	claim("10.42.2.0/24", claims.Purpose(claims.UseNetwork, "crashed-uid"), "networks crashed") // no such Network
	claim("10.42.3.0/24", claims.Purpose(claims.UseNetwork, "old-uid"), "networks a")           // a Network a, another UID
	claim("10.42.4.0/24", claims.Purpose(claims.UseNetwork, a.UID), "networks a")               // a does not record it
	claim("10.42.5.0/24", "reserved", "")                                                       // not the registry's: kept
	claim("10.42.6.0/24", claims.Purpose("widget", "widget-uid"), "widgets dev/w1")             // a kind the sweeper does not know: kept
	// The hold of an update of the Tenant that crashed.
	if err := r.TenantSpace.ClaimAddress(ctx, ipam.Pool{Name: "pub", CIDRs: []netip.Prefix{netip.MustParsePrefix(acme.Status.PublicIPs[3] + "/32")}}, netip.MustParseAddr(acme.Status.PublicIPs[3]),
		ipam.Owner{Tenant: "acme", TenantUID: string(acme.UID), Purpose: claims.Purpose(claims.UsePublicIPRelease, acme.UID+"/crashed"), Ref: "tenants acme"}); err != nil {
		t.Fatal(err)
	}

	n, err := sweep(r, time.Hour)
	if err != nil || n != 0 {
		t.Errorf("sweep of young claims released %d: %v", n, err)
	}
	n, err = sweep(r, 0)
	if err != nil || n != 4 {
		t.Errorf("sweep released %d claims: %v, want 4", n, err)
	}
	got := r.claims(t)
	for _, b := range []string{"10.42.2.0/24", "10.42.3.0/24", "10.42.4.0/24", acme.Status.PublicIPs[3] + "/32"} {
		if o, ok := got[netip.MustParsePrefix(b)]; ok {
			t.Errorf("unrecorded claim %s by %+v survived the sweep", b, o)
		}
	}
	for _, b := range []string{"10.42.1.0/24", a.Status.NATGatewayIP + "/32", "10.42.5.0/24", "10.42.6.0/24"} {
		if _, ok := got[netip.MustParsePrefix(b)]; !ok {
			t.Errorf("claim %s was swept", b)
		}
	}
}

// TestPublicIPsInUseByNATGateways: a Tenant's public IPs that NAT gateways
// hold are not given up when its publicIPs.count is lowered (409 naming
// the Networks); the others are.
func TestPublicIPsInUseByNATGateways(t *testing.T) {
	r, _ := setup(t)
	ips := r.tenant(t, "acme").Status.PublicIPs
	r.mustCreateNetwork(t, alice, natNet("a", ips[3], "10.42.1.0/24"))
	r.mustCreateNetwork(t, alice, natNet("b", ips[2], "10.42.2.0/24"))
	lower := func(count int32) (*tenant.Tenant, error) {
		out, _, err := r.Storage.Tenants.Main.Update(as(admin), "acme", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			tn := old.(*tenant.Tenant).DeepCopy()
			tn.Spec.PublicIPs.Count = count
			return tn, nil
		}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			return nil, err
		}
		return out.(*tenant.Tenant), nil
	}
	_, err := lower(1)
	wantStatus(t, "lowering publicIPs.count below what NAT gateways use", err, 409,
		ips[3]+" (networks a)", ips[2]+" (networks b)")
	two, err := lower(2)
	if err != nil {
		t.Fatal(err)
	}
	if got := two.Status.PublicIPs; !slices.Equal(got, ips[2:]) {
		t.Errorf("public IPs after lowering to 2: %v, want the two the NAT gateways use, %v", got, ips[2:])
	}
	r.expectClaims(t, r.getNetwork(t, alice, "a"), r.getNetwork(t, alice, "b")) // no holds left

	// Enabling NAT gateways while the count is lowered: whatever wins, no
	// NAT gateway keeps an address the Tenant gave up.
	for round := range 5 {
		if _, err := lower(8); err != nil {
			t.Fatal(err)
		}
		var names []string
		for i := range 4 {
			n := r.mustCreateNetwork(t, alice, net(fmt.Sprintf("r%d-%d", round, i), fmt.Sprintf("10.42.%d.0/24", 10+10*round+i)))
			names = append(names, n.Name)
		}
		var wg sync.WaitGroup
		for _, name := range names {
			wg.Go(func() {
				_, err := r.updateNetwork(alice, name, func(n *tenant.Network) { n.Spec.NATGateway = &tenant.NATGateway{Enabled: true} }, false)
				if err != nil && !apierrors.IsConflict(err) {
					t.Errorf("enabling the NAT gateway of %s: %v", name, err)
				}
			})
		}
		wg.Go(func() {
			if _, err := lower(3); err != nil && !apierrors.IsConflict(err) {
				t.Errorf("lowering to 3: %v", err)
			}
		})
		wg.Wait()
		have := r.tenant(t, "acme").Status.PublicIPs
		stored := []*tenant.Network{r.getNetwork(t, alice, "a"), r.getNetwork(t, alice, "b")}
		for _, name := range names {
			n := r.getNetwork(t, alice, name)
			if n.Status.NATGatewayIP != "" && !slices.Contains(have, n.Status.NATGatewayIP) {
				t.Errorf("round %d: %s uses %s, which acme gave up (it has %v)", round, n.Name, n.Status.NATGatewayIP, have)
			}
			stored = append(stored, n)
		}
		r.expectClaims(t, stored...)
		for _, name := range names {
			if err := r.deleteNetwork(alice, name); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestReclaimRecordedClaims: what Networks record but nobody holds (they
// were stored before the registry claimed their space, or a release took
// it from under them) is claimed again, inside their tenant's space only.
func TestReclaimRecordedClaims(t *testing.T) {
	r, url := setup(t)
	ctx := context.Background()
	legacy := newReplica(t, url, false)
	old, err := legacy.createNetwork(alice, natNet("old", "", "10.42.3.0/24"), false)
	if err != nil {
		t.Fatal(err)
	}
	stray, err := legacy.createNetwork(alice, net("stray", "10.43.9.0/24"), false)
	if err != nil {
		t.Fatal(err)
	}
	a := r.mustCreateNetwork(t, alice, natNet("a", "", "10.42.1.0/24"))
	r.expectClaims(t, a)
	// A release from under a: its NAT address.
	acme := r.tenant(t, "acme")
	owner := claims.OwnerFor(acme, claims.UseNATGateway, "networks", a)
	if err := r.TenantSpace.Release(ctx, netip.PrefixFrom(netip.MustParseAddr(a.Status.NATGatewayIP), 32), owner); err != nil {
		t.Fatal(err)
	}

	// The reclaim pass reads the watch cache as it is (a later pass sees
	// what it missed).
	registrytest.WaitCached(t, r.Storage.Networks.Store, a.UID)
	n, err := r.IPAM.Reclaim(ctx)
	if n != 2 || err == nil || !strings.Contains(err.Error(), "10.43.9.0/24") {
		t.Errorf("reclaim claimed %d (%v), want 2 and an error about stray's 10.43.9.0/24, outside acme's block", n, err)
	}
	if old.Status.NATGatewayIP != "" || old.Spec.NATGateway == nil {
		t.Fatalf("a network stored without IPAM: %+v", old)
	}
	r.expectClaims(t, a, old)
	if len(old.Status.Subnets) != 0 {
		t.Fatalf("a network stored without IPAM has status.subnets %v", old.Status.Subnets)
	}
	// Its next update makes status.subnets mirror spec.subnets.
	if old, err = r.updateNetwork(alice, "old", func(n *tenant.Network) { n.Labels["app"] = "web" }, false); err != nil || !slices.Equal(old.Status.Subnets, old.Spec.Subnets) {
		t.Errorf("status.subnets of an old network after an update: %v (%v), want %v", old.Status.Subnets, err, old.Spec.Subnets)
	}
	if o, held := r.claims(t)[netip.MustParsePrefix(stray.Spec.Subnets[0])]; held {
		t.Errorf("stray's subnet, outside acme's block, was claimed for %+v", o)
	}
	_, err = r.createNetwork(alice, net("new", "10.42.3.128/25"), false)
	wantInvalidAt(t, "a subnet inside a reclaimed one", err, "spec.subnets[0]", "overlaps subnet 10.42.3.0/24 of network old")
	if n, _ := r.IPAM.Reclaim(ctx); n != 0 {
		t.Errorf("a second reclaim claimed %d, want nothing left", n)
	}

	// A Network stored without subnets gets its default subnet at its
	// next update, even a replace that carries only its name and spec.
	if _, err := legacy.createNetwork(alice, net("bare"), false); err != nil {
		t.Fatal(err)
	}
	bare, err := r.updateNetwork(alice, "bare", func(n *tenant.Network) {
		n.ObjectMeta = metav1.ObjectMeta{Name: n.Name, Labels: map[string]string{"app": "web"}}
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(bare.Spec.Subnets, []string{"10.42.0.0/24"}) || !slices.Equal(bare.Status.Subnets, bare.Spec.Subnets) {
		t.Errorf("a network stored without subnets, updated: spec %v status %v, want 10.42.0.0/24", bare.Spec.Subnets, bare.Status.Subnets)
	}
	r.expectClaims(t, a, old, bare)
}
