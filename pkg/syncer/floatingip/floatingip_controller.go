package floatingip

import (
	egressipv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/publicdns"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// ControllerName names the controller's queue and logs.
const ControllerName = "tenant-floatingips"

// Controller reconciles tenant FloatingIPs with their host Services and EgressIPs.
type Controller struct {
	*controller.Worker
	src       *controller.Sources
	kinds     *hostkinds.Catalogue
	keys      *controller.Keys[*tenant.FloatingIP]
	services  controller.HostKind[*corev1.Service]
	egressIPs controller.HostKind[*egressipv1.EgressIP]
	// names names the held addresses in the public DNS zone.
	names *publicdns.Names
}

// New returns a Controller reading and writing through src, making the
// host objects of kinds, and naming the held addresses in publicDNSZone
// ("": none).
func New(src *controller.Sources, kinds *hostkinds.Catalogue, publicDNSZone string) (*Controller, error) {
	c := &Controller{src: src, kinds: kinds, services: kinds.Services, egressIPs: kinds.EgressIPs, names: publicdns.New(src, publicDNSZone)}
	r := &controller.Reconciler[*tenant.FloatingIP, details]{
		Kind: "floatingIP", Tenants: src.Tenants, Objects: src.FloatingIPs, Status: controller.StatusWriter[*tenant.FloatingIP]{Store: src.Storage.FloatingIPs.Status, Written: src.WrittenOf(src.FloatingIPs)}, Health: src.Health,
		Sync: c.sync, Remove: c.removeGone, SetStatus: c.setStatus,
		Conditions: func(o *tenant.FloatingIP) []metav1.Condition { return o.Status.Conditions },
	}
	c.Worker = controller.NewWorker(ControllerName, r.Reconcile)
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
	// The FloatingIPs of a target settle which one binds it when one of
	// them goes or moves to another target.
	if err := c.Watch(src.FloatingIPs, cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj interface{}) {
			if o, ok := old.(*tenant.FloatingIP); ok && o.Spec.Target != nil {
				if n, ok := obj.(*tenant.FloatingIP); !ok || !tenant.SameTarget(o.Spec.Target, n.Spec.Target) {
					c.enqueueTargeting(o)
				}
			}
		},
		DeleteFunc: func(obj interface{}) {
			if o, ok := controller.Unwrap(obj).(*tenant.FloatingIP); ok && o.Spec.Target != nil {
				c.enqueueTargeting(o)
			}
		},
	}); err != nil {
		return nil, err
	}
	// Targets appearing and going: VirtualMachines (the informer runs once
	// the host serves them, so its handler is not waited for) and their
	// launcher pods, and the pods the syncer bound. A Pod target not bound
	// yet is looked for again every targetRecheck.
	byName := func(m metav1.Object) string { return m.GetName() }
	if _, err := src.HostVirtualMachines.AddEventHandler(c.targetHandler(tenant.FloatingIPTargetVirtualMachine, byName)); err != nil {
		return nil, err
	}
	if err := c.Watch(src.HostLauncherPods, c.targetHandler(tenant.FloatingIPTargetVirtualMachine, func(m metav1.Object) string {
		return m.GetLabels()[hostnames.VirtualMachineLabel]
	})); err != nil {
		return nil, err
	}
	if err := c.Watch(src.HostTargetPods, c.targetHandler(tenant.FloatingIPTargetPod, byName)); err != nil {
		return nil, err
	}
	// A LoadBalancer of the same name may hold the name, or give it up.
	if err := c.names.Watch(c.Worker, publicdns.FloatingIP); err != nil {
		return nil, err
	}
	c.keys.QueueOnHealthChange(src.Health, r)
	return c, nil
}

// enqueueTargeting queues the FloatingIPs of o's namespace with o's target.
func (c *Controller) enqueueTargeting(o *tenant.FloatingIP) {
	key := c.keys.Key(o)
	for _, f := range c.targeting(key.Tenant, key.Namespace, o.Spec.Target.Kind, o.Spec.Target.Name) {
		if f.UID != o.UID {
			c.keys.Enqueue(f)
		}
	}
}

// targetHandler queues, when a host object of a workload of kind (named
// by nameOf) appears, goes or starts being deleted, the FloatingIPs that
// target the workload: those of the tenant Namespace whose host namespace
// it is in.
func (c *Controller) targetHandler(kind tenant.FloatingIPTargetKind, nameOf func(metav1.Object) string) cache.ResourceEventHandlerFuncs {
	enqueue := func(obj interface{}) {
		m, err := meta.Accessor(controller.Unwrap(obj))
		if err != nil {
			return
		}
		nsObj, exists, err := c.src.HostNamespaces.GetStore().GetByKey(m.GetNamespace())
		if err != nil || !exists {
			return
		}
		labels := controller.LabelsOf(nsObj)
		t, ns := labels[hostnames.TenantLabel], labels[hostnames.NamespaceLabel]
		if t == "" || ns == "" {
			return
		}
		for _, f := range c.targeting(t, ns, kind, nameOf(m)) {
			c.keys.Enqueue(f)
		}
	}
	return controller.OnChange(enqueue, func(o, n metav1.Object) bool {
		return (o.GetDeletionTimestamp() == nil) != (n.GetDeletionTimestamp() == nil)
	})
}

// EnqueueAll queues every tenant FloatingIP.
func (c *Controller) EnqueueAll() { c.keys.EnqueueAll() }

// AllKeys returns the key of every tenant FloatingIP (the periodic check).
func (c *Controller) AllKeys() []queue.Key { return c.keys.All() }
