package intern

import (
	"hash/maphash"
	"maps"
	"sync"
	"weak"
)

// minSweep is the table size below which dead entries are left for later.
const minSweep = 1 << 10

// weakTable holds one value per hash, weakly: an entry lives while some
// holder of its value does, and costs the table a hash and a weak pointer.
// A second value with a taken hash is not shared (collisions are rare).
// A value may be the first of n in an array of its own (a slice's): the
// entry records n, and equal is only asked about a value of the same n.
type weakTable[T any] struct {
	sync.Mutex
	seed maphash.Seed
	m    map[uint64]weakEntry[T]
	// sweepAt is the size at which the table next drops the entries
	// whose values no one holds any more.
	sweepAt int
}

type weakEntry[T any] struct {
	p weak.Pointer[T]
	n int
}

func newWeakTable[T any]() *weakTable[T] {
	return &weakTable[T]{seed: maphash.MakeSeed(), m: map[uint64]weakEntry[T]{}, sweepAt: minSweep}
}

// share returns the live value of hash h and length n when equal says it
// is the one wanted; otherwise the value own makes, entered under h unless
// another live value holds h. own runs outside the table's lock, which the
// caches' decoding goroutines all take.
func (t *weakTable[T]) share(h uint64, n int, equal func(*T) bool, own func() *T) *T {
	t.Lock()
	shared, taken := t.lookupLocked(h, n, equal)
	t.Unlock()
	if shared != nil {
		return shared
	}
	out := own()
	if taken {
		return out
	}
	p := weak.Make(out)
	t.Lock()
	defer t.Unlock()
	if shared, taken := t.lookupLocked(h, n, equal); shared != nil {
		return shared // made meanwhile
	} else if taken {
		return out
	}
	t.m[h] = weakEntry[T]{p: p, n: n}
	if len(t.m) >= t.sweepAt {
		maps.DeleteFunc(t.m, func(_ uint64, e weakEntry[T]) bool { return e.p.Value() == nil })
		t.sweepAt = max(minSweep, 2*len(t.m))
	}
	return out
}

// lookupLocked returns the value of hash h if it has length n and equal
// says it is the one wanted, or whether another live value has taken the
// hash (the one in the table keeps its place). The caller holds the
// table's lock.
func (t *weakTable[T]) lookupLocked(h uint64, n int, equal func(*T) bool) (shared *T, taken bool) {
	e, ok := t.m[h]
	if !ok {
		return nil, false
	}
	v := e.p.Value()
	if v == nil {
		return nil, false
	}
	if e.n == n && equal(v) {
		return v, true
	}
	return nil, true
}
