package floatingip

import (
	"context"
	"fmt"
	"time"

	egressipv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/publicdns"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Reasons of a FloatingIP's conditions besides the syncer's common ones.
const (
	// ReasonNoTarget: the FloatingIP only holds its address.
	ReasonNoTarget = "NoTarget"
	// ReasonTargetNotFound: the target Pod or VirtualMachine does not
	// exist (yet) in the FloatingIP's namespace.
	ReasonTargetNotFound = "TargetNotFound"
	// ReasonTargetTaken: an older FloatingIP of the namespace has the same
	// target; this one is not bound.
	ReasonTargetTaken = "TargetTaken"
	// ReasonAddressPending: MetalLB has not assigned the address to the Service yet.
	ReasonAddressPending = "AddressPending"
	// ReasonAssociated: the address is bound to the target both ways.
	ReasonAssociated = "Associated"
	// ReasonEgressNotAssigned: OVN-Kubernetes has not assigned the address
	// to an egress node: the target's traffic does not leave from it yet.
	ReasonEgressNotAssigned = "EgressNotAssigned"
)

// targetRecheck is how often a FloatingIP whose target Pod is missing
// looks again: pods carry none of the syncer's labels before it labels
// them, so no event says when one appears.
const targetRecheck = 5 * time.Second

// details are what a sync reports besides the conditions.
type details struct {
	// pending: the target does not exist or is another FloatingIP's.
	pending bool
	// associated: host objects synced, the target found and, with ports,
	// the address assigned by MetalLB.
	associated bool
	assigned   string // the address MetalLB assigned the Service
	// egress is the EgressIP as synced, when the FloatingIP has a target.
	egress *egressipv1.EgressIP
}

type outcome = controller.Outcome[details]

// removeGone removes the host objects of a FloatingIP that no longer
// exists.
func (c *Controller) removeGone(ctx context.Context, t *tenant.Tenant, key queue.Key) error {
	return c.removeHostObjects(ctx, t, key, hostnames.Namespace(t.Name, t.UID, key.Namespace), "")
}

func (c *Controller) sync(ctx context.Context, t *tenant.Tenant, fip *tenant.FloatingIP, key queue.Key) (outcome, error) {
	hostNS := hostnames.Namespace(t.Name, t.UID, key.Namespace)
	if fip.Spec.Target == nil {
		// Only the address is held: no host object.
		if err := c.removeHostObjects(ctx, t, key, hostNS, fip.UID); err != nil {
			return outcome{}, err
		}
		return outcome{Synced: true, Reason: ReasonNoTarget, Message: "no target: the FloatingIP holds its address"}, nil
	}
	if fip.Status.Address == "" {
		return outcome{Reason: controller.ReasonWaiting, Message: "the FloatingIP has no address yet"}, nil
	}
	if holder := c.olderHolder(t.Name, key.Namespace, fip); holder != "" {
		// Settled for the older one: this one holds its address only.
		if err := c.removeHostObjects(ctx, t, key, hostNS, fip.UID); err != nil {
			return outcome{}, err
		}
		out := outcome{Synced: true, Reason: ReasonTargetTaken,
			Message: fmt.Sprintf("%s %s is the target of the older FloatingIP %s", fip.Spec.Target.Kind, fip.Spec.Target.Name, holder)}
		out.Details.pending = true
		return out, nil
	}
	if msg := c.src.HostNamespaceNotReady(t, key.Namespace, hostNS); msg != "" {
		return outcome{Reason: controller.ReasonWaiting, Message: msg}, nil
	}
	marks := Marks(t, fip)
	found, notFound, pods, err := c.findTarget(ctx, fip, hostNS)
	if err != nil {
		return outcome{}, err
	}
	e, err := c.egressIPs.Ensure(ctx, EgressIP(t, fip, key.Namespace, hostNS), marks)
	if err != nil || !e.Synced {
		return outcome{Reason: e.Reason, Message: e.Message}, err
	}
	// The EgressIP first: a pod given the label leaves the NAT gateway's
	// EgressIP for this one.
	if err := c.bindPods(ctx, fip, hostNS, pods); err != nil {
		return outcome{}, err
	}
	out := outcome{Synced: true}
	out.Details.egress = e.Obj
	if len(fip.Spec.Ports) == 0 {
		if _, err := c.services.Remove(ctx, hostNS, hostnames.FloatingIPService(fip.Name), marks); err != nil {
			return outcome{}, err
		}
		out.Details.associated = true
	} else {
		s, err := c.services.Ensure(ctx, Service(t, fip, key.Namespace, hostNS), marks)
		if err != nil || !s.Synced {
			return outcome{Reason: s.Reason, Message: s.Message}, err
		}
		out.Details.assigned = hostkinds.AssignedAddress(s.Obj)
		out.Details.associated = out.Details.assigned == fip.Status.Address
		if !out.Details.associated {
			out.Reason, out.Message = ReasonAddressPending, "MetalLB has not assigned "+fip.Status.Address+" to Service "+hostNS+"/"+s.Obj.Name+" yet"
		}
	}
	if !found {
		out.Details.associated, out.Details.pending = false, true
		out.Reason, out.Message = ReasonTargetNotFound, notFound+" in namespace "+key.Namespace
		if fip.Spec.Target.Kind == tenant.FloatingIPTargetPod {
			out.RequeueAfter = targetRecheck
		}
	}
	return out, nil
}

// olderHolder returns the name of an older FloatingIP of tenant t's
// Namespace ns with fip's target, or "". The registry refuses a second
// FloatingIP for one target; two creates racing past its check are
// settled here, for the older (by creation, then name).
func (c *Controller) olderHolder(t, ns string, fip *tenant.FloatingIP) string {
	holder := ""
	for _, obj := range c.targeting(t, ns, fip.Spec.Target.Kind, fip.Spec.Target.Name) {
		if obj.UID == fip.UID || obj.DeletionTimestamp != nil {
			continue
		}
		older := obj.CreationTimestamp.Before(&fip.CreationTimestamp) ||
			(obj.CreationTimestamp.Equal(&fip.CreationTimestamp) && obj.Name < fip.Name)
		if older && (holder == "" || obj.Name < holder) {
			holder = obj.Name
		}
	}
	return holder
}

// targeting returns the cached FloatingIPs of tenant t's Namespace ns
// whose target is the kind's name.
func (c *Controller) targeting(t, ns string, kind tenant.FloatingIPTargetKind, name string) []*tenant.FloatingIP {
	var out []*tenant.FloatingIP
	for _, f := range c.inNamespace(t, ns) {
		if f.Spec.Target != nil && f.Spec.Target.Kind == kind && f.Spec.Target.Name == name {
			out = append(out, f)
		}
	}
	return out
}

// inNamespace returns the cached FloatingIPs of tenant t's Namespace ns.
func (c *Controller) inNamespace(t, ns string) []*tenant.FloatingIP {
	objs, err := c.src.FloatingIPs.GetIndexer().ByIndex(controller.ByTenant, t)
	if err != nil {
		return nil
	}
	var out []*tenant.FloatingIP
	for _, obj := range objs {
		if f, ok := obj.(*tenant.FloatingIP); ok && c.keys.Key(f).Namespace == ns {
			out = append(out, f)
		}
	}
	return out
}

// removeHostObjects deletes the Service and EgressIP of a FloatingIP that
// has no target (owner, its UID) or no longer exists (owner ""): in that
// case only if the syncer made them for a FloatingIP of that name that is
// not in storage either.
func (c *Controller) removeHostObjects(ctx context.Context, t *tenant.Tenant, key queue.Key, hostNS string, owner types.UID) error {
	svcName := hostnames.FloatingIPService(key.Name)
	eipName := hostnames.FloatingIPEgressIP(t.UID, key.Namespace, key.Name)
	var owners []hostnames.Marks
	if svc, ok := c.services.Cached(hostNS, svcName); ok {
		if m, ours := hostnames.MarksOf(svc, FloatingIPLabel); ours {
			owners = append(owners, m)
		}
	}
	if eip, ok := c.egressIPs.Cached("", eipName); ok {
		if m, ours := hostnames.MarksOf(eip, FloatingIPLabel); ours {
			owners = append(owners, m)
		}
	}
	for _, m := range owners {
		if m.TenantUID != t.UID || m.Name != key.Name || (owner != "" && m.OwnerUID != owner) {
			continue
		}
		if owner == "" {
			obj, err := c.src.Storage.FloatingIPs.Store.Get(genericapirequest.WithNamespace(tenancy.WithTenant(ctx, t.Name), key.Namespace), key.Name, &metav1.GetOptions{})
			switch {
			case err == nil && obj.(*tenant.FloatingIP).UID == m.OwnerUID:
				continue
			case err != nil && !apierrors.IsNotFound(err):
				return err
			}
		}
		if removed, err := c.services.Remove(ctx, hostNS, svcName, m); err != nil {
			return err
		} else if removed {
			klog.FromContext(ctx).Info("Deleted a FloatingIP's host Service", "service", hostNS+"/"+svcName)
		}
		if removed, err := c.egressIPs.Remove(ctx, "", eipName, m); err != nil {
			return err
		} else if removed {
			klog.FromContext(ctx).Info("Deleted a FloatingIP's EgressIP", "egressIP", eipName)
		}
	}
	// Then the pods it bound go back to the NAT gateway.
	if owner != "" {
		return c.unbindPods(ctx, hostNS, func(uid string) bool { return uid == string(owner) }, nil)
	}
	live := map[string]bool{}
	for _, f := range c.inNamespace(t.Name, key.Namespace) {
		if f.Spec.Target != nil {
			live[string(f.UID)] = true
		}
	}
	return c.unbindPods(ctx, hostNS, func(uid string) bool { return !live[uid] }, nil)
}

// setStatus records out in the FloatingIP's status: phase Pending (its
// target is missing or another's), Allocated (it holds its address) or
// Associated (bound to its target both ways), HostSynced, Ready (synced,
// and associated when it has a target), and the public DNS name of the
// address it holds with DNSNamed.
func (c *Controller) setStatus(t *tenant.Tenant, key queue.Key, fip *tenant.FloatingIP, out outcome) func(*tenant.FloatingIP) bool {
	reason, message := out.Reason, out.Message
	if out.Synced && reason == "" {
		reason, message = controller.ReasonSynced, "the host Service and EgressIP match"
	}
	syncedReason, syncedMessage := reason, message
	if out.Synced {
		syncedReason, syncedMessage = controller.ReasonSynced, "the host objects match"
		if fip.Spec.Target == nil {
			syncedMessage = "no target: no host object"
		}
	}
	associated := out.Details.associated
	if fip.Spec.Target != nil && out.Synced && associated && out.Details.egress != nil {
		if ok, msg := hostkinds.EgressAssignment(out.Details.egress); !ok {
			associated = false
			reason, message = ReasonEgressNotAssigned, msg
		}
	}
	ready, readyReason, readyMessage := out.Synced && (fip.Spec.Target == nil || associated), reason, message
	if ready && fip.Spec.Target != nil {
		readyReason, readyMessage = ReasonAssociated, fmt.Sprintf("%s is bound to %s %s", fip.Status.Address, fip.Spec.Target.Kind, fip.Spec.Target.Name)
	}
	phase := tenant.FloatingIPPhaseAllocated
	switch {
	case fip.Spec.Target != nil && associated && out.Synced:
		phase = tenant.FloatingIPPhaseAssociated
	case out.Details.pending:
		phase = tenant.FloatingIPPhasePending
	}
	return func(live *tenant.FloatingIP) bool {
		s := &live.Status
		gen := live.Generation
		p := phase
		if s.Address == "" {
			p = tenant.FloatingIPPhasePending
		}
		changed := s.ObservedGeneration != gen || s.Phase != p
		s.ObservedGeneration, s.Phase = gen, p
		// The address is the registry's, as stored: named while held.
		changed = publicdns.Set(&s.DNSName, &s.Conditions, gen, c.names.Of(publicdns.FloatingIP, key, live, s.Address)) || changed
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionHostSynced, out.Synced, syncedReason, syncedMessage) || changed
		if live.Spec.Target != nil {
			_, _, egressChanged := hostkinds.SetEgressCondition(&s.Conditions, gen, out.Details.egress)
			changed = egressChanged || changed
		} else {
			changed = meta.RemoveStatusCondition(&s.Conditions, tenant.ConditionEgressAssigned) || changed
		}
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionReady, ready, readyReason, readyMessage) || changed
		return changed
	}
}
