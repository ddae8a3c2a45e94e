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
	var held float64
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		objs := build()
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		held = float64(after.HeapAlloc-before.HeapAlloc) / float64(len(objs))
		runtime.KeepAlive(objs)
		b.StartTimer()
	}
	b.ReportMetric(held, "held-bytes/object")
}
