package controller

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// TestHostHealthSlowIsNotDown checks that a host slower to answer /readyz
// than the probe period, but within the probe's timeout, stays reachable,
// and that a host that stops answering becomes unreachable only once its
// probes have failed for the grace period, then reachable on one success.
func TestHostHealthSlowIsNotDown(t *testing.T) {
	const period = 5 * time.Millisecond
	var mode atomic.Int32 // 0 slow but answering, 1 refusing
	refused := errors.New("connection refused")
	var mu sync.Mutex
	var changes []bool
	var firstFailure, down time.Time
	h := &HostHealth{
		timeout:   200 * time.Millisecond,
		downAfter: 60 * time.Millisecond,
		probe: func(ctx context.Context) error {
			if mode.Load() == 1 {
				mu.Lock()
				if firstFailure.IsZero() {
					firstFailure = time.Now()
				}
				mu.Unlock()
				return refused
			}
			select {
			case <-time.After(4 * period): // slower than the period
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
	}
	h.OnChange(func(reachable bool) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, reachable)
		if !reachable {
			down = time.Now()
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.Run(ctx, period)

	time.Sleep(30 * period)
	if err := h.Err(); err != nil {
		t.Fatalf("a host answering in 4 periods: %v, want reachable", err)
	}
	mode.Store(1)
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(changes) == 1
	})
	if !errors.Is(h.Err(), refused) {
		t.Errorf("Err() = %v, want it to wrap %v", h.Err(), refused)
	}
	mu.Lock()
	if grace := down.Sub(firstFailure); grace < h.downAfter {
		t.Errorf("unreachable %s after the first failed probe, want at least %s", grace, h.downAfter)
	}
	mu.Unlock()
	mode.Store(0)
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(changes) == 2
	})
	if err := h.Err(); err != nil {
		t.Errorf("after a success: Err() = %v, want reachable", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(changes, []bool{false, true}) {
		t.Errorf("changes seen %v, want [false true]", changes)
	}
}

// TestHostHealthBriefFailure checks that failures shorter than the grace
// period, with a success in between, never make the host unreachable.
func TestHostHealthBriefFailure(t *testing.T) {
	var n atomic.Int32
	var changed atomic.Bool
	h := &HostHealth{
		downAfter: time.Hour,
		probe: func(context.Context) error {
			if n.Add(1)%3 == 0 {
				return nil
			}
			return errors.New("timeout")
		},
	}
	h.OnChange(func(bool) { changed.Store(true) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.Run(ctx, time.Millisecond)
	waitFor(t, func() bool { return n.Load() > 30 })
	if err := h.Err(); err != nil || changed.Load() {
		t.Errorf("after brief failures: Err() = %v, changed %t; want reachable, unchanged", err, changed.Load())
	}
}

type reported []queue.Key

func (r *reported) TakeUnreachable() []queue.Key {
	keys := *r
	*r = nil
	return keys
}

// TestOnHealthChange checks what a reachability change queues: every
// object when the host goes, only those that reported HostUnreachable
// when it comes back.
func TestOnHealthChange(t *testing.T) {
	h := &HostHealth{}
	q := queue.New("test", time.Millisecond, time.Millisecond)
	defer q.ShutDown()
	all := 0
	r := &reported{{Tenant: "acme", Name: "blue"}, {Tenant: "beta", Name: "red"}}
	OnHealthChange(h, q, func() { all++ }, r)

	h.set(context.Background(), errors.New("refused"))
	if all != 1 || q.Len() != 0 {
		t.Fatalf("host gone: all called %d times, %d keys queued; want 1 and 0", all, q.Len())
	}
	h.set(context.Background(), errors.New("refused again"))
	if all != 1 {
		t.Errorf("no change: all called %d times, want 1", all)
	}
	h.set(context.Background(), nil)
	if all != 1 {
		t.Errorf("host back: all called again")
	}
	var got []string
	for q.Len() > 0 {
		k, _ := q.Get()
		got = append(got, k.String())
		q.Done(k)
	}
	slices.Sort(got)
	if want := []string{"acme/blue", "beta/red"}; !slices.Equal(got, want) {
		t.Errorf("host back: queued %v, want %v", got, want)
	}
	if len(*r) != 0 {
		t.Errorf("the reported keys were not taken")
	}
}

// TestReconcilerRecordsUnreachable checks that a reconcile with the host
// down records its key for the host's return, once, and one with the host
// up records nothing.
func TestReconcilerRecordsUnreachable(t *testing.T) {
	r := newTestReconciler(t)
	key := queue.Key{Tenant: "acme", Name: "blue"}
	r.Health = downHost{errors.New("refused")}
	for range 2 {
		if err := r.Reconcile(context.Background(), key); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.TakeUnreachable(); !slices.Equal(got, []queue.Key{key}) {
		t.Errorf("keys after two reconciles with the host down: %v, want [%v]", got, key)
	}
	if got := r.TakeUnreachable(); len(got) != 0 {
		t.Errorf("keys taken twice: %v", got)
	}
	r.Health = downHost{}
	if err := r.Reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if got := r.TakeUnreachable(); len(got) != 0 {
		t.Errorf("keys after a reconcile with the host up: %v, want none", got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// newTestReconciler returns a Reconciler of Networks whose informers hold
// Tenant acme and its Network blue, whose sync reports synced and whose
// status writes change nothing.
func newTestReconciler(t *testing.T) *Reconciler[*tenant.Network, string] {
	t.Helper()
	tenants := cache.NewSharedIndexInformer(&cache.ListWatch{}, &tenant.Tenant{}, 0, cache.Indexers{})
	objects := cache.NewSharedIndexInformer(&cache.ListWatch{}, &tenant.Network{}, 0, cache.Indexers{})
	if err := tenants.GetStore().Add(&tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "uid-acme"}}); err != nil {
		t.Fatal(err)
	}
	if err := objects.GetStore().Add(&tenant.Network{ObjectMeta: metav1.ObjectMeta{Namespace: CacheNamespace("acme", ""), Name: "blue", UID: "uid-blue"}}); err != nil {
		t.Fatal(err)
	}
	written, err := NewWritten(objects)
	if err != nil {
		t.Fatal(err)
	}
	return &Reconciler[*tenant.Network, string]{
		Kind: "network", Tenants: tenants, Objects: objects, Status: StatusWriter[*tenant.Network]{Written: written},
		Sync: func(context.Context, *tenant.Tenant, *tenant.Network, queue.Key) (Outcome[string], error) {
			return Outcome[string]{Synced: true}, nil
		},
		SetStatus: func(*tenant.Tenant, queue.Key, *tenant.Network, Outcome[string]) func(*tenant.Network) bool {
			return func(*tenant.Network) bool { return false }
		},
	}
}
