// Package onboarding brings Tenants onto the host and off it again: the
// tenant Namespace "default", the MetalLB pool of the tenant's public IPs
// with its advertisement, the tenant's FlowSchema on the host, its Group
// in the platform's identity layer (OpenShift's, when the host serves
// them), the Tenant's phase and conditions, and, when a
// Tenant is deleted, the removal of everything made for it.
package onboarding

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// ControllerName names the controller's queue and logs.
const ControllerName = "tenants"

// Advertisement says how MetalLB announces tenants' public IPs.
type Advertisement string

// Advertisements.
const (
	AdvertiseL2  Advertisement = "L2"
	AdvertiseBGP Advertisement = "BGP"
)

// Controller reconciles Tenants.
type Controller struct {
	*controller.Worker
	src   *controller.Sources
	kinds *hostkinds.Catalogue
	// Advertise picks the MetalLB advertisement of the tenants' pools.
	Advertise Advertisement
	// FlowSchemas, when set, gives each tenant its FlowSchema on the host;
	// unset, the ones the syncer made are removed.
	FlowSchemas bool

	// status writes the Tenants' statuses.
	status controller.StatusWriter[*tenant.Tenant]
}

// New returns a Controller reading and writing through src, making the
// host objects of kinds.
func New(src *controller.Sources, kinds *hostkinds.Catalogue, advertise Advertisement) (*Controller, error) {
	c := &Controller{src: src, kinds: kinds, Advertise: advertise, FlowSchemas: true,
		status: controller.StatusWriter[*tenant.Tenant]{Store: src.Storage.Tenants.Status, Written: src.WrittenOf(src.Tenants)}}
	r := &controller.Reconciler[*tenant.Tenant, details]{
		Kind: "tenant", Tenants: src.Tenants, Objects: src.Tenants, Status: c.status, Health: src.Health, TenantObjects: true,
		Prepare: c.prepare, Sync: c.sync, Remove: c.gone, SetStatus: c.setStatus,
	}
	c.Worker = controller.NewWorker(ControllerName, r.Reconcile)
	// The MetalLB objects are the Tenant's own (no kind label).
	src.Orphans.Register("", controller.Owners{Store: src.Storage.Tenants.Store, Informer: src.Tenants},
		kinds.MetalLB(controller.IPAddressPools, metalLBKinds[controller.IPAddressPools], nil).Objects(),
		kinds.MetalLB(controller.L2Advertisements, metalLBKinds[controller.L2Advertisements], nil).Objects(),
		kinds.MetalLB(controller.BGPAdvertisements, metalLBKinds[controller.BGPAdvertisements], nil).Objects(),
		kinds.FlowSchemas.Objects(), kinds.Groups.Objects())
	if err := c.Watch(src.Tenants, controller.OnChange(c.enqueueTenant, func(o, n *tenant.Tenant) bool {
		return !onlyUsageChanged(o, n)
	})); err != nil {
		return nil, err
	}
	// A tenant's Namespaces make up its pool's namespaces and its
	// readiness; host objects of the tenant, drift and deletions.
	byLabel := controller.OnEvery(c.enqueueLabelled)
	// Of a tenant Namespace's updates, only a change of its HostSynced
	// condition or its deletion matter to the Tenant.
	if err := c.Watch(src.Namespaces, controller.OnChange(c.enqueueLabelled, func(o, n *tenant.Namespace) bool {
		return hostSynced(o) != hostSynced(n) || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil)
	})); err != nil {
		return nil, err
	}
	// Of a Network's updates, only a change of its HostSynced condition
	// (or of the generation it describes) or of its NAT gateway's address
	// (status.usage.publicIPs) matters to the Tenant.
	if err := c.Watch(src.Networks, controller.OnChange(c.enqueueLabelled, func(o, n *tenant.Network) bool {
		return networkSynced(o) != networkSynced(n) || heldAddress(o) != heldAddress(n)
	})); err != nil {
		return nil, err
	}
	// The namespaces that hold LoadBalancers and FloatingIPs are the ones
	// the pool serves: the first in a namespace waits for the pool to
	// serve it (at once), the last one's going is paced. Of their updates,
	// a change of the address they hold is counted in the Tenant's usage.
	for _, inf := range []cache.SharedIndexInformer{src.LoadBalancers, src.FloatingIPs} {
		if err := c.Watch(inf, cache.ResourceEventHandlerFuncs{
			AddFunc: c.enqueueLabelledNow,
			UpdateFunc: func(old, obj interface{}) {
				if heldAddress(old) != heldAddress(obj) {
					c.enqueueLabelled(obj)
				}
			},
			DeleteFunc: c.enqueueLabelled,
		}); err != nil {
			return nil, err
		}
	}
	// The host ResourceQuotas report the compute usage (status.usage.compute).
	informers := []cache.SharedIndexInformer{src.HostNamespaces, src.HostResourceQuotas, src.HostFlowSchemas}
	for _, gvr := range controller.MetalLBResources {
		informers = append(informers, src.HostMetalLB[gvr])
	}
	if err := c.WatchAll(byLabel, informers...); err != nil {
		return nil, err
	}
	// The tenants' Groups: not watched through the worker (the informer
	// runs only once the host serves Groups, and the worker must not wait
	// for it). Every Tenant is looked at by the periodic check once it
	// has synced.
	if _, err := src.HostGroups.AddEventHandler(byLabel); err != nil {
		return nil, err
	}
	controller.OnHealthChange(src.Health, c.Queue, c.EnqueueAll, r)
	return c, nil
}

// EnqueueAll queues every Tenant in the background, a window at a time,
// behind the keys events queue.
func (c *Controller) EnqueueAll() { c.Queue.AddBackgroundAll(c.AllKeys()) }

// AllKeys returns the key of every Tenant.
func (c *Controller) AllKeys() []queue.Key {
	names := c.src.Tenants.GetStore().ListKeys()
	keys := make([]queue.Key, len(names))
	for i, name := range names {
		keys[i] = queue.Key{Tenant: name}
	}
	return keys
}

// onlyUsageChanged says whether an update of a Tenant changed nothing but
// its quota usage (every create of a tenant object charges it).
func onlyUsageChanged(old, cur *tenant.Tenant) bool {
	// A shallow copy: only its own fields are assigned, nothing it shares
	// with the cached object is written.
	o := *old
	o.Status.Usage, o.ResourceVersion, o.ManagedFields = cur.Status.Usage, cur.ResourceVersion, cur.ManagedFields
	return apiequality.Semantic.DeepEqual(&o, cur)
}

func networkSynced(n *tenant.Network) bool {
	c := meta.FindStatusCondition(n.Status.Conditions, tenant.ConditionHostSynced)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == n.Generation
}

func hostSynced(ns *tenant.Namespace) bool {
	return meta.IsStatusConditionTrue(ns.Status.Conditions, tenant.ConditionHostSynced)
}

func (c *Controller) enqueueTenant(obj interface{}) {
	if t, ok := controller.Unwrap(obj).(*tenant.Tenant); ok {
		c.Queue.Add(queue.Key{Tenant: t.Name})
	}
}

// enqueueLabelledNow queues the tenant of a tenant object at once.
func (c *Controller) enqueueLabelledNow(obj interface{}) {
	if t := controller.LabelsOf(obj)[hostnames.TenantLabel]; t != "" {
		c.Queue.Add(queue.Key{Tenant: t})
	}
}

// enqueueLabelled queues the tenant of a tenant Namespace or Network, or
// of a host object, paced: the Tenant sums up all of them.
func (c *Controller) enqueueLabelled(obj interface{}) {
	if t := controller.LabelsOf(obj)[hostnames.TenantLabel]; t != "" {
		c.Pace(queue.Key{Tenant: t})
	}
}
