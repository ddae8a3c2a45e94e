// Package controller is the framework the syncer's controllers run on:
// the worker loop around a fair work queue (controller.go, keys.go,
// pace.go), the reconcile skeleton (reconciler.go), status conditions and
// their writer (status.go, written.go), how a host object is made to
// match and what the periodic check removes (hostkind.go, orphans.go),
// and how host errors are told apart. The kinds of host objects
// themselves are pkg/syncer/hostkinds'.
//
// Sources are the informers the controllers read: built and started in
// informers.go (tenant objects through the server's own storage,
// storeinformer.go; host objects carrying the tenant label), indexed as
// indexers.go says, trimmed by transforms.go, the host namespaces shared
// with the process through terminformer.go; lookups.go answers the
// questions the controllers ask of them, and health.go probes the host.
package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// FieldManager is the syncer's name in the managed fields of the host
// objects and tenant.io statuses it writes.
const FieldManager = "tenant-syncer"

// ReconcileFunc brings the host in line with one tenant object. An error
// retries the key with backoff; a *RequeueError retries it after a delay
// without counting as a failure.
type ReconcileFunc func(ctx context.Context, key queue.Key) error

// RequeueError asks for key to be looked at again after After: the world
// is not ready yet (a host namespace still terminating), nothing failed.
// A Background look again waits behind the keys events queue
// (queue.Queue.AddBackground): nothing is known to have changed.
type RequeueError struct {
	After      time.Duration
	Reason     string
	Background bool
}

func (e *RequeueError) Error() string { return fmt.Sprintf("requeue after %s: %s", e.After, e.Reason) }

// Requeue returns a *RequeueError.
func Requeue(after time.Duration, reason string, args ...any) error {
	return &RequeueError{After: after, Reason: fmt.Sprintf(reason, args...)}
}

// RequeueBackground returns a *RequeueError for a look again in the
// background lane.
func RequeueBackground(after time.Duration, reason string, args ...any) error {
	return &RequeueError{After: after, Reason: fmt.Sprintf(reason, args...), Background: true}
}

// Worker runs a ReconcileFunc over a named fair work queue.
type Worker struct {
	Name      string
	Queue     *queue.Queue
	Reconcile ReconcileFunc
	// HandlersSynced are the sync checkers of the controller's event
	// handler registrations: done once they have queued every object
	// listed at start.
	HandlersSynced []cache.DoneChecker

	busy  atomic.Int64
	pacer pacer
}

// Watch adds h to inf; the worker does not start before h has been handed
// every object inf listed at start.
func (w *Worker) Watch(inf cache.SharedIndexInformer, h cache.ResourceEventHandler) error {
	reg, err := inf.AddEventHandler(h)
	if err != nil {
		return err
	}
	w.HandlersSynced = append(w.HandlersSynced, reg.HasSyncedChecker())
	return nil
}

// WatchAll adds h to every informer of infs.
func (w *Worker) WatchAll(h cache.ResourceEventHandler, infs ...cache.SharedIndexInformer) error {
	for _, inf := range infs {
		if err := w.Watch(inf, h); err != nil {
			return err
		}
	}
	return nil
}

// OnEvery is the handler that calls f with the object of every event: an
// add, an update (the new object), a delete (maybe a tombstone).
func OnEvery(f func(obj interface{})) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{AddFunc: f, UpdateFunc: func(_, obj interface{}) { f(obj) }, DeleteFunc: f}
}

// OnChange returns the event handlers that call enqueue on every add and
// delete of an informer's objects, of type T, and on the updates for which
// changed(old, new) says that something the controller reads changed.
func OnChange[T any](enqueue func(obj interface{}), changed func(old, obj T) bool) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, obj interface{}) {
			o, okOld := old.(T)
			n, okNew := obj.(T)
			if okOld && okNew && changed(o, n) {
				enqueue(obj)
			}
		},
		DeleteFunc: enqueue,
	}
}

// Idle says whether no key waits (in the queue, or in a pass not queued
// yet) and none is being reconciled (keys waiting for a retry delay do not
// count).
func (w *Worker) Idle() bool {
	return w.Queue.Len() == 0 && w.Queue.Pending() == 0 && w.busy.Load() == 0
}

// NewWorker returns a Worker with a fair queue named name. Failed keys are
// retried after 10 ms, doubling up to 5 s: once the host is back, the last
// of them converges within seconds.
//
// Until Run starts the workers, the queue holds the keys it is given
// (queue.Queue.Hold): the informers' first lists add every object's key,
// and those go in a window at a time once the workers run.
func NewWorker(name string, reconcile ReconcileFunc) *Worker {
	w := &Worker{Name: name, Queue: queue.New(name, 10*time.Millisecond, 5*time.Second), Reconcile: reconcile}
	w.Queue.Hold()
	return w
}

// Run processes the queue with workers goroutines until ctx ends, once
// synced (the informers it reads) and its own event handlers have synced.
func (w *Worker) Run(ctx context.Context, workers int, synced ...cache.DoneChecker) {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer w.Queue.ShutDown()
	logger := klog.FromContext(ctx).WithValues("controller", w.Name)
	ctx = klog.NewContext(ctx, logger)
	// synced may be shared by other workers: appended to as a copy.
	if !cache.WaitFor(ctx, "", append(slices.Clone(synced), w.HandlersSynced...)...) {
		return
	}
	logger.Info("Starting workers", "count", workers, "keys", w.Queue.Len()+w.Queue.Pending())
	w.Queue.Release()
	for i := 0; i < workers; i++ {
		go wait.UntilWithContext(ctx, w.work, time.Second)
	}
	<-ctx.Done()
}

func (w *Worker) work(ctx context.Context) {
	for w.next(ctx) {
	}
}

func (w *Worker) next(ctx context.Context) bool {
	key, shutdown := w.Queue.Get()
	if shutdown {
		return false
	}
	w.busy.Add(1)
	defer w.busy.Add(-1)
	defer w.Queue.Done(key)
	err := w.Reconcile(ctx, key)
	var requeue *RequeueError
	switch {
	case err == nil:
		reconciles.WithLabelValues(w.Name, resultSuccess).Inc()
		w.Queue.Forget(key)
	case errors.As(err, &requeue):
		reconciles.WithLabelValues(w.Name, resultRequeue).Inc()
		w.Queue.Forget(key)
		if requeue.Background {
			w.Queue.AddBackgroundAfter(key, requeue.After)
		} else {
			w.Queue.AddAfter(key, requeue.After)
		}
	default:
		reconciles.WithLabelValues(w.Name, resultError).Inc()
		klog.FromContext(ctx).V(2).Info("Reconcile failed, retrying", "key", key.String(), "err", err)
		w.Queue.AddRateLimited(key)
	}
	return true
}

// Unwrap returns the object of an informer event, the last known state of
// a deleted one included.
func Unwrap(obj interface{}) interface{} {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return d.Obj
	}
	return obj
}

// LabelsOf returns the labels of the object of an informer event.
func LabelsOf(obj interface{}) map[string]string {
	if m, err := meta.Accessor(Unwrap(obj)); err == nil {
		return m.GetLabels()
	}
	return nil
}
