package loadbalancer

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/publicdns"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// ControllerName names the controller's queue and logs.
const ControllerName = "tenant-loadbalancers"

// Controller reconciles tenant LoadBalancers with their host Services.
type Controller struct {
	*controller.Worker
	src      *controller.Sources
	kinds    *hostkinds.Catalogue
	keys     *controller.Keys[*tenant.LoadBalancer]
	services controller.HostKind[*corev1.Service]
	// names names the assigned addresses in the public DNS zone.
	names *publicdns.Names
}

// New returns a Controller reading and writing through src, making the
// host objects of kinds, and naming the addresses MetalLB assigns in
// publicDNSZone ("": none).
func New(src *controller.Sources, kinds *hostkinds.Catalogue, publicDNSZone string) (*Controller, error) {
	c := &Controller{src: src, kinds: kinds, services: kinds.Services, names: publicdns.New(src, publicDNSZone)}
	r := &controller.Reconciler[*tenant.LoadBalancer, details]{
		Kind: "loadBalancer", Tenants: src.Tenants, Objects: src.LoadBalancers, Status: controller.StatusWriter[*tenant.LoadBalancer]{Store: src.Storage.LoadBalancers.Status, Written: src.WrittenOf(src.LoadBalancers)}, Health: src.Health,
		Sync: c.sync, Remove: c.removeService, SetStatus: c.setStatus,
		Conditions: func(o *tenant.LoadBalancer) []metav1.Condition { return o.Status.Conditions },
	}
	c.Worker = controller.NewWorker(ControllerName, r.Reconcile)
	c.keys = &controller.Keys[*tenant.LoadBalancer]{Worker: c.Worker, Objects: src.LoadBalancers, OwnerLabel: LoadBalancerLabel, Namespaced: true,
		Key: func(o *tenant.LoadBalancer) queue.Key { return controller.CachedKey(o.Labels, o.Namespace, o.Name) }}
	src.Orphans.Register(LoadBalancerLabel,
		controller.Owners{Store: src.Storage.LoadBalancers.Store, Informer: src.LoadBalancers, Namespaced: true},
		c.services.Objects())
	if err := c.keys.WatchObjects(func(o, n *tenant.LoadBalancer) bool { return controller.SpecOrLabelsChanged(o, n) }); err != nil {
		return nil, err
	}
	// A LoadBalancer waits for its host namespace.
	if err := c.keys.WatchNamespaceStatus(src.Namespaces); err != nil {
		return nil, err
	}
	if err := c.keys.WatchTenants(src.Tenants, controller.TenantReplacedOrLeaving); err != nil {
		return nil, err
	}
	// Drift, deletion, and the address MetalLB writes into the status.
	if err := c.keys.WatchHost(src.HostServices); err != nil {
		return nil, err
	}
	// A FloatingIP of the same name may hold the name, or give it up.
	if err := c.names.Watch(c.Worker, publicdns.LoadBalancer); err != nil {
		return nil, err
	}
	c.keys.QueueOnHealthChange(src.Health, r)
	return c, nil
}

// EnqueueAll queues every tenant LoadBalancer.
func (c *Controller) EnqueueAll() { c.keys.EnqueueAll() }

// AllKeys returns the key of every tenant LoadBalancer (the periodic check).
func (c *Controller) AllKeys() []queue.Key { return c.keys.All() }
