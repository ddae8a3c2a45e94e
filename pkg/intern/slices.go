package intern

import (
	"hash/maphash"
	"slices"
	"unsafe"
)

// SliceTable lets equal slices of one element type be one array: every
// members RoleBinding of a tenant names the same subjects, one for each
// of its host namespaces.
type SliceTable[E comparable] struct {
	t *weakTable[E]
}

// NewSliceTable returns an empty table.
func NewSliceTable[E comparable]() *SliceTable[E] {
	return &SliceTable[E]{t: newWeakTable[E]()}
}

// Shared returns a slice equal to s that it also returns for every other
// slice equal to s while any holder of the first one lives; s itself is
// not kept. The slices it returns are shared and must never be written
// (a deep copy copies them), and have no room to grow. Empty slices are
// returned as they are.
func (st *SliceTable[E]) Shared(s []E) []E {
	if len(s) == 0 {
		return s
	}
	h := maphash.Comparable(st.t.seed, len(s))
	for _, e := range s {
		h = h*0x9e3779b97f4a7c15 ^ maphash.Comparable(st.t.seed, e)
	}
	// The table holds the first element of an array of len(s) of its own,
	// which the entry's length makes whole again.
	first := st.t.share(h, len(s),
		func(p *E) bool { return slices.Equal(unsafe.Slice(p, len(s)), s) },
		func() *E { return &slices.Clip(slices.Clone(s))[0] })
	return unsafe.Slice(first, len(s))
}
