package queue

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	// The queues' metrics, whose per-key maps are part of what a queue holds.
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
)

func TestFairTakesTenantsInTurn(t *testing.T) {
	q := NewFair(func(k Key) string { return k.Tenant })
	for i := 0; i < 1000; i++ {
		q.Push(Key{Tenant: "noisy", Name: fmt.Sprint(i)})
	}
	q.Push(Key{Tenant: "quiet1", Name: "a"})
	q.Push(Key{Tenant: "quiet2", Name: "a"})
	q.Push(Key{Tenant: "quiet1", Name: "b"})
	var order []string
	for i := 0; i < 6; i++ {
		order = append(order, q.Pop().String())
	}
	want := []string{"noisy/0", "quiet1/a", "quiet2/a", "noisy/1", "quiet1/b", "noisy/2"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	if q.Len() != 1000-3 {
		t.Fatalf("Len %d", q.Len())
	}
	for q.Len() > 0 {
		q.Pop()
	}
	if len(q.lanes) != 0 || q.turn.len() != 0 {
		t.Fatalf("lanes left: %d, turn %d", len(q.lanes), q.turn.len())
	}
}

func TestFairKeepsFIFOWithinTenant(t *testing.T) {
	q := NewFair(func(k Key) string { return k.Tenant })
	for round := 0; round < 3; round++ {
		for i := 0; i < 100; i++ {
			q.Push(Key{Tenant: "t", Name: fmt.Sprint(i)})
		}
		for i := 0; i < 100; i++ {
			if got := q.Pop().Name; got != fmt.Sprint(i) {
				t.Fatalf("round %d: pop %d = %s", round, i, got)
			}
		}
	}
}

// TestQueueServesQuietTenantFirst drives the whole client-go queue: with a
// backlog of one tenant, another tenant's item is the second one out.
func TestQueueServesQuietTenantFirst(t *testing.T) {
	q := New("", time.Millisecond, time.Second)
	defer q.ShutDown()
	for i := 0; i < 500; i++ {
		q.Add(Key{Tenant: "noisy", Name: fmt.Sprint(i)})
	}
	q.Add(Key{Tenant: "quiet", Name: "x"})
	q.Add(Key{Tenant: "noisy", Name: "0"}) // deduplicated
	if q.Len() != 501 {
		t.Fatalf("Len %d", q.Len())
	}
	first, _ := q.Get()
	second, _ := q.Get()
	if first.Tenant != "noisy" || second != (Key{Tenant: "quiet", Name: "x"}) {
		t.Fatalf("got %v then %v", first, second)
	}
	q.Done(first)
	q.Done(second)
	q.AddAfter(Key{Tenant: "later"}, time.Millisecond)
	deadline := time.After(5 * time.Second)
	for q.Len() != 500 {
		select {
		case <-deadline:
			t.Fatalf("delayed item never arrived, Len %d", q.Len())
		case <-time.After(time.Millisecond):
		}
	}
}

// TestQueueBackground drives the whole client-go queue: the periodic
// check's keys (AddBackground) wait behind the keys events queue, but for
// one turn in backgroundTurn; a background key that an event queues again
// moves up; a key waiting in a lane stays there when the check queues it.
func TestQueueBackground(t *testing.T) {
	q := New("", time.Millisecond, time.Second)
	defer q.ShutDown()
	for i := 0; i < 100; i++ {
		q.AddBackground(Key{Tenant: "noisy", Name: fmt.Sprint(i)})
	}
	q.Add(Key{Tenant: "quiet", Name: "new"})
	q.Add(Key{Tenant: "noisy", Name: "50"})            // an event for a key waiting in the background
	q.Add(Key{Tenant: "noisy", Name: "new"})           // an event
	q.AddBackground(Key{Tenant: "noisy", Name: "new"}) // the check finds it waiting: it keeps its place
	if q.Len() != 102 {
		t.Fatalf("Len %d, want 102: 100 checks and 2 new keys, nothing twice", q.Len())
	}
	var order []string
	for q.Len() > 0 {
		k, _ := q.Get()
		order = append(order, k.String())
		q.Done(k)
	}
	want := []string{"quiet/new", "noisy/50", "noisy/new", "noisy/0", "noisy/1"}
	if fmt.Sprint(order[:5]) != fmt.Sprint(want) {
		t.Fatalf("first out %v, want %v", order[:5], want)
	}
	if len(order) != 102 {
		t.Fatalf("%d keys out, want 102", len(order))
	}
	for i, k := range order[3:] {
		if k == "noisy/50" {
			t.Fatalf("noisy/50 out twice (again at %d)", i+3)
		}
	}

	// While events keep lanes busy, one pop in backgroundTurn serves the
	// background.
	for i := 0; i < 10; i++ {
		q.AddBackground(Key{Tenant: "check", Name: fmt.Sprint(i)})
	}
	for i := 0; i < 3*backgroundTurn; i++ {
		q.Add(Key{Tenant: fmt.Sprint("t", i%5), Name: fmt.Sprint(i)})
	}
	checks := 0
	for i := 0; i < 3*backgroundTurn; i++ {
		k, _ := q.Get()
		if k.Tenant == "check" {
			checks++
		}
		q.Done(k)
	}
	if checks != 3 {
		t.Errorf("%d checks served among the first %d keys while lanes waited, want 3", checks, 3*backgroundTurn)
	}
}

// TestQueueBackgroundAfter checks that a delayed background key arrives
// in the background lane, behind a key an event queued meanwhile, and that
// one due after the queue shut down is dropped.
func TestQueueBackgroundAfter(t *testing.T) {
	q := New("", time.Millisecond, time.Second)
	q.AddBackgroundAfter(Key{Tenant: "acme", Name: "later"}, 20*time.Millisecond)
	if q.Len() != 0 {
		t.Fatalf("Len %d before the delay passed, want 0", q.Len())
	}
	deadline := time.Now().Add(10 * time.Second)
	for q.Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the delayed background key never arrived")
		}
		time.Sleep(time.Millisecond)
	}
	q.Add(Key{Tenant: "acme", Name: "new"})
	var order []string
	for q.Len() > 0 {
		k, _ := q.Get()
		order = append(order, k.String())
		q.Done(k)
	}
	if want := []string{"acme/new", "acme/later"}; fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("out %v, want %v", order, want)
	}

	q.AddBackgroundAfter(Key{Tenant: "acme", Name: "after-shutdown"}, 5*time.Millisecond)
	q.ShutDown()
	time.Sleep(50 * time.Millisecond)
	q.fair.mu.Lock()
	marked := len(q.fair.marked)
	q.fair.mu.Unlock()
	if q.Len() != 0 || marked != 0 {
		t.Fatalf("Len %d, %d marked after shutdown, want none", q.Len(), marked)
	}
}

func BenchmarkFairPushPop(b *testing.B) {
	q := NewFair(func(k Key) string { return k.Tenant })
	keys := make([]Key, 1024)
	for i := range keys {
		keys[i] = Key{Tenant: fmt.Sprint(i % 50), Name: fmt.Sprint(i)}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		q.Push(keys[i%len(keys)])
		if q.Len() > 512 {
			q.Pop()
		}
	}
}

// TestQueueBackgroundPass: a pass of every key waits a window at a time,
// behind the keys events queue; every key comes out once, in order; a new
// pass replaces what is left of the previous one.
func TestQueueBackgroundPass(t *testing.T) {
	q := New("", time.Millisecond, time.Second)
	defer q.ShutDown()
	const n = 3 * passWindow
	pass := func(tenant string, n int) []Key {
		keys := make([]Key, n)
		for i := range keys {
			keys[i] = Key{Tenant: tenant, Name: fmt.Sprint(i)}
		}
		return keys
	}
	q.AddBackgroundAll(pass("check", n))
	if q.Len() != passWindow || q.Pending() != n-passWindow {
		t.Fatalf("Len %d, Pending %d after a pass of %d; want %d queued, the rest pending", q.Len(), q.Pending(), n, passWindow)
	}
	q.Add(Key{Tenant: "event", Name: "a"})
	q.Add(Key{Tenant: "check", Name: fmt.Sprint(n - 1)}) // an event for a key of the pass not queued yet
	var order []string
	most := 0
	for q.Len() > 0 {
		most = max(most, q.Len())
		k, _ := q.Get()
		order = append(order, k.String())
		q.Done(k)
	}
	if most > passWindow+2 {
		t.Errorf("%d keys queued at most, want at most the window (%d) and the 2 events", most, passWindow)
	}
	if want := []string{"event/a", fmt.Sprintf("check/%d", n-1), "check/0", "check/1"}; fmt.Sprint(order[:4]) != fmt.Sprint(want) {
		t.Fatalf("first out %v, want %v", order[:4], want)
	}
	seen := map[string]int{}
	for _, k := range order {
		seen[k]++
	}
	// check/n-1 comes out twice: for its event, and again with the pass
	// (the pass reached it after the event's reconcile was done).
	if len(order) != n+2 || len(seen) != n+1 || seen[fmt.Sprintf("check/%d", n-1)] != 2 {
		t.Fatalf("%d keys out (%d distinct), want %d: the pass once each, the events", len(order), len(seen), n+2)
	}
	for i := 0; i < n-1; i++ {
		if order[2+i] != fmt.Sprintf("check/%d", i) {
			t.Fatalf("key %d of the pass out as %s: out of order", i, order[2+i])
		}
	}
	if q.Pending() != 0 {
		t.Fatalf("Pending %d after the pass, want 0", q.Pending())
	}

	// A pass not done when the next one comes is replaced by it.
	q.AddBackgroundAll(pass("first", n))
	q.AddBackgroundAll(pass("second", 10))
	if q.Pending() != 10 {
		t.Fatalf("Pending %d, want the second pass's 10 (the window is full of the first's)", q.Pending())
	}
	out := map[string]int{}
	for q.Len() > 0 {
		k, _ := q.Get()
		out[k.Tenant]++
		q.Done(k)
	}
	if out["first"] != passWindow || out["second"] != 10 {
		t.Fatalf("out %v, want the first pass's window (%d) and the second pass", out, passWindow)
	}
}

// TestQueueCheckPass: the periodic check's pass goes in one key per
// interval at most, is not replaced by the next check while it lasts,
// and gives way to a pass of AddBackgroundAll (the host's return).
func TestQueueCheckPass(t *testing.T) {
	q := New("", time.Millisecond, time.Second)
	defer q.ShutDown()
	keys := func(tenant string, n int) []Key {
		out := make([]Key, n)
		for i := range out {
			out[i] = Key{Tenant: tenant, Name: fmt.Sprint(i)}
		}
		return out
	}
	const every = 20 * time.Millisecond
	start := time.Now()
	if !q.AddCheckAll(keys("check", 6), every) {
		t.Fatal("the first check's pass refused")
	}
	if q.AddCheckAll(keys("next", 3), every) {
		t.Error("a check's pass queued while the previous one waits")
	}
	var got []string
	for len(got) < 6 {
		k, _ := q.Get()
		got = append(got, k.String())
		q.Done(k)
	}
	if took := time.Since(start); took < 5*every {
		t.Errorf("6 keys of a paced pass out in %s, want at least 5 intervals (%s)", took, 5*every)
	}
	if want := []string{"check/0", "check/1", "check/2", "check/3", "check/4", "check/5"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("out %v, want the pass in order %v", got, want)
	}
	if !q.AddCheckAll(keys("next", 3), every) {
		t.Error("a check's pass refused once the previous one went in")
	}
	// The host's return: its keys go at once, instead of the check's rest.
	k, _ := q.Get()
	q.Done(k)
	q.AddBackgroundAll(keys("back", 4))
	out := map[string]int{}
	for q.Len() > 0 {
		k, _ := q.Get()
		out[k.Tenant]++
		q.Done(k)
	}
	if out["back"] != 4 || out["next"] > 1 || q.Pending() != 0 {
		t.Errorf("out %v with %d pending, want the 4 keys of AddBackgroundAll and at most one more of the replaced check", out, q.Pending())
	}
}

// BenchmarkQueuePassHeld reports what a queue holds after a pass of
// 100,000 keys went through it and it drained: queued whole
// (AddBackground each) or a window at a time (AddBackgroundAll). The maps
// behind the queue keep the room they grew to.
func BenchmarkQueuePassHeld(b *testing.B) {
	const n = 100000
	keys := make([]Key, n)
	for i := range keys {
		keys[i] = Key{Tenant: fmt.Sprint("t", i/10), Namespace: "ns", Name: fmt.Sprint(i)}
	}
	for _, c := range []struct {
		name string
		add  func(q *Queue)
	}{
		{"whole", func(q *Queue) {
			for _, k := range keys {
				q.AddBackground(k)
			}
		}},
		{"window", func(q *Queue) { q.AddBackgroundAll(slices.Clone(keys)) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var held uint64
			for b.Loop() {
				held = heldOnceDrained("", c.add)
			}
			b.ReportMetric(float64(held)/(1<<20), "MiB-held")
		})
	}
}

// heldOnceDrained returns how much more live heap there is once a new
// queue named name has been filled and drained (all its keys taken and
// done) than before it was made.
func heldOnceDrained(name string, fill func(q *Queue)) uint64 {
	before := liveHeap()
	q := New(name, time.Millisecond, time.Second)
	fill(q)
	for q.Len() > 0 {
		k, _ := q.Get()
		q.Done(k)
	}
	held := liveHeap() - before
	runtime.KeepAlive(q)
	q.ShutDown()
	return held
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func TestQueueHold(t *testing.T) {
	q := New("", time.Millisecond, time.Second)
	defer q.ShutDown()
	q.Hold()
	const n = 3 * passWindow
	for i := range n {
		k := Key{Tenant: fmt.Sprint("t", i%7), Name: fmt.Sprint(i)}
		q.Add(k)
		q.Add(k) // the same object's key from another informer
		if i%2 == 0 {
			q.AddBackground(k)
		}
	}
	// A pass while holding waits too, and does not block.
	q.AddBackgroundAll([]Key{{Tenant: "check", Name: "x"}})
	if q.Len() != 0 || q.Pending() != n+1 {
		t.Fatalf("holding: Len %d, Pending %d; want nothing queued, %d keys pending once each", q.Len(), q.Pending(), n+1)
	}
	q.Release()
	if q.Len() != passWindow || q.Pending() != n+1-passWindow {
		t.Fatalf("released: Len %d, Pending %d; want a window (%d) queued, the rest pending", q.Len(), q.Pending(), passWindow)
	}
	// Keys added from now on go first, in their tenants' lanes.
	q.Add(Key{Tenant: "event", Name: "a"})
	q.Add(Key{Tenant: "t0", Name: "new"})
	out := map[Key]int{}
	var first []string
	most := 0
	for q.Len() > 0 {
		most = max(most, q.Len())
		k, _ := q.Get()
		out[k]++
		if len(first) < 2 {
			first = append(first, k.String())
		}
		q.Done(k)
	}
	if want := []string{"event/a", "t0/new"}; fmt.Sprint(first) != fmt.Sprint(want) {
		t.Errorf("first out %v, want the keys added after Release %v", first, want)
	}
	if most > passWindow+2 {
		t.Errorf("%d keys queued at most, want at most the window (%d) and the 2 events", most, passWindow)
	}
	if len(out) != n+3 {
		t.Fatalf("%d distinct keys out, want %d", len(out), n+3)
	}
	for k, c := range out {
		if c != 1 {
			t.Errorf("%s out %d times, want once", k, c)
		}
	}
	if q.Pending() != 0 {
		t.Fatalf("Pending %d once drained", q.Pending())
	}
	// Release again changes nothing; Add queues at once.
	q.Release()
	q.Add(Key{Tenant: "late"})
	if q.Len() != 1 {
		t.Fatalf("Len %d after an Add once released, want 1", q.Len())
	}
}

// BenchmarkQueueStartHeld reports what a named queue (its metrics' maps
// included) holds once the keys of a start went through it and it
// drained: 100,000 objects whose keys the informers' handlers add three
// times each (the object, its host objects) before any worker runs,
// queued at once or held (Hold) until the workers start (Release).
func BenchmarkQueueStartHeld(b *testing.B) {
	const n = 100000
	keys := make([]Key, n)
	for i := range keys {
		keys[i] = Key{Tenant: fmt.Sprint("t", i/10), Namespace: "ns", Name: fmt.Sprint(i)}
	}
	for _, held := range []bool{false, true} {
		b.Run(map[bool]string{false: "at-once", true: "held"}[held], func(b *testing.B) {
			var kept uint64
			for i := 0; b.Loop(); i++ {
				kept = heldOnceDrained(fmt.Sprint("bench_start_", held, "_", i), func(q *Queue) {
					if held {
						q.Hold()
					}
					for range 3 {
						for _, k := range keys {
							q.Add(k)
						}
					}
					q.Release()
				})
			}
			b.ReportMetric(float64(kept)/(1<<20), "MiB-held")
		})
	}
}
