package hostkinds

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	egressipv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// newEgressIPs is the host kind of the EgressIPs the syncer makes (NAT
// gateways of Networks, FloatingIPs); the spec is all the syncer's.
func newEgressIPs(s *controller.Sources) controller.HostKind[*egressipv1.EgressIP] {
	client := s.HostEgressIP.K8sV1().EgressIPs()
	return controller.HostKind[*egressipv1.EgressIP]{
		Kind:     "EgressIP",
		Informer: s.HostEgressIPs,
		Written:  s.WrittenOf(s.HostEgressIPs),
		Create: func(ctx context.Context, obj *egressipv1.EgressIP) (*egressipv1.EgressIP, error) {
			return client.Create(ctx, obj, metav1.CreateOptions{FieldManager: controller.FieldManager})
		},
		Get: func(ctx context.Context, _, name string) (*egressipv1.EgressIP, error) {
			return client.Get(ctx, name, metav1.GetOptions{})
		},
		Update: func(ctx context.Context, obj *egressipv1.EgressIP) (*egressipv1.EgressIP, error) {
			return client.Update(ctx, obj, metav1.UpdateOptions{FieldManager: controller.FieldManager})
		},
		Delete: func(ctx context.Context, _, name string, opts metav1.DeleteOptions) error {
			return client.Delete(ctx, name, opts)
		},
		Matches: func(have, want *egressipv1.EgressIP) bool {
			return apiequality.Semantic.DeepEqual(have.Spec, want.Spec)
		},
		Repair: func(have, want *egressipv1.EgressIP) *egressipv1.EgressIP {
			out := have.DeepCopy()
			out.Spec = want.Spec
			return out
		},
	}
}

// Reasons of the EgressAssigned condition.
const (
	// ReasonEgressAssigned: OVN-Kubernetes assigned every address of the
	// EgressIP to a node.
	ReasonEgressAssigned = "Assigned"
	// ReasonEgressNotAssigned: it has not (yet): no egress-assignable node
	// is ready with a network that holds the address.
	ReasonEgressNotAssigned = "NotAssigned"
	// ReasonEgressPending: the EgressIP is not on the host yet.
	ReasonEgressPending = "EgressIPPending"
)

// EgressAssignment says whether OVN-Kubernetes has assigned every address
// of e's spec to a node (e's status), with a message for the
// EgressAssigned condition. The message names no node: which of the
// provider's machines hosts an address is not the tenant's to know.
func EgressAssignment(e *egressipv1.EgressIP) (bool, string) {
	assigned := make(map[netip.Addr]bool, len(e.Status.Items))
	for _, item := range e.Status.Items {
		if a, err := netip.ParseAddr(item.EgressIP); err == nil && item.Node != "" {
			assigned[a] = true
		}
	}
	var missing []string
	for _, ip := range e.Spec.EgressIPs {
		if a, err := netip.ParseAddr(ip); err != nil || !assigned[a] {
			missing = append(missing, ip)
		}
	}
	if len(missing) > 0 {
		return false, fmt.Sprintf("OVN-Kubernetes has not assigned %s (EgressIP %s) to a node: no egress-assignable node is ready on a network that holds it",
			strings.Join(missing, ", "), e.Name)
	}
	return true, fmt.Sprintf("OVN-Kubernetes assigned %s (EgressIP %s) to an egress node", strings.Join(e.Spec.EgressIPs, ", "), e.Name)
}

// SetEgressCondition records the EgressAssigned condition of an object
// whose egress goes through the host EgressIP egress (nil: not on the host
// yet), and says whether it is assigned, why not, and whether the
// conditions changed.
func SetEgressCondition(conditions *[]metav1.Condition, gen int64, egress *egressipv1.EgressIP) (assigned bool, message string, changed bool) {
	if egress == nil {
		message = "the EgressIP is not on the host yet"
		return false, message, meta.SetStatusCondition(conditions, metav1.Condition{
			Type: tenant.ConditionEgressAssigned, Status: metav1.ConditionUnknown, Reason: ReasonEgressPending,
			Message: message, ObservedGeneration: gen,
		})
	}
	assigned, message = EgressAssignment(egress)
	reason := ReasonEgressAssigned
	if !assigned {
		reason = ReasonEgressNotAssigned
	}
	return assigned, message, controller.SetCondition(conditions, gen, tenant.ConditionEgressAssigned, assigned, reason, message)
}
