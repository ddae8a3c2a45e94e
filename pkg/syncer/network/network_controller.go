package network

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// ControllerName names the controller's queue and logs.
const ControllerName = "tenant-networks"

// Controller reconciles tenant Networks with their host networks, and
// each tenant's service network (the connection of its Shared Networks)
// under the keys that name a tenant alone.
type Controller struct {
	*controller.Worker
	src   *controller.Sources
	kinds *hostkinds.Catalogue
	keys  *controller.Keys[*tenant.Network]

	mu sync.Mutex
	// serviceNetworks are, by tenant, what the last reconcile of its
	// service network found.
	serviceNetworks map[string]serviceNetwork
	// subnets are the connect subnets of the Tenants' service networks
	// (by UID), as this term claimed them or found them given back.
	subnets map[types.UID]heldSubnet
}

// New returns a Controller reading and writing through src, making the
// host objects of kinds.
func New(src *controller.Sources, kinds *hostkinds.Catalogue) (*Controller, error) {
	c := &Controller{src: src, kinds: kinds, serviceNetworks: map[string]serviceNetwork{}, subnets: map[types.UID]heldSubnet{}}
	r := &controller.Reconciler[*tenant.Network, details]{
		Kind: "network", Tenants: src.Tenants, Objects: src.Networks, Status: controller.StatusWriter[*tenant.Network]{Store: src.Storage.Networks.Status, Written: src.WrittenOf(src.Networks)}, Health: src.Health,
		Sync: c.sync, Remove: c.removeHostObjects, SetStatus: c.setStatus, SyncTenant: c.syncServiceNetwork,
		Conditions: func(o *tenant.Network) []metav1.Condition { return o.Status.Conditions },
	}
	c.Worker = controller.NewWorker(ControllerName, r.Reconcile)
	// The cached copy's namespace is its tenant.
	c.keys = &controller.Keys[*tenant.Network]{Worker: c.Worker, Objects: src.Networks, OwnerLabel: hostnames.NetworkLabel,
		Key: func(n *tenant.Network) queue.Key { return queue.Key{Tenant: n.Namespace, Name: n.Name} }}
	src.Orphans.Register(hostnames.NetworkLabel,
		controller.Owners{Store: src.Storage.Networks.Store, Informer: src.Networks},
		kinds.ClusterUserDefinedNetworks.Objects(), kinds.EgressIPs.Objects())
	// A service network's connection is its Tenant's own object (no kind
	// label), as a provider service's connection is.
	src.Orphans.Register("", controller.Owners{Store: src.Storage.Tenants.Store, Informer: src.Tenants},
		kinds.ClusterNetworkConnects(nil).Objects())

	// Networks: a new spec (the NAT gateway turned on or off comes with its
	// address) or a delete. Their status is mostly the syncer's own output.
	if err := c.keys.WatchObjects(func(o, n *tenant.Network) bool {
		return controller.SpecOrLabelsChanged(o, n) || o.Status.NATGatewayIP != n.Status.NATGatewayIP
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
	if err := c.keys.WatchTenants(src.Tenants, controller.TenantReplacedOrLeaving); err != nil {
		return nil, err
	}
	// The service networks: a Network shared or no longer, a Tenant
	// leaving (its connection goes), and the connections' drift, deletion
	// and OVN-Kubernetes' reports on them.
	if err := c.Watch(src.Networks, c.serviceNetworkHandler()); err != nil {
		return nil, err
	}
	if err := c.Watch(src.Tenants, controller.OnChange(c.enqueueTenantServiceNetwork, controller.TenantReplacedOrLeaving)); err != nil {
		return nil, err
	}
	if err := c.WatchAll(controller.OnEvery(c.enqueueConnect), src.HostClusterNetworkConnects); err != nil {
		return nil, err
	}
	// OVN-Kubernetes connects a network once it is rendered into a namespace.
	if err := c.Watch(src.HostNetworkAttachments, cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueAttachment, DeleteFunc: c.enqueueAttachment,
	}); err != nil {
		return nil, err
	}
	// Drift or deletion of a host object, and OVN-Kubernetes' status
	// reports on the ClusterUserDefinedNetworks (which change with every
	// namespace the network gets: paced like the Namespaces).
	if err := c.WatchAll(controller.OnEvery(c.paceHostObject), src.HostCUDNs, src.HostEgressIPs); err != nil {
		return nil, err
	}
	controller.OnHealthChange(src.Health, c.Queue, c.EnqueueAll, r)
	return c, nil
}

// EnqueueAll queues AllKeys: when the host becomes unreachable.
func (c *Controller) EnqueueAll() { c.Queue.AddBackgroundAll(c.AllKeys()) }

// AllKeys returns the key of every tenant Network, and of the service
// network of every tenant that shares Services or has a connection on the
// host.
func (c *Controller) AllKeys() []queue.Key { return append(c.keys.All(), c.serviceNetworkKeys()...) }

// enqueueTenantServiceNetwork queues the service network of the Tenant of
// an informer event: one re-created under the same name, leaving, or gone.
func (c *Controller) enqueueTenantServiceNetwork(obj interface{}) {
	if t, ok := controller.Unwrap(obj).(*tenant.Tenant); ok {
		c.Queue.Add(queue.Key{Tenant: t.Name})
	}
}

// enqueueNamespace queues, paced, the Network a tenant Namespace attaches
// to: a tenant creating Namespaces fast has its Network's list written a
// few times a second, not once per Namespace.
func (c *Controller) enqueueNamespace(obj interface{}) {
	if ns, ok := controller.Unwrap(obj).(*tenant.Namespace); ok && ns.Spec.Network != "" {
		c.Pace(queue.Key{Tenant: ns.Namespace, Name: ns.Spec.Network})
	}
}

// paceHostObject queues, paced, the Network a host object was made for.
func (c *Controller) paceHostObject(obj interface{}) {
	if key, ok := c.keys.HostKey(obj); ok {
		c.Pace(key)
	}
}
