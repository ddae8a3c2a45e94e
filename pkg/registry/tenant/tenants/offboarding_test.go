package tenants_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apiserver"
	"tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/registry/registrytest"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/tenants"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

var (
	admin = &user.DefaultInfo{Name: "admin", Groups: []string{"system:authenticated"}}
	alice = &user.DefaultInfo{Name: "alice", Groups: []string{"tenant.io:acme", "system:authenticated"}}
	bob   = &user.DefaultInfo{Name: "bob", Groups: []string{"tenant.io:globex", "system:authenticated"}}
	carol = &user.DefaultInfo{Name: "carol", Groups: []string{"system:authenticated"}}
)

// fakeHostWorkloads is a host whose workloads the test sets, by host
// namespace.
type fakeHostWorkloads struct {
	mu        sync.Mutex
	workloads map[string][]host.Workload
	err       error
	// failIn, if set, is the one host namespace whose LIST fails.
	failIn string
}

func (f *fakeHostWorkloads) Workloads(_ context.Context, hostNamespace string, _ types.UID) ([]host.Workload, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil || (f.failIn != "" && f.failIn == hostNamespace) {
		return nil, errors.New("connection refused")
	}
	return f.workloads[hostNamespace], nil
}

// set makes the pods of hostNamespace the named ones.
func (f *fakeHostWorkloads) set(hostNamespace string, pods ...string) {
	ws := make([]host.Workload, 0, len(pods))
	for _, p := range pods {
		ws = append(ws, host.Workload{Resource: host.ResourcePods, Name: p, State: host.Running})
	}
	f.setWorkloads(hostNamespace, ws...)
}

func (f *fakeHostWorkloads) setWorkloads(hostNamespace string, ws ...host.Workload) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.workloads[hostNamespace] = ws
}

func (f *fakeHostWorkloads) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

func (f *fakeHostWorkloads) failOnlyIn(hostNamespace string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failIn = hostNamespace
}

// onlyAdmin lets user "admin" manage Tenants, as host RBAC would.
var onlyAdmin = authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetUser().GetName() == "admin" {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
})

type server struct {
	storage     *kindstore.Storages
	offboarding *tenants.OffboardingREST
	host        *fakeHostWorkloads
}

// setup runs the storage of every kind on one etcd, with tenants acme and
// globex, and a host whose pods the test sets.
func setup(t *testing.T) *server {
	t.Helper()
	fakeHost := &fakeHostWorkloads{workloads: map[string][]host.Workload{}}
	getter := registrytest.RESTOptionsGetter(registrytest.StartEtcd(t), false)
	deps := kindstore.Deps{Resolver: tenancy.GroupResolver{}, Authorizer: onlyAdmin, HostWorkloads: fakeHost}
	storage, err := apiserver.NewStorage(getter, deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, s := range storage.List() {
			s.Main.Destroy()
		}
	})
	s := &server{
		storage:     storage,
		offboarding: storage.Tenants.Subresources["offboarding"].(*tenants.OffboardingREST),
		host:        fakeHost,
	}
	for i, name := range []string{"acme", "globex"} {
		tn := &tenant.Tenant{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       tenant.TenantSpec{Network: tenant.TenantNetwork{CIDR: fmt.Sprintf("10.%d.0.0/16", 42+i)}},
		}
		if _, err := storage.Tenants.Store.Create(noNamespace(), tn, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func noNamespace() context.Context {
	return genericapirequest.WithNamespace(context.Background(), metav1.NamespaceNone)
}

// as is the context of a request of u in namespace ns.
func as(u user.Info, ns string) context.Context {
	return genericapirequest.WithUser(genericapirequest.WithNamespace(genericapirequest.NewContext(), ns), u)
}

func (s *server) tenant(t *testing.T, name string) *tenant.Tenant {
	t.Helper()
	obj, err := s.storage.Tenants.Store.Get(noNamespace(), name, &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*tenant.Tenant)
}

// hostNamespace is the host namespace of tenant Namespace ns of tenant tn.
func (s *server) hostNamespace(t *testing.T, tn, ns string) string {
	t.Helper()
	return hostnames.Namespace(tn, s.tenant(t, tn).UID, ns)
}

// of returns the storage of resource.
func (s *server) of(resource string) *kindstore.Storage {
	for _, st := range s.storage.List() {
		if st.Resource == resource {
			return st
		}
	}
	panic("no storage of " + resource)
}

func (s *server) create(t *testing.T, u user.Info, resource, ns string, obj runtime.Object) {
	t.Helper()
	if _, err := s.of(resource).Main.Create(as(u, ns), obj, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s as %s: %v", resource, u.GetName(), err)
	}
}

func (s *server) delete(u user.Info, resource, ns, name string) (runtime.Object, error) {
	obj, _, err := s.of(resource).Main.Delete(as(u, ns), name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
	return obj, err
}

// updateTenant changes Tenant name through the unguarded stores, as the
// syncer (finalizers) and the quota tracker (usage) do.
func (s *server) updateTenant(t *testing.T, name string, status bool, change func(*tenant.Tenant)) {
	t.Helper()
	store := s.storage.Tenants.Store
	if status {
		store = s.storage.Tenants.StatusStore
	}
	_, _, err := store.Update(noNamespace(), name, rest.DefaultUpdatedObjectInfo(nil,
		func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			tn := old.(*tenant.Tenant).DeepCopy()
			change(tn)
			return tn, nil
		}), nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// createDefaultNetwork gives u's tenant its Network "default", as
// onboarding does: the Namespaces of the tests name it.
func (s *server) createDefaultNetwork(t *testing.T, u user.Info) {
	t.Helper()
	s.create(t, u, "networks", "", &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: tenant.NetworkSpec{Topology: tenant.NetworkTopologyLayer2}})
}

// fill gives acme a Namespace dev, a Network net and a FloatingIP dev/web.
func (s *server) fill(t *testing.T) {
	t.Helper()
	// The Network first: a Namespace names an existing one.
	s.create(t, alice, "networks", "", &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: "net"}, Spec: tenant.NetworkSpec{Topology: tenant.NetworkTopologyLayer2}})
	s.create(t, alice, "namespaces", "", &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Spec: tenant.NamespaceSpec{Network: "net"}})
	s.create(t, alice, "floatingips", "dev", &tenant.FloatingIP{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       tenant.FloatingIPSpec{Ports: []tenant.FloatingIPPort{{Port: 443, Protocol: tenant.ProtocolTCP}}},
	})
}

// causeFields returns the Field of each cause of the 409 err.
func causeFields(t *testing.T, what string, err error) []string {
	t.Helper()
	var status apierrors.APIStatus
	if !apierrors.IsConflict(err) || !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("%s: error = %v, want a 409 with causes", what, err)
	}
	var fields []string
	for _, c := range status.Status().Details.Causes {
		if c.Type != kindstore.CauseTypeAttached {
			t.Errorf("%s: cause %+v is not of type %s", what, c, kindstore.CauseTypeAttached)
		}
		fields = append(fields, c.Field)
	}
	return fields
}

// report reads the offboarding report of tenant name as u, and returns it
// with its blockers in the form of 409 causes.
func (s *server) report(t *testing.T, u user.Info, name string) (*tenant.OffboardingReport, []string) {
	t.Helper()
	obj, err := s.offboarding.Get(as(u, ""), name, &metav1.GetOptions{})
	if err != nil {
		t.Fatalf("GET tenants/%s/offboarding as %s: %v", name, u.GetName(), err)
	}
	r := obj.(*tenant.OffboardingReport)
	if r.Name != name || r.Tenant != name {
		t.Errorf("report of %s names %q, tenant %q", name, r.Name, r.Tenant)
	}
	if r.Ready != (len(r.Blockers) == 0) {
		t.Errorf("report of %s: ready %v with %d blockers", name, r.Ready, len(r.Blockers))
	}
	var fields []string
	for _, c := range tenants.Causes(r.Blockers) {
		fields = append(fields, c.Field)
	}
	return r, fields
}

func expect(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

// TestOffboardingBlockers walks a Tenant through offboarding: what blocks
// its delete without and with the syncer's finalizer, the report giving
// the same blockers as the 409, and the delete once clear.
func TestOffboardingBlockers(t *testing.T) {
	s := setup(t)
	s.fill(t)
	s.host.set(s.hostNamespace(t, "acme", "dev"), "web-0", "web-1")
	s.host.set(s.hostNamespace(t, "globex", "dev"), "not-acme")

	// Without the finalizer nobody would remove its Namespaces and
	// Networks: they block too.
	want := []string{"floatingips dev/web", "namespaces dev", "networks net", "pods dev/web-0", "pods dev/web-1"}
	_, err := s.delete(admin, "tenants", "", "acme")
	expect(t, "409 causes without the finalizer", causeFields(t, "delete acme", err), want...)
	r, fields := s.report(t, admin, "acme")
	expect(t, "report without the finalizer", fields, want...)
	if b := r.Blockers[len(r.Blockers)-1]; b.Resource != "pods" || b.Namespace != "dev" || b.Name != "web-1" || b.Message == "" {
		t.Errorf("pod blocker %+v, want pods dev/web-1 with a message", b)
	}

	// With it, the syncer removes them: FloatingIPs and pods remain.
	s.updateTenant(t, "acme", false, func(tn *tenant.Tenant) {
		tn.Finalizers = append(tn.Finalizers, tenant.FinalizerOffboarding)
	})
	want = []string{"floatingips dev/web", "pods dev/web-0", "pods dev/web-1"}
	_, err = s.delete(admin, "tenants", "", "acme")
	expect(t, "409 causes with the finalizer", causeFields(t, "delete acme", err), want...)
	_, fields = s.report(t, admin, "acme")
	expect(t, "report with the finalizer", fields, want...)
	_, fields = s.report(t, alice, "acme")
	expect(t, "alice's report", fields, want...)

	// Creates in flight (charged, not stored) block; with the finalizer,
	// only those of kinds the syncer does not clean up.
	s.updateTenant(t, "acme", true, func(tn *tenant.Tenant) {
		tn.Status.Usage = tenant.TenantUsage{Namespaces: 3, Networks: 1, FloatingIPs: 2, LoadBalancers: 0}
	})
	_, fields = s.report(t, admin, "acme")
	expect(t, "report with a FloatingIP in flight", fields, "floatingips", "floatingips dev/web", "pods dev/web-0", "pods dev/web-1")

	// A host that does not answer: 503, for both.
	s.host.fail(errors.New("connection refused"))
	for what, err := range map[string]error{
		"delete": func() error { _, err := s.delete(admin, "tenants", "", "acme"); return err }(),
		"report": func() error { _, err := s.offboarding.Get(as(admin, ""), "acme", &metav1.GetOptions{}); return err }(),
	} {
		if !apierrors.IsServiceUnavailable(err) || !strings.Contains(err.Error(), "cannot check the host for workloads: connection refused") {
			t.Errorf("%s with the host down: %v, want 503", what, err)
		}
	}
	s.host.fail(nil)

	// Clear: the delete is accepted, and the finalizer keeps the Tenant,
	// terminating.
	if _, err := s.delete(alice, "floatingips", "dev", "web"); err != nil {
		t.Fatal(err)
	}
	s.host.set(s.hostNamespace(t, "acme", "dev"))
	s.updateTenant(t, "acme", true, func(tn *tenant.Tenant) { tn.Status.Usage = tenant.TenantUsage{Namespaces: 1, Networks: 1} })
	r, fields = s.report(t, admin, "acme")
	expect(t, "report when clear", fields)
	if !r.Ready {
		t.Error("report when clear is not ready")
	}
	if _, err := s.delete(admin, "tenants", "", "acme"); err != nil {
		t.Fatalf("delete of a clear tenant: %v", err)
	}
	if s.tenant(t, "acme").DeletionTimestamp == nil {
		t.Fatal("the accepted delete did not mark the tenant")
	}

	// A Tenant being deleted: deleting it again goes through, whatever
	// appeared since, and its report is ready.
	s.host.set(s.hostNamespace(t, "acme", "dev"), "late")
	if _, err := s.delete(admin, "tenants", "", "acme"); err != nil {
		t.Errorf("second delete of a terminating tenant: %v", err)
	}
	if r, _ := s.report(t, admin, "acme"); !r.Ready || r.DeletionTimestamp == nil {
		t.Errorf("report of a terminating tenant: ready %v, deletionTimestamp %v", r.Ready, r.DeletionTimestamp)
	}

	// Nothing new is created in it, and the syncer may delete its
	// Namespaces despite pods started since.
	_, err = s.storage.Networks.Main.Create(as(alice, ""), &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: "late"}, Spec: tenant.NetworkSpec{Topology: tenant.NetworkTopologyLayer2}}, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "tenant acme is being deleted") {
		t.Errorf("create in a terminating tenant: %v, want 403", err)
	}
	if _, err := s.delete(alice, "namespaces", "", "dev"); err != nil {
		t.Errorf("delete of a Namespace of a terminating tenant: %v", err)
	}

	// globex was never concerned.
	if _, fields := s.report(t, admin, "globex"); len(fields) != 0 {
		t.Errorf("globex blockers %q; its host pods are not acme's", fields)
	}
}

// TestOffboardingReportVisibility: provider admins read any report, tenant
// members their own tenant's, and nobody else any (404, as a missing Tenant).
func TestOffboardingReportVisibility(t *testing.T) {
	s := setup(t)
	for _, c := range []struct {
		u      user.Info
		tenant string
		found  bool
	}{
		{admin, "acme", true}, {admin, "globex", true},
		{alice, "acme", true}, {alice, "globex", false},
		{bob, "globex", true}, {bob, "acme", false},
		{carol, "acme", false},
		{admin, "missing", false}, {alice, "missing", false},
	} {
		_, err := s.offboarding.Get(as(c.u, ""), c.tenant, &metav1.GetOptions{})
		switch {
		case c.found && err != nil:
			t.Errorf("%s reading the report of %s: %v", c.u.GetName(), c.tenant, err)
		case !c.found && !apierrors.IsNotFound(err):
			t.Errorf("%s reading the report of %s: %v, want 404", c.u.GetName(), c.tenant, err)
		case !c.found && !strings.Contains(err.Error(), fmt.Sprintf("tenants.tenant.io %q not found", c.tenant)):
			t.Errorf("%s reading the report of %s: %v, want the 404 of a missing tenant", c.u.GetName(), c.tenant, err)
		}
	}
	if _, ok := s.offboarding.New().(*tenant.OffboardingReport); !ok {
		t.Errorf("New() = %T", s.offboarding.New())
	}
}

// TestOffboardingVirtualMachines: VMs, their instances and their disks
// block like pods; the report says which run and which only hold disks,
// and the 409's own message names the first blockers.
func TestOffboardingVirtualMachines(t *testing.T) {
	s := setup(t)
	s.updateTenant(t, "acme", false, func(tn *tenant.Tenant) {
		tn.Finalizers = append(tn.Finalizers, tenant.FinalizerOffboarding)
	})
	s.createDefaultNetwork(t, alice)
	s.create(t, alice, "namespaces", "", &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Spec: tenant.NamespaceSpec{Network: "default"}})
	s.host.setWorkloads(s.hostNamespace(t, "acme", "dev"),
		host.Workload{Resource: host.ResourceDataVolumes, Name: "db-disk", State: host.Disk},
		host.Workload{Resource: host.ResourcePersistentVolumeClaims, Name: "db-disk", State: host.Disk},
		host.Workload{Resource: host.ResourceVirtualMachineInstances, Name: "web", State: host.Running},
		host.Workload{Resource: host.ResourceVirtualMachines, Name: "db", State: host.Stopped},
		host.Workload{Resource: host.ResourceVirtualMachines, Name: "web", State: host.Running})

	want := []string{"datavolumes dev/db-disk", "persistentvolumeclaims dev/db-disk", "virtualmachineinstances dev/web", "virtualmachines dev/db", "virtualmachines dev/web"}
	_, err := s.delete(admin, "tenants", "", "acme")
	expect(t, "409 causes", causeFields(t, "delete acme", err), want...)
	if msg := err.Error(); !strings.Contains(msg, "(blocked by datavolumes dev/db-disk, persistentvolumeclaims dev/db-disk, virtualmachineinstances dev/web and 2 more)") {
		t.Errorf("409 message %q does not name the first blockers", msg)
	}
	r, fields := s.report(t, admin, "acme")
	expect(t, "report", fields, want...)
	states := map[string]tenant.WorkloadState{}
	for _, b := range r.Blockers {
		states[b.Resource+" "+b.Name] = b.State
	}
	for blocker, state := range map[string]tenant.WorkloadState{
		"datavolumes db-disk": tenant.WorkloadDisk, "persistentvolumeclaims db-disk": tenant.WorkloadDisk,
		"virtualmachineinstances web": tenant.WorkloadRunning, "virtualmachines web": tenant.WorkloadRunning, "virtualmachines db": tenant.WorkloadStopped,
	} {
		if states[blocker] != state {
			t.Errorf("report: %s is %q, want %q (%+v)", blocker, states[blocker], state, r.Blockers)
		}
	}

	// The Namespace's own delete, the same.
	_, err = s.delete(alice, "namespaces", "", "dev")
	expect(t, "namespace 409 causes", causeFields(t, "delete dev", err), want...)
	if msg := err.Error(); !strings.Contains(msg, "namespace dev still holds 5 object(s), workload(s) or disk(s)") ||
		!strings.Contains(msg, "(blocked by datavolumes dev/db-disk, ") {
		t.Errorf("namespace 409 message %q", msg)
	}

	// Disks alone still block: deleting would destroy the data.
	s.host.setWorkloads(s.hostNamespace(t, "acme", "dev"), host.Workload{Resource: host.ResourcePersistentVolumeClaims, Name: "db-disk", State: host.Disk})
	_, err = s.delete(alice, "namespaces", "", "dev")
	expect(t, "409 with a disk alone", causeFields(t, "delete dev", err), "persistentvolumeclaims dev/db-disk")
	s.host.setWorkloads(s.hostNamespace(t, "acme", "dev"))
	if _, err := s.delete(alice, "namespaces", "", "dev"); err != nil {
		t.Errorf("delete of dev once empty: %v", err)
	}
}

// TestNamespaceDeletionWaitsForPods: a tenant Namespace whose host
// namespace runs pods is not deleted (409 listing them) until they are gone.
func TestNamespaceDeletionWaitsForPods(t *testing.T) {
	s := setup(t)
	s.createDefaultNetwork(t, alice)
	s.createDefaultNetwork(t, bob)
	s.create(t, alice, "namespaces", "", &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Spec: tenant.NamespaceSpec{Network: "default"}})
	s.create(t, bob, "namespaces", "", &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Spec: tenant.NamespaceSpec{Network: "default"}})
	s.host.set(s.hostNamespace(t, "acme", "dev"), "web", "db")

	_, err := s.delete(alice, "namespaces", "", "dev")
	expect(t, "409 causes", causeFields(t, "delete dev", err), "pods dev/db", "pods dev/web")

	// A namespace the tenant does not have is not found, host or not.
	s.host.fail(errors.New("connection refused"))
	if _, err := s.delete(alice, "namespaces", "", "qa"); !apierrors.IsNotFound(err) {
		t.Errorf("delete of a missing namespace with the host down: %v, want 404", err)
	}
	if _, err := s.delete(alice, "namespaces", "", "dev"); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("delete with the host down: %v, want 503", err)
	}
	s.host.fail(nil)

	// bob's dev is another host namespace, without pods.
	if _, err := s.delete(bob, "namespaces", "", "dev"); err != nil {
		t.Errorf("delete of globex's dev: %v", err)
	}
	s.host.set(s.hostNamespace(t, "acme", "dev"))
	if _, err := s.delete(alice, "namespaces", "", "dev"); err != nil {
		t.Errorf("delete of dev once its pods are gone: %v", err)
	}
}

// TestOffboardingManyNamespaces checks the host namespaces of many
// Namespaces (a few at a time): every pod is reported, in order, and one
// host namespace that cannot be read fails the whole check.
func TestOffboardingManyNamespaces(t *testing.T) {
	s := setup(t)
	s.updateTenant(t, "acme", false, func(tn *tenant.Tenant) {
		tn.Finalizers = append(tn.Finalizers, tenant.FinalizerOffboarding)
	})
	s.createDefaultNetwork(t, alice)
	var want []string
	for i := 0; i < 10; i++ { // the default quota
		ns := fmt.Sprintf("ns-%02d", i)
		s.create(t, alice, "namespaces", "", &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: tenant.NamespaceSpec{Network: "default"}})
		if i%3 == 1 {
			s.host.set(s.hostNamespace(t, "acme", ns), "b", "a")
			want = append(want, "pods "+ns+"/a", "pods "+ns+"/b")
		}
	}
	_, fields := s.report(t, alice, "acme")
	expect(t, "report", fields, want...)
	_, err := s.delete(admin, "tenants", "", "acme")
	expect(t, "409 causes", causeFields(t, "delete acme", err), want...)

	s.host.failOnlyIn(s.hostNamespace(t, "acme", "ns-07"))
	_, err = s.offboarding.Get(as(alice, ""), "acme", &metav1.GetOptions{})
	if !apierrors.IsServiceUnavailable(err) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("report with one host namespace unreadable: %v, want 503", err)
	}
}
