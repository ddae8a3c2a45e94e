package ipam

import "net/netip"

// noFree is the trieNode.best of a subtree with no wholly free block.
const noFree = 255

// trie is a binary trie over the IPv4 space in which a node at depth d is the
// aligned /d block its path spells. A node is blocked when it is allocated,
// outside the pool (static) or being claimed by a call in this process
// (pending); then its whole block is unavailable. Every node keeps best, the
// shortest prefix length of a wholly free aligned block in its subtree, so
// that the lowest free aligned block of any size is found in one descent of
// at most 32 steps, and every update costs one walk from the root and back.
type trie struct {
	root trieNode
}

func newTrie() *trie { return &trie{root: trieNode{free: 1 << 32}} }

type trieNode struct {
	child [2]*trieNode
	// free counts the addresses in the subtree outside every blocked node.
	free    uint64
	alloc   bool
	static  bool
	pending int32
	best    uint8
}

func (n *trieNode) blocked() bool { return n.alloc || n.static || n.pending > 0 }

// recompute sets best for the node at depth d from its children. A missing
// child is a wholly free /d+1 block.
func (n *trieNode) recompute(d int) {
	switch {
	case n.blocked():
		n.best, n.free = noFree, 0
	case n.child[0] == nil && n.child[1] == nil:
		n.best, n.free = uint8(d), 1<<(32-d)
	default:
		n.best, n.free = noFree, 0
		for _, c := range n.child {
			b, f := uint8(d+1), uint64(1)<<(32-d-1)
			if c != nil {
				b, f = c.best, c.free
			}
			n.best = min(n.best, b)
			n.free += f
		}
	}
}

func bitAt(v uint64, d int) int { return int(v>>(31-d)) & 1 }

// update applies f to the node of block p (creating the path), then
// recomputes best along the path and prunes nodes that say nothing.
func (t *trie) update(p netip.Prefix, f func(*trieNode)) {
	v := addrValue(p.Masked().Addr())
	var path [33]*trieNode
	n := &t.root
	path[0] = n
	for d := 0; d < p.Bits(); d++ {
		b := bitAt(v, d)
		if n.child[b] == nil {
			n.child[b] = &trieNode{}
		}
		n = n.child[b]
		path[d+1] = n
	}
	f(n)
	for d := p.Bits(); d >= 0; d-- {
		n := path[d]
		n.recompute(d)
		if d > 0 && !n.blocked() && n.child[0] == nil && n.child[1] == nil {
			path[d-1].child[bitAt(v, d-1)] = nil
		}
	}
}

func (t *trie) setAlloc(p netip.Prefix, on bool) { t.update(p, func(n *trieNode) { n.alloc = on }) }
func (t *trie) setStatic(p netip.Prefix)         { t.update(p, func(n *trieNode) { n.static = true }) }
func (t *trie) pend(p netip.Prefix, delta int32) {
	t.update(p, func(n *trieNode) { n.pending += delta })
}

// find returns the lowest wholly free aligned block of prefix length bits.
func (t *trie) find(bits int) (netip.Prefix, bool) {
	n := &t.root
	if int(n.best) > bits {
		return netip.Prefix{}, false
	}
	var v uint64
	for d := 0; ; d++ {
		// n is not blocked and holds a free /bits block; as n has children
		// (or we return), best(n) >= d+1, so d < bits here.
		if n.child[0] == nil && n.child[1] == nil {
			return netip.PrefixFrom(addrOf(v), bits), true
		}
		next := -1
		for b, c := range n.child {
			if c == nil || int(c.best) <= bits {
				next = b
				break
			}
		}
		if next < 0 {
			return netip.Prefix{}, false // unreachable while best is kept right
		}
		v |= uint64(next) << (31 - d)
		if n.child[next] == nil {
			return netip.PrefixFrom(addrOf(v), bits), true
		}
		n = n.child[next]
	}
}

// findFrom returns the lowest wholly free aligned block of prefix length
// bits that starts at or after address start.
func (t *trie) findFrom(bits int, start uint64) (netip.Prefix, bool) {
	size := uint64(1) << (32 - bits)
	start = (start + size - 1) &^ (size - 1) // align up
	if start >= 1<<32 {
		return netip.Prefix{}, false
	}
	v, ok := t.root.findFrom(0, 0, bits, start)
	if !ok {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(addrOf(v), bits), true
}

// findFrom searches the subtree of n, the block of depth d at address lo,
// for the lowest free aligned /bits block at or after start (aligned). It
// descends into a subtree only if that subtree holds a free block of the size
// and reaches past start, so it visits at most two paths from the root: the
// one along start and the one to the answer.
func (n *trieNode) findFrom(d int, lo uint64, bits int, start uint64) (uint64, bool) {
	end := lo + 1<<(32-d)
	if end <= start || int(n.best) > bits {
		return 0, false
	}
	if n.child[0] == nil && n.child[1] == nil {
		return max(lo, start), true
	}
	half := uint64(1) << (32 - d - 1)
	for b, c := range n.child {
		clo := lo + uint64(b)*half
		if c == nil {
			if clo+half > start {
				return max(clo, start), true
			}
			continue
		}
		if v, ok := c.findFrom(d+1, clo, bits, start); ok {
			return v, true
		}
	}
	return 0, false
}

// freeAddrs returns how many addresses are free in the trie.
func (t *trie) freeAddrs() uint64 { return t.root.free }

// nthFree returns the k-th (from 0) free address, in address order; k must
// be below freeAddrs.
func (t *trie) nthFree(k uint64) uint64 {
	n, lo := &t.root, uint64(0)
	for d := 0; ; d++ {
		if n.child[0] == nil && n.child[1] == nil {
			return lo + k
		}
		half := uint64(1) << (32 - d - 1)
		b := 0
		cnt := half
		if c := n.child[0]; c != nil {
			cnt = c.free
		}
		if k >= cnt {
			k -= cnt
			b = 1
		}
		lo += uint64(b) * half
		if n.child[b] == nil {
			return lo + k
		}
		n = n.child[b]
	}
}
