package intern

import (
	"hash/maphash"
	"maps"
	"math/bits"
	"reflect"
	"unsafe"
)

// A Go map of up to eight entries costs 336 bytes however few it holds,
// and the objects the caches hold carry two each. Many are equal: every
// object of a tenant carries the same tenant labels, and the host objects
// made for one tenant object (a namespace, its RoleBinding and quota) the
// same marks. SharedMap lets equal maps be one.
//
// The table holds the maps weakly: a map is in it while some object holds
// it, and the table costs no more than a hash and a weak pointer per
// distinct map. A weak pointer is made from the map's own allocation (a
// map value is a single pointer to it).

// maxSharedEntries bounds the maps SharedMap considers: larger ones are
// rare and seldom alike.
const maxSharedEntries = 16

// ownKeys are keys whose values name one object: a map holding one is
// that object's alone (a namespace's labels name it, a tenant object's
// annotations say when its spec last changed), and a weak pointer to it
// would cost its table entry and nothing would ever share it. Measured:
// the weak pointer of each new map is most of SharedMap's cost.
var ownKeys = []string{"kubernetes.io/metadata.name", "tenant.io/changed-at"}

// mapTable holds the shared maps by the hash of their entries, each as
// the allocation its map value points to.
var mapTable = newWeakTable[byte]()

// SharedMap returns a map equal to m, with its keys and values interned,
// that it also returns for every other map equal to m while any holder of
// the first one lives; m itself is not kept. The maps it returns are
// shared and must never be written: it is for objects that are read-only
// once made, as the objects of watch caches and informers are (a writer
// makes a deep copy first). Empty maps, maps of more than 16 entries and
// maps holding a key of ownKeys are returned as Map returns them.
func SharedMap(m map[string]string) map[string]string {
	if len(m) == 0 || len(m) > maxSharedEntries || holdsOwnKey(m) {
		return Map(m)
	}
	return share(m)
}

// SharedAcrossVersions is SharedMap for the maps of an object written
// again and again without them changing: a Tenant is written for every
// quota charge of its tenant, and the watch caches keep every version of
// the last minutes in their history, each decoded on its own. The maps of
// one object's versions are then one map, those that name it (holding a
// key of ownKeys) too: SharedMap leaves those alone, since for an object
// held once they would cost a table entry and save nothing. The same
// rules hold: the maps it returns must never be written.
func SharedAcrossVersions(m map[string]string) map[string]string {
	if len(m) == 0 || len(m) > maxSharedEntries {
		return Map(m)
	}
	return share(m)
}

func share(m map[string]string) map[string]string {
	return mapOf(mapTable.share(mapHash(mapTable.seed, m), 0,
		func(p *byte) bool { return maps.Equal(mapOf(p), m) },
		func() *byte { return pointerOf(Map(m)) }))
}

func holdsOwnKey(m map[string]string) bool {
	for _, k := range ownKeys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// mapHash hashes m's entries independently of their order.
func mapHash(seed maphash.Seed, m map[string]string) uint64 {
	var sum uint64
	for k, v := range m {
		e := maphash.String(seed, k) ^ bits.RotateLeft64(maphash.String(seed, v), 29)
		// Mixed before summing, so that entries do not cancel out.
		e *= 0x9e3779b97f4a7c15
		sum += e ^ (e >> 31)
	}
	return sum
}

// pointerOf returns the allocation a map value points to.
func pointerOf(m map[string]string) *byte {
	return (*byte)(reflect.ValueOf(m).UnsafePointer())
}

// mapOf is the inverse of pointerOf: the map whose allocation p is.
func mapOf(p *byte) map[string]string {
	return *(*map[string]string)(unsafe.Pointer(&p))
}

// A map value is one pointer: pointerOf and mapOf rely on it.
var _ = [1]struct{}{}[unsafe.Sizeof(map[string]string(nil))-unsafe.Sizeof((*byte)(nil))]
