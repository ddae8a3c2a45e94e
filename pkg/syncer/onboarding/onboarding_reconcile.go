package onboarding

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
	"tenant.io/tenant-apiserver/pkg/syncer/quotausage"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// SyncerUser is who the syncer is when it creates tenant objects in
// process (a tenant's Namespace "default"), for audit and managed fields.
var SyncerUser = &user.DefaultInfo{Name: "system:tenant-apiserver:syncer"}

// outcome is what a sync of a Tenant found.
type outcome = controller.Outcome[details]

// prepare onboards a Tenant that is not yet, and offboards one being
// deleted; either is all its reconcile does.
func (c *Controller) prepare(ctx context.Context, t *tenant.Tenant) (bool, error) {
	switch {
	case t.DeletionTimestamp != nil:
		return true, c.offboard(ctx, t)
	case !hasFinalizer(t):
		return true, c.onboard(ctx, t)
	}
	return false, nil
}

// gone leaves what a Tenant that no longer exists had on the host: its
// finalizer kept it until offboarding removed it all, and the checker
// removes what one deleted otherwise left.
func (c *Controller) gone(context.Context, *tenant.Tenant, queue.Key) error { return nil }

// sync makes the host objects of onboarded Tenant t match, and reports
// what is missing; a Namespace created moments ago has t looked at again
// once it should have been synced.
func (c *Controller) sync(ctx context.Context, _ *tenant.Tenant, t *tenant.Tenant, _ queue.Key) (outcome, error) {
	var problems []string
	pending, recheck := c.pendingNamespaces(t, time.Now())
	problems = append(problems, pending...)
	problems = append(problems, c.networks(t)...)
	metallbProblems, err := c.syncMetalLB(ctx, t, c.poolNamespaces(t))
	if err != nil {
		return outcome{}, err
	}
	problems = append(problems, metallbProblems...)
	flowProblem, err := c.syncFlowSchema(ctx, t)
	if err != nil {
		return outcome{}, fmt.Errorf("FlowSchema %s: %w", FlowSchemaName(t.Name), err)
	}
	if flowProblem != "" {
		problems = append(problems, flowProblem)
	}
	id, err := c.syncIdentity(ctx, t)
	if err != nil {
		return outcome{}, err
	}
	var lookAgain time.Duration
	if id.known && !id.synced {
		problems = append(problems, id.message)
		lookAgain = identityRecheck
	}
	if len(problems) > 0 {
		return outcome{Reason: controller.ReasonHostObjectsMissing, Message: summarize(problems), Details: details{identity: id}, RequeueAfter: lookAgain}, nil
	}
	// No counts in the message: it would change, and be written, with
	// every Namespace the tenant creates.
	return outcome{Synced: true, Reason: controller.ReasonSynced, Message: syncedMessage, RequeueAfter: recheck, Details: details{identity: id}}, nil
}

// syncedMessage is the message of a Tenant's HostSynced and Ready
// conditions when they are True.
var syncedMessage = fmt.Sprintf("the host namespaces, their RoleBindings, the networks, the MetalLB pool and the FlowSchema match "+
	"(a Namespace created in the last %s reports its own sync)", NewNamespaceGrace)

// NewNamespaceGrace is how long a Ready Tenant stays Ready while a
// Namespace created since waits for the syncer's first reconcile (its
// HostSynced condition still the registry's NotSynced): the Namespace's
// own status says where it is meanwhile. Without it, each Namespace a
// Ready tenant creates turned the Tenant Provisioning and back, two status
// writes of the Tenant per Namespace, racing the quota charges of the
// tenant's next creates on the same object. A Namespace still not synced
// after it counts as any other; one the syncer has reconciled and found
// failing counts from the Tenant's next reconcile, at the latest when
// the grace ends.
const NewNamespaceGrace = 5 * time.Second

// maxProblems bounds how many problems a condition message lists.
const maxProblems = 5

// summarize lists the first problems and counts the rest: a condition
// message stays short (and valid) whatever the number of Namespaces.
func summarize(problems []string) string {
	if len(problems) <= maxProblems {
		return strings.Join(problems, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(problems[:maxProblems], "; "), len(problems)-maxProblems)
}

func hasFinalizer(t *tenant.Tenant) bool {
	for _, f := range t.Finalizers {
		if f == tenant.FinalizerOffboarding {
			return true
		}
	}
	return false
}

// onboard gives a new Tenant its Network "default" (subnets from its
// block, as the registry defaults them) and its Namespace "default"
// attached to it, then the offboarding finalizer, which from then on marks
// the Tenant as onboarded: a tenant that deletes its default Namespace or
// Network does not get it back.
func (c *Controller) onboard(ctx context.Context, t *tenant.Tenant) error {
	asTenant := tenancy.ActAsTenant(genericapirequest.WithUser(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), SyncerUser), t.Name, t.UID)
	network := &tenant.Network{
		ObjectMeta: metav1.ObjectMeta{Name: tenant.DefaultNetwork},
		// As the API defaults it: the defaults of a request are not
		// applied to an object made in process.
		Spec: tenant.NetworkSpec{Topology: tenant.NetworkTopologyLayer2, ServiceNetwork: tenant.ServiceNetworkPrivate},
	}
	ns := &tenant.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: tenant.DefaultNamespace},
		Spec:       tenant.NamespaceSpec{Network: tenant.DefaultNetwork},
	}
	for _, d := range []struct {
		storage controller.KindStorage
		obj     runtime.Object
	}{{c.src.Storage.Networks, network}, {c.src.Storage.Namespaces, ns}} {
		_, err := d.storage.Create.Create(asTenant, d.obj, rest.ValidateAllObjectFunc, &metav1.CreateOptions{FieldManager: controller.FieldManager})
		switch {
		case err == nil:
			klog.FromContext(ctx).Info("Onboarding tenant: created its default " + d.storage.Resource[:len(d.storage.Resource)-1])
		case apierrors.IsAlreadyExists(err):
		case apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsConflict(err):
			// A quota of zero, a block with no room for the default
			// network (or no default network for the Namespace): the
			// tenant goes without.
			klog.FromContext(ctx).Info("Onboarding tenant without its default "+d.storage.Resource[:len(d.storage.Resource)-1], "reason", err.Error())
		default:
			return err
		}
	}
	return c.updateTenant(ctx, t, func(live *tenant.Tenant) bool {
		if hasFinalizer(live) || live.DeletionTimestamp != nil {
			return false
		}
		live.Finalizers = append(live.Finalizers, tenant.FinalizerOffboarding)
		return true
	})
}

// updateTenant applies mutate to the stored Tenant, if it is still t.
func (c *Controller) updateTenant(ctx context.Context, t *tenant.Tenant, mutate func(*tenant.Tenant) bool) error {
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	_, _, err := c.src.Storage.Tenants.Store.Update(ctx, t.Name, rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		live := old.(*tenant.Tenant)
		if live.UID != t.UID {
			return nil, apierrors.NewConflict(tenant.Resource("tenants"), t.Name, fmt.Errorf("the Tenant was replaced"))
		}
		live = live.DeepCopy()
		if !mutate(live) {
			return old, nil
		}
		return live, nil
	}), nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{FieldManager: controller.FieldManager})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// pendingNamespaces returns what keeps the tenant's Namespaces from being
// synced, sorted, at now. Of a Ready Tenant, Namespaces younger than
// NewNamespaceGrace that the syncer has not reconciled yet are left out,
// and recheck is when the first of them comes of age (0: none). It runs on
// every reconcile of a Tenant, whose Namespaces may be thousands: one
// condition look-up each, nothing built for those that are synced.
func (c *Controller) pendingNamespaces(t *tenant.Tenant, now time.Time) (pending []string, recheck time.Duration) {
	objs, err := c.src.Namespaces.GetIndexer().ByIndex(controller.ByTenant, t.Name)
	if err != nil {
		return []string{err.Error()}, 0
	}
	ready := meta.IsStatusConditionTrue(t.Status.Conditions, tenant.ConditionReady)
	for _, obj := range objs {
		ns := obj.(*tenant.Namespace)
		c := meta.FindStatusCondition(ns.Status.Conditions, tenant.ConditionHostSynced)
		if c != nil && c.Status == metav1.ConditionTrue {
			continue
		}
		if ready && c != nil && c.Reason == kindstore.ReasonNotSynced {
			if left := NewNamespaceGrace - now.Sub(ns.CreationTimestamp.Time); left > 0 {
				if recheck == 0 || left < recheck {
					recheck = left
				}
				continue
			}
		}
		why := "not synced yet"
		if c != nil {
			why = c.Reason + ": " + c.Message
		}
		pending = append(pending, fmt.Sprintf("Namespace %s: %s", ns.Name, why))
	}
	sort.Strings(pending)
	return pending, recheck
}

// poolNamespaces returns, sorted, the host namespaces the tenant's MetalLB
// pool serves: its Namespace default's (where onboarding puts the pool to
// use first) and those of the Namespaces that hold a LoadBalancer or a
// FloatingIP, the only objects whose host Services ask for the pool; of
// each, only a host namespace the syncer made for that Namespace and that
// is not terminating. A new Namespace then leaves the pool, and MetalLB's
// configuration, as they are, and the tenant's other Namespaces are not
// looked at.
func (c *Controller) poolNamespaces(t *tenant.Tenant) []string {
	serve := map[string]bool{tenant.DefaultNamespace: true}
	for _, inf := range []cache.SharedIndexInformer{c.src.LoadBalancers, c.src.FloatingIPs} {
		objs, err := inf.GetIndexer().ByIndex(controller.ByTenant, t.Name)
		if err != nil {
			continue
		}
		for _, obj := range objs {
			if m, err := meta.Accessor(obj); err == nil {
				// Cached objects carry the cache namespace "<tenant>/<ns>".
				serve[controller.CachedKey(m.GetLabels(), m.GetNamespace(), m.GetName()).Namespace] = true
			}
		}
	}
	out := make([]string, 0, len(serve))
	for ns := range serve {
		obj, exists, err := c.src.Namespaces.GetStore().GetByKey(controller.ObjectKey(t.Name, "", ns))
		if err != nil || !exists {
			continue
		}
		hostName := hostnames.Namespace(t.Name, t.UID, ns)
		h, exists, err := c.src.HostNamespaces.GetStore().GetByKey(hostName)
		if err != nil || !exists {
			continue
		}
		if host := h.(metav1.Object); hostnames.OwnedBy(host, obj.(*tenant.Namespace).UID) && host.GetDeletionTimestamp() == nil {
			out = append(out, hostName)
		}
	}
	sort.Strings(out)
	return out
}

// networks returns what keeps the tenant's Networks from being synced
// (their host networks exist and match, and their NAT gateways'
// EgressIPs); whether OVN-Kubernetes has created them is the Networks' own
// Ready.
func (c *Controller) networks(t *tenant.Tenant) []string {
	objs, err := c.src.Networks.GetIndexer().ByIndex(controller.ByTenant, t.Name)
	if err != nil {
		return []string{err.Error()}
	}
	var pending []string
	for _, obj := range objs {
		n := obj.(*tenant.Network)
		if c := meta.FindStatusCondition(n.Status.Conditions, tenant.ConditionHostSynced); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != n.Generation {
			why := "not synced yet"
			if c != nil && c.Status != metav1.ConditionTrue {
				why = c.Reason + ": " + c.Message
			}
			pending = append(pending, fmt.Sprintf("Network %s: %s", n.Name, why))
		}
	}
	sort.Strings(pending)
	return pending
}

// setStatus records out in the Tenant's status (see tenantStatus).
func (c *Controller) setStatus(_ *tenant.Tenant, _ queue.Key, t *tenant.Tenant, out outcome) func(*tenant.Tenant) bool {
	return c.tenantStatus(t, out.Synced, out.Reason, out.Message, out.Details.identity)
}

// writeStatus writes the Tenant's status outside a sync (offboarding).
func (c *Controller) writeStatus(ctx context.Context, t *tenant.Tenant, synced bool, reason, message string) error {
	return c.status.Write(ctx, "", "", t, c.tenantStatus(t, synced, reason, message, identity{}))
}

// tenantStatus sets the Tenant's phase, HostSynced and Ready conditions,
// IdentitySynced when id is known, the compute its workloads use
// (status.usage.compute, from the host ResourceQuotas) and the public
// addresses its objects hold (status.usage.publicIPs).
func (c *Controller) tenantStatus(t *tenant.Tenant, synced bool, reason, message string, id identity) func(*tenant.Tenant) bool {
	usage := quotausage.Of(c.src, t)
	publicIPs := publicIPsInUse(c.src, t.Name)
	return func(live *tenant.Tenant) bool {
		s := &live.Status
		changed := controller.SetCondition(&s.Conditions, live.Generation, tenant.ConditionHostSynced, synced, reason, message)
		changed = setIdentityCondition(&s.Conditions, live.Generation, id) || changed
		allocated := meta.IsStatusConditionTrue(s.Conditions, tenant.ConditionAddressesAllocated)
		ready, readyReason, readyMessage := synced && allocated, reason, message
		if synced && !allocated {
			readyReason, readyMessage = "AddressesNotAllocated", "the tenant's addresses are not allocated"
		}
		changed = controller.SetCondition(&s.Conditions, live.Generation, tenant.ConditionReady, ready, readyReason, readyMessage) || changed
		phase := s.Phase
		switch {
		case live.DeletionTimestamp != nil:
			phase = tenant.TenantPhaseTerminating
		case ready:
			phase = tenant.TenantPhaseReady
		case reason == controller.ReasonHostUnreachable && phase == tenant.TenantPhaseReady:
			// Provisioned before the host went away: it still is.
		default:
			phase = tenant.TenantPhaseProvisioning
		}
		if s.Phase != phase {
			s.Phase, changed = phase, true
		}
		if s.ObservedGeneration != live.Generation {
			s.ObservedGeneration, changed = live.Generation, true
		}
		var compute, objects corev1.ResourceList
		if len(live.Spec.Quota.Compute) > 0 {
			compute = usage.Total(live.Spec.Quota.Compute)
		}
		if len(live.Spec.Quota.Objects) > 0 {
			objects = usage.Total(live.Spec.Quota.Objects)
		}
		if !apiequality.Semantic.DeepEqual(s.Usage.Compute, compute) {
			s.Usage.Compute, changed = compute, true
		}
		if !apiequality.Semantic.DeepEqual(s.Usage.Objects, objects) {
			s.Usage.Objects, changed = objects, true
		}
		if s.Usage.PublicIPs != publicIPs {
			s.Usage.PublicIPs, changed = publicIPs, true
		}
		return changed
	}
}

// ours are the tenant's host objects in an informer: made for this Tenant
// (by UID), whichever tenant object owns them.
func ours(objs []interface{}, t *tenant.Tenant) []metav1.Object {
	var out []metav1.Object
	for _, obj := range objs {
		m, err := meta.Accessor(obj)
		if err != nil {
			continue
		}
		if marks, ok := hostnames.MarksOf(m, ""); ok && marks.TenantUID == t.UID {
			out = append(out, m)
		}
	}
	return out
}
