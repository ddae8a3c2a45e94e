package intern

import (
	"hash/maphash"
	"runtime"
	"slices"
	"testing"
	"weak"
)

type subject struct{ kind, name string }

func TestSliceTableShared(t *testing.T) {
	st := NewSliceTable[subject]()
	a := []subject{{"Group", "tenant.io:acme"}, {"Group", "tenant.io-acme"}}
	b := slices.Clone(a)
	x, y := st.Shared(a), st.Shared(b)
	if !slices.Equal(x, a) || !slices.Equal(y, a) {
		t.Fatalf("Shared changed the values: %v, %v", x, y)
	}
	if &x[0] != &y[0] {
		t.Error("equal slices are two arrays")
	}
	if &x[0] == &a[0] {
		t.Error("the table kept the caller's array")
	}
	if cap(x) != len(x) {
		t.Errorf("a shared slice of %d has room for %d", len(x), cap(x))
	}
	// A prefix, another order and other values are other slices.
	for _, other := range [][]subject{a[:1], {a[1], a[0]}, {{"Group", "tenant.io:other"}, {"Group", "tenant.io-other"}}} {
		if z := st.Shared(slices.Clone(other)); !slices.Equal(z, other) || &z[0] == &x[0] {
			t.Errorf("Shared(%v) = %v, the array of %v: %v", other, z, a, &z[0] == &x[0])
		}
	}
	if got := st.Shared(nil); got != nil {
		t.Errorf("Shared(nil) = %v", got)
	}
	runtime.KeepAlive(x)
}

// An entry of another length under the same hash is never read as the
// slice asked for: the table knows the length of the array it holds (with
// -race, checkptr fails a read past it).
func TestSliceTableHashOfAnotherLength(t *testing.T) {
	st := NewSliceTable[subject]()
	want := []subject{{"Group", "a"}, {"Group", "b"}, {"Group", "c"}}
	h := maphash.Comparable(st.t.seed, len(want))
	for _, e := range want {
		h = h*0x9e3779b97f4a7c15 ^ maphash.Comparable(st.t.seed, e)
	}
	short := []subject{{"Group", "a"}}
	st.t.Lock()
	st.t.m[h] = weakEntry[subject]{p: weak.Make(&short[0]), n: len(short)}
	st.t.Unlock()
	if got := st.Shared(slices.Clone(want)); !slices.Equal(got, want) {
		t.Errorf("Shared(%v) = %v on a hash held by a slice of another length", want, got)
	}
	runtime.KeepAlive(short)
}

func TestSliceTableDropsWhatNoOneHolds(t *testing.T) {
	st := NewSliceTable[subject]()
	x := st.Shared([]subject{{"User", "alice"}})
	p := weak.Make(&x[0])
	x = nil
	runtime.GC()
	runtime.GC()
	if p.Value() != nil {
		t.Error("the table keeps alive a slice no one holds")
	}
	if y := st.Shared([]subject{{"User", "alice"}}); len(y) != 1 || y[0].name != "alice" {
		t.Errorf("Shared after the drop = %v", y)
	}
}
