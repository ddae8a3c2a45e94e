package kindstore_test

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// TestDeleteChecksAgain checks that a delete whose check asked for "the
// object unchanged since checked" is checked again when the object changed
// in between (a status write), and still fails when it keeps changing or
// when the caller itself asked for a resourceVersion that is gone.
func TestDeleteChecksAgain(t *testing.T) {
	r := newRegistry(t, false)
	ctx := reqCtx(alice, "")

	// changes is how many checks see the object changed right after.
	changes, checks := 0, 0
	r.networks.Install(kindstore.Hooks{BeforeDelete: func(_ context.Context, name string) (*metav1.Preconditions, error) {
		checks++
		obj, err := r.networks.Main.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		n := obj.(*tenant.Network)
		uid, rv := n.UID, n.ResourceVersion
		if checks <= changes {
			changed := n.DeepCopy()
			changed.Status.HostNetwork = fmt.Sprintf("changed-%d", checks)
			if _, _, err := r.networks.Status.Update(ctx, name, rest.DefaultUpdatedObjectInfo(changed),
				rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
				t.Fatalf("status write during the check: %v", err)
			}
		}
		return &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}, nil
	}})
	del := func(name string, options *metav1.DeleteOptions) error {
		_, _, err := r.networks.Main.Delete(ctx, name, rest.ValidateAllObjectFunc, options)
		return err
	}

	mustCreate(t, ctx, r.networks, newNetwork("once"))
	changes, checks = 1, 0
	if err := del("once", &metav1.DeleteOptions{}); err != nil {
		t.Errorf("delete of a network changed once during its check: %v", err)
	}
	if checks != 2 {
		t.Errorf("checked %d times, want 2", checks)
	}
	if _, err := r.networks.Main.Get(ctx, "once", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("network once after its delete: %v, want NotFound", err)
	}

	mustCreate(t, ctx, r.networks, newNetwork("always"))
	changes, checks = 1000, 0
	err := del("always", &metav1.DeleteOptions{})
	expectStatus(t, "delete of a network that changes during every check", err, apierrors.IsConflict)
	if checks != 5 {
		t.Errorf("checked %d times, want 5", checks)
	}

	obj := mustCreate(t, ctx, r.networks, newNetwork("stale"))
	stale := obj.GetResourceVersion()
	changes, checks = 1, 0
	err = del("stale", &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}})
	expectStatus(t, "delete with the caller's own stale resourceVersion", err, apierrors.IsConflict)
	if checks != 1 {
		t.Errorf("checked %d times, want 1: the caller's precondition is the caller's", checks)
	}
	changes, checks = 0, 0
	if err := del("always", &metav1.DeleteOptions{}); err != nil {
		t.Errorf("delete of network always once it stopped changing: %v", err)
	}
}
