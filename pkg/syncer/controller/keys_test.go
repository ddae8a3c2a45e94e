package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// drain returns the keys in w's queue (held ones too: no worker runs).
func drain(w *Worker) map[queue.Key]bool {
	w.Queue.Release()
	out := map[queue.Key]bool{}
	for w.Queue.Len() > 0 {
		k, _ := w.Queue.Get()
		out[k] = true
		w.Queue.Done(k)
	}
	return out
}

// TestKeys routes events of a namespaced kind (cached as the storage
// informers hold tenant objects) and of its host objects to queue keys.
func TestKeys(t *testing.T) {
	w := NewWorker("keys-test", nil)
	defer w.Queue.ShutDown()
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &tenant.FloatingIP{}, 0, cache.Indexers{ByTenant: indexByTenant})
	k := &Keys[*tenant.FloatingIP]{Worker: w, Objects: inf, OwnerLabel: "tenant.io/floatingip", Namespaced: true,
		Key: func(o *tenant.FloatingIP) queue.Key { return CachedKey(o.Labels, o.Namespace, o.Name) }}
	fip := func(tn, ns, name string) *tenant.FloatingIP {
		return &tenant.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: CacheNamespace(tn, ns),
			Labels: map[string]string{hostnames.TenantLabel: tn}}}
	}
	for _, o := range []*tenant.FloatingIP{fip("acme", "dev", "a"), fip("acme", "prod", "b"), fip("globex", "dev", "c")} {
		if err := inf.GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	want := func(what string, keys ...queue.Key) {
		t.Helper()
		got := drain(w)
		if len(got) != len(keys) {
			t.Fatalf("%s: queued %v, want %v", what, got, keys)
		}
		for _, key := range keys {
			if !got[key] {
				t.Fatalf("%s: queued %v, want %v", what, got, keys)
			}
		}
	}
	a, b, c := queue.Key{Tenant: "acme", Namespace: "dev", Name: "a"}, queue.Key{Tenant: "acme", Namespace: "prod", Name: "b"}, queue.Key{Tenant: "globex", Namespace: "dev", Name: "c"}

	k.Enqueue(cache.DeletedFinalStateUnknown{Key: "x", Obj: fip("acme", "dev", "a")})
	want("a tombstone", a)
	k.Enqueue(&tenant.Network{})
	want("an object of another kind")
	k.EnqueueAll()
	want("all", a, b, c)
	k.EnqueueTenant("acme", nil)
	want("a tenant's", a, b)
	k.EnqueueNamespace("acme", "prod")
	want("a tenant Namespace's", b)
	k.EnqueueTenantOf(cache.DeletedFinalStateUnknown{Obj: &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "globex"}}})
	want("a deleted Tenant's", c)

	host := func(labels map[string]string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "fip-a", Labels: labels}}
	}
	k.EnqueueHostObject(host(map[string]string{hostnames.TenantLabel: "acme", "tenant.io/floatingip": "a", hostnames.NamespaceLabel: "dev"}))
	want("a host object", a)
	k.EnqueueHostObject(host(map[string]string{hostnames.TenantLabel: "acme", "tenant.io/floatingip": "a"}))
	want("a host object without its Namespace label")
	k.EnqueueHostObject(host(map[string]string{hostnames.TenantLabel: "acme", hostnames.NamespaceLabel: "dev"}))
	want("a host object of another kind")
	k.EnqueueHostObject(cache.DeletedFinalStateUnknown{Obj: host(map[string]string{hostnames.TenantLabel: "globex", "tenant.io/floatingip": "c", hostnames.NamespaceLabel: "dev"})})
	want("a deleted host object", c)

	// Not namespaced: the Namespace label is not needed, nor read.
	k.Namespaced = false
	if key, ok := k.HostKey(host(map[string]string{hostnames.TenantLabel: "acme", "tenant.io/floatingip": "a", hostnames.NamespaceLabel: "dev"})); !ok || key != (queue.Key{Tenant: "acme", Name: "a"}) {
		t.Fatalf("HostKey of a cluster-scoped kind: %v %v", key, ok)
	}

	// The handlers: an update counts only when changed says so.
	h := k.ObjectHandler(func(o, n *tenant.FloatingIP) bool { return o.Generation != n.Generation })
	old, same, changed := fip("acme", "dev", "a"), fip("acme", "dev", "a"), fip("acme", "dev", "a")
	changed.Generation = 2
	h.OnUpdate(old, same)
	want("an update that changed nothing")
	h.OnUpdate(old, changed)
	want("an update of the spec", a)
	th := k.TenantHandler(TenantReplacedOrLeaving)
	t1 := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "1"}}
	t2 := t1.DeepCopy()
	th.OnUpdate(t1, t2)
	want("a Tenant update that matters to nothing")
	t2.UID = "2"
	th.OnUpdate(t1, t2)
	want("a Tenant created again", a, b)
}
