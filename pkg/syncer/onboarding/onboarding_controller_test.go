package onboarding

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
)

func TestOnlyUsageChanged(t *testing.T) {
	old := &tenant.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: "acme", ResourceVersion: "1", Labels: map[string]string{"a": "b"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate}}},
		Status: tenant.TenantStatus{Usage: tenant.TenantUsage{Namespaces: 1}, Phase: tenant.TenantPhaseReady},
	}
	charged := old.DeepCopy()
	charged.ResourceVersion, charged.Status.Usage.Namespaces = "2", 2
	charged.ManagedFields = append(charged.ManagedFields, metav1.ManagedFieldsEntry{Manager: "n"})
	if !onlyUsageChanged(old, charged) {
		t.Errorf("a quota charge (usage, resourceVersion, managed fields) counted as a change that matters")
	}
	if old.ResourceVersion != "1" || old.Status.Usage.Namespaces != 1 || len(old.ManagedFields) != 1 {
		t.Errorf("the old object was written to: %+v", old)
	}
	relabelled := charged.DeepCopy()
	relabelled.Labels["a"] = "c"
	if onlyUsageChanged(old, relabelled) {
		t.Errorf("a label change passed for a usage change")
	}
	provisioning := charged.DeepCopy()
	provisioning.Status.Phase = tenant.TenantPhaseProvisioning
	if onlyUsageChanged(old, provisioning) {
		t.Errorf("a phase change passed for a usage change")
	}
}

// TestPoolNamespaces: the pool serves, of the tenant's host namespaces,
// the one of Namespace default and those holding a LoadBalancer or a
// FloatingIP; never a namespace the tenant has no host namespace for,
// one another Namespace of that name owned, or one terminating.
func TestPoolNamespaces(t *testing.T) {
	src, f := controllertest.NewSources(t)
	c, err := New(src, hostkinds.New(src), AdvertiseL2)
	if err != nil {
		t.Fatal(err)
	}
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"}}
	other := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "globex", UID: "other-uid"}}
	labelled := func(t *tenant.Tenant, name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Labels: map[string]string{hostnames.TenantLabel: t.Name}}
	}
	host := map[string]string{}
	for _, name := range []string{"default", "dev", "prod", "web", "old"} {
		ns := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("ns-" + name)}}
		controllertest.Cache(t, src.Namespaces, tn.Name, "", ns)
		host[name] = controllertest.MakeHostNamespace(t, src, f, tn, ns)
	}

	if got, want := c.poolNamespaces(tn), []string{host["default"]}; !slices.Equal(got, want) {
		t.Errorf("with no LoadBalancer or FloatingIP: %v, want %v", got, want)
	}
	controllertest.Cache(t, src.LoadBalancers, "acme", "web", &tenant.LoadBalancer{ObjectMeta: labelled(tn, "lb")})
	controllertest.Cache(t, src.FloatingIPs, "acme", "dev", &tenant.FloatingIP{ObjectMeta: labelled(tn, "fip")})
	controllertest.Cache(t, src.FloatingIPs, "acme", "gone", &tenant.FloatingIP{ObjectMeta: labelled(tn, "fip")})
	controllertest.Cache(t, src.LoadBalancers, "globex", "prod", &tenant.LoadBalancer{ObjectMeta: labelled(other, "lb")})
	want := []string{host["default"], host["dev"], host["web"]}
	slices.Sort(want)
	if got := c.poolNamespaces(tn); !slices.Equal(got, want) {
		t.Errorf("with a LoadBalancer in web and FloatingIPs in dev and gone: %v, want %v", got, want)
	}

	// Namespace web deleted and made again: the host namespace is the old
	// Namespace's until the syncer has replaced it.
	controllertest.Uncache(t, src.Namespaces, tn.Name, "", "web")
	controllertest.Cache(t, src.Namespaces, tn.Name, "", &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "ns-web-2"}})
	// Namespace dev's host namespace terminating.
	now := metav1.Now()
	if _, err := f.Kube.CoreV1().Namespaces().Update(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: host["dev"], DeletionTimestamp: &now, Finalizers: []string{"kubernetes"},
		Labels:      hostnames.Marks{Tenant: tn.Name, TenantUID: tn.UID, KindLabel: hostnames.NamespaceLabel, Name: "dev", OwnerUID: "ns-dev"}.Labels(),
		Annotations: hostnames.Marks{Tenant: tn.Name, TenantUID: tn.UID, KindLabel: hostnames.NamespaceLabel, Name: "dev", OwnerUID: "ns-dev"}.Annotations(),
	}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informer has dev's host namespace terminating", func() bool {
		obj, exists, _ := src.HostNamespaces.GetStore().GetByKey(host["dev"])
		return exists && heldNamespace(t, obj).DeletionTimestamp != nil
	})
	// Namespace default gone.
	controllertest.Uncache(t, src.Namespaces, tn.Name, "", "default")
	if got := c.poolNamespaces(tn); len(got) != 0 {
		t.Errorf("with default gone, dev's host namespace terminating and web's another Namespace's: %v, want none", got)
	}
}

// tenantSummary is what every reconcile of a Tenant reads of its
// Namespaces: what keeps them from being synced, and its pool's host
// namespaces.
func tenantSummary(c *Controller, t *tenant.Tenant) (pending, pool []string) {
	pending, _ = c.pendingNamespaces(t, time.Now())
	return pending, c.poolNamespaces(t)
}

// BenchmarkTenantSummary: a Tenant with 1,000 synced Namespaces (two of
// them holding a LoadBalancer), as a noisy tenant's reconciles, paced at
// four a second, read it.
func BenchmarkTenantSummary(b *testing.B) {
	src, _ := controllertest.NewSources(b)
	c, err := New(src, hostkinds.New(src), AdvertiseL2)
	if err != nil {
		b.Fatal(err)
	}
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"}}
	synced := []metav1.Condition{{Type: tenant.ConditionHostSynced, Status: metav1.ConditionTrue, Reason: "Synced"}}
	for i := range 1000 {
		name := fmt.Sprintf("ns-%04d", i)
		if i == 0 {
			name = tenant.DefaultNamespace
		}
		ns := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
			Labels: map[string]string{hostnames.TenantLabel: tn.Name}},
			Status: tenant.NamespaceStatus{Conditions: synced}}
		controllertest.Cache(b, src.Namespaces, tn.Name, "", ns)
		marks := hostnames.Marks{Tenant: tn.Name, TenantUID: tn.UID, KindLabel: hostnames.NamespaceLabel, Name: name, OwnerUID: ns.UID}
		if err := src.HostNamespaces.GetStore().Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: hostnames.Namespace(tn.Name, tn.UID, name), Labels: marks.Labels(), Annotations: marks.Annotations()}}); err != nil {
			b.Fatal(err)
		}
	}
	for _, ns := range []string{"ns-0100", "ns-0200"} {
		controllertest.Cache(b, src.LoadBalancers, tn.Name, ns, &tenant.LoadBalancer{ObjectMeta: metav1.ObjectMeta{
			Name: "lb", Labels: map[string]string{hostnames.TenantLabel: tn.Name}}})
	}
	if objs, _ := src.Namespaces.GetIndexer().ByIndex(controller.ByTenant, tn.Name); len(objs) != 1000 {
		b.Fatalf("%d Namespaces of %s cached, want 1000", len(objs), tn.Name)
	}
	if pending, pool := tenantSummary(c, tn); len(pending) != 0 || len(pool) != 3 {
		b.Fatalf("pending %v, pool %v: want none and 3", pending, pool)
	}
	b.ReportAllocs()
	for b.Loop() {
		tenantSummary(c, tn)
	}
}

// TestNewNamespaceGrace: a Ready Tenant leaves out of its pending
// Namespaces those created in the last NewNamespaceGrace that the syncer
// has not reconciled yet, and rechecks when the first comes of age; a
// Namespace older than that, or one the syncer found failing, counts; a
// Tenant not Ready yet counts every Namespace.
func TestNewNamespaceGrace(t *testing.T) {
	src, _ := controllertest.NewSources(t)
	c, err := New(src, hostkinds.New(src), AdvertiseL2)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ready := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"}}
	ready.Status.Conditions = []metav1.Condition{{Type: tenant.ConditionReady, Status: metav1.ConditionTrue, Reason: controller.ReasonSynced}}
	provisioning := ready.DeepCopy()
	provisioning.Status.Conditions[0].Status = metav1.ConditionFalse

	namespace := func(name string, age time.Duration, status metav1.ConditionStatus, reason string) {
		ns := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("ns-" + name),
			Labels: map[string]string{hostnames.TenantLabel: ready.Name}, CreationTimestamp: metav1.NewTime(now.Add(-age))}}
		ns.Status.Conditions = []metav1.Condition{{Type: tenant.ConditionHostSynced, Status: status, Reason: reason, Message: "m"}}
		controllertest.Cache(t, src.Namespaces, ready.Name, "", ns)
	}
	namespace("synced", time.Hour, metav1.ConditionTrue, controller.ReasonSynced)
	namespace("new", time.Second, metav1.ConditionFalse, "NotSynced")
	namespace("newer", 2*time.Second/10, metav1.ConditionFalse, "NotSynced")
	namespace("stale", NewNamespaceGrace+time.Second, metav1.ConditionFalse, "NotSynced")
	namespace("failing", time.Second, metav1.ConditionFalse, controller.ReasonHostError)

	pending, recheck := c.pendingNamespaces(ready, now)
	if want := []string{"Namespace failing: HostError: m", "Namespace stale: NotSynced: m"}; !slices.Equal(pending, want) {
		t.Errorf("pending of a Ready Tenant: %q, want %q", pending, want)
	}
	if recheck != NewNamespaceGrace-time.Second {
		t.Errorf("recheck %v, want %v (when Namespace new comes of age)", recheck, NewNamespaceGrace-time.Second)
	}
	pending, recheck = c.pendingNamespaces(provisioning, now)
	if len(pending) != 4 || recheck != 0 {
		t.Errorf("pending of a Tenant not Ready: %q, recheck %v; want all four not synced and no recheck", pending, recheck)
	}
	pending, recheck = c.pendingNamespaces(ready, now.Add(NewNamespaceGrace))
	if len(pending) != 4 || recheck != 0 {
		t.Errorf("pending once the grace is over: %q, recheck %v; want all four and no recheck", pending, recheck)
	}
}

// TestPublicIPsInUse: a tenant's usage counts each address its
// FloatingIPs, LoadBalancers and NAT gateways hold once, and never
// another tenant's or an object's that holds none yet.
func TestPublicIPsInUse(t *testing.T) {
	src, _ := controllertest.NewSources(t)
	labelled := func(tn, name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Labels: map[string]string{hostnames.TenantLabel: tn}}
	}
	if got := publicIPsInUse(src, "acme"); got != 0 {
		t.Errorf("with nothing cached: %d, want 0", got)
	}
	controllertest.Cache(t, src.FloatingIPs, "acme", "dev", &tenant.FloatingIP{ObjectMeta: labelled("acme", "fip"), Status: tenant.FloatingIPStatus{Address: "203.0.113.10"}})
	controllertest.Cache(t, src.FloatingIPs, "acme", "dev", &tenant.FloatingIP{ObjectMeta: labelled("acme", "waiting")})
	controllertest.Cache(t, src.LoadBalancers, "acme", "web", &tenant.LoadBalancer{ObjectMeta: labelled("acme", "lb"), Status: tenant.LoadBalancerStatus{Address: "203.0.113.11"}})
	controllertest.Cache(t, src.Networks, "acme", "", &tenant.Network{ObjectMeta: labelled("acme", "default"), Status: tenant.NetworkStatus{NATGatewayIP: "203.0.113.12"}})
	// An address reported twice counts once.
	controllertest.Cache(t, src.Networks, "acme", "", &tenant.Network{ObjectMeta: labelled("acme", "blue"), Status: tenant.NetworkStatus{NATGatewayIP: "203.0.113.12"}})
	controllertest.Cache(t, src.FloatingIPs, "globex", "dev", &tenant.FloatingIP{ObjectMeta: labelled("globex", "fip"), Status: tenant.FloatingIPStatus{Address: "203.0.113.20"}})
	if got := publicIPsInUse(src, "acme"); got != 3 {
		t.Errorf("acme: %d, want 3 (a FloatingIP, a LoadBalancer and a NAT gateway)", got)
	}
	if got := publicIPsInUse(src, "globex"); got != 1 {
		t.Errorf("globex: %d, want 1", got)
	}
	controllertest.Uncache(t, src.LoadBalancers, "acme", "web", "lb")
	if got := publicIPsInUse(src, "acme"); got != 2 {
		t.Errorf("acme without its LoadBalancer: %d, want 2", got)
	}
}

// heldNamespace reads obj, the informer's host namespace, as a namespace.
func heldNamespace(t *testing.T, obj interface{}) *corev1.Namespace {
	t.Helper()
	ns, err := host.HeldNamespaceOf(obj)
	if err != nil {
		t.Fatal(err)
	}
	return ns
}
