package controller

import (
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// writtenTTL bounds how long a written object stands in for its informer's
// view: far longer than an informer lags on a healthy host, short enough
// that an object someone deleted while its events were lost is made again
// soon.
const writtenTTL = 5 * time.Second

// Written holds the objects of one kind that the syncer created or
// updated and whose informer has not shown that version yet. A reconcile
// that runs in between (on the event of another object, say the host
// namespace a RoleBinding was just made in) reads them from here instead
// of writing them again: without it, the create is answered 409 and the
// object read back, or the update 409 on a stale resourceVersion. For
// tenant objects it holds what the syncer's status writes stored: a
// reconcile that finds the status it wrote has nothing to write, where
// the informer's older copy would have it write again (a storage update
// that fails on the stale version, reads the object back and finds
// nothing to change).
type Written struct {
	mu   sync.Mutex
	objs map[string]writtenObject
	now  func() time.Time
	// cached, when set, turns an object as stored into its informer's
	// form (a tenant object's cache namespace, see newStoreInformer).
	cached func(metav1.Object)
}

type writtenObject struct {
	obj metav1.Object
	at  time.Time
	// created: the storage created it (HandOff) and the informer has not
	// shown it yet.
	created bool
}

// NewWritten returns the written objects of the kind informer holds; its
// events forget what they show.
func NewWritten(informer cache.SharedIndexInformer) (*Written, error) {
	w := &Written{objs: map[string]writtenObject{}, now: time.Now}
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    w.seen,
		UpdateFunc: func(_, obj interface{}) { w.seen(obj) },
		DeleteFunc: func(obj interface{}) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				w.forget(key)
			}
		},
	})
	return w, err
}

// seen forgets the written version of obj once the informer has it, or a
// later one.
func (w *Written) seen(obj interface{}) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	key := ref(m.GetNamespace(), m.GetName())
	w.mu.Lock()
	defer w.mu.Unlock()
	if e, ok := w.objs[key]; ok && !olderVersion(m.GetResourceVersion(), e.obj.GetResourceVersion()) {
		delete(w.objs, key)
	}
}

// put records obj, just written.
func (w *Written) put(obj metav1.Object) { w.record(obj, false) }

// Created records obj, a tenant object the storage has just created, in
// its informer's form, until the informer shows it (or writtenTTL): a
// reconcile that runs before then reads it from here (Unseen).
func (w *Written) Created(obj metav1.Object) { w.record(obj, true) }

func (w *Written) record(obj metav1.Object, created bool) {
	if w == nil {
		return
	}
	obj.SetManagedFields(nil) // as the informers keep host objects
	if w.cached != nil {
		w.cached(obj)
	}
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.objs) >= 1024 {
		for k, e := range w.objs {
			if now.Sub(e.at) > writtenTTL {
				delete(w.objs, k)
			}
		}
	}
	key := ref(obj.GetNamespace(), obj.GetName())
	if e, ok := w.objs[key]; ok && e.created && now.Sub(e.at) <= writtenTTL {
		created = true // a status written before the informer showed the create
	}
	w.objs[key] = writtenObject{obj: obj, at: now, created: created}
}

// Unseen returns the object the storage created under key (Created) if its
// informer has not shown it yet.
func (w *Written) Unseen(key string) (metav1.Object, bool) {
	if w == nil {
		return nil, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.objs[key]
	if !ok || !e.created {
		return nil, false
	}
	if w.now().Sub(e.at) > writtenTTL {
		delete(w.objs, key)
		return nil, false
	}
	return e.obj, true
}

func (w *Written) forget(key string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.objs, key)
}

// newer returns the object written under key if the informer's, cached
// (nil when it has none), is an older version of it.
func (w *Written) newer(key string, cached metav1.Object) (metav1.Object, bool) {
	if w == nil {
		return nil, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.objs[key]
	if !ok {
		return nil, false
	}
	if w.now().Sub(e.at) > writtenTTL || (cached != nil && !olderVersion(cached.GetResourceVersion(), e.obj.GetResourceVersion())) {
		delete(w.objs, key)
		return nil, false
	}
	return e.obj, true
}

// Latest returns the object written under key if it is newer than obj,
// the informer's copy, and obj otherwise. Only objects the informer has
// are looked up: a written copy never brings back one it has seen deleted.
func (w *Written) Latest(key string, obj interface{}) interface{} {
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj
	}
	if newer, ok := w.newer(key, m); ok {
		return newer
	}
	return obj
}

// olderVersion says whether resourceVersion a is older than b. The host's
// resourceVersions are etcd revisions; a version that is not one is never
// older (the informer's view is then trusted).
func olderVersion(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x < y
}
