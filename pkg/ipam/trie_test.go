package ipam

import (
	"math/rand/v2"
	"net/netip"
	"testing"
)

// TestTrieFindMatchesBruteForce drives a pool trie with random allocations,
// releases and reservations and checks, after each step, that find returns
// the lowest free aligned block of every size (from the bottom, and from a
// random address), as a search of all candidates does.
func TestTrieFindMatchesBruteForce(t *testing.T) {
	pool := pfx("10.0.0.0/26", "10.0.0.64/28")
	exclude := pfx("10.0.0.5/32", "10.0.0.16/30")
	avail := Subtract(pool, exclude)
	tr := newTrie()
	for _, s := range Subtract(pfx("0.0.0.0/0"), avail) {
		tr.setStatic(s)
	}
	allocs := map[netip.Prefix]bool{}
	pending := map[netip.Prefix]int32{}
	rng := rand.New(rand.NewPCG(1, 2))
	free := func(c netip.Prefix) bool {
		if len(Subtract([]netip.Prefix{c}, avail)) > 0 {
			return false
		}
		for b, on := range allocs {
			if on && b.Overlaps(c) {
				return false
			}
		}
		for b, n := range pending {
			if n > 0 && b.Overlaps(c) {
				return false
			}
		}
		return true
	}
	for step := range 3000 {
		b := prefixOf(0x0a000000|uint32(rng.IntN(96)), uint8(26+rng.IntN(7)))
		switch rng.IntN(3) {
		case 0: // allocate or release
			allocs[b] = !allocs[b]
			tr.setAlloc(b, allocs[b])
		case 1: // reserve a free block found by the trie
			if got, ok := tr.find(b.Bits()); ok {
				tr.pend(got, 1)
				pending[got]++
			}
		case 2: // drop a reservation
			for p, n := range pending {
				if n > 0 {
					tr.pend(p, -1)
					pending[p]--
					break
				}
			}
		}
		var frees []uint64
		for v := uint64(0x0a000000); v < 0x0a000000+128; v++ {
			if free(netip.PrefixFrom(addrOf(v), 32)) {
				frees = append(frees, v)
			}
		}
		if got := tr.freeAddrs(); got != uint64(len(frees)) {
			t.Fatalf("step %d: %d free addresses, want %d", step, got, len(frees))
		}
		for k, v := range frees {
			if got := tr.nthFree(uint64(k)); got != v {
				t.Fatalf("step %d: free address %d is %s, want %s", step, k, addrOf(got), addrOf(v))
			}
		}
		for bits := 24; bits <= 32; bits++ {
			var want netip.Prefix
			for v := uint64(0x0a000000); v < 0x0a000000+128; v += 1 << (32 - bits) {
				if c := netip.PrefixFrom(addrOf(v), bits); free(c) {
					want = c
					break
				}
			}
			got, ok := tr.find(bits)
			if ok != want.IsValid() || (ok && got != want) {
				t.Fatalf("step %d: find(/%d) = %v, %v; want %v", step, bits, got, ok, want)
			}
			start := uint64(0x0a000000 - 4 + rng.IntN(136))
			want = netip.Prefix{}
			for v := uint64(0x0a000000); v < 0x0a000000+128; v += 1 << (32 - bits) {
				if c := netip.PrefixFrom(addrOf(v), bits); v >= start && free(c) {
					want = c
					break
				}
			}
			got, ok = tr.findFrom(bits, start)
			if ok != want.IsValid() || (ok && got != want) {
				t.Fatalf("step %d: findFrom(/%d, %s) = %v, %v; want %v", step, bits, addrOf(start), got, ok, want)
			}
		}
	}
}

func TestTriePrunes(t *testing.T) {
	tr := newTrie()
	ps := pfx("10.0.0.0/32", "10.0.0.1/32", "10.9.0.0/16", "192.168.1.0/24")
	for _, p := range ps {
		tr.setAlloc(p, true)
		tr.pend(p, 1)
	}
	if got, _ := tr.find(32); got != netip.MustParsePrefix("0.0.0.0/32") {
		t.Errorf("find(/32) = %v", got)
	}
	for _, p := range ps {
		tr.setAlloc(p, false)
		tr.pend(p, -1)
	}
	if tr.root.child[0] != nil || tr.root.child[1] != nil || tr.root.best != 0 || tr.freeAddrs() != 1<<32 {
		t.Errorf("trie not empty after releasing everything: %+v", tr.root)
	}
}
