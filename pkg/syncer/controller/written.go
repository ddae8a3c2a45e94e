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

// Written holds the host objects of one kind that the syncer created or
// updated and whose informer has not shown that version yet. A reconcile
// that runs in between (on the event of another object, say the host
// namespace a RoleBinding was just made in) reads them from here instead
// of writing them again: without it, the create is answered 409 and the
// object read back, or the update 409 on a stale resourceVersion.
type Written struct {
	mu   sync.Mutex
	objs map[string]writtenObject
	now  func() time.Time
}

type writtenObject struct {
	obj metav1.Object
	at  time.Time
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
func (w *Written) put(obj metav1.Object) {
	if w == nil {
		return
	}
	obj.SetManagedFields(nil) // as the informers keep host objects
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
	w.objs[ref(obj.GetNamespace(), obj.GetName())] = writtenObject{obj: obj, at: now}
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

// olderVersion says whether resourceVersion a is older than b. The host's
// resourceVersions are etcd revisions; a version that is not one is never
// older (the informer's view is then trusted).
func olderVersion(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x < y
}
