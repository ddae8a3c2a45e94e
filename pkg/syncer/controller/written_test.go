package controller

import (
	"context"
	"strconv"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// newTestWritten returns an informer of RoleBindings (never started), its
// Written, and the clock Written reads, for the test to move.
func newTestWritten(t *testing.T) (cache.SharedIndexInformer, *Written, *time.Time) {
	t.Helper()
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &rbacv1.RoleBinding{}, 0, cache.Indexers{})
	written, err := NewWritten(informer)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	written.now = func() time.Time { return now }
	return informer, written, &now
}

// TestWrittenStandsInForTheInformer: a RoleBinding just made is not made
// again while its informer lags (no second create, no 409 and read back),
// until the informer shows it or a later version, or it ages out; one the
// syncer deletes is forgotten at once.
func TestWrittenStandsInForTheInformer(t *testing.T) {
	informer, written, now := newTestWritten(t)

	var creates, gets, updates, deletes int
	var stored *rbacv1.RoleBinding
	rv := 10
	marks := hostnames.Marks{Tenant: "acme", TenantUID: "t-uid", KindLabel: hostnames.NamespaceLabel, Name: "dev", OwnerUID: "ns-uid"}
	kind := HostKind[*rbacv1.RoleBinding]{
		Kind:     "RoleBinding",
		Informer: informer,
		Written:  written,
		Create: func(_ context.Context, obj *rbacv1.RoleBinding) (*rbacv1.RoleBinding, error) {
			creates++
			if stored != nil {
				return nil, apierrors.NewAlreadyExists(schema.GroupResource{Resource: "rolebindings"}, obj.Name)
			}
			rv++
			stored = obj.DeepCopy()
			stored.ResourceVersion = strconv.Itoa(rv)
			stored.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "tenant-syncer"}}
			return stored.DeepCopy(), nil
		},
		Get: func(_ context.Context, _, name string) (*rbacv1.RoleBinding, error) {
			gets++
			if stored == nil {
				return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "rolebindings"}, name)
			}
			return stored.DeepCopy(), nil
		},
		Update: func(_ context.Context, obj *rbacv1.RoleBinding) (*rbacv1.RoleBinding, error) {
			updates++
			return obj, nil
		},
		Delete: func(context.Context, string, string, metav1.DeleteOptions) error {
			deletes++
			stored = nil
			return nil
		},
		Matches: func(have, want *rbacv1.RoleBinding) bool { return len(have.Subjects) == len(want.Subjects) },
		Repair:  func(have, want *rbacv1.RoleBinding) *rbacv1.RoleBinding { return have.DeepCopy() },
	}
	want := func() *rbacv1.RoleBinding {
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "acme-1-dev", Name: "members"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}}}
		marks.Apply(rb)
		return rb
	}
	ensure := func(what string) {
		t.Helper()
		got, err := kind.Ensure(context.Background(), want(), marks)
		if err != nil || !got.Synced {
			t.Fatalf("%s: %+v, %v", what, got, err)
		}
	}
	counts := func(what string, c, g int) {
		t.Helper()
		if creates != c || gets != g {
			t.Errorf("%s: %d creates and %d reads, want %d and %d", what, creates, gets, c, g)
		}
	}

	ensure("first")
	counts("first", 1, 0)
	if w, ok := written.newer("acme-1-dev/members", nil); !ok || len(w.GetManagedFields()) != 0 {
		t.Fatalf("the RoleBinding made is not held (%v), or with its managed fields", ok)
	}
	ensure("again before the informer shows it")
	counts("again before the informer shows it", 1, 0)

	// The informer shows an older version (one without subjects): the
	// written one stands, nothing is "repaired" from the stale view.
	older := stored.DeepCopy()
	older.ResourceVersion = "5"
	older.Subjects = nil
	if err := informer.GetStore().Add(older); err != nil {
		t.Fatal(err)
	}
	written.seen(older)
	ensure("with an older version in the informer")
	counts("with an older version in the informer", 1, 0)
	if updates != 0 {
		t.Errorf("%d updates from the informer's older version", updates)
	}

	// The informer shows it: forgotten, the informer is read.
	if err := informer.GetStore().Update(stored.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	written.seen(stored.DeepCopy())
	if _, ok := written.newer("acme-1-dev/members", nil); ok {
		t.Error("still held once the informer showed it")
	}
	if err := informer.GetStore().Delete(stored.DeepCopy()); err != nil {
		t.Fatal(err)
	}

	// Aged out: made again (409 and read back, as without the cache).
	written.put(stored.DeepCopy())
	*now = now.Add(writtenTTL + time.Second)
	ensure("aged out")
	counts("aged out", 2, 1)

	// Deleted by the syncer: forgotten at once.
	written.put(stored.DeepCopy())
	if err := kind.remove(context.Background(), stored.DeepCopy()); err != nil || deletes != 1 {
		t.Fatalf("remove: %v (%d deletes)", err, deletes)
	}
	if _, ok := written.newer("acme-1-dev/members", nil); ok {
		t.Error("still held once deleted")
	}
	ensure("after the delete")
	counts("after the delete", 3, 1)
}

func TestOlderVersion(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{{"9", "10", true}, {"10", "10", false}, {"11", "10", false}, {"", "10", false}, {"x", "10", false}, {"9", "", false}} {
		if got := olderVersion(c.a, c.b); got != c.want {
			t.Errorf("olderVersion(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestCreatedStandsInUntilTheInformerShowsIt: an object the storage just
// created (HandOff) is read from Written while its informer has not shown
// it, also after a status write of it; once the informer shows it, shows
// it deleted, or the TTL passes, it is not.
func TestCreatedStandsInUntilTheInformerShowsIt(t *testing.T) {
	informer, written, now := newTestWritten(t)
	obj := func(rv string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "acme", Name: "dev", ResourceVersion: rv}}
	}
	const key = "acme/dev"

	var handedOver []metav1.Object
	h := &HandOff{}
	h.AfterCreate(obj("10"), &metav1.CreateOptions{}) // nobody takes it yet
	h.Take(func(o metav1.Object) { handedOver = append(handedOver, o) })
	h.AfterCreate(obj("11"), &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	created := obj("12")
	h.AfterCreate(created, &metav1.CreateOptions{})
	h.Release()
	h.AfterCreate(obj("13"), &metav1.CreateOptions{})
	if len(handedOver) != 1 || handedOver[0].GetResourceVersion() != "12" {
		t.Fatalf("handed over %v, want only the create while taken, not the dry run", handedOver)
	}
	if handedOver[0] == metav1.Object(created) {
		t.Error("the created object itself was handed over, want a copy (the request still returns it)")
	}

	written.Created(handedOver[0])
	if got, ok := written.Unseen(key); !ok || got.GetResourceVersion() != "12" {
		t.Fatalf("Unseen after Created: %v %v", got, ok)
	}
	written.put(obj("14")) // its status written before the informer shows it
	if got, ok := written.Unseen(key); !ok || got.GetResourceVersion() != "14" {
		t.Fatalf("Unseen after a status write: %v %v, want the written version 14", got, ok)
	}
	written.seen(obj("12")) // the informer shows the create: the status write still stands in
	if got, ok := written.newer(key, obj("12")); !ok || got.GetResourceVersion() != "14" {
		t.Errorf("the informer at the create's version: newer %v %v, want 14", got, ok)
	}
	written.seen(obj("14"))
	if _, ok := written.Unseen(key); ok {
		t.Error("still unseen once the informer showed it")
	}

	written.Created(obj("20"))
	if err := informer.GetStore().Add(obj("20")); err != nil {
		t.Fatal(err)
	}
	written.forget(key) // what the informer's delete handler does
	if _, ok := written.Unseen(key); ok {
		t.Error("still unseen once the informer showed it deleted")
	}

	written.Created(obj("30"))
	*now = now.Add(writtenTTL + time.Second)
	if _, ok := written.Unseen(key); ok {
		t.Error("still unseen past the TTL")
	}
	written.put(obj("31"))
	if _, ok := written.Unseen(key); ok {
		t.Error("an object the syncer wrote, not created by the storage, is unseen")
	}
}
