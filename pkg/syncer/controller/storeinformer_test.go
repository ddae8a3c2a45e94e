package controller_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apiserver"
	"tenant.io/tenant-apiserver/pkg/registry/registrytest"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/network"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// TestStoreInformerSharesTheWatchCache runs the syncer's informer of
// Networks over a real storage with its watch cache: objects listed at the
// start and objects created, updated and deleted later reach it keyed by
// tenant; the informer's copies share their contents with the watch
// cache's objects instead of copying them, and the watch cache's objects
// keep their own metadata.
func TestStoreInformerSharesTheWatchCache(t *testing.T) {
	url := registrytest.StartEtcd(t)
	neverRead := &kindstore.Storages{Namespaces: &kindstore.Storage{Resource: "namespaces"}}
	st, err := network.NewStorage(apiserver.Scheme, registrytest.RESTOptionsGetter(url, true), kindstore.Deps{Resolver: tenancy.GroupResolver{}, Storages: neverRead})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Store.DestroyFunc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	as := func(tn string) context.Context {
		return tenancy.WithTenant(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), tn)
	}
	put := func(tn, name, subnet string) {
		t.Helper()
		key, err := st.Store.KeyFunc(as(tn), name)
		if err != nil {
			t.Fatal(err)
		}
		obj := &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{tenancy.TenantLabel: tn}},
			Spec: tenant.NetworkSpec{Subnets: []string{subnet}}}
		if err := st.Store.Storage.Create(as(tn), key, obj, &tenant.Network{}, 0, false); err != nil {
			t.Fatal(err)
		}
	}
	// Listed at the start: two tenants' Networks of the same name.
	put("acme", "default", "10.0.0.0/24")
	put("globex", "default", "10.1.0.0/24")

	inf := controller.NewStoreInformer(controller.KindStorage{Resource: "networks", Store: st.Store}, cache.Indexers{controller.ByTenant: controller.IndexByTenant}, true)
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the informer never synced")
	}
	// Watched: a create, then an update.
	put("acme", "web", "10.0.1.0/24")
	key, err := st.Store.KeyFunc(as("acme"), "web")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Store.Storage.GuaranteedUpdate(as("acme"), key, &tenant.Network{}, false, nil, func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		n := in.(*tenant.Network).DeepCopy()
		n.Spec.Subnets = []string{"10.0.2.0/24"}
		return n, nil, nil
	}, false, nil); err != nil {
		t.Fatal(err)
	}

	cachedOf := func(tn, name string) *tenant.Network {
		t.Helper()
		list, err := st.Store.List(as(tn), &metainternalversion.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range list.(*tenant.NetworkList).Items {
			if n := &list.(*tenant.NetworkList).Items[i]; n.Name == name {
				return n
			}
		}
		t.Fatalf("the watch cache has no Network %s of %s", name, tn)
		return nil
	}
	informed := func(tn, name string) *tenant.Network {
		obj, ok, err := inf.GetIndexer().GetByKey(controller.ObjectKey(tn, "", name))
		if err != nil || !ok {
			return nil
		}
		return obj.(*tenant.Network)
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		n := informed("acme", "web")
		return n != nil && len(n.Spec.Subnets) == 1 && n.Spec.Subnets[0] == "10.0.2.0/24", nil
	})
	if err != nil {
		t.Fatal("the informer never saw the update of acme/web")
	}
	for _, c := range []struct{ tenant, name string }{{"acme", "default"}, {"globex", "default"}, {"acme", "web"}} {
		got, cached := informed(c.tenant, c.name), cachedOf(c.tenant, c.name)
		if got == nil {
			t.Errorf("the informer has no %s/%s", c.tenant, c.name)
			continue
		}
		if got.Namespace != c.tenant {
			t.Errorf("informer's %s/%s: namespace %q, want %q", c.tenant, c.name, got.Namespace, c.tenant)
		}
		if cached.Namespace != "" {
			t.Errorf("the watch cache's %s/%s got namespace %q: the informer wrote into it", c.tenant, c.name, cached.Namespace)
		}
		if reflect.ValueOf(got.Labels).UnsafePointer() != reflect.ValueOf(cached.Labels).UnsafePointer() ||
			&got.Spec.Subnets[0] != &cached.Spec.Subnets[0] {
			t.Errorf("informer's %s/%s is a copy of the watch cache's object, want the same contents", c.tenant, c.name)
		}
	}

	if err := st.Store.Storage.Delete(as("acme"), key, &tenant.Network{}, nil, storage.ValidateAllObjectFunc, false, nil, storage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return informed("acme", "web") == nil, nil
	})
	if err != nil {
		t.Error("the informer still has acme/web after its delete")
	}
	if got := inf.GetIndexer().ListKeys(); len(got) != 2 {
		t.Errorf("informer keys after the delete: %v, want acme/default and globex/default", got)
	}
}
