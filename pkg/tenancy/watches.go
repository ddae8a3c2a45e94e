package tenancy

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// WatchRegistry tracks the open watches of every caller, with the tenant
// each was opened as, so that a change of membership ends the watches that
// no longer match: a removed member stops receiving its former tenant's
// events at once, not when its connection times out.
type WatchRegistry struct {
	resolver Resolver

	mu      sync.Mutex
	watches map[*trackedWatch]struct{}
}

// NewWatchRegistry returns a registry that re-resolves callers with resolver.
func NewWatchRegistry(resolver Resolver) *WatchRegistry {
	return &WatchRegistry{resolver: resolver, watches: map[*trackedWatch]struct{}{}}
}

type trackedWatch struct {
	watch.Interface
	user     user.Info
	tenant   string
	resource string
	reg      *WatchRegistry
	once     sync.Once
}

// Stop implements watch.Interface.
func (w *trackedWatch) Stop() {
	w.once.Do(func() {
		w.reg.mu.Lock()
		delete(w.reg.watches, w)
		w.reg.mu.Unlock()
		openWatches.WithLabelValues(w.resource).Dec()
		w.Interface.Stop()
	})
}

// Track registers w, opened in ctx, and returns the watch to serve.
func (r *WatchRegistry) Track(ctx context.Context, w watch.Interface) watch.Interface {
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return w
	}
	t, _ := TenantFrom(ctx)
	tw := &trackedWatch{Interface: w, user: u, tenant: t, reg: r}
	if info, ok := genericapirequest.RequestInfoFrom(ctx); ok {
		tw.resource = info.Resource
	}
	r.mu.Lock()
	r.watches[tw] = struct{}{}
	r.mu.Unlock()
	openWatches.WithLabelValues(tw.resource).Inc()
	return tw
}

// Revalidate ends every watch whose caller no longer resolves to the tenant
// it was opened as. Membership calls it after each change.
func (r *WatchRegistry) Revalidate() {
	r.mu.Lock()
	var stale []*trackedWatch
	for w := range r.watches {
		if t, err := TenantOf(r.resolver, w.user); err != nil || t != w.tenant {
			stale = append(stale, w)
		}
	}
	r.mu.Unlock()
	for _, w := range stale {
		w.Stop()
	}
}
