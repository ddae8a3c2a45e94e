// Package upkeep runs the periodic work of IPAM inside tenant-apiserver:
// AddressPool status (capacity, allocated, free); in every keyspace, the
// sweeper that reclaims allocations no live object records (what a crash
// between allocating and storing, or between storing and releasing, leaves
// behind); and the repair of claims that objects record and nobody holds.
package upkeep

import (
	"context"
	"errors"
	"slices"
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
	// Allocator hands out the tenants' blocks and public IPs.
	Allocator *ipam.Allocator
	// Pools reads AddressPools; PoolStatus writes their status.
	Pools, PoolStatus *genericregistry.Store
	// Recorders are the kinds whose objects record allocations, of every
	// keyspace: in each, the sweeper releases what no object records, and
	// each recorder claims again what its objects record and nobody holds.
	Recorders []ipam.Recorder
	// Period between passes.
	Period time.Duration
	// SweepMinAge is how old an unrecorded allocation must be to be reclaimed.
	SweepMinAge time.Duration

	// pools are the pools whose fill the metrics report.
	pools map[string]bool
}

// Keep is the sweeper's rule in space: what its recorders say.
func (c *Controller) Keep(space *ipam.Allocator) func(ipam.Allocation) (bool, error) {
	var in []ipam.Recorder
	for _, r := range c.Recorders {
		if r.Space() == space {
			in = append(in, r)
		}
	}
	return ipam.KeepRecorded(in)
}

// spaces are the keyspaces of the recorders, in their order.
func (c *Controller) spaces() []*ipam.Allocator {
	var out []*ipam.Allocator
	for _, r := range c.Recorders {
		if !slices.Contains(out, r.Space()) {
			out = append(out, r.Space())
		}
	}
	return out
}

// Reclaim has every recorder claim again what its objects record and
// nobody holds, and returns how many claims they made.
func (c *Controller) Reclaim(ctx context.Context) (int, error) {
	total := 0
	var errs []error
	for _, r := range c.Recorders {
		n, err := r.Reclaim(ctx)
		total += n
		errs = append(errs, err)
	}
	return total, errors.Join(errs...)
}

// Run works every Period until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithName("ipam")
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		for _, space := range c.spaces() {
			if n, err := ipam.SweepUnused(ctx, space, c.Keep(space), ipam.MinAge(c.SweepMinAge)); err != nil {
				logger.Error(err, "Sweeping allocations", "keyspace", space.Prefix())
			} else if n > 0 {
				logger.Info("Reclaimed allocations no live object records", "keyspace", space.Prefix(), "count", n)
			}
		}
		if n, err := c.Reclaim(ctx); err != nil {
			logger.Error(err, "Claiming again what objects record", "claimed", n)
		} else if n > 0 {
			logger.Info("Claimed again what objects record", "count", n)
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
	fill := map[string]*[3]int64{}
	defer func() { c.pools = recordPools(c.pools, fill) }()
	for i := range list.(*tenant.AddressPoolList).Items {
		p := &list.(*tenant.AddressPoolList).Items[i]
		fill[p.Name] = nil
		st, err := addresspool.Status(ctx, c.Allocator, p)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Computing pool status", "pool", p.Name)
			continue
		}
		fill[p.Name] = &[3]int64{st.Capacity, st.Allocated, st.Free}
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
