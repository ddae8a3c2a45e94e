package tenancy

import (
	"context"
	"fmt"
	"reflect"
	goruntime "runtime"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
)

// Partition makes store keep its objects in one key range per tenant. Call
// it before store.CompleteWithOptions(options). namespaced says whether the
// objects also live in a tenant's virtual namespace.
func Partition(store *genericregistry.Store, options *generic.StoreOptions, namespaced bool) {
	getter := &partitionedGetter{RESTOptionsGetter: options.RESTOptions, namespaced: namespaced}
	options.RESTOptions = getter
	store.KeyRootFunc = func(ctx context.Context) string {
		return KeyRootFunc(getter.prefix, namespaced)(ctx)
	}
	store.KeyFunc = func(ctx context.Context, name string) (string, error) {
		if getter.prefix == "" {
			return "", fmt.Errorf("storage of %s is not initialized", store.DefaultQualifiedResource)
		}
		return KeyFunc(getter.prefix, namespaced)(ctx, name)
	}
}

// partitionedGetter learns the resource prefix of the storage it hands out
// and makes the storage (and its watch cache) key objects by tenant label.
type partitionedGetter struct {
	generic.RESTOptionsGetter
	namespaced bool
	prefix     string
}

func (g *partitionedGetter) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.RESTOptionsGetter.GetRESTOptions(resource, example)
	if err != nil {
		return opts, err
	}
	g.prefix = "/" + trimSlashes(opts.ResourcePrefix)
	decorate := opts.Decorator
	namespaced := g.namespaced
	cached := withCacher(decorate)
	opts.Decorator = func(config *storagebackend.ConfigForResource, resourcePrefix string,
		_ func(obj runtime.Object) (string, error), newFunc, newListFunc func() runtime.Object,
		getAttrs storage.AttrFunc, trigger storage.IndexerFuncs, indexers *cache.Indexers,
	) (storage.Interface, factory.DestroyFunc, error) {
		// The same prefix as KeyFunc, whatever slashes the factory added.
		keyFunc := ObjectKeyFunc("/"+trimSlashes(resourcePrefix), namespaced)
		if !cached {
			return decorate(config, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrs, trigger, indexers)
		}
		return listFilledCache(config, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrs, trigger, indexers)
	}
	return opts, nil
}

// withCacher says whether decorate is genericregistry.StorageWithCacher's
// decorator, which the storage factory hands out for a resource with a
// watch cache. It is told by name: the closure is compiled anew where
// StorageWithCacher is inlined, so the code pointers differ.
func withCacher(decorate generic.StorageDecorator) bool {
	fn := goruntime.FuncForPC(reflect.ValueOf(decorate).Pointer())
	return fn != nil && strings.HasSuffix(fn.Name(), ".StorageWithCacher.func1")
}

// listFilledCache is the storage genericregistry.StorageWithCacher makes,
// a watch cache in front of etcd, except that the cache fills from a list.
//
// A watch cache's reflector otherwise fills a new cache from a stream of
// events (client-go's WatchListClient), which it first collects in a store
// keyed by namespace and name: objects of two tenants with the same name
// collide there, and all but one are missing from the cache of a server
// started on existing data (lists and watches then leave them out, while a
// GET from etcd finds them). A list goes through the watch cache's own key
// function, which keys by tenant. The cache's reflector asks its storage
// whether it can stream (IsWatchListSemanticsUnSupported), so the rest of
// the process, the syncer's and admission's informers of the host among
// them, keeps streaming its initial lists.
func listFilledCache(config *storagebackend.ConfigForResource, resourcePrefix string,
	keyFunc func(obj runtime.Object) (string, error), newFunc, newListFunc func() runtime.Object,
	getAttrs storage.AttrFunc, trigger storage.IndexerFuncs, indexers *cache.Indexers,
) (storage.Interface, factory.DestroyFunc, error) {
	raw, destroyRaw, err := generic.NewRawStorage(config, newFunc, newListFunc, resourcePrefix)
	if err != nil {
		return nil, nil, err
	}
	c, err := cacher.NewCacherFromConfig(cacher.Config{
		Storage:             listOnly{raw},
		Versioner:           storage.APIObjectVersioner{},
		GroupResource:       config.GroupResource,
		EventsHistoryWindow: config.EventsHistoryWindow,
		ResourcePrefix:      resourcePrefix,
		KeyFunc:             keyFunc,
		NewFunc:             newFunc,
		NewListFunc:         newListFunc,
		GetAttrsFunc:        getAttrs,
		IndexerFuncs:        trigger,
		Indexers:            indexers,
		Codec:               config.Codec,
	})
	if err != nil {
		destroyRaw()
		return nil, nil, err
	}
	delegator := cacher.NewCacheDelegator(c, raw)
	var once sync.Once
	return delegator, func() {
		once.Do(func() {
			delegator.Stop()
			c.Stop()
			destroyRaw()
		})
	}, nil
}

// listOnly is a storage that tells a reflector to list, not stream.
type listOnly struct{ storage.Interface }

func (listOnly) IsWatchListSemanticsUnSupported() bool { return true }

func trimSlashes(s string) string {
	for len(s) > 0 && s[0] == '/' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}
