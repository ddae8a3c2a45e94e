// Package namespace makes every tenant Namespace real on the host: a host
// namespace named by pkg/hostnames, attached to the tenant's network by
// label, and a RoleBinding that gives the tenant's members the admin role
// in it. It reports the result in the Namespace's status.
package namespace

import (
	"context"
	"reflect"

	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// ControllerName names the controller's queue and logs.
const ControllerName = "tenant-namespaces"

// Controller reconciles tenant Namespaces with their host namespaces.
type Controller struct {
	*controller.Worker
	src *controller.Sources
}

// New returns a Controller reading and writing through src.
func New(src *controller.Sources) (*Controller, error) {
	c := &Controller{src: src}
	c.Worker = controller.NewWorker(ControllerName, (&controller.Reconciler[*tenant.Namespace, details]{
		Kind: "namespace", Tenants: src.Tenants, Objects: src.Namespaces, Health: src.Health,
		Sync: c.sync, Remove: c.removeHostNamespace, SetStatus: c.setStatus,
	}).Reconcile)
	src.Orphans.Register(hostnames.NamespaceLabel,
		controller.Owners{Store: src.Storage.Namespaces.Store, Informer: src.Namespaces},
		src.HostNamespaceKind().Objects(), src.RoleBindings().Objects())

	// Tenant Namespaces: their cached copies carry the tenant in metadata.namespace.
	// Their status is the syncer's own output: a change of it alone (the
	// syncer's last write) needs no reconcile.
	if err := c.Watch(src.Namespaces, cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueNamespace,
		UpdateFunc: func(old, obj interface{}) {
			if o, n := old.(*tenant.Namespace), obj.(*tenant.Namespace); o.Generation != n.Generation ||
				!reflect.DeepEqual(o.Labels, n.Labels) || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) {
				c.enqueueNamespace(obj)
			}
		},
		DeleteFunc: c.enqueueNamespace,
	}); err != nil {
		return nil, err
	}
	// A Tenant's members are the subjects of its RoleBindings, its Pod
	// Security level is on every host namespace; a Tenant being deleted
	// hands its namespaces over to offboarding. Nothing else
	// of a Tenant matters here: most of its updates (quota usage on every
	// create, its conditions) would otherwise re-queue every Namespace of
	// the tenant, and a tenant's new Namespace would wait behind them.
	if err := c.Watch(src.Tenants, cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj interface{}) {
			o, n := old.(*tenant.Tenant), obj.(*tenant.Tenant)
			if o.UID != n.UID || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) ||
				!reflect.DeepEqual(o.Spec.Members, n.Spec.Members) || o.Spec.PodSecurity != n.Spec.PodSecurity {
				c.enqueueTenant(obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	// Any change to a host object made for a Namespace, drift or deletion,
	// brings the Namespace back in line.
	host := cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueHostObject,
		UpdateFunc: func(_, obj interface{}) { c.enqueueHostObject(obj) },
		DeleteFunc: c.enqueueHostObject,
	}
	for _, inf := range []cache.SharedIndexInformer{src.HostNamespaces, src.HostRoleBindings} {
		if err := c.Watch(inf, host); err != nil {
			return nil, err
		}
	}
	src.Health.OnChange(func(bool) { c.EnqueueAll() })
	return c, nil
}

// Run reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.Worker.Run(ctx, workers, c.src.Synced()...)
}

// EnqueueAll queues every tenant Namespace: after the host comes back, and
// on the periodic check.
func (c *Controller) EnqueueAll() {
	for _, obj := range c.src.Namespaces.GetStore().List() {
		c.enqueueNamespace(obj)
	}
}

func (c *Controller) enqueueNamespace(obj interface{}) {
	if ns, ok := controller.Unwrap(obj).(*tenant.Namespace); ok {
		// The cached copy's namespace is its tenant.
		c.Queue.Add(queue.Key{Tenant: ns.Namespace, Name: ns.Name})
	}
}

func (c *Controller) enqueueTenant(obj interface{}) {
	t, ok := obj.(*tenant.Tenant)
	if !ok {
		return
	}
	namespaces, err := c.src.Namespaces.GetIndexer().ByIndex(controller.ByTenant, t.Name)
	if err != nil {
		klog.Background().Error(err, "Listing tenant namespaces", "tenant", t.Name)
		return
	}
	for _, ns := range namespaces {
		c.enqueueNamespace(ns)
	}
}

func (c *Controller) enqueueHostObject(obj interface{}) {
	l := controller.LabelsOf(obj)
	if l[hostnames.TenantLabel] != "" && l[hostnames.NamespaceLabel] != "" {
		c.Queue.Add(queue.Key{Tenant: l[hostnames.TenantLabel], Name: l[hostnames.NamespaceLabel]})
	}
}
