package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hostNamespaceKind names host namespaces in messages, apart from tenant
// Namespaces.
const hostNamespaceKind = "host namespace"

// HostNamespaceKind is the host kind of the host namespaces the syncer makes
// (tenant Namespaces). Only the labels and annotations the syncer wants
// are its own: they are repaired, and those that others add (OpenShift's,
// a provider's) are left.
func (s *Sources) HostNamespaceKind() HostKind[*corev1.Namespace] {
	client := s.Host.CoreV1().Namespaces()
	return HostKind[*corev1.Namespace]{
		Kind:     hostNamespaceKind,
		Informer: s.HostNamespaces,
		Written:  s.written[s.HostNamespaces],
		Create: func(ctx context.Context, obj *corev1.Namespace) (*corev1.Namespace, error) {
			return client.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
		},
		Get: func(ctx context.Context, _, name string) (*corev1.Namespace, error) {
			return client.Get(ctx, name, metav1.GetOptions{})
		},
		Update: func(ctx context.Context, obj *corev1.Namespace) (*corev1.Namespace, error) {
			return client.Update(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
		},
		Delete: func(ctx context.Context, _, name string, opts metav1.DeleteOptions) error {
			return client.Delete(ctx, name, opts)
		},
		Matches: func(have, want *corev1.Namespace) bool {
			return hasAll(have.Labels, want.Labels) && hasAll(have.Annotations, want.Annotations)
		},
		Repair: func(have, want *corev1.Namespace) *corev1.Namespace {
			out := have.DeepCopy()
			if out.Labels == nil {
				out.Labels = map[string]string{}
			}
			for k, v := range want.Labels {
				out.Labels[k] = v
			}
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			for k, v := range want.Annotations {
				out.Annotations[k] = v
			}
			return out
		},
	}
}

// hasAll says whether have holds every key of want with its value.
func hasAll(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}
