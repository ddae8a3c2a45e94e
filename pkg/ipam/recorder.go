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
	// Read reads its objects once, for one pass over its keyspace: what
	// they record.
	Read(ctx context.Context) (Records, error)
}

// Records are what the objects of a Recorder record, as one read of them
// had them. A pass over a keyspace reads each of its recorders once and
// asks the read, not each object, about every allocation: at tens of
// thousands of allocations, one read of the object per allocation is most
// of a pass.
type Records interface {
	// Has says whether an object read records alloc. One that none
	// records may belong to an object newer than the read, or one the
	// read did not see yet: Recorded decides.
	Has(alloc Allocation) bool
	// Reclaim claims again what the objects read record and held does
	// not hold (held is the keyspace as one pass over it read it, after
	// the read), and returns how many it claimed. It confirms each object
	// before claiming: it may have changed since the read.
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
	return KeepRead(recorders, nil)
}

// KeepRead is KeepRecorded with what one read of each recorder's objects
// found (read[i] is recorders[i]'s; nil where it was not read): an
// allocation that the read of the recorder that names it has stays
// without asking the recorder, which is asked about the rest. Keeping
// what an older read had is safe: the next pass asks again.
func KeepRead(recorders []Recorder, read []Records) func(Allocation) (bool, error) {
	return func(alloc Allocation) (bool, error) {
		for i, r := range recorders {
			if !r.Names(alloc) {
				continue
			}
			if i < len(read) && read[i] != nil && read[i].Has(alloc) {
				return true, nil
			}
			return r.Recorded(alloc)
		}
		return true, nil
	}
}
