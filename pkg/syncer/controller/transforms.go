package controller

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// metadataOnly keeps of an informer's object only its metadata (no
// managed fields): the informers of workloads need their names.
func metadataOnly(obj interface{}) (interface{}, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return &corev1.Pod{ObjectMeta: trimmed(o.ObjectMeta)}, nil
	case *unstructured.Unstructured:
		out := &unstructured.Unstructured{}
		out.SetAPIVersion(o.GetAPIVersion())
		out.SetKind(o.GetKind())
		out.SetNamespace(o.GetNamespace())
		out.SetName(o.GetName())
		out.SetUID(o.GetUID())
		out.SetResourceVersion(o.GetResourceVersion())
		out.SetLabels(o.GetLabels())
		out.SetDeletionTimestamp(o.GetDeletionTimestamp())
		return out, nil
	}
	return obj, nil
}

// nameOnly keeps of an object's metadata only its name, namespace, UID,
// resource version and deletion time: all the syncer reads of the
// NetworkAttachmentDefinitions OVN-Kubernetes renders, one per tenant
// namespace, which it lists as metadata (their CNI configuration stays on
// the host) and keeps without their labels, owners and managed fields.
func nameOnly(obj interface{}) (interface{}, error) {
	if o, ok := obj.(*metav1.PartialObjectMetadata); ok {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name,
			UID: o.UID, ResourceVersion: o.ResourceVersion, DeletionTimestamp: o.DeletionTimestamp}}, nil
	}
	return obj, nil
}

func trimmed(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Labels: m.Labels, DeletionTimestamp: m.DeletionTimestamp}
}
