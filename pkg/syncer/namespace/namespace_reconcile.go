package namespace

import (
	"context"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	hostapi "tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// details are what a sync reports besides the conditions: whether the
// host namespace is ours and not terminating (the Namespace's phase).
type details struct{ active bool }

type outcome = controller.Outcome[details]

// sync makes the host namespace and its RoleBinding match ns.
func (c *Controller) sync(ctx context.Context, t *tenant.Tenant, ns *tenant.Namespace, _ queue.Key) (outcome, error) {
	hostName := hostnames.Namespace(t.Name, t.UID, ns.Name)
	marks := hostnames.Marks{Tenant: t.Name, TenantUID: t.UID, KindLabel: hostnames.NamespaceLabel, Name: ns.Name, OwnerUID: ns.UID, ChangedBy: hostnames.ChangedBy(ns)}
	out, err := c.syncNamespace(ctx, marks, t, ns, hostName)
	if err != nil || !out.Synced {
		return out, err
	}
	if out, err = c.syncRoleBinding(ctx, marks, t, hostName); err != nil || !out.Synced {
		return out, err
	}
	if out, err = c.syncComputeQuota(ctx, marks, t, hostName); err != nil || !out.Synced {
		return out, err
	}
	if hard(t) && c.dns.Address == "" {
		// Everything else is in place; the isolation the Tenant asks for
		// is not, and the status says so rather than claim it.
		out.Synced, out.Reason = false, ReasonNoTenantDNS
		out.Message = "the Tenant's isolation is Hard, and tenant-apiserver was started without --tenant-dns-address: " +
			"host namespace " + hostName + " keeps the nameserver it had, if any"
	}
	return out, nil
}

// wantNamespaceLabels are the labels of the host namespace of ns in
// tenant t: the marks, the primary network by tenant name and by host name
// (which the network's ClusterUserDefinedNetwork and EgressIP select by),
// the label that makes OVN-Kubernetes give the namespace a primary
// user-defined network, the tenant's Pod Security level and isolation
// (which tenant-dns reads); all are set when the namespace is created, and
// the level and isolation follow the Tenant.
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
	l[hostnames.IsolationLabel] = string(tenant.TenantIsolationSoft)
	if t.Spec.Isolation == tenant.TenantIsolationHard {
		l[hostnames.IsolationLabel] = string(tenant.TenantIsolationHard)
	}
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
	annotations := marks.Annotations()
	annotations[hostnames.PriorityClassesAnnotation] = strings.Join(c.src.PriorityClassesAllowed(t), ",")
	annotations[hostnames.RouteDomainsAnnotation] = t.Status.RouteDomain
	var have *corev1.Namespace
	if obj, exists, err := c.src.HostNamespaces.GetStore().GetByKey(hostName); err == nil && exists {
		if have, err = hostapi.HeldNamespaceOf(obj); err != nil {
			return outcome{}, err
		}
	}
	for k, v := range c.dns.annotations(t, ns, have) {
		annotations[k] = v
	}
	want := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostName, Labels: wantNamespaceLabels(marks, t, ns), Annotations: annotations}}
	got, err := c.kinds.HostNamespaces.Ensure(ctx, want, marks)
	if err != nil {
		return outcome{}, err
	}
	return outcome{Synced: got.Synced, Reason: got.Reason, Message: got.Message, Details: details{active: got.Synced}}, nil
}

// removeHostNamespace deletes the host namespace of a tenant Namespace
// that no longer exists, if the syncer made it for a Namespace of that name.
func (c *Controller) removeHostNamespace(ctx context.Context, t *tenant.Tenant, key queue.Key) error {
	name, hostName := key.Name, hostnames.Namespace(t.Name, t.UID, key.Name)
	obj, exists, err := c.src.HostNamespaces.GetStore().GetByKey(hostName)
	if err != nil || !exists {
		return err
	}
	host := obj.(metav1.Object)
	found, ours := hostnames.MarksOf(host, hostnames.NamespaceLabel)
	if !ours || found.Tenant != t.Name || found.Name != name || host.GetDeletionTimestamp() != nil {
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
	_, err = c.kinds.HostNamespaces.Remove(ctx, "", hostName, found)
	return err
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
// users and groups, the host group "tenant.io:<tenant>" and its group in
// the identity layer, "tenant.io-<tenant>" (tenancy.TenantGroups).
func MembersSubjects(t *tenant.Tenant) []rbacv1.Subject {
	var subjects []rbacv1.Subject
	for _, u := range t.Spec.Members.Users {
		subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
	}
	for _, g := range append(append([]string{}, t.Spec.Members.Groups...), tenancy.TenantGroups(t.Name)...) {
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
	got, err := c.kinds.RoleBindings.Ensure(ctx, want, marks)
	if err != nil {
		return outcome{}, err
	}
	return outcome{Synced: got.Synced, Reason: got.Reason, Message: got.Message, Details: details{active: true}}, nil
}

// Reasons of a Namespace's NetworkAttached condition, and of its Ready
// condition when that is all it waits for.
const (
	// ReasonAttached: OVN-Kubernetes rendered the Network into the host
	// namespace.
	ReasonAttached = "Attached"
	// ReasonAttachmentPending: it has not yet.
	ReasonAttachmentPending = "AttachmentPending"
	// ReasonHostNamespacePending: the host namespace is not synced, so
	// there is nothing to attach yet.
	ReasonHostNamespacePending = "HostNamespacePending"
	// ReasonNetworkNotAttached is Ready's reason while the Namespace is
	// HostSynced and not NetworkAttached.
	ReasonNetworkNotAttached = "NetworkNotAttached"
)

// attachment is the NetworkAttached condition (without its generation) of
// a Namespace whose host namespace hostName is to be attached to host
// network cudn, when the host namespace is synced or not.
//
// Its messages, like HostSynced's, name what every Namespace of the tenant
// on that Network shares, never the host namespace (status.hostNamespace
// names it; OVN-Kubernetes' attachment there is named after the network):
// the storage codec interns condition messages, so that the watch cache
// holds one copy of them for all those Namespaces instead of one for each.
func (c *Controller) attachment(synced bool, hostName, cudn string) metav1.Condition {
	switch {
	case !synced:
		return metav1.Condition{Type: tenant.ConditionNetworkAttached, Status: metav1.ConditionUnknown, Reason: ReasonHostNamespacePending,
			Message: "the host namespace is not synced"}
	case c.src.Attached(hostName, cudn):
		return metav1.Condition{Type: tenant.ConditionNetworkAttached, Status: metav1.ConditionTrue, Reason: ReasonAttached,
			Message: "OVN-Kubernetes rendered ClusterUserDefinedNetwork " + cudn + " into the host namespace (its NetworkAttachmentDefinition " + cudn + ")"}
	}
	return metav1.Condition{Type: tenant.ConditionNetworkAttached, Status: metav1.ConditionFalse, Reason: ReasonAttachmentPending,
		Message: "OVN-Kubernetes has not rendered ClusterUserDefinedNetwork " + cudn + " into the host namespace yet (no NetworkAttachmentDefinition " + cudn +
			" there): no pod of the namespace can start until it has"}
}

// statusProbe is the copy of ns that a status is tried on first: no deep
// copy, since setStatus reads the UID, generation and deletion time, and
// changes the status alone.
func statusProbe(ns *tenant.Namespace) *tenant.Namespace {
	probe := &tenant.Namespace{
		ObjectMeta: metav1.ObjectMeta{UID: ns.UID, Generation: ns.Generation, DeletionTimestamp: ns.DeletionTimestamp},
		Status:     ns.Status,
	}
	probe.Status.Conditions = slices.Clone(ns.Status.Conditions)
	return probe
}

// setStatus records out in the Namespace's status: HostSynced, whether
// OVN-Kubernetes has attached the host namespace to the Namespace's
// Network (NetworkAttached), and Ready (both).
func (c *Controller) setStatus(t *tenant.Tenant, _ queue.Key, ns *tenant.Namespace, out outcome) func(*tenant.Namespace) bool {
	hostName := hostnames.Namespace(t.Name, t.UID, ns.Name)
	reason, message := out.Reason, out.Message
	if out.Synced {
		reason, message = controller.ReasonSynced, "the host namespace and its members RoleBinding match"
		switch {
		case len(t.Spec.Quota.Compute) > 0:
			message += ", and its quota share and container defaults"
		case len(t.Spec.Quota.Objects) > 0:
			message += ", and its quota share"
		}
	}
	attached := c.attachment(out.Synced, hostName, hostnames.ClusterUserDefinedNetwork(t.UID, ns.Spec.Network))
	return func(live *tenant.Namespace) bool {
		s := &live.Status
		changed := s.HostNamespace != hostName
		s.HostNamespace = hostName
		phase := tenant.NamespacePhasePending
		if out.Details.active {
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
		changed = controller.SetCondition(&s.Conditions, live.Generation, tenant.ConditionHostSynced, out.Synced, reason, message) || changed
		a := attached
		a.ObservedGeneration = live.Generation
		changed = meta.SetStatusCondition(&s.Conditions, a) || changed
		ready, readyReason, readyMessage := out.Synced, reason, message
		if out.Synced && a.Status != metav1.ConditionTrue {
			ready, readyReason, readyMessage = false, ReasonNetworkNotAttached, a.Message
		}
		changed = controller.SetCondition(&s.Conditions, live.Generation, tenant.ConditionReady, ready, readyReason, readyMessage) || changed
		return changed
	}
}
