package ipam_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	clocktesting "k8s.io/utils/clock/testing"

	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/registry/registrytest"
)

// The tests live outside package ipam so that they may use registrytest
// even once the API server (which registrytest imports) uses ipam.

func startEtcd(t testing.TB) string { return registrytest.StartEtcd(t) }

func newClient(t testing.TB, url string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

var prefixes atomic.Int64

// newAllocator returns an allocator with its own etcd client (as a separate
// server replica would have) under prefix.
func newAllocator(t testing.TB, url, prefix string, opts ...ipam.Option) *ipam.Allocator {
	t.Helper()
	a := ipam.New(newClient(t, url), prefix, opts...)
	t.Cleanup(a.Close)
	return a
}

func freshPrefix() string { return fmt.Sprintf("/ipam-%d", prefixes.Add(1)) }

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func mustAddr(s string) netip.Addr     { return netip.MustParseAddr(s) }

func owner(tenant, purpose string) ipam.Owner {
	return ipam.Owner{Tenant: tenant, TenantUID: "uid-" + tenant, Purpose: purpose}
}

var (
	acme      = owner("acme", ipam.PurposeTenantNetwork)
	globex    = owner("globex", ipam.PurposeTenantNetwork)
	acmePub   = owner("acme", ipam.PurposePublicIP)
	globexPub = owner("globex", ipam.PurposePublicIP)
)

func TestClaimBlock(t *testing.T) {
	url := startEtcd(t)
	ctx := context.Background()
	pool := ipam.Pool{Name: "tenant-networks", CIDRs: []netip.Prefix{mustPrefix("10.0.0.0/8")}, Exclude: []netip.Prefix{mustPrefix("10.255.0.0/16")}}

	type step struct {
		block string
		owner ipam.Owner
		check func(error) string // "" if the error is right
	}
	ok := func(err error) string {
		if err != nil {
			return fmt.Sprintf("unexpected error %v", err)
		}
		return ""
	}
	taken := func(conflict, holder string) func(error) string {
		return func(err error) string {
			var te *ipam.TakenError
			if !errors.As(err, &te) {
				return fmt.Sprintf("error %v, want TakenError", err)
			}
			if te.Conflict != mustPrefix(conflict) || te.Holder == nil || te.Holder.Tenant != holder {
				return fmt.Sprintf("TakenError %+v, want conflict %s held by %s", te, conflict, holder)
			}
			if !strings.Contains(err.Error(), holder) {
				return fmt.Sprintf("error %q does not name %s", err, holder)
			}
			return ""
		}
	}
	outside := func(err error) string {
		var oe *ipam.OutsidePoolError
		if !errors.As(err, &oe) || oe.Pool != "tenant-networks" {
			return fmt.Sprintf("error %v, want OutsidePoolError naming the pool", err)
		}
		return ""
	}
	excluded := func(err error) string {
		var ee *ipam.ExcludedError
		if !errors.As(err, &ee) || ee.Excluded != mustPrefix("10.255.0.0/16") {
			return fmt.Sprintf("error %v, want ExcludedError", err)
		}
		return ""
	}
	invalid := func(err error) string {
		if !errors.Is(err, ipam.ErrInvalid) {
			return fmt.Sprintf("error %v, want ErrInvalid", err)
		}
		return ""
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"inside the pool", []step{{"10.42.0.0/16", acme, ok}}},
		{"outside the pool", []step{{"192.168.0.0/16", acme, outside}}},
		{"partly outside the pool", []step{{"10.0.0.0/7", acme, outside}}},
		{"equal block refused", []step{{"10.42.0.0/16", acme, ok}, {"10.42.0.0/16", globex, taken("10.42.0.0/16", "acme")}}},
		{"containing block refused", []step{{"10.42.0.0/16", acme, ok}, {"10.42.0.0/15", globex, taken("10.42.0.0/16", "acme")}}},
		{"contained block refused", []step{{"10.42.0.0/16", acme, ok}, {"10.42.3.0/24", globex, taken("10.42.0.0/16", "acme")}}},
		{"contained address refused", []step{{"10.42.0.0/16", acme, ok}, {"10.42.255.255/32", globex, taken("10.42.0.0/16", "acme")}}},
		{"containing /9 refused over a /32", []step{{"10.1.2.3/32", acme, ok}, {"10.0.0.0/9", globex, taken("10.1.2.3/32", "acme")}}},
		{"neighbours both fine", []step{{"10.42.0.0/16", acme, ok}, {"10.43.0.0/16", globex, ok}, {"10.41.255.0/24", globex, ok}}},
		{"same owner again is idempotent", []step{{"10.42.0.0/16", acme, ok}, {"10.42.0.0/16", acme, ok}}},
		{"same tenant, other purpose refused", []step{{"10.42.0.0/16", acme, ok}, {"10.42.0.0/16", acmePub, taken("10.42.0.0/16", "acme")}}},
		{"excluded block refused", []step{{"10.255.1.0/24", acme, excluded}}},
		{"block overlapping excluded space refused", []step{{"10.254.0.0/15", acme, excluded}}},
		{"not a network address", []step{{"10.42.0.1/16", acme, invalid}}},
		{"ipv6", []step{{"2001:db8::/32", acme, invalid}}},
		{"owner without uid", []step{{"10.42.0.0/16", ipam.Owner{Tenant: "x"}, invalid}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAllocator(t, url, freshPrefix())
			for i, s := range tc.steps {
				b, err := netip.ParsePrefix(s.block)
				if err != nil {
					t.Fatal(err)
				}
				if msg := s.check(a.ClaimBlock(ctx, pool, b, s.owner)); msg != "" {
					t.Errorf("step %d, claim %s for %s: %s", i, s.block, s.owner.Tenant, msg)
				}
			}
		})
	}
}

// TestAllocateBlockFirstFit checks first fit, and that Preview shows the
// block each allocation then takes.
func TestAllocateBlockFirstFit(t *testing.T) {
	url := startEtcd(t)
	ctx := context.Background()
	a := newAllocator(t, url, freshPrefix())
	pool := ipam.Pool{Name: "tenant-networks", CIDRs: []netip.Prefix{mustPrefix("10.0.0.0/16")}, Exclude: []netip.Prefix{mustPrefix("10.0.3.0/24")}}
	steps := []struct {
		bits    int
		release string
		want    string
	}{
		{bits: 24, want: "10.0.0.0/24"},
		{bits: 24, want: "10.0.1.0/24"},
		{bits: 23, want: "10.0.4.0/23"}, // 10.0.2.0/23 holds excluded 10.0.3.0/24
		{bits: 25, want: "10.0.2.0/25"},
		{bits: 24, want: "10.0.6.0/24"},
		{release: "10.0.1.0/24"},
		{bits: 26, want: "10.0.1.0/26"},
		{bits: 24, want: "10.0.7.0/24"},
		{bits: 16}, // exhausted: the /16 holds allocations
		{bits: 32, want: "10.0.1.64/32"},
	}
	for i, s := range steps {
		if s.release != "" {
			if err := a.Release(ctx, mustPrefix(s.release), acme); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			continue
		}
		// A dry run's preview names the block the allocation then takes.
		preview, previewErr := a.Preview(ctx, pool, s.bits)
		got, err := a.AllocateBlock(ctx, pool, s.bits, acme)
		if s.want == "" {
			var ee *ipam.ExhaustedError
			if !errors.As(err, &ee) || ee.Pool != "tenant-networks" || !strings.Contains(err.Error(), `pool "tenant-networks"`) {
				t.Errorf("step %d: /%d: got %v, %v; want ExhaustedError naming the pool", i, s.bits, got, err)
			}
			if !errors.As(previewErr, &ee) {
				t.Errorf("step %d: /%d: preview %v, %v; want ExhaustedError", i, s.bits, preview, previewErr)
			}
			continue
		}
		if previewErr != nil || preview != mustPrefix(s.want) {
			t.Errorf("step %d: /%d: preview %v, %v; want %s", i, s.bits, preview, previewErr, s.want)
		}
		if err != nil || got != mustPrefix(s.want) {
			t.Errorf("step %d: /%d: got %v, %v; want %s", i, s.bits, got, err, s.want)
		}
	}
}

func TestPublicIPRangePool(t *testing.T) {
	url := startEtcd(t)
	ctx := context.Background()
	a := newAllocator(t, url, freshPrefix())
	pool := ipam.Pool{
		Name:    "public",
		Ranges:  []ipam.Range{{First: mustAddr("203.0.113.10"), Last: mustAddr("203.0.113.20")}},
		Exclude: []netip.Prefix{mustPrefix("203.0.113.15/32")},
	}
	capacity, allocated, err := a.Usage(ctx, pool)
	if err != nil || capacity != 10 || allocated != 0 {
		t.Fatalf("Usage = %d, %d, %v; want 10, 0", capacity, allocated, err)
	}
	got, err := a.AllocateAddresses(ctx, pool, 3, acmePub)
	if err != nil || !slices.Equal(got, []netip.Addr{mustAddr("203.0.113.10"), mustAddr("203.0.113.11"), mustAddr("203.0.113.12")}) {
		t.Fatalf("AllocateAddresses(3) = %v, %v", got, err)
	}
	var ee *ipam.ExcludedError
	if err := a.ClaimAddress(ctx, pool, mustAddr("203.0.113.15"), globexPub); !errors.As(err, &ee) {
		t.Errorf("claiming the excluded address: %v, want ExcludedError", err)
	}
	var oe *ipam.OutsidePoolError
	if err := a.ClaimAddress(ctx, pool, mustAddr("203.0.113.21"), globexPub); !errors.As(err, &oe) {
		t.Errorf("claiming past the range: %v, want OutsidePoolError", err)
	}
	if err := a.ClaimAddress(ctx, pool, mustAddr("203.0.113.17"), globexPub); err != nil {
		t.Fatal(err)
	}
	got, err = a.AllocateAddresses(ctx, pool, 6, globexPub)
	want := []netip.Addr{mustAddr("203.0.113.13"), mustAddr("203.0.113.14"), mustAddr("203.0.113.16"), mustAddr("203.0.113.18"), mustAddr("203.0.113.19"), mustAddr("203.0.113.20")}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("AllocateAddresses(6) = %v, %v; want %v (skipping .15 and .17)", got, err, want)
	}
	var xe *ipam.ExhaustedError
	if _, err := a.AllocateAddresses(ctx, pool, 1, acmePub); !errors.As(err, &xe) || xe.Pool != "public" {
		t.Errorf("allocating from a full pool: %v, want ExhaustedError naming the pool", err)
	}
	capacity, allocated, err = a.Usage(ctx, pool)
	if err != nil || capacity != 10 || allocated != 10 {
		t.Errorf("Usage = %d, %d, %v; want 10, 10", capacity, allocated, err)
	}
	list, err := a.List(ctx, pool)
	if err != nil || len(list) != 10 {
		t.Fatalf("List = %d allocations, %v", len(list), err)
	}
	if list[0].Block != mustPrefix("203.0.113.10/32") || list[0].Owner != acmePub || list[0].Pool != "public" || list[0].Created.IsZero() {
		t.Errorf("first allocation = %+v", list[0])
	}
}

func TestAllOrNothing(t *testing.T) {
	url := startEtcd(t)
	ctx := context.Background()
	prefix := freshPrefix()
	pool := ipam.Pool{Name: "public", CIDRs: []netip.Prefix{mustPrefix("198.51.100.0/24")}}

	t.Run("more than is free", func(t *testing.T) {
		a := newAllocator(t, url, prefix)
		if _, err := a.AllocateAddresses(ctx, pool, 200, globexPub); err != nil {
			t.Fatal(err)
		}
		var ee *ipam.ExhaustedError
		_, err := a.AllocateAddresses(ctx, pool, 57, acmePub)
		if !errors.As(err, &ee) || ee.Requested != 57 || ee.Free != 56 {
			t.Fatalf("AllocateAddresses(57) with 56 free: %v, want ExhaustedError 57 requested, 56 free", err)
		}
		if held, err := a.ListOwner(ctx, acmePub.TenantUID); err != nil || len(held) != 0 {
			t.Errorf("the failed call left %d allocations, %v", len(held), err)
		}
		if n, err := a.ReleaseOwner(ctx, globexPub.TenantUID); err != nil || n != 200 {
			t.Fatalf("ReleaseOwner = %d, %v", n, err)
		}
	})

	t.Run("taken behind a stale hint, after some batches succeeded", func(t *testing.T) {
		a := newAllocator(t, url, prefix)
		b := newAllocator(t, url, prefix)
		// Load a's hint, then stop it from following etcd.
		if _, err := a.AllocateAddresses(ctx, pool, 1, acmePub); err != nil {
			t.Fatal(err)
		}
		ipam.FreezeHint(a)
		for i := 200; i < 256; i++ {
			if err := b.ClaimAddress(ctx, pool, netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}), globexPub); err != nil {
				t.Fatal(err)
			}
		}
		// a believes 255 addresses are free and asks for 250: its first
		// transactions succeed, a later one meets globex's addresses.
		var ee *ipam.ExhaustedError
		if _, err := a.AllocateAddresses(ctx, pool, 250, acmePub); !errors.As(err, &ee) {
			t.Fatalf("AllocateAddresses(250): %v, want ExhaustedError", err)
		}
		held, err := a.ListOwner(ctx, acmePub.TenantUID)
		if err != nil || len(held) != 1 {
			t.Errorf("acme holds %d allocations after the failed call, %v; want its first 1", len(held), err)
		}
		all, err := a.ListAll(ctx)
		if err != nil || len(all) != 57 {
			t.Errorf("%d allocations in etcd, %v; want 57", len(all), err)
		}
	})
}

func TestStaleHintNeverDuplicates(t *testing.T) {
	url := startEtcd(t)
	ctx := context.Background()
	prefix := freshPrefix()
	pool := ipam.Pool{Name: "p", CIDRs: []netip.Prefix{mustPrefix("10.1.0.0/24")}}
	a, b := newAllocator(t, url, prefix), newAllocator(t, url, prefix)
	if _, err := a.AllocateBlock(ctx, pool, 30, acme); err != nil {
		t.Fatal(err)
	}
	ipam.FreezeHint(a)
	fromB, err := b.AllocateAddresses(ctx, pool, 100, globex)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := a.AllocateBlock(ctx, pool, 28, acme)
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range fromB {
		if blk.Contains(addr) {
			t.Fatalf("a allocated %s over b's %s", blk, addr)
		}
	}
	// Having lost races, a chooses among the lowest free blocks at random:
	// any free /28 will do (10.1.0.0/30 is a's own; b took .4 to .103).
	if blk.Bits() != 28 || blk.Addr().Less(mustAddr("10.1.0.112")) || !mustPrefix("10.1.0.0/24").Contains(blk.Addr()) {
		t.Errorf("a allocated %s, want a free /28 in the pool", blk)
	}
	if ipam.LostRaces(a) == 0 {
		t.Error("a's stale hint cost no lost race; the test does not test what it says")
	}
}

func TestRelease(t *testing.T) {
	url := startEtcd(t)
	ctx := context.Background()
	a := newAllocator(t, url, freshPrefix())
	pool := ipam.Pool{Name: "p", CIDRs: []netip.Prefix{mustPrefix("10.0.0.0/8")}}
	block := mustPrefix("10.42.0.0/16")
	if err := a.ClaimBlock(ctx, pool, block, acme); err != nil {
		t.Fatal(err)
	}
	var me *ipam.OwnerMismatchError
	if err := a.Release(ctx, block, globex); !errors.As(err, &me) || me.Holder != acme {
		t.Errorf("release by another tenant: %v, want OwnerMismatchError", err)
	}
	if err := a.Release(ctx, block, acmePub); !errors.As(err, &me) {
		t.Errorf("release for another purpose: %v, want OwnerMismatchError", err)
	}
	if err := a.Release(ctx, mustPrefix("10.42.0.0/17"), acme); err != nil {
		t.Errorf("release of a block inside, which nobody holds: %v", err)
	}
	if list, _ := a.ListAll(ctx); len(list) != 1 {
		t.Fatalf("%d allocations after refused releases, want 1", len(list))
	}
	if err := a.Release(ctx, block, ipam.Owner{TenantUID: acme.TenantUID}); err != nil {
		t.Errorf("release by the owner without purpose: %v", err)
	}
	if err := a.Release(ctx, block, acme); err != nil {
		t.Errorf("release of a missing block: %v", err)
	}
	if err := a.ClaimBlock(ctx, pool, block, globex); err != nil {
		t.Errorf("claim after release: %v", err)
	}
}

func TestReleaseOwnerAndUsage(t *testing.T) {
	url := startEtcd(t)
	ctx := context.Background()
	a := newAllocator(t, url, freshPrefix())
	nets := ipam.Pool{Name: "tenant-networks", CIDRs: []netip.Prefix{mustPrefix("10.0.0.0/16")}}
	public := ipam.Pool{Name: "public", CIDRs: []netip.Prefix{mustPrefix("203.0.113.0/28")}, Exclude: []netip.Prefix{mustPrefix("203.0.113.0/32")}}

	if _, err := a.AllocateBlock(ctx, nets, 24, acme); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AllocateBlock(ctx, nets, 20, globex); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AllocateAddresses(ctx, public, 3, acmePub); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AllocateAddresses(ctx, public, 2, globexPub); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pool                ipam.Pool
		capacity, allocated uint64
	}{{nets, 65536, 256 + 4096}, {public, 15, 5}} {
		c, n, err := a.Usage(ctx, tc.pool)
		if err != nil || c != tc.capacity || n != tc.allocated {
			t.Errorf("Usage(%s) = %d, %d, %v; want %d, %d", tc.pool.Name, c, n, err, tc.capacity, tc.allocated)
		}
	}
	held, err := a.ListOwner(ctx, acme.TenantUID)
	if err != nil || len(held) != 4 {
		t.Fatalf("ListOwner(acme) = %v, %v; want 4", held, err)
	}
	n, err := a.ReleaseOwner(ctx, acme.TenantUID)
	if err != nil || n != 4 {
		t.Fatalf("ReleaseOwner(acme) = %d, %v; want 4", n, err)
	}
	all, err := a.ListAll(ctx)
	if err != nil || len(all) != 3 {
		t.Fatalf("ListAll after ReleaseOwner = %v, %v", all, err)
	}
	for _, alloc := range all {
		if alloc.Owner.TenantUID != globex.TenantUID {
			t.Errorf("left %+v", alloc)
		}
	}
	if n, err := a.ReleaseOwner(ctx, acme.TenantUID); err != nil || n != 0 {
		t.Errorf("second ReleaseOwner = %d, %v", n, err)
	}
	if _, n, _ := a.Usage(ctx, public); n != 2 {
		t.Errorf("public allocated = %d after ReleaseOwner, want 2", n)
	}
}

// sweepFixture is an allocator on a fake clock and a /16 pool for sweeps.
func sweepFixture(t *testing.T) (context.Context, *clocktesting.FakeClock, *ipam.Allocator, ipam.Pool) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	a := newAllocator(t, startEtcd(t), freshPrefix(), ipam.WithClock(clk))
	return context.Background(), clk, a, ipam.Pool{Name: "p", CIDRs: []netip.Prefix{mustPrefix("10.0.0.0/16")}}
}

// keepByState is a sweep's keep over owners in state by tenant name:
// "alive" kept, "dead" released, anything else an error; it counts the
// allocations it was asked about in asked.
func keepByState(state map[string]string, asked *int) func(ipam.Allocation) (bool, error) {
	return func(alloc ipam.Allocation) (bool, error) {
		*asked++
		switch state[strings.TrimPrefix(alloc.Owner.TenantUID, "uid-")] {
		case "alive":
			return true, nil
		case "dead":
			return false, nil
		}
		return false, errors.New("host unreachable")
	}
}

// TestSweepKept: the sweep's Kept is what a second pass over the keyspace
// would read after it (the young, the kept, those whose check failed, and
// not what it released), and stays nil when the pass did not complete.
func TestSweepKept(t *testing.T) {
	ctx, clk, a, pool := sweepFixture(t)
	state := map[string]string{"live": "alive", "gone": "dead", "unsure": "error"}
	for _, name := range []string{"live", "gone", "unsure"} {
		if _, err := a.AllocateBlock(ctx, pool, 24, owner(name, ipam.PurposeTenantNetwork)); err != nil {
			t.Fatal(err)
		}
	}
	clk.Step(2 * ipam.DefaultSweepMinAge)
	// Allocated after the step: too young to be asked about.
	young, err := a.AllocateAddresses(ctx, pool, 2, owner("new", ipam.PurposePublicIP))
	if err != nil {
		t.Fatal(err)
	}
	keep := keepByState(state, new(int))
	var kept ipam.Held
	n, err := ipam.SweepUnused(ctx, a, keep, ipam.Kept(&kept))
	if n != 1 || err == nil {
		t.Fatalf("sweep = %d, %v; want 1 released and the keep error", n, err)
	}
	after, err := ipam.HeldIn(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 4 || !maps.Equal(kept, after) {
		t.Errorf("the sweep kept %v; a pass after it reads %v (want 4: live, unsure and the 2 young)", kept, after)
	}
	for _, y := range young {
		if kept[netip.PrefixFrom(y, y.BitLen())] != ipam.PurposePublicIP {
			t.Errorf("young %s not among the kept: %v", y, kept)
		}
	}

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	var none ipam.Held
	if _, err := ipam.SweepUnused(canceled, a, keep, ipam.Kept(&none)); err == nil || none != nil {
		t.Errorf("an interrupted sweep: %v, kept %v; want the error and nothing kept", err, none)
	}
}

func TestSweep(t *testing.T) {
	ctx, clk, a, pool := sweepFixture(t)
	tenants := map[string]string{"live": "alive", "gone": "dead", "ghost": "dead", "unsure": "error"}
	for name := range tenants {
		if _, err := a.AllocateBlock(ctx, pool, 24, owner(name, ipam.PurposeTenantNetwork)); err != nil {
			t.Fatal(err)
		}
		if _, err := a.AllocateAddresses(ctx, pool, 2, owner(name, ipam.PurposePublicIP)); err != nil {
			t.Fatal(err)
		}
	}
	var asked int
	keep := keepByState(tenants, &asked)
	if n, err := ipam.SweepUnused(ctx, a, keep); n != 0 || err != nil || asked != 0 {
		t.Fatalf("sweep of young allocations released %d, %v, asking %d times; want 0, asking none", n, err, asked)
	}
	clk.Step(2 * ipam.DefaultSweepMinAge)
	n, err := ipam.SweepUnused(ctx, a, keep)
	if n != 6 || err == nil || !strings.Contains(err.Error(), "host unreachable") {
		t.Fatalf("sweep = %d, %v; want 6 released and the keep error", n, err)
	}
	if asked != 12 {
		t.Errorf("keep asked %d times, want once per allocation (12)", asked)
	}
	all, err := a.ListAll(ctx)
	if err != nil || len(all) != 6 {
		t.Fatalf("ListAll after the sweep = %d, %v; want 6", len(all), err)
	}
	for _, alloc := range all {
		if s := tenants[alloc.Owner.Tenant]; s == "dead" {
			t.Errorf("%s of a dead owner survived", alloc.Block)
		}
	}
	for _, name := range []string{"gone", "ghost"} {
		if held, _ := a.ListOwner(ctx, "uid-"+name); len(held) != 0 {
			t.Errorf("owner index of %s still lists %v", name, held)
		}
	}
}

// TestStrictFirstFit checks that an allocator made WithStrictFirstFit
// keeps taking the lowest free block after its claims lost races (where
// a default allocator widens its aim, TestStaleHintNeverDuplicates).
func TestStrictFirstFit(t *testing.T) {
	url := startEtcd(t)
	ctx := context.Background()
	prefix := freshPrefix()
	pool := ipam.Pool{Name: "p", CIDRs: []netip.Prefix{mustPrefix("10.1.0.0/24")}}
	a := newAllocator(t, url, prefix, ipam.WithStrictFirstFit())
	b := newAllocator(t, url, prefix)
	if _, err := a.AllocateBlock(ctx, pool, 30, acme); err != nil {
		t.Fatal(err)
	}
	ipam.FreezeHint(a)
	if _, err := b.AllocateAddresses(ctx, pool, 100, globex); err != nil { // .4 to .103
		t.Fatal(err)
	}
	for _, want := range []string{"10.1.0.112/28", "10.1.0.128/28", "10.1.0.144/28"} {
		blk, err := a.AllocateBlock(ctx, pool, 28, acme)
		if err != nil {
			t.Fatal(err)
		}
		if blk.String() != want {
			t.Errorf("strict first fit allocated %s, want the lowest free /28 %s", blk, want)
		}
	}
	if ipam.LostRaces(a) == 0 {
		t.Error("a's stale hint cost no lost race; the test does not test what it says")
	}
}

// TestEachAllocation checks the page-at-a-time pass over every allocation:
// it sees all of them across pages, skips and reports a value that does
// not decode, and stops at the first error of its callback.
func TestEachAllocation(t *testing.T) {
	url := startEtcd(t)
	ctx := context.Background()
	prefix := freshPrefix()
	a := newAllocator(t, url, prefix)
	pool := ipam.Pool{Name: "p", CIDRs: []netip.Prefix{mustPrefix("10.0.0.0/8")}}
	const n = 1500 // more than one page of etcd reads
	for i := 0; i < n; i++ {
		if _, err := a.AllocateBlock(ctx, pool, 28, owner(fmt.Sprintf("t%d", i), ipam.PurposeTenantNetwork)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := newClient(t, url).Put(ctx, ipam.BlockKey(prefix, mustPrefix("11.0.0.0/24")), "{not json"); err != nil {
		t.Fatal(err)
	}
	seen := map[netip.Prefix]bool{}
	err := a.EachAllocation(ctx, func(al ipam.Allocation) error {
		if seen[al.Block] {
			t.Errorf("%s seen twice", al.Block)
		}
		seen[al.Block] = true
		return nil
	})
	var decode *ipam.DecodeErrors
	if !errors.As(err, &decode) || len(decode.Errs) != 1 {
		t.Errorf("EachAllocation error = %v, want one value that does not decode", err)
	}
	if len(seen) != n {
		t.Errorf("EachAllocation saw %d allocations, want %d", len(seen), n)
	}
	all, err := a.ListAll(ctx)
	if !errors.As(err, &decode) || len(all) != n {
		t.Errorf("ListAll = %d allocations, %v; want %d and the decode error", len(all), err, n)
	}
	stop := errors.New("enough")
	calls := 0
	if err := a.EachAllocation(ctx, func(ipam.Allocation) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("EachAllocation with a failing callback = %v after %d calls, want its error after 1", err, calls)
	}
}
