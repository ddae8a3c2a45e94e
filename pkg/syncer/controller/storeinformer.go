package controller

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/syncer/queue"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// storeListerWatcher lists and watches every tenant's objects of one
// resource straight from the server's own storage (and its watch cache):
// the syncer runs in the server, so its view of tenant.io objects costs no
// HTTP round trip, no serialization and no authorization.
type storeListerWatcher struct {
	store Store
}

var _ cache.ListerWatcher = storeListerWatcher{}
var _ cache.ListerWatcherWithContext = storeListerWatcher{}

func (lw storeListerWatcher) context(ctx context.Context) context.Context {
	return tenancy.WithAllTenants(genericapirequest.WithNamespace(ctx, metav1.NamespaceAll))
}

func internalOptions(options metav1.ListOptions) (*metainternalversion.ListOptions, error) {
	out := &metainternalversion.ListOptions{}
	if err := metainternalversion.Convert_v1_ListOptions_To_internalversion_ListOptions(&options, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// ListWithContext implements cache.ListerWithContext. It waits for the
// storage's watch cache first: until that cache is ready, a list is
// served from etcd, and the informer would keep those objects, a second
// copy of everything the cache then holds, until each object changes.
func (lw storeListerWatcher) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	opts, err := internalOptions(options)
	if err != nil {
		return nil, err
	}
	if r, ok := lw.store.(interface{ ReadinessCheck() error }); ok {
		if err := wait.PollUntilContextCancel(ctx, cacheReadyPoll, true, func(context.Context) (bool, error) {
			return r.ReadinessCheck() == nil, nil
		}); err != nil {
			return nil, err
		}
	}
	return lw.store.List(lw.context(ctx), opts)
}

// cacheReadyPoll is how often a list waiting for the watch cache checks it.
const cacheReadyPoll = 50 * time.Millisecond

// WatchWithContext implements cache.WatcherWithContext.
func (lw storeListerWatcher) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	opts, err := internalOptions(options)
	if err != nil {
		return nil, err
	}
	w, err := lw.store.Watch(lw.context(ctx), opts)
	if err != nil {
		return nil, err
	}
	// The watch cache wraps the objects it sends to serialize them once
	// for every watcher; the informer wants the objects.
	return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
		if c, ok := e.Object.(runtime.CacheableObject); ok {
			if o := lw.cached(ctx, e.Type, c); o != nil {
				e.Object = o
			} else {
				e.Object = c.GetObject()
			}
		}
		return e, true
	}), nil
}

// cached returns the watch cache's own object for an added or modified
// object, when the cache still holds the version the event carries, or
// nil. The wrapper of a watch event hands out a deep copy of its object
// (GetObject); reading the same version from the cache shares it instead,
// so that the syncer's informers do not keep a second copy of every
// object the watch cache holds. A newer version in the cache, a deletion
// or a storage without a watch cache get the event's copy.
func (lw storeListerWatcher) cached(ctx context.Context, t watch.EventType, c runtime.CacheableObject) runtime.Object {
	store, ok := lw.store.(*genericregistry.Store)
	m, isMeta := c.(metav1.Object)
	if !ok || !isMeta || (t != watch.Added && t != watch.Modified) {
		return nil
	}
	kctx := genericapirequest.WithNamespace(ctx, m.GetNamespace())
	if tenant := m.GetLabels()[tenancy.TenantLabel]; tenant != "" {
		kctx = tenancy.WithTenant(kctx, tenant)
	}
	key, err := store.KeyFunc(kctx, m.GetName())
	if err != nil {
		return nil
	}
	out := store.NewFunc()
	if err := store.Storage.Get(kctx, key, storage.GetOptions{ResourceVersion: "0"}, out); err != nil {
		return nil
	}
	if o, err := meta.Accessor(out); err != nil || o.GetResourceVersion() != m.GetResourceVersion() || o.GetUID() != m.GetUID() {
		return nil
	}
	return out
}

// List implements cache.Lister (the reflector calls ListWithContext).
func (lw storeListerWatcher) List(options metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), options)
}

// Watch implements cache.Watcher (the reflector calls WatchWithContext).
func (lw storeListerWatcher) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), options)
}

// IsWatchListSemanticsUnSupported tells the reflector to list, then watch:
// the plain protocol, which the storage serves from its watch cache.
func (lw storeListerWatcher) IsWatchListSemanticsUnSupported() bool { return true }

// newStoreInformer returns an informer of every tenant's objects of the
// store's resource, keyed "<tenant>/<name>" (tenant kinds) or
// "<tenant>/<namespace>/<name>" (namespaced kinds): names repeat across
// tenants. To get those keys from the informer's fixed key function, the
// cached copies carry "<tenant>" (or "<tenant>/<namespace>") in
// metadata.namespace; they are copies, never written back, and ObjectKey
// is how the syncer forms keys to read them.
//
// Provider kinds (Tenants) are not partitioned: their informer keys them by name.
func newStoreInformer(kind KindStorage, indexers cache.Indexers, partitioned bool) cache.SharedIndexInformer {
	informer := cache.NewSharedIndexInformerWithOptions(storeListerWatcher{store: kind.Store}, kind.Store.New(),
		cache.SharedIndexInformerOptions{Indexers: indexers, ObjectDescription: kind.Resource + ".tenant.io"})
	if !partitioned {
		return informer
	}
	// The objects come from the watch cache, shared with every watcher and
	// never written: the cached copy is a shallow one, its own top-level
	// struct with a namespace of its own, sharing everything below (labels,
	// spec, status) with the watch cache's object, so that the syncer does
	// not keep a second copy of every object the watch cache holds. Like
	// every informer's objects, they are read-only.
	if err := informer.SetTransform(func(obj interface{}) (interface{}, error) {
		o, ok := obj.(runtime.Object)
		if !ok {
			return obj, nil
		}
		o = shallowCopy(o)
		m, err := meta.Accessor(o)
		if err != nil {
			return nil, err
		}
		if m.GetLabels()[tenancy.TenantLabel] == "" {
			return nil, fmt.Errorf("%s %q has no %s label", kind.Resource+".tenant.io", m.GetName(), tenancy.TenantLabel)
		}
		setCacheNamespace(m)
		return o, nil
	}); err != nil {
		panic(err) // only fails once the informer has started
	}
	return informer
}

// setCacheNamespace gives m, a tenant object of a partitioned informer,
// the metadata.namespace of its cached copy.
func setCacheNamespace(m metav1.Object) {
	m.SetNamespace(CacheNamespace(m.GetLabels()[tenancy.TenantLabel], m.GetNamespace()))
}

// shallowCopy returns a new object whose top-level struct (ObjectMeta
// included) is a copy of o's and whose maps, slices and pointers are o's.
func shallowCopy(o runtime.Object) runtime.Object {
	v := reflect.ValueOf(o)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return o.DeepCopyObject()
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	return c.Interface().(runtime.Object)
}

// CacheNamespace is the metadata.namespace of the syncer's cached copy of
// an object of tenant t in namespace ns ("" for tenant kinds).
func CacheNamespace(t, ns string) string {
	if ns == "" {
		return t
	}
	return t + "/" + ns
}

// ObjectKey is the key of the syncer's cached copy of a tenant object.
func ObjectKey(t, ns, name string) string {
	return CacheNamespace(t, ns) + "/" + name
}

// CachedKey is the queue key of the cached copy of a namespaced tenant
// object: its tenant is its tenant.io/tenant label, its metadata.namespace
// is CacheNamespace(tenant, namespace).
func CachedKey(labels map[string]string, cacheNamespace, name string) queue.Key {
	t := labels[tenancy.TenantLabel]
	return queue.Key{Tenant: t, Namespace: strings.TrimPrefix(cacheNamespace, t+"/"), Name: name}
}
