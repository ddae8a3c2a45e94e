package namespace

import (
	"sync"
	"time"
)

// A namespace's share changes by an update of its ResourceQuota's
// spec.hard, and kube-controller-manager's resourcequota controller
// recounts the namespace's usage on every such change, from its informer
// of pods. A recount that runs while pods are being admitted in the
// namespace can miss the newest ones (their admission has already charged
// the quota; their pods are not in the controller's informer yet) and
// write a usage below the truth, under which the namespace admits more
// than its share until a later recount (recount.go). So the syncer changes a
// namespace's share once its ResourceQuota's usage has been still for
// ShareSettle, and at the latest ShareSettleMax after it first found the
// share out of date: a burst of admissions in the namespace triggers one
// recount after it rather than one during it per admission elsewhere.
//
// Delaying a share change never widens the window of docs/quota.md: the
// shares only shrink while a burst is admitted, and each namespace stays
// capped by the share it had when the burst began.
const (
	ShareSettle    = 300 * time.Millisecond
	ShareSettleMax = 2 * time.Second
)

// settle holds, by host namespace, when its ResourceQuota's usage last
// changed and since when its share has waited for that to settle.
type settle struct {
	mu      sync.Mutex
	used    map[string]time.Time
	pending map[string]time.Time
	swept   time.Time
}

// usedChanged records that the usage of host namespace ns changed at now.
func (s *settle) usedChanged(ns string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used == nil {
		s.used, s.pending = map[string]time.Time{}, map[string]time.Time{}
	}
	s.sweep(now)
	s.used[ns] = now
}

// wait returns how long the share of host namespace ns, found out of date
// at now, should wait before it is written; 0: write it now.
func (s *settle) wait(ns string, now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.used[ns]
	if !ok {
		return 0
	}
	since, ok := s.pending[ns]
	if !ok {
		since = now
		s.pending[ns] = now
	}
	due := last.Add(ShareSettle)
	if deadline := since.Add(ShareSettleMax); deadline.Before(due) {
		due = deadline
	}
	if !now.Before(due) {
		delete(s.pending, ns)
		return 0
	}
	return due.Sub(now)
}

// done records that the share of ns is up to date.
func (s *settle) done(ns string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, ns)
}

// forget drops ns (its ResourceQuota is gone).
func (s *settle) forget(ns string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.used, ns)
	delete(s.pending, ns)
}

// sweep drops, once a minute, what is older than a minute: the maps hold
// the namespaces whose usage changed lately.
func (s *settle) sweep(now time.Time) {
	if now.Sub(s.swept) < time.Minute {
		return
	}
	s.swept = now
	for ns, at := range s.used {
		if now.Sub(at) > time.Minute {
			delete(s.used, ns)
		}
	}
	for ns, at := range s.pending {
		if now.Sub(at) > time.Minute {
			delete(s.pending, ns)
		}
	}
}
