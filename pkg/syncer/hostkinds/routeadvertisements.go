package hostkinds

import (
	"context"

	rav1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/routeadvertisements/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// newRouteAdvertisements is the host kind of the OVN-Kubernetes
// RouteAdvertisements the syncer makes (VRF peerings): a changed spec is
// repaired in place.
func newRouteAdvertisements(s *controller.Sources) controller.HostKind[*rav1.RouteAdvertisements] {
	client := s.HostRA.K8sV1().RouteAdvertisements()
	return controller.HostKind[*rav1.RouteAdvertisements]{
		Kind:     "RouteAdvertisements",
		Informer: s.HostRouteAdvertisements,
		Written:  s.WrittenOf(s.HostRouteAdvertisements),
		Create: func(ctx context.Context, obj *rav1.RouteAdvertisements) (*rav1.RouteAdvertisements, error) {
			return client.Create(ctx, obj, metav1.CreateOptions{FieldManager: controller.FieldManager})
		},
		Get: func(ctx context.Context, _, name string) (*rav1.RouteAdvertisements, error) {
			return client.Get(ctx, name, metav1.GetOptions{})
		},
		Update: func(ctx context.Context, obj *rav1.RouteAdvertisements) (*rav1.RouteAdvertisements, error) {
			return client.Update(ctx, obj, metav1.UpdateOptions{FieldManager: controller.FieldManager})
		},
		Delete: func(ctx context.Context, _, name string, opts metav1.DeleteOptions) error {
			return client.Delete(ctx, name, opts)
		},
		Matches: func(have, want *rav1.RouteAdvertisements) bool {
			return apiequality.Semantic.DeepEqual(have.Spec, want.Spec)
		},
		Repair: func(have, want *rav1.RouteAdvertisements) *rav1.RouteAdvertisements {
			out := have.DeepCopy()
			out.Spec = want.Spec
			return out
		},
	}
}
