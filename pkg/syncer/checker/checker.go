// Package checker is the syncer's periodic check: it removes host objects
// the syncer made for tenant objects that no longer exist (orphans left by
// a delete the syncer missed, while it was down or not leading), and has
// every tenant object looked at again, repairing drift no event reported.
package checker

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
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
	obj   metav1.Object
	kind  string
	marks hostnames.Marks
	// namespace is the tenant Namespace of a namespaced owner.
	namespace string
	delete    func(ctx context.Context, opts metav1.DeleteOptions) error
}

// Kind labels of the host objects of LoadBalancers and FloatingIPs.
var (
	loadBalancerLabel = hostnames.KindLabel("LoadBalancer")
	floatingIPLabel   = hostnames.KindLabel("FloatingIP")
)

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
	// add lists the objects of inf; the first of kindLabels an object
	// carries names its owner (a Service in a host namespace carries the
	// Namespace label too, but its owner is the LoadBalancer or
	// FloatingIP).
	add := func(inf cache.SharedIndexInformer, kind string, kindLabels []string, del func(m metav1.Object) func(context.Context, metav1.DeleteOptions) error) {
		for _, obj := range inf.GetStore().List() {
			m, ok := obj.(metav1.Object)
			if !ok || m.GetDeletionTimestamp() != nil {
				continue
			}
			kindLabel := kindLabels[0]
			for _, l := range kindLabels {
				if _, has := m.GetLabels()[l]; has {
					kindLabel = l
					break
				}
			}
			if marks, ok := hostnames.MarksOf(m, kindLabel); ok {
				out = append(out, hostObject{obj: m, kind: kind, marks: marks, namespace: m.GetLabels()[hostnames.NamespaceLabel], delete: del(m)})
			}
		}
	}
	namespaceOnly, networkOnly := []string{hostnames.NamespaceLabel}, []string{hostnames.NetworkLabel}
	host := c.src.Host
	add(c.src.HostNamespaces, "Namespace", namespaceOnly, func(m metav1.Object) func(context.Context, metav1.DeleteOptions) error {
		return func(ctx context.Context, o metav1.DeleteOptions) error {
			return host.CoreV1().Namespaces().Delete(ctx, m.GetName(), o)
		}
	})
	add(c.src.HostRoleBindings, "RoleBinding", namespaceOnly, func(m metav1.Object) func(context.Context, metav1.DeleteOptions) error {
		return func(ctx context.Context, o metav1.DeleteOptions) error {
			return host.RbacV1().RoleBindings(m.GetNamespace()).Delete(ctx, m.GetName(), o)
		}
	})
	add(c.src.HostCUDNs, "ClusterUserDefinedNetwork", networkOnly, func(m metav1.Object) func(context.Context, metav1.DeleteOptions) error {
		return func(ctx context.Context, o metav1.DeleteOptions) error {
			return c.src.HostUDN.K8sV1().ClusterUserDefinedNetworks().Delete(ctx, m.GetName(), o)
		}
	})
	add(c.src.HostEgressIPs, "EgressIP", []string{floatingIPLabel, hostnames.NetworkLabel}, func(m metav1.Object) func(context.Context, metav1.DeleteOptions) error {
		return func(ctx context.Context, o metav1.DeleteOptions) error {
			return c.src.HostEgressIP.K8sV1().EgressIPs().Delete(ctx, m.GetName(), o)
		}
	})
	add(c.src.HostServices, "Service", []string{loadBalancerLabel, floatingIPLabel}, func(m metav1.Object) func(context.Context, metav1.DeleteOptions) error {
		return func(ctx context.Context, o metav1.DeleteOptions) error {
			return host.CoreV1().Services(m.GetNamespace()).Delete(ctx, m.GetName(), o)
		}
	})
	for gvr, inf := range c.src.HostMetalLB {
		client := c.src.HostDynamic.Resource(gvr)
		add(inf, gvr.Resource, []string{""}, func(m metav1.Object) func(context.Context, metav1.DeleteOptions) error {
			return func(ctx context.Context, o metav1.DeleteOptions) error {
				return client.Namespace(m.GetNamespace()).Delete(ctx, m.GetName(), o)
			}
		})
	}
	return out
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
	if c.owners(h.marks.KindLabel).namespaced && h.namespace == "" {
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
	owners := c.owners(h.marks.KindLabel)
	ns := ""
	if owners.namespaced {
		ns = h.namespace
	}
	obj, err = owners.store.Get(genericapirequest.WithNamespace(tenancy.WithTenant(ctx, t.Name), ns), h.marks.Name, &metav1.GetOptions{})
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

// ownerSource is where the tenant objects that own host objects of one
// kind label are: the storage, and the informer of the same objects.
type ownerSource struct {
	store      *genericregistry.Store
	informer   cache.SharedIndexInformer
	namespaced bool
}

// owners returns where the owners of host objects marked with kindLabel
// are: Networks, LoadBalancers, FloatingIPs, or Namespaces.
func (c *Checker) owners(kindLabel string) ownerSource {
	switch kindLabel {
	case hostnames.NetworkLabel:
		return ownerSource{c.src.Storage.Networks.Store, c.src.Networks, false}
	case loadBalancerLabel:
		return ownerSource{c.src.Storage.LoadBalancers.Store, c.src.LoadBalancers, true}
	case floatingIPLabel:
		return ownerSource{c.src.Storage.FloatingIPs.Store, c.src.FloatingIPs, true}
	}
	return ownerSource{c.src.Storage.Namespaces.Store, c.src.Namespaces, false}
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
	owners := c.owners(h.marks.KindLabel)
	ns := ""
	if owners.namespaced {
		ns = h.namespace
	}
	obj, exists, err = owners.informer.GetStore().GetByKey(controller.ObjectKey(t.Name, ns, h.marks.Name))
	if err != nil || !exists {
		return false
	}
	m, err := meta.Accessor(obj)
	return err == nil && m.GetUID() == h.marks.OwnerUID
}
