package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// events records what a handler was told, as "add x", "update x", "delete x".
type events struct {
	mu  sync.Mutex
	got []string
}

func (e *events) record(verb string) func(obj interface{}) {
	return func(obj interface{}) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		e.got = append(e.got, verb+" "+obj.(*corev1.Namespace).Name)
	}
}

func (e *events) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    e.record("add"),
		UpdateFunc: func(_, obj interface{}) { e.record("update")(obj) },
		DeleteFunc: e.record("delete"),
	}
}

func (e *events) waitFor(t *testing.T, want ...string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		return len(e.got) >= len(want), nil
	})
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil || len(e.got) != len(want) {
		t.Fatalf("events: got %q, want %q", e.got, want)
	}
	for i := range want {
		if e.got[i] != want[i] {
			t.Fatalf("events: got %q, want %q", e.got, want)
		}
	}
	e.got = nil
}

func labelled(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{hostnames.TenantLabel: "acme"}}}
}

// A term sees the process-wide informer of every namespace as if it
// selected the tenant label: the other namespaces stay out of its events
// (though not out of the store), losing the label is a delete and gaining
// it an add, and the term's handlers go when it ends.
func TestTermInformerShowsTenantNamespacesOnly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset(labelled("acme-a"), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}})
	shared := informers.NewSharedInformerFactory(client, time.Second).Core().V1().Namespaces().Informer()
	if err := Shared(shared); err != nil {
		t.Fatal(err)
	}
	go shared.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), shared.HasSynced) {
		t.Fatal("the shared informer never synced")
	}

	term := &termInformer{SharedIndexInformer: shared}
	term.RunWithContext(ctx) // the process runs it: returns at once
	var seen events
	reg, err := term.AddEventHandler(seen.handler())
	if err != nil {
		t.Fatal(err)
	}
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		t.Fatal("the term's handler never synced")
	}
	seen.waitFor(t, "add acme-a")
	if keys := term.GetStore().ListKeys(); len(keys) != 2 {
		t.Errorf("store: got %q, want both namespaces", keys)
	}
	if objs, err := term.GetIndexer().ByIndex(ByTenant, "acme"); err != nil || len(objs) != 1 {
		t.Errorf("ByTenant acme: got %d objects (%v), want 1", len(objs), err)
	}

	nss := client.CoreV1().Namespaces()
	if _, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := nss.Update(ctx, labelled("other"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	seen.waitFor(t, "add other")
	untouched := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "acme-a", Labels: map[string]string{"x": "y"}}}
	if _, err := nss.Update(ctx, untouched, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	seen.waitFor(t, "delete acme-a")

	// Resyncs of the shared informer (every second here) reach no term
	// handler; after the term ends, no event does.
	time.Sleep(1500 * time.Millisecond)
	seen.waitFor(t)
	term.end()
	if err := nss.Delete(ctx, "other", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, exists, err := shared.GetStore().GetByKey("other")
		return !exists, err
	})
	if err != nil {
		t.Fatalf("the shared informer never saw the delete: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // handlers hear of it after the store
	seen.waitFor(t)
}

func TestTenantLabelledSeesThroughTombstones(t *testing.T) {
	for _, c := range []struct {
		obj  interface{}
		want bool
	}{
		{labelled("a"), true},
		{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, false},
		{cache.DeletedFinalStateUnknown{Key: "a", Obj: labelled("a")}, true},
		{cache.DeletedFinalStateUnknown{Key: "b", Obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "b"}}}, false},
		{"not an object", false},
	} {
		if got := tenantLabelled(c.obj); got != c.want {
			t.Errorf("tenantLabelled(%#v) = %v, want %v", c.obj, got, c.want)
		}
	}
}
