package loadbalancer

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Reasons of a LoadBalancer's Ready condition besides the syncer's common ones.
const (
	// ReasonAddressPending: the host Service exists; MetalLB has not assigned its address yet.
	ReasonAddressPending = "AddressPending"
	// ReasonAddressAssigned: MetalLB assigned the address.
	ReasonAddressAssigned = "AddressAssigned"
)

// takenRecheck is how often an object whose host name is taken looks again.
const takenRecheck = 10 * time.Second

// outcome is what a reconcile found, for the status.
type outcome struct {
	synced          bool
	reason, message string
	service         *corev1.Service
}

func (c *Controller) reconcile(ctx context.Context, key queue.Key) error {
	logger := klog.FromContext(ctx).WithValues("tenant", key.Tenant, "namespace", key.Namespace, "loadBalancer", key.Name)
	ctx = klog.NewContext(ctx, logger)
	t, ok := c.tenant(key.Tenant)
	if !ok {
		return nil // no Tenant, or one being deleted: offboarding and the checker remove what is left
	}
	hostNS := hostnames.Namespace(t.Name, t.UID, key.Namespace)
	obj, exists, err := c.src.LoadBalancers.GetStore().GetByKey(controller.ObjectKey(key.Tenant, key.Namespace, key.Name))
	if err != nil {
		return err
	}
	if !exists {
		return c.removeService(ctx, t, key, hostNS)
	}
	lb := obj.(*tenant.LoadBalancer)
	var out outcome
	if err := c.src.Health.Err(); err != nil {
		out = outcome{reason: controller.ReasonHostUnreachable, message: err.Error()}
	} else if out, err = c.sync(ctx, t, lb, key.Namespace, hostNS); err != nil {
		out = outcome{reason: controller.ReasonHostError, message: err.Error()}
		if controller.Unreachable(err) {
			out.reason = controller.ReasonHostUnreachable
		}
	}
	if serr := c.setStatus(ctx, t, key.Namespace, lb, out); serr != nil {
		return serr
	}
	if err != nil {
		return err
	}
	switch {
	case !out.synced && out.reason == controller.ReasonHostNameTaken:
		return controller.Requeue(takenRecheck, "%s", out.message)
	case !out.synced && out.reason == controller.ReasonWaiting:
		return controller.Requeue(time.Second, "%s", out.message)
	}
	return nil
}

func (c *Controller) tenant(name string) (*tenant.Tenant, bool) {
	obj, exists, err := c.src.Tenants.GetStore().GetByKey(name)
	if err != nil || !exists {
		return nil, false
	}
	t := obj.(*tenant.Tenant)
	return t, t.DeletionTimestamp == nil
}

func (c *Controller) sync(ctx context.Context, t *tenant.Tenant, lb *tenant.LoadBalancer, ns, hostNS string) (outcome, error) {
	if msg := c.src.HostNamespaceNotReady(t, ns, hostNS); msg != "" {
		return outcome{reason: controller.ReasonWaiting, message: msg}, nil
	}
	got, err := c.services.Ensure(ctx, Service(t, lb, ns, hostNS), Marks(t, lb))
	if err != nil {
		return outcome{}, err
	}
	return outcome{synced: got.Synced, reason: got.Reason, message: got.Message, service: got.Obj}, nil
}

// removeService deletes the host Service of a LoadBalancer that no longer
// exists, if the syncer made it for a LoadBalancer of that name that is
// not in storage either (the informer may lag behind one just created again).
func (c *Controller) removeService(ctx context.Context, t *tenant.Tenant, key queue.Key, hostNS string) error {
	name := hostnames.LoadBalancerService(key.Name)
	have, ok := c.services.Cached(hostNS, name)
	if !ok {
		return nil
	}
	found, ours := hostnames.MarksOf(have, LoadBalancerLabel)
	if !ours || found.TenantUID != t.UID || found.Name != key.Name {
		return nil
	}
	obj, err := c.src.Storage.LoadBalancers.Store.Get(genericapirequest.WithNamespace(tenancy.WithTenant(ctx, t.Name), key.Namespace), key.Name, &metav1.GetOptions{})
	switch {
	case err == nil && obj.(*tenant.LoadBalancer).UID == found.OwnerUID:
		return nil
	case err != nil && !apierrors.IsNotFound(err):
		return err
	}
	removed, err := c.services.Remove(ctx, hostNS, name, found)
	if removed {
		klog.FromContext(ctx).Info("Deleted the host Service of a deleted LoadBalancer", "service", hostNS+"/"+name)
	}
	return err
}

// setStatus records out in the LoadBalancer's status: the address MetalLB
// assigned, HostSynced, and Ready (synced, and the address assigned).
func (c *Controller) setStatus(ctx context.Context, t *tenant.Tenant, ns string, lb *tenant.LoadBalancer, out outcome) error {
	reason, message := out.reason, out.message
	hostName := hostnames.Namespace(t.Name, t.UID, ns) + "/" + hostnames.LoadBalancerService(lb.Name)
	if out.synced {
		reason, message = controller.ReasonSynced, "Service "+hostName+" matches"
	}
	address := ""
	if out.service != nil {
		address = AssignedAddress(out.service)
	}
	ready, readyReason, readyMessage := out.synced && address != "", reason, message
	switch {
	case ready:
		readyReason, readyMessage = ReasonAddressAssigned, "MetalLB assigned "+address+" to Service "+hostName
	case out.synced:
		readyReason, readyMessage = ReasonAddressPending, "MetalLB has not assigned an address to Service "+hostName+" yet"
	}
	mutate := func(obj runtime.Object) bool {
		live := obj.(*tenant.LoadBalancer)
		if live.UID != lb.UID {
			return false
		}
		s := &live.Status
		gen := live.Generation
		changed := s.ObservedGeneration != gen
		s.ObservedGeneration = gen
		// Unreachable host: keep the last address known.
		if out.synced || out.reason != controller.ReasonHostUnreachable {
			changed = changed || s.Address != address
			s.Address = address
		}
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionHostSynced, out.synced, reason, message) || changed
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionReady, ready, readyReason, readyMessage) || changed
		return changed
	}
	if !mutate(lb.DeepCopy()) {
		return nil
	}
	return controller.UpdateStatus(ctx, c.src.Storage.LoadBalancers.StatusStore, t.Name, ns, lb.Name, mutate)
}
