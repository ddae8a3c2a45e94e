package quota

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Recounter repairs Tenant.status.usage from the objects actually stored.
// A server that dies between charging a quota and storing the object leaves
// usage one too high; the recounter lowers it once it has seen the same
// excess on two passes in a row (so a create in flight, charged but not
// yet stored, is never mistaken for a leak), and raises it at once when
// more objects exist than usage says.
type Recounter struct {
	tenants *genericregistry.Store
	// stores of the counted kinds, by quota resource name.
	stores map[string]*genericregistry.Store
	// Period between passes.
	Period time.Duration

	// excess remembers, per tenant and resource, the usage seen above the
	// count on the previous pass.
	excess map[string]int32
}

// NewRecounter returns a recounter of the Tenants of tenantStatusStore over
// stores (quota resource name -> storage of that kind).
func NewRecounter(tenantStatusStore *genericregistry.Store, stores map[string]*genericregistry.Store) *Recounter {
	return &Recounter{tenants: tenantStatusStore, stores: stores, Period: time.Minute, excess: map[string]int32{}}
}

// Run recounts every Period until ctx ends.
func (r *Recounter) Run(ctx context.Context) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := r.Pass(ctx); err != nil {
			klog.FromContext(ctx).Error(err, "Recounting tenant quota usage")
		}
	}, r.Period)
}

// Pass recounts every tenant once. Until the watch caches of the
// counted kinds are ready (right after a start), it counts nothing: the
// next pass does.
func (r *Recounter) Pass(ctx context.Context) error {
	for resource, store := range r.stores {
		if err := store.ReadinessCheck(); err != nil {
			klog.FromContext(ctx).V(2).Info("Not recounting quota usage yet", "resource", resource, "reason", err.Error())
			return nil
		}
	}
	list, err := r.tenants.List(ctx, &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return err
	}
	for _, t := range list.(*tenant.TenantList).Items {
		for resource, store := range r.stores {
			if err := r.recount(ctx, &t, resource, store); err != nil {
				klog.FromContext(ctx).Error(err, "Recounting quota usage", "tenant", t.Name, "resource", resource)
			}
		}
	}
	return nil
}

func (r *Recounter) recount(ctx context.Context, t *tenant.Tenant, resource string, store *genericregistry.Store) error {
	objs, err := store.List(tenancy.WithTenant(ctx, t.Name), &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return err
	}
	count := int32(meta.LenList(objs))
	used, _, err := fields(t, resource)
	if err != nil {
		return err
	}
	key := t.Name + "/" + resource
	switch {
	case count == *used:
		delete(r.excess, key)
		return nil
	case count < *used:
		excess := *used - count
		if prev, seen := r.excess[key]; !seen || prev != excess {
			r.excess[key] = excess
			return nil
		}
	}
	delete(r.excess, key)
	return r.set(ctx, t.Name, resource, *used, count)
}

// errUsageMoved aborts a repair: usage changed since it was read.
var errUsageMoved = errors.New("usage changed while recounting")

// set writes usage of resource to count, unless it moved away from seen
// since it was read (a create or delete in between): the next pass looks again.
func (r *Recounter) set(ctx context.Context, tenantName, resource string, seen, count int32) error {
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	_, _, err := r.tenants.Update(ctx, tenantName, rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		t := old.(*tenant.Tenant).DeepCopy()
		used, _, err := fields(t, resource)
		if err != nil {
			return nil, err
		}
		if *used != seen {
			return nil, errUsageMoved
		}
		klog.FromContext(ctx).Info("Repairing quota usage", "tenant", tenantName, "resource", resource, "from", *used, "to", count)
		*used = count
		return t, nil
	}), nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if errors.Is(err, errUsageMoved) {
		return nil
	}
	return err
}
