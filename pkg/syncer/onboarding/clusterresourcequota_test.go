package onboarding

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// TestClusterResourceQuota renders a tenant's compute quota as OpenShift's
// ClusterResourceQuota: selecting its host namespaces by the tenant label,
// with the tenant's total as hard limits, and the syncer's marks.
// (TestComputeQuota has the host check it against the real CRD schema.)
func TestClusterResourceQuota(t *testing.T) {
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "uid-1"}}
	tn.Spec.Quota.Compute = corev1.ResourceList{"requests.cpu": resource.MustParse("4"), "pods": resource.MustParse("20"),
		tenant.ResourceVirtualMachines: resource.MustParse("3")}
	crq := ClusterResourceQuota(tn)
	if crq.GetAPIVersion() != "quota.openshift.io/v1" || crq.GetKind() != "ClusterResourceQuota" || crq.GetName() != "tenant.io-acme" {
		t.Errorf("rendered %s %s %s", crq.GetAPIVersion(), crq.GetKind(), crq.GetName())
	}
	sel, _, _ := unstructured.NestedStringMap(crq.Object, "spec", "selector", "labels", "matchLabels")
	if len(sel) != 1 || sel[hostnames.TenantLabel] != "acme" {
		t.Errorf("selector %v", sel)
	}
	hard, _, _ := unstructured.NestedStringMap(crq.Object, "spec", "quota", "hard")
	want := map[string]string{"requests.cpu": "4", "pods": "20", "count/virtualmachines.kubevirt.io": "3"}
	if len(hard) != len(want) {
		t.Errorf("hard %v, want %v", hard, want)
	}
	for r, q := range want {
		if hard[r] != q {
			t.Errorf("hard %s = %q, want %q", r, hard[r], q)
		}
	}
	if crq.GetLabels()[hostnames.TenantLabel] != "acme" || crq.GetAnnotations()[hostnames.TenantUIDAnnotation] != "uid-1" {
		t.Errorf("marks %v %v", crq.GetLabels(), crq.GetAnnotations())
	}
}
