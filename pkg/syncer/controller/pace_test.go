package controller

import (
	"fmt"
	"testing"
	"time"

	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

func TestPacerQueuesABurstAtOnceThenAtTheRate(t *testing.T) {
	var p pacer
	a, b := queue.Key{Tenant: "a"}, queue.Key{Tenant: "b"}
	t0 := time.Unix(1000, 0)
	for i := range PaceBurst {
		if wait, ok := p.delay(a, t0); !ok || wait != 0 {
			t.Fatalf("event %d of a burst: wait %s, queue %v; want at once", i, wait, ok)
		}
	}
	step := time.Second / PaceRate
	wait, ok := p.delay(a, t0)
	if !ok || wait != step {
		t.Fatalf("event past the burst: wait %s, queue %v; want %s", wait, ok, step)
	}
	// Until then, events are covered by the add waiting.
	for _, at := range []time.Duration{0, step / 2, step - time.Millisecond} {
		if wait, ok := p.delay(a, t0.Add(at)); ok {
			t.Errorf("event at +%s with an add due at +%s: queued after %s, want it covered", at, step, wait)
		}
	}
	// Another key has a bucket of its own.
	if wait, ok := p.delay(b, t0); !ok || wait != 0 {
		t.Errorf("first event of another key: wait %s, queue %v; want at once", wait, ok)
	}
	// Once due, the next event waits for the next token.
	if wait, ok := p.delay(a, t0.Add(step)); !ok || wait != step {
		t.Errorf("event when the add was due: wait %s, queue %v; want %s", wait, ok, step)
	}
	// A quiet key gets its whole burst back.
	later := t0.Add(time.Hour)
	for i := range PaceBurst {
		if wait, ok := p.delay(a, later); !ok || wait != 0 {
			t.Fatalf("event %d after an hour: wait %s, queue %v; want at once", i, wait, ok)
		}
	}
}

func TestPacerForgetsQuietKeys(t *testing.T) {
	var p pacer
	t0 := time.Unix(1000, 0)
	for i := range 1000 {
		p.delay(queue.Key{Tenant: "t", Name: fmt.Sprint(i)}, t0)
	}
	busy := queue.Key{Tenant: "busy"}
	for range PaceBurst + 2 {
		p.delay(busy, t0)
	}
	// One event took one token of 1,000 buckets: full again a quarter of
	// a second later. The busy key has an add due and a debt of tokens.
	p.sweep(t0.Add(time.Second / PaceRate))
	if len(p.keys) != 1 {
		t.Fatalf("%d keys kept once their buckets are full again, want only the busy key", len(p.keys))
	}
	if p.high != 1 {
		t.Errorf("map not made anew after shrinking from 1,001 keys to 1 (high %d)", p.high)
	}
	// Forgetting a full bucket changes nothing: the busy key's next
	// events, once its bucket is full, go at once.
	// 22 events: 20 tokens, then one more taken (due in a quarter
	// second), then one covered by that add.
	full := t0.Add(time.Duration(float64(PaceBurst+1) / PaceRate * float64(time.Second)))
	p.sweep(full.Add(-time.Millisecond))
	if len(p.keys) != 1 {
		t.Fatalf("busy key forgotten before its bucket was full again")
	}
	p.sweep(full)
	if len(p.keys) != 0 {
		t.Fatalf("busy key kept once its bucket is full again")
	}
	for i := range PaceBurst {
		if wait, ok := p.delay(busy, full); !ok || wait != 0 {
			t.Fatalf("event %d after the bucket refilled: wait %s, queue %v; want at once", i, wait, ok)
		}
	}
}
