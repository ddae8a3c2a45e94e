package hostkinds

import (
	"context"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// newFlowSchemas is the host kind of the FlowSchema the syncer makes for each
// tenant: the tenant's own requests to the host, one flow in the tenants'
// priority level. Its spec is repaired; its status is the host's.
func newFlowSchemas(s *controller.Sources) controller.HostKind[*flowcontrolv1.FlowSchema] {
	client := s.Host.FlowcontrolV1().FlowSchemas()
	return controller.HostKind[*flowcontrolv1.FlowSchema]{
		Kind:     "FlowSchema",
		Informer: s.HostFlowSchemas,
		Written:  s.WrittenOf(s.HostFlowSchemas),
		Create: func(ctx context.Context, obj *flowcontrolv1.FlowSchema) (*flowcontrolv1.FlowSchema, error) {
			return client.Create(ctx, obj, metav1.CreateOptions{FieldManager: controller.FieldManager})
		},
		Get: func(ctx context.Context, _, name string) (*flowcontrolv1.FlowSchema, error) {
			return client.Get(ctx, name, metav1.GetOptions{})
		},
		Update: func(ctx context.Context, obj *flowcontrolv1.FlowSchema) (*flowcontrolv1.FlowSchema, error) {
			return client.Update(ctx, obj, metav1.UpdateOptions{FieldManager: controller.FieldManager})
		},
		Delete: func(ctx context.Context, _, name string, opts metav1.DeleteOptions) error {
			return client.Delete(ctx, name, opts)
		},
		Matches: func(have, want *flowcontrolv1.FlowSchema) bool {
			return apiequality.Semantic.DeepEqual(have.Spec, want.Spec)
		},
		Repair: func(have, want *flowcontrolv1.FlowSchema) *flowcontrolv1.FlowSchema {
			out := have.DeepCopy()
			out.Spec = want.Spec
			return out
		},
	}
}
