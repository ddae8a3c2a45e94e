package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// HostHealth probes the host API's readiness, so that the syncer reports an
// unreachable host on every object at once, instead of trusting informer
// caches that stopped changing.
type HostHealth struct {
	client kubernetes.Interface

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

// Run probes every period until ctx ends. Two failed probes in a row make
// the host unreachable; one success makes it reachable.
func (h *HostHealth) Run(ctx context.Context, period time.Duration) {
	failures := 0
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	for {
		probeCtx, cancel := context.WithTimeout(ctx, period)
		_, err := h.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(probeCtx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failures++
		} else {
			failures = 0
		}
		if err == nil || failures >= 2 {
			h.set(ctx, err)
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
	klog.FromContext(ctx).Info("Host API reachability changed", "reachable", err == nil, "err", err)
	for _, f := range callbacks {
		f(err == nil)
	}
}
