package hostkinds

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// typedClient is what a typed client-go client of a namespaced kind T
// offers (ResourceQuotaInterface, LimitRangeInterface, ...).
type typedClient[T controller.HostObject] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// namespacedKind is the controller.HostKind of a namespaced kind written through its
// typed client; the object matches when spec(have) is spec(want), and is
// repaired by copying want's spec.
func namespacedKind[T controller.HostObject, S any](s *controller.Sources, kind string, inf cache.SharedIndexInformer, client func(ns string) typedClient[T],
	spec func(T) *S, deepCopy func(T) T) controller.HostKind[T] {
	return controller.HostKind[T]{
		Kind:     kind,
		Informer: inf,
		Written:  s.WrittenOf(inf),
		Create: func(ctx context.Context, obj T) (T, error) {
			return client(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{FieldManager: controller.FieldManager})
		},
		Get: func(ctx context.Context, namespace, name string) (T, error) {
			return client(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		Update: func(ctx context.Context, obj T) (T, error) {
			return client(obj.GetNamespace()).Update(ctx, obj, metav1.UpdateOptions{FieldManager: controller.FieldManager})
		},
		Delete: func(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error {
			return client(namespace).Delete(ctx, name, opts)
		},
		Matches: func(have, want T) bool { return apiequality.Semantic.DeepEqual(spec(have), spec(want)) },
		Repair: func(have, want T) T {
			out := deepCopy(have)
			*spec(out) = *spec(want)
			return out
		},
	}
}

// newResourceQuotas is the host kind of the ResourceQuota of each host
// namespace: its share of the tenant's compute quota.
func newResourceQuotas(s *controller.Sources) controller.HostKind[*corev1.ResourceQuota] {
	return namespacedKind(s, "ResourceQuota", s.HostResourceQuotas,
		func(ns string) typedClient[*corev1.ResourceQuota] { return s.Host.CoreV1().ResourceQuotas(ns) },
		func(o *corev1.ResourceQuota) *corev1.ResourceQuotaSpec { return &o.Spec },
		(*corev1.ResourceQuota).DeepCopy)
}

// newLimitRanges is the host kind of the LimitRange of each host namespace:
// the container defaults that make every pod count against the quota.
func newLimitRanges(s *controller.Sources) controller.HostKind[*corev1.LimitRange] {
	return namespacedKind(s, "LimitRange", s.HostLimitRanges,
		func(ns string) typedClient[*corev1.LimitRange] { return s.Host.CoreV1().LimitRanges(ns) },
		func(o *corev1.LimitRange) *corev1.LimitRangeSpec { return &o.Spec },
		(*corev1.LimitRange).DeepCopy)
}
