package tenancy_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apiserver"
	"tenant.io/tenant-apiserver/pkg/registry/registrytest"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/floatingip"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/network"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// recordingGetter hands out RESTOptions whose decorator records what the
// store passes it instead of building a storage.
type recordingGetter struct {
	resourcePrefix string

	gotPrefix  string
	gotKeyFunc func(runtime.Object) (string, error)
}

func (g *recordingGetter) GetRESTOptions(resource schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	return generic.RESTOptions{
		StorageConfig:  &storagebackend.ConfigForResource{GroupResource: resource},
		ResourcePrefix: g.resourcePrefix,
		Decorator: func(_ *storagebackend.ConfigForResource, resourcePrefix string,
			keyFunc func(obj runtime.Object) (string, error), _, _ func() runtime.Object,
			_ storage.AttrFunc, _ storage.IndexerFuncs, _ *cache.Indexers,
		) (storage.Interface, factory.DestroyFunc, error) {
			g.gotPrefix, g.gotKeyFunc = resourcePrefix, keyFunc
			return nil, func() {}, nil
		},
	}, nil
}

// TestPartition checks that a partitioned store looks for an object under
// the key its storage (and watch cache) files it under, whatever slashes the
// storage factory puts around the resource prefix.
func TestPartition(t *testing.T) {
	type newStorage func(*runtime.Scheme, generic.RESTOptionsGetter, kindstore.Deps) (*kindstore.Storage, error)
	kinds := []struct {
		name       string
		newStorage newStorage
		obj        runtime.Object
		ns         string
	}{
		{
			name:       "networks",
			newStorage: network.NewStorage,
			obj:        &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: "default", Labels: map[string]string{tenancy.TenantLabel: "acme"}}},
		},
		{
			name:       "floatingips",
			newStorage: floatingip.NewStorage,
			obj:        &tenant.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "dev", Labels: map[string]string{tenancy.TenantLabel: "acme"}}},
			ns:         "dev",
		},
	}
	prefixes := []struct {
		resourcePrefix string
		want           string // the store's root of tenant acme, without namespace
	}{
		{resourcePrefix: "tenant.io/R", want: "/tenant.io/R/acme/"},
		{resourcePrefix: "/tenant.io/R", want: "/tenant.io/R/acme/"},
		{resourcePrefix: "R", want: "/R/acme/"},
		{resourcePrefix: "tenant.io/R/", want: "/tenant.io/R/acme/"},
	}
	for _, k := range kinds {
		for _, p := range prefixes {
			t.Run(k.name+" "+p.resourcePrefix, func(t *testing.T) {
				getter := &recordingGetter{resourcePrefix: strings.ReplaceAll(p.resourcePrefix, "R", k.name)}
				s, err := k.newStorage(apiserver.Scheme, getter, kindstore.Deps{Resolver: tenancy.GroupResolver{}, Storages: neverRead})
				if err != nil {
					t.Fatal(err)
				}
				store := s.Store

				ctx := requestContext(ptr("acme"), k.ns)
				name := k.obj.(metav1.Object).GetName()
				key, err := store.KeyFunc(ctx, name)
				if err != nil {
					t.Fatalf("KeyFunc() error = %v", err)
				}
				objKey, err := getter.gotKeyFunc(k.obj)
				if err != nil {
					t.Fatalf("decorator's key func error = %v", err)
				}
				if key != objKey {
					t.Errorf("store.KeyFunc() = %q, but the storage files the object under %q", key, objKey)
				}
				if !strings.HasPrefix(key, getter.gotPrefix) {
					t.Errorf("key %q lacks the resource prefix %q of its storage", key, getter.gotPrefix)
				}
				want := strings.ReplaceAll(p.want, "R", k.name)
				if got := store.KeyRootFunc(requestContext(ptr("acme"), "")); got != want {
					t.Errorf("KeyRootFunc() = %q, want %q", got, want)
				}
				if !strings.HasPrefix(key, want) {
					t.Errorf("key %q is outside the tenant's root %q", key, want)
				}
			})
		}
	}
}

// neverRead are the storages of the other kinds, which these tests never
// read.
var neverRead = &kindstore.Storages{Namespaces: &kindstore.Storage{Resource: "namespaces", Store: &genericregistry.Store{}}}

func TestPartitionBeforeStorage(t *testing.T) {
	store := &genericregistry.Store{}
	tenancy.Partition(store, &generic.StoreOptions{RESTOptions: &recordingGetter{resourcePrefix: "x"}}, false)
	if key, err := store.KeyFunc(requestContext(ptr("acme"), ""), "default"); err == nil {
		t.Errorf("KeyFunc() before the storage exists = %q, want an error", key)
	}
}

// TestWatchCacheStartsWithEveryTenant starts a watch cache on an etcd that
// already holds objects of the same name in several tenants, as a
// restarted server does: each tenant lists its own, none is lost to
// another's of the same name.
func TestWatchCacheStartsWithEveryTenant(t *testing.T) {
	url := registrytest.StartEtcd(t)
	tenants := []string{"acme", "globex", "initech"}
	names := []string{"default", "web"}

	first, err := network.NewStorage(apiserver.Scheme, registrytest.RESTOptionsGetter(url, false), kindstore.Deps{Resolver: tenancy.GroupResolver{}, Storages: neverRead})
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range tenants {
		ctx := requestContext(ptr(tn), "")
		for _, name := range names {
			key, err := first.Store.KeyFunc(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			obj := &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{tenancy.TenantLabel: tn}}}
			if err := first.Store.Storage.Create(ctx, key, obj, &tenant.Network{}, 0, false); err != nil {
				t.Fatal(err)
			}
		}
	}

	// A new storage, through the watch cache: it starts from what etcd holds.
	cached, err := network.NewStorage(apiserver.Scheme, registrytest.RESTOptionsGetter(url, true), kindstore.Deps{Resolver: tenancy.GroupResolver{}, Storages: neverRead})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cached.Store.DestroyFunc)
	for _, tn := range tenants {
		ctx := requestContext(ptr(tn), "")
		var got []string
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			// resourceVersion "0": what the watch cache holds.
			list, err := cached.Store.List(ctx, &metainternalversion.ListOptions{ResourceVersion: "0"})
			if err != nil {
				return false, nil // the cache is not ready yet
			}
			got = nil
			for _, n := range list.(*tenant.NetworkList).Items {
				got = append(got, n.Labels[tenancy.TenantLabel]+"/"+n.Name)
			}
			return len(got) >= len(names), nil
		})
		want := []string{tn + "/default", tn + "/web"}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("tenant %s lists %v from the watch cache, want %v", tn, got, want)
		}
	}
}
