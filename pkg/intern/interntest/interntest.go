// Package interntest measures what interned objects hold, for tests and
// benchmarks.
package interntest

import (
	"runtime"
	"testing"
)

// KeyOf returns m's own copy of key k ("" when m has no such key), to
// compare where two maps' copies of a key are.
func KeyOf(m map[string]string, k string) string {
	for key := range m {
		if key == k {
			return key
		}
	}
	return ""
}

// Held runs b's loop over build, timing it, and reports the heap its
// objects hold once built, per object, as held-bytes/object.
func Held[T any](b *testing.B, build func() []T) {
	held(b, func() (any, int) {
		objs := build()
		return objs, len(objs)
	})
}

// HeldPer is Held for a build whose result holds n objects in a form of
// its own (an informer's indexer, say): it reports the heap the result
// holds per object.
func HeldPer[T any](b *testing.B, n int, build func() T) {
	held(b, func() (any, int) { return build(), n })
}

func held(b *testing.B, build func() (any, int)) {
	var heldPer float64
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		result, n := build()
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		heldPer = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
		runtime.KeepAlive(result)
		b.StartTimer()
	}
	b.ReportMetric(heldPer, "held-bytes/object")
}
