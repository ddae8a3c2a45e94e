// Package quota counts each tenant's objects against Tenant.spec.quota.
//
// The count lives in Tenant.status.usage and changes by compare-and-swap on
// the Tenant, the way Kubernetes' ResourceQuota admission charges a quota
// before an object is stored: a create first takes a unit (refused with 403
// when none is left), and gives it back if the create fails. Concurrent
// creates race on the Tenant's resourceVersion, so 50 concurrent creates
// against a quota of 10 admit exactly 10.
package quota

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Resources that count against a quota, as named in errors and in Tenant.spec.quota.
const (
	Namespaces    = "namespaces"
	Networks      = "networks"
	FloatingIPs   = "floatingIPs"
	LoadBalancers = "loadBalancers"
	HostClaims    = "hostClaims"
)

// Tracker charges quotas on the Tenants of a store.
type Tracker struct {
	// tenants writes Tenant status.
	tenants *genericregistry.Store

	mu      sync.Mutex
	pending map[string]*tenantCharges // by tenant name
}

var _ kindstore.QuotaTracker = &Tracker{}

// NewTracker returns a tracker that keeps usage in the status of the
// Tenants of tenantStatusStore.
func NewTracker(tenantStatusStore *genericregistry.Store) *Tracker {
	return &Tracker{tenants: tenantStatusStore}
}

// fields returns the usage counter and the limit of resource in t.
func fields(t *tenant.Tenant, resource string) (used *int32, limit *int32, err error) {
	switch resource {
	case Namespaces:
		return &t.Status.Usage.Namespaces, t.Spec.Quota.Namespaces, nil
	case Networks:
		return &t.Status.Usage.Networks, t.Spec.Quota.Networks, nil
	case FloatingIPs:
		return &t.Status.Usage.FloatingIPs, t.Spec.Quota.FloatingIPs, nil
	case LoadBalancers:
		return &t.Status.Usage.LoadBalancers, t.Spec.Quota.LoadBalancers, nil
	case HostClaims:
		return &t.Status.Usage.HostClaims, t.Spec.Quota.HostClaims, nil
	}
	return nil, nil, fmt.Errorf("no quota for %q", resource)
}

// refuse is the 403 of a full quota, counted in tenant_quota_refusals_total.
func refuse(resource string, used, limit int32) error {
	refusals.WithLabelValues(lower(resource)).Inc()
	return refusal(resource, used, limit)
}

// refusal is the 403 of a full quota.
func refusal(resource string, used, limit int32) error {
	return apierrors.NewForbidden(tenant.Resource(lower(resource)), "",
		fmt.Errorf("exceeded quota: %s, requested 1, used %d, limited %d", resource, used, limit))
}

// refusals counts the creates a full quota refused, by resource (never by
// tenant: the series stay as many as the kinds with a quota).
var refusals = metrics.NewCounterVec(&metrics.CounterOpts{
	Subsystem:      "tenant_quota",
	Name:           "refusals_total",
	Help:           "Creates of tenant objects refused because the tenant's quota of the resource was full (403), dry runs included, by resource.",
	StabilityLevel: metrics.ALPHA,
}, []string{"resource"})

// chargesPerWrite is how many charges each write of a Tenant's usage
// carried: 1 for creates one at a time, more for a tenant's creates at once.
var chargesPerWrite = metrics.NewHistogram(&metrics.HistogramOpts{
	Subsystem:      "tenant_quota",
	Name:           "charges_per_write",
	Help:           "Quota charges and releases written together in one update of a Tenant's usage.",
	Buckets:        []float64{1, 2, 4, 8, 16, 32, 64},
	StabilityLevel: metrics.ALPHA,
})

func init() {
	legacyregistry.MustRegister(refusals, chargesPerWrite)
}

// Reserve implements kindstore.QuotaTracker. A Tenant being deleted takes no
// new charge: 403 "tenant <t> is being deleted".
func (q *Tracker) Reserve(ctx context.Context, tenantName, resource string, dryRun bool) error {
	gr := tenant.Resource(lower(resource))
	if tenantName == "" {
		return apierrors.NewForbidden(gr, "", fmt.Errorf("no tenant to charge"))
	}
	if dryRun {
		obj, err := q.tenants.Get(ctx, tenantName, &metav1.GetOptions{})
		if err != nil {
			return tenantError(tenantName, err)
		}
		t := obj.(*tenant.Tenant)
		if t.DeletionTimestamp != nil {
			return terminating(gr, tenantName)
		}
		if uid := tenancy.TenantUIDFrom(ctx); uid != "" && uid != t.UID {
			return recreated(gr, tenantName)
		}
		used, limit, err := fields(t, resource)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		if limit != nil && *used+1 > *limit {
			return refuse(resource, *used, *limit)
		}
		return nil
	}
	return tenantError(tenantName, q.add(ctx, tenantName, resource, 1))
}

// Release implements kindstore.QuotaTracker. A failure leaves usage too high
// until the next recount; it never lets a tenant past its quota.
func (q *Tracker) Release(ctx context.Context, tenantName, resource string) {
	if tenantName == "" {
		return
	}
	if err := q.add(ctx, tenantName, resource, -1); err != nil && !apierrors.IsNotFound(err) {
		klog.FromContext(ctx).Error(err, "Releasing quota", "tenant", tenantName, "resource", resource)
	}
}

// recreated is the 409 of a create whose tenant was deleted and created
// again since the caller's guard resolved it.
func recreated(gr schema.GroupResource, tenantName string) error {
	return apierrors.NewConflict(gr, "", fmt.Errorf("tenant %s was deleted and created again meanwhile; try again", tenantName))
}

// terminating is the 403 of a create in a Tenant being deleted: nothing
// new may appear in it while the syncer removes what it had.
func terminating(gr schema.GroupResource, tenantName string) error {
	return apierrors.NewForbidden(gr, "", fmt.Errorf("tenant %s is being deleted", tenantName))
}

// tenantError turns a missing Tenant into a 403: it is the caller's tenant.
func tenantError(tenantName string, err error) error {
	if apierrors.IsNotFound(err) {
		return apierrors.NewForbidden(tenant.Resource("tenants"), tenantName, fmt.Errorf("tenant %q does not exist", tenantName))
	}
	return err
}

func lower(resource string) string {
	switch resource {
	case FloatingIPs:
		return "floatingips"
	case LoadBalancers:
		return "loadbalancers"
	case HostClaims:
		return "hostclaims"
	}
	return resource
}
