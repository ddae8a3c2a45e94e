// Package hostclaim is the syncer's controller of HostClaims: it binds each
// claim to one free server (Metal3 BareMetalHost) of its class, exactly
// once, through the binding record (pkg/hostbinding); writes the server's
// consumer reference, image, power and cloud-init data (copies of the
// tenant's Secrets, in the provider's namespace); reads the server's state
// back into the claim's status; and, when the claim or its image goes,
// has the server deprovisioned and cleaned before it is bound again.
//
// The tenant sees only its claim: never the server's name, namespace,
// BMC or error messages (which may name the BMC).
package hostclaim

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// ControllerName names the controller's queue and logs.
const ControllerName = "tenant-hostclaims"

// FieldManager is the field manager of the syncer's writes to BareMetalHosts.
const FieldManager = "tenant-apiserver-hostclaims"

// ClaimLabel marks the Secrets the syncer copies for a claimed server
// with the UID of the HostClaim they are for.
const ClaimLabel = "tenant.io/host-claim"

// orphanPeriod is how often servers bound to claims that no longer exist
// are looked for (the claim was deleted while no syncer ran).
const orphanPeriod = 30 * time.Second

// stateRecheck is how often a claim whose server is changing state looks
// again, besides the server's own events.
const stateRecheck = 5 * time.Second

// Controller reconciles HostClaims with the servers they bind.
type Controller struct {
	*controller.Worker
	src  *controller.Sources
	keys *controller.Keys[*tenant.HostClaim]
}

// New returns a Controller reading and writing through src. Without a
// binding record (src.Storage.HostBindings) it binds nothing, and says so
// in the claims' status.
func New(src *controller.Sources) (*Controller, error) {
	c := &Controller{src: src}
	r := &controller.Reconciler[*tenant.HostClaim, details]{
		Kind: "hostClaim", Tenants: src.Tenants, Objects: src.HostClaims,
		Status: controller.StatusWriter[*tenant.HostClaim]{Store: src.Storage.HostClaims.Status, Written: src.WrittenOf(src.HostClaims)}, Health: src.Health,
		Sync: c.sync, Remove: c.removeGone, SetStatus: c.setStatus,
		Conditions: func(o *tenant.HostClaim) []metav1.Condition { return o.Status.Conditions },
	}
	c.Worker = controller.NewWorker(ControllerName, r.Reconcile)
	c.keys = &controller.Keys[*tenant.HostClaim]{Worker: c.Worker, Objects: src.HostClaims, Namespaced: true,
		Key: func(o *tenant.HostClaim) queue.Key { return controller.CachedKey(o.Labels, o.Namespace, o.Name) }}
	if err := c.keys.WatchObjects(func(o, n *tenant.HostClaim) bool { return controller.SpecOrLabelsChanged(o, n) }); err != nil {
		return nil, err
	}
	if err := c.keys.WatchNamespaceStatus(src.Namespaces); err != nil {
		return nil, err
	}
	if err := c.keys.WatchTenants(src.Tenants, controller.TenantReplacedOrLeaving); err != nil {
		return nil, err
	}
	// A server changing state queues its claim; a server coming free
	// queues the pending claims (the informer runs once the host serves
	// BareMetalHosts, so its handler is not waited for).
	if _, err := src.HostBareMetalHosts.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { c.hostChanged(obj) },
		UpdateFunc: func(_, obj interface{}) { c.hostChanged(obj) },
		DeleteFunc: func(obj interface{}) { c.hostChanged(obj) },
	}); err != nil {
		return nil, err
	}
	// A class offered, or its selection changed, may free claims waiting.
	if err := c.Watch(src.HostClasses, cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { c.enqueuePending() },
		UpdateFunc: func(_, _ interface{}) { c.enqueuePending() },
	}); err != nil {
		return nil, err
	}
	c.keys.QueueOnHealthChange(src.Health, r)
	return c, nil
}

// hostChanged queues the claim a server names as its consumer, or, for a
// server with none, every pending claim.
func (c *Controller) hostChanged(obj interface{}) {
	bmh, err := fromUnstructured(obj)
	if err != nil {
		return
	}
	if ref := bmh.Spec.ConsumerRef; ref != nil && ref.Kind == controller.HostClaimConsumerKind {
		if key, ok := c.claimKeyOfHostNamespace(ref.Namespace, ref.Name); ok {
			c.Queue.Add(key)
		}
	}
	if free(bmh) {
		c.enqueuePending()
	}
}

// claimKeyOfHostNamespace returns the key of the claim name in host
// namespace ns, from the host namespace's labels.
func (c *Controller) claimKeyOfHostNamespace(ns, name string) (queue.Key, bool) {
	obj, exists, err := c.src.HostNamespaces.GetStore().GetByKey(ns)
	if err != nil || !exists {
		return queue.Key{}, false
	}
	l := controller.LabelsOf(obj)
	t, tns := l[tenantLabel], l[namespaceLabel]
	if t == "" || tns == "" {
		return queue.Key{}, false
	}
	return queue.Key{Tenant: t, Namespace: tns, Name: name}, true
}

// enqueuePending queues every claim that holds no server.
func (c *Controller) enqueuePending() {
	for _, obj := range c.src.HostClaims.GetStore().List() {
		if hc, ok := obj.(*tenant.HostClaim); ok && hc.Status.Phase == tenant.HostClaimPending {
			c.keys.Enqueue(hc)
		}
	}
}

// EnqueueAll queues every HostClaim.
func (c *Controller) EnqueueAll() { c.keys.EnqueueAll() }

// AllKeys returns the key of every HostClaim (the periodic check).
func (c *Controller) AllKeys() []queue.Key { return c.keys.All() }

// RunOrphans gives back, every orphanPeriod until ctx ends, the servers
// bound to claims that no longer exist: deprovisioned, cleaned, then
// released.
func (c *Controller) RunOrphans(ctx context.Context) {
	if c.src.Storage.HostBindings == nil {
		return
	}
	logger := klog.FromContext(ctx).WithName("hostclaim-orphans")
	t := time.NewTicker(orphanPeriod)
	defer t.Stop()
	for {
		if c.src.HostClaims.HasSynced() && c.src.HostBareMetalHosts.HasSynced() {
			if err := c.releaseOrphans(ctx); err != nil {
				logger.Error(err, "Releasing the servers of deleted HostClaims")
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// releaseOrphans deprovisions, and once cleaned releases, the servers whose
// claims are gone.
func (c *Controller) releaseOrphans(ctx context.Context) error {
	live := map[types.UID]bool{}
	for _, obj := range c.src.HostClaims.GetStore().List() {
		if hc, ok := obj.(*tenant.HostClaim); ok {
			live[hc.UID] = true
		}
	}
	orphans, err := c.src.Storage.HostBindings.Orphans(ctx, func(uid types.UID) bool { return live[uid] })
	if err != nil {
		return err
	}
	for _, b := range orphans {
		if _, err := c.giveBack(ctx, b); err != nil {
			return err
		}
	}
	return nil
}
