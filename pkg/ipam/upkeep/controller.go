// Package upkeep runs the periodic work of IPAM inside tenant-apiserver:
// AddressPool status (capacity, allocated, free) and the sweepers that
// reclaim allocations no live Tenant records, and tenant-local claims no
// live object records (what a crash between allocating and storing, or
// between storing and releasing, leaves behind).
package upkeep

import (
	"context"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/addresspool"
)

// Controller keeps AddressPool status current and sweeps leaked allocations.
type Controller struct {
	Allocator *ipam.Allocator
	// Pools reads AddressPools; PoolStatus writes their status.
	Pools, PoolStatus *genericregistry.Store
	// Keep says whether an allocation is still recorded by a live Tenant.
	Keep func(ipam.Allocation) (bool, error)
	// Period between passes.
	Period time.Duration
	// SweepMinAge is how old an unrecorded allocation must be to be reclaimed.
	SweepMinAge time.Duration
	// Local, when set, is the tenant-local keyspace (a Network's subnets
	// and NAT address, claimed from its tenant's space), and LocalKeep says
	// whether a claim there is still recorded by the object it names.
	Local     *ipam.Allocator
	LocalKeep func(ipam.Allocation) (bool, error)
	// LocalReclaim, when set, claims again in the tenant-local keyspace
	// what live objects record but nobody holds (objects stored before
	// they claimed there), and returns how many it claimed.
	LocalReclaim func(context.Context) (int, error)
}

// Run works every Period until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithName("ipam")
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if n, err := ipam.SweepUnused(ctx, c.Allocator, c.Keep, ipam.MinAge(c.SweepMinAge)); err != nil {
			logger.Error(err, "Sweeping allocations")
		} else if n > 0 {
			logger.Info("Reclaimed allocations no live tenant records", "count", n)
		}
		if c.Local != nil && c.LocalKeep != nil {
			if n, err := ipam.SweepUnused(ctx, c.Local, c.LocalKeep, ipam.MinAge(c.SweepMinAge)); err != nil {
				logger.Error(err, "Sweeping tenant-local claims")
			} else if n > 0 {
				logger.Info("Reclaimed tenant-local claims no live object records", "count", n)
			}
		}
		if c.LocalReclaim != nil {
			if n, err := c.LocalReclaim(ctx); err != nil {
				logger.Error(err, "Claiming again what objects record in the tenant-local keyspace", "claimed", n)
			} else if n > 0 {
				logger.Info("Claimed again what objects record in the tenant-local keyspace", "count", n)
			}
		}
		if err := c.updatePoolStatus(ctx); err != nil {
			logger.Error(err, "Updating AddressPool status")
		}
	}, c.Period)
}

func (c *Controller) updatePoolStatus(ctx context.Context) error {
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	list, err := c.Pools.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return err
	}
	for i := range list.(*tenant.AddressPoolList).Items {
		p := &list.(*tenant.AddressPoolList).Items[i]
		st, err := addresspool.Status(ctx, c.Allocator, p)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Computing pool status", "pool", p.Name)
			continue
		}
		if apiequality.Semantic.DeepEqual(st, p.Status) {
			continue
		}
		_, _, err = c.PoolStatus.Update(ctx, p.Name, rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			o := old.(*tenant.AddressPool).DeepCopy()
			o.Status.ObservedGeneration, o.Status.Capacity, o.Status.Allocated, o.Status.Free = st.ObservedGeneration, st.Capacity, st.Allocated, st.Free
			return o, nil
		}), nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			klog.FromContext(ctx).Error(err, "Writing pool status", "pool", p.Name)
		}
	}
	return nil
}
