package controller

import (
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// HandOff passes the tenant objects this process' storage has just
// created to its syncer, while the syncer leads: the object's reconcile is
// queued at once, with the created object standing in for the informer
// until the informer shows it (Written.Created). Without it the syncer
// learns of a create from its informer, which lists and watches the
// server's own watch cache: one more hop, and the cache may lag etcd by a
// few hundred milliseconds on a busy server. A create served by another
// replica reaches the leader through its informer as before.
type HandOff struct {
	to atomic.Pointer[func(metav1.Object)]
}

// AfterCreate is the storage's AfterCreate hook: it hands obj over unless
// the create was a dry run or no syncer takes it.
func (h *HandOff) AfterCreate(obj runtime.Object, options *metav1.CreateOptions) {
	if h == nil || (options != nil && len(options.DryRun) > 0) {
		return
	}
	to := h.to.Load()
	if to == nil {
		return
	}
	if m, ok := obj.DeepCopyObject().(metav1.Object); ok {
		(*to)(m)
	}
}

// Take has f receive the objects created from now on, until Release.
func (h *HandOff) Take(f func(metav1.Object)) {
	if h != nil {
		h.to.Store(&f)
	}
}

// Release stops handing objects over.
func (h *HandOff) Release() {
	if h != nil {
		h.to.Store(nil)
	}
}
