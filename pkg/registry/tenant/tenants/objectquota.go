package tenants

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// defaultObjectQuota fills in the provider's default object counts
// (--default-object-quota) that a new Tenant's spec.quota names in neither
// objects nor compute: every tenant is limited from its first moment, and
// its spec says by how much. The defaults were validated when the server
// started; a provider changes a tenant's counts like any other field, and
// changing the defaults leaves existing Tenants as they are.
func defaultObjectQuota(defaults corev1.ResourceList) kindstore.WriteFunc[*tenant.Tenant] {
	return func(_ context.Context, w *kindstore.Write[*tenant.Tenant]) (genericregistry.FinishFunc, error) {
		t := w.Obj
		if len(defaults) == 0 {
			return noFinish, nil
		}
		q := &t.Spec.Quota
		for r, v := range defaults {
			if _, set := q.Objects[r]; set {
				continue
			}
			if _, set := q.Compute[r]; set {
				continue
			}
			if q.Objects == nil {
				q.Objects = corev1.ResourceList{}
			}
			q.Objects[r] = v.DeepCopy()
		}
		return noFinish, nil
	}
}

func noFinish(context.Context, bool) {}
