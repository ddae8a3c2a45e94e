package ipam

import "net/netip"

// FreezeHint stops a's hint from following etcd: its watch no longer
// applies events, so the hint goes stale while the allocator keeps using it.
// Tests use it to show that a wrong hint never yields a wrong allocation.
func FreezeHint(a *Allocator) {
	a.hint.mu.Lock()
	defer a.hint.mu.Unlock()
	a.hint.gen++
}

// LostRaces returns how many of a's claims lost a block to another
// allocator.
func LostRaces(a *Allocator) int64 { return a.lostRaces.Load() }

// The tests walk the block tree with these; the allocator does not need them.

// Parent returns the aligned block one bit shorter that contains p, and false
// for a /0.
func Parent(p netip.Prefix) (netip.Prefix, bool) {
	if !p.IsValid() || p.Bits() == 0 {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(p.Addr(), p.Bits()-1).Masked(), true
}

// Children returns the two aligned halves of p, lower first, and false for a
// single address.
func Children(p netip.Prefix) (lo, hi netip.Prefix, ok bool) {
	if !isV4(p) || p.Bits() == 32 {
		return netip.Prefix{}, netip.Prefix{}, false
	}
	p = p.Masked()
	start := addrValue(p.Addr())
	half := Size(p) / 2
	return netip.PrefixFrom(addrOf(start), p.Bits()+1), netip.PrefixFrom(addrOf(start+half), p.Bits()+1), true
}
