package ipam

import (
	"context"
	"errors"
	"net/netip"
)

// A Recorder is a kind of object that records, in its objects, the
// allocations they hold in one keyspace: a Tenant its block and public IPs,
// a Network its subnets and NAT address. The sweepers ask it before they
// release an allocation, and it repairs what its objects record and nobody
// holds.
type Recorder interface {
	// Space is the keyspace of its allocations.
	Space() *Allocator
	// Names says whether alloc is held for one of its objects.
	Names(alloc Allocation) bool
	// Recorded says whether the object alloc names still records it.
	Recorded(alloc Allocation) (bool, error)
	// Reclaim claims again what its objects record and held does not
	// hold (held is its keyspace as one pass over it read it), and
	// returns how many it claimed.
	Reclaim(ctx context.Context, held Held) (int, error)
}

// Held is what a keyspace holds, as one pass over it read it: the purpose
// of the allocation of each block. The periodic work reads a keyspace
// once, in its sweep (see Kept), and gives what the sweep kept to every
// recorder of that keyspace.
type Held map[netip.Prefix]string

// add records alloc as held.
func (h Held) add(alloc Allocation) { h[alloc.Block] = alloc.Owner.Purpose }

// HeldIn reads what keyspace a holds, in one pass. An allocation that does
// not decode is not in it, and is reported in a *DecodeErrors beside the
// rest; any other error returns no Held.
func HeldIn(ctx context.Context, a *Allocator) (Held, error) {
	held := Held{}
	err := a.EachAllocation(ctx, func(alloc Allocation) error {
		held.add(alloc)
		return nil
	})
	var decode *DecodeErrors
	if err != nil && !errors.As(err, &decode) {
		return nil, err
	}
	return held, err
}

// KeepRecorded is the rule of SweepUnused over recorders of one keyspace:
// an allocation stays while the recorder that names it says it is
// recorded; one that no recorder names stays too.
func KeepRecorded(recorders []Recorder) func(Allocation) (bool, error) {
	return func(alloc Allocation) (bool, error) {
		for _, r := range recorders {
			if r.Names(alloc) {
				return r.Recorded(alloc)
			}
		}
		return true, nil
	}
}
