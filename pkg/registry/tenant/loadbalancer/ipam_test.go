package loadbalancer_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
	admin, alice, bob = registrytest.Admin, registrytest.Alice, registrytest.Bob
	as, asIn          = registrytest.As, registrytest.AsIn
)

// publicSpace is the PublicIPs pool of the tests.
var publicSpace = netip.MustParsePrefix("203.0.113.0/24")

// registry is the storage of one tenant-apiserver with IPAM.
type registry struct{ *registrytest.Replica }

func int32p(i int32) *int32 { return &i }

// setup starts etcd and the storage with IPAM, the demo pools and tenants
// acme (alice, 4 public IPs) and globex (bob, 2), each with Network
// default and Namespace dev.
func setup(t *testing.T) *registry {
	t.Helper()
	url := registrytest.StartEtcd(t)
	r := &registry{registrytest.NewReplica(t, url, true)}

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
		name   string
		member user.Info
		ips    int32
	}{{"acme", alice, 4}, {"globex", bob, 2}} {
		obj := &tenant.Tenant{
			ObjectMeta: metav1.ObjectMeta{Name: tn.name},
			Spec: tenant.TenantSpec{
				Members:   tenant.TenantMembers{Users: []string{tn.member.GetName()}},
				Network:   tenant.TenantNetwork{PrefixLength: int32p(16)},
				PublicIPs: tenant.TenantPublicIPs{Count: tn.ips},
				Quota:     tenant.TenantQuota{Namespaces: int32p(10), Networks: int32p(64), FloatingIPs: int32p(4), LoadBalancers: int32p(4)},
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
	return r
}

func (r *registry) publicIPs(t *testing.T, name string) []string {
	t.Helper()
	obj, err := r.Storage.Tenants.Store.Get(genericapirequest.WithNamespace(context.Background(), ""), name, &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*tenant.Tenant).Status.PublicIPs
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

func (r *registry) create(u user.Info, l *tenant.LoadBalancer, dryRun bool) (*tenant.LoadBalancer, error) {
	opts := &metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	out, err := r.Storage.LoadBalancers.Main.Create(asIn(u, "dev"), l, rest.ValidateAllObjectFunc, opts)
	if err != nil {
		return nil, err
	}
	return out.(*tenant.LoadBalancer), nil
}

func (r *registry) mustCreate(t *testing.T, u user.Info, l *tenant.LoadBalancer) *tenant.LoadBalancer {
	t.Helper()
	out, err := r.create(u, l, false)
	if err != nil {
		t.Fatalf("creating LoadBalancer %s as %s: %v", l.Name, u.GetName(), err)
	}
	return out
}

func (r *registry) update(u user.Info, name string, change func(*tenant.LoadBalancer), dryRun bool) (*tenant.LoadBalancer, error) {
	opts := &metav1.UpdateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	out, _, err := r.Storage.LoadBalancers.Main.Update(asIn(u, "dev"), name, rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		l := old.(*tenant.LoadBalancer).DeepCopy()
		change(l)
		return l, nil
	}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, opts)
	if err != nil {
		return nil, err
	}
	return out.(*tenant.LoadBalancer), nil
}

func (r *registry) delete(u user.Info, name string) error {
	_, _, err := r.Storage.LoadBalancers.Main.Delete(asIn(u, "dev"), name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
	return err
}

// expectClaims checks that the tenant space holds exactly the
// claims of public IPs that the LoadBalancers lbs record in spec.address.
func (r *registry) expectClaims(t *testing.T, lbs ...*tenant.LoadBalancer) {
	t.Helper()
	allocs, err := r.TenantSpace.ListAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ipam.Owner{}
	for _, a := range allocs {
		if publicSpace.Overlaps(a.Block) {
			got[a.Block.Addr().String()] = a.Owner
		}
	}
	for _, l := range lbs {
		purpose, ref := claims.Purpose(claims.UseLoadBalancer, l.UID), "loadbalancers "+l.Namespace+"/"+l.Name
		if o, ok := got[l.Spec.Address]; !ok || o.Purpose != purpose || o.Ref != ref {
			t.Errorf("claim of %s: %+v (present %v), want purpose %s, ref %s", l.Spec.Address, o, ok, purpose, ref)
		}
		delete(got, l.Spec.Address)
	}
	for addr, o := range got {
		t.Errorf("claim of %s by %+v: no LoadBalancer records it", addr, o)
	}
}

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

// TestLoadBalancerAddresses: a LoadBalancer's spec.address is the address
// it asks for, else, like a Service's clusterIP, the lowest free public IP
// of its tenant; SPEC 3.4's errors otherwise.
func TestLoadBalancerAddresses(t *testing.T) {
	r := setup(t)
	ips := r.publicIPs(t, "acme")
	web := r.mustCreate(t, alice, lb("web", ""))
	if web.Spec.Address != ips[0] || web.Status.Address != "" {
		t.Errorf("LoadBalancer without an address: spec.address %q status.address %q, want %s and nothing (MetalLB's to report)", web.Spec.Address, web.Status.Address, ips[0])
	}
	api := r.mustCreate(t, alice, lb("api", ips[2]))
	if api.Spec.Address != ips[2] {
		t.Errorf("LoadBalancer asking for %s got %s", ips[2], api.Spec.Address)
	}
	_, err := r.create(alice, lb("dup", ips[0]), false)
	wantStatus(t, "an address in use", err, 409, fmt.Sprintf("address %s is in use by loadbalancers dev/web", ips[0]))
	_, err = r.create(alice, lb("foreign", r.publicIPs(t, "globex")[0]), false)
	wantInvalidAt(t, "another tenant's address", err, "spec.address", "is not one of tenant acme's public IPs")
	_, err = r.create(alice, lb("foreign", "203.0.113.254"), false)
	wantInvalidAt(t, "an address of nobody's", err, "spec.address", "is not one of tenant acme's public IPs")

	dry, err := r.create(alice, lb("dry", ""), true)
	if err != nil || dry.Spec.Address != ips[1] {
		t.Errorf("dry run: %v %+v, want spec.address %s", err, dry, ips[1])
	}
	third := r.mustCreate(t, alice, lb("third", ""))
	fourth := r.mustCreate(t, alice, lb("fourth", ""))
	if third.Spec.Address != ips[1] || fourth.Spec.Address != ips[3] {
		t.Errorf("third and fourth got %s and %s, want %s and %s", third.Spec.Address, fourth.Spec.Address, ips[1], ips[3])
	}
	// Quota (4) first, then no free address.
	_, err = r.create(alice, lb("fifth", ""), false)
	wantStatus(t, "over quota", err, 403, "exceeded quota: loadBalancers, requested 1, used 4, limited 4")
	if err := r.delete(alice, "fourth"); err != nil {
		t.Fatal(err)
	}
	fip := &tenant.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: "holder"}}
	if _, err := r.Storage.FloatingIPs.Main.Create(asIn(alice, "dev"), fip, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = r.create(alice, lb("fifth", ""), false)
	wantStatus(t, "no free address", err, 409, "no free public IP in tenant acme: all 4 are in use")
	_, err = r.create(alice, lb("fifth", ips[3]), false)
	wantStatus(t, "the address a FloatingIP took", err, 409, fmt.Sprintf("address %s is in use by floatingips dev/holder", ips[3]))
	if _, _, err := r.Storage.FloatingIPs.Main.Delete(asIn(alice, "dev"), "holder", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r.expectClaims(t, web, api, third)
}

// TestLoadBalancerAddressIsKept: spec.address never changes once set; an
// update that omits it keeps it, and the syncer writes status.address
// (MetalLB's) through the status subresource.
func TestLoadBalancerAddressIsKept(t *testing.T) {
	r := setup(t)
	ips := r.publicIPs(t, "acme")
	web := r.mustCreate(t, alice, lb("web", ""))

	got, err := r.update(alice, "web", func(l *tenant.LoadBalancer) {
		l.Spec.Selector = map[string]string{"app": "web2"}
		l.Spec.Ports[0].Port = 443
	}, false)
	if err != nil || got.Spec.Address != web.Spec.Address || got.Generation != 2 {
		t.Errorf("changing selector and ports: %v %+v, want address %s kept at generation 2", err, got, web.Spec.Address)
	}
	// A replace of the manifest, without the address the server chose.
	got, err = r.update(alice, "web", func(l *tenant.LoadBalancer) {
		l.ObjectMeta = metav1.ObjectMeta{Name: l.Name, Namespace: l.Namespace}
		l.Spec.Address = ""
	}, false)
	if err != nil || got.Spec.Address != web.Spec.Address {
		t.Errorf("a replace omitting the address: %v %+v, want %s kept", err, got, web.Spec.Address)
	}
	_, err = r.update(alice, "web", func(l *tenant.LoadBalancer) { l.Spec.Address = ips[2] }, false)
	wantInvalidAt(t, "changing the address", err, "spec.address", "field is immutable")
	_, err = r.update(alice, "web", func(l *tenant.LoadBalancer) { l.Spec.Address = ips[2] }, true)
	wantInvalidAt(t, "changing the address in a dry run", err, "spec.address", "field is immutable")

	// The syncer reports MetalLB's address.
	ctx := tenancy.WithTenant(genericapirequest.WithNamespace(context.Background(), "dev"), "acme")
	out, _, err := r.Storage.LoadBalancers.StatusStore.Update(ctx, "web", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		l := old.(*tenant.LoadBalancer).DeepCopy()
		l.Status.Address, l.Status.ObservedGeneration = l.Spec.Address, l.Generation
		l.Spec.Address = ips[3]
		return l, nil
	}), nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if got := out.(*tenant.LoadBalancer); err != nil || got.Status.Address != web.Spec.Address || got.Spec.Address != web.Spec.Address {
		t.Errorf("a status write: %v %+v, want status.address %s written and the spec kept", err, got, web.Spec.Address)
	}
	// ... and only the syncer: not through the main resource.
	got, err = r.update(alice, "web", func(l *tenant.LoadBalancer) { l.Status.Address = ips[3] }, false)
	if err != nil || got.Status.Address != web.Spec.Address {
		t.Errorf("a write of status.address through the main resource: %v %+v", err, got)
	}
	r.expectClaims(t, got)
}

// TestLoadBalancerDeleteReleases: a delete gives the address back; a
// LoadBalancer created again may ask for it; failed creates leave nothing.
func TestLoadBalancerDeleteReleases(t *testing.T) {
	r := setup(t)
	ips := r.publicIPs(t, "acme")
	web := r.mustCreate(t, alice, lb("web", ips[1]))
	_, err := r.create(alice, lb("web", ips[2]), false)
	wantStatus(t, "a second web", err, 409, "already exists")
	bad := lb("bad", ips[2])
	bad.Spec.Selector = nil
	_, err = r.create(alice, bad, false)
	wantInvalidAt(t, "a LoadBalancer without selector", err, "spec.selector")
	sneaky := lb("sneaky", ips[2])
	sneaky.Labels = map[string]string{tenancy.TenantLabel: "globex"}
	_, err = r.create(alice, sneaky, false)
	wantInvalidAt(t, "a LoadBalancer labelled with another tenant", err, "metadata.labels[tenant.io/tenant]")
	r.expectClaims(t, web)
	if err := r.delete(alice, "web"); err != nil {
		t.Fatal(err)
	}
	r.expectClaims(t)
	again := r.mustCreate(t, alice, lb("web", ips[1]))
	r.expectClaims(t, again)
}
