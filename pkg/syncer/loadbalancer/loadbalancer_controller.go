package loadbalancer

import (
	"context"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// ControllerName names the controller's queue and logs.
const ControllerName = "tenant-loadbalancers"

// Controller reconciles tenant LoadBalancers with their host Services.
type Controller struct {
	*controller.Worker
	src      *controller.Sources
	services controller.HostKind[*corev1.Service]
}

// New returns a Controller reading and writing through src.
func New(src *controller.Sources) (*Controller, error) {
	c := &Controller{src: src, services: src.Services()}
	c.Worker = controller.NewWorker(ControllerName, (&controller.Reconciler[*tenant.LoadBalancer, details]{
		Kind: "loadBalancer", Tenants: src.Tenants, Objects: src.LoadBalancers, Health: src.Health,
		Sync: c.sync, Remove: c.removeService, SetStatus: c.setStatus,
	}).Reconcile)
	src.Orphans.Register(LoadBalancerLabel,
		controller.Owners{Store: src.Storage.LoadBalancers.Store, Informer: src.LoadBalancers, Namespaced: true},
		c.services.Objects())
	if err := c.Watch(src.LoadBalancers, cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueue,
		UpdateFunc: func(old, obj interface{}) {
			o, n := old.(*tenant.LoadBalancer), obj.(*tenant.LoadBalancer)
			if o.Generation != n.Generation || !reflect.DeepEqual(o.Labels, n.Labels) || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) {
				c.enqueue(obj)
			}
		},
		DeleteFunc: c.enqueue,
	}); err != nil {
		return nil, err
	}
	// A LoadBalancer waits for its host namespace.
	if err := c.Watch(src.Namespaces, cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj interface{}) {
			o, n := old.(*tenant.Namespace), obj.(*tenant.Namespace)
			if o.Status.HostNamespace != n.Status.HostNamespace || o.Status.Phase != n.Status.Phase {
				c.enqueueNamespace(n)
			}
		},
	}); err != nil {
		return nil, err
	}
	if err := c.Watch(src.Tenants, cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj interface{}) {
			o, n := old.(*tenant.Tenant), obj.(*tenant.Tenant)
			if o.UID != n.UID || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) {
				c.enqueueTenant(n.Name, "")
			}
		},
	}); err != nil {
		return nil, err
	}
	// Drift, deletion, and the address MetalLB writes into the status.
	if err := c.Watch(src.HostServices, cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueHostObject,
		UpdateFunc: func(_, obj interface{}) { c.enqueueHostObject(obj) },
		DeleteFunc: c.enqueueHostObject,
	}); err != nil {
		return nil, err
	}
	src.Health.OnChange(func(bool) { c.EnqueueAll() })
	return c, nil
}

// Run reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.Worker.Run(ctx, workers, c.src.Synced()...)
}

// EnqueueAll queues every tenant LoadBalancer.
func (c *Controller) EnqueueAll() {
	for _, obj := range c.src.LoadBalancers.GetStore().List() {
		c.enqueue(obj)
	}
}

func (c *Controller) enqueue(obj interface{}) {
	if lb, ok := controller.Unwrap(obj).(*tenant.LoadBalancer); ok {
		c.Queue.Add(controller.CachedKey(lb.Labels, lb.Namespace, lb.Name))
	}
}

func (c *Controller) enqueueNamespace(ns *tenant.Namespace) {
	c.enqueueTenant(ns.Namespace, ns.Name)
}

// enqueueTenant queues the LoadBalancers of tenant t (in tenant Namespace
// ns only, if set).
func (c *Controller) enqueueTenant(t, ns string) {
	objs, err := c.src.LoadBalancers.GetIndexer().ByIndex(controller.ByTenant, t)
	if err != nil {
		klog.Background().Error(err, "Listing tenant load balancers", "tenant", t)
		return
	}
	for _, obj := range objs {
		lb := obj.(*tenant.LoadBalancer)
		if k := controller.CachedKey(lb.Labels, lb.Namespace, lb.Name); ns == "" || k.Namespace == ns {
			c.Queue.Add(k)
		}
	}
}

func (c *Controller) enqueueHostObject(obj interface{}) {
	l := controller.LabelsOf(obj)
	if l[hostnames.TenantLabel] != "" && l[LoadBalancerLabel] != "" && l[hostnames.NamespaceLabel] != "" {
		c.Queue.Add(queue.Key{Tenant: l[hostnames.TenantLabel], Namespace: l[hostnames.NamespaceLabel], Name: l[LoadBalancerLabel]})
	}
}
