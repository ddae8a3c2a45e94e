package hostbinding_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/types"

	"tenant.io/tenant-apiserver/pkg/hostbinding"
)

const (
	replicas   = 5 // ledgers, each with its own etcd client
	workers    = 40
	claimCount = 200
	tenants    = 100
	hostCount  = 100
	churnSteps = 40 // per worker
)

// bindAny tries host after host of hs in a random order until one binds,
// and reports false when every one was taken.
func bindAny(ctx context.Context, l *hostbinding.Ledger, c hostbinding.Claim, hs []hostbinding.Host, rng *rand.Rand) (hostbinding.Binding, bool, error) {
	for _, i := range rng.Perm(len(hs)) {
		b, err := l.Bind(ctx, c, hs[i])
		if errors.Is(err, hostbinding.ErrHostTaken) {
			continue
		}
		if err != nil {
			return hostbinding.Binding{}, false, err
		}
		if b.Claim != c || b.Host != hs[i] {
			return hostbinding.Binding{}, false, fmt.Errorf("claim %s asked for %s and got %+v", c.UID, hs[i], b)
		}
		return b, true, nil
	}
	return hostbinding.Binding{}, false, nil
}

// holders is what the workers were told, checked as they go: which claim
// holds which host.
type holders struct {
	mu     sync.Mutex
	byHost map[hostbinding.Host]types.UID
	errs   []error
}

func (h *holders) bound(b hostbinding.Binding) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if other, dup := h.byHost[b.Host]; dup {
		h.errs = append(h.errs, fmt.Errorf("%s handed to %s while %s holds it", b.Host, b.Claim.UID, other))
	}
	h.byHost[b.Host] = b.Claim.UID
}

// releasing forgets b before etcd does, or a worker that binds its host
// next would see it still held.
func (h *holders) releasing(b hostbinding.Binding) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.byHost, b.Host)
}

func (h *holders) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errs = append(h.errs, err)
}

// TestConcurrentBindings has 40 workers on 5 ledgers bind 200 claims of 100
// tenants to 100 hosts, each claim trying the hosts in its own random order.
// Exactly 100 claims must win, each a different host. Then the workers
// release, bind again, bind bound claims again and release stale bindings
// at random; etcd must end up holding exactly what each worker believes its
// claims hold, only whole bindings, and after a last round of binding
// exactly 100 again.
func TestConcurrentBindings(t *testing.T) {
	url := startEtcd(t)
	prefix := freshPrefix()
	ctx := context.Background()
	client := newClient(t, url)
	ledgers := make([]*hostbinding.Ledger, replicas)
	for i := range ledgers {
		ledgers[i] = newLedger(t, url, prefix)
	}
	hs := hosts(hostCount)
	claims := make([]hostbinding.Claim, claimCount)
	for i := range claims {
		claims[i] = claim(i%tenants, fmt.Sprint(i))
	}
	steps := churnSteps
	if testing.Short() {
		steps = 5
	}
	h := &holders{byHost: map[hostbinding.Host]types.UID{}}
	// held[w] is what worker w's claims hold: only worker w binds and
	// releases them (claims i with i%workers == w).
	held := make([]map[types.UID]hostbinding.Binding, workers)
	for w := range held {
		held[w] = map[types.UID]hostbinding.Binding{}
	}
	run := func(work func(w int, l *hostbinding.Ledger, rng *rand.Rand)) time.Duration {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range workers {
			l := ledgers[w%replicas]
			rng := rand.New(rand.NewPCG(uint64(w), uint64(len(held[w]))))
			wg.Go(func() {
				<-start
				work(w, l, rng)
			})
		}
		began := time.Now()
		close(start)
		wg.Wait()
		return time.Since(began)
	}
	stored := func() map[types.UID]hostbinding.Binding {
		t.Helper()
		if err := errors.Join(h.errs...); err != nil {
			t.Fatal(err)
		}
		want := map[types.UID]hostbinding.Binding{}
		for _, m := range held {
			for uid, b := range m {
				want[uid] = b
			}
		}
		got := checkStore(t, client, prefix)
		sameBindings(t, "etcd against the workers", got, want)
		return got
	}
	bindAll := func(w int, l *hostbinding.Ledger, rng *rand.Rand) {
		for i := w; i < claimCount; i += workers {
			c := claims[i]
			if _, ok := held[w][c.UID]; ok {
				continue
			}
			b, ok, err := bindAny(ctx, l, c, hs, rng)
			if err != nil {
				h.fail(err)
				return
			}
			if ok {
				h.bound(b)
				held[w][c.UID] = b
			}
		}
	}

	// The burst: 200 claims, 100 hosts, nothing released.
	took := run(bindAll)
	if got := stored(); len(got) != min(claimCount, hostCount) {
		t.Fatalf("%d claims bound, want %d", len(got), min(claimCount, hostCount))
	}
	t.Logf("burst: %d claims of %d tenants on %d hosts through %d ledgers and %d workers: %d bound in %v",
		claimCount, tenants, hostCount, replicas, workers, min(claimCount, hostCount), took.Round(time.Millisecond))

	// Churn: release, bind again, stale releases, idempotent binds.
	var staleReleases, rebinds, idempotent int
	var statsMu sync.Mutex
	took = run(func(w int, l *hostbinding.Ledger, rng *rand.Rand) {
		mine := make([]hostbinding.Claim, 0, claimCount/workers)
		for i := w; i < claimCount; i += workers {
			mine = append(mine, claims[i])
		}
		old := map[types.UID]hostbinding.Binding{} // released bindings, for stale releases
		for range steps {
			c := mine[rng.IntN(len(mine))]
			b, ok := held[w][c.UID]
			switch {
			case ok && rng.IntN(3) == 0:
				// Bind a bound claim again, to some host: it keeps its own.
				got, err := l.Bind(ctx, c, hs[rng.IntN(len(hs))])
				if err != nil || got.Host != b.Host || !got.Since.Equal(b.Since) {
					h.fail(fmt.Errorf("binding bound claim %s again = %+v, %v; want %+v", c.UID, got, err, b))
				}
				statsMu.Lock()
				idempotent++
				statsMu.Unlock()
			case ok:
				h.releasing(b)
				delete(held[w], c.UID)
				if err := l.Release(ctx, b); err != nil {
					h.fail(err)
				}
				old[c.UID] = b
			default:
				nb, ok, err := bindAny(ctx, l, c, hs, rng)
				if err != nil {
					h.fail(err)
					return
				}
				if !ok {
					continue
				}
				h.bound(nb)
				held[w][c.UID] = nb
				statsMu.Lock()
				rebinds++
				statsMu.Unlock()
				if prev, ok := old[c.UID]; ok && rng.IntN(2) == 0 {
					// The claim's released binding, released again: its
					// new binding, and whoever holds its old host now,
					// must be left alone.
					if err := l.Release(ctx, prev); err != nil {
						h.fail(err)
					}
					if got, ok, err := l.ByClaim(ctx, c.UID); err != nil || !ok || got.Host != nb.Host || !got.Since.Equal(nb.Since) {
						h.fail(fmt.Errorf("after a stale release claim %s holds %+v, %v, %v; want %+v", c.UID, got, ok, err, nb))
					}
					statsMu.Lock()
					staleReleases++
					statsMu.Unlock()
				}
			}
		}
	})
	got := stored()
	t.Logf("churn: %d steps: %d bound after it, %d binds again, %d idempotent binds, %d stale releases, in %v",
		workers*steps, len(got), rebinds, idempotent, staleReleases, took.Round(time.Millisecond))

	// Reads agree with etcd.
	paged := newLedger(t, url, prefix)
	hostbinding.SetPageSize(paged, 7)
	all, err := paged.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameBindings(t, "List", byClaim(t, all), got)
	for tenant := range tenants {
		uid := types.UID(fmt.Sprintf("tenant-uid-%d", tenant))
		mine, err := paged.ListTenant(ctx, uid)
		if err != nil {
			t.Fatal(err)
		}
		want := map[types.UID]hostbinding.Binding{}
		for cuid, b := range got {
			if b.Claim.TenantUID == uid {
				want[cuid] = b
			}
		}
		sameBindings(t, "ListTenant "+string(uid), byClaim(t, mine), want)
	}

	// Bind what is unbound until the hosts run out: exactly 100 again.
	took = run(bindAll)
	if got := stored(); len(got) != min(claimCount, hostCount) {
		t.Fatalf("after churn and a last burst %d claims bound, want %d", len(got), min(claimCount, hostCount))
	}
	t.Logf("last burst: %v", took.Round(time.Millisecond))
}

// TestKillMidBurst cuts two replicas off in the middle of binding and
// releasing, one by closing its etcd client (as kill -9 would) and one by
// ending its context, while two others keep going. Afterwards etcd must
// hold only whole bindings; the survivors' bindings exactly as they were
// told; every binding the victims were told they hold; and Orphans, told
// that the victims' claims are deleted, must find exactly the victims'
// bindings in etcd, including those whose answers the victims never got.
func TestKillMidBurst(t *testing.T) {
	url := startEtcd(t)
	prefix := freshPrefix()
	client := newClient(t, url)
	// 4 replicas of 10 workers that hold at most 3 bindings each never
	// run out of 150 hosts.
	hs := hosts(150)
	const (
		perReplica = 10 // workers
		keep       = 3  // bindings a worker holds at most
		killAfter  = 300
	)
	type replica struct {
		name   string
		ledger *hostbinding.Ledger
		ctx    context.Context
		victim bool
		// claims and held are per worker; uids records every claim a
		// worker made, bound or not.
		held []map[types.UID]hostbinding.Binding
		uids []map[types.UID]bool
	}
	closedClient, err := clientv3.New(clientv3.Config{Endpoints: []string{url}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = closedClient.Close() }()
	cancelled, cancel := context.WithCancel(context.Background())
	defer cancel()
	rs := []*replica{
		{name: "s1", ledger: newLedger(t, url, prefix), ctx: context.Background()},
		{name: "s2", ledger: newLedger(t, url, prefix), ctx: context.Background()},
		{name: "closed", ledger: hostbinding.New(closedClient, prefix), ctx: context.Background(), victim: true},
		{name: "cancelled", ledger: newLedger(t, url, prefix), ctx: cancelled, victim: true},
	}
	var (
		mu        sync.Mutex
		victimOps int
		errs      []error
		killed    = make(chan struct{})
		stop      = make(chan struct{})
		once      sync.Once
		wg        sync.WaitGroup
	)
	for ri, r := range rs {
		r.held = make([]map[types.UID]hostbinding.Binding, perReplica)
		r.uids = make([]map[types.UID]bool, perReplica)
		for w := range perReplica {
			held, uids := map[types.UID]hostbinding.Binding{}, map[types.UID]bool{}
			r.held[w], r.uids[w] = held, uids
			rng := rand.New(rand.NewPCG(uint64(ri), uint64(w)))
			wg.Go(func() {
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					if len(held) == keep {
						// Forget it before etcd does: a victim cut off now
						// may or may not have released it.
						var b hostbinding.Binding
						for _, b = range held {
							break
						}
						delete(held, b.Claim.UID)
						if err := r.ledger.Release(r.ctx, b); err != nil {
							if !r.victim {
								mu.Lock()
								errs = append(errs, err)
								mu.Unlock()
							}
							return
						}
					}
					c := claim(rng.IntN(tenants), fmt.Sprintf("%s-%d-%d", r.name, w, n))
					uids[c.UID] = true
					// Each worker prefers its own rotation of the hosts.
					start := rng.IntN(len(hs))
					b, err := r.ledger.BindFirstFree(r.ctx, c, append(hs[start:len(hs):len(hs)], hs[:start]...))
					if err != nil {
						if !r.victim {
							mu.Lock()
							errs = append(errs, err)
							mu.Unlock()
						}
						return
					}
					held[c.UID] = b
					if r.victim {
						mu.Lock()
						if victimOps++; victimOps == killAfter {
							once.Do(func() { close(killed) })
						}
						mu.Unlock()
					}
				}
			})
		}
	}
	began := time.Now()
	<-killed
	burst := time.Since(began)
	_ = closedClient.Close()
	cancel()
	// Let the survivors bind and release past the kill for a moment.
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("the kill came %v into the burst; every worker had stopped %v after it", burst.Round(time.Millisecond), (time.Since(began) - burst).Round(time.Millisecond))

	got := checkStore(t, client, prefix)
	survived := map[types.UID]hostbinding.Binding{}
	victimClaims := map[types.UID]bool{}
	victimHeld := 0
	for _, r := range rs {
		for w := range perReplica {
			for uid, b := range r.held[w] {
				if !r.victim {
					survived[uid] = b
					continue
				}
				victimHeld++
				if g, ok := got[uid]; !ok || g.Host != b.Host || !g.Since.Equal(b.Since) {
					t.Errorf("victim %s was told claim %s holds %s; etcd holds %+v", r.name, uid, b.Host, g)
				}
			}
			if r.victim {
				for uid := range r.uids[w] {
					victimClaims[uid] = true
				}
			}
		}
	}
	inEtcd := map[types.UID]hostbinding.Binding{}
	for uid, b := range got {
		if victimClaims[uid] {
			inEtcd[uid] = b
		}
	}

	orphans, err := rs[0].ledger.Orphans(context.Background(), func(uid types.UID) bool { return !victimClaims[uid] })
	if err != nil {
		t.Fatal(err)
	}
	sameBindings(t, "Orphans against the victims' bindings in etcd", byClaim(t, orphans), inEtcd)
	for _, o := range orphans {
		if err := rs[1].ledger.Release(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	sameBindings(t, "etcd after releasing the orphans, against the survivors", checkStore(t, client, prefix), survived)
	t.Logf("victims: %d binds before the kill, %d bindings they knew of, %d in etcd (%d whose answer was lost); survivors hold %d",
		killAfter, victimHeld, len(inEtcd), len(inEtcd)-victimHeld, len(survived))
}
