package controller

import (
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
	for i := range 100 {
		p.delay(queue.Key{Tenant: "t", Name: string(rune('a' + i%26))}, t0)
	}
	p.delay(queue.Key{Tenant: "busy"}, t0.Add(2*time.Minute))
	if len(p.keys) != 1 {
		t.Errorf("%d keys kept two minutes after their events, want only the key of the last event", len(p.keys))
	}
}
