package syncer

import (
	"context"
	"strings"
	"testing"
	"time"

	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// done is a cache.DoneChecker closed by hand.
type done struct {
	name string
	ch   chan struct{}
}

func (d done) Name() string          { return d.name }
func (d done) Done() <-chan struct{} { return d.ch }

// TestWaitFilled: waitFilled returns once every informer has synced,
// naming the slowest first, and gives up when the term ends.
func TestWaitFilled(t *testing.T) {
	names := []string{"tenants", "host namespaces", "namespaces", "networks"}
	informers := make([]controller.NamedSynced, len(names))
	for i, name := range names {
		informers[i] = controller.NamedSynced{Name: name, Synced: done{name, make(chan struct{})}}
	}
	started := time.Now()
	go func() {
		// Synced in this order, each a little after the last.
		for _, i := range []int{0, 3, 1, 2} {
			time.Sleep(20 * time.Millisecond)
			close(informers[i].Synced.(done).ch)
		}
	}()
	slowest, ok := waitFilled(context.Background(), started, informers)
	if !ok {
		t.Fatal("waitFilled gave up with every informer synced")
	}
	parts := strings.Split(slowest, ", ")
	if len(parts) != 3 || !strings.HasPrefix(parts[0], "namespaces ") || !strings.HasPrefix(parts[1], "host namespaces ") ||
		!strings.HasPrefix(parts[2], "networks ") {
		t.Errorf("slowest %q, want namespaces, host namespaces, networks", slowest)
	}

	ctx, cancel := context.WithCancel(context.Background())
	pending := []controller.NamedSynced{{Name: "never", Synced: done{"never", make(chan struct{})}}}
	go func() {
		time.Sleep(10 * time.Millisecond)
		cancel()
	}()
	if _, ok := waitFilled(ctx, time.Now(), pending); ok {
		t.Error("waitFilled reported filled caches after the term ended")
	}
}
