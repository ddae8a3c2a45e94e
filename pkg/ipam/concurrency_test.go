package ipam_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"tenant.io/tenant-apiserver/pkg/ipam"
)

const (
	replicas          = 5  // allocators, each with its own etcd client
	workersPerReplica = 10 // 50 workers in all
	perWorker         = 200
)

// checkStore reads every allocation under prefix straight from etcd and
// fails the test on any overlap or on an owner index that disagrees. It
// returns the allocations, sorted.
func checkStore(t *testing.T, client *clientv3.Client, prefix string) []ipam.Allocation {
	t.Helper()
	ctx := context.Background()
	resp, err := client.Get(ctx, prefix+"/blocks/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	allocs := make([]ipam.Allocation, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		b, err := ipam.ParseBlockKey(prefix, string(kv.Key))
		if err != nil {
			t.Fatal(err)
		}
		allocs = append(allocs, ipam.Allocation{Block: b})
	}
	slices.SortFunc(allocs, func(x, y ipam.Allocation) int { return x.Block.Addr().Compare(y.Block.Addr()) })
	for i := 1; i < len(allocs); i++ {
		if prev, cur := allocs[i-1].Block, allocs[i].Block; prev.Overlaps(cur) {
			t.Errorf("%s and %s overlap", prev, cur)
		}
	}
	owners, err := client.Get(ctx, prefix+"/owners/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if owners.Count != int64(len(allocs)) {
		t.Errorf("owner index has %d keys for %d allocations", owners.Count, len(allocs))
	}
	return allocs
}

// TestConcurrentAddresses has 50 workers on 5 allocators take 200 single
// addresses each from one /16: every call must succeed, and etcd must hold
// exactly the 10,000 distinct addresses handed out.
func TestConcurrentAddresses(t *testing.T) {
	url := startEtcd(t)
	prefix := freshPrefix()
	pool := ipam.Pool{Name: "public", CIDRs: []netip.Prefix{mustPrefix("10.100.0.0/16")}, Exclude: []netip.Prefix{mustPrefix("10.100.0.0/32")}}
	perWorker := perWorker
	if testing.Short() {
		perWorker = 20
	}
	var (
		mu   sync.Mutex
		got  = map[netip.Addr]string{}
		errs []error
		wg   sync.WaitGroup
	)
	for r := range replicas {
		a := newAllocator(t, url, prefix)
		for w := range workersPerReplica {
			o := owner(fmt.Sprintf("t%d-%d", r, w), ipam.PurposePublicIP)
			wg.Go(func() {
				for range perWorker {
					addrs, err := a.AllocateAddresses(context.Background(), pool, 1, o)
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					}
					for _, addr := range addrs {
						if prev, dup := got[addr]; dup {
							errs = append(errs, fmt.Errorf("%s handed to %s and %s", addr, prev, o.Tenant))
						}
						got[addr] = o.TenantUID
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	want := replicas * workersPerReplica * perWorker
	allocs := checkStore(t, newClient(t, url), prefix)
	if len(got) != want || len(allocs) != want {
		t.Fatalf("%d addresses returned, %d in etcd; want %d", len(got), len(allocs), want)
	}
	a := newAllocator(t, url, prefix)
	stored, err := a.ListAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, alloc := range stored {
		if uid, ok := got[alloc.Block.Addr()]; !ok || uid != alloc.Owner.TenantUID || alloc.Block.Bits() != 32 {
			t.Errorf("etcd holds %s for %s, returned to %q", alloc.Block, alloc.Owner.TenantUID, uid)
		}
		if alloc.Block.Addr() == mustAddr("10.100.0.0") {
			t.Errorf("excluded address allocated")
		}
	}
	if _, allocated, err := a.Usage(context.Background(), pool); err != nil || allocated != uint64(want) {
		t.Errorf("Usage allocated = %d, %v; want %d", allocated, err, want)
	}
}

// TestConcurrentMixedBlocks has 50 workers on 5 allocators take blocks of
// /24 to /28 from one /16 until it is full, releasing some of what they took
// on the way. No two blocks in etcd may overlap, etcd must hold exactly the
// blocks taken and not released, and when it is over the pool must be packed
// full (every block is a multiple of a /28, so a refused /28 means full).
func TestConcurrentMixedBlocks(t *testing.T) {
	url := startEtcd(t)
	prefix := freshPrefix()
	pool := ipam.Pool{Name: "tenant-networks", CIDRs: []netip.Prefix{mustPrefix("10.200.0.0/16")}}
	perWorker := perWorker
	if testing.Short() {
		perWorker = 20
	}
	var (
		mu        sync.Mutex
		held      = map[netip.Prefix]string{}
		errs      []error
		exhausted int
		wg        sync.WaitGroup
	)
	allocators := make([]*ipam.Allocator, replicas)
	for r := range replicas {
		a := newAllocator(t, url, prefix)
		allocators[r] = a
		for w := range workersPerReplica {
			o := owner(fmt.Sprintf("t%d-%d", r, w), ipam.PurposeTenantNetwork)
			rng := rand.New(rand.NewPCG(uint64(r), uint64(w)))
			wg.Go(func() {
				var mine []netip.Prefix
				for range perWorker {
					if len(mine) > 0 && rng.IntN(4) == 0 {
						i := rng.IntN(len(mine))
						b := mine[i]
						mine = slices.Delete(mine, i, i+1)
						// Forget b before etcd does, or a worker that gets it
						// next would see it still held.
						mu.Lock()
						delete(held, b)
						mu.Unlock()
						if err := a.Release(context.Background(), b, o); err != nil {
							mu.Lock()
							errs = append(errs, err)
							mu.Unlock()
						}
						continue
					}
					b, err := a.AllocateBlock(context.Background(), pool, 24+rng.IntN(5), o)
					mu.Lock()
					var ee *ipam.ExhaustedError
					switch {
					case errors.As(err, &ee):
						exhausted++
					case err != nil:
						errs = append(errs, err)
					default:
						for other, uid := range held {
							if other.Overlaps(b) {
								errs = append(errs, fmt.Errorf("%s handed to %s overlaps %s of %s", b, o.TenantUID, other, uid))
							}
						}
						held[b] = o.TenantUID
						mine = append(mine, b)
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d blocks held, %d exhausted answers", len(held), exhausted)
	client := newClient(t, url)
	allocs := checkStore(t, client, prefix)
	var size uint64
	for _, alloc := range allocs {
		if _, ok := held[alloc.Block]; !ok {
			t.Errorf("etcd holds %s, which no worker holds", alloc.Block)
		}
		size += ipam.Size(alloc.Block)
	}
	if len(allocs) != len(held) {
		t.Errorf("etcd holds %d blocks, workers %d", len(allocs), len(held))
	}
	if _, allocated, err := allocators[0].Usage(context.Background(), pool); err != nil || allocated != size {
		t.Errorf("Usage allocated = %d, %v; want %d", allocated, err, size)
	}
	// Fill what is left through every allocator, then the pool must be full.
	for _, a := range allocators {
		for {
			if _, err := a.AllocateBlock(context.Background(), pool, 28, globex); err != nil {
				var ee *ipam.ExhaustedError
				if !errors.As(err, &ee) {
					t.Fatal(err)
				}
				break
			}
		}
	}
	checkStore(t, client, prefix)
	if capacity, allocated, err := allocators[0].Usage(context.Background(), pool); err != nil || allocated != capacity {
		t.Errorf("after filling: Usage = %d of %d, %v; want full", allocated, capacity, err)
	}
}

// TestCrashMidBurst cuts one replica off from etcd (as kill -9 would) while
// both replicas allocate: nothing the survivor was given may be lost or
// duplicated, and after SweepUnused learns that the dead replica's owners are gone
// etcd holds exactly what the survivor was given.
func TestCrashMidBurst(t *testing.T) {
	url := startEtcd(t)
	prefix := freshPrefix()
	pool := ipam.Pool{Name: "public", CIDRs: []netip.Prefix{mustPrefix("10.50.0.0/16")}}
	survivor := newAllocator(t, url, prefix)
	victimClient, err := clientv3.New(clientv3.Config{Endpoints: []string{url}})
	if err != nil {
		t.Fatal(err)
	}
	victim := ipam.New(victimClient, prefix)
	defer victim.Close()

	var (
		mu               sync.Mutex
		survived, killed = map[netip.Addr]bool{}, map[netip.Addr]bool{}
		errs             []error
		wg               sync.WaitGroup
		victimBusy       = make(chan struct{})
		once             sync.Once
	)
	for w := range workersPerReplica {
		so := owner(fmt.Sprintf("s%d", w), ipam.PurposePublicIP)
		wg.Go(func() {
			for range perWorker {
				addrs, err := survivor.AllocateAddresses(context.Background(), pool, 1, so)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				for _, a := range addrs {
					survived[a] = true
				}
				mu.Unlock()
			}
		})
		vo := owner(fmt.Sprintf("v%d", w), ipam.PurposePublicIP)
		wg.Go(func() {
			for {
				addrs, err := victim.AllocateAddresses(context.Background(), pool, 1, vo)
				if err != nil {
					return // cut off
				}
				mu.Lock()
				killed[addrs[0]] = true
				if len(killed) == 300 {
					once.Do(func() { close(victimBusy) })
				}
				mu.Unlock()
			}
		})
	}
	// Cut the victim off in the middle of its burst.
	<-victimBusy
	_ = victimClient.Close()
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for a := range survived {
		if killed[a] {
			t.Errorf("%s given to both replicas", a)
		}
	}
	client := newClient(t, url)
	allocs := checkStore(t, client, prefix)
	t.Logf("survivor got %d, victim %d, etcd holds %d", len(survived), len(killed), len(allocs))

	n, err := ipam.SweepUnused(context.Background(), survivor, func(alloc ipam.Allocation) (bool, error) {
		return alloc.Owner.TenantUID[len("uid-")] == 's', nil
	}, ipam.MinAge(0))
	if err != nil {
		t.Fatal(err)
	}
	if n < len(killed) {
		t.Errorf("the sweep released %d, fewer than the %d the victim was given", n, len(killed))
	}
	allocs = checkStore(t, client, prefix)
	if len(allocs) != len(survived) {
		t.Errorf("etcd holds %d allocations after the sweep, the survivor was given %d", len(allocs), len(survived))
	}
	for _, a := range allocs {
		if !survived[a.Block.Addr()] {
			t.Errorf("%s left in etcd, not the survivor's", a.Block)
		}
	}
}

// TestConcurrentOverlappingClaims starts, at the same instant and across 5
// allocators, explicit claims of a /24, every block inside it down to /27,
// some single addresses, each by two owners (equal, containing and contained
// claims all race). The winners must not overlap, etcd must hold exactly the
// winners, and every loser must be told which winner it overlaps.
func TestConcurrentOverlappingClaims(t *testing.T) {
	url := startEtcd(t)
	prefix := freshPrefix()
	pool := ipam.Pool{Name: "tenant-networks", CIDRs: []netip.Prefix{mustPrefix("10.77.0.0/16")}}
	allocators := make([]*ipam.Allocator, replicas)
	for i := range allocators {
		allocators[i] = newAllocator(t, url, prefix)
	}
	rounds := 20
	if testing.Short() {
		rounds = 3
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for round := range rounds {
		base := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 77, byte(round), 0}), 24)
		blocks := []netip.Prefix{base}
		for i := 0; i < len(blocks) && blocks[i].Bits() < 27; i++ {
			lo, hi, _ := ipam.Children(blocks[i])
			blocks = append(blocks, lo, hi)
		}
		for range 8 {
			blocks = append(blocks, netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 77, byte(round), byte(rng.IntN(256))}), 32))
		}
		type result struct {
			block netip.Prefix
			uid   string
			err   error
		}
		var (
			wg      sync.WaitGroup
			start   = make(chan struct{})
			results = make(chan result, 2*len(blocks))
		)
		for i, b := range blocks {
			for c := range 2 {
				a := allocators[(2*i+c)%replicas]
				o := owner(fmt.Sprintf("r%d-%d-%d", round, i, c), ipam.PurposeTenantNetwork)
				wg.Go(func() {
					<-start
					results <- result{b, o.TenantUID, a.ClaimBlock(context.Background(), pool, b, o)}
				})
			}
		}
		close(start)
		wg.Wait()
		close(results)
		winners := map[netip.Prefix]string{}
		var losers []result
		for r := range results {
			var te *ipam.TakenError
			switch {
			case r.err == nil:
				if prev, dup := winners[r.block]; dup {
					t.Errorf("%s claimed by both %s and %s", r.block, prev, r.uid)
				}
				winners[r.block] = r.uid
			case errors.As(r.err, &te):
				losers = append(losers, r)
			default:
				t.Fatalf("claim of %s: %v", r.block, r.err)
			}
		}
		for b := range winners {
			for c := range winners {
				if b != c && b.Overlaps(c) {
					t.Errorf("winners %s and %s overlap", b, c)
				}
			}
		}
		for _, l := range losers {
			var te *ipam.TakenError
			errors.As(l.err, &te)
			if _, ok := winners[te.Conflict]; !ok || !te.Conflict.Overlaps(l.block) {
				t.Errorf("%s lost to %v, which is not an overlapping winner", l.block, te.Conflict)
			}
		}
		stored, err := allocators[0].List(context.Background(), ipam.Pool{Name: "round", CIDRs: []netip.Prefix{base}})
		if err != nil {
			t.Fatal(err)
		}
		if len(stored) != len(winners) {
			t.Errorf("round %d: etcd holds %d blocks, %d winners", round, len(stored), len(winners))
		}
		for _, s := range stored {
			if winners[s.Block] != s.Owner.TenantUID {
				t.Errorf("etcd holds %s for %s, not a winner", s.Block, s.Owner.TenantUID)
			}
		}
	}
	checkStore(t, newClient(t, url), prefix)
}
