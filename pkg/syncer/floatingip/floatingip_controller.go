package floatingip

import (
	"context"
	"reflect"

	egressipv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// ControllerName names the controller's queue and logs.
const ControllerName = "tenant-floatingips"

// Controller reconciles tenant FloatingIPs with their host Services and EgressIPs.
type Controller struct {
	*controller.Worker
	src       *controller.Sources
	services  controller.HostKind[*corev1.Service]
	egressIPs controller.HostKind[*egressipv1.EgressIP]
}

// New returns a Controller reading and writing through src.
func New(src *controller.Sources) (*Controller, error) {
	c := &Controller{src: src, services: src.Services(), egressIPs: src.EgressIPs()}
	c.Worker = controller.NewWorker(ControllerName, (&controller.Reconciler[*tenant.FloatingIP, details]{
		Kind: "floatingIP", Tenants: src.Tenants, Objects: src.FloatingIPs, Health: src.Health,
		Sync: c.sync, Remove: c.removeGone, SetStatus: c.setStatus,
	}).Reconcile)
	src.Orphans.Register(FloatingIPLabel,
		controller.Owners{Store: src.Storage.FloatingIPs.Store, Informer: src.FloatingIPs, Namespaced: true},
		c.services.Objects(), c.egressIPs.Objects())
	if err := c.Watch(src.FloatingIPs, cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueue,
		UpdateFunc: func(old, obj interface{}) {
			o, n := old.(*tenant.FloatingIP), obj.(*tenant.FloatingIP)
			if o.Generation != n.Generation || o.Status.Address != n.Status.Address || !reflect.DeepEqual(o.Labels, n.Labels) ||
				(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) {
				c.enqueue(obj)
			}
		},
		DeleteFunc: c.enqueue,
	}); err != nil {
		return nil, err
	}
	// A FloatingIP waits for its host namespace.
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
	host := cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueHostObject,
		UpdateFunc: func(_, obj interface{}) { c.enqueueHostObject(obj) },
		DeleteFunc: c.enqueueHostObject,
	}
	for _, inf := range []cache.SharedIndexInformer{src.HostServices, src.HostEgressIPs} {
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

// EnqueueAll queues every tenant FloatingIP.
func (c *Controller) EnqueueAll() {
	for _, obj := range c.src.FloatingIPs.GetStore().List() {
		c.enqueue(obj)
	}
}

func (c *Controller) enqueue(obj interface{}) {
	if fip, ok := controller.Unwrap(obj).(*tenant.FloatingIP); ok {
		c.Queue.Add(controller.CachedKey(fip.Labels, fip.Namespace, fip.Name))
	}
}

func (c *Controller) enqueueNamespace(ns *tenant.Namespace) {
	c.enqueueTenant(ns.Namespace, ns.Name)
}

// enqueueTenant queues the FloatingIPs of tenant t (in tenant Namespace
// ns only, if set).
func (c *Controller) enqueueTenant(t, ns string) {
	objs, err := c.src.FloatingIPs.GetIndexer().ByIndex(controller.ByTenant, t)
	if err != nil {
		klog.Background().Error(err, "Listing tenant floating IPs", "tenant", t)
		return
	}
	for _, obj := range objs {
		fip := obj.(*tenant.FloatingIP)
		if k := controller.CachedKey(fip.Labels, fip.Namespace, fip.Name); ns == "" || k.Namespace == ns {
			c.Queue.Add(k)
		}
	}
}

func (c *Controller) enqueueHostObject(obj interface{}) {
	l := controller.LabelsOf(obj)
	if l[hostnames.TenantLabel] != "" && l[FloatingIPLabel] != "" && l[hostnames.NamespaceLabel] != "" {
		c.Queue.Add(queue.Key{Tenant: l[hostnames.TenantLabel], Namespace: l[hostnames.NamespaceLabel], Name: l[FloatingIPLabel]})
	}
}
