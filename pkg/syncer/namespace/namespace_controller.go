// Package namespace makes every tenant Namespace real on the host: a host
// namespace named by pkg/hostnames, attached to the tenant's network by
// label, a RoleBinding that gives the tenant's members the admin role in
// it and, for a tenant with compute quota, a ResourceQuota (the
// namespace's share of the tenant's total) and a LimitRange of container
// defaults; for a tenant of Hard isolation, the annotations that have every
// pod there resolve names through the provider's tenant DNS server. It
// reports the result in the Namespace's status, with whether
// OVN-Kubernetes has attached the host namespace to its network yet.
package namespace

import (
	"reflect"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// ControllerName names the controller's queue and logs.
const ControllerName = "tenant-namespaces"

// Controller reconciles tenant Namespaces with their host namespaces.
type Controller struct {
	*controller.Worker
	src    *controller.Sources
	kinds  *hostkinds.Catalogue
	keys   *controller.Keys[*tenant.Namespace]
	shares settle
	drops  drops
	dns    TenantDNS
}

// New returns a Controller reading and writing through src, making the
// host objects of kinds, and naming dns in the host namespaces of tenants
// of Hard isolation.
func New(src *controller.Sources, kinds *hostkinds.Catalogue, dns TenantDNS) (*Controller, error) {
	c := &Controller{src: src, kinds: kinds, dns: dns}
	r := &controller.Reconciler[*tenant.Namespace, details]{
		Kind: "namespace", Tenants: src.Tenants, Objects: src.Namespaces, Status: controller.StatusWriter[*tenant.Namespace]{Store: src.Storage.Namespaces.Status, Written: src.WrittenOf(src.Namespaces), Probe: statusProbe}, Health: src.Health,
		Sync: c.sync, Remove: c.removeHostNamespace, SetStatus: c.setStatus,
		Conditions: func(o *tenant.Namespace) []metav1.Condition { return o.Status.Conditions },
	}
	c.Worker = controller.NewWorker(ControllerName, r.Reconcile)
	// Tenant Namespaces: their cached copies carry the tenant in metadata.namespace.
	c.keys = &controller.Keys[*tenant.Namespace]{Worker: c.Worker, Objects: src.Namespaces, OwnerLabel: hostnames.NamespaceLabel,
		Key: func(ns *tenant.Namespace) queue.Key { return queue.Key{Tenant: ns.Namespace, Name: ns.Name} }}
	src.Orphans.Register(hostnames.NamespaceLabel,
		controller.Owners{Store: src.Storage.Namespaces.Store, Informer: src.Namespaces},
		kinds.HostNamespaces.Objects(), kinds.RoleBindings.Objects(), kinds.ResourceQuotas.Objects(), kinds.LimitRanges.Objects())

	// Their status is the syncer's own output: a change of it alone (the
	// syncer's last write) needs no reconcile.
	if err := c.keys.WatchObjects(func(o, n *tenant.Namespace) bool { return controller.SpecOrLabelsChanged(o, n) }); err != nil {
		return nil, err
	}
	// A Tenant's members are the subjects of its RoleBindings, its Pod
	// Security level and its isolation (the tenant DNS annotations) are
	// on every host namespace; a Tenant being deleted
	// hands its namespaces over to offboarding. Nothing else
	// of a Tenant matters here: most of its updates (quota usage on every
	// create, its conditions) would otherwise re-queue every Namespace of
	// the tenant, and a tenant's new Namespace would wait behind them.
	if err := c.keys.WatchTenants(src.Tenants, func(o, n *tenant.Tenant) bool {
		return controller.TenantReplacedOrLeaving(o, n) ||
			!reflect.DeepEqual(o.Spec.Members, n.Spec.Members) || o.Spec.PodSecurity != n.Spec.PodSecurity ||
			o.Spec.Isolation != n.Spec.Isolation ||
			!apiequality.Semantic.DeepEqual(o.Spec.Quota.Compute, n.Spec.Quota.Compute) ||
			!apiequality.Semantic.DeepEqual(o.Spec.Quota.Objects, n.Spec.Quota.Objects) ||
			!slices.Equal(o.Spec.PriorityClasses, n.Spec.PriorityClasses)
	}); err != nil {
		return nil, err
	}
	// Any change to a host object made for a Namespace, drift or deletion,
	// brings the Namespace back in line.
	if err := c.keys.WatchHost(src.HostNamespaces, src.HostRoleBindings, src.HostLimitRanges, src.HostResourceQuotas); err != nil {
		return nil, err
	}
	// OVN-Kubernetes rendering the Namespace's Network into its host
	// namespace (or the rendering going away) changes NetworkAttached.
	// The attachment carries none of the syncer's labels: its host
	// namespace names the Namespace.
	if err := c.Watch(src.HostNetworkAttachments, controller.OnEvery(func(obj interface{}) {
		m, err := meta.Accessor(controller.Unwrap(obj))
		if err != nil {
			return
		}
		if host, exists, err := src.HostNamespaces.GetStore().GetByKey(m.GetNamespace()); err == nil && exists {
			c.keys.EnqueueHostObject(host)
		}
	})); err != nil {
		return nil, err
	}
	// A ResourceQuota's usage changing (or one coming or going) moves the
	// share of every other host namespace of the tenant: all of them are
	// re-balanced. The syncer's own updates of the shares do not count.
	rebalance := func(obj interface{}) {
		if t := controller.LabelsOf(obj)[hostnames.TenantLabel]; t != "" {
			c.keys.EnqueueTenant(t, nil)
		}
	}
	if err := c.Watch(src.HostResourceQuotas, cache.ResourceEventHandlerFuncs{
		AddFunc: rebalance,
		UpdateFunc: func(old, obj interface{}) {
			o, okOld := old.(*corev1.ResourceQuota)
			n, okNew := obj.(*corev1.ResourceQuota)
			if !okOld || !okNew || n.Name != hostnames.ComputeQuota {
				return
			}
			believed := c.drops.observe(o, n, time.Now())
			if !apiequality.Semantic.DeepEqual(o.Status.Used, n.Status.Used) {
				c.shares.usedChanged(n.Namespace, time.Now())
				rebalance(obj)
			} else if believed {
				rebalance(obj)
			}
		},
		DeleteFunc: func(obj interface{}) {
			if m, err := meta.Accessor(controller.Unwrap(obj)); err == nil {
				c.shares.forget(m.GetNamespace())
				c.drops.forget(m.GetNamespace())
			}
			rebalance(obj)
		},
	}); err != nil {
		return nil, err
	}
	// The host's default PriorityClass is allowed in every host namespace
	// (PriorityClassesAllowed): a class becoming or ceasing to be it
	// changes them all. Adding or removing other classes changes nothing.
	defaultChanged := func(obj interface{}) {
		if pc, ok := controller.Unwrap(obj).(*schedulingv1.PriorityClass); ok && pc.GlobalDefault {
			c.keys.EnqueueAll()
		}
	}
	if err := c.Watch(src.HostPriorityClasses, cache.ResourceEventHandlerFuncs{
		AddFunc:    defaultChanged,
		DeleteFunc: defaultChanged,
		UpdateFunc: func(old, obj interface{}) {
			o, okOld := old.(*schedulingv1.PriorityClass)
			n, okNew := obj.(*schedulingv1.PriorityClass)
			if okOld && okNew && o.GlobalDefault != n.GlobalDefault {
				c.keys.EnqueueAll()
			}
		},
	}); err != nil {
		return nil, err
	}
	c.keys.QueueOnHealthChange(src.Health, r)
	return c, nil
}

// HandOff queues the reconcile of a Namespace this process' storage has
// just created, before the informer shows it (controller.HandOff).
func (c *Controller) HandOff(obj metav1.Object) {
	ns, ok := obj.(*tenant.Namespace)
	if !ok {
		return
	}
	c.src.WrittenOf(c.src.Namespaces).Created(ns) // in the informer's form
	c.Queue.Add(c.keys.Key(ns))
}

// EnqueueAll queues every tenant Namespace: when the host becomes
// unreachable, and when the default PriorityClass changes.
func (c *Controller) EnqueueAll() { c.keys.EnqueueAll() }

// AllKeys returns the key of every tenant Namespace (the periodic check).
func (c *Controller) AllKeys() []queue.Key { return c.keys.All() }
