package vrfpeering

import (
	"context"
	"fmt"
	"sync"
	"time"

	frrv1beta1 "github.com/metallb/frr-k8s/api/v1beta1"
	rav1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/routeadvertisements/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// Reasons of a VRFPeering's conditions besides the syncer's common ones.
const (
	// ReasonTenantGone and ReasonNetworkGone: the Tenant or Network the
	// peering was made for no longer exists (condition Orphaned).
	ReasonTenantGone  = "TenantGone"
	ReasonNetworkGone = "NetworkGone"
	// ReasonBound: the Tenant and Network the peering was made for exist.
	ReasonBound = "Bound"
	// ReasonAcceptancePending: OVN-Kubernetes has not reported on the
	// RouteAdvertisements yet.
	ReasonAcceptancePending = "AcceptancePending"
	// ReasonNotAccepted: the RouteAdvertisements is synced, but
	// OVN-Kubernetes has not accepted it.
	ReasonNotAccepted = "NotAccepted"
	// ReasonConflict: an older peering of the same Network holds its VRF's
	// BGP router with another ASN, or one of the same neighbors.
	ReasonConflict = "ConflictingPeering"
)

// outcome is a sync's result; Details are the RouteAdvertisements as last
// seen, when synced.
type outcome = controller.Outcome[*rav1.RouteAdvertisements]

// recheck is how often a peering waiting for something that raises no
// event of its own looks again.
const recheck = 2 * time.Second

// bound returns the live Tenant p was made for, or p's Orphaned outcome
// when that Tenant or its Network is gone.
func (c *Controller) bound(p *tenant.VRFPeering) (*tenant.Tenant, outcome) {
	obj, exists, err := c.src.Tenants.GetStore().GetByKey(p.Spec.Tenant)
	if err != nil || !exists || obj.(*tenant.Tenant).UID != p.Status.TenantUID || obj.(*tenant.Tenant).DeletionTimestamp != nil {
		return nil, outcome{Orphaned: true, Reason: ReasonTenantGone, Message: fmt.Sprintf(
			"tenant %s the peering was made for (uid %s) no longer exists; a tenant of that name created since is another: the provider must create the peering again for it", p.Spec.Tenant, p.Status.TenantUID)}
	}
	t := obj.(*tenant.Tenant)
	if _, out := c.network(t, p); out.Orphaned {
		return t, out
	}
	return t, outcome{}
}

// network returns the live Network of Tenant t that p was made for, or
// p's Orphaned outcome when it is gone.
func (c *Controller) network(t *tenant.Tenant, p *tenant.VRFPeering) (*tenant.Network, outcome) {
	obj, exists, err := c.src.Networks.GetStore().GetByKey(controller.ObjectKey(t.Name, "", p.Spec.Network))
	if err != nil || !exists || obj.(*tenant.Network).UID != p.Status.NetworkUID {
		return nil, outcome{Orphaned: true, Reason: ReasonNetworkGone, Message: fmt.Sprintf(
			"network %s of tenant %s the peering was made for (uid %s) no longer exists; a network of that name created since is another: the provider must create the peering again for it", p.Spec.Network, t.Name, p.Status.NetworkUID)}
	}
	return obj.(*tenant.Network), outcome{}
}

// sync makes the RouteAdvertisements and FRRConfiguration of p, of
// Tenant t, match.
func (c *Controller) sync(ctx context.Context, t *tenant.Tenant, p *tenant.VRFPeering, _ queue.Key) (outcome, error) {
	n, orphaned := c.network(t, p)
	if orphaned.Orphaned {
		// Gone since the skeleton looked.
		return orphaned, c.removeOrphan(ctx, p)
	}
	if len(n.Spec.Subnets) == 0 {
		return outcome{Reason: controller.ReasonWaiting, Message: "network " + n.Name + " has no subnets yet"}, nil
	}
	marks := Marks(t, p)
	if older, why := c.olderConflicting(p); older != "" {
		// Two writes raced past the registry's check: only the older
		// peering is realised.
		if err := c.remove(ctx, marks); err != nil {
			return outcome{}, err
		}
		return outcome{Reason: ReasonConflict, Message: fmt.Sprintf(
			"not realised: VRFPeering %s of the same network, created first, conflicts: %s", older, why)}, nil
	}
	cudn := hostnames.ClusterUserDefinedNetwork(t.UID, n.Name)
	spec := FRRConfigurationSpec(p, n, cudn, c.src.FRRNamespace)
	frr, err := FRRConfiguration(t, p, spec, c.src.FRRNamespace)
	if err != nil {
		return outcome{}, err
	}
	// Both at once: they name each other only by labels, and
	// OVN-Kubernetes looks at the RouteAdvertisements again when its
	// FRRConfiguration appears.
	var (
		wg     sync.WaitGroup
		got    controller.Ensured[*unstructured.Unstructured]
		frrErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		got, frrErr = c.kinds.FRRConfigurations(spec).Ensure(ctx, frr, marks)
	}()
	ra, err := c.kinds.RouteAdvertisements.Ensure(ctx, RouteAdvertisements(t, p, cudn), marks)
	wg.Wait()
	switch {
	case frrErr != nil:
		return outcome{}, frrErr
	case err != nil:
		return outcome{}, err
	case !got.Synced:
		return outcome{Reason: got.Reason, Message: got.Message}, nil
	case !ra.Synced:
		return outcome{Reason: ra.Reason, Message: ra.Message}, nil
	}
	return outcome{Synced: true, Details: ra.Obj}, nil
}

// olderConflicting names a peering bound to the same Network as p,
// created before it (by creation time, then name), that cannot share the
// VRF with it, and why; or "".
func (c *Controller) olderConflicting(p *tenant.VRFPeering) (string, string) {
	objs, err := c.src.VRFPeerings.GetIndexer().ByIndex(controller.ByTenant, p.Spec.Tenant)
	if err != nil {
		return "", ""
	}
	for _, obj := range objs {
		o := obj.(*tenant.VRFPeering)
		if o.UID == p.UID || o.Spec.Network != p.Spec.Network || o.Status.NetworkUID != p.Status.NetworkUID {
			continue
		}
		before := o.CreationTimestamp.Before(&p.CreationTimestamp) ||
			(o.CreationTimestamp.Equal(&p.CreationTimestamp) && o.Name < p.Name)
		if path, why := validation.VRFPeeringConflict(p, o); before && path != nil {
			return o.Name, path.String() + ": " + why
		}
	}
	return "", ""
}

// removeOrphan deletes the host objects of p, orphaned.
func (c *Controller) removeOrphan(ctx context.Context, p *tenant.VRFPeering) error {
	return c.remove(ctx, hostnames.Marks{Tenant: p.Spec.Tenant, TenantUID: p.Status.TenantUID, KindLabel: hostnames.VRFPeeringLabel,
		Name: p.Name, OwnerUID: p.UID, ChangedBy: hostnames.ChangedBy(p)})
}

// removeHostObjects deletes the host objects of VRFPeering key.Name, which
// is no longer in the informer, unless it is in storage (the informer
// lags behind a peering just created again).
func (c *Controller) removeHostObjects(ctx context.Context, _ *tenant.Tenant, key queue.Key) error {
	obj, err := c.src.Storage.VRFPeerings.Store.Get(ctx, key.Name, &metav1.GetOptions{})
	var live *tenant.VRFPeering
	switch {
	case err == nil:
		live = obj.(*tenant.VRFPeering)
	case !apierrors.IsNotFound(err):
		return err
	}
	name := HostName(key.Name)
	var found []hostnames.Marks
	if ra, ok := c.kinds.RouteAdvertisements.Cached("", name); ok {
		if m, ours := hostnames.MarksOf(ra, hostnames.VRFPeeringLabel); ours && m.Name == key.Name {
			found = append(found, m)
		}
	}
	if frr, ok := c.kinds.FRRConfigurations(&frrv1beta1.FRRConfigurationSpec{}).Cached(c.src.FRRNamespace, name); ok {
		if m, ours := hostnames.MarksOf(frr, hostnames.VRFPeeringLabel); ours && m.Name == key.Name {
			found = append(found, m)
		}
	}
	for _, m := range found {
		if live != nil && live.UID == m.OwnerUID {
			continue
		}
		if err := c.remove(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes the RouteAdvertisements and FRRConfiguration carrying marks.
func (c *Controller) remove(ctx context.Context, marks hostnames.Marks) error {
	name := HostName(marks.Name)
	if removed, err := c.kinds.RouteAdvertisements.Remove(ctx, "", name, marks); err != nil {
		return err
	} else if removed {
		klog.FromContext(ctx).Info("Deleted the RouteAdvertisements of a VRF peering", "routeAdvertisements", name)
	}
	if removed, err := c.kinds.FRRConfigurations(&frrv1beta1.FRRConfigurationSpec{}).Remove(ctx, c.src.FRRNamespace, name, marks); err != nil {
		return err
	} else if removed {
		klog.FromContext(ctx).Info("Deleted the FRRConfiguration of a VRF peering", "frrConfiguration", c.src.FRRNamespace+"/"+name)
	}
	return nil
}

// sessions are the BGPSessionStates frr-k8s reports in VRF vrf, typed.
func (c *Controller) sessions(vrf string) []frrv1beta1.BGPSessionState {
	objs, err := c.src.HostBGPSessionStates.GetIndexer().ByIndex(controller.ByVRF, vrf)
	if err != nil {
		return nil
	}
	var out []frrv1beta1.BGPSessionState
	for _, obj := range objs {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		var s frrv1beta1.BGPSessionState
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &s); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// setStatus records out in p's status: the VRF, each neighbor's sessions,
// and the conditions HostSynced, Orphaned, Accepted (mirrored from the
// RouteAdvertisements) and Ready (synced and accepted).
func (c *Controller) setStatus(t *tenant.Tenant, _ queue.Key, p *tenant.VRFPeering, out outcome) func(*tenant.VRFPeering) bool {
	orphaned := out.Orphaned
	vrf := ""
	if !orphaned {
		vrf = hostnames.ClusterUserDefinedNetwork(t.UID, p.Spec.Network)
	}
	var neighbors []tenant.VRFPeeringNeighborStatus
	if !orphaned {
		states := c.sessions(vrf)
		for _, nb := range p.Spec.Neighbors {
			neighbors = append(neighbors, Sessions(states, vrf, nb.Address))
		}
	}
	reason, message := out.Reason, out.Message
	if out.Synced {
		reason, message = controller.ReasonSynced, fmt.Sprintf("%s and %s match",
			describe("RouteAdvertisements", "", HostName(p.Name)), describe("FRRConfiguration", c.src.FRRNamespace, HostName(p.Name)))
	}
	return func(live *tenant.VRFPeering) bool {
		s, gen := &live.Status, live.Generation
		changed := s.VRF != vrf || !apiequality.Semantic.DeepEqual(s.Neighbors, neighbors) || s.ObservedGeneration != gen
		s.VRF, s.Neighbors, s.ObservedGeneration = vrf, neighbors, gen
		if orphaned {
			changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionOrphaned, true, reason, message) || changed
		} else {
			changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionOrphaned, false, ReasonBound,
				fmt.Sprintf("tenant %s and its network %s exist", p.Spec.Tenant, p.Spec.Network)) || changed
		}
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionHostSynced, out.Synced, reason, message) || changed
		accepted := acceptance(out, gen)
		changed = meta.SetStatusCondition(&s.Conditions, accepted) || changed
		ready, readyReason, readyMessage := out.Synced && accepted.Status == metav1.ConditionTrue, reason, message
		if out.Synced && !ready {
			readyReason, readyMessage = ReasonNotAccepted, "OVN-Kubernetes has not accepted "+describe("RouteAdvertisements", "", HostName(p.Name))
			if accepted.Message != "" {
				readyMessage += ": " + accepted.Message
			}
		}
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionReady, ready, readyReason, readyMessage) || changed
		return changed
	}
}

// acceptance is the peering's Accepted condition: the RouteAdvertisements'
// own, as OVN-Kubernetes reports it, or Unknown until it has.
func acceptance(out outcome, gen int64) metav1.Condition {
	if !out.Synced || out.Details == nil {
		return metav1.Condition{Type: tenant.ConditionAccepted, Status: metav1.ConditionUnknown, Reason: ReasonAcceptancePending,
			Message: "the RouteAdvertisements is not synced", ObservedGeneration: gen}
	}
	ra := out.Details
	hc := meta.FindStatusCondition(ra.Status.Conditions, rav1.RouteAdvertisementsAccepted)
	if hc == nil || (hc.ObservedGeneration != 0 && hc.ObservedGeneration < ra.Generation) {
		return metav1.Condition{Type: tenant.ConditionAccepted, Status: metav1.ConditionUnknown, Reason: ReasonAcceptancePending,
			Message: "OVN-Kubernetes has not reported on " + describe("RouteAdvertisements", "", ra.Name) + " yet", ObservedGeneration: gen}
	}
	reason := hc.Reason
	if reason == "" {
		reason = "Reported"
	}
	msg := hc.Message
	if len(msg) > 32000 {
		msg = msg[:32000]
	}
	return metav1.Condition{Type: tenant.ConditionAccepted, Status: hc.Status, Reason: reason,
		Message: describe("RouteAdvertisements", "", ra.Name) + ": " + msg, ObservedGeneration: gen}
}
