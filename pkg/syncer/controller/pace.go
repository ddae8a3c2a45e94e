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

// pacer is a token bucket per key.
type pacer struct {
	mu    sync.Mutex
	keys  map[queue.Key]*pace
	swept time.Time
}

type pace struct {
	tokens float64   // may be negative: a queued add took a token not yet there
	at     time.Time // when tokens was last brought up to date
	due    time.Time // when the add waiting for a token is queued
}

// delay returns how long to wait before queuing key for an event at now,
// and false if an add already waiting covers it.
func (p *pacer) delay(key queue.Key, now time.Time) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.keys == nil {
		p.keys = map[queue.Key]*pace{}
	}
	p.sweep(now)
	s := p.keys[key]
	if s == nil {
		s = &pace{tokens: PaceBurst, at: now}
		p.keys[key] = s
	}
	if now.Before(s.due) {
		return 0, false
	}
	s.tokens = min(PaceBurst, s.tokens+now.Sub(s.at).Seconds()*PaceRate)
	s.at = now
	s.tokens--
	if s.tokens >= 0 {
		return 0, true
	}
	wait := time.Duration(-s.tokens / PaceRate * float64(time.Second))
	s.due = now.Add(wait)
	return wait, true
}

// sweep forgets, once a minute, the keys whose bucket has been full again
// for a while: the map holds the keys of the last minute's events only.
func (p *pacer) sweep(now time.Time) {
	if now.Sub(p.swept) < time.Minute {
		return
	}
	p.swept = now
	for k, s := range p.keys {
		if now.Sub(s.at) > time.Minute && now.After(s.due) {
			delete(p.keys, k)
		}
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
