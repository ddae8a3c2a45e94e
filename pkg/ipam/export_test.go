package ipam

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
