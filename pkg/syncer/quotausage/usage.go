// Package quotausage reads what a tenant's host namespaces use from the
// ResourceQuotas the syncer made there, and divides a tenant's quota among
// its host namespaces by that use. The namespace controller writes the
// shares; the onboarding controller reports the total in the Tenant's status.
package quotausage

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// Usage is what the tenant's host namespaces use, by namespace, as their
// ResourceQuotas (made for t) report it.
type Usage map[string]corev1.ResourceList

// Of reads the usage of t's host namespaces from the cached
// ResourceQuotas the syncer made for t.
func Of(src *controller.Sources, t *tenant.Tenant) Usage {
	out := Usage{}
	objs, err := src.HostResourceQuotas.GetIndexer().ByIndex(controller.ByTenant, t.Name)
	if err != nil {
		return out
	}
	for _, obj := range objs {
		rq, ok := obj.(*corev1.ResourceQuota)
		if !ok || rq.Name != hostnames.ComputeQuota {
			continue
		}
		if m, ours := hostnames.MarksOf(rq, hostnames.NamespaceLabel); ours && m.TenantUID == t.UID {
			out[rq.Namespace] = rq.Status.Used
		}
	}
	return out
}

// Total is the sum of the usage of every namespace, of the resources of
// compute.
func (u Usage) Total(compute corev1.ResourceList) corev1.ResourceList {
	total := corev1.ResourceList{}
	for r := range compute {
		sum := resource.Quantity{}
		for _, used := range u {
			if q, ok := used[r]; ok {
				sum.Add(q)
			}
		}
		total[r] = sum
	}
	return total
}

// Share is the hard limit of host namespace ns's ResourceQuota: for each
// resource of the tenant's total, what ns reports it uses (u) plus all
// that is free of the total by the usage counted (never below what it
// uses). Every namespace may so grow to the whole free amount; the syncer
// takes the share of the others down as soon as their ResourceQuotas
// report the use, which bounds a burst across N namespaces at (N-1) times
// the free amount over the total (docs/quota.md). counted is u but for
// drops of usage not yet believed.
func (u Usage) Share(total corev1.ResourceList, ns string, counted Usage) corev1.ResourceList {
	used := counted.Total(total)
	hard := corev1.ResourceList{}
	for r, limit := range total {
		free := limit.DeepCopy()
		free.Sub(used[r])
		if free.Sign() < 0 {
			free = resource.Quantity{}
		}
		h := u[ns][r].DeepCopy()
		h.Add(free)
		h.Format = limit.Format
		hard[r] = h
	}
	return hard
}
