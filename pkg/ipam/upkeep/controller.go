// Package upkeep runs the periodic work of IPAM inside tenant-apiserver:
// AddressPool status (capacity, allocated, free); in every keyspace, the
// sweeper that reclaims allocations no live object records (what a crash
// between allocating and storing, or between storing and releasing, leaves
// behind); and the repair of claims that objects record and nobody holds.
package upkeep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
	return ipam.KeepRecorded(c.recordersOf(space))
}

// recordersOf are the recorders of space, in their order.
func (c *Controller) recordersOf(space *ipam.Allocator) []ipam.Recorder {
	var in []ipam.Recorder
	for _, r := range c.Recorders {
		if r.Space() == space {
			in = append(in, r)
		}
	}
	return in
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
// nobody holds, each keyspace read once for all of its recorders, and
// returns how many claims they made.
func (c *Controller) Reclaim(ctx context.Context) (int, error) {
	total := 0
	var errs []error
	for _, space := range c.spaces() {
		held, err := ipam.HeldIn(ctx, space)
		if held == nil {
			errs = append(errs, err)
			continue
		}
		read, err := readAll(ctx, c.recordersOf(space))
		errs = append(errs, err)
		n, err := reclaimFrom(ctx, read, held)
		total += n
		errs = append(errs, err)
	}
	return total, errors.Join(errs...)
}

// readAll reads the objects of each of recorders once; read[i] is nil
// where recorders[i]'s read failed, and the error says why.
func readAll(ctx context.Context, recorders []ipam.Recorder) ([]ipam.Records, error) {
	read := make([]ipam.Records, len(recorders))
	var errs []error
	for i, r := range recorders {
		records, err := r.Read(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading the objects that record claims: %w", err))
			continue
		}
		read[i] = records
	}
	return read, errors.Join(errs...)
}

// reclaimFrom has each read claim again what its objects record and held
// does not hold.
func reclaimFrom(ctx context.Context, read []ipam.Records, held ipam.Held) (int, error) {
	total := 0
	var errs []error
	for _, records := range read {
		if records == nil {
			continue
		}
		n, err := records.Reclaim(ctx, held)
		total += n
		errs = append(errs, err)
	}
	return total, errors.Join(errs...)
}

// Run makes a Pass and updates AddressPool status every Period until ctx
// ends, or less often where a pass takes long (see Pace).
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithName("ipam")
	pacer := &Pacer{Period: c.Period}
	for {
		start := time.Now()
		released, claimed, err := c.Pass(ctx)
		if err != nil {
			logger.Error(err, "Sweeping allocations and claiming again what objects record", "released", released, "claimed", claimed)
		} else if released > 0 || claimed > 0 {
			logger.Info("Released allocations no live object records, claimed again what objects record", "released", released, "claimed", claimed)
		}
		if err := c.updatePoolStatus(ctx); err != nil {
			logger.Error(err, "Updating AddressPool status")
		}
		took := time.Since(start)
		passSeconds.Observe(took.Seconds())
		select {
		case <-ctx.Done():
			return
		case <-time.After(pacer.Next(took)):
		}
	}
}

// Pacer paces passes of a period by how long they take (Pace). A pass
// that waited for etcd (an outage) did no more work than the one before
// it: the shorter of the last two passes paces.
type Pacer struct {
	Period   time.Duration
	previous time.Duration
}

// Next is the wait after a pass that took took.
func (p *Pacer) Next(took time.Duration) time.Duration {
	by := took
	if p.previous > 0 {
		by = min(took, p.previous)
	}
	p.previous = took
	return Pace(p.Period, by)
}

// MaxShare is the most of the time the passes take. A pass reads every
// allocation and every object that records one, so its time grows with
// the tenants (tenant_ipam_upkeep_pass_duration_seconds); at a fixed
// period its share of the CPU would grow with them, taken from everything
// else the process does (a restart's initial sync most).
const MaxShare = 0.1

// MaxPace bounds the wait between passes (unless the period is longer):
// a leak is repaired, and pool status refreshed, within it, however long
// passes take.
const MaxPace = time.Minute

// Pace is how long Run waits after a pass that took took: period, or long
// enough that passes take at most MaxShare of the time, but no longer than
// MaxPace or period.
func Pace(period, took time.Duration) time.Duration {
	share := time.Duration(float64(took) * (1 - MaxShare) / MaxShare)
	return max(period, min(share, MaxPace))
}

// Pass reads each keyspace once, and the objects of each of its
// recorders once (ipam.Records): its sweep releases what no object
// records, asking a recorder only about what its read did not have, and
// its recorders claim again, from what the sweep left, what their objects
// record and nobody holds. It returns how many allocations it released
// and how many claims it made.
func (c *Controller) Pass(ctx context.Context) (released, claimed int, err error) {
	var errs []error
	for _, space := range c.spaces() {
		recorders := c.recordersOf(space)
		// Read before the sweep: an object read records only claims made
		// before it was stored, which the sweep, reading the keyspace
		// after, finds held unless a release took them.
		read, err := readAll(ctx, recorders)
		errs = append(errs, err)
		var held ipam.Held
		n, err := ipam.SweepUnused(ctx, space, ipam.KeepRead(recorders, read), ipam.MinAge(c.SweepMinAge), ipam.Kept(&held))
		released += n
		if err != nil {
			errs = append(errs, fmt.Errorf("sweeping keyspace %s: %w", space.Prefix(), err))
		}
		if held == nil {
			continue // the sweep did not read the whole keyspace: nothing to reclaim from
		}
		n, err = reclaimFrom(ctx, read, held)
		claimed += n
		errs = append(errs, err)
	}
	return released, claimed, errors.Join(errs...)
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
