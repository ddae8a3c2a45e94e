package upkeep_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/util/sets"

	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/ipam/upkeep"
	"tenant.io/tenant-apiserver/pkg/registry/registrytest"
)

// recorder is a kind that records the allocations of one purpose, those
// in records: its read has them, and its reclaim finds each held. late
// are recorded by objects stored after a read (Recorded has them, its
// read does not); readErr fails its reads.
type recorder struct {
	space    *ipam.Allocator
	purpose  string
	records  []netip.Prefix
	late     []netip.Prefix
	readErr  error
	asked    int
	reclaims int
}

func (r *recorder) Space() *ipam.Allocator       { return r.space }
func (r *recorder) Names(a ipam.Allocation) bool { return a.Owner.Purpose == r.purpose }
func (r *recorder) Recorded(a ipam.Allocation) (bool, error) {
	r.asked++
	return slices.Contains(r.records, a.Block) || slices.Contains(r.late, a.Block), nil
}
func (r *recorder) Read(context.Context) (ipam.Records, error) {
	if r.readErr != nil {
		return nil, r.readErr
	}
	return &read{recorder: r, has: sets.New(r.records...)}, nil
}

// read is one read of a recorder's objects.
type read struct {
	*recorder
	has sets.Set[netip.Prefix]
}

func (r *read) Has(a ipam.Allocation) bool { return r.has.Has(a.Block) }
func (r *read) Reclaim(_ context.Context, held ipam.Held) (int, error) {
	r.reclaims++
	missing := 0
	for b := range r.has {
		if held[b] != r.purpose {
			missing++
		}
	}
	if missing > 0 {
		return 0, fmt.Errorf("%s: %d recorded blocks not held", r.purpose, missing)
	}
	return 0, nil
}

// filled is a keyspace of n allocations of /28 blocks, a third each of
// three recorders' purposes, as the tenant keyspace holds Networks'
// subnets and FloatingIPs' and LoadBalancers' addresses.
func filled(tb testing.TB, n int) (*ipam.Allocator, []*recorder) {
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{registrytest.StartEtcd(tb)}, Logger: zap.NewNop()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = client.Close() })
	space := ipam.New(client, "/upkeep-test")
	tb.Cleanup(space.Close)
	pool := ipam.Pool{Name: "p", CIDRs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
	recs := make([]*recorder, 3)
	for i := range recs {
		recs[i] = &recorder{space: space, purpose: fmt.Sprintf("use-%d", i)}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				r := recs[i%len(recs)]
				block := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 12), byte(i >> 4), byte(i << 4)}), 28)
				owner := ipam.Owner{Tenant: fmt.Sprintf("t%d", i/10), TenantUID: fmt.Sprintf("uid-%d", i/10), Purpose: r.purpose}
				if err := space.ClaimBlock(context.Background(), pool, block, owner); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				r.records = append(r.records, block)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	return space, recs
}

// TestPassReclaimsFromTheSweep: a pass reads the keyspace once and gives
// every recorder what its sweep kept; each finds all it records held.
func TestPassReclaimsFromTheSweep(t *testing.T) {
	space, recs := filled(t, 300)
	c := &upkeep.Controller{Recorders: []ipam.Recorder{recs[0], recs[1], recs[2]}}
	released, claimed, err := c.Pass(context.Background())
	if err != nil || released != 0 || claimed != 0 {
		t.Fatalf("pass: released %d, claimed %d, %v; want nothing and no error", released, claimed, err)
	}
	for _, r := range recs {
		if r.reclaims != 1 {
			t.Errorf("%s reclaimed %d times, want once", r.purpose, r.reclaims)
		}
		if r.asked != 0 {
			t.Errorf("%s was asked about %d allocations its read had", r.purpose, r.asked)
		}
	}
	if held, err := ipam.HeldIn(context.Background(), space); err != nil || len(held) != 300 {
		t.Errorf("the keyspace holds %d (%v), want 300", len(held), err)
	}
}

// TestPassAsksAboutWhatTheReadLacks: the sweep asks a recorder only about
// the allocations its read did not have. It keeps those recorded by
// objects the read did not see, and releases those nobody records.
func TestPassAsksAboutWhatTheReadLacks(t *testing.T) {
	space, recs := filled(t, 300)
	late, leaked := recs[0].records[:10], recs[1].records[:5]
	recs[0].records, recs[0].late = recs[0].records[10:], late
	recs[1].records = recs[1].records[5:]
	c := &upkeep.Controller{Recorders: []ipam.Recorder{recs[0], recs[1], recs[2]}}
	released, claimed, err := c.Pass(context.Background())
	if err != nil || released != 5 || claimed != 0 {
		t.Fatalf("pass: released %d, claimed %d, %v; want 5 released and no error", released, claimed, err)
	}
	for r, want := range map[*recorder]int{recs[0]: 10, recs[1]: 5, recs[2]: 0} {
		if r.asked != want {
			t.Errorf("%s was asked about %d allocations, want %d", r.purpose, r.asked, want)
		}
	}
	held, err := ipam.HeldIn(context.Background(), space)
	if err != nil || len(held) != 295 {
		t.Fatalf("the keyspace holds %d (%v), want 295", len(held), err)
	}
	for _, b := range late {
		if _, ok := held[b]; !ok {
			t.Errorf("%s, recorded by an object newer than the read, was released", b)
		}
	}
	for _, b := range leaked {
		if _, ok := held[b]; ok {
			t.Errorf("%s, which nobody records, was kept", b)
		}
	}
}

// TestPassWithoutARead: a recorder whose read fails is asked about each
// of its allocations, as if there were no reads, and claims nothing
// again; the pass says why.
func TestPassWithoutARead(t *testing.T) {
	space, recs := filled(t, 300)
	recs[2].readErr = errors.New("the watch cache is not ready")
	leaked := recs[2].records[:3]
	recs[2].records = recs[2].records[3:]
	c := &upkeep.Controller{Recorders: []ipam.Recorder{recs[0], recs[1], recs[2]}}
	released, _, err := c.Pass(context.Background())
	if err == nil || !strings.Contains(err.Error(), "the watch cache is not ready") {
		t.Errorf("pass: %v, want the read's error", err)
	}
	if released != 3 {
		t.Errorf("pass released %d, want the 3 nobody records", released)
	}
	if recs[2].asked != 100 || recs[2].reclaims != 0 || recs[0].asked != 0 || recs[0].reclaims != 1 {
		t.Errorf("asked %d and reclaimed %d times of the recorder without a read, %d and %d of one with; want 100 and 0, 0 and 1",
			recs[2].asked, recs[2].reclaims, recs[0].asked, recs[0].reclaims)
	}
	held, err := ipam.HeldIn(context.Background(), space)
	if err != nil || len(held) != 297 {
		t.Fatalf("the keyspace holds %d (%v), want 297", len(held), err)
	}
	for _, b := range leaked {
		if _, ok := held[b]; ok {
			t.Errorf("%s, which nobody records, was kept", b)
		}
	}
}

// BenchmarkPass: one pass of the upkeep over a keyspace of 10,000
// allocations with three recorders, side by side: reading the keyspace
// for the sweep and again for each recorder's reclaim, and reading it
// once (Pass).
func BenchmarkPass(b *testing.B) {
	space, recs := filled(b, 10000)
	recorders := []ipam.Recorder{recs[0], recs[1], recs[2]}
	c := &upkeep.Controller{Recorders: recorders}
	ctx := context.Background()
	b.Run("a-read-per-recorder", func(b *testing.B) {
		for b.Loop() {
			if _, err := ipam.SweepUnused(ctx, space, c.Keep(space), ipam.MinAge(0)); err != nil {
				b.Fatal(err)
			}
			for _, r := range recorders {
				held, err := ipam.HeldIn(ctx, space)
				if err != nil {
					b.Fatal(err)
				}
				records, err := r.Read(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := records.Reclaim(ctx, held); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("one-read", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := c.Pass(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestPace: passes keep their period while they are short, take at most
// a tenth of the time once they are not, and wait at most a minute (or
// the period) whatever a pass took.
func TestPace(t *testing.T) {
	for _, c := range []struct{ period, took, want time.Duration }{
		{10 * time.Second, 50 * time.Millisecond, 10 * time.Second},
		{10 * time.Second, time.Second, 10 * time.Second},
		{10 * time.Second, 2 * time.Second, 18 * time.Second},
		{10 * time.Second, 5 * time.Second, 45 * time.Second},
		{10 * time.Second, 30 * time.Second, upkeep.MaxPace},
		{time.Second, 10 * time.Minute, upkeep.MaxPace},
		{time.Hour, 5 * time.Second, time.Hour},
	} {
		got := upkeep.Pace(c.period, c.took)
		if got != c.want {
			t.Errorf("Pace(%s, %s) = %s, want %s", c.period, c.took, got, c.want)
		}
		if share := float64(c.took) / float64(c.took+got); got < upkeep.MaxPace && got != c.period && share > upkeep.MaxShare+1e-9 {
			t.Errorf("Pace(%s, %s): passes take %.2f of the time", c.period, c.took, share)
		}
	}
}

// TestPacerStall: one pass that waited (for etcd, in an outage) does not
// push the next out; passes that keep taking long do.
func TestPacerStall(t *testing.T) {
	p := &upkeep.Pacer{Period: time.Second}
	for i, c := range []struct{ took, want time.Duration }{
		{20 * time.Millisecond, time.Second},
		{40 * time.Second, time.Second}, // stalled
		{30 * time.Millisecond, time.Second},
		{2 * time.Second, time.Second}, // the shorter of 30 ms and 2 s
		{3 * time.Second, 18 * time.Second},
		{4 * time.Second, 27 * time.Second},
	} {
		if got := p.Next(c.took); got != c.want {
			t.Errorf("pass %d took %s: next in %s, want %s", i, c.took, got, c.want)
		}
	}
}
