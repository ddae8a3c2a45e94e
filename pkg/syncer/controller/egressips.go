package controller

import (
	"context"

	egressipv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EgressIPs is the host kind of the EgressIPs the syncer makes (NAT
// gateways of Networks, FloatingIPs); the spec is all the syncer's.
func (s *Sources) EgressIPs() HostKind[*egressipv1.EgressIP] {
	client := s.HostEgressIP.K8sV1().EgressIPs()
	return HostKind[*egressipv1.EgressIP]{
		Kind:     "EgressIP",
		Informer: s.HostEgressIPs,
		Create: func(ctx context.Context, obj *egressipv1.EgressIP) (*egressipv1.EgressIP, error) {
			return client.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
		},
		Get: func(ctx context.Context, _, name string) (*egressipv1.EgressIP, error) {
			return client.Get(ctx, name, metav1.GetOptions{})
		},
		Update: func(ctx context.Context, obj *egressipv1.EgressIP) (*egressipv1.EgressIP, error) {
			return client.Update(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
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
