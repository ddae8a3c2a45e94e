package hostkinds

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// newRoleBindings is the host kind of the RoleBindings the syncer makes in
// host namespaces (a tenant's members); subjects are repaired, and a
// binding whose roleRef changed (immutable) is replaced. Its informer
// holds what the syncer compares of each (host.HeldRoleBinding): one for
// every tenant Namespace.
func newRoleBindings(s *controller.Sources) controller.HostKind[*rbacv1.RoleBinding] {
	client := s.Host.RbacV1()
	return controller.HostKind[*rbacv1.RoleBinding]{
		Kind:     "RoleBinding",
		Informer: s.HostRoleBindings,
		Written:  s.WrittenOf(s.HostRoleBindings),
		Held:     host.HeldRoleBindingOf,
		Create: func(ctx context.Context, obj *rbacv1.RoleBinding) (*rbacv1.RoleBinding, error) {
			return client.RoleBindings(obj.Namespace).Create(ctx, obj, metav1.CreateOptions{FieldManager: controller.FieldManager})
		},
		Get: func(ctx context.Context, namespace, name string) (*rbacv1.RoleBinding, error) {
			return client.RoleBindings(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		Update: func(ctx context.Context, obj *rbacv1.RoleBinding) (*rbacv1.RoleBinding, error) {
			return client.RoleBindings(obj.Namespace).Update(ctx, obj, metav1.UpdateOptions{FieldManager: controller.FieldManager})
		},
		Delete: func(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error {
			return client.RoleBindings(namespace).Delete(ctx, name, opts)
		},
		Matches: func(have, want *rbacv1.RoleBinding) bool {
			return apiequality.Semantic.DeepEqual(have.Subjects, want.Subjects)
		},
		Repair: func(have, want *rbacv1.RoleBinding) *rbacv1.RoleBinding {
			out := have.DeepCopy()
			out.Subjects = want.Subjects
			return out
		},
		Replace: func(have, want *rbacv1.RoleBinding) bool { return have.RoleRef != want.RoleRef },
	}
}
