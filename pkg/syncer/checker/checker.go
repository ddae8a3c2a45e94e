// Package checker is the syncer's periodic check: it removes host objects
// the syncer made for tenant objects that no longer exist (orphans left by
// a delete the syncer missed, while it was down or not leading), and has
// every tenant object looked at again, repairing drift no event reported.
package checker

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Checker runs the periodic check.
type Checker struct {
	src    *controller.Sources
	period time.Duration
	// every is the least time between two keys of a controller's pass.
	every time.Duration
	// resync are the controllers whose objects each pass queues again.
	resync []Resync
}

// Resync is a controller, as the periodic check queues its objects again.
type Resync struct {
	Queue *queue.Queue
	// Keys returns the key of every object of the controller.
	Keys func() []queue.Key
}

// New returns a Checker that removes orphans every period, and then
// queues every object of resync again, at rate keys a second at most per
// controller. A controller whose previous pass is not done yet is left to
// finish it: at that rate the check's cost does not grow with the store,
// and a pass over a large one takes longer than the period.
func New(src *controller.Sources, period time.Duration, rate float64, resync ...Resync) *Checker {
	return &Checker{src: src, period: period, every: time.Duration(float64(time.Second) / rate), resync: resync}
}

// Run checks every period until ctx ends. The first pass waits until
// first is closed (the term's initial sync: until then every object is
// being looked at anyway), or a period at most, and skips the resync; the
// next come every period.
func (c *Checker) Run(ctx context.Context, first <-chan struct{}) {
	logger := klog.FromContext(ctx).WithValues("controller", "orphan-checker")
	ctx = klog.NewContext(ctx, logger)
	if !cache.WaitFor(ctx, "", c.src.Synced()...) {
		return
	}
	timer := time.NewTimer(c.period)
	select {
	case <-ctx.Done():
		timer.Stop()
		return
	case <-first:
		timer.Stop()
	case <-timer.C:
	}
	pass := func(ctx context.Context) {
		if err := c.src.Health.Err(); err != nil {
			return
		}
		if n, err := c.Pass(ctx); err != nil {
			logger.Error(err, "Orphan check failed", "deleted", n)
		} else if n > 0 {
			logger.Info("Removed orphaned host objects", "count", n)
		}
	}
	pass(ctx)
	ticker := time.NewTicker(c.period)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		pass(ctx)
		for _, r := range c.resync {
			if r.Queue.Pending() == 0 {
				r.Queue.AddCheckAll(r.Keys(), c.every)
			}
		}
	}
}

// hostObject is a host object the syncer made, and how to delete it.
type hostObject struct {
	obj   metav1.Object
	kind  string
	marks hostnames.Marks
	// namespace is the tenant Namespace of a namespaced owner.
	namespace string
	delete    func(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error
}

// Pass removes the orphans it finds now and returns how many it deleted.
// It walks the host kinds one at a time, and each object as it comes: a
// pass over every host object of 100,000 tenant Namespaces held 54 MiB
// when it first listed them all with their marks.
func (c *Checker) Pass(ctx context.Context) (int, error) {
	deleted := 0
	for _, k := range c.src.Orphans.Kinds() {
		for _, obj := range k.Informer.GetStore().List() {
			h, ok := c.hostObject(k, obj)
			if !ok {
				continue
			}
			orphan, err := c.orphaned(ctx, h)
			if err != nil {
				return deleted, err
			}
			if !orphan {
				continue
			}
			uid := h.obj.GetUID()
			err = h.delete(ctx, h.obj.GetNamespace(), h.obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			var pending *controller.RequeueError
			if errors.As(err, &pending) {
				// Removed in steps (a host namespace is detached from its
				// network first): the next pass, or the owner's controller,
				// takes the next.
				continue
			}
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return deleted, err
			}
			klog.FromContext(ctx).Info("Deleted orphaned host object", "kind", h.kind, "namespace", h.obj.GetNamespace(),
				"name", h.obj.GetName(), "tenant", h.marks.Tenant, "ownerUID", h.marks.OwnerUID)
			deleted++
		}
	}
	return deleted, nil
}

// hostObject says whether obj, from the informer of host kind k, carries
// the syncer's full marks and is not already terminating, and returns it
// with them.
func (c *Checker) hostObject(k controller.HostObjects, obj interface{}) (hostObject, bool) {
	m, ok := obj.(metav1.Object)
	if !ok || m.GetDeletionTimestamp() != nil {
		return hostObject{}, false
	}
	marks, ok := hostnames.MarksOf(m, c.src.Orphans.OwnerLabel(k.Kind, m))
	if !ok {
		return hostObject{}, false
	}
	return hostObject{obj: m, kind: k.Kind, marks: marks, namespace: hostnames.Label(m, hostnames.NamespaceLabel), delete: k.Delete}, true
}

// orphaned says whether the owner of h is gone: its Tenant (by UID) is not
// stored, or, for objects of a tenant Namespace or Network, that object
// (by UID) is not. It reads the storage, not the informers, so an owner created a
// moment ago is never taken for gone. A Tenant being deleted is left to
// offboarding.
//
// The informers answer first: an owner they hold with the marked UID is
// alive (if it was just deleted, the next pass sees it), so a pass over
// thousands of live objects reads nothing from etcd.
func (c *Checker) orphaned(ctx context.Context, h hostObject) (bool, error) {
	if owners, _ := c.src.Orphans.Owners(h.marks.KindLabel); owners.Namespaced && h.namespace == "" {
		return false, nil // no namespace to find its owner in: not provably an orphan
	}
	if c.cachedOwner(h) {
		return false, nil
	}
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	obj, err := c.src.Storage.Tenants.Store.Get(ctx, h.marks.Tenant, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	t := obj.(*tenant.Tenant)
	if t.UID != h.marks.TenantUID {
		return true, nil
	}
	if t.DeletionTimestamp != nil {
		return false, nil
	}
	if h.marks.KindLabel == "" {
		return h.marks.OwnerUID != t.UID, nil
	}
	owners, ok := c.src.Orphans.Owners(h.marks.KindLabel)
	if !ok {
		return false, nil // nobody registered its owners: not provably an orphan
	}
	ns := ""
	if owners.Namespaced {
		ns = h.namespace
	}
	obj, err = owners.Store.Get(genericapirequest.WithNamespace(tenancy.WithTenant(ctx, t.Name), ns), h.marks.Name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false, err
	}
	return m.GetUID() != types.UID(h.marks.OwnerUID), nil
}

// cachedOwner says whether the informers hold the owner of h, by UID.
func (c *Checker) cachedOwner(h hostObject) bool {
	obj, exists, err := c.src.Tenants.GetStore().GetByKey(h.marks.Tenant)
	if err != nil || !exists {
		return false
	}
	t := obj.(*tenant.Tenant)
	if t.UID != h.marks.TenantUID || t.DeletionTimestamp != nil {
		return false
	}
	if h.marks.KindLabel == "" {
		return h.marks.OwnerUID == t.UID
	}
	owners, ok := c.src.Orphans.Owners(h.marks.KindLabel)
	if !ok {
		return false
	}
	ns := ""
	if owners.Namespaced {
		ns = h.namespace
	}
	obj, exists, err = owners.Informer.GetStore().GetByKey(controller.ObjectKey(t.Name, ns, h.marks.Name))
	if err != nil || !exists {
		return false
	}
	m, err := meta.Accessor(obj)
	return err == nil && m.GetUID() == h.marks.OwnerUID
}
