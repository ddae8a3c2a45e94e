package namespace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// TestContainerDefaultsSpec: defaults for what the quota limits, limits
// only where limits are limited.
func TestContainerDefaultsSpec(t *testing.T) {
	spec := ContainerDefaultsSpec(list("requests.cpu", "2", "limits.memory", "4Gi", "pods", "10"))
	if len(spec.Limits) != 1 {
		t.Fatalf("limits %+v", spec.Limits)
	}
	item := spec.Limits[0]
	if item.Type != corev1.LimitTypeContainer || item.DefaultRequest.Cpu().Cmp(DefaultRequests[corev1.ResourceCPU]) != 0 ||
		item.DefaultRequest.Memory().Cmp(DefaultRequests[corev1.ResourceMemory]) != 0 ||
		item.Default.Memory().Cmp(DefaultLimits[corev1.ResourceMemory]) != 0 || !item.Default.Cpu().IsZero() {
		t.Errorf("LimitRange item %+v", item)
	}
	if spec := ContainerDefaultsSpec(list("pods", "10")); len(spec.Limits) != 0 {
		t.Errorf("a quota of pods alone has defaults %+v", spec.Limits)
	}
}
