package ipam

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/netip"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/klog/v2"
)

// maxPoolHints bounds the per-pool tries kept; past it they are all dropped
// and rebuilt on demand (pools are few; this only guards against callers that
// pass a slightly different pool on every call).
const maxPoolHints = 64

// hintIndex is the allocator's in-memory picture of which blocks are
// allocated. It is a hint only: it decides which block a call tries first,
// never whether the call may have it; that is the claim transaction's job.
//
// It is filled by one keys-only read of the blocks directory at revision R
// and kept current by a watch from R+1, so no event is missed or applied
// twice. The calling process also applies the outcome of its own
// transactions at once (successes, and the conflicting keys a failed claim
// reads back), so that it does not retry a block it already knows is taken
// while the watch catches up. Every entry remembers the revision it was last
// changed at and older news is ignored, which makes the two sources commute.
type hintIndex struct {
	client *clientv3.Client
	prefix string
	logger klog.Logger
	ctx    context.Context // lives as long as the allocator

	// loadMu serialises loads, so concurrent first calls read etcd once.
	loadMu sync.Mutex

	mu sync.Mutex
	// gen counts loads; a watch of an older generation stops.
	gen    uint64
	loaded bool
	// progress is the revision the watch has delivered through.
	progress int64
	entries  map[netip.Prefix]hintEntry
	// tombstones lists deleted entries, to forget once the watch is past
	// them.
	tombstones []tombstone
	pools      map[string]*poolHint
}

type hintEntry struct {
	present bool
	rev     int64
}

type tombstone struct {
	block netip.Prefix
	rev   int64
}

type poolHint struct {
	pool *compiledPool
	t    *trie
}

func newHintIndex(ctx context.Context, client *clientv3.Client, prefix string, logger klog.Logger) *hintIndex {
	return &hintIndex{client: client, prefix: prefix, logger: logger, ctx: ctx}
}

// pool returns the trie of cp, loading the index first if needed.
func (h *hintIndex) pool(ctx context.Context, cp *compiledPool) (*poolHint, error) {
	for {
		if err := h.ensure(ctx); err != nil {
			return nil, err
		}
		if ph := h.poolLoaded(cp); ph != nil {
			return ph, nil
		}
		// The watch ended between the load and now; load again.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

func (h *hintIndex) poolLoaded(cp *compiledPool) *poolHint {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.loaded {
		return nil
	}
	if ph := h.pools[cp.id]; ph != nil {
		return ph
	}
	if len(h.pools) >= maxPoolHints {
		h.pools = nil
	}
	if h.pools == nil {
		h.pools = map[string]*poolHint{}
	}
	ph := &poolHint{pool: cp, t: newTrie()}
	for _, s := range Subtract([]netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}, cp.available) {
		ph.t.setStatic(s)
	}
	for b, e := range h.entries {
		if e.present && cp.overlapsSpace(b) {
			ph.t.setAlloc(b, true)
		}
	}
	h.pools[cp.id] = ph
	return ph
}

func (h *hintIndex) ensure(ctx context.Context) error {
	h.mu.Lock()
	loaded := h.loaded
	h.mu.Unlock()
	if loaded {
		return nil
	}
	h.loadMu.Lock()
	defer h.loadMu.Unlock()
	h.mu.Lock()
	loaded = h.loaded
	h.mu.Unlock()
	if loaded {
		return nil
	}
	if err := h.ctx.Err(); err != nil {
		return errors.New("ipam allocator is closed")
	}

	entries := map[netip.Prefix]hintEntry{}
	dir := h.prefix + blocksDir
	rev, err := rangeAll(ctx, h.client, dir, clientv3.GetPrefixRangeEnd(dir), 0, true, func(kv keyValue) error {
		if b, err := parseBlockSuffix(kv.key[len(dir):]); err == nil {
			entries[b] = hintEntry{present: true, rev: kv.modRev}
		}
		return nil
	})
	if err != nil {
		return err
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	h.gen++
	h.loaded = true
	h.progress = rev
	h.entries = entries
	h.tombstones = nil
	h.pools = nil
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(h.ctx))
	wch := h.client.Watch(wctx, dir, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	go h.watch(h.gen, wch, cancel)
	return nil
}

func (h *hintIndex) watch(gen uint64, wch clientv3.WatchChan, cancel context.CancelFunc) {
	defer cancel()
	dir := h.prefix + blocksDir
	for wr := range wch {
		if err := wr.Err(); err != nil {
			h.reset(gen, err)
			return
		}
		h.mu.Lock()
		if h.gen != gen {
			h.mu.Unlock()
			return
		}
		for _, ev := range wr.Events {
			key := string(ev.Kv.Key)
			if len(key) < len(dir) {
				continue
			}
			b, err := parseBlockSuffix(key[len(dir):])
			if err != nil {
				continue
			}
			h.applyLocked(b, ev.Type == clientv3.EventTypePut, ev.Kv.ModRevision)
			h.progress = max(h.progress, ev.Kv.ModRevision)
		}
		h.pruneLocked()
		h.mu.Unlock()
	}
	h.reset(gen, errors.New("watch channel closed"))
}

// reset forgets everything, so the next call loads afresh (after a
// compaction overtook the watch, a lost leader, or Close).
func (h *hintIndex) reset(gen uint64, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gen != gen {
		return
	}
	if h.ctx.Err() == nil {
		h.logger.Info("IPAM hint watch ended; reloading on next use", "err", err)
	}
	h.gen++
	h.loaded = false
	h.entries = nil
	h.tombstones = nil
	h.pools = nil
}

// applyLocked records that block is present (or not) as of rev, unless the
// index already knows something newer.
func (h *hintIndex) applyLocked(b netip.Prefix, present bool, rev int64) {
	if e, ok := h.entries[b]; ok && e.rev >= rev {
		return
	}
	old := h.entries[b].present
	h.entries[b] = hintEntry{present: present, rev: rev}
	if !present {
		h.tombstones = append(h.tombstones, tombstone{b, rev})
	}
	if old == present {
		return
	}
	for _, ph := range h.pools {
		if ph.pool.overlapsSpace(b) {
			ph.t.setAlloc(b, present)
		}
	}
}

// pruneLocked forgets tombstones the watch is past: no event older than the
// watch's progress can arrive any more, and observe ignores anything at or
// below it.
func (h *hintIndex) pruneLocked() {
	i := 0
	for ; i < len(h.tombstones); i++ {
		t := h.tombstones[i]
		if t.rev >= h.progress {
			break
		}
		if e, ok := h.entries[t.block]; ok && !e.present && e.rev == t.rev {
			delete(h.entries, t.block)
		}
	}
	h.tombstones = h.tombstones[i:]
}

// observe records what this process learnt at revision rev from etcd itself:
// blocks it created or deleted, or blocks a failed claim read back. What the
// watch has already delivered is newer or equal, and wins.
func (h *hintIndex) observe(rev int64, present bool, blocks ...netip.Prefix) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.loaded || rev <= h.progress {
		return
	}
	for _, b := range blocks {
		h.applyLocked(b, present, rev)
	}
}

// observeKVs records conflicting keys a failed claim read at revision rev.
func (h *hintIndex) observeKVs(rev int64, kvs []keyValue) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.loaded || rev <= h.progress {
		return
	}
	dir := h.prefix + blocksDir
	for _, kv := range kvs {
		if b, err := parseBlockSuffix(kv.key[len(dir):]); err == nil {
			h.applyLocked(b, true, kv.modRev)
		}
	}
}

// reconcile corrects the index inside space from a full read of it at
// revision rev: what was read is present, what the index holds there and was
// not read was deleted by rev.
func (h *hintIndex) reconcile(rev int64, space []netip.Prefix, present map[netip.Prefix]int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.loaded || rev <= h.progress {
		return
	}
	for b, modRev := range present {
		h.applyLocked(b, true, modRev)
	}
	for b, e := range h.entries {
		if !e.present || e.rev > rev {
			continue
		}
		if _, ok := present[b]; ok {
			continue
		}
		for _, s := range space {
			if Contains(s, b) {
				h.applyLocked(b, false, rev)
				break
			}
		}
	}
}

// pick reserves, in ph, n free aligned blocks of prefix length bits and
// returns them. With spread 0 they are the n lowest. Otherwise they are the
// lowest from a random start among the lowest spread blocks' worth of free
// addresses (and then from the bottom if need be), so that replicas that
// keep colliding on the lowest blocks stop doing so. If fewer than n are free it
// reserves nothing and returns how many there were.
func (h *hintIndex) pick(ph *poolHint, bits, n, spread int) ([]netip.Prefix, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var start uint64
	if free := ph.t.freeAddrs(); spread > 0 && free > 0 {
		// A random one of the lowest free addresses, aligned down to the
		// block size: uniform over free addresses, so replicas spread even
		// where the pool is already dense.
		a := ph.t.nthFree(rand.Uint64N(min(uint64(spread)<<(32-bits), free)))
		start = a &^ (uint64(1)<<(32-bits) - 1)
	}
	out := make([]netip.Prefix, 0, n)
	for len(out) < n {
		b, ok := ph.t.findFrom(bits, start)
		if !ok {
			b, ok = ph.t.find(bits)
		}
		if !ok {
			for _, p := range out {
				ph.t.pend(p, -1)
			}
			return nil, len(out)
		}
		ph.t.pend(b, 1)
		out = append(out, b)
	}
	return out, n
}

// unpick drops reservations made by pick.
func (h *hintIndex) unpick(ph *poolHint, blocks []netip.Prefix) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, b := range blocks {
		ph.t.pend(b, -1)
	}
}
