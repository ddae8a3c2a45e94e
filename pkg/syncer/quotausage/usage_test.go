package quotausage

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// TestShare: each namespace may grow by all that is free of the total, and
// never has a limit below what it uses (over the total, nothing is free).
func TestShare(t *testing.T) {
	total := list("requests.cpu", "2", "pods", "5", "count/virtualmachines.kubevirt.io", "1")
	for _, tc := range []struct {
		name  string
		usage Usage
		ns    string
		want  corev1.ResourceList
	}{
		{"nothing used", Usage{}, "a", list("requests.cpu", "2", "pods", "5", "count/virtualmachines.kubevirt.io", "1")},
		{"used elsewhere", Usage{"b": list("requests.cpu", "500m", "pods", "2")}, "a",
			list("requests.cpu", "1500m", "pods", "3", "count/virtualmachines.kubevirt.io", "1")},
		{"used here and elsewhere", Usage{"a": list("requests.cpu", "250m", "pods", "1"), "b": list("requests.cpu", "500m", "pods", "2")}, "a",
			list("requests.cpu", "1500m", "pods", "3", "count/virtualmachines.kubevirt.io", "1")},
		{"over the total (a burst)", Usage{"a": list("pods", "3"), "b": list("pods", "4", "count/virtualmachines.kubevirt.io", "1")}, "a",
			list("requests.cpu", "2", "pods", "3", "count/virtualmachines.kubevirt.io", "0")},
	} {
		got := tc.usage.Share(total, tc.ns, tc.usage)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		for r, q := range tc.want {
			if g := got[r]; g.Cmp(q) != 0 {
				t.Errorf("%s: %s = %s, want %s", tc.name, r, g.String(), q.String())
			}
		}
	}
	// A drop of b's usage not believed yet: free is computed with what b
	// had, a's share does not grow by it, and b's own share is what b
	// reports plus that free amount.
	reported := Usage{"a": list("pods", "1"), "b": list("pods", "1")}
	counted := Usage{"a": list("pods", "1"), "b": list("pods", "3")}
	for ns, want := range map[string]int64{"a": 1 + 1, "b": 1 + 1} {
		if got := reported.Share(total, ns, counted); got.Pods().Value() != want {
			t.Errorf("with a drop of b held: %s's share is %d pods, want %d", ns, got.Pods().Value(), want)
		}
	}
	if got := (Usage{"a": list("pods", "2"), "b": list("pods", "1", "requests.cpu", "1")}).Total(total); got.Pods().Value() != 3 ||
		got.Name(corev1.ResourceRequestsCPU, resource.DecimalSI).MilliValue() != 1000 || got.Name(tenant.ResourceVirtualMachines, resource.DecimalSI).Value() != 0 {
		t.Errorf("Total = %v", got)
	}
}
