// Package providerservice makes ProviderServices real on the host: for
// every tenant offered a service, a ClusterNetworkConnect per provider
// network connects the tenant's networks with it, and an alias Service in
// each of the tenant's host namespaces names the provider's Service.
package providerservice

import (
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/sets"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	hostapi "tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// ControllerName names the controller's queue and logs.
const ControllerName = "tenant-providerservices"

// Resync is how often a ProviderService is resolved again when nothing
// it depends on changed: its Service and the provider's networks are
// watched (a change resolves it at once); the labels of the Service's
// namespace, which pick its provider network, are not.
var Resync = 5 * time.Minute

// Controller reconciles ProviderServices. Its queue holds two kinds of
// keys: a tenant's (Tenant set, Name empty), whose reconcile makes that
// tenant's connections and aliases for every service offered to it, and a
// ProviderService's (Tenant empty), whose reconcile resolves the Service
// and its provider network and writes the status from what the tenants'
// reconciles found.
type Controller struct {
	*controller.Worker
	src       *controller.Sources
	kinds     *hostkinds.Catalogue
	reconcile controller.ReconcileFunc
	// namespaces writes the ProviderServices condition of tenant Namespaces.
	namespaces controller.StatusWriter[*tenant.Namespace]
	// ClusterDomain is the cluster's DNS domain, for the alias Services.
	ClusterDomain string

	// provider watches the provider's Services and networks that the
	// ProviderServices name.
	provider *providerObjects

	mu sync.Mutex
	// offers are the resolved ProviderServices, by name.
	offers map[string]*offer
	// results are, by ProviderService and tenant, what the tenant's last
	// reconcile found.
	results map[string]map[string]tenant.ProviderServiceTenant
	// resolved are the ProviderServices resolved since the start.
	resolved sets.Set[string]
}

// New returns a Controller reading and writing through src, making the
// host objects of kinds.
func New(src *controller.Sources, kinds *hostkinds.Catalogue, clusterDomain string) (*Controller, error) {
	if clusterDomain == "" {
		clusterDomain = "cluster.local"
	}
	c := &Controller{src: src, kinds: kinds, ClusterDomain: clusterDomain, offers: map[string]*offer{}, results: map[string]map[string]tenant.ProviderServiceTenant{}, resolved: sets.New[string]()}
	c.namespaces = controller.StatusWriter[*tenant.Namespace]{Store: src.Storage.Namespaces.Status, Written: src.WrittenOf(src.Namespaces), Probe: namespaceProbe}
	r := &controller.Reconciler[*tenant.ProviderService, *offer]{
		Kind: "providerservice", Tenants: src.Tenants, Objects: src.ProviderServices, Status: controller.StatusWriter[*tenant.ProviderService]{Store: src.Storage.ProviderServices.Status, Written: src.WrittenOf(src.ProviderServices)}, Health: src.Health, ProviderObjects: true,
		SyncTenant: c.syncTenant, Sync: c.syncService, Remove: c.removeService, SetStatus: c.setStatus, AfterStatus: c.releaseNetworksAfter,
		KeepStatusOnError: true,
	}
	c.reconcile = r.Reconcile
	c.Worker = controller.NewWorker(ControllerName, c.reconcile)
	c.provider = newProviderObjects(src, func(names ...string) {
		if len(names) == 0 {
			for _, obj := range src.ProviderServices.GetStore().List() {
				c.enqueueService(obj)
			}
			return
		}
		for _, name := range names {
			c.Queue.Add(queue.Key{Name: name})
		}
	})

	if err := c.Watch(src.ProviderServices, controller.OnChange(c.enqueueService, func(o, n *tenant.ProviderService) bool {
		return o.Generation != n.Generation || !reflect.DeepEqual(o.Status.Offers, n.Status.Offers)
	})); err != nil {
		return nil, err
	}
	if err := c.Watch(src.Tenants, controller.OnChange(c.enqueueTenantObject, func(o, n *tenant.Tenant) bool {
		return o.UID != n.UID || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil)
	})); err != nil {
		return nil, err
	}
	// A tenant's host namespaces hold the aliases, its networks are connected.
	if err := c.Watch(src.Namespaces, controller.OnChange(c.enqueueNamespace, func(o, n *tenant.Namespace) bool {
		return o.Status.HostNamespace != n.Status.HostNamespace || o.Status.Phase != n.Status.Phase
	})); err != nil {
		return nil, err
	}
	if err := c.Watch(src.Networks, controller.OnChange(c.enqueueOwner, func(o, n *tenant.Network) bool {
		return o.Status.HostNetwork != n.Status.HostNetwork
	})); err != nil {
		return nil, err
	}
	// Drift or deletion of a connection or an alias, a host namespace
	// becoming ready, and OVN-Kubernetes' reports on the connections.
	if err := c.WatchAll(controller.OnEvery(c.enqueueHostObject), src.HostClusterNetworkConnects, src.HostServices, src.HostNamespaces); err != nil {
		return nil, err
	}
	controller.OnHealthChange(src.Health, c.Queue, c.EnqueueAll, r)
	return c, nil
}

// EnqueueAll queues AllKeys in the background, a window at a time,
// behind the keys events queue.
func (c *Controller) EnqueueAll() { c.Queue.AddBackgroundAll(c.AllKeys()) }

// AllKeys returns the key of every ProviderService, of every tenant, and
// of every tenant that still has connections on the host.
func (c *Controller) AllKeys() []queue.Key {
	var keys []queue.Key
	for _, obj := range c.src.ProviderServices.GetStore().List() {
		if ps, ok := obj.(*tenant.ProviderService); ok {
			keys = append(keys, queue.Key{Name: ps.Name})
		}
	}
	for _, name := range c.src.Tenants.GetStore().ListKeys() {
		keys = append(keys, queue.Key{Tenant: name})
	}
	for _, t := range c.src.HostClusterNetworkConnects.GetIndexer().ListIndexFuncValues(controller.ByTenant) {
		keys = append(keys, queue.Key{Tenant: t})
	}
	return keys
}

func (c *Controller) enqueueService(obj interface{}) {
	if ps, ok := controller.Unwrap(obj).(*tenant.ProviderService); ok {
		c.Queue.Add(queue.Key{Name: ps.Name})
	}
}

func (c *Controller) enqueueTenantObject(obj interface{}) {
	if t, ok := controller.Unwrap(obj).(*tenant.Tenant); ok {
		c.Queue.Add(queue.Key{Tenant: t.Name})
	}
}

// enqueueOwner queues, paced, the tenant of a cached tenant Namespace or
// Network (the cached copy's namespace is its tenant).
func (c *Controller) enqueueOwner(obj interface{}) {
	switch o := controller.Unwrap(obj).(type) {
	case *tenant.Namespace:
		c.Pace(queue.Key{Tenant: o.Namespace})
	case *tenant.Network:
		c.Pace(queue.Key{Tenant: o.Namespace})
	}
}

// enqueueNamespace queues the tenant of a tenant Namespace while some
// service is offered, or when the Namespace still reports on aliases:
// without offers a Namespace has nothing to be given (a withdrawn offer
// queues the tenants it was made to itself).
func (c *Controller) enqueueNamespace(obj interface{}) {
	ns, ok := controller.Unwrap(obj).(*tenant.Namespace)
	if ok && (c.anyOffer() || meta.FindStatusCondition(ns.Status.Conditions, tenant.ConditionProviderServices) != nil) {
		c.enqueueOwner(obj)
	}
}

// enqueueHostObject queues the tenant of a connection or an alias, and,
// while some service is offered, of a host namespace.
func (c *Controller) enqueueHostObject(obj interface{}) {
	l := controller.LabelsOf(obj)
	t := l[hostnames.TenantLabel]
	switch {
	case t == "":
	case l[hostnames.ConnectLabel] != "" || l[hostnames.ProviderServiceLabel] != "":
		c.Queue.Add(queue.Key{Tenant: t})
	default:
		if _, ok := controller.Unwrap(obj).(*hostapi.HeldNamespace); ok && c.anyOffer() {
			c.Queue.Add(queue.Key{Tenant: t})
		}
	}
}

func (c *Controller) anyOffer() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.offers) > 0
}
