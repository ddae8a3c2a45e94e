package onboarding

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// ClusterResourceQuotas are OpenShift's quotas over several namespaces.
var ClusterResourceQuotas = schema.GroupVersionResource{Group: "quota.openshift.io", Version: "v1", Resource: "clusterresourcequotas"}

// ClusterResourceQuotaName is the name of tenant t's ClusterResourceQuota.
func ClusterResourceQuotaName(t string) string { return "tenant.io-" + t }

// ClusterResourceQuota renders t's compute quota the way OpenShift
// enforces quota across namespaces: one ClusterResourceQuota whose
// selector picks every host namespace of the tenant (by the tenant label
// the syncer puts on them, which tenants cannot set) and whose hard limits
// are the tenant's total. OpenShift's cluster quota admission then counts
// every namespace's use against the one total, with no window in which a
// burst across namespaces exceeds it (docs/quota.md). It replaces the
// per-namespace ResourceQuotas on an OpenShift host; the LimitRanges stay.
func ClusterResourceQuota(t *tenant.Tenant) *unstructured.Unstructured {
	marks := hostnames.Marks{Tenant: t.Name, TenantUID: t.UID, OwnerUID: t.UID, ChangedBy: hostnames.ChangedBy(t)}
	hard := map[string]interface{}{}
	for r, q := range t.Spec.Quota.HostQuota() {
		hard[string(r)] = q.String()
	}
	labels := map[string]interface{}{}
	for k, v := range marks.Labels() {
		labels[k] = v
	}
	annotations := map[string]interface{}{}
	for k, v := range marks.Annotations() {
		annotations[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": ClusterResourceQuotas.GroupVersion().String(),
		"kind":       "ClusterResourceQuota",
		"metadata": map[string]interface{}{
			"name":        ClusterResourceQuotaName(t.Name),
			"labels":      labels,
			"annotations": annotations,
		},
		"spec": map[string]interface{}{
			"selector": map[string]interface{}{
				"labels": map[string]interface{}{"matchLabels": map[string]interface{}{hostnames.TenantLabel: t.Name}},
			},
			"quota": map[string]interface{}{"hard": hard},
		},
	}}
}
