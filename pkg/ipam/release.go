package ipam

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultSweepMinAge is how old an allocation must be before Sweep may
// release it. An owner's allocation can exist shortly before the owner is
// visible to the alive function (a Tenant allocated for while it is being
// created); the age keeps SweepUnused off such allocations.
const DefaultSweepMinAge = time.Minute

// Release frees block if owner holds it: same tenant UID, and same purpose
// unless owner.Purpose is empty. Releasing a block nobody holds is not an
// error; releasing someone else's is an *OwnerMismatchError. The delete is a
// transaction conditioned on the allocation being unchanged since it was
// read, so a block released and re-allocated meanwhile is never freed.
func (a *Allocator) Release(ctx context.Context, block netip.Prefix, owner Owner) error {
	if err := validateBlock(block); err != nil {
		return err
	}
	if err := owner.validate(); err != nil {
		return err
	}
	_, err := a.deleteIf(ctx, block, func(alloc Allocation) (bool, error) {
		if !owner.matches(alloc.Owner) {
			return false, &OwnerMismatchError{Block: block, Holder: alloc.Owner}
		}
		return true, nil
	})
	return err
}

// ReleaseOwner frees every block held by tenantUID, whatever its purpose,
// and returns how many it freed. It reads only that owner's index keys.
func (a *Allocator) ReleaseOwner(ctx context.Context, tenantUID string) (int, error) {
	if tenantUID == "" {
		return 0, fmt.Errorf("%w: empty tenant UID", ErrInvalid)
	}
	blocks, err := a.ownerBlocks(ctx, tenantUID)
	if err != nil {
		return 0, err
	}
	released := 0
	var errs []error
	for _, b := range blocks {
		deleted, err := a.deleteIf(ctx, b, func(alloc Allocation) (bool, error) {
			return alloc.Owner.TenantUID == tenantUID, nil
		})
		if err != nil {
			errs = append(errs, err)
		}
		if deleted {
			released++
		}
	}
	return released, errors.Join(errs...)
}

func (a *Allocator) ownerBlocks(ctx context.Context, tenantUID string) ([]netip.Prefix, error) {
	dir := ownerDir(a.prefix, tenantUID)
	var blocks []netip.Prefix
	_, err := rangeAll(ctx, a.client, dir, clientv3.GetPrefixRangeEnd(dir), 0, true, func(kv keyValue) error {
		b, err := parseBlockSuffix(kv.key[len(dir):])
		if err != nil {
			return err
		}
		blocks = append(blocks, b)
		return nil
	})
	return blocks, err
}

// deleteIf deletes the allocation of block if check approves the stored
// value, and reports whether it did. A missing block is no error.
func (a *Allocator) deleteIf(ctx context.Context, block netip.Prefix, check func(Allocation) (bool, error)) (bool, error) {
	key := BlockKey(a.prefix, block)
	for range maxAttempts {
		resp, err := a.client.Get(ctx, key)
		if err != nil {
			return false, err
		}
		if len(resp.Kvs) == 0 {
			return false, nil
		}
		kv := resp.Kvs[0]
		alloc, err := decodeAllocation(block, keyValue{key: key, value: kv.Value, modRev: kv.ModRevision})
		if err != nil {
			return false, err
		}
		if ok, err := check(alloc); !ok || err != nil {
			return false, err
		}
		deleted, rev, err := a.deleteAt(ctx, block, kv.ModRevision, alloc.Owner.TenantUID)
		if err != nil {
			return false, err
		}
		if deleted {
			a.hint.observe(rev, false, block)
			return true, nil
		}
	}
	return false, fmt.Errorf("releasing %s: %w", block, ErrContention)
}

// deleteAt deletes block and its owner index key if the block is still at
// modification revision modRev.
func (a *Allocator) deleteAt(ctx context.Context, block netip.Prefix, modRev int64, tenantUID string) (bool, int64, error) {
	key := BlockKey(a.prefix, block)
	resp, err := a.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", modRev)).
		Then(clientv3.OpDelete(key), clientv3.OpDelete(ownerKey(a.prefix, tenantUID, block))).
		Commit()
	if err != nil {
		return false, 0, err
	}
	return resp.Succeeded, resp.Header.Revision, nil
}

// SweepOption configures SweepUnused.
type SweepOption func(*sweepOptions)

type sweepOptions struct {
	minAge time.Duration
	kept   *Held
}

// MinAge overrides DefaultSweepMinAge.
func MinAge(d time.Duration) SweepOption { return func(o *sweepOptions) { o.minAge = d } }

// Kept sets *held, once the sweep has read the whole keyspace, to every
// allocation it left in place (too young, kept, or not released): what
// HeldIn would read after the sweep, without a second pass, so that the
// keyspace's recorders reclaim from the sweep's. A pass that did not
// complete (other than for values that do not decode) leaves *held nil.
func Kept(held *Held) SweepOption { return func(o *sweepOptions) { o.kept = held } }

// SweepUnused releases every allocation, at least the minimum age old, that
// keep refuses, and returns how many it released. It is the repair for a
// crash between allocating and recording an allocation, between shrinking
// a record and releasing, or between deleting an owner and releasing its
// space. An allocation is released only if keep answered false without
// error, and it is unchanged since SweepUnused read it; an error from keep
// keeps the allocation and is returned.
func SweepUnused(ctx context.Context, a *Allocator, keep func(Allocation) (bool, error), opts ...SweepOption) (int, error) {
	o := sweepOptions{minAge: DefaultSweepMinAge}
	for _, opt := range opts {
		opt(&o)
	}
	// An allocation that cannot be decoded is reported and kept; it must
	// not stop the sweep of the others.
	now := a.clock.Now()
	released := 0
	var errs []error
	held := Held{}
	err := a.EachAllocation(ctx, func(alloc Allocation) error {
		if deleted, err := sweepOne(ctx, a, keep, now, o.minAge, alloc); err != nil {
			errs = append(errs, err)
		} else if deleted {
			released++
			return nil
		}
		held.add(alloc)
		return nil
	})
	var decode *DecodeErrors
	if o.kept != nil && (err == nil || errors.As(err, &decode)) {
		*o.kept = held
	}
	errs = append(errs, err)
	return released, errors.Join(errs...)
}

// sweepOne releases alloc, read at now, if it is at least minAge old and
// keep refuses it, and says whether it did.
func sweepOne(ctx context.Context, a *Allocator, keep func(Allocation) (bool, error), now time.Time, minAge time.Duration, alloc Allocation) (bool, error) {
	if now.Sub(alloc.Created) < minAge {
		return false, nil
	}
	kept, err := keep(alloc)
	if err != nil {
		return false, fmt.Errorf("checking owner %q of %s: %w", alloc.Owner.TenantUID, alloc.Block, err)
	}
	if kept {
		return false, nil
	}
	deleted, _, err := a.deleteAt(ctx, alloc.Block, alloc.Revision, alloc.Owner.TenantUID)
	return deleted, err
}
