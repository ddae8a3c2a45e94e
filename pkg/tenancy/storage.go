package tenancy

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"
)

// The watch cache of a partitioned store must start from a list. With
// client-go's WatchListClient, a reflector fills a new cache from a stream
// of events that it first collects in a store keyed by namespace and
// name: objects of two tenants with the same name collide there, and all
// but one are missing from the cache of a server started on existing data
// (lists and watches then leave them out, while a GET from etcd finds
// them). A list goes through the watch cache's own key function, which
// keys by tenant. The gate is off for the whole process, the host
// informers included: streaming their initial state (with the watch
// caches kept on lists by their storage) made a restart at 101,000 host
// namespaces slower, 18.9 s against 12.5 s (docs/perf/restart.md).
func init() {
	clientfeatures.ReplaceFeatureGates(withoutWatchList{clientfeatures.FeatureGates()})
}

// withoutWatchList is client-go's feature gates with WatchListClient off.
type withoutWatchList struct{ clientfeatures.Gates }

func (g withoutWatchList) Enabled(key clientfeatures.Feature) bool {
	return key != clientfeatures.WatchListClient && g.Gates.Enabled(key)
}

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
	opts.Decorator = func(config *storagebackend.ConfigForResource, resourcePrefix string,
		_ func(obj runtime.Object) (string, error), newFunc, newListFunc func() runtime.Object,
		getAttrs storage.AttrFunc, trigger storage.IndexerFuncs, indexers *cache.Indexers,
	) (storage.Interface, factory.DestroyFunc, error) {
		// The same prefix as KeyFunc, whatever slashes the factory added.
		return decorate(config, resourcePrefix, ObjectKeyFunc("/"+trimSlashes(resourcePrefix), namespaced),
			newFunc, newListFunc, getAttrs, trigger, indexers)
	}
	return opts, nil
}

func trimSlashes(s string) string {
	for len(s) > 0 && s[0] == '/' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}
