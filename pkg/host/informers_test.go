package host_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"tenant.io/tenant-apiserver/pkg/host"
)

func TestWithoutManagedFields(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"k": "v"}, ManagedFields: managed}}
	u := &unstructured.Unstructured{}
	u.SetName("b")
	u.SetManagedFields(managed)
	for _, obj := range []interface{}{ns, u} {
		got, err := host.WithoutManagedFields(obj)
		if err != nil {
			t.Fatal(err)
		}
		m := got.(metav1.Object)
		if m.GetManagedFields() != nil || m.GetName() == "" {
			t.Errorf("%T: managed fields %v, name %q: want none and the name kept", obj, m.GetManagedFields(), m.GetName())
		}
	}
	if ns.Labels["k"] != "v" {
		t.Errorf("labels changed: %v", ns.Labels)
	}
	// Not an object (a tombstone): passed through.
	if got, err := host.WithoutManagedFields("x"); err != nil || got != "x" {
		t.Errorf("WithoutManagedFields(non-object) = %v, %v", got, err)
	}
}
