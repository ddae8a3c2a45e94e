package floatingip

import (
	egressipv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	corev1 "k8s.io/api/core/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// ControllerName names the controller's queue and logs.
const ControllerName = "tenant-floatingips"

// Controller reconciles tenant FloatingIPs with their host Services and EgressIPs.
type Controller struct {
	*controller.Worker
	src       *controller.Sources
	keys      *controller.Keys[*tenant.FloatingIP]
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
	c.keys = &controller.Keys[*tenant.FloatingIP]{Worker: c.Worker, Objects: src.FloatingIPs, OwnerLabel: FloatingIPLabel, Namespaced: true,
		Key: func(o *tenant.FloatingIP) queue.Key { return controller.CachedKey(o.Labels, o.Namespace, o.Name) }}
	src.Orphans.Register(FloatingIPLabel,
		controller.Owners{Store: src.Storage.FloatingIPs.Store, Informer: src.FloatingIPs, Namespaced: true},
		c.services.Objects(), c.egressIPs.Objects())
	if err := c.keys.WatchObjects(func(o, n *tenant.FloatingIP) bool {
		return controller.SpecOrLabelsChanged(o, n) || o.Status.Address != n.Status.Address
	}); err != nil {
		return nil, err
	}
	// A FloatingIP waits for its host namespace.
	if err := c.keys.WatchNamespaceStatus(src.Namespaces); err != nil {
		return nil, err
	}
	if err := c.keys.WatchTenants(src.Tenants, controller.TenantReplacedOrLeaving); err != nil {
		return nil, err
	}
	// Drift, deletion, and the address MetalLB writes into the status.
	if err := c.keys.WatchHost(src.HostServices, src.HostEgressIPs); err != nil {
		return nil, err
	}
	c.keys.EnqueueAllOnHealthChange(src.Health)
	return c, nil
}

// EnqueueAll queues every tenant FloatingIP.
func (c *Controller) EnqueueAll() { c.keys.EnqueueAll() }
