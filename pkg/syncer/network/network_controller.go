package network

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
const ControllerName = "tenant-networks"

// Controller reconciles tenant Networks with their host networks.
type Controller struct {
	*controller.Worker
	src *controller.Sources
}

// New returns a Controller reading and writing through src.
func New(src *controller.Sources) (*Controller, error) {
	c := &Controller{src: src}
	c.Worker = controller.NewWorker(ControllerName, (&controller.Reconciler[*tenant.Network, details]{
		Kind: "network", Tenants: src.Tenants, Objects: src.Networks, Health: src.Health,
		Sync: c.sync, Remove: c.removeHostObjects, SetStatus: c.setStatus,
	}).Reconcile)
	src.Orphans.Register(hostnames.NetworkLabel,
		controller.Owners{Store: src.Storage.Networks.Store, Informer: src.Networks},
		src.ClusterUserDefinedNetworks().Objects(), src.EgressIPs().Objects())

	// Networks: a new spec (the NAT gateway turned on or off comes with its
	// address) or a delete. Their status is mostly the syncer's own output.
	if err := c.Watch(src.Networks, cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueNetwork,
		UpdateFunc: func(old, obj interface{}) {
			o, n := old.(*tenant.Network), obj.(*tenant.Network)
			if o.Generation != n.Generation || o.Status.NATGatewayIP != n.Status.NATGatewayIP ||
				!reflect.DeepEqual(o.Labels, n.Labels) || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) {
				c.enqueueNetwork(obj)
			}
		},
		DeleteFunc: c.enqueueNetwork,
	}); err != nil {
		return nil, err
	}
	// A Network lists the Namespaces attached to it; spec.network of a
	// Namespace never changes, so only its arrival and departure count.
	if err := c.Watch(src.Namespaces, cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueNamespace,
		DeleteFunc: c.enqueueNamespace,
	}); err != nil {
		return nil, err
	}
	// A Tenant re-created under the same name, or one being deleted.
	if err := c.Watch(src.Tenants, cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj interface{}) {
			o, n := old.(*tenant.Tenant), obj.(*tenant.Tenant)
			if o.UID != n.UID || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) {
				c.enqueueTenant(n.Name)
			}
		},
	}); err != nil {
		return nil, err
	}
	// Drift or deletion of a host object, and OVN-Kubernetes' status
	// reports on the ClusterUserDefinedNetworks.
	host := cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueHostObject,
		UpdateFunc: func(_, obj interface{}) { c.enqueueHostObject(obj) },
		DeleteFunc: c.enqueueHostObject,
	}
	for _, inf := range []cache.SharedIndexInformer{src.HostCUDNs, src.HostEgressIPs} {
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

// EnqueueAll queues every tenant Network: after the host comes back, and
// on the periodic check.
func (c *Controller) EnqueueAll() {
	for _, obj := range c.src.Networks.GetStore().List() {
		c.enqueueNetwork(obj)
	}
}

func (c *Controller) enqueueNetwork(obj interface{}) {
	if n, ok := controller.Unwrap(obj).(*tenant.Network); ok {
		// The cached copy's namespace is its tenant.
		c.Queue.Add(queue.Key{Tenant: n.Namespace, Name: n.Name})
	}
}

func (c *Controller) enqueueNamespace(obj interface{}) {
	if ns, ok := controller.Unwrap(obj).(*tenant.Namespace); ok && ns.Spec.Network != "" {
		c.Queue.Add(queue.Key{Tenant: ns.Namespace, Name: ns.Spec.Network})
	}
}

func (c *Controller) enqueueTenant(t string) {
	networks, err := c.src.Networks.GetIndexer().ByIndex(controller.ByTenant, t)
	if err != nil {
		klog.Background().Error(err, "Listing tenant networks", "tenant", t)
		return
	}
	for _, n := range networks {
		c.enqueueNetwork(n)
	}
}

func (c *Controller) enqueueHostObject(obj interface{}) {
	l := controller.LabelsOf(obj)
	if l[hostnames.TenantLabel] != "" && l[hostnames.NetworkLabel] != "" {
		c.Queue.Add(queue.Key{Tenant: l[hostnames.TenantLabel], Name: l[hostnames.NetworkLabel]})
	}
}
