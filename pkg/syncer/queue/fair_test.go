package queue

import (
	"fmt"
	"testing"
	"time"
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
