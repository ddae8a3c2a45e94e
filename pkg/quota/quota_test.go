package quota_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apiserver"
	"tenant.io/tenant-apiserver/pkg/quota"
	"tenant.io/tenant-apiserver/pkg/registry/registrytest"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

var alice = &user.DefaultInfo{Name: "alice", Groups: []string{"tenant.io:acme"}}

func setup(t testing.TB, namespaceQuota int32) *kindstore.Storages {
	t.Helper()
	getter := registrytest.RESTOptionsGetter(registrytest.StartEtcd(t), false)
	storage, err := apiserver.NewStorage(getter, kindstore.Deps{Resolver: tenancy.GroupResolver{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, s := range storage.List() {
			s.Main.Destroy()
		}
	})
	four := int32(4)
	acme := &tenant.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: "acme"},
		Spec: tenant.TenantSpec{
			Network: tenant.TenantNetwork{CIDR: "10.42.0.0/16"},
			Quota:   tenant.TenantQuota{Namespaces: &namespaceQuota, Networks: &four, FloatingIPs: &four, LoadBalancers: &four},
		},
	}
	if _, err := storage.Tenants.Store.Create(genericapirequest.WithNamespace(context.Background(), ""), acme, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The Network the tests' Namespaces name, as onboarding creates it.
	if _, err := storage.Networks.Main.Create(asAlice(), &tenant.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec:       tenant.NetworkSpec{Topology: tenant.NetworkTopologyLayer2},
	}, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return storage
}

func asAlice() context.Context {
	return genericapirequest.WithUser(genericapirequest.WithNamespace(genericapirequest.NewContext(), ""), alice)
}

func usage(t *testing.T, storage *kindstore.Storages) tenant.TenantUsage {
	t.Helper()
	obj, err := storage.Tenants.Store.Get(genericapirequest.WithNamespace(context.Background(), ""), "acme", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*tenant.Tenant).Status.Usage
}

// createAtOnce creates n Namespaces ns-0... at once under a quota of
// limit Namespaces (none used before): exactly limit are admitted, the
// others refused with the quota's 403, and usage is limit. It returns
// each create's error.
func createAtOnce(t *testing.T, storage *kindstore.Storages, n int, limit int32) []error {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = createNamespace(storage, fmt.Sprintf("ns-%d", i))
		}()
	}
	wg.Wait()
	full := fmt.Sprintf("exceeded quota: namespaces, requested 1, used %d, limited %d", limit, limit)
	admitted := int32(0)
	for _, err := range errs {
		switch {
		case err == nil:
			admitted++
		case apierrors.IsForbidden(err) && strings.Contains(err.Error(), full):
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if admitted != limit {
		t.Errorf("admitted %d creates, want %d", admitted, limit)
	}
	if u := usage(t, storage); u.Namespaces != limit {
		t.Errorf("usage %d, want %d", u.Namespaces, limit)
	}
	return errs
}

func createNamespace(storage *kindstore.Storages, name string) error {
	_, err := storage.Namespaces.Main.Create(asAlice(), &tenant.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       tenant.NamespaceSpec{Network: "default"},
	}, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	return err
}

// TestConcurrentCreatesRespectQuota fires 50 creates at a quota of 10.
func TestConcurrentCreatesRespectQuota(t *testing.T) {
	storage := setup(t, 10)
	errs := createAtOnce(t, storage, 50, 10)

	// A delete gives the unit back; a create that fails validation never takes one.
	for i, err := range errs {
		if err != nil {
			continue
		}
		if _, _, err := storage.Namespaces.Main.Delete(asAlice(), fmt.Sprintf("ns-%d", i), rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		break
	}
	if u := usage(t, storage); u.Namespaces != 9 {
		t.Errorf("usage after a delete %d, want 9", u.Namespaces)
	}
	if err := createNamespace(storage, "Not_Valid"); !apierrors.IsInvalid(err) {
		t.Errorf("invalid create: %v", err)
	}
	before := usage(t, storage).Namespaces
	if err := createNamespace(storage, "Still_Not_Valid"); !apierrors.IsInvalid(err) {
		t.Errorf("invalid create: %v", err)
	}
	if after := usage(t, storage).Namespaces; after != before {
		t.Errorf("a refused create changed usage from %d to %d", before, after)
	}
}

func setUsage(t *testing.T, storage *kindstore.Storages, n int32) {
	t.Helper()
	_, _, err := storage.Tenants.StatusStore.Update(genericapirequest.WithNamespace(context.Background(), ""), "acme", rest.DefaultUpdatedObjectInfo(nil,
		func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			tn := old.(*tenant.Tenant).DeepCopy()
			tn.Status.Usage.Namespaces = n
			return tn, nil
		}), nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRecounterRepairsUsage leaks usage (as a crash between charging and
// storing would) and lets the recounter repair it.
func TestRecounterRepairsUsage(t *testing.T) {
	storage := setup(t, 10)
	for i := 0; i < 3; i++ {
		if err := createNamespace(storage, fmt.Sprintf("ns-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	r := quota.NewRecounter(storage.Tenants.StatusStore, map[string]*genericregistry.Store{quota.Namespaces: storage.Namespaces.Store})
	ctx := context.Background()

	setUsage(t, storage, 5) // two leaked units
	if err := r.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if u := usage(t, storage); u.Namespaces != 5 {
		t.Errorf("first pass changed usage to %d; it must wait for a second look", u.Namespaces)
	}
	if err := r.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if u := usage(t, storage); u.Namespaces != 3 {
		t.Errorf("usage after two passes %d, want 3", u.Namespaces)
	}

	setUsage(t, storage, 1) // too low: repaired at once
	if err := r.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if u := usage(t, storage); u.Namespaces != 3 {
		t.Errorf("usage after an undercount %d, want 3", u.Namespaces)
	}

	// An excess that changes between passes (creates in flight) is not repaired.
	setUsage(t, storage, 5)
	if err := r.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	setUsage(t, storage, 6)
	if err := r.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if u := usage(t, storage); u.Namespaces != 6 {
		t.Errorf("a moving excess was repaired to %d", u.Namespaces)
	}
}

// TestTerminatingTenantRefusesCreates: once a Tenant is being deleted
// (held by the syncer's finalizer), nothing new is charged to it, dry run
// or not, and deletes still give units back.
func TestTerminatingTenantRefusesCreates(t *testing.T) {
	storage := setup(t, 10)
	if err := createNamespace(storage, "dev"); err != nil {
		t.Fatal(err)
	}
	ctx := genericapirequest.WithNamespace(context.Background(), "")
	_, _, err := storage.Tenants.Store.Update(ctx, "acme", rest.DefaultUpdatedObjectInfo(nil,
		func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			tn := old.(*tenant.Tenant).DeepCopy()
			tn.Finalizers = append(tn.Finalizers, tenant.FinalizerOffboarding)
			return tn, nil
		}), nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := storage.Tenants.Store.Delete(ctx, "acme", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	tracker := quota.NewTracker(storage.Tenants.StatusStore)
	for _, dryRun := range []bool{false, true} {
		err := tracker.Reserve(ctx, "acme", quota.FloatingIPs, dryRun)
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "tenant acme is being deleted") {
			t.Errorf("Reserve (dry run %v) in a terminating tenant: %v, want 403", dryRun, err)
		}
	}
	if err := createNamespace(storage, "late"); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "tenant acme is being deleted") {
		t.Errorf("create in a terminating tenant: %v, want 403", err)
	}
	if u := usage(t, storage); u.Namespaces != 1 || u.FloatingIPs != 0 {
		t.Errorf("usage after refused creates %+v, want 1 namespace", u)
	}
	if _, _, err := storage.Namespaces.Main.Delete(asAlice(), "dev", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if u := usage(t, storage); u.Namespaces != 0 {
		t.Errorf("usage after deleting the last namespace %d, want 0", u.Namespaces)
	}
}

// TestCreateThroughUpdateChargesQuota checks that an update that creates
// (server-side apply of a new object) is charged as a create is, and that
// an update of an existing object, or a refused one, is not.
func TestCreateThroughUpdateChargesQuota(t *testing.T) {
	storage := setup(t, 2)
	before := usage(t, storage).Namespaces
	apply := func(name string) error {
		ns := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: tenant.NamespaceSpec{Network: "default"}}
		_, _, err := storage.Namespaces.Main.Update(asAlice(), name, rest.DefaultUpdatedObjectInfo(ns),
			rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, true, &metav1.UpdateOptions{})
		return err
	}
	if err := apply("applied"); err != nil {
		t.Fatal(err)
	}
	if got := usage(t, storage).Namespaces; got != before+1 {
		t.Fatalf("usage after a create through update: %d, want %d", got, before+1)
	}
	if err := apply("applied"); err != nil {
		t.Fatal(err)
	}
	if got := usage(t, storage).Namespaces; got != before+1 {
		t.Fatalf("usage after an update of the same object: %d, want %d", got, before+1)
	}
	for i := before + 1; i < 2; i++ {
		if err := apply(fmt.Sprintf("fill%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	err := apply("over")
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota: namespaces") {
		t.Fatalf("a create through update over quota: %v, want 403", err)
	}
	if got := usage(t, storage).Namespaces; got != 2 {
		t.Fatalf("usage after a refused create through update: %d, want 2", got)
	}
}

// TestChargesOfOneTenantShareWrites creates 40 Namespaces of one tenant at
// once under a quota with room for 30: the charges waiting while one is
// written go together in the next write, so the Tenant is written fewer
// times than there are creates, and the batches still admit exactly 30.
func TestChargesOfOneTenantShareWrites(t *testing.T) {
	storage := setup(t, 30)
	ctx := genericapirequest.WithNamespace(context.Background(), "")
	obj, err := storage.Tenants.Store.Get(ctx, "acme", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := storage.Tenants.Store.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: obj.(*tenant.Tenant).ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	const creates, admitted = 40, 30
	createAtOnce(t, storage, creates, admitted)

	// One more write marks the end: the watch delivers writes in order.
	setUsage(t, storage, 31)
	writes := 0
	for ev := range w.ResultChan() {
		tn, ok := ev.Object.(*tenant.Tenant)
		if ev.Type != watch.Modified || !ok {
			t.Fatalf("watch event %s %T", ev.Type, ev.Object)
		}
		if tn.Status.Usage.Namespaces == 31 {
			break
		}
		writes++
	}
	t.Logf("%d creates at once, %d admitted: %d writes of the Tenant", creates, admitted, writes)
	if writes >= admitted {
		t.Errorf("%d writes of the Tenant for %d charges: want fewer (charges waiting for a write go together)", writes, admitted)
	}
}

// TestRecreatedTenantRefusesCreates: a charge for the Tenant the caller's
// guard resolved (its UID in the context) is refused with a 409 when the
// Tenant of that name now has another UID, and counts nothing; a give-back
// and a charge without a UID are not checked.
func TestRecreatedTenantRefusesCreates(t *testing.T) {
	storage := setup(t, 10)
	ctx := genericapirequest.WithNamespace(context.Background(), "")
	obj, err := storage.Tenants.Store.Get(ctx, "acme", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	acme := obj.(*tenant.Tenant)
	tracker := quota.NewTracker(storage.Tenants.StatusStore)
	stale := tenancy.WithTenantUID(ctx, "uid-of-a-former-acme")
	for _, dryRun := range []bool{false, true} {
		err := tracker.Reserve(stale, "acme", quota.FloatingIPs, dryRun)
		if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "tenant acme was deleted and created again meanwhile") {
			t.Errorf("Reserve (dry run %v) for a former acme: %v, want 409", dryRun, err)
		}
	}
	if u := usage(t, storage); u.FloatingIPs != 0 {
		t.Errorf("usage after the refused charges %d FloatingIPs, want 0", u.FloatingIPs)
	}
	if err := tracker.Reserve(tenancy.WithTenantUID(ctx, acme.UID), "acme", quota.FloatingIPs, false); err != nil {
		t.Fatalf("Reserve for acme's own UID: %v", err)
	}
	tracker.Release(stale, "acme", quota.FloatingIPs)
	if u := usage(t, storage); u.FloatingIPs != 0 {
		t.Errorf("usage after a charge and its give-back %d FloatingIPs, want 0", u.FloatingIPs)
	}
}
