package hostclaim

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// ClassControllerName names the class controller's queue and logs.
const ClassControllerName = "tenant-hostclasses"

// ReasonCounted: the class's servers are counted.
const ReasonCounted = "Counted"

// Classes reports in each HostClass's status its servers: how many, how
// many free and claimed, and the values of its tenant labels.
type Classes struct {
	*controller.Worker
	src  *controller.Sources
	keys *controller.Keys[*tenant.HostClass]
	// hosts reads the servers, through a Controller with no worker.
	hosts *Controller
}

// classCount is what a class's sync counted.
type classCount struct {
	hosts, available, claimed int32
	labels                    []tenant.HostClassLabel
}

// NewClasses returns the class controller reading and writing through src.
func NewClasses(src *controller.Sources) (*Classes, error) {
	c := &Classes{src: src, hosts: &Controller{src: src}}
	c.Worker = controller.NewWorker(ClassControllerName, (&controller.Reconciler[*tenant.HostClass, classCount]{
		Kind: "hostClass", Tenants: src.Tenants, Objects: src.HostClasses, ProviderObjects: true,
		Status: controller.StatusWriter[*tenant.HostClass]{Store: src.Storage.HostClasses.Status}, Health: src.Health,
		Sync: c.sync, Remove: func(context.Context, *tenant.Tenant, queue.Key) error { return nil }, SetStatus: c.setStatus,
		Conditions: func(o *tenant.HostClass) []metav1.Condition { return o.Status.Conditions },
	}).Reconcile)
	c.keys = &controller.Keys[*tenant.HostClass]{Worker: c.Worker, Objects: src.HostClasses,
		Key: func(o *tenant.HostClass) queue.Key { return queue.Key{Name: o.Name} }}
	if err := c.keys.WatchObjects(func(o, n *tenant.HostClass) bool { return controller.SpecOrLabelsChanged(o, n) }); err != nil {
		return nil, err
	}
	if _, err := src.HostBareMetalHosts.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { c.enqueueOfNamespace(obj) },
		UpdateFunc: func(_, obj interface{}) { c.enqueueOfNamespace(obj) },
		DeleteFunc: func(obj interface{}) { c.enqueueOfNamespace(obj) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// enqueueOfNamespace queues the classes of the namespace of server obj.
func (c *Classes) enqueueOfNamespace(obj interface{}) {
	bmh, err := fromUnstructured(obj)
	if err != nil {
		return
	}
	for _, o := range c.src.HostClasses.GetStore().List() {
		if hc, ok := o.(*tenant.HostClass); ok && hc.Spec.HostNamespace == bmh.Namespace {
			c.keys.Enqueue(hc)
		}
	}
}

// EnqueueAll queues every HostClass.
func (c *Classes) EnqueueAll() { c.keys.EnqueueAll() }

// AllKeys returns the key of every HostClass (the periodic check).
func (c *Classes) AllKeys() []queue.Key { return c.keys.All() }

func (c *Classes) sync(_ context.Context, _ *tenant.Tenant, class *tenant.HostClass, _ queue.Key) (controller.Outcome[classCount], error) {
	if !c.src.HostBareMetalHosts.HasSynced() {
		return controller.Outcome[classCount]{Reason: ReasonNoBareMetalHosts, Message: "the host does not serve Metal3 BareMetalHosts (yet)",
			RequeueAfter: orphanPeriod, Background: true}, nil
	}
	hosts, err := c.hosts.classHosts(class)
	if err != nil {
		return controller.Outcome[classCount]{}, err
	}
	var n classCount
	values := map[string][]string{}
	for _, h := range hosts {
		n.hosts++
		switch {
		case h.Spec.ConsumerRef != nil:
			n.claimed++
		case free(h):
			n.available++
		}
		for _, k := range class.Spec.TenantLabels {
			if v, ok := h.Labels[k]; ok && !slices.Contains(values[k], v) {
				values[k] = append(values[k], v)
			}
		}
	}
	for _, k := range class.Spec.TenantLabels {
		v := values[k]
		slices.Sort(v)
		n.labels = append(n.labels, tenant.HostClassLabel{Key: k, Values: v})
	}
	return controller.Outcome[classCount]{Synced: true, Reason: ReasonCounted,
		Message: fmt.Sprintf("%d servers in namespace %s match the class", n.hosts, class.Spec.HostNamespace), Details: n}, nil
}

func (c *Classes) setStatus(_ *tenant.Tenant, _ queue.Key, _ *tenant.HostClass, out controller.Outcome[classCount]) func(*tenant.HostClass) bool {
	return func(live *tenant.HostClass) bool {
		s := &live.Status
		gen := live.Generation
		changed := s.ObservedGeneration != gen
		s.ObservedGeneration = gen
		if out.Synced {
			d := out.Details
			changed = changed || s.Hosts != d.hosts || s.Available != d.available || s.Claimed != d.claimed || !reflect.DeepEqual(s.Labels, d.labels)
			s.Hosts, s.Available, s.Claimed, s.Labels = d.hosts, d.available, d.claimed, d.labels
		}
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionHostSynced, out.Synced, out.Reason, out.Message) || changed
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionReady, out.Synced, out.Reason, out.Message) || changed
		return changed
	}
}
