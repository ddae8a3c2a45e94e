package controller_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
)

// TestStatusWriter: a status that the cached copy already shows is not
// written; one that changes it is stored on the newest stored copy; an
// object created again under the same name (another UID) is not given
// the status of the one it replaced.
func TestStatusWriter(t *testing.T) {
	store := controllertest.NewStore(func() runtime.Object { return &tenant.Network{} }, func() runtime.Object { return &tenant.NetworkList{} })
	w := controller.StatusWriter[*tenant.Network]{Store: store}
	cached := &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: "blue", UID: "uid-1", Generation: 2}}
	stored := cached.DeepCopy()
	stored.Status.HostNetwork = "old"
	store.Put("acme", "", stored)
	ctx := context.Background()

	setTo := func(name string) func(*tenant.Network) bool {
		return func(live *tenant.Network) bool {
			changed := live.Status.HostNetwork != name
			live.Status.HostNetwork = name
			return changed
		}
	}
	if err := w.Write(ctx, "acme", "", cached, setTo("")); err != nil || store.Updates != 0 {
		t.Fatalf("a status the cache shows: err %v, %d updates, want none", err, store.Updates)
	}
	if err := w.Write(ctx, "acme", "", cached, setTo("cudn")); err != nil {
		t.Fatal(err)
	}
	if got := store.Stored("acme", "", "blue").(*tenant.Network); got.Status.HostNetwork != "cudn" || store.Updates != 1 {
		t.Fatalf("stored %q after %d updates, want cudn after 1", got.Status.HostNetwork, store.Updates)
	}
	again := cached.DeepCopy()
	again.UID = "uid-2"
	store.Put("acme", "", again)
	if err := w.Write(ctx, "acme", "", cached, setTo("other")); err != nil {
		t.Fatal(err)
	}
	if got := store.Stored("acme", "", "blue").(*tenant.Network); got.Status.HostNetwork != "" {
		t.Errorf("the object created again got the status %q of the one it replaced", got.Status.HostNetwork)
	}
}
