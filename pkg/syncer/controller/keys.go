package controller

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// Keys turns the informer events a controller of one kind of tenant
// object watches into the queue keys of those objects: events of the
// objects themselves, of their Tenants, of the host objects made for them
// and of the host's health. T is the kind's pointer type (*tenant.Network).
type Keys[T runtime.Object] struct {
	// Worker is the queue the keys go to; the watches are added through it.
	Worker *Worker
	// Objects is the kind's informer, indexed ByTenant.
	Objects cache.SharedIndexInformer
	// Key is the queue key of a cached object of the kind.
	Key func(T) queue.Key
	// OwnerLabel is the kind label that names, on a host object made for
	// an object of the kind, that object.
	OwnerLabel string
	// Namespaced kinds live in tenant Namespaces: their host objects name
	// the Namespace in hostnames.NamespaceLabel too, and their keys carry it.
	Namespaced bool
}

// Enqueue queues the object of an informer event of the kind, the last
// known state of a deleted one included.
func (k *Keys[T]) Enqueue(obj interface{}) {
	if o, ok := Unwrap(obj).(T); ok {
		k.Worker.Queue.Add(k.Key(o))
	}
}

// EnqueueAll queues every object of the kind in the background, a window
// at a time (see queue.Queue.AddBackgroundAll): behind the keys events
// queue.
func (k *Keys[T]) EnqueueAll() { k.Worker.Queue.AddBackgroundAll(k.All()) }

// All returns the keys of every object of the kind: a controller that
// queues keys of its own besides queues them in the same pass.
func (k *Keys[T]) All() []queue.Key {
	objs := k.Objects.GetStore().List()
	keys := make([]queue.Key, 0, len(objs))
	for _, obj := range objs {
		if o, ok := obj.(T); ok {
			keys = append(keys, k.Key(o))
		}
	}
	return keys
}

// EnqueueTenant queues the objects of tenant t that match says (all of
// them when match is nil).
func (k *Keys[T]) EnqueueTenant(t string, match func(T) bool) {
	objs, err := k.Objects.GetIndexer().ByIndex(ByTenant, t)
	if err != nil {
		klog.Background().Error(err, "Listing a tenant's objects", "controller", k.Worker.Name, "tenant", t)
		return
	}
	for _, obj := range objs {
		if o, ok := obj.(T); ok && (match == nil || match(o)) {
			k.Worker.Queue.Add(k.Key(o))
		}
	}
}

// EnqueueNamespace queues the objects of tenant t in its tenant Namespace
// ns, for namespaced kinds.
func (k *Keys[T]) EnqueueNamespace(t, ns string) {
	k.EnqueueTenant(t, func(o T) bool { return k.Key(o).Namespace == ns })
}

// EnqueueTenantOf queues every object of the Tenant of an informer event
// of Tenants, the last known state of a deleted one included.
func (k *Keys[T]) EnqueueTenantOf(obj interface{}) {
	if t, ok := Unwrap(obj).(*tenant.Tenant); ok {
		k.EnqueueTenant(t.Name, nil)
	}
}

// HostKey returns the key of the object a host object was made for, read
// from the host object's labels: its tenant, the owner label and, for
// namespaced kinds, its tenant Namespace. ok is false when one is missing.
func (k *Keys[T]) HostKey(obj interface{}) (key queue.Key, ok bool) {
	l := LabelsOf(obj)
	key = queue.Key{Tenant: l[hostnames.TenantLabel], Name: l[k.OwnerLabel]}
	if k.Namespaced {
		key.Namespace = l[hostnames.NamespaceLabel]
	}
	if key.Tenant == "" || key.Name == "" || (k.Namespaced && key.Namespace == "") {
		return queue.Key{}, false
	}
	return key, true
}

// EnqueueHostObject queues the object the host object of an informer
// event was made for, if its labels name one.
func (k *Keys[T]) EnqueueHostObject(obj interface{}) {
	if key, ok := k.HostKey(obj); ok {
		k.Worker.Queue.Add(key)
	}
}

// ObjectHandler queues an object of the kind when it is added or
// deleted, and on an update when changed(old, new) says so.
func (k *Keys[T]) ObjectHandler(changed func(old, new T) bool) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: k.Enqueue,
		UpdateFunc: func(old, obj interface{}) {
			o, okOld := old.(T)
			n, okNew := obj.(T)
			if okOld && okNew && changed(o, n) {
				k.Enqueue(obj)
			}
		},
		DeleteFunc: k.Enqueue,
	}
}

// WatchObjects adds ObjectHandler(changed) to the kind's informer.
func (k *Keys[T]) WatchObjects(changed func(old, new T) bool) error {
	return k.Worker.Watch(k.Objects, k.ObjectHandler(changed))
}

// TenantHandler queues every object of a Tenant on an update that
// changed(old, new) says matters; adds and deletes are left out.
func (k *Keys[T]) TenantHandler(changed func(old, new *tenant.Tenant) bool) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj interface{}) {
			o, okOld := old.(*tenant.Tenant)
			n, okNew := obj.(*tenant.Tenant)
			if okOld && okNew && changed(o, n) {
				k.EnqueueTenant(n.Name, nil)
			}
		},
	}
}

// WatchTenants adds TenantHandler(changed) to tenants, the Tenants' informer.
func (k *Keys[T]) WatchTenants(tenants cache.SharedIndexInformer, changed func(old, new *tenant.Tenant) bool) error {
	return k.Worker.Watch(tenants, k.TenantHandler(changed))
}

// WatchHost queues, on any event of the host objects of infs (an add, a
// change or a deletion), the object each was made for.
func (k *Keys[T]) WatchHost(infs ...cache.SharedIndexInformer) error {
	return k.Worker.WatchAll(OnEvery(k.EnqueueHostObject), infs...)
}

// WatchNamespaceStatus has the objects of a namespaced kind, which wait
// for the host namespace of their tenant Namespace, queued when that
// host namespace or the Namespace's phase changes; namespaces is the
// tenant Namespaces' informer.
func (k *Keys[T]) WatchNamespaceStatus(namespaces cache.SharedIndexInformer) error {
	return k.Worker.Watch(namespaces, cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj interface{}) {
			o, okOld := old.(*tenant.Namespace)
			n, okNew := obj.(*tenant.Namespace)
			if okOld && okNew && (o.Status.HostNamespace != n.Status.HostNamespace || o.Status.Phase != n.Status.Phase) {
				// The cached copy's namespace is its tenant.
				k.EnqueueNamespace(n.Namespace, n.Name)
			}
		},
	})
}

// QueueOnHealthChange queues every object of the kind when the host
// becomes unreachable, and the objects r reported HostUnreachable for
// when it answers again (OnHealthChange).
func (k *Keys[T]) QueueOnHealthChange(h *HostHealth, r UnreachableReporter) {
	OnHealthChange(h, k.Worker.Queue, k.EnqueueAll, r)
}

// SpecOrLabelsChanged says whether an update of a tenant object brought
// a new generation (its spec), other labels, or the start of its deletion.
func SpecOrLabelsChanged(o, n metav1.Object) bool {
	return o.GetGeneration() != n.GetGeneration() || !reflect.DeepEqual(o.GetLabels(), n.GetLabels()) ||
		(o.GetDeletionTimestamp() == nil) != (n.GetDeletionTimestamp() == nil)
}

// TenantReplacedOrLeaving says whether an update of a Tenant is one
// re-created under the same name, or the start of its deletion.
func TenantReplacedOrLeaving(o, n *tenant.Tenant) bool {
	return o.UID != n.UID || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil)
}
