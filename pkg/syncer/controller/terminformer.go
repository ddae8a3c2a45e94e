package controller

import (
	"context"
	"sync"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// tenantLabelled says whether obj (or the last state of a deleted
// object, a delete missed while the watch was down) carries the tenant
// label.
func tenantLabelled(obj interface{}) bool {
	return LabelsOf(obj)[hostnames.TenantLabel] != ""
}

// termInformer is a process-wide informer as one leadership term sees it:
// like the syncer's own informers, it shows the term's handlers only the
// objects carrying the tenant label (an object that loses the label is
// deleted for them, one that gains it added), it never resyncs them, and
// the handlers go when the term ends. Its store holds every object.
type termInformer struct {
	cache.SharedIndexInformer

	mu   sync.Mutex
	regs []cache.ResourceEventHandlerRegistration
}

func (t *termInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return t.AddEventHandlerWithResyncPeriod(h, 0)
}

func (t *termInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, _ time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	reg, err := t.SharedIndexInformer.AddEventHandlerWithResyncPeriod(cache.FilteringResourceEventHandler{
		FilterFunc: tenantLabelled,
		Handler:    h,
	}, 0)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.regs = append(t.regs, reg)
	t.mu.Unlock()
	return reg, nil
}

func (t *termInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, _ cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return t.AddEventHandlerWithResyncPeriod(h, 0)
}

// Run, RunWithContext: the process runs the informer.
func (t *termInformer) Run(<-chan struct{})            {}
func (t *termInformer) RunWithContext(context.Context) {}

// end removes the term's handlers.
func (t *termInformer) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, reg := range t.regs {
		if err := t.RemoveEventHandler(reg); err != nil {
			utilruntime.HandleError(err)
		}
	}
	t.regs = nil
}
