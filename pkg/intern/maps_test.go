package intern

import (
	"fmt"
	"maps"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"
	"weak"

	"tenant.io/tenant-apiserver/pkg/intern/interntest"
)

// clone returns a map equal to m in allocations of its own, keys and
// values included, as a decoder makes it.
func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[strings.Clone(k)] = strings.Clone(v)
	}
	return out
}

func TestSharedMap(t *testing.T) {
	labels := map[string]string{"tenant.io/tenant": "acme", "tenant.io/tenant-uid": "0b6f3c1e-8a41"}
	a, b := SharedMap(clone(labels)), SharedMap(clone(labels))
	if !maps.Equal(a, labels) {
		t.Errorf("SharedMap(%v) = %v", labels, a)
	}
	if pointerOf(a) != pointerOf(b) {
		t.Error("equal maps not shared")
	}
	in := clone(labels)
	if pointerOf(SharedMap(in)) == pointerOf(in) {
		t.Error("SharedMap kept the map it was given")
	}
	// Maps that differ in a key, a value, or by an entry are not one.
	for _, m := range []map[string]string{
		{"tenant.io/tenant": "acme", "tenant.io/tenant-id": "0b6f3c1e-8a41"},
		{"tenant.io/tenant": "acme", "tenant.io/tenant-uid": "0b6f3c1e-8a42"},
		{"tenant.io/tenant": "acme"},
		{"tenant.io/tenant": "acme", "tenant.io/tenant-uid": "0b6f3c1e-8a41", "team": "payments"},
		// The same strings, split between key and value elsewhere.
		{"tenant.io/tenantacme": "", "tenant.io/tenant-uid": "0b6f3c1e-8a41"},
	} {
		got := SharedMap(clone(m))
		if !maps.Equal(got, m) {
			t.Errorf("SharedMap(%v) = %v", m, got)
		}
		if pointerOf(got) == pointerOf(a) {
			t.Errorf("SharedMap(%v) returned the map of %v", m, labels)
		}
	}
	// The shared map's strings are the interned ones.
	if x, y := keyOf(a, "tenant.io/tenant"), String(strings.Clone("tenant.io/tenant")); x != y || !sameString(x, y) {
		t.Errorf("key %q not interned", x)
	}
	runtime.KeepAlive(b)
	if SharedMap(nil) != nil || len(SharedMap(map[string]string{})) != 0 {
		t.Error("empty map changed")
	}
	// A map naming its object is its own.
	for _, m := range []map[string]string{
		{"kubernetes.io/metadata.name": "t-acme-team-5kq2x", "tenant.io/tenant": "acme"},
		{"tenant.io/changed-by": "alice", "tenant.io/changed-at": "2026-11-26T04:00:00Z"},
	} {
		x, y := SharedMap(clone(m)), SharedMap(clone(m))
		if !maps.Equal(x, m) || pointerOf(x) == pointerOf(y) {
			t.Errorf("%v: shared %v, equal %v", m, pointerOf(x) == pointerOf(y), maps.Equal(x, m))
		}
		if k := keyOf(x, "tenant.io/tenant"); k != "" && !sameString(k, String(strings.Clone(k))) {
			t.Errorf("%v: keys not interned", m)
		}
	}
	large := map[string]string{}
	for i := 0; i <= maxSharedEntries; i++ {
		large[fmt.Sprint("k", i)] = "v"
	}
	if x, y := SharedMap(clone(large)), SharedMap(clone(large)); !maps.Equal(x, large) || pointerOf(x) == pointerOf(y) {
		t.Errorf("a map of %d entries: shared %v, equal %v", len(large), pointerOf(x) == pointerOf(y), maps.Equal(x, large))
	}
}

func TestSharedAcrossVersions(t *testing.T) {
	// The maps of two versions of one object are one, those naming it too.
	for _, m := range []map[string]string{
		{"tenant.io/changed-by": "alice", "tenant.io/changed-at": "2026-11-26T04:00:00Z"},
		{"kubernetes.io/metadata.name": "t-acme-team-5kq2x", "tenant.io/tenant": "acme"},
		{"tenant.io/tenant": "acme"},
	} {
		x, y := SharedAcrossVersions(clone(m)), SharedAcrossVersions(clone(m))
		if !maps.Equal(x, m) || pointerOf(x) != pointerOf(y) {
			t.Errorf("%v: shared %v, equal %v", m, pointerOf(x) == pointerOf(y), maps.Equal(x, m))
		}
		// SharedMap of a map without an own key finds the same one.
		if !holdsOwnKey(m) && pointerOf(SharedMap(clone(m))) != pointerOf(x) {
			t.Errorf("%v: SharedMap and SharedAcrossVersions hold two", m)
		}
		runtime.KeepAlive(y)
	}
	// Another object's map is its own.
	a := SharedAcrossVersions(map[string]string{"tenant.io/changed-at": "2026-11-26T04:00:00Z"})
	b := SharedAcrossVersions(map[string]string{"tenant.io/changed-at": "2026-11-26T04:00:01Z"})
	if pointerOf(a) == pointerOf(b) || b["tenant.io/changed-at"] != "2026-11-26T04:00:01Z" {
		t.Errorf("two objects' maps: one %v, second %v", pointerOf(a) == pointerOf(b), b)
	}
	if SharedAcrossVersions(nil) != nil || len(SharedAcrossVersions(map[string]string{})) != 0 {
		t.Error("empty map changed")
	}
	large := map[string]string{}
	for i := 0; i <= maxSharedEntries; i++ {
		large[fmt.Sprint("k", i)] = "v"
	}
	if x, y := SharedAcrossVersions(clone(large)), SharedAcrossVersions(clone(large)); !maps.Equal(x, large) || pointerOf(x) == pointerOf(y) {
		t.Errorf("a map of %d entries: shared %v, equal %v", len(large), pointerOf(x) == pointerOf(y), maps.Equal(x, large))
	}
}

func TestSharedMapHashCollision(t *testing.T) {
	m := map[string]string{"collides": "here"}
	other := Map(map[string]string{"already": "in the table"})
	h := mapHash(mapTable.seed, m)
	mapTable.Lock()
	mapTable.m[h] = weakEntry[byte]{p: weak.Make(pointerOf(other))}
	mapTable.Unlock()
	got := SharedMap(clone(m))
	if !maps.Equal(got, m) {
		t.Errorf("SharedMap(%v) = %v on a hash collision", m, got)
	}
	mapTable.Lock()
	kept := mapTable.m[h].p.Value() == pointerOf(other)
	mapTable.Unlock()
	if !kept {
		t.Error("a colliding map took the place of a live one")
	}
	runtime.KeepAlive(other)
}

func TestSharedMapHashIgnoresOrder(t *testing.T) {
	seed := mapTable.seed
	a := map[string]string{}
	b := map[string]string{}
	for i := 0; i < 8; i++ {
		a[fmt.Sprint("k", i)] = fmt.Sprint("v", i)
	}
	for i := 7; i >= 0; i-- {
		b[fmt.Sprint("k", i)] = fmt.Sprint("v", i)
	}
	for i := 0; i < 100; i++ { // map iteration order varies
		if mapHash(seed, a) != mapHash(seed, b) {
			t.Fatal("equal maps hash apart")
		}
	}
	if mapHash(seed, map[string]string{"a": "b", "c": "d"}) == mapHash(seed, map[string]string{"a": "d", "c": "b"}) {
		t.Error("swapped values hash alike")
	}
}

// The table keeps no map alive: once no object holds a map, its entry goes.
func TestSharedMapDropsWhatNoOneHolds(t *testing.T) {
	// The sizes checked below follow from when the table sweeps, which
	// depends on what it held before: the test starts from an empty one
	// (run again in the same process, it would start from the last run's).
	saved := mapTable
	mapTable = newWeakTable[byte]()
	t.Cleanup(func() { mapTable = saved })
	const n = 4 * minSweep
	held := make([]map[string]string, 0, n)
	for i := 0; i < n; i++ {
		held = append(held, SharedMap(map[string]string{"tenant.io/owner-uid": fmt.Sprint("dropped-", i)}))
	}
	mapTable.Lock()
	before := len(mapTable.m)
	mapTable.Unlock()
	if before < len(held) {
		t.Fatalf("table holds %d maps, fewer than the %d held", before, len(held))
	}
	runtime.KeepAlive(held) // and no further: the collection below frees them
	runtime.GC()
	// New maps make the table sweep.
	for i := 0; i < 2*n; i++ {
		SharedMap(map[string]string{"tenant.io/owner-uid": fmt.Sprint("later-", i)})
	}
	runtime.GC()
	SharedMap(map[string]string{"tenant.io/owner-uid": "last"})
	mapTable.Lock()
	defer mapTable.Unlock()
	live := 0
	for _, e := range mapTable.m {
		if e.p.Value() != nil {
			live++
		}
	}
	if len(mapTable.m) > 2*n || live > minSweep {
		t.Errorf("table holds %d maps (%d live) after %d were dropped", len(mapTable.m), live, 3*n)
	}
}

func TestSharedMapConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	got := make([]map[string]string, 8)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				m := SharedMap(map[string]string{"tenant.io/tenant": fmt.Sprint("t", i%10)})
				if m["tenant.io/tenant"] != fmt.Sprint("t", i%10) {
					t.Errorf("got %v", m)
					return
				}
				if i == 999 {
					got[g] = m
				}
			}
		}()
	}
	wg.Wait()
	for _, m := range got[1:] {
		if pointerOf(m) != pointerOf(got[0]) {
			t.Error("goroutines got apart copies of one map")
		}
	}
}

func keyOf(m map[string]string, k string) string {
	for key := range m {
		if key == k {
			return key
		}
	}
	return ""
}

func sameString(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }

// BenchmarkLabelMapHeld reports the heap a label map of n entries holds,
// its keys and values shared (interned): the map alone. Up to 8 entries
// fit in one group of slots; a ninth makes it a table of two.
func BenchmarkLabelMapHeld(b *testing.B) {
	keys := make([]string, 12)
	for i := range keys {
		keys[i] = fmt.Sprintf("tenant.io/mark-%d", i)
	}
	for _, n := range []int{2, 5, 8, 9, 11} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			interntest.Held(b, func() []map[string]string {
				maps := make([]map[string]string, 10000)
				for i := range maps {
					m := make(map[string]string)
					for _, k := range keys[:n] {
						m[k] = k
					}
					maps[i] = m
				}
				return maps
			})
		})
	}
}
