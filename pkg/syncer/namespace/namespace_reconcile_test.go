package namespace

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	hostapi "tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

func TestWantNamespaceLabelsPodSecurity(t *testing.T) {
	ns := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev", UID: "ns-uid"}, Spec: tenant.NamespaceSpec{Network: "default"}}
	for _, c := range []struct {
		name  string
		level tenant.PodSecurityLevel
		want  string
	}{
		{"unset (stored before the field existed)", "", "restricted"},
		{"restricted", tenant.PodSecurityLevelRestricted, "restricted"},
		{"baseline", tenant.PodSecurityLevelBaseline, "baseline"},
		// Validation refuses these; the syncer never lowers a namespace for them either.
		{"privileged", tenant.PodSecurityLevelPrivileged, "restricted"},
		{"unknown", "Baseline", "restricted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"}, Spec: tenant.TenantSpec{PodSecurity: tenant.TenantPodSecurity{Level: c.level}}}
			marks := hostnames.Marks{Tenant: tn.Name, TenantUID: tn.UID, KindLabel: hostnames.NamespaceLabel, Name: ns.Name, OwnerUID: ns.UID}
			l := wantNamespaceLabels(marks, tn, ns)
			for _, k := range []string{hostnames.PodSecurityEnforceLabel, hostnames.PodSecurityAuditLabel, hostnames.PodSecurityWarnLabel} {
				if l[k] != c.want {
					t.Errorf("%s=%q, want %q", k, l[k], c.want)
				}
			}
			if l[hostnames.OpenShiftPodSecurityLabelSync] != "false" {
				t.Errorf("%s=%q, want \"false\"", hostnames.OpenShiftPodSecurityLabelSync, l[hostnames.OpenShiftPodSecurityLabelSync])
			}
			if l[hostnames.TenantLabel] != "acme" || l[hostnames.NamespaceLabel] != "dev" || l[hostnames.NetworkLabel] != "default" {
				t.Errorf("tenant marks missing: %v", l)
			}
		})
	}
}

// TestReconcileNamespace drives the Namespace controller over fakes: the
// host namespace and the members RoleBinding are made, their drift
// repaired (labels others add are kept), a RoleBinding whose roleRef was
// changed is replaced, and the host namespace goes with the Namespace.
func TestReconcileNamespace(t *testing.T) {
	src, fakes, tn, ns, reconcile := namespaceFixture(t, "")
	ctx := context.Background()
	hostName := hostnames.Namespace(tn.Name, tn.UID, ns.Name)
	namespaces, bindings := fakes.Kube.CoreV1().Namespaces(), fakes.Kube.RbacV1().RoleBindings(hostName)
	status := func() tenant.NamespaceStatus {
		return fakes.Namespaces.Stored(tn.Name, "", ns.Name).(*tenant.Namespace).Status
	}
	cachedBinding := func(check func(*rbacv1.RoleBinding) bool) func() bool {
		return func() bool {
			obj, exists, _ := src.HostRoleBindings.GetStore().GetByKey(hostName + "/" + hostnames.MembersRoleBinding)
			if !exists {
				return false
			}
			rb, err := hostapi.HeldRoleBindingOf(obj)
			return err == nil && check(rb)
		}
	}

	// The host namespace is made first; the RoleBinding once it is cached.
	reconcile("first reconcile")
	host, err := namespaces.Get(ctx, hostName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("host namespace not made: %v", err)
	}
	if host.Labels[hostnames.PodSecurityEnforceLabel] != "restricted" || host.Labels[hostnames.NetworkLabel] != "default" {
		t.Errorf("host namespace labels %v", host.Labels)
	}
	controllertest.Eventually(t, "the informer has the host namespace", func() bool {
		_, exists, _ := src.HostNamespaces.GetStore().GetByKey(hostName)
		return exists
	})
	reconcile("reconcile with the host namespace cached")
	rb, err := bindings.Get(ctx, hostnames.MembersRoleBinding, metav1.GetOptions{})
	if err != nil || rb.RoleRef.Name != "admin" || len(rb.Subjects) == 0 || rb.Subjects[0].Name != "alice" {
		t.Fatalf("members RoleBinding %+v, %v", rb, err)
	}
	if st := status(); st.Phase != tenant.NamespacePhaseActive || st.HostNamespace != hostName ||
		!conditionTrue(st.Conditions, tenant.ConditionHostSynced) {
		t.Errorf("status %+v, want Active and HostSynced", st)
	}

	// Drift: a label of ours removed and one of someone else's added; a
	// subject added to the binding.
	edited := host.DeepCopy()
	delete(edited.Labels, hostnames.PodSecurityEnforceLabel)
	edited.Labels["provider.example/team"] = "blue"
	if _, err := namespaces.Update(ctx, edited, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb.Subjects = append(rb.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "mallory"})
	if _, err := bindings.Update(ctx, rb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informers have the edits", func() bool {
		obj, _, _ := src.HostNamespaces.GetStore().GetByKey(hostName)
		return heldNamespace(t, obj).Labels["provider.example/team"] == "blue" &&
			cachedBinding(func(b *rbacv1.RoleBinding) bool { return hasSubject(b, "mallory") })()
	})
	reconcile("reconcile after the edits")
	host, _ = namespaces.Get(ctx, hostName, metav1.GetOptions{})
	if host.Labels[hostnames.PodSecurityEnforceLabel] != "restricted" || host.Labels["provider.example/team"] != "blue" {
		t.Errorf("host namespace labels after repair %v: want ours back and the provider's kept", host.Labels)
	}
	if rb, _ = bindings.Get(ctx, hostnames.MembersRoleBinding, metav1.GetOptions{}); !reflect.DeepEqual(rb.Subjects, MembersSubjects(tn)) {
		t.Errorf("subjects after repair %v, want %v", rb.Subjects, MembersSubjects(tn))
	}

	// A roleRef cannot change: the binding is replaced.
	controllertest.Eventually(t, "the informer has the repaired binding", cachedBinding(func(b *rbacv1.RoleBinding) bool { return !hasSubject(b, "mallory") }))
	rb.RoleRef.Name = "cluster-admin"
	if _, err := bindings.Update(ctx, rb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informer has the roleRef edit", cachedBinding(func(b *rbacv1.RoleBinding) bool { return b.RoleRef.Name == "cluster-admin" }))
	reconcile("reconcile after the roleRef edit")
	if _, err := bindings.Get(ctx, hostnames.MembersRoleBinding, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("binding with another roleRef not deleted: %v", err)
	}
	controllertest.Eventually(t, "the informer saw the delete", func() bool {
		_, exists, _ := src.HostRoleBindings.GetStore().GetByKey(hostName + "/" + hostnames.MembersRoleBinding)
		return !exists
	})
	reconcile("reconcile after the replaced binding went")
	if rb, err = bindings.Get(ctx, hostnames.MembersRoleBinding, metav1.GetOptions{}); err != nil || rb.RoleRef.Name != "admin" {
		t.Errorf("binding made again %+v, %v", rb, err)
	}

	// The Namespace is gone: so is its host namespace.
	fakes.Namespaces.Remove(tn.Name, "", ns.Name)
	controllertest.Uncache(t, src.Namespaces, tn.Name, "", ns.Name)
	reconcile("reconcile of a deleted Namespace")
	if _, err := namespaces.Get(ctx, hostName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("host namespace of a deleted Namespace not removed: %v", err)
	}
}

// TestReconcileNetworkAttached: a Namespace whose host namespace and
// RoleBinding match is HostSynced, but Ready only once OVN-Kubernetes has
// rendered its Network into the host namespace, and no longer once that
// rendering is gone.
func TestReconcileNetworkAttached(t *testing.T) {
	src, fakes, tn, ns, reconcile := namespaceFixture(t, "")
	ctx := context.Background()
	hostName := hostnames.Namespace(tn.Name, tn.UID, ns.Name)
	cudn := hostnames.ClusterUserDefinedNetwork(tn.UID, ns.Spec.Network)
	conditions := func() []metav1.Condition {
		return fakes.Namespaces.Stored(tn.Name, "", ns.Name).(*tenant.Namespace).Status.Conditions
	}
	want := func(what string, attached, ready metav1.ConditionStatus, reason string) {
		t.Helper()
		a := meta.FindStatusCondition(conditions(), tenant.ConditionNetworkAttached)
		r := meta.FindStatusCondition(conditions(), tenant.ConditionReady)
		if a == nil || r == nil || a.Status != attached || r.Status != ready || r.Reason != reason {
			t.Fatalf("%s: NetworkAttached %+v, Ready %+v; want %s, and Ready %s with reason %s", what, a, r, attached, ready, reason)
		}
	}

	reconcile("first reconcile")
	controllertest.Eventually(t, "the informer has the host namespace", func() bool {
		_, exists, _ := src.HostNamespaces.GetStore().GetByKey(hostName)
		return exists
	})
	reconcile("reconcile with the host namespace cached")
	if !conditionTrue(conditions(), tenant.ConditionHostSynced) {
		t.Fatalf("conditions %+v, want HostSynced", conditions())
	}
	want("synced, nothing rendered", metav1.ConditionFalse, metav1.ConditionFalse, ReasonNetworkNotAttached)
	if r := meta.FindStatusCondition(conditions(), tenant.ConditionReady); !strings.Contains(r.Message, "NetworkAttachmentDefinition "+cudn) {
		t.Errorf("Ready message %q does not name the NetworkAttachmentDefinition %s", r.Message, cudn)
	}
	sharedMessages(t, "synced, nothing rendered", conditions(), hostName)

	controllertest.Render(t, fakes, hostName, cudn)
	controllertest.Eventually(t, "the informer has the attachment", func() bool { return src.Attached(hostName, cudn) })
	reconcile("reconcile once rendered")
	want("rendered", metav1.ConditionTrue, metav1.ConditionTrue, controller.ReasonSynced)
	sharedMessages(t, "rendered", conditions(), hostName)

	if err := fakes.Metadata.Resource(controller.NetworkAttachmentDefinitions).Namespace(hostName).Delete(ctx, cudn, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informer saw the attachment go", func() bool { return !src.Attached(hostName, cudn) })
	reconcile("reconcile once the rendering is gone")
	want("rendering gone", metav1.ConditionFalse, metav1.ConditionFalse, ReasonNetworkNotAttached)
}

// sharedMessages fails t when a condition message names the host
// namespace: status.hostNamespace names it, and messages that name only
// what a tenant's Namespaces on one Network share are one string in the
// watch cache for all of them (the storage codec interns them).
func sharedMessages(t *testing.T, what string, conditions []metav1.Condition, hostName string) {
	t.Helper()
	for _, c := range conditions {
		if strings.Contains(c.Message, hostName) {
			t.Errorf("%s: %s message %q names the host namespace %s", what, c.Type, c.Message, hostName)
		}
	}
}

// TestReconcileNetworkAttachedUnknown: with its host namespace's name
// taken by someone else, a Namespace is not HostSynced, and whether its
// network is attached is Unknown, even with an attachment in that
// namespace.
func TestReconcileNetworkAttachedUnknown(t *testing.T) {
	src, fakes, tn, ns, reconcile := namespaceFixture(t, "")
	hostName := hostnames.Namespace(tn.Name, tn.UID, ns.Name)
	cudn := hostnames.ClusterUserDefinedNetwork(tn.UID, ns.Spec.Network)
	foreign := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostName}}
	if _, err := fakes.Kube.CoreV1().Namespaces().Create(context.Background(), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Render(t, fakes, hostName, cudn)
	controllertest.Eventually(t, "the informers have the foreign namespace and the attachment", func() bool {
		_, exists, _ := src.HostNamespaces.GetStore().GetByKey(hostName)
		return exists && src.Attached(hostName, cudn)
	})
	reconcile("reconcile with the name taken")
	conds := fakes.Namespaces.Stored(tn.Name, "", ns.Name).(*tenant.Namespace).Status.Conditions
	a, r := meta.FindStatusCondition(conds, tenant.ConditionNetworkAttached), meta.FindStatusCondition(conds, tenant.ConditionReady)
	if conditionTrue(conds, tenant.ConditionHostSynced) || a == nil || a.Status != metav1.ConditionUnknown || a.Reason != ReasonHostNamespacePending ||
		r == nil || r.Status != metav1.ConditionFalse || r.Reason != controller.ReasonHostNameTaken {
		t.Fatalf("conditions %+v; want not HostSynced, NetworkAttached Unknown and Ready False (HostNameTaken)", conds)
	}
}

// TestReconcileReadsItsOwnStatusWrite: a reconcile that runs before the
// informer shows the status the last one wrote (the host namespace's and
// RoleBinding's events queue the Namespace again at once) finds that
// status and writes nothing; once the informer catches up, its copy is
// read again, and a Namespace it no longer has is removed, whatever was
// written.
func TestReconcileReadsItsOwnStatusWrite(t *testing.T) {
	src, fakes, tn, ns, reconcile := namespaceFixture(t, "5")
	ctx := context.Background()
	hostName := hostnames.Namespace(tn.Name, tn.UID, ns.Name)
	reconcile("first reconcile")
	controllertest.Eventually(t, "the informer has the host namespace", func() bool {
		_, exists, _ := src.HostNamespaces.GetStore().GetByKey(hostName)
		return exists
	})
	reconcile("reconcile with the host namespace cached")
	stored := fakes.Namespaces.Stored(tn.Name, "", ns.Name).(*tenant.Namespace)
	if !conditionTrue(stored.Status.Conditions, tenant.ConditionHostSynced) || stored.ResourceVersion != "6" {
		t.Fatalf("stored status %+v at version %s, want HostSynced at 6", stored.Status, stored.ResourceVersion)
	}
	writes := fakes.Namespaces.Updates

	// The informer still has version 5, without a status.
	for i := 0; i < 3; i++ {
		reconcile("reconcile before the informer shows the status")
	}
	if fakes.Namespaces.Updates != writes {
		t.Errorf("%d status updates while the informer lagged, want none: the status written is what is stored", fakes.Namespaces.Updates-writes)
	}

	// The informer shows version 6: its copy is read again, and a status
	// that no longer matches is written.
	caught := stored.DeepCopy()
	caught.Status.Conditions = nil
	controllertest.Uncache(t, src.Namespaces, tn.Name, "", ns.Name)
	controllertest.Cache(t, src.Namespaces, tn.Name, "", caught)
	reconcile("reconcile once the informer caught up")
	if fakes.Namespaces.Updates != writes+1 {
		t.Errorf("%d status updates once the informer showed a status without conditions, want 1", fakes.Namespaces.Updates-writes)
	}

	// Written again, then deleted before the informer showed the write:
	// the Namespace is gone, and so is its host namespace.
	stored = fakes.Namespaces.Stored(tn.Name, "", ns.Name).(*tenant.Namespace)
	stale := stored.DeepCopy()
	stale.ResourceVersion = "6"
	stale.Status.Conditions = nil
	controllertest.Uncache(t, src.Namespaces, tn.Name, "", ns.Name)
	controllertest.Cache(t, src.Namespaces, tn.Name, "", stale)
	reconcile("reconcile that writes the status again")
	fakes.Namespaces.Remove(tn.Name, "", ns.Name)
	controllertest.Uncache(t, src.Namespaces, tn.Name, "", ns.Name)
	reconcile("reconcile of a deleted Namespace")
	if _, err := fakes.Kube.CoreV1().Namespaces().Get(ctx, hostName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("host namespace of a deleted Namespace whose status was just written: %v, want it removed", err)
	}
}

// namespaceFixture is a Namespace controller over fakes with Tenant acme
// (member alice) and its Namespace dev (stored and cached at
// resourceVersion rv), and a func that reconciles dev, requeues allowed.
func namespaceFixture(t *testing.T, rv string) (*controller.Sources, *controllertest.Fakes, *tenant.Tenant, *tenant.Namespace, func(what string)) {
	return namespaceFixtureWith(t, rv, TenantDNS{})
}

// namespaceFixtureWith is namespaceFixture with a controller that knows
// the tenant DNS server dns.
func namespaceFixtureWith(t *testing.T, rv string, dns TenantDNS) (*controller.Sources, *controllertest.Fakes, *tenant.Tenant, *tenant.Namespace, func(what string)) {
	src, fakes := controllertest.NewSources(t)
	c, err := New(src, hostkinds.New(src), dns)
	if err != nil {
		t.Fatal(err)
	}
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"},
		Spec: tenant.TenantSpec{Members: tenant.TenantMembers{Users: []string{"alice"}}}}
	ns := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev", UID: "ns-uid", ResourceVersion: rv,
		Labels: map[string]string{hostnames.TenantLabel: "acme"}}, Spec: tenant.NamespaceSpec{Network: "default"}}
	fakes.Tenants.Put("", "", tn)
	controllertest.Cache(t, src.Tenants, tn.Name, "", tn)
	fakes.Namespaces.Put(tn.Name, "", ns)
	controllertest.Cache(t, src.Namespaces, tn.Name, "", ns)
	key := queue.Key{Tenant: tn.Name, Name: ns.Name}
	reconcile := func(what string) {
		t.Helper()
		var requeue *controller.RequeueError
		if err := c.Reconcile(context.Background(), key); err != nil && !errors.As(err, &requeue) {
			t.Fatalf("%s: %v", what, err)
		}
	}
	return src, fakes, tn, ns, reconcile
}

func hasSubject(b *rbacv1.RoleBinding, name string) bool {
	for _, s := range b.Subjects {
		if s.Name == name {
			return true
		}
	}
	return false
}

func conditionTrue(conditions []metav1.Condition, typ string) bool {
	c := meta.FindStatusCondition(conditions, typ)
	return c != nil && c.Status == metav1.ConditionTrue
}

// TestReconcileComputeQuota drives the Namespace controller over fakes for
// a tenant with compute quota in two Namespaces: each host namespace gets
// the LimitRange and a ResourceQuota whose hard limits are its share (what
// it uses plus what is free of the total), which follows what the other
// namespace's quota reports; without compute quota both go.
func TestReconcileComputeQuota(t *testing.T) {
	src, fakes := controllertest.NewSources(t)
	c, err := New(src, hostkinds.New(src), TenantDNS{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"}}
	tn.Spec.Quota.Compute = list("pods", "4", "requests.cpu", "2")
	fakes.Tenants.Put("", "", tn)
	controllertest.Cache(t, src.Tenants, tn.Name, "", tn)
	hosts := map[string]string{}
	for _, name := range []string{"dev", "qa"} {
		ns := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{hostnames.TenantLabel: "acme"}},
			Spec: tenant.NamespaceSpec{Network: "default"}}
		fakes.Namespaces.Put(tn.Name, "", ns)
		controllertest.Cache(t, src.Namespaces, tn.Name, "", ns)
		hosts[name] = hostnames.Namespace(tn.Name, tn.UID, name)
	}
	reconcileAll := func(what string) {
		t.Helper()
		for _, name := range []string{"dev", "qa"} {
			var requeue *controller.RequeueError
			if err := c.Reconcile(ctx, queue.Key{Tenant: tn.Name, Name: name}); err != nil && !errors.As(err, &requeue) {
				t.Fatalf("%s, %s: %v", what, name, err)
			}
		}
	}
	cached := func(inf cache.SharedIndexInformer, key string) func() bool {
		return func() bool { _, exists, _ := inf.GetStore().GetByKey(key); return exists }
	}
	hard := func(ns string) corev1.ResourceList {
		rq, err := fakes.Kube.CoreV1().ResourceQuotas(hosts[ns]).Get(ctx, hostnames.ComputeQuota, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("ResourceQuota of %s: %v", ns, err)
		}
		return rq.Spec.Hard
	}
	for round := 0; round < 3; round++ { // namespace, RoleBinding, quota objects as each gets cached
		reconcileAll("onboarding")
		for _, h := range hosts {
			controllertest.Eventually(t, "host namespace cached", cached(src.HostNamespaces, h))
		}
	}
	for ns := range hosts {
		if h := hard(ns); h.Pods().Value() != 4 || h.Name(corev1.ResourceRequestsCPU, "").MilliValue() != 2000 {
			t.Errorf("%s's share with nothing used: %v, want the whole total", ns, h)
		}
		lr, err := fakes.Kube.CoreV1().LimitRanges(hosts[ns]).Get(ctx, hostnames.ContainerDefaults, metav1.GetOptions{})
		if err != nil || len(lr.Spec.Limits) != 1 || lr.Spec.Limits[0].DefaultRequest.Cpu().MilliValue() != 100 {
			t.Errorf("%s's LimitRange %+v, %v", ns, lr, err)
		}
	}

	// dev's quota reports 3 pods and 1.5 CPU: qa may have 1 pod and 500m.
	rq, err := fakes.Kube.CoreV1().ResourceQuotas(hosts["dev"]).Get(ctx, hostnames.ComputeQuota, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rq.Status.Used = list("pods", "3", "requests.cpu", "1500m")
	if _, err := fakes.Kube.CoreV1().ResourceQuotas(hosts["dev"]).UpdateStatus(ctx, rq, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informer has dev's usage", func() bool {
		obj, exists, _ := src.HostResourceQuotas.GetStore().GetByKey(hosts["dev"] + "/" + hostnames.ComputeQuota)
		return exists && obj.(*corev1.ResourceQuota).Status.Used.Pods().Value() == 3
	})
	reconcileAll("after dev's pods")
	if h := hard("qa"); h.Pods().Value() != 1 || h.Name(corev1.ResourceRequestsCPU, "").MilliValue() != 500 {
		t.Errorf("qa's share with 3 pods and 1.5 CPU used in dev: %v, want pods 1, requests.cpu 500m", h)
	}
	if h := hard("dev"); h.Pods().Value() != 4 {
		t.Errorf("dev's share: %v, want its use plus what is free", h)
	}

	// No compute quota: both go.
	tn.Spec.Quota.Compute = nil
	fakes.Tenants.Put("", "", tn)
	controllertest.Cache(t, src.Tenants, tn.Name, "", tn)
	reconcileAll("without compute quota")
	for ns, h := range hosts {
		if _, err := fakes.Kube.CoreV1().ResourceQuotas(h).Get(ctx, hostnames.ComputeQuota, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s's ResourceQuota without compute quota: %v", ns, err)
		}
		if _, err := fakes.Kube.CoreV1().LimitRanges(h).Get(ctx, hostnames.ContainerDefaults, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s's LimitRange without compute quota: %v", ns, err)
		}
	}
}

// TestReconcilePriorityClasses checks the host namespace's list of the
// PriorityClasses its pods may name: the tenant's grant and the host's
// default class, kept in step with both and put back when edited.
func TestReconcilePriorityClasses(t *testing.T) {
	src, fakes, tn, _, reconcile := namespaceFixture(t, "")
	ctx := context.Background()
	hostName := hostnames.Namespace(tn.Name, tn.UID, "dev")
	allowed := func() string {
		t.Helper()
		host, err := fakes.Kube.CoreV1().Namespaces().Get(ctx, hostName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v, ok := host.Annotations[hostnames.PriorityClassesAnnotation]
		if !ok {
			t.Fatalf("host namespace has no %s annotation: %v", hostnames.PriorityClassesAnnotation, host.Annotations)
		}
		return v
	}
	cached := func(want string) {
		t.Helper()
		controllertest.Eventually(t, "the informer has the host namespace allowing "+want, func() bool {
			obj, exists, _ := src.HostNamespaces.GetStore().GetByKey(hostName)
			return exists && heldNamespace(t, obj).Annotations[hostnames.PriorityClassesAnnotation] == want
		})
	}

	reconcile("first reconcile")
	if got := allowed(); got != "" {
		t.Errorf("a tenant granted nothing, on a host without a default class, may use %q", got)
	}
	cached("")

	for _, pc := range []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "cluster-default"}, Value: 0, GlobalDefault: true},
		{ObjectMeta: metav1.ObjectMeta{Name: "system-node-critical"}, Value: 2000001000},
	} {
		if _, err := fakes.Kube.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	controllertest.Eventually(t, "the informer has the classes", func() bool { return len(src.HostPriorityClasses.GetStore().List()) == 2 })
	granted := tn.DeepCopy()
	granted.Spec.PriorityClasses = []string{"gold", "batch"}
	fakes.Tenants.Put("", "", granted)
	controllertest.Cache(t, src.Tenants, tn.Name, "", granted)
	reconcile("reconcile with a grant and a default class")
	if got := allowed(); got != "batch,cluster-default,gold" {
		t.Errorf("allowed %q, want the grant and the default class, sorted", got)
	}
	cached("batch,cluster-default,gold")

	// An edit by someone else is put back.
	host, _ := fakes.Kube.CoreV1().Namespaces().Get(ctx, hostName, metav1.GetOptions{})
	host.Annotations[hostnames.PriorityClassesAnnotation] = "batch,cluster-default,gold,system-node-critical"
	if _, err := fakes.Kube.CoreV1().Namespaces().Update(ctx, host, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cached("batch,cluster-default,gold,system-node-critical")
	reconcile("reconcile after the edit")
	if got := allowed(); got != "batch,cluster-default,gold" {
		t.Errorf("allowed %q after repair, want batch,cluster-default,gold", got)
	}
}

// TestRemoveDetachesFirst: the host namespace of a deleted Namespace,
// attached to its network, is first detached (the label its network
// selects it by removed, which OVN-Kubernetes acts on by removing its
// attachment) and deleted once the attachment is gone; with no attachment,
// it is deleted at once.
func TestRemoveDetachesFirst(t *testing.T) {
	src, fakes, tn, ns, reconcile := namespaceFixture(t, "")
	ctx := context.Background()
	hostName := hostnames.Namespace(tn.Name, tn.UID, ns.Name)
	cudn := hostnames.ClusterUserDefinedNetwork(tn.UID, ns.Spec.Network)
	namespaces := fakes.Kube.CoreV1().Namespaces()
	cached := func(what string, check func(*corev1.Namespace) bool) {
		t.Helper()
		controllertest.Eventually(t, what, func() bool {
			obj, exists, _ := src.HostNamespaces.GetStore().GetByKey(hostName)
			return exists && check(heldNamespace(t, obj))
		})
	}
	reconcile("first reconcile")
	cached("the informer has the host namespace", func(*corev1.Namespace) bool { return true })
	controllertest.Render(t, fakes, hostName, cudn)
	controllertest.Eventually(t, "the informer has the attachment", func() bool { return src.Attached(hostName, cudn) })

	// The Namespace is deleted.
	fakes.Namespaces.Remove(tn.Name, "", ns.Name)
	controllertest.Uncache(t, src.Namespaces, tn.Name, "", ns.Name)
	reconcile("reconcile of the deleted Namespace")
	host, err := namespaces.Get(ctx, hostName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("host namespace deleted while attached: %v", err)
	}
	if _, ok := host.Labels[hostnames.HostNetworkLabel]; ok || !strings.HasPrefix(host.Annotations[hostnames.DetachedAnnotation], cudn+" ") {
		t.Fatalf("host namespace not detached first: labels %v, annotations %v", host.Labels, host.Annotations)
	}
	cached("the informer has the detached namespace", func(h *corev1.Namespace) bool { return h.Labels[hostnames.HostNetworkLabel] == "" })
	reconcile("reconcile while the attachment is still there")
	if _, err := namespaces.Get(ctx, hostName, metav1.GetOptions{}); err != nil {
		t.Fatalf("host namespace deleted before its attachment went: %v", err)
	}

	// OVN-Kubernetes removes the attachment: the namespace goes.
	if err := fakes.Metadata.Resource(controller.NetworkAttachmentDefinitions).Namespace(hostName).Delete(ctx, cudn, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informer saw the attachment go", func() bool {
		_, exists, _ := src.HostNetworkAttachments.GetStore().GetByKey(hostName + "/" + cudn)
		return !exists
	})
	reconcile("reconcile once the attachment is gone")
	if _, err := namespaces.Get(ctx, hostName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("host namespace after its attachment went: %v, want it deleted", err)
	}
}

// heldNamespace reads obj, the informer's host namespace, as a namespace;
// the informer holds it as a host.HeldNamespace.
func heldNamespace(t *testing.T, obj interface{}) *corev1.Namespace {
	t.Helper()
	if _, held := obj.(*hostapi.HeldNamespace); !held {
		t.Fatalf("the informer holds a %T, want a *host.HeldNamespace", obj)
	}
	ns, err := hostapi.HeldNamespaceOf(obj)
	if err != nil {
		t.Fatal(err)
	}
	return ns
}
