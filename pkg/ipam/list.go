package ipam

import (
	"context"
	"errors"
	"net/netip"
	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// List returns the allocations that lie inside the pool's CIDRs and ranges
// (excluded space included), in address order, read from etcd at one
// revision.
func (a *Allocator) List(ctx context.Context, pool Pool) ([]Allocation, error) {
	cp, err := compile(pool)
	if err != nil {
		return nil, err
	}
	return a.listSpace(ctx, cp.space)
}

// ListAll returns every allocation, in address order. Values that do not
// decode are left out and reported in the error, with the rest returned.
func (a *Allocator) ListAll(ctx context.Context) ([]Allocation, error) {
	var out []Allocation
	err := a.EachAllocation(ctx, func(alloc Allocation) error {
		out = append(out, alloc)
		return nil
	})
	var decode *DecodeErrors
	if err != nil && !errors.As(err, &decode) {
		return nil, err
	}
	sortAllocations(out)
	return out, err
}

// EachAllocation calls fn with every allocation, in key order, read from
// etcd at one revision a page at a time: the periodic passes over every
// allocation hold one page in memory, not all of them. Values that do not
// decode are skipped and reported together in a *DecodeErrors once every
// other allocation has been seen; an error of fn stops the pass and is
// returned.
func (a *Allocator) EachAllocation(ctx context.Context, fn func(Allocation) error) error {
	dir := a.prefix + blocksDir
	var errs []error
	_, err := rangeAll(ctx, a.client, dir, clientv3.GetPrefixRangeEnd(dir), 0, false, func(kv keyValue) error {
		alloc, err := a.decodeKV(kv)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		return fn(alloc)
	})
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return &DecodeErrors{Errs: errs}
	}
	return nil
}

// DecodeErrors are the allocations a pass could not decode.
type DecodeErrors struct{ Errs []error }

func (e *DecodeErrors) Error() string { return errors.Join(e.Errs...).Error() }

// Unwrap returns the decode errors.
func (e *DecodeErrors) Unwrap() []error { return e.Errs }

// ListOwner returns the allocations held by tenantUID, in address order: what
// a caller that crashed mid-way finds again.
func (a *Allocator) ListOwner(ctx context.Context, tenantUID string) ([]Allocation, error) {
	blocks, err := a.ownerBlocks(ctx, tenantUID)
	if err != nil {
		return nil, err
	}
	var out []Allocation
	for _, b := range blocks {
		resp, err := a.client.Get(ctx, BlockKey(a.prefix, b))
		if err != nil {
			return nil, err
		}
		for _, kv := range resp.Kvs {
			alloc, err := a.decodeKV(keyValue{key: string(kv.Key), value: kv.Value, modRev: kv.ModRevision})
			if err != nil {
				return nil, err
			}
			if alloc.Owner.TenantUID == tenantUID {
				out = append(out, alloc)
			}
		}
	}
	sortAllocations(out)
	return out, nil
}

// Usage returns the number of addresses the pool hands out (its space minus
// Exclude) and how many of those are allocated, counted from etcd.
func (a *Allocator) Usage(ctx context.Context, pool Pool) (capacity, allocated uint64, err error) {
	cp, err := compile(pool)
	if err != nil {
		return 0, 0, err
	}
	dir := a.prefix + blocksDir
	var blocks []netip.Prefix
	var rev int64
	for _, s := range cp.space {
		key := BlockKey(a.prefix, s)
		rev, err = rangeAll(ctx, a.client, key, clientv3.GetPrefixRangeEnd(key), rev, true, func(kv keyValue) error {
			if b, err := parseBlockSuffix(kv.key[len(dir):]); err == nil {
				blocks = append(blocks, b)
			}
			return nil
		})
		if err != nil {
			return 0, 0, err
		}
	}
	return Capacity(cp.available), Capacity(Intersect(blocks, cp.available)), nil
}

func (a *Allocator) listSpace(ctx context.Context, space []netip.Prefix) ([]Allocation, error) {
	var out []Allocation
	var errs []error
	var rev int64
	for _, s := range space {
		key := BlockKey(a.prefix, s)
		r, err := rangeAll(ctx, a.client, key, clientv3.GetPrefixRangeEnd(key), rev, false, func(kv keyValue) error {
			alloc, err := a.decodeKV(kv)
			if err != nil {
				errs = append(errs, err)
				return nil
			}
			out = append(out, alloc)
			return nil
		})
		if err != nil {
			return nil, err
		}
		rev = r
	}
	sortAllocations(out)
	return out, errors.Join(errs...)
}

func (a *Allocator) decodeKV(kv keyValue) (Allocation, error) {
	b, err := ParseBlockKey(a.prefix, kv.key)
	if err != nil {
		return Allocation{}, err
	}
	return decodeAllocation(b, kv)
}

func sortAllocations(as []Allocation) {
	slices.SortFunc(as, func(x, y Allocation) int { return comparePrefix(x.Block, y.Block) })
}

// Preview returns the block of prefix length bits that AllocateBlock would
// give from pool now if no other claim competed: the lowest free one
// (first fit). It claims nothing; dry runs show what they would get with
// it. No free block is an *ExhaustedError.
func (a *Allocator) Preview(ctx context.Context, pool Pool, bits int) (netip.Prefix, error) {
	if err := pool.Validate(); err != nil {
		return netip.Prefix{}, err
	}
	allocs, err := a.List(ctx, pool)
	if err != nil {
		return netip.Prefix{}, err
	}
	taken := make([]netip.Prefix, 0, len(allocs))
	for _, al := range allocs {
		taken = append(taken, al.Block)
	}
	if free, ok := firstFit(pool.Available(), taken, bits); ok {
		return free, nil
	}
	return netip.Prefix{}, &ExhaustedError{Pool: pool.Name, PrefixLen: bits, Requested: 1}
}

// firstFit returns the lowest aligned block of prefix length bits that lies
// inside space and overlaps nothing in taken.
func firstFit(space, taken []netip.Prefix, bits int) (netip.Prefix, bool) {
	var best netip.Prefix
	for _, free := range Subtract(space, taken) {
		if free.Bits() > bits {
			continue
		}
		if !best.IsValid() || free.Addr().Less(best.Addr()) {
			best = netip.PrefixFrom(free.Addr(), bits)
		}
	}
	return best, best.IsValid()
}
