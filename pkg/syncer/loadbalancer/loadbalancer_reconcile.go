package loadbalancer

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/publicdns"
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

// details are what a sync reports besides the conditions: the host
// Service as last seen, when it is ours.
type details struct {
	service *corev1.Service
}

type outcome = controller.Outcome[details]

func (c *Controller) sync(ctx context.Context, t *tenant.Tenant, lb *tenant.LoadBalancer, key queue.Key) (outcome, error) {
	ns, hostNS := key.Namespace, hostnames.Namespace(t.Name, t.UID, key.Namespace)
	if msg := c.src.HostNamespaceNotReady(t, ns, hostNS); msg != "" {
		return outcome{Reason: controller.ReasonWaiting, Message: msg}, nil
	}
	got, err := c.services.Ensure(ctx, Service(t, lb, ns, hostNS), Marks(t, lb))
	if err != nil {
		return outcome{}, err
	}
	return outcome{Synced: got.Synced, Reason: got.Reason, Message: got.Message, Details: details{service: got.Obj}}, nil
}

// removeService deletes the host Service of a LoadBalancer that no longer
// exists, if the syncer made it for a LoadBalancer of that name that is
// not in storage either (the informer may lag behind one just created again).
func (c *Controller) removeService(ctx context.Context, t *tenant.Tenant, key queue.Key) error {
	hostNS := hostnames.Namespace(t.Name, t.UID, key.Namespace)
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
// assigned and its public DNS name, HostSynced, Ready (synced, and the
// address assigned) and DNSNamed.
func (c *Controller) setStatus(t *tenant.Tenant, key queue.Key, lb *tenant.LoadBalancer, out outcome) func(*tenant.LoadBalancer) bool {
	ns := key.Namespace
	reason, message := out.Reason, out.Message
	hostName := hostnames.Namespace(t.Name, t.UID, ns) + "/" + hostnames.LoadBalancerService(lb.Name)
	if out.Synced {
		reason, message = controller.ReasonSynced, "Service "+hostName+" matches"
	}
	address := ""
	if out.Details.service != nil {
		address = hostkinds.AssignedAddress(out.Details.service)
	}
	ready, readyReason, readyMessage := out.Synced && address != "", reason, message
	switch {
	case ready:
		readyReason, readyMessage = ReasonAddressAssigned, "MetalLB assigned "+address+" to Service "+hostName
	case out.Synced:
		readyReason, readyMessage = ReasonAddressPending, "MetalLB has not assigned an address to Service "+hostName+" yet"
	}
	return func(live *tenant.LoadBalancer) bool {
		s := &live.Status
		gen := live.Generation
		changed := s.ObservedGeneration != gen
		s.ObservedGeneration = gen
		// Unreachable host: keep the last address known.
		if out.Synced || out.Reason != controller.ReasonHostUnreachable {
			changed = changed || s.Address != address
			s.Address = address
		}
		// Named with the address it names, in this one write.
		changed = publicdns.Set(&s.DNSName, &s.Conditions, gen, c.names.Of(publicdns.LoadBalancer, key, live, s.Address)) || changed
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionHostSynced, out.Synced, reason, message) || changed
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionReady, ready, readyReason, readyMessage) || changed
		return changed
	}
}
