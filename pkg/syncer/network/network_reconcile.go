package network

import (
	"context"
	"fmt"
	"sort"

	egressipv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Reasons of the Network's conditions besides the syncer's common ones.
const (
	// ReasonNetworkPending: OVN-Kubernetes has not reported on the host network yet.
	ReasonNetworkPending = "NetworkPending"
	// ReasonNetworkNotCreated: the Network is synced, but OVN-Kubernetes
	// reports that the network is not (yet) created.
	ReasonNetworkNotCreated = "NetworkNotCreated"
	// ReasonNATGatewayNotAssigned: the network is created, but OVN-Kubernetes
	// has not assigned the NAT gateway's address to an egress node.
	ReasonNATGatewayNotAssigned = "NATGatewayNotAssigned"
)

// details are what a sync reports besides the conditions: the host
// network as last seen, when it is ours.
type details struct {
	cudn *udnv1.ClusterUserDefinedNetwork
	// egress is the NAT gateway's EgressIP as synced, when it is enabled.
	egress *egressipv1.EgressIP
}

type outcome = controller.Outcome[details]

// sync makes the host network, and the NAT gateway's EgressIP, match n.
func (c *Controller) sync(ctx context.Context, t *tenant.Tenant, n *tenant.Network, _ queue.Key) (outcome, error) {
	if len(n.Spec.Subnets) == 0 {
		return outcome{Reason: controller.ReasonWaiting, Message: "the network has no subnets yet"}, nil
	}
	out, err := c.syncCUDN(ctx, t, n)
	if err != nil || !out.Synced {
		return out, err
	}
	gw, err := c.syncNATGateway(ctx, t, n)
	if err != nil {
		return outcome{}, err
	}
	gw.Details.cudn = out.Details.cudn
	return gw, nil
}

func (c *Controller) syncCUDN(ctx context.Context, t *tenant.Tenant, n *tenant.Network) (outcome, error) {
	got, err := c.kinds.ClusterUserDefinedNetworks.Ensure(ctx, ClusterUserDefinedNetwork(t, n), Marks(t, n))
	if err != nil || !got.Synced {
		return outcome{Reason: got.Reason, Message: got.Message}, err
	}
	return outcome{Synced: true, Details: details{cudn: got.Obj}}, nil
}

// syncNATGateway makes the EgressIP of n's NAT gateway exist exactly while
// the gateway is enabled and has its address.
func (c *Controller) syncNATGateway(ctx context.Context, t *tenant.Tenant, n *tenant.Network) (outcome, error) {
	egressIPs := c.kinds.EgressIPs
	name := hostnames.NATGatewayEgressIP(hostnames.ClusterUserDefinedNetwork(t.UID, n.Name))
	if n.Spec.NATGateway == nil || !n.Spec.NATGateway.Enabled {
		removed, err := egressIPs.Remove(ctx, "", name, Marks(t, n))
		if removed {
			klog.FromContext(ctx).Info("Deleted the NAT gateway's EgressIP", "egressIP", name)
		}
		return outcome{Synced: err == nil}, err
	}
	if n.Status.NATGatewayIP == "" {
		return outcome{Reason: controller.ReasonWaiting, Message: "the NAT gateway has no address yet"}, nil
	}
	got, err := egressIPs.Ensure(ctx, NATGatewayEgressIP(t, n, n.Status.NATGatewayIP), Marks(t, n))
	if err != nil {
		return outcome{}, err
	}
	out := outcome{Synced: got.Synced, Reason: got.Reason, Message: got.Message}
	if got.Synced {
		out.Details.egress = got.Obj
	}
	return out, nil
}

// removeHostObjects deletes the host network and EgressIP of a tenant
// Network that no longer exists, if the syncer made them for a Network of
// that name of this Tenant, and the Network is not in storage either.
func (c *Controller) removeHostObjects(ctx context.Context, t *tenant.Tenant, key queue.Key) error {
	name := key.Name
	cudnName := hostnames.ClusterUserDefinedNetwork(t.UID, name)
	var owners []types.UID
	var cudn *udnv1.ClusterUserDefinedNetwork
	var egress *egressipv1.EgressIP
	if obj, exists, err := c.src.HostCUDNs.GetStore().GetByKey(cudnName); err != nil {
		return err
	} else if exists {
		cudn = obj.(*udnv1.ClusterUserDefinedNetwork)
	}
	if obj, exists, err := c.src.HostEgressIPs.GetStore().GetByKey(hostnames.NATGatewayEgressIP(cudnName)); err != nil {
		return err
	} else if exists {
		egress = obj.(*egressipv1.EgressIP)
	}
	mine := func(m metav1.Object) bool {
		found, ours := hostnames.MarksOf(m, hostnames.NetworkLabel)
		if ours && found.Tenant == t.Name && found.TenantUID == t.UID && found.Name == name && m.GetDeletionTimestamp() == nil {
			owners = append(owners, found.OwnerUID)
			return true
		}
		return false
	}
	deleteCUDNToo, deleteEgressToo := cudn != nil && mine(cudn), egress != nil && mine(egress)
	if !deleteCUDNToo && !deleteEgressToo {
		return nil
	}
	// The informer may lag behind a Network just created again: only a
	// Network that is not in storage either is gone.
	live, err := c.getNetwork(ctx, t.Name, name)
	if err != nil {
		return err
	}
	for _, uid := range owners {
		if live != nil && live.UID == uid {
			return nil
		}
	}
	if deleteEgressToo {
		found, _ := hostnames.MarksOf(egress, hostnames.NetworkLabel)
		if _, err := c.kinds.EgressIPs.Remove(ctx, "", egress.Name, found); err != nil {
			return err
		}
		klog.FromContext(ctx).Info("Deleted the NAT gateway's EgressIP of a deleted Network", "egressIP", egress.Name)
	}
	if deleteCUDNToo {
		found, _ := hostnames.MarksOf(cudn, hostnames.NetworkLabel)
		if _, err := c.kinds.ClusterUserDefinedNetworks.Remove(ctx, "", cudn.Name, found); err != nil {
			return err
		}
		klog.FromContext(ctx).Info("Deleted host network of a deleted Network", "clusterUserDefinedNetwork", cudn.Name)
	}
	return nil
}

func (c *Controller) getNetwork(ctx context.Context, t, name string) (*tenant.Network, error) {
	obj, err := c.src.Storage.Networks.Store.Get(tenancy.WithTenant(ctx, t), name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return obj.(*tenant.Network), nil
}

// attached lists, sorted, the tenant's Namespaces whose primary network is n.
func (c *Controller) attached(t string, n string) []string {
	objs, err := c.src.Namespaces.GetIndexer().ByIndex(controller.ByTenant, t)
	if err != nil {
		return nil
	}
	var out []string
	for _, obj := range objs {
		if ns := obj.(*tenant.Namespace); ns.Spec.Network == n {
			out = append(out, ns.Name)
		}
	}
	sort.Strings(out)
	return out
}

// setStatus records out in the Network's status: the host network's name,
// the subnets in effect, the attached Namespaces, HostSynced, the
// conditions OVN-Kubernetes reports on the host network, ServicesShared
// while the Network shares its Services (from what its tenant's service
// network last found), and Ready (synced, and the network created; the
// service network is not part of it).
func (c *Controller) setStatus(t *tenant.Tenant, _ queue.Key, n *tenant.Network, out outcome) func(*tenant.Network) bool {
	reason, message := out.Reason, out.Message
	hostName := hostnames.ClusterUserDefinedNetwork(t.UID, n.Name)
	if out.Synced {
		reason, message = controller.ReasonSynced, "ClusterUserDefinedNetwork "+hostName+" matches"
		if n.Spec.NATGateway != nil && n.Spec.NATGateway.Enabled {
			message += "; EgressIP " + hostnames.NATGatewayEgressIP(hostName) + " gives the NAT gateway " + n.Status.NATGatewayIP
		}
	}
	namespaces := c.attached(t.Name, n.Name)
	unnamed := unreportable(t, namespaces)
	shared, sharedFound := c.serviceNetworkOf(t)
	return func(live *tenant.Network) bool {
		s := &live.Status
		gen := live.Generation
		changed := s.HostNetwork != hostName || !apiequality.Semantic.DeepEqual(s.Namespaces, namespaces) ||
			!apiequality.Semantic.DeepEqual(s.Subnets, live.Spec.Subnets) || s.ObservedGeneration != gen
		s.HostNetwork, s.Namespaces, s.ObservedGeneration = hostName, namespaces, gen
		s.Subnets = append([]string(nil), live.Spec.Subnets...)
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionHostSynced, out.Synced, reason, message) || changed
		if out.Details.cudn != nil {
			changed = mirrorConditions(&s.Conditions, gen, out.Details.cudn, unnamed) || changed
		} else if out.Synced || meta.FindStatusCondition(s.Conditions, tenant.ConditionNetworkCreated) == nil {
			changed = meta.SetStatusCondition(&s.Conditions, metav1.Condition{
				Type: tenant.ConditionNetworkCreated, Status: metav1.ConditionUnknown, Reason: ReasonNetworkPending,
				Message: "the host network is not synced", ObservedGeneration: gen,
			}) || changed
		}
		egressAssigned, egressMessage := true, ""
		if live.Spec.NATGateway != nil && live.Spec.NATGateway.Enabled {
			var egressChanged bool
			egressAssigned, egressMessage, egressChanged = hostkinds.SetEgressCondition(&s.Conditions, gen, out.Details.egress)
			changed = egressChanged || changed
		} else {
			changed = meta.RemoveStatusCondition(&s.Conditions, tenant.ConditionEgressAssigned) || changed
		}
		if live.Spec.SharesServices() {
			ok, sReason, sMessage := servicesShared(shared, sharedFound, live.Name, out.Synced)
			changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionServicesShared, ok, sReason, sMessage) || changed
		} else {
			changed = meta.RemoveStatusCondition(&s.Conditions, tenant.ConditionServicesShared) || changed
		}
		ready, readyReason, readyMessage := out.Synced, reason, message
		if created := meta.FindStatusCondition(s.Conditions, tenant.ConditionNetworkCreated); out.Synced && (created == nil || created.Status != metav1.ConditionTrue) {
			ready, readyReason = false, ReasonNetworkNotCreated
			readyMessage = "OVN-Kubernetes has not reported ClusterUserDefinedNetwork " + hostName + " created"
			if created != nil && created.Message != "" {
				readyMessage += ": " + created.Message
			}
		} else if ready && !egressAssigned {
			ready, readyReason, readyMessage = false, ReasonNATGatewayNotAssigned, "NAT gateway: "+egressMessage
		}
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionReady, ready, readyReason, readyMessage) || changed
		return changed
	}
}

// maxMessage bounds a mirrored condition's message (metav1.Condition allows 32768).
const maxMessage = 32768

// mirrored is the Network's copy of a host network condition, made valid
// for the Network's status: the host's status is not the tenant's to
// break. A condition whose type or status cannot be carried over is
// dropped; a reason that does not validate becomes "Reported".
func mirrored(hc metav1.Condition, gen int64) (metav1.Condition, bool) {
	c := metav1.Condition{Type: hc.Type, Status: hc.Status, Reason: hc.Reason, Message: hc.Message, ObservedGeneration: gen}
	if len(c.Message) > maxMessage {
		c.Message = c.Message[:maxMessage]
	}
	valid := func(c metav1.Condition) bool {
		c.LastTransitionTime = metav1.Now() // SetStatusCondition sets it
		return len(metav1validation.ValidateConditions([]metav1.Condition{c}, field.NewPath("conditions"))) == 0
	}
	if !valid(c) {
		c.Reason = "Reported"
		if !valid(c) {
			return metav1.Condition{}, false
		}
	}
	return c, true
}

// ownConditions are the Network's conditions the syncer sets itself; the
// host network's conditions of these types are not mirrored.
var ownConditions = map[string]bool{tenant.ConditionHostSynced: true, tenant.ConditionReady: true, tenant.ConditionEgressAssigned: true,
	tenant.ConditionServicesShared: true}

// createdReport is how OVN-Kubernetes' cluster-manager begins its
// NetworkCreated message, before it names, between brackets and separated
// by ", ", every namespace the network is rendered into.
const createdReport = "NetworkAttachmentDefinition has been created in following namespaces: ["

// reportable is how many namespaces of the longest names (63 characters)
// cluster-manager's NetworkCreated message can always name.
var reportable = (maxMessage - len(createdReport) - len("]") + len(", ")) / (63 + len(", "))

// unreportable is how many host namespaces network n of tenant t is
// rendered into when cluster-manager's NetworkCreated message naming them
// all (the host namespaces of namespaces, n's Namespaces) would not fit
// in a condition's message, and 0 when it fits. Cluster-manager's status
// write is then refused (the message is too long), and it can no longer
// report anything about the network.
func unreportable(t *tenant.Tenant, namespaces []string) int {
	if len(namespaces) <= reportable {
		return 0
	}
	length := len(createdReport) + len("]") - len(", ")
	for _, ns := range namespaces {
		length += len(hostnames.Namespace(t.Name, t.UID, ns)) + len(", ")
	}
	if length <= maxMessage {
		return 0
	}
	return len(namespaces)
}

// eachAttached is where a Network's user reads what cluster-manager cannot report.
const eachAttached = "each Namespace's NetworkAttached condition says whether that Namespace is attached"

// mirrorConditions copies the conditions OVN-Kubernetes reports on the
// host network (NetworkCreated, and whatever else it reports) onto the
// Network, with their status, reason and message. Until it has reported
// NetworkCreated, that condition is Unknown. When the network is rendered
// into more namespaces than cluster-manager's report can name
// (unreportable, see there), its NetworkCreated keeps the status and
// reason last reported and says that nothing more will be.
func mirrorConditions(conditions *[]metav1.Condition, gen int64, cudn *udnv1.ClusterUserDefinedNetwork, unreportable int) bool {
	changed := false
	reported := false
	cannot := ""
	if unreportable > 0 {
		cannot = fmt.Sprintf("OVN-Kubernetes cannot report on ClusterUserDefinedNetwork %s any longer: its report names every namespace "+
			"the network is rendered into, and the names of these %d do not fit in the %d bytes of a condition's message, so the host refuses it",
			cudn.Name, unreportable, maxMessage)
	}
	for _, hc := range cudn.Status.Conditions {
		if ownConditions[hc.Type] {
			continue
		}
		created := hc.Type == tenant.ConditionNetworkCreated
		reported = reported || created
		c, ok := mirrored(hc, gen)
		if !ok {
			continue
		}
		if created && cannot != "" {
			c.Message = fmt.Sprintf("%s. Its last report stands (%s, %s); %s", cannot, c.Status, c.Reason, eachAttached)
		}
		changed = meta.SetStatusCondition(conditions, c) || changed
	}
	if !reported {
		message := "OVN-Kubernetes has not reported on ClusterUserDefinedNetwork " + cudn.Name + " yet"
		if cannot != "" {
			message = cannot + "; " + eachAttached
		}
		changed = meta.SetStatusCondition(conditions, metav1.Condition{
			Type: tenant.ConditionNetworkCreated, Status: metav1.ConditionUnknown, Reason: ReasonNetworkPending,
			Message: message, ObservedGeneration: gen,
		}) || changed
	}
	return changed
}
