package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

const (
	// probeTimeout bounds one probe of the host's /readyz. It is longer
	// than the period: a host busy enough to take a second or two to say
	// it is ready still answers, and calling it unreachable would have
	// every object's status rewritten twice, work that grows with the
	// store and slows the busy host further.
	probeTimeout = 5 * time.Second
	// downAfter is how long the probes must fail, with no success in
	// between, before the host is called unreachable.
	downAfter = 3 * time.Second
)

var hostReachabilityChanges = metrics.NewCounterVec(&metrics.CounterOpts{
	Subsystem:      "tenant_syncer",
	Name:           "host_reachability_changes_total",
	Help:           "Changes of the host API's reachability as the syncer's health probe saw them, by the state changed to: unreachable or reachable.",
	StabilityLevel: metrics.ALPHA,
}, []string{"state"})

func init() {
	legacyregistry.MustRegister(hostReachabilityChanges)
}

// HostHealth probes the host API's readiness, so that the syncer reports an
// unreachable host on every object at once, instead of trusting informer
// caches that stopped changing.
type HostHealth struct {
	client kubernetes.Interface
	// probe, when set, replaces the /readyz request (tests).
	probe func(ctx context.Context) error
	// timeout and downAfter, when set, replace probeTimeout and downAfter.
	timeout, downAfter time.Duration

	mu       sync.Mutex
	err      error
	onChange []func(reachable bool)
}

// Err is nil while the host answers, and the last probe's error otherwise.
func (h *HostHealth) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// OnChange registers f, called when the host becomes unreachable or reachable again.
func (h *HostHealth) OnChange(f func(reachable bool)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.onChange = append(h.onChange, f)
}

// Run probes every period until ctx ends. The host becomes unreachable
// once the probes have failed for downAfter (at least two of them) with
// no success in between; a probe that takes longer than probeTimeout
// fails. One success makes it reachable again.
func (h *HostHealth) Run(ctx context.Context, period time.Duration) {
	timeout, grace := probeTimeout, downAfter
	if h.timeout > 0 {
		timeout = h.timeout
	}
	if h.downAfter > 0 {
		grace = h.downAfter
	}
	probe := h.probe
	if probe == nil {
		probe = func(ctx context.Context) error {
			_, err := h.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
			return err
		}
	}
	failures := 0
	var failingSince time.Time
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	for {
		start := time.Now()
		probeCtx, cancel := context.WithTimeout(ctx, timeout)
		err := probe(probeCtx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		switch {
		case err == nil:
			failures = 0
			h.set(ctx, nil)
		case failures == 0:
			failures, failingSince = 1, start
		default:
			failures++
			if time.Since(failingSince) >= grace {
				h.set(ctx, err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func (h *HostHealth) set(ctx context.Context, err error) {
	h.mu.Lock()
	changed := (h.err == nil) != (err == nil)
	if err != nil {
		err = fmt.Errorf("host API unreachable: %w", err)
	}
	h.err = err
	callbacks := append([]func(bool){}, h.onChange...)
	h.mu.Unlock()
	if !changed {
		return
	}
	state := "reachable"
	if err != nil {
		state = "unreachable"
	}
	hostReachabilityChanges.WithLabelValues(state).Inc()
	klog.FromContext(ctx).Info("Host API reachability changed", "reachable", err == nil, "err", err)
	for _, f := range callbacks {
		f(err == nil)
	}
}

// UnreachableReporter is a controller's Reconciler, as far as the host's
// health goes: it hands over the keys it reported HostUnreachable for.
type UnreachableReporter interface {
	TakeUnreachable() []queue.Key
}

// OnHealthChange has a controller's objects queued when the host's
// reachability changes. When the host becomes unreachable, all queues
// every object, so that each reports HostUnreachable. When it answers
// again, only the keys that reported it are queued again, in the
// background lane of q, a window at a time. They replace what is left of
// the outage's pass: an object not reached during the outage still says
// what it said, which is still true.
func OnHealthChange(h *HostHealth, q *queue.Queue, all func(), reported UnreachableReporter) {
	h.OnChange(func(reachable bool) {
		if !reachable {
			all()
			return
		}
		if keys := reported.TakeUnreachable(); len(keys) > 0 {
			q.AddBackgroundAll(keys)
		}
	})
}

// unreachableKeys is the set of keys a Reconciler reported HostUnreachable
// for since the host last came back.
type unreachableKeys struct {
	mu   sync.Mutex
	keys map[queue.Key]struct{}
}

func (u *unreachableKeys) add(key queue.Key) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.keys == nil {
		u.keys = map[queue.Key]struct{}{}
	}
	u.keys[key] = struct{}{}
}

func (u *unreachableKeys) take() []queue.Key {
	u.mu.Lock()
	keys := u.keys
	u.keys = nil
	u.mu.Unlock()
	out := make([]queue.Key, 0, len(keys))
	for k := range keys {
		out = append(out, k)
	}
	return out
}
