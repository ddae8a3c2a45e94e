package floatingip_test

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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/registry/registrytest"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/claims"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

var (
	admin, alice, bob, tina, fiona = registrytest.Admin, registrytest.Alice, registrytest.Bob, registrytest.Tina, registrytest.Fiona
	as, asIn                       = registrytest.As, registrytest.AsIn
)

// publicSpace is the PublicIPs pool of the tests: the tenants' public IPs,
// and so the claims of FloatingIPs, LoadBalancers and NAT gateways, are in it.
var publicSpace = netip.MustParsePrefix("203.0.113.0/24")

// replica is one tenant-apiserver's storage on a shared etcd.
type replica struct{ *registrytest.Replica }

func newReplica(t *testing.T, url string, withIPAM bool) *replica {
	return &replica{registrytest.NewReplica(t, url, withIPAM)}
}

func int32p(i int32) *int32 { return &i }

// setup starts etcd and one replica with the demo pools and tenants acme
// (alice, 4 public IPs, quota of 4 FloatingIPs and 4 LoadBalancers),
// globex (bob, 2 public IPs), tiny (tina, no public IP) and five (fiona, 5
// public IPs, quota of 20 and 20), each with Network default and Namespace
// dev.
func setup(t *testing.T) (*replica, string) {
	t.Helper()
	url := registrytest.StartEtcd(t)
	r := newReplica(t, url, true)
	for _, p := range []*tenant.AddressPool{
		{ObjectMeta: metav1.ObjectMeta{Name: "tenant-networks"}, Spec: tenant.AddressPoolSpec{
			Purpose: tenant.AddressPoolPurposeTenantNetworks, CIDRs: []string{"10.0.0.0/8"}, DefaultPrefixLength: int32p(16)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "public"}, Spec: tenant.AddressPoolSpec{
			Purpose: tenant.AddressPoolPurposePublicIPs, CIDRs: []string{publicSpace.String()}, Exclude: []string{"203.0.113.0", "203.0.113.255"}}},
	} {
		if _, err := r.Storage.AddressPools.Main.Create(as(admin), p, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tn := range []struct {
		name, cidr string
		member     user.Info
		ips, quota int32
	}{{"acme", "10.42.0.0/16", alice, 4, 4}, {"globex", "10.43.0.0/16", bob, 2, 4}, {"tiny", "10.44.0.0/26", tina, 0, 4}, {"five", "10.45.0.0/16", fiona, 5, 20}} {
		obj := &tenant.Tenant{
			ObjectMeta: metav1.ObjectMeta{Name: tn.name},
			Spec: tenant.TenantSpec{
				Members:   tenant.TenantMembers{Users: []string{tn.member.GetName()}},
				Network:   tenant.TenantNetwork{CIDR: tn.cidr},
				PublicIPs: tenant.TenantPublicIPs{Count: tn.ips},
				Quota:     tenant.TenantQuota{Namespaces: int32p(10), Networks: int32p(64), FloatingIPs: int32p(tn.quota), LoadBalancers: int32p(tn.quota)},
			},
		}
		if _, err := r.Storage.Tenants.Main.Create(as(admin), obj, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		network := &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: tenant.NetworkSpec{Topology: tenant.NetworkTopologyLayer2}}
		if _, err := r.Storage.Networks.Main.Create(as(tn.member), network, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ns := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Spec: tenant.NamespaceSpec{Network: "default"}}
		if _, err := r.Storage.Namespaces.Main.Create(as(tn.member), ns, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
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

func fip(name, address string) *tenant.FloatingIP {
	return &tenant.FloatingIP{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       tenant.FloatingIPSpec{Address: address, Ports: []tenant.FloatingIPPort{{Port: 22, Protocol: tenant.ProtocolTCP}}},
	}
}

func lb(name, address string) *tenant.LoadBalancer {
	return &tenant.LoadBalancer{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: tenant.LoadBalancerSpec{
			Address:  address,
			Selector: map[string]string{"app": name},
			Ports:    []tenant.LoadBalancerPort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: tenant.ProtocolTCP}},
		},
	}
}

func createOptions(dryRun bool) *metav1.CreateOptions {
	if dryRun {
		return &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	}
	return &metav1.CreateOptions{}
}

func (r *replica) createFIP(u user.Info, f *tenant.FloatingIP, dryRun bool) (*tenant.FloatingIP, error) {
	out, err := r.Storage.FloatingIPs.Main.Create(asIn(u, "dev"), f, rest.ValidateAllObjectFunc, createOptions(dryRun))
	if err != nil {
		return nil, err
	}
	return out.(*tenant.FloatingIP), nil
}

func (r *replica) mustCreateFIP(t *testing.T, u user.Info, f *tenant.FloatingIP) *tenant.FloatingIP {
	t.Helper()
	out, err := r.createFIP(u, f, false)
	if err != nil {
		t.Fatalf("creating FloatingIP %s as %s: %v", f.Name, u.GetName(), err)
	}
	return out
}

func (r *replica) createLB(u user.Info, l *tenant.LoadBalancer, dryRun bool) (*tenant.LoadBalancer, error) {
	out, err := r.Storage.LoadBalancers.Main.Create(asIn(u, "dev"), l, rest.ValidateAllObjectFunc, createOptions(dryRun))
	if err != nil {
		return nil, err
	}
	return out.(*tenant.LoadBalancer), nil
}

func (r *replica) mustCreateLB(t *testing.T, u user.Info, l *tenant.LoadBalancer) *tenant.LoadBalancer {
	t.Helper()
	out, err := r.createLB(u, l, false)
	if err != nil {
		t.Fatalf("creating LoadBalancer %s as %s: %v", l.Name, u.GetName(), err)
	}
	return out
}

func (r *replica) getFIP(t *testing.T, u user.Info, name string) *tenant.FloatingIP {
	t.Helper()
	out, err := r.Storage.FloatingIPs.Main.Get(asIn(u, "dev"), name, &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out.(*tenant.FloatingIP)
}

// updateFIP changes FloatingIP dev/name as u through the main resource.
func (r *replica) updateFIP(u user.Info, name string, change func(*tenant.FloatingIP), dryRun bool) (*tenant.FloatingIP, error) {
	opts := &metav1.UpdateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	out, _, err := r.Storage.FloatingIPs.Main.Update(asIn(u, "dev"), name, rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		f := old.(*tenant.FloatingIP).DeepCopy()
		change(f)
		return f, nil
	}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, opts)
	if err != nil {
		return nil, err
	}
	return out.(*tenant.FloatingIP), nil
}

// updateFIPStatus changes FloatingIP dev/name of tenant tn through the
// status subresource, as the syncer does.
func (r *replica) updateFIPStatus(tn, name string, change func(*tenant.FloatingIP)) (*tenant.FloatingIP, error) {
	ctx := tenancy.WithTenant(genericapirequest.WithNamespace(context.Background(), "dev"), tn)
	out, _, err := r.Storage.FloatingIPs.StatusStore.Update(ctx, name, rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		f := old.(*tenant.FloatingIP).DeepCopy()
		change(f)
		return f, nil
	}), nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return out.(*tenant.FloatingIP), nil
}

func (r *replica) deleteFIP(u user.Info, name string) error {
	_, _, err := r.Storage.FloatingIPs.Main.Delete(asIn(u, "dev"), name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
	return err
}

func (r *replica) deleteLB(u user.Info, name string) error {
	_, _, err := r.Storage.LoadBalancers.Main.Delete(asIn(u, "dev"), name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
	return err
}

// publicClaims returns the claims in the tenant space of public IPs, by address.
func (r *replica) publicClaims(t *testing.T) map[string]ipam.Owner {
	t.Helper()
	allocs, err := r.TenantSpace.ListAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]ipam.Owner{}
	for _, a := range allocs {
		if publicSpace.Overlaps(a.Block) {
			out[a.Block.Addr().String()] = a.Owner
		}
	}
	return out
}

// expectClaims checks that the tenant space holds exactly the
// claims of public IPs that objs record (a FloatingIP its status.address, a
// LoadBalancer its spec.address, a Network its NAT gateway's address),
// with their purposes and refs.
func (r *replica) expectClaims(t *testing.T, objs ...runtime.Object) {
	t.Helper()
	type claim struct{ purpose, ref string }
	want := map[string]claim{}
	for _, obj := range objs {
		switch o := obj.(type) {
		case *tenant.FloatingIP:
			want[o.Status.Address] = claim{claims.Purpose(claims.UseFloatingIP, o.UID), "floatingips " + o.Namespace + "/" + o.Name}
		case *tenant.LoadBalancer:
			want[o.Spec.Address] = claim{claims.Purpose(claims.UseLoadBalancer, o.UID), "loadbalancers " + o.Namespace + "/" + o.Name}
		case *tenant.Network:
			if o.Status.NATGatewayIP != "" {
				want[o.Status.NATGatewayIP] = claim{claims.Purpose(claims.UseNATGateway, o.UID), "networks " + o.Name}
			}
		}
	}
	got := r.publicClaims(t)
	for addr, c := range want {
		if o, ok := got[addr]; !ok || o.Purpose != c.purpose || o.Ref != c.ref {
			t.Errorf("claim of %s: %+v (present %v), want purpose %s, ref %s", addr, o, ok, c.purpose, c.ref)
		}
	}
	for addr, o := range got {
		if _, ok := want[addr]; !ok {
			t.Errorf("claim of %s by %+v: no object records it", addr, o)
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

// TestFloatingIPAddresses: a FloatingIP holds the address it asks for, else
// the lowest free one, in status.address; SPEC 3.4's errors otherwise.
func TestFloatingIPAddresses(t *testing.T) {
	r, _ := setup(t)
	ips := r.tenant(t, "acme").Status.PublicIPs
	if len(ips) != 4 {
		t.Fatalf("acme has public IPs %v, want 4", ips)
	}
	// What a create asks for in status is the server's to set.
	first := fip("first", "")
	first.Status = tenant.FloatingIPStatus{Address: ips[3], Phase: tenant.FloatingIPPhaseAssociated}
	first = r.mustCreateFIP(t, alice, first)
	if first.Status.Address != ips[0] || first.Spec.Address != "" || first.Status.Phase != "" {
		t.Errorf("FloatingIP without an address: spec %q status %+v, want status.address %s (the lowest free) and nothing else", first.Spec.Address, first.Status, ips[0])
	}
	second := r.mustCreateFIP(t, alice, fip("second", ips[2]))
	if second.Status.Address != ips[2] || second.Spec.Address != ips[2] {
		t.Errorf("FloatingIP asking for %s: spec %q status %q", ips[2], second.Spec.Address, second.Status.Address)
	}
	if owner := r.publicClaims(t)[ips[2]]; owner.Tenant != "acme" || owner.TenantUID != string(r.tenant(t, "acme").UID) {
		t.Errorf("owner of %s: %+v, want tenant acme", ips[2], owner)
	}

	_, err := r.createFIP(alice, fip("dup", ips[2]), false)
	wantStatus(t, "an address another FloatingIP holds", err, 409, fmt.Sprintf("address %s is in use by floatingips dev/second", ips[2]))
	_, err = r.createFIP(alice, fip("dup", ips[0]), false)
	wantStatus(t, "an address another FloatingIP holds without asking for it", err, 409, fmt.Sprintf("address %s is in use by floatingips dev/first", ips[0]))
	_, err = r.createFIP(alice, fip("foreign", "198.51.100.7"), false)
	wantInvalidAt(t, "an address not the tenant's", err, "spec.address", "is not one of tenant acme's public IPs: "+strings.Join(ips, ", "))
	_, err = r.createFIP(alice, fip("foreign", r.tenant(t, "globex").Status.PublicIPs[0]), false)
	wantInvalidAt(t, "another tenant's public IP", err, "spec.address", "is not one of tenant acme's public IPs")
	_, err = r.createFIP(alice, fip("bad", "203.0.113.300"), false)
	wantInvalidAt(t, "not an address", err, "spec.address")
	_, err = r.createFIP(tina, fip("none", ""), false)
	wantStatus(t, "a tenant without public IPs", err, 409, "no free public IP in tenant tiny: it has none")
	// A second create of a name is AlreadyExists, not a clash of addresses.
	_, err = r.createFIP(alice, fip("second", ips[2]), false)
	wantStatus(t, "a second FloatingIP second", err, 409, "already exists")

	// LoadBalancers take the remaining two: none is left.
	l1 := r.mustCreateLB(t, alice, lb("l1", ""))
	l3 := r.mustCreateLB(t, alice, lb("l3", ""))
	if l1.Spec.Address != ips[1] || l3.Spec.Address != ips[3] {
		t.Errorf("LoadBalancers got %s and %s, want %s and %s", l1.Spec.Address, l3.Spec.Address, ips[1], ips[3])
	}
	_, err = r.createFIP(alice, fip("third", ""), false)
	wantStatus(t, "every public IP in use", err, 409, "no free public IP in tenant acme: all 4 are in use")
	_, err = r.createFIP(alice, fip("third", ips[1]), false)
	wantStatus(t, "an address a LoadBalancer holds", err, 409, fmt.Sprintf("address %s is in use by loadbalancers dev/l1", ips[1]))
	// Another tenant's public IPs are its own business.
	g := r.mustCreateFIP(t, bob, fip("first", ""))
	r.expectClaims(t, first, second, l1, l3, g)
}

// TestFloatingIPAddressIsServerOwned: status.address is what the registry
// claimed; neither the main resource nor the status subresource changes
// it, and the syncer's status writes keep working. spec.address, once the
// FloatingIP holds an address, cannot ask for another; changing the
// target or ports never moves it.
func TestFloatingIPAddressIsServerOwned(t *testing.T) {
	r, _ := setup(t)
	ips := r.tenant(t, "acme").Status.PublicIPs
	f := r.mustCreateFIP(t, alice, fip("ssh", ""))
	held := f.Status.Address

	got, err := r.updateFIP(alice, "ssh", func(f *tenant.FloatingIP) { f.Status.Address = ips[3] }, false)
	if err != nil || got.Status.Address != held {
		t.Errorf("a write of status.address through the main resource: %v %+v, want %s kept", err, got, held)
	}
	got, err = r.updateFIPStatus("acme", "ssh", func(f *tenant.FloatingIP) {
		f.Status.Address = ips[3]
		f.Status.Phase = tenant.FloatingIPPhaseAllocated
		f.Status.ObservedGeneration = f.Generation
	})
	if err != nil || got.Status.Address != held || got.Status.Phase != tenant.FloatingIPPhaseAllocated {
		t.Errorf("a status write: %v %+v, want the address %s kept and the phase written", err, got, held)
	}
	got, err = r.updateFIPStatus("acme", "ssh", func(f *tenant.FloatingIP) { f.Status.Address = "" })
	if err != nil || got.Status.Address != held {
		t.Errorf("a status write clearing the address: %v %+v, want %s kept", err, got, held)
	}

	// Target and ports change; the address stays.
	got, err = r.updateFIP(alice, "ssh", func(f *tenant.FloatingIP) {
		f.Spec.Target = &tenant.FloatingIPTarget{Kind: tenant.FloatingIPTargetPod, Name: "web"}
		f.Spec.Ports = []tenant.FloatingIPPort{{Port: 443, Protocol: tenant.ProtocolTCP}}
	}, false)
	if err != nil || got.Status.Address != held || got.Generation != 2 {
		t.Errorf("changing target and ports: %v %+v, want address %s at generation 2", err, got, held)
	}
	_, err = r.updateFIP(alice, "ssh", func(f *tenant.FloatingIP) { f.Spec.Address = ips[2] }, false)
	wantInvalidAt(t, "asking for another address", err, "spec.address", "field is immutable", "the FloatingIP holds "+held)
	_, err = r.updateFIP(alice, "ssh", func(f *tenant.FloatingIP) { f.Spec.Address = ips[2] }, true)
	wantInvalidAt(t, "asking for another address in a dry run", err, "spec.address", "immutable")
	// Asking for the address it holds pins it; omitting it again keeps it
	// (as a replace of the manifest does).
	got, err = r.updateFIP(alice, "ssh", func(f *tenant.FloatingIP) { f.Spec.Address = held }, false)
	if err != nil || got.Spec.Address != held || got.Status.Address != held {
		t.Errorf("asking for the held address: %v %+v", err, got)
	}
	got, err = r.updateFIP(alice, "ssh", func(f *tenant.FloatingIP) {
		f.ObjectMeta = metav1.ObjectMeta{Name: f.Name, Namespace: f.Namespace}
		f.Spec.Address = ""
		f.Status = tenant.FloatingIPStatus{}
	}, false)
	if err != nil || got.Spec.Address != held || got.Status.Address != held {
		t.Errorf("a replace omitting the address: %v %+v, want %s kept", err, got, held)
	}
	_, err = r.updateFIP(alice, "ssh", func(f *tenant.FloatingIP) { f.Spec.Address = ips[1] }, false)
	wantInvalidAt(t, "changing the address", err, "spec.address", "immutable")
	r.expectClaims(t, r.getFIP(t, alice, "ssh"))
}

// TestFloatingIPDeleteReleases: a delete gives the address back, and a
// FloatingIP (or LoadBalancer) created again may ask for it.
func TestFloatingIPDeleteReleases(t *testing.T) {
	r, _ := setup(t)
	ips := r.tenant(t, "acme").Status.PublicIPs
	r.mustCreateFIP(t, alice, fip("a", ips[2]))
	if err := r.deleteFIP(alice, "a"); err != nil {
		t.Fatal(err)
	}
	r.expectClaims(t)
	a := r.mustCreateFIP(t, alice, fip("a", ips[2]))
	if a.Status.Address != ips[2] {
		t.Errorf("re-created a holds %s, want %s", a.Status.Address, ips[2])
	}
	if err := r.deleteFIP(alice, "a"); err != nil {
		t.Fatal(err)
	}
	l := r.mustCreateLB(t, alice, lb("a", ips[2]))
	r.expectClaims(t, l)
	if err := r.deleteLB(alice, "a"); err != nil {
		t.Fatal(err)
	}
	a = r.mustCreateFIP(t, alice, fip("a", ips[2]))
	r.expectClaims(t, a)
}

// TestFailedCreatesLeaveNoClaim: a create refused after its claim was made
// gives it back; one refused before claims nothing.
func TestFailedCreatesLeaveNoClaim(t *testing.T) {
	r, _ := setup(t)
	ips := r.tenant(t, "acme").Status.PublicIPs
	a := r.mustCreateFIP(t, alice, fip("a", ""))

	// Refused by the strategy, after the claim: a tenant label of another tenant.
	sneaky := fip("sneaky", ips[1])
	sneaky.Labels = map[string]string{tenancy.TenantLabel: "globex"}
	_, err := r.createFIP(alice, sneaky, false)
	wantInvalidAt(t, "a FloatingIP labelled with another tenant", err, "metadata.labels[tenant.io/tenant]")
	// Refused by the admission that runs after the strategy.
	_, err = r.Storage.FloatingIPs.Main.Create(asIn(alice, "dev"), fip("refused", ""), func(context.Context, runtime.Object) error {
		return apierrors.NewForbidden(tenant.Resource("floatingips"), "refused", errors.New("no"))
	}, &metav1.CreateOptions{})
	wantStatus(t, "a create refused by admission", err, 403)
	// Refused before: a bad spec, the name taken, over quota.
	bad := fip("bad", "")
	bad.Spec.Ports[0].Port = 0
	_, err = r.createFIP(alice, bad, false)
	wantInvalidAt(t, "a bad port", err, "spec.ports[0].port")
	_, err = r.createFIP(alice, fip("a", ips[2]), false)
	wantStatus(t, "a second a", err, 409, "already exists")
	r.expectClaims(t, a)

	// Over quota is a 403, though no address is free either: the quota
	// is checked first, and nothing is claimed.
	fips := []runtime.Object{a}
	for _, name := range []string{"b", "c", "d"} {
		fips = append(fips, r.mustCreateFIP(t, alice, fip(name, "")))
	}
	_, err = r.createFIP(alice, fip("e", ""), false)
	wantStatus(t, "a FloatingIP over quota", err, 403, "exceeded quota: floatingIPs, requested 1, used 4, limited 4")
	_, err = r.createFIP(alice, fip("e", ""), true)
	wantStatus(t, "a dry run over quota", err, 403, "exceeded quota: floatingIPs")
	r.expectClaims(t, fips...)
}

// TestDryRunClaimsNothing: dry runs check everything and show the
// address they would give, claiming nothing.
func TestDryRunClaimsNothing(t *testing.T) {
	r, _ := setup(t)
	ips := r.tenant(t, "acme").Status.PublicIPs
	a := r.mustCreateFIP(t, alice, fip("a", ""))

	dry, err := r.createFIP(alice, fip("dry", ""), true)
	if err != nil || dry.Status.Address != ips[1] {
		t.Errorf("dry run without an address: %v %+v, want it to show %s", err, dry, ips[1])
	}
	dry, err = r.createFIP(alice, fip("dry", ips[3]), true)
	if err != nil || dry.Status.Address != ips[3] {
		t.Errorf("dry run of a free address: %v %+v", err, dry)
	}
	_, err = r.createFIP(alice, fip("dry", ips[0]), true)
	wantStatus(t, "dry run of a taken address", err, 409, fmt.Sprintf("address %s is in use by floatingips dev/a", ips[0]))
	_, err = r.createFIP(alice, fip("dry", "198.51.100.7"), true)
	wantInvalidAt(t, "dry run of an address not the tenant's", err, "spec.address")
	dryLB, err := r.createLB(alice, lb("dry", ""), true)
	if err != nil || dryLB.Spec.Address != ips[1] {
		t.Errorf("dry run of a LoadBalancer: %v %+v, want spec.address %s", err, dryLB, ips[1])
	}
	if _, err := r.updateFIP(alice, "a", func(f *tenant.FloatingIP) { f.Spec.Ports = nil }, true); err != nil {
		t.Errorf("dry-run update: %v", err)
	}
	if _, err := r.Storage.FloatingIPs.Main.Get(asIn(alice, "dev"), "dry", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dry run stored a FloatingIP: %v", err)
	}
	// A dry-run delete keeps the address.
	if _, _, err := r.Storage.FloatingIPs.Main.Delete(asIn(alice, "dev"), "a", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	r.expectClaims(t, a)
	// What the dry runs showed is still free.
	if b := r.mustCreateFIP(t, alice, fip("b", "")); b.Status.Address != ips[1] {
		t.Errorf("b holds %s, want %s", b.Status.Address, ips[1])
	}
}

// TestConcurrentCreates races 20 creates of FloatingIPs and LoadBalancers,
// and NAT gateways being enabled, in a tenant with 5 public IPs, on two
// replicas sharing etcd: exactly 5 objects get an address, all different,
// the others are refused with 409, and only their claims are left.
func TestConcurrentCreates(t *testing.T) {
	r1, url := setup(t)
	r2 := newReplica(t, url, true)
	ips := r1.tenant(t, "five").Status.PublicIPs
	if len(ips) != 5 {
		t.Fatalf("five has %v, want 5 public IPs", ips)
	}
	for i := range 4 {
		n := &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("nat-%d", i)}, Spec: tenant.NetworkSpec{Topology: tenant.NetworkTopologyLayer2}}
		if _, err := r1.Storage.Networks.Main.Create(as(fiona), n, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 24)
	for i := range 20 {
		r := []*replica{r1, r2}[i%2]
		wg.Go(func() {
			name := fmt.Sprintf("race-%d", i)
			// Some ask for an address, most do not.
			var want string
			if i%5 == 0 {
				want = ips[(i/5)%len(ips)]
			}
			if i%4 < 2 {
				_, errs[i] = r.createFIP(fiona, fip(name, want), false)
			} else {
				_, errs[i] = r.createLB(fiona, lb(name, want), false)
			}
		})
	}
	for i := range 4 {
		r := []*replica{r1, r2}[i%2]
		wg.Go(func() {
			_, _, errs[20+i] = r.Storage.Networks.Main.Update(as(fiona), fmt.Sprintf("nat-%d", i), rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
				n := old.(*tenant.Network).DeepCopy()
				n.Spec.NATGateway = &tenant.NATGateway{Enabled: true}
				return n, nil
			}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		})
	}
	wg.Wait()

	var holders []runtime.Object
	held := map[string]string{}
	hold := func(addr, who string) {
		if other, dup := held[addr]; dup {
			t.Errorf("%s and %s both hold %s", other, who, addr)
		}
		held[addr] = who
	}
	for i, err := range errs {
		if err != nil {
			var s apierrors.APIStatus
			if !errors.As(err, &s) || s.Status().Code != 409 || !strings.Contains(err.Error(), "in use") {
				t.Errorf("racer %d: %v, want success or 409", i, err)
			}
			continue
		}
		if i >= 20 {
			continue
		}
		name := fmt.Sprintf("race-%d", i)
		if obj, err := r1.Storage.FloatingIPs.Main.Get(asIn(fiona, "dev"), name, &metav1.GetOptions{}); err == nil {
			f := obj.(*tenant.FloatingIP)
			hold(f.Status.Address, "floatingips "+name)
			holders = append(holders, f)
		} else if obj, err := r1.Storage.LoadBalancers.Main.Get(asIn(fiona, "dev"), name, &metav1.GetOptions{}); err == nil {
			l := obj.(*tenant.LoadBalancer)
			hold(l.Spec.Address, "loadbalancers "+name)
			holders = append(holders, l)
		} else {
			t.Errorf("%s was created but is gone: %v", name, err)
		}
	}
	for i := range 4 {
		obj, err := r1.Storage.Networks.Main.Get(as(fiona), fmt.Sprintf("nat-%d", i), &metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := obj.(*tenant.Network)
		if n.Status.NATGatewayIP != "" {
			hold(n.Status.NATGatewayIP, "networks "+n.Name)
			holders = append(holders, n)
		}
	}
	if len(held) != 5 {
		t.Errorf("%d addresses held (%v), want all 5 and no more", len(held), held)
	}
	for addr := range held {
		if !slices.Contains(ips, addr) {
			t.Errorf("%s holds %s, not one of five's %v", held[addr], addr, ips)
		}
	}
	r1.expectClaims(t, holders...)
}

// TestConcurrentCreatesOverQuota races 20 creates in a tenant with 5
// public IPs but a quota of 2 FloatingIPs and 2 LoadBalancers: at most 2
// of each are stored, with different addresses, the others are refused
// with 409 or 403, and no claim is left of them.
func TestConcurrentCreatesOverQuota(t *testing.T) {
	r1, url := setup(t)
	r2 := newReplica(t, url, true)
	if _, _, err := r1.Storage.Tenants.Main.Update(as(admin), "five", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		tn := old.(*tenant.Tenant).DeepCopy()
		tn.Spec.Quota.FloatingIPs, tn.Spec.Quota.LoadBalancers = int32p(2), int32p(2)
		return tn, nil
	}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		r := []*replica{r1, r2}[i%2]
		wg.Go(func() {
			if i%2 == 0 {
				_, errs[i] = r.createFIP(fiona, fip(fmt.Sprintf("race-%d", i), ""), false)
			} else {
				_, errs[i] = r.createLB(fiona, lb(fmt.Sprintf("race-%d", i), ""), false)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && !apierrors.IsConflict(err) && !apierrors.IsForbidden(err) {
			t.Errorf("race-%d: %v, want success, 409 or 403", i, err)
		}
	}
	var stored []runtime.Object
	seen := map[string]string{}
	fips, err := r1.Storage.FloatingIPs.Main.List(asIn(fiona, "dev"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range fips.(*tenant.FloatingIPList).Items {
		f := &fips.(*tenant.FloatingIPList).Items[i]
		stored = append(stored, f)
		seen[f.Status.Address] += " " + f.Name
	}
	lbs, err := r1.Storage.LoadBalancers.Main.List(asIn(fiona, "dev"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range lbs.(*tenant.LoadBalancerList).Items {
		l := &lbs.(*tenant.LoadBalancerList).Items[i]
		stored = append(stored, l)
		seen[l.Spec.Address] += " " + l.Name
	}
	if n, m := len(fips.(*tenant.FloatingIPList).Items), len(lbs.(*tenant.LoadBalancerList).Items); n > 2 || m > 2 || n+m == 0 {
		t.Errorf("%d FloatingIPs and %d LoadBalancers stored, want at most 2 of each, and some", n, m)
	}
	if len(seen) != len(stored) {
		t.Errorf("addresses held %v: some twice", seen)
	}
	r1.expectClaims(t, stored...)
}

// TestPublicIPsInUseByFloatingIPsAndLoadBalancers: a Tenant does not give
// up, when its publicIPs.count is lowered, the public IPs its FloatingIPs
// (status.address), LoadBalancers (spec.address) and NAT gateways hold.
func TestPublicIPsInUseByFloatingIPsAndLoadBalancers(t *testing.T) {
	r, _ := setup(t)
	ips := r.tenant(t, "acme").Status.PublicIPs
	r.mustCreateFIP(t, alice, fip("f", ips[3]))
	r.mustCreateLB(t, alice, lb("l", ips[1]))
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
	wantStatus(t, "lowering publicIPs.count below what is held", err, 409,
		ips[3]+" (floatingips dev/f)", ips[1]+" (loadbalancers dev/l)")
	two, err := lower(2)
	if err != nil {
		t.Fatal(err)
	}
	if got := two.Status.PublicIPs; !slices.Equal(got, []string{ips[1], ips[3]}) {
		t.Errorf("public IPs after lowering to 2: %v, want the two held, %s and %s", got, ips[1], ips[3])
	}
	_, err = r.createFIP(alice, fip("g", ips[0]), false)
	wantInvalidAt(t, "an address the tenant gave up", err, "spec.address", "is not one of tenant acme's public IPs")
	r.expectClaims(t, r.getFIP(t, alice, "f"), r.getLB(t, alice, "l"))
}

// TestCountChangesTriedAgainAfterAStatusWrite: a change of
// publicIPs.count that the store tries again, because a status write came
// between its read and its write, keeps what its first try decided: a
// lowering drops what that try held (the update's own holds are not "in
// use"), a raise keeps the addresses that try took; no hold is left.
func TestCountChangesTriedAgainAfterAStatusWrite(t *testing.T) {
	r, _ := setup(t)
	ips := r.tenant(t, "five").Status.PublicIPs
	setCount := func(count int32, phase tenant.TenantPhase) (*tenant.Tenant, int) {
		t.Helper()
		tries := 0
		out, _, err := r.Storage.Tenants.Main.Update(as(admin), "five", rest.DefaultUpdatedObjectInfo(nil, func(ctx context.Context, _, old runtime.Object) (runtime.Object, error) {
			tries++
			if tries == 1 {
				// A status write after the store read the Tenant: this
				// try's write finds the Tenant changed, and the store
				// tries again on the new version.
				_, _, err := r.Storage.Tenants.StatusStore.Update(as(admin), "five", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, cur runtime.Object) (runtime.Object, error) {
					tn := cur.(*tenant.Tenant).DeepCopy()
					tn.Status.Phase = phase
					return tn, nil
				}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
				if err != nil {
					return nil, err
				}
			}
			tn := old.(*tenant.Tenant).DeepCopy()
			tn.Spec.PublicIPs.Count = count
			return tn, nil
		}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("setting publicIPs.count to %d over a status write: %v", count, err)
		}
		if got := r.tenant(t, "five").Status.Phase; got != phase {
			t.Errorf("status.phase %q, want %q: the status write was lost", got, phase)
		}
		return out.(*tenant.Tenant), tries
	}

	lowered, tries := setCount(2, "Provisioning")
	if tries < 2 {
		t.Fatalf("the store tried %d time(s): the status write did not make it try again", tries)
	}
	if got := lowered.Status.PublicIPs; !slices.Equal(got, ips[:2]) {
		t.Errorf("public IPs after lowering to 2: %v, want the first two of %v", got, ips)
	}
	r.expectClaims(t) // no hold left behind

	raised, tries := setCount(4, "Pending")
	if tries < 2 {
		t.Fatalf("the store tried %d time(s): the status write did not make it try again", tries)
	}
	if got := raised.Status.PublicIPs; len(got) != 4 || !slices.Equal(got[:2], ips[:2]) {
		t.Errorf("public IPs after raising to 4: %v, want 4 starting with %v", got, ips[:2])
	}
	if got := r.tenant(t, "five").Status.PublicIPs; !slices.Equal(got, raised.Status.PublicIPs) {
		t.Errorf("stored public IPs %v, the update answered %v", got, raised.Status.PublicIPs)
	}
	// What the raise took is the Tenant's: a FloatingIP may use each.
	for i, ip := range raised.Status.PublicIPs[2:] {
		r.mustCreateFIP(t, fiona, fip(fmt.Sprintf("f%d", i), ip))
	}
}

// TestSweeperReclaimsUnrecordedClaims: a FloatingIP's or LoadBalancer's
// claim that no object records (what a crash between claiming and storing
// leaves) is reclaimed once old enough; recorded claims stay.
func TestSweeperReclaimsUnrecordedClaims(t *testing.T) {
	r, _ := setup(t)
	ctx := context.Background()
	acme := r.tenant(t, "acme")
	ips := acme.Status.PublicIPs
	f := r.mustCreateFIP(t, alice, fip("f", ""))
	l := r.mustCreateLB(t, alice, lb("l", ""))
	pool := ipam.Pool{Name: "acme", CIDRs: []netip.Prefix{publicSpace}}
	claim := func(addr string, use string, uid types.UID, ref string) {
		t.Helper()
		owner := ipam.Owner{Tenant: "acme", TenantUID: string(acme.UID), Purpose: claims.Purpose(use, uid), Ref: ref}
		if err := r.TenantSpace.ClaimAddress(ctx, pool, netip.MustParseAddr(addr), owner); err != nil {
			t.Fatal(err)
		}
	}
	claim(ips[2], claims.UseFloatingIP, "crashed-uid", "floatingips dev/crashed") // no such FloatingIP
	claim(ips[3], claims.UseLoadBalancer, "old-uid", "loadbalancers dev/l")       // a LoadBalancer l, another UID
	claim("203.0.113.200", claims.UseFloatingIP, f.UID, "floatingips dev/f")      // f does not record it

	n, err := ipam.SweepUnused(ctx, r.TenantSpace, r.IPAM.Keep(r.TenantSpace), ipam.MinAge(time.Hour))
	if err != nil || n != 0 {
		t.Errorf("sweep of young claims released %d: %v", n, err)
	}
	n, err = ipam.SweepUnused(ctx, r.TenantSpace, r.IPAM.Keep(r.TenantSpace), ipam.MinAge(0))
	if err != nil || n != 3 {
		t.Errorf("sweep released %d claims: %v, want 3", n, err)
	}
	r.expectClaims(t, f, l)
}

// TestStoredBeforeClaiming: FloatingIPs and LoadBalancers stored before
// the registry claimed their addresses (an upgrade) keep them: what they
// name counts as taken, Reclaim claims what they record, and their next
// update gives an address to those that hold none.
func TestStoredBeforeClaiming(t *testing.T) {
	r, url := setup(t)
	ctx := context.Background()
	ips := r.tenant(t, "acme").Status.PublicIPs
	legacy := newReplica(t, url, false)
	oldLB, err := legacy.createLB(alice, lb("old", ips[2]), false)
	if err != nil {
		t.Fatal(err)
	}
	bareLB, err := legacy.createLB(alice, lb("bare", ""), false)
	if err != nil {
		t.Fatal(err)
	}
	oldFIP, err := legacy.createFIP(alice, fip("old", ips[3]), false)
	if err != nil {
		t.Fatal(err)
	}
	if oldFIP.Status.Address != "" || bareLB.Spec.Address != "" {
		t.Fatalf("stored without IPAM: %+v %+v", oldFIP, bareLB)
	}
	r.expectClaims(t)

	// What they name is taken, though nobody claims it yet.
	_, err = r.createFIP(alice, fip("new", ips[3]), false)
	wantStatus(t, "an address an old FloatingIP names", err, 409, fmt.Sprintf("address %s is in use by floatingips dev/old", ips[3]))
	_, err = r.createLB(alice, lb("new", ips[2]), false)
	wantStatus(t, "an address an old LoadBalancer names", err, 409, fmt.Sprintf("address %s is in use by loadbalancers dev/old", ips[2]))
	newFIP := r.mustCreateFIP(t, alice, fip("new", ""))
	if newFIP.Status.Address != ips[0] {
		t.Errorf("new FloatingIP holds %s, want %s", newFIP.Status.Address, ips[0])
	}

	// The upkeep's pass claims what is recorded: the old LoadBalancer's
	// spec.address, from what its sweep of the keyspace left (it releases
	// nothing: every allocation is recorded, and younger than the sweep's
	// minimum age). It reads the watch cache as it is (a later pass sees
	// what it missed).
	registrytest.WaitCached(t, r.Storage.LoadBalancers.Store, oldLB.UID)
	released, n, err := r.IPAM.Pass(ctx)
	if err != nil || n != 1 || released != 0 {
		t.Errorf("the pass released %d and claimed %d (%v), want 0 and 1", released, n, err)
	}
	r.expectClaims(t, newFIP, oldLB)
	// Their next update: the old FloatingIP holds the address it asks
	// for (not in use by itself), the bare LoadBalancer gets the lowest free.
	oldFIP, err = r.updateFIP(alice, "old", func(f *tenant.FloatingIP) { f.Labels["app"] = "ssh" }, false)
	if err != nil || oldFIP.Status.Address != ips[3] {
		t.Errorf("update of an old FloatingIP: %v %+v, want it to hold %s", err, oldFIP, ips[3])
	}
	out, _, err := r.Storage.LoadBalancers.Main.Update(asIn(alice, "dev"), "bare", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		l := old.(*tenant.LoadBalancer).DeepCopy()
		l.Spec.Ports[0].Port = 8080
		return l, nil
	}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil || out.(*tenant.LoadBalancer).Spec.Address != ips[1] {
		t.Fatalf("update of a LoadBalancer without address: %v %+v, want spec.address %s", err, out, ips[1])
	}
	bareLB = out.(*tenant.LoadBalancer)
	r.expectClaims(t, newFIP, oldLB, oldFIP, bareLB)
	if n, err := r.IPAM.Reclaim(ctx); n != 0 || err != nil {
		t.Errorf("a second reclaim claimed %d (%v), want nothing left", n, err)
	}
}

// TestCreateThroughUpdate: a create by server-side apply (an update that
// creates) claims like a create, and a loser of two such creates of one
// name gives its claim and its quota charge back. Like ResourceQuota
// admission, every racer is charged before the store learns the name is
// taken, so with 3 units left a fourth racer in flight at once may be
// refused by the quota (403) although only one of them will exist.
func TestCreateThroughUpdate(t *testing.T) {
	r1, url := setup(t)
	r2 := newReplica(t, url, true)
	ips := r1.tenant(t, "acme").Status.PublicIPs
	apply := func(r *replica, f *tenant.FloatingIP) (*tenant.FloatingIP, error) {
		out, _, err := r.Storage.FloatingIPs.Main.Update(asIn(alice, "dev"), f.Name, rest.DefaultUpdatedObjectInfo(f), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, true, &metav1.UpdateOptions{})
		if err != nil {
			return nil, err
		}
		return out.(*tenant.FloatingIP), nil
	}
	a, err := apply(r1, fip("a", ""))
	if err != nil || a.Status.Address != ips[0] {
		t.Fatalf("apply of a new FloatingIP: %v %+v, want it to hold %s", err, a, ips[0])
	}
	r1.expectClaims(t, a)
	for round := range 5 {
		name := fmt.Sprintf("race-%d", round)
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			r := []*replica{r1, r2}[i%2]
			wg.Go(func() { _, errs[i] = apply(r, fip(name, "")) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil && !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) && !isQuotaRefusal(err) {
				t.Errorf("round %d, apply %d: %v", round, i, err)
			}
		}
		r1.expectClaims(t, a, r1.getFIP(t, alice, name))
		if used := r1.tenant(t, "acme").Status.Usage.FloatingIPs; used != 2 {
			t.Errorf("round %d: usage.floatingIPs %d after the race, want 2 (the losers' charges given back)", round, used)
		}
		if err := r1.deleteFIP(alice, name); err != nil {
			t.Fatal(err)
		}
	}
	r1.expectClaims(t, a)
}

func (r *replica) getLB(t *testing.T, u user.Info, name string) *tenant.LoadBalancer {
	t.Helper()
	out, err := r.Storage.LoadBalancers.Main.Get(asIn(u, "dev"), name, &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out.(*tenant.LoadBalancer)
}

// isQuotaRefusal tells the 403 of a full quota from other errors.
func isQuotaRefusal(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota: floatingIPs")
}
