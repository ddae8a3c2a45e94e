package floatingip

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	egressipv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/loadbalancer"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Reasons of a FloatingIP's conditions besides the syncer's common ones.
const (
	// ReasonNoTarget: the FloatingIP only holds its address.
	ReasonNoTarget = "NoTarget"
	// ReasonTargetNotFound: the target Pod does not exist (yet).
	ReasonTargetNotFound = "TargetNotFound"
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
	if msg := c.src.HostNamespaceNotReady(t, key.Namespace, hostNS); msg != "" {
		return outcome{Reason: controller.ReasonWaiting, Message: msg}, nil
	}
	marks := Marks(t, fip)
	found, err := c.labelTargetPod(ctx, fip, hostNS)
	if err != nil {
		return outcome{}, err
	}
	e, err := c.egressIPs.Ensure(ctx, EgressIP(t, fip, key.Namespace, hostNS), marks)
	if err != nil || !e.Synced {
		return outcome{Reason: e.Reason, Message: e.Message}, err
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
		out.Details.assigned = loadbalancer.AssignedAddress(s.Obj)
		out.Details.associated = out.Details.assigned == fip.Status.Address
		if !out.Details.associated {
			out.Reason, out.Message = ReasonAddressPending, "MetalLB has not assigned "+fip.Status.Address+" to Service "+hostNS+"/"+s.Obj.Name+" yet"
		}
	}
	if !found {
		out.Details.associated = false
		out.Reason, out.Message = ReasonTargetNotFound, fmt.Sprintf("Pod %s does not exist in namespace %s", fip.Spec.Target.Name, key.Namespace)
		out.RequeueAfter = targetRecheck
	}
	return out, nil
}

// labelTargetPod gives a Pod target the label that the Service and the
// EgressIP select it by (its own name), and says whether the target was
// found. A VirtualMachine's pod is labelled by KubeVirt; it is taken as found.
func (c *Controller) labelTargetPod(ctx context.Context, fip *tenant.FloatingIP, hostNS string) (bool, error) {
	tg := fip.Spec.Target
	if tg == nil || tg.Kind != tenant.FloatingIPTargetPod {
		return true, nil
	}
	pods := c.src.Host.CoreV1().Pods(hostNS)
	pod, err := pods.Get(ctx, tg.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if pod.Labels[hostnames.PodLabel] == pod.Name || pod.DeletionTimestamp != nil {
		return pod.DeletionTimestamp == nil, nil
	}
	patch, err := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{
		"labels":          map[string]string{hostnames.PodLabel: pod.Name},
		"resourceVersion": pod.ResourceVersion,
	}})
	if err != nil {
		return false, err
	}
	if _, err := pods.Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: controller.FieldManager}); err != nil {
		return false, err
	}
	klog.FromContext(ctx).V(2).Info("Labelled the target pod", "pod", hostNS+"/"+pod.Name)
	return true, nil
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
	return nil
}

// setStatus records out in the FloatingIP's status: phase Allocated (it
// holds its address) or Associated (bound to its target both ways),
// HostSynced, and Ready (synced, and associated when it has a target).
func (c *Controller) setStatus(ctx context.Context, t *tenant.Tenant, key queue.Key, fip *tenant.FloatingIP, out outcome) error {
	ns := key.Namespace
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
		if ok, msg := controller.EgressAssignment(out.Details.egress); !ok {
			associated = false
			reason, message = ReasonEgressNotAssigned, msg
		}
	}
	ready, readyReason, readyMessage := out.Synced && (fip.Spec.Target == nil || associated), reason, message
	if ready && fip.Spec.Target != nil {
		readyReason, readyMessage = ReasonAssociated, fmt.Sprintf("%s is bound to %s %s", fip.Status.Address, fip.Spec.Target.Kind, fip.Spec.Target.Name)
	}
	phase := tenant.FloatingIPPhaseAllocated
	if fip.Spec.Target != nil && associated && out.Synced {
		phase = tenant.FloatingIPPhaseAssociated
	}
	mutate := func(obj runtime.Object) bool {
		live := obj.(*tenant.FloatingIP)
		if live.UID != fip.UID {
			return false
		}
		s := &live.Status
		gen := live.Generation
		p := phase
		if s.Address == "" {
			p = tenant.FloatingIPPhasePending
		}
		changed := s.ObservedGeneration != gen || s.Phase != p
		s.ObservedGeneration, s.Phase = gen, p
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionHostSynced, out.Synced, syncedReason, syncedMessage) || changed
		if live.Spec.Target != nil {
			_, _, egressChanged := controller.SetEgressCondition(&s.Conditions, gen, out.Details.egress)
			changed = egressChanged || changed
		} else {
			changed = meta.RemoveStatusCondition(&s.Conditions, tenant.ConditionEgressAssigned) || changed
		}
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionReady, ready, readyReason, readyMessage) || changed
		return changed
	}
	if !mutate(fip.DeepCopy()) {
		return nil
	}
	return controller.UpdateStatus(ctx, c.src.Storage.FloatingIPs.Status, t.Name, ns, fip.Name, mutate)
}
