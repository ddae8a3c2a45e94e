package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceQuotas is the HostKind of the ResourceQuota of each host
// namespace: its share of the tenant's compute quota.
func (s *Sources) ResourceQuotas() HostKind[*corev1.ResourceQuota] {
	client := s.Host.CoreV1()
	return HostKind[*corev1.ResourceQuota]{
		Kind:     "ResourceQuota",
		Informer: s.HostResourceQuotas,
		Create: func(ctx context.Context, obj *corev1.ResourceQuota) (*corev1.ResourceQuota, error) {
			return client.ResourceQuotas(obj.Namespace).Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
		},
		Get: func(ctx context.Context, namespace, name string) (*corev1.ResourceQuota, error) {
			return client.ResourceQuotas(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		Update: func(ctx context.Context, obj *corev1.ResourceQuota) (*corev1.ResourceQuota, error) {
			return client.ResourceQuotas(obj.Namespace).Update(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
		},
		Delete: func(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error {
			return client.ResourceQuotas(namespace).Delete(ctx, name, opts)
		},
		Matches: func(have, want *corev1.ResourceQuota) bool {
			return apiequality.Semantic.DeepEqual(have.Spec, want.Spec)
		},
		Repair: func(have, want *corev1.ResourceQuota) *corev1.ResourceQuota {
			out := have.DeepCopy()
			out.Spec = want.Spec
			return out
		},
	}
}

// LimitRanges is the HostKind of the LimitRange of each host namespace:
// the container defaults that make every pod count against the quota.
func (s *Sources) LimitRanges() HostKind[*corev1.LimitRange] {
	client := s.Host.CoreV1()
	return HostKind[*corev1.LimitRange]{
		Kind:     "LimitRange",
		Informer: s.HostLimitRanges,
		Create: func(ctx context.Context, obj *corev1.LimitRange) (*corev1.LimitRange, error) {
			return client.LimitRanges(obj.Namespace).Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
		},
		Get: func(ctx context.Context, namespace, name string) (*corev1.LimitRange, error) {
			return client.LimitRanges(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		Update: func(ctx context.Context, obj *corev1.LimitRange) (*corev1.LimitRange, error) {
			return client.LimitRanges(obj.Namespace).Update(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
		},
		Delete: func(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error {
			return client.LimitRanges(namespace).Delete(ctx, name, opts)
		},
		Matches: func(have, want *corev1.LimitRange) bool {
			return apiequality.Semantic.DeepEqual(have.Spec, want.Spec)
		},
		Repair: func(have, want *corev1.LimitRange) *corev1.LimitRange {
			out := have.DeepCopy()
			out.Spec = want.Spec
			return out
		},
	}
}
