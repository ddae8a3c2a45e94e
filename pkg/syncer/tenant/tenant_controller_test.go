package tenant

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

func TestOnlyUsageChanged(t *testing.T) {
	old := &tenant.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: "acme", ResourceVersion: "1", Labels: map[string]string{"a": "b"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate}}},
		Status: tenant.TenantStatus{Usage: tenant.TenantUsage{Namespaces: 1}, Phase: tenant.TenantPhaseReady},
	}
	charged := old.DeepCopy()
	charged.ResourceVersion, charged.Status.Usage.Namespaces = "2", 2
	charged.ManagedFields = append(charged.ManagedFields, metav1.ManagedFieldsEntry{Manager: "n"})
	if !onlyUsageChanged(old, charged) {
		t.Errorf("a quota charge (usage, resourceVersion, managed fields) counted as a change that matters")
	}
	if old.ResourceVersion != "1" || old.Status.Usage.Namespaces != 1 || len(old.ManagedFields) != 1 {
		t.Errorf("the old object was written to: %+v", old)
	}
	relabelled := charged.DeepCopy()
	relabelled.Labels["a"] = "c"
	if onlyUsageChanged(old, relabelled) {
		t.Errorf("a label change passed for a usage change")
	}
	provisioning := charged.DeepCopy()
	provisioning.Status.Phase = tenant.TenantPhaseProvisioning
	if onlyUsageChanged(old, provisioning) {
		t.Errorf("a phase change passed for a usage change")
	}
}
