package namespace

import (
	"testing"
	"time"
)

func TestSettle(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	ms := time.Millisecond

	var s settle
	if got := s.wait("quiet", at(0)); got != 0 {
		t.Errorf("a namespace whose usage never changed waits %s, want 0", got)
	}

	s.usedChanged("busy", at(0))
	if got := s.wait("busy", at(100*ms)); got != ShareSettle-100*ms {
		t.Errorf("100ms after its usage changed: wait %s, want %s", got, ShareSettle-100*ms)
	}
	if got := s.wait("busy", at(ShareSettle)); got != 0 {
		t.Errorf("once its usage has been still for ShareSettle: wait %s, want 0", got)
	}

	// Usage changing every 100ms: the share waits, but not past
	// ShareSettleMax from when it was first found out of date.
	var written time.Duration = -1
	for d := time.Second; d < time.Second+3*ShareSettleMax; d += 100 * ms {
		s.usedChanged("burst", at(d))
		if s.wait("burst", at(d+10*ms)) == 0 {
			written = d + 10*ms - time.Second
			break
		}
	}
	if written < ShareSettleMax-100*ms || written > ShareSettleMax+100*ms {
		t.Errorf("under steady admissions the share was written after %s, want about ShareSettleMax (%s)", written, ShareSettleMax)
	}
	// Written: the next change waits from scratch.
	s.usedChanged("burst", at(10*time.Second))
	if got := s.wait("burst", at(10*time.Second)); got != ShareSettle {
		t.Errorf("after a write, a new change waits %s, want %s", got, ShareSettle)
	}

	// A share that needs no change any more forgets its wait.
	s.usedChanged("back", at(20*time.Second))
	s.wait("back", at(20*time.Second))
	s.done("back")
	s.usedChanged("back", at(20*time.Second+3*ShareSettleMax))
	if got := s.wait("back", at(20*time.Second+3*ShareSettleMax)); got != ShareSettle {
		t.Errorf("a share out of date again after done waits %s, want %s (its old wait forgotten)", got, ShareSettle)
	}

	s.forget("back")
	if got := s.wait("back", at(20*time.Second+3*ShareSettleMax)); got != 0 {
		t.Errorf("a namespace whose ResourceQuota is gone waits %s, want 0", got)
	}

	// Entries older than a minute are swept by the next change.
	s.usedChanged("late", at(5*time.Minute))
	s.mu.Lock()
	_, busy := s.used["busy"]
	_, late := s.used["late"]
	s.mu.Unlock()
	if busy || !late {
		t.Errorf("after a sweep: busy kept %v (want false), late kept %v (want true)", busy, late)
	}
}
