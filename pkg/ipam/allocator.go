package ipam

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

const (
	// defaultMaxTxnOps is etcd's default --max-txn-ops: the most compares,
	// and the most operations in either branch, one transaction may carry.
	defaultMaxTxnOps = 128
	// minTxnOps fits one claim of a single address: 32 ancestor compares and
	// the address's own.
	minTxnOps = 33
	// maxAttempts bounds how often one call tries again after losing a
	// block to a concurrent allocator. Each lost race teaches the hint the
	// block that won, so a call normally needs as many attempts as there are
	// processes allocating from the same pool at once.
	maxAttempts = 200
	// minSpread and maxSpread bound how many of the lowest free blocks a
	// call that lost a race chooses among on its next try.
	minSpread = 16
	maxSpread = 1024
	// conflictReadLimit bounds how many keys below a block a failed claim
	// reads back to explain the failure and correct the hint.
	conflictReadLimit = 16
	// cleanupTimeout bounds the undo of a failed call once the caller's
	// context is done.
	cleanupTimeout = 30 * time.Second
)

// Allocator allocates IPv4 blocks and addresses from pools, storing one etcd
// key per allocation. Uniqueness comes from etcd alone: every allocation is
// written by one transaction that succeeds only if no allocated block
// overlaps it (see the package documentation). Any number of allocators, in
// any number of processes, may share one etcd and prefix.
type Allocator struct {
	client *clientv3.Client
	prefix string
	clock  clock.PassiveClock
	logger klog.Logger
	maxOps int
	hint   *hintIndex
	cancel context.CancelFunc
	// spread is how widely allocations currently choose among the lowest
	// free blocks: 0 while this allocator's claims win, growing while they
	// lose races to other replicas.
	spread atomic.Int64
	// lostRaces counts claims that failed because another allocator took
	// the block first.
	lostRaces atomic.Int64
	// strict keeps strict first fit even while claims lose races.
	strict bool
}

// Option configures an Allocator.
type Option func(*Allocator)

// WithClock sets the clock that stamps Allocation.Created and that SweepUnused
// measures ages with.
func WithClock(c clock.PassiveClock) Option { return func(a *Allocator) { a.clock = c } }

// WithLogger sets the logger for the allocator's background watch.
func WithLogger(l klog.Logger) Option { return func(a *Allocator) { a.logger = l } }

// WithMaxTxnOps matches the allocator's transactions to an etcd started with
// a --max-txn-ops other than the default 128. Values below 33 are raised to
// 33, the size of a single-address claim.
func WithMaxTxnOps(n int) Option { return func(a *Allocator) { a.maxOps = max(n, minTxnOps) } }

// WithStrictFirstFit keeps the allocator at strict first fit: the lowest
// free block, even while its claims lose races (it then tries the next
// lowest, as the lost race taught it). For a space where "the lowest free
// block" is a promise made to users and races are rare, such as the
// addresses inside one tenant's block.
func WithStrictFirstFit() Option { return func(a *Allocator) { a.strict = true } }

// New returns an allocator that keeps its keys under prefix in the etcd of
// client. Close it to stop its watch.
func New(client *clientv3.Client, prefix string, opts ...Option) *Allocator {
	a := &Allocator{
		client: client,
		prefix: strings.TrimSuffix(prefix, "/"),
		clock:  clock.RealClock{},
		logger: klog.Background().WithName("ipam"),
		maxOps: defaultMaxTxnOps,
	}
	for _, o := range opts {
		o(a)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	a.hint = newHintIndex(ctx, client, a.prefix, a.logger)
	return a
}

// Prefix is the etcd prefix of a's keys: which keyspace it is.
func (a *Allocator) Prefix() string { return a.prefix }

// Close stops the allocator's watch. It does not close the etcd client.
func (a *Allocator) Close() { a.cancel() }

// ClaimBlock allocates exactly block from pool to owner, as when a tenant
// names its network CIDR. The block must lie inside the pool and outside its
// excluded space. Claiming a block the same owner (tenant UID and purpose)
// already holds succeeds, so a caller that crashed after claiming may claim
// again. Errors: *OutsidePoolError, *ExcludedError, *TakenError, or an error
// wrapping ErrInvalid.
func (a *Allocator) ClaimBlock(ctx context.Context, pool Pool, block netip.Prefix, owner Owner) error {
	cp, err := compile(pool)
	if err != nil {
		return err
	}
	if err := owner.validate(); err != nil {
		return err
	}
	if err := validateBlock(block); err != nil {
		return err
	}
	if len(Subtract([]netip.Prefix{block}, cp.space)) > 0 {
		return &OutsidePoolError{Pool: cp.name, Block: block}
	}
	for _, e := range cp.exclude {
		if e.Overlaps(block) {
			return &ExcludedError{Pool: cp.name, Block: block, Excluded: e}
		}
	}
	cb := a.newBatch(newClaimID())
	c, err := a.newClaim(cp, block, owner, cb.id)
	if err != nil {
		return err
	}
	cb.add(c)
	for attempt := 0; ; attempt++ {
		out, err := a.commit(ctx, cb)
		if err != nil {
			return errors.Join(err, a.undoAmbiguous(ctx, cb))
		}
		if out.ok {
			a.hint.observe(out.rev, true, block)
			return nil
		}
		a.hint.observeKVs(out.rev, out.conflicts)
		// No conflict found means it was released between the claim and the
		// read-back of its ancestors: try again.
		if len(out.conflicts) > 0 || attempt == maxAttempts {
			return a.takenError(block, owner, out.conflicts)
		}
	}
}

// ClaimAddress allocates exactly addr from pool to owner; see ClaimBlock.
func (a *Allocator) ClaimAddress(ctx context.Context, pool Pool, addr netip.Addr, owner Owner) error {
	if !addr.Is4() {
		return fmt.Errorf("%w: %s is not an IPv4 address", ErrInvalid, addr)
	}
	return a.ClaimBlock(ctx, pool, netip.PrefixFrom(addr, 32), owner)
}

// AllocateBlock allocates a free block of prefix length prefixLen from pool
// to owner. The fit is first fit: the lowest-addressed aligned block of that
// size that lies wholly in the pool's available space and overlaps no
// allocation. While this allocator keeps losing races for the lowest blocks
// to other replicas, it takes a random one among the lowest free ones
// instead (see the package documentation). Errors: *ExhaustedError naming
// the pool, or an error wrapping ErrInvalid, ErrContention or etcd's.
func (a *Allocator) AllocateBlock(ctx context.Context, pool Pool, prefixLen int, owner Owner) (netip.Prefix, error) {
	blocks, err := a.allocate(ctx, pool, prefixLen, 1, owner)
	if err != nil {
		return netip.Prefix{}, err
	}
	return blocks[0], nil
}

// AllocateAddresses allocates n free addresses from pool to owner, first fit
// as AllocateBlock, all or nothing: on failure it releases whatever it took.
// Up to a few dozen addresses are taken in one transaction; more take
// several, and a crash between them leaves the first ones allocated to the
// owner (ListOwner finds them).
func (a *Allocator) AllocateAddresses(ctx context.Context, pool Pool, n int, owner Owner) ([]netip.Addr, error) {
	blocks, err := a.allocate(ctx, pool, 32, n, owner)
	if err != nil {
		return nil, err
	}
	addrs := make([]netip.Addr, len(blocks))
	for i, b := range blocks {
		addrs[i] = b.Addr()
	}
	return addrs, nil
}

func (a *Allocator) allocate(ctx context.Context, pool Pool, bits, n int, owner Owner) (_ []netip.Prefix, err error) {
	cp, err := compile(pool)
	if err != nil {
		return nil, err
	}
	if err := owner.validate(); err != nil {
		return nil, err
	}
	if bits < 0 || bits > 32 {
		return nil, fmt.Errorf("%w: prefix length %d", ErrInvalid, bits)
	}
	if n < 1 {
		return nil, fmt.Errorf("%w: %d blocks requested", ErrInvalid, n)
	}
	id := newClaimID()
	var got []netip.Prefix
	defer func() {
		if err != nil && len(got) > 0 {
			err = errors.Join(err, a.undo(ctx, id, got))
		}
	}()
	refreshed := false
	// spread is 0, strict first fit, unless claims of this allocator lose
	// races to other replicas; see pick.
	spread := int(a.spread.Load())
	lost := false
	for attempt := 0; len(got) < n; attempt++ {
		if attempt == maxAttempts {
			return nil, fmt.Errorf("allocating from pool %q: %w", cp.name, ErrContention)
		}
		ph, err := a.hint.pool(ctx, cp)
		if err != nil {
			return nil, err
		}
		picks, free := a.hint.pick(ph, bits, n-len(got), spread)
		if picks == nil {
			// The hint may be behind on releases; ask etcd before giving up.
			if refreshed {
				return nil, &ExhaustedError{Pool: cp.name, PrefixLen: bits, Requested: n, Free: len(got) + free}
			}
			if err := a.refresh(ctx, cp); err != nil {
				return nil, err
			}
			refreshed = true
			continue
		}
		for len(picks) > 0 {
			cb := a.newBatch(id)
			i := 0
			for ; i < len(picks); i++ {
				c, err := a.newClaim(cp, picks[i], owner, id)
				if err != nil {
					a.hint.unpick(ph, picks)
					return nil, err
				}
				if !cb.add(c) {
					break
				}
			}
			batch := picks[:i]
			out, err := a.commit(ctx, cb)
			if err != nil {
				a.hint.unpick(ph, picks)
				return nil, errors.Join(err, a.undoAmbiguous(ctx, cb))
			}
			if !out.ok {
				// Someone was faster: learn what they took and pick again,
				// from a wider choice each time.
				a.lostRaces.Add(1)
				a.hint.observeKVs(out.rev, out.conflicts)
				a.hint.unpick(ph, picks)
				if !a.strict {
					spread = min(max(4*spread, minSpread), maxSpread)
					a.spread.Store(int64(spread))
				}
				lost = true
				break
			}
			a.hint.observe(out.rev, true, batch...)
			a.hint.unpick(ph, batch)
			got = append(got, batch...)
			picks = picks[i:]
		}
	}
	if !lost {
		// Races are over for now: drift back to strict first fit.
		a.spread.Store(a.spread.Load() * 7 / 8)
	}
	slices.SortFunc(got, comparePrefix)
	return got, nil
}

// refresh corrects the hint for cp's space from etcd.
func (a *Allocator) refresh(ctx context.Context, cp *compiledPool) error {
	present := map[netip.Prefix]int64{}
	dir := a.prefix + blocksDir
	var rev int64
	for _, s := range cp.space {
		key := BlockKey(a.prefix, s)
		r, err := rangeAll(ctx, a.client, key, clientv3.GetPrefixRangeEnd(key), rev, true, func(kv keyValue) error {
			if b, err := parseBlockSuffix(kv.key[len(dir):]); err == nil {
				present[b] = kv.modRev
			}
			return nil
		})
		if err != nil {
			return err
		}
		rev = r
	}
	a.hint.reconcile(rev, cp.space, present)
	return nil
}

// claim is one block to write.
type claim struct {
	block netip.Prefix
	value []byte
	owner string
}

func (a *Allocator) newClaim(cp *compiledPool, b netip.Prefix, owner Owner, id string) (claim, error) {
	value, err := json.Marshal(Allocation{Pool: cp.name, Block: b, Owner: owner, Created: a.clock.Now().UTC(), ClaimID: id})
	if err != nil {
		return claim{}, fmt.Errorf("encoding allocation %s: %w", b, err)
	}
	return claim{block: b, value: value, owner: owner.TenantUID}, nil
}

func newClaimID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// claimBatch is a set of non-overlapping claims written by one transaction.
// The transaction succeeds only if, for every claim B:
//
//   - no key starts with BlockKey(B), i.e. neither B nor any block inside
//     B is allocated (a prefix compare; etcd applies a compare over a range
//     to every key in it, and to a zero key-value when the range is empty,
//     so CreateRevision = 0 holds exactly when the range is empty), and
//   - no block containing B is allocated: one CreateRevision = 0 compare on
//     the key of each of B's 32-b ancestors, down to the /0.
//
// etcd evaluates all compares and applies the puts atomically, so two
// overlapping claims can never both succeed.
type claimBatch struct {
	id     string
	maxOps int
	claims []claim
	cmps   []cmpKey
	seen   map[string]bool
}

type cmpKey struct {
	key string
	// own marks a claimed block's key (compared with its descendants, unless
	// it is a single address); the others are ancestors.
	own bool
}

func (a *Allocator) newBatch(id string) *claimBatch {
	return &claimBatch{id: id, maxOps: a.maxOps, seen: map[string]bool{}}
}

// add appends c if the transaction stays within etcd's operation limit.
func (cb *claimBatch) add(c claim) bool {
	// Compare keys are kept without the allocator's prefix; commit adds it.
	var fresh []cmpKey
	own := blockSuffix(c.block)
	if !cb.seen[own] {
		fresh = append(fresh, cmpKey{key: own, own: true})
	}
	for _, anc := range Ancestors(c.block) {
		if k := blockSuffix(anc); !cb.seen[k] {
			fresh = append(fresh, cmpKey{key: k})
		}
	}
	if len(cb.claims) > 0 && (len(cb.cmps)+len(fresh) > cb.maxOps || 2*(len(cb.claims)+1) > cb.maxOps) {
		return false
	}
	for _, k := range fresh {
		cb.seen[k.key] = true
	}
	cb.cmps = append(cb.cmps, fresh...)
	cb.claims = append(cb.claims, c)
	return true
}

type txnOutcome struct {
	ok  bool
	rev int64
	// conflicts are the allocated keys that made the transaction fail.
	conflicts []keyValue
}

func (a *Allocator) commit(ctx context.Context, cb *claimBatch) (txnOutcome, error) {
	dir := a.prefix + blocksDir
	cmps := make([]clientv3.Cmp, 0, len(cb.cmps))
	var reads, ancestorReads []clientv3.Op
	for _, k := range cb.cmps {
		key := dir + k.key
		cmp := clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
		if !k.own {
			cmps = append(cmps, cmp)
			ancestorReads = append(ancestorReads, clientv3.OpGet(key))
			continue
		}
		// A single address has no blocks inside it: a point compare will do.
		if len(k.key) < len(familyV4)+32 {
			cmp = cmp.WithPrefix()
		}
		cmps = append(cmps, cmp)
		reads = append(reads, clientv3.OpGet(key, clientv3.WithPrefix(), clientv3.WithLimit(conflictReadLimit)))
	}
	puts := make([]clientv3.Op, 0, 2*len(cb.claims))
	for _, c := range cb.claims {
		puts = append(puts,
			clientv3.OpPut(dir+blockSuffix(c.block), string(c.value)),
			clientv3.OpPut(ownerKey(a.prefix, c.owner, c.block), ""))
	}
	// On failure the transaction reads back the claimed blocks and what
	// lies inside them, which is nearly always where the conflict is.
	// Ancestors are read only if that finds nothing, to keep the request
	// (which etcd writes to its log) small.
	resp, err := a.client.Txn(ctx).If(cmps...).Then(puts...).Else(reads...).Commit()
	if err != nil {
		return txnOutcome{}, err
	}
	out := txnOutcome{ok: resp.Succeeded, rev: resp.Header.Revision}
	if out.ok {
		return out, nil
	}
	out.conflicts = rangeKVs(resp)
	if len(out.conflicts) == 0 && len(ancestorReads) > 0 {
		resp, err := a.client.Txn(ctx).Then(ancestorReads...).Commit()
		if err != nil {
			return txnOutcome{}, err
		}
		out.rev, out.conflicts = resp.Header.Revision, rangeKVs(resp)
	}
	return out, nil
}

func rangeKVs(resp *clientv3.TxnResponse) []keyValue {
	var out []keyValue
	for _, r := range resp.Responses {
		for _, kv := range r.GetResponseRange().GetKvs() {
			out = append(out, keyValue{key: string(kv.Key), value: kv.Value, modRev: kv.ModRevision})
		}
	}
	return out
}

// takenError explains a failed claim of block from the keys that made it
// fail, or returns nil if the owner already holds exactly block.
func (a *Allocator) takenError(block netip.Prefix, owner Owner, conflicts []keyValue) error {
	dir := a.prefix + blocksDir
	err := &TakenError{Block: block}
	for _, kv := range conflicts {
		b, perr := parseBlockSuffix(kv.key[len(dir):])
		if perr != nil {
			continue
		}
		var holder *Owner
		if alloc, derr := decodeAllocation(b, kv); derr == nil {
			holder = &alloc.Owner
		}
		if b == block && holder != nil && holder.TenantUID == owner.TenantUID && holder.Purpose == owner.Purpose {
			return nil
		}
		if !err.Conflict.IsValid() || b == block {
			err.Conflict, err.Holder = b, holder
		}
	}
	return err
}

// undoAmbiguous removes what cb may have written when etcd's answer was
// lost: the keys that still carry the batch's claim ID. A transaction that
// etcd applies only after this read is not caught; its blocks stay with
// their owner (ListOwner finds them).
func (a *Allocator) undoAmbiguous(ctx context.Context, cb *claimBatch) error {
	blocks := make([]netip.Prefix, len(cb.claims))
	for i, c := range cb.claims {
		blocks[i] = c.block
	}
	return a.undo(ctx, cb.id, blocks)
}

// undo removes the blocks this call wrote under claim ID id.
func (a *Allocator) undo(ctx context.Context, id string, blocks []netip.Prefix) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	var errs []error
	for _, b := range blocks {
		_, err := a.deleteIf(ctx, b, func(alloc Allocation) (bool, error) { return alloc.ClaimID == id, nil })
		if err != nil {
			errs = append(errs, fmt.Errorf("releasing %s after a failed allocation: %w", b, err))
		}
	}
	return errors.Join(errs...)
}

// decodeAllocation decodes the value at block b's key. The periodic
// passes decode every allocation: it decodes with the newer JSON
// implementation, which reads the values encoding/json writes in less
// than half its time, and with a seventh of its garbage.
func decodeAllocation(b netip.Prefix, kv keyValue) (Allocation, error) {
	var alloc Allocation
	if err := jsonv2.Unmarshal(kv.value, &alloc); err != nil {
		return Allocation{}, fmt.Errorf("decoding allocation %s: %w", b, err)
	}
	// The key is what etcd keeps unique; it wins over the value.
	alloc.Block = b
	alloc.Revision = kv.modRev
	return alloc, nil
}

func comparePrefix(x, y netip.Prefix) int {
	if c := x.Addr().Compare(y.Addr()); c != 0 {
		return c
	}
	return x.Bits() - y.Bits()
}
