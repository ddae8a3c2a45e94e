package hostkinds

import (
	"testing"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// TestSameSpec checks that fields the CRD defaults do not count as drift,
// and that every field the syncer sets does.
func TestSameSpec(t *testing.T) {
	want := &metallbv1beta1.IPAddressPoolSpec{
		Addresses:  []string{"203.0.113.1/32"},
		AutoAssign: ptr.To(false),
		AllocateTo: &metallbv1beta1.ServiceAllocation{Namespaces: []string{"acme-1-default"}},
	}
	stored := func(spec map[string]interface{}) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]interface{}{"spec": spec}}
	}
	base := func() map[string]interface{} {
		return map[string]interface{}{
			"addresses":         []interface{}{"203.0.113.1/32"},
			"autoAssign":        false,
			"avoidBuggyIPs":     false, // defaulted by the CRD
			"serviceAllocation": map[string]interface{}{"namespaces": []interface{}{"acme-1-default"}},
		}
	}
	for _, c := range []struct {
		name string
		edit func(map[string]interface{})
		same bool
	}{
		{"as stored with defaults", func(map[string]interface{}) {}, true},
		{"other address", func(s map[string]interface{}) { s["addresses"] = []interface{}{"203.0.113.9/32"} }, false},
		{"auto assign on", func(s map[string]interface{}) { s["autoAssign"] = true }, false},
		{"auto assign defaulted", func(s map[string]interface{}) { delete(s, "autoAssign") }, false},
		{"extra namespace", func(s map[string]interface{}) {
			s["serviceAllocation"] = map[string]interface{}{"namespaces": []interface{}{"acme-1-default", "victim"}}
		}, false},
		{"selector added", func(s map[string]interface{}) {
			s["serviceAllocation"] = map[string]interface{}{"namespaces": []interface{}{"acme-1-default"},
				"namespaceSelectors": []interface{}{map[string]interface{}{}}}
		}, false},
		{"not our shape", func(s map[string]interface{}) { s["addresses"] = "203.0.113.1/32" }, false},
	} {
		spec := base()
		c.edit(spec)
		if got := sameSpec(stored(spec), want); got != c.same {
			t.Errorf("%s: sameSpec = %v; want %v", c.name, got, c.same)
		}
	}
}
