package namespace

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/quotausage"
)

// The container defaults of the LimitRange of a tenant with compute quota:
// a container that sets no requests or limits of a resource the quota
// limits gets these, so that it is counted (the host refuses a pod that
// leaves out what a quota limits).
var (
	DefaultRequests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}
	DefaultLimits   = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")}
)

// syncComputeQuota makes the ResourceQuota and LimitRange of host namespace
// hostName match t's compute quota and object counts: no ResourceQuota
// without either, no LimitRange without compute quota.
func (c *Controller) syncComputeQuota(ctx context.Context, marks hostnames.Marks, t *tenant.Tenant, hostName string) (outcome, error) {
	quotas, limits := c.kinds.ResourceQuotas, c.kinds.LimitRanges
	total := t.Spec.Quota.HostQuota()
	if len(total) == 0 {
		if _, err := quotas.Remove(ctx, hostName, hostnames.ComputeQuota, marks); err != nil {
			return outcome{}, err
		}
	}
	if len(t.Spec.Quota.Compute) == 0 {
		if _, err := limits.Remove(ctx, hostName, hostnames.ContainerDefaults, marks); err != nil {
			return outcome{}, err
		}
	}
	if len(total) == 0 {
		return outcome{Synced: true, Details: details{active: true}}, nil
	}
	meta := metav1.ObjectMeta{Namespace: hostName, Labels: marks.Labels(), Annotations: marks.Annotations()}
	if len(t.Spec.Quota.Compute) > 0 {
		lr := &corev1.LimitRange{ObjectMeta: *meta.DeepCopy(), Spec: ContainerDefaultsSpec(t.Spec.Quota.Compute)}
		lr.Name = hostnames.ContainerDefaults
		got, err := limits.Ensure(ctx, lr, marks)
		if err != nil || !got.Synced {
			return outcome{Reason: got.Reason, Message: got.Message, Details: details{active: true}}, err
		}
	}
	reported := quotausage.Of(c.src, t)
	counted, believe := c.drops.counted(reported, time.Now())
	rq := &corev1.ResourceQuota{ObjectMeta: *meta.DeepCopy(), Spec: corev1.ResourceQuotaSpec{
		Hard: reported.Share(total, hostName, counted)}}
	rq.Name = hostnames.ComputeQuota
	if wait := c.shareWait(quotas, rq, marks); wait > 0 {
		return outcome{Synced: true, Details: details{active: true}, RequeueAfter: wait}, nil
	}
	gotRQ, err := quotas.Ensure(ctx, rq, marks)
	if err != nil {
		return outcome{}, err
	}
	// A drop not believed yet is believed after a while even without a
	// recount: the shares are computed again then.
	return outcome{Synced: gotRQ.Synced, Reason: gotRQ.Reason, Message: gotRQ.Message, Details: details{active: true}, RequeueAfter: believe}, nil
}

// shareWait says how long the share want of a host namespace waits for
// the namespace's usage to settle (ShareSettle) before it is written: 0
// when it is written now, as is anything else about the ResourceQuota (a
// missing one, a changed scope, missing marks).
func (c *Controller) shareWait(quotas controller.HostKind[*corev1.ResourceQuota], want *corev1.ResourceQuota, marks hostnames.Marks) time.Duration {
	have, ok := quotas.Cached(want.Namespace, want.Name)
	if !ok || have.DeletionTimestamp != nil || !hostnames.OwnedBy(have, marks.OwnerUID) || !marks.On(have) ||
		len(have.Spec.Scopes) != 0 || have.Spec.ScopeSelector != nil {
		return 0
	}
	if quotas.Matches(have, want) {
		c.shares.done(want.Namespace)
		return 0
	}
	if c.drops.pending(want.Namespace) {
		// Its usage dropped and is not believed: the lower share is
		// written now, and is what has the host recount it.
		c.shares.done(want.Namespace)
		return 0
	}
	return c.shares.wait(want.Namespace, time.Now())
}

// ContainerDefaultsSpec is the LimitRange of a tenant with compute quota:
// default requests and limits for the CPU and memory it limits.
func ContainerDefaultsSpec(compute corev1.ResourceList) corev1.LimitRangeSpec {
	item := corev1.LimitRangeItem{Type: corev1.LimitTypeContainer}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		_, requests := compute["requests."+r]
		_, limits := compute["limits."+r]
		if requests || limits {
			if item.DefaultRequest == nil {
				item.DefaultRequest = corev1.ResourceList{}
			}
			item.DefaultRequest[r] = DefaultRequests[r]
		}
		if limits {
			if item.Default == nil {
				item.Default = corev1.ResourceList{}
			}
			item.Default[r] = DefaultLimits[r]
		}
	}
	if item.Default == nil && item.DefaultRequest == nil {
		return corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{}}
	}
	return corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{item}}
}
