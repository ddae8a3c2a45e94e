// Package checker is the syncer's periodic check: it removes host objects
// the syncer made for tenant objects that no longer exist (orphans left by
// a delete the syncer missed, while it was down or not leading), and has
// every tenant object looked at again, repairing drift no event reported.
package checker

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Checker runs the periodic check.
type Checker struct {
	src    *controller.Sources
	period time.Duration
	// resync are called after each pass: the controllers' EnqueueAll.
	resync []func()
}

// New returns a Checker that checks every period and then calls resync.
func New(src *controller.Sources, period time.Duration, resync ...func()) *Checker {
	return &Checker{src: src, period: period, resync: resync}
}

// Run checks every period until ctx ends, once the informers synced.
func (c *Checker) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("controller", "orphan-checker")
	ctx = klog.NewContext(ctx, logger)
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.src.Synced()...) {
		return
	}
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := c.src.Health.Err(); err != nil {
			return
		}
		if n, err := c.Pass(ctx); err != nil {
			logger.Error(err, "Orphan check failed", "deleted", n)
		} else if n > 0 {
			logger.Info("Removed orphaned host objects", "count", n)
		}
		for _, f := range c.resync {
			f()
		}
	}, c.period)
}

// hostObject is a host object the syncer made, and how to delete it.
type hostObject struct {
	obj    metav1.Object
	kind   string
	marks  hostnames.Marks
	delete func(ctx context.Context, opts metav1.DeleteOptions) error
}

// Pass removes the orphans it finds now and returns how many it deleted.
func (c *Checker) Pass(ctx context.Context) (int, error) {
	deleted := 0
	for _, h := range c.hostObjects() {
		orphan, err := c.orphaned(ctx, h)
		if err != nil {
			return deleted, err
		}
		if !orphan {
			continue
		}
		uid := h.obj.GetUID()
		err = h.delete(ctx, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return deleted, err
		}
		klog.FromContext(ctx).Info("Deleted orphaned host object", "kind", h.kind, "namespace", h.obj.GetNamespace(),
			"name", h.obj.GetName(), "tenant", h.marks.Tenant, "ownerUID", h.marks.OwnerUID)
		deleted++
	}
	return deleted, nil
}

// hostObjects lists, from the informers, the host objects that carry the
// syncer's full marks and are not already terminating.
func (c *Checker) hostObjects() []hostObject {
	var out []hostObject
	add := func(inf cache.SharedIndexInformer, kind, kindLabel string, del func(m metav1.Object) func(context.Context, metav1.DeleteOptions) error) {
		for _, obj := range inf.GetStore().List() {
			m, ok := obj.(metav1.Object)
			if !ok || m.GetDeletionTimestamp() != nil {
				continue
			}
			if marks, ok := hostnames.MarksOf(m, kindLabel); ok {
				out = append(out, hostObject{obj: m, kind: kind, marks: marks, delete: del(m)})
			}
		}
	}
	host := c.src.Host
	add(c.src.HostNamespaces, "Namespace", hostnames.NamespaceLabel, func(m metav1.Object) func(context.Context, metav1.DeleteOptions) error {
		return func(ctx context.Context, o metav1.DeleteOptions) error {
			return host.CoreV1().Namespaces().Delete(ctx, m.GetName(), o)
		}
	})
	add(c.src.HostRoleBindings, "RoleBinding", hostnames.NamespaceLabel, func(m metav1.Object) func(context.Context, metav1.DeleteOptions) error {
		return func(ctx context.Context, o metav1.DeleteOptions) error {
			return host.RbacV1().RoleBindings(m.GetNamespace()).Delete(ctx, m.GetName(), o)
		}
	})
	for gvr, inf := range c.src.HostMetalLB {
		client := c.src.HostDynamic.Resource(gvr)
		add(inf, gvr.Resource, "", func(m metav1.Object) func(context.Context, metav1.DeleteOptions) error {
			return func(ctx context.Context, o metav1.DeleteOptions) error {
				return client.Namespace(m.GetNamespace()).Delete(ctx, m.GetName(), o)
			}
		})
	}
	return out
}

// orphaned says whether the owner of h is gone: its Tenant (by UID) is not
// stored, or, for objects of a tenant Namespace, that Namespace (by UID)
// is not. It reads the storage, not the informers, so an owner created a
// moment ago is never taken for gone. A Tenant being deleted is left to
// offboarding.
//
// The informers answer first: an owner they hold with the marked UID is
// alive (if it was just deleted, the next pass sees it), so a pass over
// thousands of live objects reads nothing from etcd.
func (c *Checker) orphaned(ctx context.Context, h hostObject) (bool, error) {
	if c.cachedOwner(h) {
		return false, nil
	}
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	obj, err := c.src.Storage["tenants"].Store.Get(ctx, h.marks.Tenant, &metav1.GetOptions{})
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
	obj, err = c.src.Storage["namespaces"].Store.Get(tenancy.WithTenant(ctx, t.Name), h.marks.Name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return obj.(*tenant.Namespace).UID != types.UID(h.marks.OwnerUID), nil
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
	obj, exists, err = c.src.Namespaces.GetStore().GetByKey(controller.ObjectKey(t.Name, "", h.marks.Name))
	return err == nil && exists && obj.(*tenant.Namespace).UID == h.marks.OwnerUID
}
