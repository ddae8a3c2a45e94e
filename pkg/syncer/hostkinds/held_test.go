package hostkinds_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/namespace"
)

// membersBinding is the members RoleBinding of tenant Namespace "web" of
// tenant acme, as the syncer wants it.
func membersBinding(tn *tenant.Tenant) (*rbacv1.RoleBinding, hostnames.Marks) {
	marks := hostnames.Marks{Tenant: tn.Name, TenantUID: tn.UID, KindLabel: hostnames.NamespaceLabel, Name: "web", OwnerUID: "web-uid"}
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: hostnames.MembersRoleBinding, Namespace: "t-acme-web", Labels: marks.Labels(), Annotations: marks.Annotations()},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects:   namespace.MembersSubjects(tn),
	}, marks
}

// TestHeldRoleBindingsRepairTheHostsWholeObject: the informer of the
// members RoleBindings holds only what the syncer compares of each
// (host.HeldRoleBinding). A RoleBinding whose subjects someone changed is
// repaired on the object read from the host, so that what the informer
// does not hold (a finalizer, an owner reference) and what others added (a
// label) stay; one the informer shows changed while the host's object
// already matches again is not written; and one someone else took after
// the version the informer shows is left alone.
func TestHeldRoleBindingsRepairTheHostsWholeObject(t *testing.T) {
	ctx := context.Background()
	src, f, pass := laggingHost(t, rbacv1.SchemeGroupVersion.WithResource("rolebindings"))
	kind := hostkinds.New(src).RoleBindings
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"}, Spec: tenant.TenantSpec{Members: tenant.TenantMembers{Users: []string{"alice"}}}}
	want, marks := membersBinding(tn)
	api := f.Kube.RbacV1().RoleBindings(want.Namespace)
	key := want.Namespace + "/" + want.Name
	cachedVersion := func() string {
		obj, exists, _ := src.HostRoleBindings.GetStore().GetByKey(key)
		if !exists {
			return ""
		}
		if _, held := obj.(*host.HeldRoleBinding); !held {
			t.Fatalf("the informer holds a %T, want a *host.HeldRoleBinding", obj)
		}
		return obj.(*host.HeldRoleBinding).GetResourceVersion()
	}
	// write changes the RoleBinding on the host and lets the informer
	// show it when shown.
	write := func(rb *rbacv1.RoleBinding, shown bool) *rbacv1.RoleBinding {
		t.Helper()
		out, err := api.Update(ctx, rb, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if shown {
			pass <- struct{}{}
			controllertest.Eventually(t, "the informer shows version "+out.ResourceVersion, func() bool { return cachedVersion() == out.ResourceVersion })
		}
		return out
	}
	updates := func() int {
		n := 0
		for _, a := range f.Kube.Actions() {
			if _, ok := a.(clienttesting.UpdateAction); ok && a.GetResource().Resource == "rolebindings" {
				n++
			}
		}
		return n
	}
	ensure := func(what string) error {
		t.Helper()
		got, err := kind.Ensure(ctx, want.DeepCopy(), marks)
		if err == nil && !got.Synced {
			t.Fatalf("%s: not synced: %s", what, got.Message)
		}
		return err
	}

	if err := ensure("create"); err != nil {
		t.Fatal(err)
	}
	created, err := api.Get(ctx, want.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pass <- struct{}{}
	controllertest.Eventually(t, "the informer holds the RoleBinding", func() bool { return cachedVersion() == created.ResourceVersion })

	// Someone adds a finalizer, an owner reference and a label, and
	// drops a subject.
	changed := created.DeepCopy()
	changed.Finalizers = []string{"example.com/audit"}
	changed.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "audit", UID: "cm-uid"}}
	changed.Labels["example.com/team"] = "platform"
	changed.Subjects = changed.Subjects[:1]
	changed = write(changed, true)
	if rb, _ := kind.Cached(want.Namespace, want.Name); rb.Finalizers != nil || rb.OwnerReferences != nil || len(rb.Subjects) != 1 {
		t.Fatalf("the informer holds %+v, subjects %v: want no finalizers or owner references, one subject", rb.ObjectMeta, rb.Subjects)
	}
	before := updates()
	if err := ensure("repair"); err != nil {
		t.Fatal(err)
	}
	if n := updates() - before; n != 1 {
		t.Errorf("the repair made %d updates, want 1", n)
	}
	repaired, err := api.Get(ctx, want.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(repaired.Subjects, want.Subjects) || !marks.On(repaired) {
		t.Errorf("not repaired: subjects %v (want %v), labels %v, annotations %v", repaired.Subjects, want.Subjects, repaired.Labels, repaired.Annotations)
	}
	if !slices.Equal(repaired.Finalizers, changed.Finalizers) || len(repaired.OwnerReferences) != 1 || repaired.Labels["example.com/team"] != "platform" {
		t.Errorf("the repair dropped what others set: finalizers %v, owner references %v, labels %v", repaired.Finalizers, repaired.OwnerReferences, repaired.Labels)
	}
	pass <- struct{}{}
	controllertest.Eventually(t, "the informer shows the repair", func() bool { return cachedVersion() == repaired.ResourceVersion })

	// The informer shows a drift the host's object no longer has: it is
	// read from the host, and nothing is written.
	drifted := repaired.DeepCopy()
	drifted.Subjects = drifted.Subjects[:1]
	drifted = write(drifted, true)
	back := drifted.DeepCopy()
	back.Subjects = want.Subjects
	back = write(back, false)
	before = updates()
	if err := ensure("a drift the host no longer has"); err != nil {
		t.Fatal(err)
	}
	if n := updates() - before; n != 0 {
		t.Errorf("a RoleBinding the host has as wanted was written %d times", n)
	}

	// Someone else takes it after the version the informer shows (which
	// shows a drift): nothing is written, and the key is looked at again.
	pass <- struct{}{}
	controllertest.Eventually(t, "the informer is back in step", func() bool { return cachedVersion() == back.ResourceVersion })
	drifted = back.DeepCopy()
	drifted.Subjects = drifted.Subjects[:1]
	drifted = write(drifted, true)
	taken := drifted.DeepCopy()
	taken.Annotations[hostnames.OwnerUIDAnnotation] = "someone-else"
	write(taken, false)
	before = updates()
	err = ensure("a RoleBinding someone else took")
	var requeue *controller.RequeueError
	if !errors.As(err, &requeue) {
		t.Errorf("ensure on a RoleBinding someone else took: %v, want a requeue", err)
	}
	if n := updates() - before; n != 0 {
		t.Errorf("a RoleBinding someone else took was written %d times", n)
	}
}
