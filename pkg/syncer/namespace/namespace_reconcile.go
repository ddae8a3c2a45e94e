package namespace

import (
	"context"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// takenRecheck is how often a Namespace whose host name is taken by
// someone else's namespace looks again (that namespace carries none of our
// labels, so no host event tells when it goes).
const takenRecheck = 10 * time.Second

// outcome is what a reconcile found, for the status.
type outcome struct {
	active  bool // the host namespace is ours and not terminating
	synced  bool
	reason  string
	message string
}

func (c *Controller) reconcile(ctx context.Context, key queue.Key) error {
	logger := klog.FromContext(ctx).WithValues("tenant", key.Tenant, "namespace", key.Name)
	ctx = klog.NewContext(ctx, logger)
	obj, exists, err := c.src.Tenants.GetStore().GetByKey(key.Tenant)
	if err != nil || !exists {
		return err // no Tenant: the periodic check removes what is left
	}
	t := obj.(*tenant.Tenant)
	if t.DeletionTimestamp != nil {
		return nil // offboarding removes everything of the tenant
	}
	hostName := hostnames.Namespace(t.Name, t.UID, key.Name)
	obj, exists, err = c.src.Namespaces.GetStore().GetByKey(controller.ObjectKey(key.Tenant, "", key.Name))
	if err != nil {
		return err
	}
	if !exists {
		return c.removeHostNamespace(ctx, t, key.Name, hostName)
	}
	ns := obj.(*tenant.Namespace)

	var out outcome
	if err := c.src.Health.Err(); err != nil {
		out = outcome{reason: controller.ReasonHostUnreachable, message: err.Error()}
	} else {
		out, err = c.sync(ctx, t, ns, hostName)
		if err != nil {
			out = outcome{reason: controller.ReasonHostError, message: err.Error()}
			if controller.Unreachable(err) {
				out.reason = controller.ReasonHostUnreachable
			}
		}
	}
	if serr := c.setStatus(ctx, t.Name, ns, hostName, out); serr != nil {
		return serr
	}
	if err != nil {
		return err
	}
	if !out.synced && out.reason == controller.ReasonHostNameTaken {
		return controller.Requeue(takenRecheck, "host namespace %s is taken", hostName)
	}
	if !out.synced && out.reason == controller.ReasonWaiting {
		return controller.Requeue(time.Second, "%s", out.message)
	}
	return nil
}

// sync makes the host namespace and its RoleBinding match ns.
func (c *Controller) sync(ctx context.Context, t *tenant.Tenant, ns *tenant.Namespace, hostName string) (outcome, error) {
	marks := hostnames.Marks{Tenant: t.Name, TenantUID: t.UID, KindLabel: hostnames.NamespaceLabel, Name: ns.Name, OwnerUID: ns.UID}
	out, err := c.syncNamespace(ctx, marks, t, ns, hostName)
	if err != nil || !out.synced {
		return out, err
	}
	return c.syncRoleBinding(ctx, marks, t, hostName)
}

// wantNamespaceLabels are the labels of the host namespace of ns in
// tenant t: the marks, the primary network by tenant name and by host name
// (which the network's ClusterUserDefinedNetwork and EgressIP select by),
// the label that makes OVN-Kubernetes give the namespace a primary
// user-defined network, and the tenant's Pod Security level; all are set
// when the namespace is created, and the level follows the Tenant.
func wantNamespaceLabels(marks hostnames.Marks, t *tenant.Tenant, ns *tenant.Namespace) map[string]string {
	l := marks.Labels()
	l[hostnames.NetworkLabel] = ns.Spec.Network
	l[hostnames.HostNetworkLabel] = hostnames.ClusterUserDefinedNetwork(marks.TenantUID, ns.Spec.Network)
	l[hostnames.PrimaryUDNLabel] = ""
	level := string(PodSecurityLevel(t))
	l[hostnames.PodSecurityEnforceLabel] = level
	l[hostnames.PodSecurityAuditLabel] = level
	l[hostnames.PodSecurityWarnLabel] = level
	l[hostnames.OpenShiftPodSecurityLabelSync] = "false"
	return l
}

// PodSecurityLevel is the Pod Security Standard level of t's host
// namespaces: its spec's, and restricted for anything else, so that no
// value (an object stored before the field existed, or one that validation
// would refuse) ever lowers it.
func PodSecurityLevel(t *tenant.Tenant) tenant.PodSecurityLevel {
	if t.Spec.PodSecurity.Level == tenant.PodSecurityLevelBaseline {
		return tenant.PodSecurityLevelBaseline
	}
	return tenant.PodSecurityLevelRestricted
}

func (c *Controller) syncNamespace(ctx context.Context, marks hostnames.Marks, t *tenant.Tenant, ns *tenant.Namespace, hostName string) (outcome, error) {
	wantLabels := wantNamespaceLabels(marks, t, ns)
	var host *corev1.Namespace
	if obj, exists, err := c.src.HostNamespaces.GetStore().GetByKey(hostName); err != nil {
		return outcome{}, err
	} else if exists {
		host = obj.(*corev1.Namespace)
	} else {
		created := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostName, Labels: wantLabels, Annotations: marks.Annotations()}}
		_, err := c.src.Host.CoreV1().Namespaces().Create(ctx, created, metav1.CreateOptions{FieldManager: controller.FieldManager})
		switch {
		case err == nil:
			klog.FromContext(ctx).V(2).Info("Created host namespace", "hostNamespace", hostName)
			return outcome{active: true, synced: true}, nil
		case !apierrors.IsAlreadyExists(err):
			return outcome{}, err
		}
		// Someone else's namespace (it carries no tenant label, so the
		// informer does not have it), or ours not cached yet.
		if host, err = c.src.Host.CoreV1().Namespaces().Get(ctx, hostName, metav1.GetOptions{}); err != nil {
			return outcome{}, err
		}
	}

	if !hostnames.OwnedBy(host, ns.UID) {
		return c.foreignNamespace(ctx, marks, host)
	}
	if host.DeletionTimestamp != nil {
		return outcome{reason: controller.ReasonWaiting,
			message: fmt.Sprintf("host namespace %s is terminating; it is created again once it is gone", hostName)}, nil
	}
	if !contains(host.Labels, wantLabels) || !marks.On(host) {
		repaired := host.DeepCopy()
		marks.Apply(repaired)
		for k, v := range wantLabels {
			repaired.Labels[k] = v
		}
		if _, err := c.src.Host.CoreV1().Namespaces().Update(ctx, repaired, metav1.UpdateOptions{FieldManager: controller.FieldManager}); err != nil {
			return outcome{}, err
		}
		klog.FromContext(ctx).Info("Repaired host namespace labels", "hostNamespace", hostName)
	}
	return outcome{active: true, synced: true}, nil
}

// foreignNamespace handles a host namespace with the would-be name that is
// not this Namespace's. A namespace the syncer made for an earlier
// Namespace of the same name (of this tenant, or of a former tenant of
// the same name) belongs to an object that no longer exists: it is
// deleted, and the new one made when it is gone. Anything else is someone
// else's and left alone.
func (c *Controller) foreignNamespace(ctx context.Context, marks hostnames.Marks, host *corev1.Namespace) (outcome, error) {
	found, ours := hostnames.MarksOf(host, hostnames.NamespaceLabel)
	if !ours || found.Tenant != marks.Tenant || found.Name != marks.Name {
		return outcome{reason: controller.ReasonHostNameTaken, message: fmt.Sprintf(
			"host namespace %s exists and was not made for this Namespace; it is left untouched: "+
				"the provider must remove or rename it", host.Name)}, nil
	}
	if host.DeletionTimestamp == nil {
		if err := deleteNamespace(ctx, c.src, host); err != nil {
			return outcome{}, err
		}
		klog.FromContext(ctx).Info("Deleted host namespace of a former Namespace", "hostNamespace", host.Name, "ownerUID", found.OwnerUID)
	}
	return outcome{reason: controller.ReasonWaiting, message: fmt.Sprintf(
		"host namespace %s of a former Namespace %s is being deleted; this one is created once it is gone", host.Name, marks.Name)}, nil
}

func deleteNamespace(ctx context.Context, src *controller.Sources, host *corev1.Namespace) error {
	uid := host.UID
	err := src.Host.CoreV1().Namespaces().Delete(ctx, host.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or replaced by another object: not ours to delete
	}
	return err
}

// removeHostNamespace deletes the host namespace of a tenant Namespace
// that no longer exists, if the syncer made it for a Namespace of that name.
func (c *Controller) removeHostNamespace(ctx context.Context, t *tenant.Tenant, name, hostName string) error {
	obj, exists, err := c.src.HostNamespaces.GetStore().GetByKey(hostName)
	if err != nil || !exists {
		return err
	}
	host := obj.(*corev1.Namespace)
	found, ours := hostnames.MarksOf(host, hostnames.NamespaceLabel)
	if !ours || found.Tenant != t.Name || found.Name != name || host.DeletionTimestamp != nil {
		return nil
	}
	// The informer may lag behind a Namespace just created again: only a
	// Namespace that is not in storage either is gone.
	if live, err := c.getNamespace(ctx, t.Name, name); err != nil {
		return err
	} else if live != nil && live.UID == found.OwnerUID {
		return nil
	}
	klog.FromContext(ctx).Info("Deleting host namespace of a deleted Namespace", "hostNamespace", hostName)
	return deleteNamespace(ctx, c.src, host)
}

func (c *Controller) getNamespace(ctx context.Context, t, name string) (*tenant.Namespace, error) {
	obj, err := c.src.Storage.Namespaces.Store.Get(tenancy.WithTenant(ctx, t), name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return obj.(*tenant.Namespace), nil
}

// MembersSubjects are the subjects of a tenant's members RoleBinding: its
// users and groups, and the host group "tenant.io:<tenant>".
func MembersSubjects(t *tenant.Tenant) []rbacv1.Subject {
	var subjects []rbacv1.Subject
	for _, u := range t.Spec.Members.Users {
		subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
	}
	for _, g := range append(append([]string{}, t.Spec.Members.Groups...), tenancy.GroupPrefix+t.Name) {
		subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g})
	}
	return subjects
}

var adminRole = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"}

func (c *Controller) syncRoleBinding(ctx context.Context, marks hostnames.Marks, t *tenant.Tenant, hostName string) (outcome, error) {
	want := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: hostnames.MembersRoleBinding, Namespace: hostName, Labels: marks.Labels(), Annotations: marks.Annotations()},
		RoleRef:    adminRole,
		Subjects:   MembersSubjects(t),
	}
	client := c.src.Host.RbacV1().RoleBindings(hostName)
	obj, exists, err := c.src.HostRoleBindings.GetStore().GetByKey(hostName + "/" + hostnames.MembersRoleBinding)
	if err != nil {
		return outcome{}, err
	}
	if !exists {
		_, err := client.Create(ctx, want, metav1.CreateOptions{FieldManager: controller.FieldManager})
		if err == nil {
			return outcome{active: true, synced: true}, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return outcome{}, err
		}
		if obj, err = client.Get(ctx, want.Name, metav1.GetOptions{}); err != nil {
			return outcome{}, err
		}
	}
	have := obj.(*rbacv1.RoleBinding)
	if !hostnames.OwnedBy(have, marks.OwnerUID) {
		return outcome{active: true, reason: controller.ReasonHostNameTaken, message: fmt.Sprintf(
			"RoleBinding %s/%s exists and was not made for this Namespace; it is left untouched", hostName, want.Name)}, nil
	}
	switch {
	case have.RoleRef != want.RoleRef:
		// roleRef is immutable: replace the binding.
		uid := have.UID
		if err := client.Delete(ctx, have.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
			return outcome{}, err
		}
		return outcome{active: true, reason: controller.ReasonWaiting, message: "replacing RoleBinding " + want.Name}, nil
	case !reflect.DeepEqual(have.Subjects, want.Subjects) || !marks.On(have):
		repaired := have.DeepCopy()
		repaired.Subjects = want.Subjects
		marks.Apply(repaired)
		if _, err := client.Update(ctx, repaired, metav1.UpdateOptions{FieldManager: controller.FieldManager}); err != nil {
			return outcome{}, err
		}
		klog.FromContext(ctx).V(2).Info("Updated members RoleBinding", "hostNamespace", hostName)
	}
	return outcome{active: true, synced: true}, nil
}

// setStatus records out in the Namespace's status.
func (c *Controller) setStatus(ctx context.Context, t string, ns *tenant.Namespace, hostName string, out outcome) error {
	reason, message := out.reason, out.message
	if out.synced {
		reason, message = controller.ReasonSynced, "host namespace "+hostName+" and its members RoleBinding match"
	}
	mutate := func(obj runtime.Object) bool {
		live := obj.(*tenant.Namespace)
		if live.UID != ns.UID {
			return false
		}
		s := &live.Status
		changed := s.HostNamespace != hostName
		s.HostNamespace = hostName
		phase := tenant.NamespacePhasePending
		if out.active {
			phase = tenant.NamespacePhaseActive
		}
		if live.DeletionTimestamp != nil {
			phase = tenant.NamespacePhaseTerminating
		}
		changed = changed || s.Phase != phase
		s.Phase = phase
		if s.ObservedGeneration != live.Generation {
			s.ObservedGeneration, changed = live.Generation, true
		}
		changed = controller.SetCondition(&s.Conditions, live.Generation, tenant.ConditionHostSynced, out.synced, reason, message) || changed
		changed = controller.SetCondition(&s.Conditions, live.Generation, tenant.ConditionReady, out.synced, reason, message) || changed
		return changed
	}
	// Most reconciles find everything as it was: the cached copy tells,
	// without a read of the storage.
	if !mutate(ns.DeepCopy()) {
		return nil
	}
	return controller.UpdateStatus(ctx, c.src.Storage.Namespaces.StatusStore, t, "", ns.Name, mutate)
}

func contains(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}
