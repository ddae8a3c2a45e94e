package admin

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

// TestFieldSelectors: each view selects on the fields its kind selects on
// in tenant.io, and refuses the others as tenant.io does.
func TestFieldSelectors(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	tenantScheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(tenantScheme); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind, field string
		ok          bool
	}{
		{"Namespace", "status.hostNamespace", true},
		{"Network", "spec.topology", true},
		{"FloatingIP", "metadata.namespace", true},
		{"FloatingIP", "status.address", true},
		{"LoadBalancer", "status.address", true},
		{"HostClaim", "metadata.name", true},
		{"HostClaim", "metadata.namespace", true},
		{"HostClaim", "spec.hostClass", true},
		{"HostClaim", "status.phase", true},
		{"HostClaim", "spec.image.url", false},
	} {
		_, _, err := scheme.ConvertFieldLabel(SchemeGroupVersion.WithKind(c.kind), c.field, "x")
		if (err == nil) != c.ok {
			t.Errorf("%s %s in %s: %v, want accepted %v", c.kind, c.field, GroupName, err, c.ok)
		}
		_, _, err = tenantScheme.ConvertFieldLabel(v1alpha1.SchemeGroupVersion.WithKind(c.kind), c.field, "x")
		if (err == nil) != c.ok {
			t.Errorf("%s %s in tenant.io: %v, want accepted %v", c.kind, c.field, err, c.ok)
		}
	}
	for _, kind := range Kinds {
		for _, gvk := range []schema.GroupVersionKind{SchemeGroupVersion.WithKind(kind), SchemeGroupVersion.WithKind(kind + "List"),
			InternalGroupVersion.WithKind(kind), InternalGroupVersion.WithKind(kind + "List")} {
			if !scheme.Recognizes(gvk) {
				t.Errorf("%s is not registered", gvk)
			}
		}
	}
}
