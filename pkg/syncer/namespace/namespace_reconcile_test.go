package namespace

import (
	"context"
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
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
	src, fakes := controllertest.NewSources(t)
	c, err := New(src)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"},
		Spec: tenant.TenantSpec{Members: tenant.TenantMembers{Users: []string{"alice"}}}}
	ns := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev", UID: "ns-uid", Labels: map[string]string{hostnames.TenantLabel: "acme"}},
		Spec: tenant.NamespaceSpec{Network: "default"}}
	fakes.Tenants.Put("", "", tn)
	controllertest.Cache(t, src.Tenants, tn.Name, "", tn)
	fakes.Namespaces.Put(tn.Name, "", ns)
	controllertest.Cache(t, src.Namespaces, tn.Name, "", ns)
	key := queue.Key{Tenant: tn.Name, Name: ns.Name}
	hostName := hostnames.Namespace(tn.Name, tn.UID, ns.Name)
	namespaces, bindings := fakes.Kube.CoreV1().Namespaces(), fakes.Kube.RbacV1().RoleBindings(hostName)
	status := func() tenant.NamespaceStatus {
		return fakes.Namespaces.Stored(tn.Name, "", ns.Name).(*tenant.Namespace).Status
	}
	cachedBinding := func(check func(*rbacv1.RoleBinding) bool) func() bool {
		return func() bool {
			obj, exists, _ := src.HostRoleBindings.GetStore().GetByKey(hostName + "/" + hostnames.MembersRoleBinding)
			return exists && check(obj.(*rbacv1.RoleBinding))
		}
	}
	reconcile := func(what string) {
		t.Helper()
		var requeue *controller.RequeueError
		if err := c.Reconcile(ctx, key); err != nil && !errors.As(err, &requeue) {
			t.Fatalf("%s: %v", what, err)
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
		return obj.(*corev1.Namespace).Labels["provider.example/team"] == "blue" &&
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
