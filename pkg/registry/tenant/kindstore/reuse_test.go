package kindstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/rest"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apiserver"
	"tenant.io/tenant-apiserver/pkg/registry/registrytest"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/network"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// uidResolver resolves tenant groups like GroupResolver, with UIDs that a
// test can change: a tenant deleted and created again under its name.
type uidResolver struct {
	tenancy.GroupResolver
	mu   sync.Mutex
	uids map[string]types.UID
}

func (r *uidResolver) TenantUID(name string) (types.UID, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	uid, ok := r.uids[name]
	return uid, ok
}

func (r *uidResolver) set(name string, uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.uids[name] = uid
}

// TestFormerTenantOfTheSameName checks that a tenant created again under
// the name of a deleted one sees nothing of the former's objects, not even
// by listing or watching from a resourceVersion of the former's days, on
// etcd and in the watch cache.
func TestFormerTenantOfTheSameName(t *testing.T) {
	for _, cached := range []bool{false, true} {
		t.Run(map[bool]string{false: "etcd", true: "watch cache"}[cached], func(t *testing.T) {
			resolver := &uidResolver{uids: map[string]types.UID{"acme": "uid-1"}}
			getter := registrytest.RESTOptionsGetter(registrytest.StartEtcd(t), cached)
			networks, err := network.NewStorage(apiserver.Scheme, getter, kindstore.Deps{Resolver: resolver})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(networks.Main.Destroy)
			err = wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
				return networks.Store.Storage.Storage.ReadinessCheck() == nil, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx := reqCtx(alice, "")

			old := mustCreate(t, ctx, networks, newNetwork("old"))
			if got := old.GetLabels()[tenancy.TenantUIDLabel]; got != "uid-1" {
				t.Fatalf("tenant UID label %q, want uid-1", got)
			}
			before, err := networks.Main.List(ctx, &metainternalversion.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			historyRV := before.(metav1.ListMetaAccessor).GetListMeta().GetResourceVersion()
			if _, _, err := networks.Main.Delete(ctx, "old", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}

			// acme is deleted and created again: same name, new UID.
			resolver.set("acme", "uid-2")
			mustCreate(t, ctx, networks, newNetwork("new"))

			// A write that drops the label, or claims the former UID, keeps
			// the server's value.
			for _, claimed := range []string{"", "uid-1"} {
				obj, err := networks.Main.Get(ctx, "new", &metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				n := obj.(*tenant.Network).DeepCopy()
				delete(n.Labels, tenancy.TenantUIDLabel)
				if claimed != "" {
					n.Labels[tenancy.TenantUIDLabel] = claimed
				}
				out, _, err := networks.Main.Update(ctx, "new", rest.DefaultUpdatedObjectInfo(n), rest.ValidateAllObjectFunc,
					rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got := out.(*tenant.Network).Labels[tenancy.TenantUIDLabel]; got != "uid-2" {
					t.Errorf("update claiming %q: tenant UID label %q, want uid-2", claimed, got)
				}
			}

			for _, rv := range []string{"", "0", historyRV} {
				_, items := list(t, ctx, networks, &metainternalversion.ListOptions{ResourceVersion: rv})
				expectNames(t, "list at rv "+rv, names(t, items, "acme"), "/new")
			}
			w, err := networks.Main.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: historyRV, Watch: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			var seen []string
			timeout := time.After(2 * time.Second)
		loop:
			for {
				select {
				case e := <-w.ResultChan():
					if e.Type == watch.Bookmark || e.Type == watch.Error {
						continue
					}
					seen = append(seen, string(e.Type)+" "+objectName(e.Object))
				case <-timeout:
					break loop
				}
			}
			if len(seen) != 1 || seen[0] != "ADDED /new" {
				t.Errorf("watch from the former tenant's resourceVersion %s saw %v, want [ADDED /new]", historyRV, seen)
			}
		})
	}
}
