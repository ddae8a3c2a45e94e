package registrytest

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// WaitCached waits until a list of store from its watch cache (resource
// version "0", as the periodic passes of the server read it) holds the
// object of uid. Objects written through another replica, or a moment ago,
// reach the cache a little later.
func WaitCached(t testing.TB, store *genericregistry.Store, uid types.UID) {
	t.Helper()
	ctx := tenancy.WithAllTenants(genericapirequest.WithNamespace(context.Background(), metav1.NamespaceNone))
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := store.List(ctx, &metainternalversion.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return false, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return false, err
		}
		for _, item := range items {
			if m, err := meta.Accessor(item); err == nil && m.GetUID() == uid {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the watch cache of %s never had the object of UID %s: %v", store.DefaultQualifiedResource, uid, err)
	}
}
