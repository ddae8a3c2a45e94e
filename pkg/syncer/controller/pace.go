package controller

import (
	"sync"
	"time"

	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// Summaries (a Tenant's readiness over its Namespaces, the Namespaces a
// Network lists, a tenant's provider service aliases) change with every
// event of their many children: a tenant creating Namespaces as fast as it
// can would have its summary reconciled, and most often written, several
// times for each Namespace. Pace queues such a key at once for its first
// PaceBurst events, then at most PaceRate times a second: an event that
// finds the key already due later is covered by that reconcile, which
// reads the caches as they are then.
const (
	PaceBurst = 20
	PaceRate  = 4 // per second
)

// paceSweep is how often the pacer forgets the keys whose bucket is full
// again, while it holds any.
const paceSweep = 10 * time.Second

// pacer is a token bucket per key. It holds a key only while its bucket is
// not full: a full bucket is what a key it does not hold gets, so
// forgetting one changes nothing. A restart's first events touch every
// summary at once (every Network and Tenant); the pacer holds them for
// seconds, not for good.
type pacer struct {
	mu   sync.Mutex
	keys map[queue.Key]pace
	// high is the most keys the map held since it was last made: Go maps
	// keep the room they grew to, so a map that shrank to a fraction of
	// it is made anew.
	high  int
	timer *time.Timer
}

type pace struct {
	tokens float64   // may be negative: a queued add took a token not yet there
	at     time.Time // when tokens was last brought up to date
	due    time.Time // when the add waiting for a token is queued
}

// full says whether s's bucket is full again at now, with no add waiting.
func (s pace) full(now time.Time) bool {
	return !now.Before(s.due) && s.tokens+now.Sub(s.at).Seconds()*PaceRate >= PaceBurst
}

// delay returns how long to wait before queuing key for an event at now,
// and false if an add already waiting covers it.
func (p *pacer) delay(key queue.Key, now time.Time) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.keys == nil {
		p.keys = map[queue.Key]pace{}
	}
	s, held := p.keys[key]
	if !held {
		s = pace{tokens: PaceBurst, at: now}
	}
	if now.Before(s.due) {
		return 0, false
	}
	s.tokens = min(PaceBurst, s.tokens+now.Sub(s.at).Seconds()*PaceRate)
	s.at = now
	s.tokens--
	p.keys[key] = s
	p.high = max(p.high, len(p.keys))
	if p.timer == nil {
		p.timer = time.AfterFunc(paceSweep, p.sweepLater)
	}
	if s.tokens >= 0 {
		return 0, true
	}
	wait := time.Duration(-s.tokens / PaceRate * float64(time.Second))
	s.due = now.Add(wait)
	p.keys[key] = s
	return wait, true
}

// sweepLater sweeps, and sweeps again later while keys are left.
func (p *pacer) sweepLater() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweep(time.Now())
	if len(p.keys) > 0 {
		p.timer.Reset(paceSweep)
	} else {
		p.timer = nil
	}
}

// sweep forgets the keys whose bucket is full again at now.
func (p *pacer) sweep(now time.Time) {
	for k, s := range p.keys {
		if s.full(now) {
			delete(p.keys, k)
		}
	}
	if len(p.keys) <= p.high/4 {
		kept := make(map[queue.Key]pace, len(p.keys))
		for k, s := range p.keys {
			kept[k] = s
		}
		p.keys, p.high = kept, len(kept)
	}
}

// Pace queues key for an event of one of the many children a summary is
// made of: at once while the key's events are few, at most PaceRate times
// a second while they come fast.
func (w *Worker) Pace(key queue.Key) {
	wait, ok := w.pacer.delay(key, time.Now())
	switch {
	case !ok:
	case wait == 0:
		w.Queue.Add(key)
	default:
		w.Queue.AddAfter(key, wait)
	}
}
