package vrfpeering

import (
	"reflect"

	frrv1beta1 "github.com/metallb/frr-k8s/api/v1beta1"
	rav1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/routeadvertisements/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// ControllerName names the controller's queue and logs.
const ControllerName = "tenant-vrfpeerings"

// Controller reconciles VRFPeerings with their RouteAdvertisements and
// FRRConfigurations. Its queue keys are the peering's tenant and name.
type Controller struct {
	*controller.Worker
	src       *controller.Sources
	kinds     *hostkinds.Catalogue
	keys      *controller.Keys[*tenant.VRFPeering]
	reconcile controller.ReconcileFunc
}

// New returns a Controller reading and writing through src, making the
// host objects of kinds.
func New(src *controller.Sources, kinds *hostkinds.Catalogue) (*Controller, error) {
	c := &Controller{src: src, kinds: kinds}
	r := &controller.Reconciler[*tenant.VRFPeering, *rav1.RouteAdvertisements]{
		Kind: "vrfpeering", Tenants: src.Tenants, Objects: src.VRFPeerings, Status: controller.StatusWriter[*tenant.VRFPeering]{Store: src.Storage.VRFPeerings.Status, Written: src.WrittenOf(src.VRFPeerings)}, Health: src.Health, ProviderObjects: true,
		Bound: c.bound, RemoveOrphan: c.removeOrphan, Sync: c.sync, Remove: c.removeHostObjects, SetStatus: c.setStatus,
		Recheck: recheck,
	}
	c.reconcile = r.Reconcile
	c.Worker = controller.NewWorker(ControllerName, c.reconcile)
	// VRFPeerings are indexed ByTenant by the tenant they name.
	c.keys = &controller.Keys[*tenant.VRFPeering]{Worker: c.Worker, Objects: src.VRFPeerings, OwnerLabel: hostnames.VRFPeeringLabel,
		Key: func(p *tenant.VRFPeering) queue.Key { return queue.Key{Tenant: p.Spec.Tenant, Name: p.Name} }}
	src.Orphans.Register(hostnames.VRFPeeringLabel,
		controller.Owners{Store: src.Storage.VRFPeerings.Store, Informer: src.VRFPeerings},
		kinds.RouteAdvertisements.Objects(), kinds.FRRConfigurations(&frrv1beta1.FRRConfigurationSpec{}).Objects())

	peerings := c.keys.ObjectHandler(func(o, n *tenant.VRFPeering) bool {
		return o.Generation != n.Generation || o.Status.TenantUID != n.Status.TenantUID || o.Status.NetworkUID != n.Status.NetworkUID
	})
	// A peering gone may free its Network for a younger one.
	peerings.DeleteFunc = func(obj interface{}) {
		c.keys.Enqueue(obj)
		if p, ok := controller.Unwrap(obj).(*tenant.VRFPeering); ok {
			c.keys.EnqueueTenant(p.Spec.Tenant, func(o *tenant.VRFPeering) bool { return o.Spec.Network == p.Spec.Network })
		}
	}
	if err := c.Watch(src.VRFPeerings, peerings); err != nil {
		return nil, err
	}
	// The peered Network: its subnets (the default advertisement), its
	// departure or a new one of the same name.
	if err := c.Watch(src.Networks, controller.OnChange(c.enqueueNetwork, func(o, n *tenant.Network) bool {
		return o.UID != n.UID || !reflect.DeepEqual(o.Spec.Subnets, n.Spec.Subnets)
	})); err != nil {
		return nil, err
	}
	if err := c.Watch(src.Tenants, controller.OnChange(c.keys.EnqueueTenantOf, func(o, n *tenant.Tenant) bool {
		return o.UID != n.UID
	})); err != nil {
		return nil, err
	}
	// Drift or deletion of a host object, OVN-Kubernetes' verdict on the
	// RouteAdvertisements.
	if err := c.keys.WatchHost(src.HostRouteAdvertisements, src.HostFRRConfigurations); err != nil {
		return nil, err
	}
	// The sessions frr-k8s reports.
	if err := c.Watch(src.HostBGPSessionStates, controller.OnEvery(c.enqueueSession)); err != nil {
		return nil, err
	}
	c.keys.QueueOnHealthChange(src.Health, r)
	return c, nil
}

// EnqueueAll queues every VRFPeering.
func (c *Controller) EnqueueAll() { c.keys.EnqueueAll() }

// AllKeys returns the key of every VRFPeering (the periodic check).
func (c *Controller) AllKeys() []queue.Key { return c.keys.All() }

func (c *Controller) enqueueNetwork(obj interface{}) {
	if n, ok := controller.Unwrap(obj).(*tenant.Network); ok {
		// The cached copy's namespace is its tenant.
		c.keys.EnqueueTenant(n.Namespace, func(p *tenant.VRFPeering) bool { return p.Spec.Network == n.Name })
	}
}

// enqueueSession queues the peerings of the VRF a BGP session is in.
func (c *Controller) enqueueSession(obj interface{}) {
	u, ok := controller.Unwrap(obj).(*unstructured.Unstructured)
	if !ok {
		return
	}
	vrf, _, _ := unstructured.NestedString(u.Object, "status", "vrf")
	if vrf == "" {
		return
	}
	peerings, err := c.src.VRFPeerings.GetIndexer().ByIndex(controller.ByVRF, vrf)
	if err != nil {
		return
	}
	for _, p := range peerings {
		c.keys.Enqueue(p)
	}
}
