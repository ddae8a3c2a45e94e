package kindstore_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apiserver"
	"tenant.io/tenant-apiserver/pkg/registry/registrytest"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/floatingip"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/namespace"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/network"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

var (
	alice   = &user.DefaultInfo{Name: "alice", Groups: []string{"tenant.io:acme", "system:authenticated"}}
	bob     = &user.DefaultInfo{Name: "bob", Groups: []string{"tenant.io:globex", "system:authenticated"}}
	carol   = &user.DefaultInfo{Name: "carol", Groups: []string{"system:authenticated", "developers"}}
	mallory = &user.DefaultInfo{Name: "mallory", Groups: []string{"tenant.io:acme", "tenant.io:globex"}}
)

// tenantOf is the tenant each test user acts as.
var tenantOf = map[string]string{"alice": "acme", "bob": "globex"}

// reqCtx is the context of a request of u in namespace ns ("" for none, as
// kubectl -A and cluster-scoped kinds), as the server's handlers make it.
func reqCtx(u user.Info, ns string) context.Context {
	return genericapirequest.WithUser(genericapirequest.WithNamespace(genericapirequest.NewContext(), ns), u)
}

// registry is the storage of the kinds the tests use, on one etcd.
type registry struct {
	namespaces, networks, floatingips *kindstore.Storage
}

func newRegistry(t *testing.T, cached bool) *registry {
	t.Helper()
	getter := registrytest.RESTOptionsGetter(registrytest.StartEtcd(t), cached)

	deps := kindstore.Deps{Resolver: tenancy.GroupResolver{}, Storages: &kindstore.Storages{}}
	r := &registry{}
	var err error
	if r.namespaces, err = namespace.NewStorage(apiserver.Scheme, getter, deps); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.namespaces.Main.Destroy)
	deps.Storages.Namespaces = r.namespaces
	// Each kind on its own: no Network is in use by a Namespace, and no
	// Namespace needs an existing Network.
	alone := deps
	alone.Storages = &kindstore.Storages{}
	if r.networks, err = network.NewStorage(apiserver.Scheme, getter, alone); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.networks.Main.Destroy)
	if r.floatingips, err = floatingip.NewStorage(apiserver.Scheme, getter, deps); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.floatingips.Main.Destroy)

	// Reads at resource version 0 go to etcd until the watch cache is
	// ready; wait, so that the tests read from the cache.
	for _, s := range []*kindstore.Storage{r.namespaces, r.networks, r.floatingips} {
		err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
			return s.Store.Storage.Storage.ReadinessCheck() == nil, nil
		})
		if err != nil {
			t.Fatalf("storage of %s not ready: %v", s.Store.DefaultQualifiedResource, err)
		}
	}
	return r
}

func newNetwork(name string) *tenant.Network {
	return &tenant.Network{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       tenant.NetworkSpec{Topology: tenant.NetworkTopologyLayer2, ServiceNetwork: tenant.ServiceNetworkPrivate},
	}
}

func newFloatingIP(name string) *tenant.FloatingIP {
	return &tenant.FloatingIP{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       tenant.FloatingIPSpec{Ports: []tenant.FloatingIPPort{{Port: 443, Protocol: tenant.ProtocolTCP}}},
	}
}

func create(ctx context.Context, s *kindstore.Storage, obj runtime.Object) (runtime.Object, error) {
	return s.Main.Create(ctx, obj, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
}

func mustCreate(t *testing.T, ctx context.Context, s *kindstore.Storage, obj runtime.Object) metav1.Object {
	t.Helper()
	out, err := create(ctx, s, obj)
	if err != nil {
		t.Fatalf("create %s as %s: %v", objectName(obj), userName(ctx), err)
	}
	return out.(metav1.Object)
}

func list(t *testing.T, ctx context.Context, s *kindstore.Storage, opts *metainternalversion.ListOptions) (runtime.Object, []metav1.Object) {
	t.Helper()
	out, err := s.Main.List(ctx, opts)
	if err != nil {
		t.Fatalf("list as %s: %v", userName(ctx), err)
	}
	items, err := meta.ExtractList(out)
	if err != nil {
		t.Fatal(err)
	}
	objs := make([]metav1.Object, 0, len(items))
	for _, item := range items {
		objs = append(objs, item.(metav1.Object))
	}
	return out, objs
}

func objectName(obj runtime.Object) string {
	if o, err := meta.Accessor(obj); err == nil {
		return o.GetNamespace() + "/" + o.GetName()
	}
	return "?"
}

func userName(ctx context.Context) string {
	if u, ok := genericapirequest.UserFrom(ctx); ok {
		return u.GetName()
	}
	return "<nobody>"
}

// names returns the sorted "namespace/name"s of objs, checking that each
// is labelled with wantTenant.
func names(t *testing.T, objs []metav1.Object, wantTenant string) []string {
	t.Helper()
	var out []string
	for _, o := range objs {
		if got := o.GetLabels()[tenancy.TenantLabel]; got != wantTenant {
			t.Errorf("%s/%s has tenant label %q, want %q", o.GetNamespace(), o.GetName(), got, wantTenant)
		}
		out = append(out, o.GetNamespace()+"/"+o.GetName())
	}
	sort.Strings(out)
	return out
}

func expectNames(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func expectStatus(t *testing.T, what string, err error, is func(error) bool, contains ...string) {
	t.Helper()
	if !is(err) {
		t.Errorf("%s: error = %v (reason %q), want another reason", what, err, apierrors.ReasonForError(err))
		return
	}
	for _, s := range contains {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: error %q does not mention %q", what, err.Error(), s)
		}
	}
}

// TestTenantIsolation drives the storage of tenant-owned kinds as four
// users would: alice of tenant acme, bob of globex, carol of no tenant and
// mallory of both. With and without the watch cache, because the cache
// files objects by their tenant label and must agree with the store's keys.
func TestTenantIsolation(t *testing.T) {
	for _, cached := range []bool{false, true} {
		name := "etcd"
		if cached {
			name = "watch cache"
		}
		t.Run(name, func(t *testing.T) {
			r := newRegistry(t, cached)
			for _, u := range []user.Info{alice, bob} {
				mustCreate(t, reqCtx(u, ""), r.namespaces, &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Spec: tenant.NamespaceSpec{Network: "default"}})
			}
			mustCreate(t, reqCtx(alice, ""), r.namespaces, &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "qa"}, Spec: tenant.NamespaceSpec{Network: "default"}})

			t.Run("same name in two tenants", func(t *testing.T) { testSameName(t, r) })
			t.Run("reads", func(t *testing.T) { testReads(t, r) })
			t.Run("no tenant", func(t *testing.T) { testNoTenant(t, r) })
			t.Run("several tenants", func(t *testing.T) { testSeveralTenants(t, r) })
			t.Run("writes", func(t *testing.T) { testWrites(t, r) })
			t.Run("continue token", func(t *testing.T) { testContinue(t, r) })
			t.Run("watch", func(t *testing.T) { testWatch(t, r) })
			t.Run("floating IPs", func(t *testing.T) { testFloatingIPs(t, r) })
			t.Run("delete collection", func(t *testing.T) { testDeleteCollection(t, r) })
		})
	}
}

func testSameName(t *testing.T, r *registry) {
	uids := map[string]bool{}
	for _, u := range []user.Info{alice, bob} {
		out := mustCreate(t, reqCtx(u, ""), r.networks, newNetwork("default"))
		if got := out.GetLabels()[tenancy.TenantLabel]; got != tenantOf[u.GetName()] {
			t.Errorf("network default of %s has tenant label %q, want %q", u.GetName(), got, tenantOf[u.GetName()])
		}
		if out.GetGeneration() != 1 {
			t.Errorf("generation = %d, want 1", out.GetGeneration())
		}
		uids[string(out.GetUID())] = true
	}
	if len(uids) != 2 {
		t.Errorf("the two networks named default share a UID: %v", uids)
	}
	// Creating it again in the same tenant conflicts.
	_, err := create(reqCtx(alice, ""), r.networks, newNetwork("default"))
	expectStatus(t, "second create of default by alice", err, apierrors.IsAlreadyExists)

	mustCreate(t, reqCtx(alice, ""), r.networks, newNetwork("alpha"))
}

func testReads(t *testing.T, r *registry) {
	// A consistent read first, then a read at its resource version, which
	// the watch cache serves once it has caught up.
	var rv string
	for _, u := range []user.Info{alice, bob} {
		obj, err := r.networks.Main.Get(reqCtx(u, ""), "default", &metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get default as %s: %v", u.GetName(), err)
		}
		rv = obj.(*tenant.Network).ResourceVersion
		obj, err = r.networks.Main.Get(reqCtx(u, ""), "default", &metav1.GetOptions{ResourceVersion: rv})
		if err != nil {
			t.Fatalf("get default as %s at rv %s: %v", u.GetName(), rv, err)
		}
		if got := obj.(*tenant.Network).Labels[tenancy.TenantLabel]; got != tenantOf[u.GetName()] {
			t.Errorf("%s reads network default of tenant %q", u.GetName(), got)
		}
	}

	out, aliceNets := list(t, reqCtx(alice, ""), r.networks, &metainternalversion.ListOptions{})
	expectNames(t, "alice's networks", names(t, aliceNets, "acme"), "/alpha", "/default")
	listRV := out.(*tenant.NetworkList).ResourceVersion
	_, bobNets := list(t, reqCtx(bob, ""), r.networks, &metainternalversion.ListOptions{})
	expectNames(t, "bob's networks", names(t, bobNets, "globex"), "/default")
	notOlder := &metainternalversion.ListOptions{ResourceVersion: listRV, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
	_, bobNets = list(t, reqCtx(bob, ""), r.networks, notOlder)
	expectNames(t, "bob's networks not older than "+listRV, names(t, bobNets, "globex"), "/default")
	_, aliceNets = list(t, reqCtx(alice, ""), r.networks, notOlder)
	expectNames(t, "alice's networks not older than "+listRV, names(t, aliceNets, "acme"), "/alpha", "/default")

	for _, rv := range []string{"", listRV} {
		_, err := r.networks.Main.Get(reqCtx(bob, ""), "alpha", &metav1.GetOptions{ResourceVersion: rv})
		expectStatus(t, "bob gets alice's alpha (rv "+rv+")", err, apierrors.IsNotFound)
		_, err = r.networks.Status.Get(reqCtx(bob, ""), "alpha", &metav1.GetOptions{ResourceVersion: rv})
		expectStatus(t, "bob gets the status of alice's alpha (rv "+rv+")", err, apierrors.IsNotFound)
	}
	// A field selector on the name reads one key, in the caller's range.
	sel := &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "alpha")}
	_, bobNets = list(t, reqCtx(bob, ""), r.networks, sel)
	expectNames(t, "bob's networks named alpha", names(t, bobNets, "globex"))
}

func testNoTenant(t *testing.T, r *registry) {
	ctx := reqCtx(carol, "")
	_, nets := list(t, ctx, r.networks, &metainternalversion.ListOptions{})
	expectNames(t, "carol's networks", names(t, nets, ""))
	_, err := r.networks.Main.Get(ctx, "default", &metav1.GetOptions{})
	expectStatus(t, "carol gets default", err, apierrors.IsNotFound)

	_, err = create(ctx, r.networks, newNetwork("carols"))
	expectStatus(t, "carol creates a network", err, apierrors.IsForbidden, "carol", "not a member of any tenant")
	// Deletes run in carol's empty view: there is nothing to delete.
	_, _, err = r.networks.Main.Delete(ctx, "default", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
	expectStatus(t, "carol deletes default", err, apierrors.IsNotFound)
	_, _, err = r.networks.Main.Update(ctx, "default", rest.DefaultUpdatedObjectInfo(newNetwork("default")),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	expectStatus(t, "carol updates default", err, apierrors.IsForbidden, "carol")
}

func testSeveralTenants(t *testing.T, r *registry) {
	ctx := reqCtx(mallory, "")
	check := func(verb string, err error) {
		t.Helper()
		expectStatus(t, "mallory "+verb, err, apierrors.IsForbidden, "mallory", "acme", "globex")
	}
	_, err := create(ctx, r.networks, newNetwork("mallorys"))
	check("creates", err)
	_, err = r.networks.Main.Get(ctx, "default", &metav1.GetOptions{})
	check("gets", err)
	_, err = r.networks.Main.List(ctx, &metainternalversion.ListOptions{})
	check("lists", err)
	_, err = r.networks.Main.Watch(ctx, &metainternalversion.ListOptions{})
	check("watches", err)
	_, _, err = r.networks.Main.Update(ctx, "default", rest.DefaultUpdatedObjectInfo(newNetwork("default")),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	check("updates", err)
	_, _, err = r.networks.Main.Delete(ctx, "default", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
	check("deletes", err)
	_, err = r.networks.Main.DeleteCollection(ctx, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}, &metainternalversion.ListOptions{})
	check("deletes the collection", err)
	_, err = r.networks.Status.Get(ctx, "default", &metav1.GetOptions{})
	check("gets the status", err)
	_, err = r.floatingips.Main.List(reqCtx(mallory, "dev"), &metainternalversion.ListOptions{})
	check("lists floating IPs", err)

	// Both tenants' objects are untouched.
	for _, u := range []user.Info{alice, bob} {
		if _, err := r.networks.Main.Get(reqCtx(u, ""), "default", &metav1.GetOptions{}); err != nil {
			t.Errorf("get default as %s: %v", u.GetName(), err)
		}
	}
}

func testWrites(t *testing.T, r *registry) {
	_, _, err := r.networks.Main.Delete(reqCtx(bob, ""), "alpha", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
	expectStatus(t, "bob deletes alice's alpha", err, apierrors.IsNotFound)
	if _, err := r.networks.Main.Get(reqCtx(alice, ""), "alpha", &metav1.GetOptions{}); err != nil {
		t.Errorf("alpha after bob's delete: %v", err)
	}

	_, _, err = r.networks.Main.Update(reqCtx(bob, ""), "alpha", rest.DefaultUpdatedObjectInfo(newNetwork("alpha")),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	expectStatus(t, "bob updates alice's alpha", err, apierrors.IsNotFound)

	// bob changes his own default: generation 2, alice's stays at 1.
	obj, err := r.networks.Main.Get(reqCtx(bob, ""), "default", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bobNet := obj.(*tenant.Network).DeepCopy()
	bobNet.Spec.NATGateway = &tenant.NATGateway{Enabled: true}
	bobNet.Labels = nil // dropping the label keeps it
	out, _, err := r.networks.Main.Update(reqCtx(bob, ""), "default", rest.DefaultUpdatedObjectInfo(bobNet),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("bob updates default: %v", err)
	}
	if n := out.(*tenant.Network); n.Generation != 2 || n.Labels[tenancy.TenantLabel] != "globex" {
		t.Errorf("bob's default after update: generation %d, labels %v; want 2 and tenant globex", n.Generation, n.Labels)
	}
	obj, err = r.networks.Main.Get(reqCtx(alice, ""), "default", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := obj.(*tenant.Network); n.Generation != 1 || n.Spec.NATGateway != nil {
		t.Errorf("alice's default changed with bob's: %+v", n)
	}

	// Nobody moves an object to another tenant by relabelling it.
	moved := obj.(*tenant.Network).DeepCopy()
	moved.Labels[tenancy.TenantLabel] = "globex"
	_, _, err = r.networks.Main.Update(reqCtx(alice, ""), "default", rest.DefaultUpdatedObjectInfo(moved),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	expectStatus(t, "alice relabels default to globex", err, apierrors.IsInvalid, "metadata.labels[tenant.io/tenant]")

	// Nor creates one in another tenant's name.
	foreign := newNetwork("foreign")
	foreign.Labels = map[string]string{tenancy.TenantLabel: "globex"}
	_, err = create(reqCtx(alice, ""), r.networks, foreign)
	expectStatus(t, "alice creates a network labelled globex", err, apierrors.IsInvalid, "metadata.labels[tenant.io/tenant]")
	_, err = r.networks.Main.Get(reqCtx(bob, ""), "foreign", &metav1.GetOptions{})
	expectStatus(t, "bob gets foreign", err, apierrors.IsNotFound)

	// The status subresource writes status only, in the caller's tenant.
	obj, err = r.networks.Main.Get(reqCtx(alice, ""), "alpha", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	withStatus := obj.(*tenant.Network).DeepCopy()
	withStatus.Status.HostNetwork = "acme-alpha"
	withStatus.Spec.NATGateway = &tenant.NATGateway{Enabled: true}
	_, _, err = r.networks.Status.Update(reqCtx(bob, ""), "alpha", rest.DefaultUpdatedObjectInfo(withStatus),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	expectStatus(t, "bob writes the status of alice's alpha", err, apierrors.IsNotFound)
	out, _, err = r.networks.Status.Update(reqCtx(alice, ""), "alpha", rest.DefaultUpdatedObjectInfo(withStatus),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("alice writes the status of alpha: %v", err)
	}
	if n := out.(*tenant.Network); n.Status.HostNetwork != "acme-alpha" || n.Spec.NATGateway != nil || n.Generation != 1 {
		t.Errorf("alpha after a status write: %+v; want the new status and the old spec", n)
	}
}

func testContinue(t *testing.T, r *registry) {
	for _, name := range []string{"n1", "n2", "n3"} {
		mustCreate(t, reqCtx(alice, ""), r.networks, newNetwork(name))
	}
	mustCreate(t, reqCtx(bob, ""), r.networks, newNetwork("zeta"))

	first, page := list(t, reqCtx(alice, ""), r.networks, &metainternalversion.ListOptions{Limit: 1})
	expectNames(t, "alice's first page", names(t, page, "acme"), "/alpha")
	token := first.(*tenant.NetworkList).Continue
	if token == "" {
		t.Fatal("alice's first page has no continue token")
	}

	// bob continues alice's list: he gets the rest of his own range, after
	// the key the token names, and nothing of alice's.
	_, bobPage := list(t, reqCtx(bob, ""), r.networks, &metainternalversion.ListOptions{Continue: token})
	expectNames(t, "bob's page from alice's token", names(t, bobPage, "globex"), "/default", "/zeta")
	_, bobPage = list(t, reqCtx(bob, ""), r.networks, &metainternalversion.ListOptions{Continue: token, Limit: 1})
	expectNames(t, "bob's limited page from alice's token", names(t, bobPage, "globex"), "/default")
	_, carolPage := list(t, reqCtx(carol, ""), r.networks, &metainternalversion.ListOptions{Continue: token})
	expectNames(t, "carol's page from alice's token", names(t, carolPage, ""))

	// alice herself gets her next items.
	_, next := list(t, reqCtx(alice, ""), r.networks, &metainternalversion.ListOptions{Continue: token, Limit: 2})
	expectNames(t, "alice's second page", names(t, next, "acme"), "/default", "/n1")
}

func testWatch(t *testing.T, r *registry) {
	startRV := func(u user.Info) string {
		out, _ := list(t, reqCtx(u, ""), r.networks, &metainternalversion.ListOptions{})
		return out.(*tenant.NetworkList).ResourceVersion
	}
	aliceW := openWatch(t, r.networks, reqCtx(alice, ""), startRV(alice))
	bobW := openWatch(t, r.networks, reqCtx(bob, ""), startRV(bob))
	carolW := openWatch(t, r.networks, reqCtx(carol, ""), startRV(carol))

	mustCreate(t, reqCtx(alice, ""), r.networks, newNetwork("w-a1"))
	mustCreate(t, reqCtx(bob, ""), r.networks, newNetwork("w-b1"))
	if _, _, err := r.networks.Main.Delete(reqCtx(alice, ""), "w-a1", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, reqCtx(bob, ""), r.networks, newNetwork("w-b2"))
	mustCreate(t, reqCtx(alice, ""), r.networks, newNetwork("w-a2"))

	expectEvents(t, "alice", aliceW, "acme", "ADDED w-a1", "DELETED w-a1", "ADDED w-a2")
	expectEvents(t, "bob", bobW, "globex", "ADDED w-b1", "ADDED w-b2")
	// Events reach every watcher at about the same time; carol's range has none.
	select {
	case ev, ok := <-carolW.ResultChan():
		if ok && ev.Type != watch.Bookmark {
			t.Errorf("carol sees %s %s", ev.Type, objectName(ev.Object))
		}
	case <-time.After(200 * time.Millisecond):
	}
}

// openWatch watches s from rv as ctx's caller, waiting for the watch cache
// to be ready.
func openWatch(t *testing.T, s *kindstore.Storage, ctx context.Context, rv string) watch.Interface {
	t.Helper()
	var w watch.Interface
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		var err error
		w, err = s.Main.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: rv, Watch: true})
		if apierrors.IsTooManyRequests(err) { // the watch cache is initializing
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("watch as %s: %v", userName(ctx), err)
	}
	t.Cleanup(w.Stop)
	return w
}

// expectEvents reads events from w until it has seen len(want), checking
// each against want and the tenant label.
func expectEvents(t *testing.T, who string, w watch.Interface, wantTenant string, want ...string) {
	t.Helper()
	var got []string
	timeout := time.After(wait.ForeverTestTimeout)
	for len(got) < len(want) {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("%s's watch ended after %q", who, got)
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			if ev.Type == watch.Error {
				t.Fatalf("%s's watch: %v", who, apierrors.FromObject(ev.Object))
			}
			o := ev.Object.(metav1.Object)
			if l := o.GetLabels()[tenancy.TenantLabel]; l != wantTenant {
				t.Errorf("%s sees %s %s of tenant %q", who, ev.Type, o.GetName(), l)
			}
			got = append(got, string(ev.Type)+" "+o.GetName())
		case <-timeout:
			t.Fatalf("%s's watch: got %q, want %q", who, got, want)
		}
	}
	expectNames(t, who+"'s events", got, want...)
}

func testFloatingIPs(t *testing.T, r *registry) {
	mustCreate(t, reqCtx(alice, "dev"), r.floatingips, newFloatingIP("web"))
	mustCreate(t, reqCtx(alice, "qa"), r.floatingips, newFloatingIP("api"))
	mustCreate(t, reqCtx(bob, "dev"), r.floatingips, newFloatingIP("db"))
	// The same name in the same virtual namespace of both tenants.
	for _, u := range []user.Info{alice, bob} {
		out := mustCreate(t, reqCtx(u, "dev"), r.floatingips, newFloatingIP("shared"))
		if out.GetNamespace() != "dev" || out.GetLabels()[tenancy.TenantLabel] != tenantOf[u.GetName()] {
			t.Errorf("%s's floating IP shared: namespace %q, labels %v", u.GetName(), out.GetNamespace(), out.GetLabels())
		}
	}

	_, fips := list(t, reqCtx(alice, "dev"), r.floatingips, &metainternalversion.ListOptions{})
	expectNames(t, "alice's floating IPs in dev", names(t, fips, "acme"), "dev/shared", "dev/web")
	_, fips = list(t, reqCtx(bob, "dev"), r.floatingips, &metainternalversion.ListOptions{})
	expectNames(t, "bob's floating IPs in dev", names(t, fips, "globex"), "dev/db", "dev/shared")
	_, fips = list(t, reqCtx(alice, ""), r.floatingips, &metainternalversion.ListOptions{})
	expectNames(t, "alice's floating IPs in all namespaces", names(t, fips, "acme"), "dev/shared", "dev/web", "qa/api")
	out, fips := list(t, reqCtx(bob, ""), r.floatingips, &metainternalversion.ListOptions{})
	expectNames(t, "bob's floating IPs in all namespaces", names(t, fips, "globex"), "dev/db", "dev/shared")
	notOlder := &metainternalversion.ListOptions{ResourceVersion: out.(*tenant.FloatingIPList).ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
	_, fips = list(t, reqCtx(bob, ""), r.floatingips, notOlder)
	expectNames(t, "bob's floating IPs in all namespaces, not older", names(t, fips, "globex"), "dev/db", "dev/shared")
	_, fips = list(t, reqCtx(alice, "dev"), r.floatingips, notOlder)
	expectNames(t, "alice's floating IPs in dev, not older", names(t, fips, "acme"), "dev/shared", "dev/web")
	_, fips = list(t, reqCtx(carol, ""), r.floatingips, &metainternalversion.ListOptions{})
	expectNames(t, "carol's floating IPs in all namespaces", names(t, fips, ""))

	_, err := r.floatingips.Main.Get(reqCtx(bob, "dev"), "web", &metav1.GetOptions{})
	expectStatus(t, "bob gets alice's dev/web", err, apierrors.IsNotFound)
	_, _, err = r.floatingips.Main.Delete(reqCtx(bob, "dev"), "web", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
	expectStatus(t, "bob deletes alice's dev/web", err, apierrors.IsNotFound)
	obj, err := r.floatingips.Main.Get(reqCtx(alice, "dev"), "web", &metav1.GetOptions{})
	if err != nil {
		t.Fatalf("alice gets dev/web: %v", err)
	}
	if got := obj.(*tenant.FloatingIP).Labels[tenancy.TenantLabel]; got != "acme" {
		t.Errorf("dev/web has tenant label %q", got)
	}

	// globex has no namespace qa: nothing may be read or written there.
	_, err = create(reqCtx(bob, "qa"), r.floatingips, newFloatingIP("sneaky"))
	expectStatus(t, "bob creates in qa", err, apierrors.IsNotFound, "qa")
	_, err = r.floatingips.Main.List(reqCtx(bob, "qa"), &metainternalversion.ListOptions{})
	expectStatus(t, "bob lists qa", err, apierrors.IsNotFound, "qa")
	_, err = r.floatingips.Main.Get(reqCtx(bob, "qa"), "api", &metav1.GetOptions{})
	expectStatus(t, "bob gets qa/api", err, apierrors.IsNotFound)
	_, err = r.floatingips.Main.List(reqCtx(carol, "dev"), &metainternalversion.ListOptions{})
	expectStatus(t, "carol lists dev", err, apierrors.IsNotFound)
}

func testDeleteCollection(t *testing.T, r *registry) {
	_, bobBefore := list(t, reqCtx(bob, ""), r.networks, &metainternalversion.ListOptions{})
	if _, err := r.networks.Main.DeleteCollection(reqCtx(alice, ""), rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}, &metainternalversion.ListOptions{}); err != nil {
		t.Fatalf("alice deletes her networks: %v", err)
	}
	_, aliceAfter := list(t, reqCtx(alice, ""), r.networks, &metainternalversion.ListOptions{})
	expectNames(t, "alice's networks after delete collection", names(t, aliceAfter, "acme"))
	_, bobAfter := list(t, reqCtx(bob, ""), r.networks, &metainternalversion.ListOptions{})
	expectNames(t, "bob's networks after alice's delete collection", names(t, bobAfter, "globex"), names(t, bobBefore, "globex")...)
	if len(bobAfter) == 0 {
		t.Error("bob has no networks left")
	}

	// carol deletes in her empty view: nothing, and nobody's networks go.
	deleted, err := r.networks.Main.DeleteCollection(reqCtx(carol, ""), rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}, &metainternalversion.ListOptions{})
	if err != nil || meta.LenList(deleted) != 0 {
		t.Errorf("carol deletes the collection: %d deleted, %v", meta.LenList(deleted), err)
	}
	_, bobLast := list(t, reqCtx(bob, ""), r.networks, &metainternalversion.ListOptions{})
	expectNames(t, "bob's networks after carol's delete collection", names(t, bobLast, "globex"), names(t, bobAfter, "globex")...)
}
