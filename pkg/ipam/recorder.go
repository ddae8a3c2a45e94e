package ipam

import "context"

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
	// Reclaim claims again what its objects record and nobody holds, and
	// returns how many it claimed.
	Reclaim(ctx context.Context) (int, error)
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
