package vrfpeering

import (
	"context"
	"reflect"

	frrv1beta1 "github.com/metallb/frr-k8s/api/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// ControllerName names the controller's queue and logs.
const ControllerName = "tenant-vrfpeerings"

// Controller reconciles VRFPeerings with their RouteAdvertisements and
// FRRConfigurations. Its queue keys are the peering's tenant and name.
type Controller struct {
	*controller.Worker
	src *controller.Sources
}

// New returns a Controller reading and writing through src.
func New(src *controller.Sources) (*Controller, error) {
	c := &Controller{src: src}
	c.Worker = controller.NewWorker(ControllerName, c.reconcile)
	src.Orphans.Register(hostnames.VRFPeeringLabel,
		controller.Owners{Store: src.Storage.VRFPeerings.Store, Informer: src.VRFPeerings},
		src.RouteAdvertisements().Objects(), src.FRRConfigurationKind(&frrv1beta1.FRRConfigurationSpec{}).Objects())

	if err := c.Watch(src.VRFPeerings, cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueuePeering,
		UpdateFunc: func(old, obj interface{}) {
			o, n := old.(*tenant.VRFPeering), obj.(*tenant.VRFPeering)
			if o.Generation != n.Generation || o.Status.TenantUID != n.Status.TenantUID || o.Status.NetworkUID != n.Status.NetworkUID {
				c.enqueuePeering(obj)
			}
		},
		// A peering gone may free its Network for a younger one.
		DeleteFunc: func(obj interface{}) {
			c.enqueuePeering(obj)
			if p, ok := controller.Unwrap(obj).(*tenant.VRFPeering); ok {
				c.enqueueWhere(p.Spec.Tenant, func(o *tenant.VRFPeering) bool { return o.Spec.Network == p.Spec.Network })
			}
		},
	}); err != nil {
		return nil, err
	}
	// The peered Network: its subnets (the default advertisement), its
	// departure or a new one of the same name.
	if err := c.Watch(src.Networks, cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueNetwork,
		UpdateFunc: func(old, obj interface{}) {
			o, n := old.(*tenant.Network), obj.(*tenant.Network)
			if o.UID != n.UID || !reflect.DeepEqual(o.Spec.Subnets, n.Spec.Subnets) {
				c.enqueueNetwork(obj)
			}
		},
		DeleteFunc: c.enqueueNetwork,
	}); err != nil {
		return nil, err
	}
	if err := c.Watch(src.Tenants, cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) { c.enqueueTenant(controller.Unwrap(obj)) },
		UpdateFunc: func(old, obj interface{}) {
			if old.(*tenant.Tenant).UID != obj.(*tenant.Tenant).UID {
				c.enqueueTenant(obj)
			}
		},
		DeleteFunc: func(obj interface{}) { c.enqueueTenant(controller.Unwrap(obj)) },
	}); err != nil {
		return nil, err
	}
	// Drift or deletion of a host object, OVN-Kubernetes' verdict on the
	// RouteAdvertisements, and the sessions frr-k8s reports.
	host := cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueHostObject,
		UpdateFunc: func(_, obj interface{}) { c.enqueueHostObject(obj) },
		DeleteFunc: c.enqueueHostObject,
	}
	for _, inf := range []cache.SharedIndexInformer{src.HostRouteAdvertisements, src.HostFRRConfigurations} {
		if err := c.Watch(inf, host); err != nil {
			return nil, err
		}
	}
	sessions := cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueSession,
		UpdateFunc: func(_, obj interface{}) { c.enqueueSession(obj) },
		DeleteFunc: c.enqueueSession,
	}
	if err := c.Watch(src.HostBGPSessionStates, sessions); err != nil {
		return nil, err
	}
	src.Health.OnChange(func(bool) { c.EnqueueAll() })
	return c, nil
}

// Run reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.Worker.Run(ctx, workers, c.src.Synced()...)
}

// EnqueueAll queues every VRFPeering.
func (c *Controller) EnqueueAll() {
	for _, obj := range c.src.VRFPeerings.GetStore().List() {
		c.enqueuePeering(obj)
	}
}

func (c *Controller) enqueuePeering(obj interface{}) {
	if p, ok := controller.Unwrap(obj).(*tenant.VRFPeering); ok {
		c.Queue.Add(queue.Key{Tenant: p.Spec.Tenant, Name: p.Name})
	}
}

func (c *Controller) enqueueTenant(obj interface{}) {
	if t, ok := obj.(*tenant.Tenant); ok {
		c.enqueueWhere(t.Name, func(*tenant.VRFPeering) bool { return true })
	}
}

func (c *Controller) enqueueNetwork(obj interface{}) {
	if n, ok := controller.Unwrap(obj).(*tenant.Network); ok {
		// The cached copy's namespace is its tenant.
		c.enqueueWhere(n.Namespace, func(p *tenant.VRFPeering) bool { return p.Spec.Network == n.Name })
	}
}

func (c *Controller) enqueueWhere(t string, match func(*tenant.VRFPeering) bool) {
	peerings, err := c.src.VRFPeerings.GetIndexer().ByIndex(controller.ByTenant, t)
	if err != nil {
		klog.Background().Error(err, "Listing VRF peerings", "tenant", t)
		return
	}
	for _, obj := range peerings {
		if p := obj.(*tenant.VRFPeering); match(p) {
			c.enqueuePeering(p)
		}
	}
}

func (c *Controller) enqueueHostObject(obj interface{}) {
	l := controller.LabelsOf(obj)
	if l[hostnames.TenantLabel] != "" && l[hostnames.VRFPeeringLabel] != "" {
		c.Queue.Add(queue.Key{Tenant: l[hostnames.TenantLabel], Name: l[hostnames.VRFPeeringLabel]})
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
		c.enqueuePeering(p)
	}
}
