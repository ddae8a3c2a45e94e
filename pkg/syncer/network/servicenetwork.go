package network

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	cncv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/clusternetworkconnect/v1"
	ovntypes "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// Reasons of a Network's ServicesShared condition besides the syncer's
// common ones (HostError, HostNameTaken, Waiting).
const (
	// ReasonServicesConnected: OVN-Kubernetes accepted the connection of
	// the tenant's Shared networks.
	ReasonServicesConnected = "Connected"
	// ReasonNoOtherSharedNetwork: the network is the tenant's only Shared
	// one, or the only one on a Namespace: there is nothing to share its
	// Services with.
	ReasonNoOtherSharedNetwork = "NoOtherSharedNetwork"
	// ReasonConnectPending: the connection is not made yet, or
	// OVN-Kubernetes has not accepted it, or not given every Shared
	// network on a Namespace its slice of the connect subnet yet.
	ReasonConnectPending = "ConnectPending"
	// ReasonConnectFailed: OVN-Kubernetes refused the connection.
	ReasonConnectFailed = "ConnectFailed"
	// ReasonNoConnectSubnet: no ConnectSubnets AddressPool, or it is full.
	ReasonNoConnectSubnet = "NoConnectSubnet"
	// ReasonNoNamespaces: no Namespace is on the network yet. OVN-Kubernetes
	// finds the networks a connection selects through their renderings
	// into namespaces: one rendered nowhere is not connected (and has no
	// Services to share).
	ReasonNoNamespaces = "NoNamespaces"
)

// noSubnetRecheck is how soon a tenant whose service network found no
// connect subnet looks again: the provider adding or growing a pool
// raises no event the syncer watches.
var noSubnetRecheck = 10 * time.Second

// serviceNetwork is what the last reconcile of a tenant's service network
// found: which of its Networks it connects, and whether OVN-Kubernetes
// accepted the connection, or why not. The Networks' ServicesShared
// conditions are written from it.
type serviceNetwork struct {
	// tenantUID is the UID of the Tenant it was found for.
	tenantUID types.UID
	// connect is the name of the ClusterNetworkConnect.
	connect string
	// networks are the names of the tenant's Shared networks, sorted, and
	// rendered those of them OVN-Kubernetes has rendered into a host
	// namespace (the only ones it can connect).
	networks, rendered []string
	// subnet is the connect subnet, once claimed.
	subnet string
	// connected: the connection exists, OVN-Kubernetes accepted it and
	// connects every network in rendered.
	connected       bool
	reason, message string
}

func (s serviceNetwork) equal(o serviceNetwork) bool {
	return s.tenantUID == o.tenantUID && s.connect == o.connect && slices.Equal(s.networks, o.networks) && slices.Equal(s.rendered, o.rendered) &&
		s.subnet == o.subnet && s.connected == o.connected && s.reason == o.reason && s.message == o.message
}

// ServiceNetworkSelector selects the networks of tenant t's service
// network: its ClusterUserDefinedNetworks that the syncer labelled with
// the connection's name, which it does for the tenant's Shared networks
// only. Both labels are the syncer's (tenants cannot write
// ClusterUserDefinedNetworks), and the connection's name is derived from
// the tenant's UID: no other tenant's network is ever selected.
func ServiceNetworkSelector(t *tenant.Tenant) metav1.LabelSelector {
	return metav1.LabelSelector{MatchLabels: map[string]string{
		hostnames.TenantLabel:         t.Name,
		hostnames.ServiceNetworkLabel: hostnames.ServiceNetworkConnect(t.UID),
	}}
}

// ServiceNetworkConnectSpec is the spec of the ClusterNetworkConnect of
// tenant t's service network: its Shared networks (ServiceNetworkSelector),
// with Service connectivity only (a pod reaches another network's pods
// through a Service, never directly), over connect subnet subnet, each
// network getting a slice of networkPrefix bits.
func ServiceNetworkConnectSpec(t *tenant.Tenant, subnet netip.Prefix, networkPrefix int) cncv1.ClusterNetworkConnectSpec {
	return cncv1.ClusterNetworkConnectSpec{
		NetworkSelectors: ovntypes.NetworkSelectors{{
			NetworkSelectionType: ovntypes.ClusterUserDefinedNetworks,
			ClusterUserDefinedNetworkSelector: &ovntypes.ClusterUserDefinedNetworkSelector{
				NetworkSelector: ServiceNetworkSelector(t),
			},
		}},
		ConnectSubnets: []cncv1.ConnectSubnet{{CIDR: cncv1.CIDR(subnet.String()), NetworkPrefix: int32(networkPrefix)}},
		Connectivity:   []cncv1.ConnectivityType{cncv1.ServiceNetwork},
	}
}

// ServiceNetworkMarks are the marks of the ClusterNetworkConnect of tenant
// t's service network: the Tenant's own object (no kind label), as its
// MetalLB pool is. changedBy is the user who last changed one of the
// Shared networks, whose changes make the connection what it is.
func ServiceNetworkMarks(t *tenant.Tenant, changedBy string) hostnames.Marks {
	return hostnames.Marks{Tenant: t.Name, TenantUID: t.UID, OwnerUID: t.UID, ChangedBy: changedBy}
}

// NewServiceNetworkConnect returns the ClusterNetworkConnect object of
// tenant t's service network with spec, carrying marks.
func NewServiceNetworkConnect(t *tenant.Tenant, spec cncv1.ClusterNetworkConnectSpec, marks hostnames.Marks) (*unstructured.Unstructured, error) {
	u, err := hostkinds.NewMetalLBObject(controller.ClusterNetworkConnects, "ClusterNetworkConnect", "", hostnames.ServiceNetworkConnect(t.UID), spec)
	if err != nil {
		return nil, err
	}
	marks.Apply(u)
	return u, nil
}

// isServiceNetworkConnect says whether ClusterNetworkConnect u, made by
// the syncer for a tenant, is a service network's: a provider service's
// connection names its provider network in hostnames.ConnectLabel.
func isServiceNetworkConnect(u metav1.Object) bool {
	_, provider := u.GetLabels()[hostnames.ConnectLabel]
	return !provider
}

// sharedNetworks are tenant t's Networks that share their Services and
// are there to be connected (subnets assigned, not being deleted), by name.
func (c *Controller) sharedNetworks(t string) ([]*tenant.Network, error) {
	objs, err := c.src.Networks.GetIndexer().ByIndex(controller.ByTenant, t)
	if err != nil {
		return nil, err
	}
	var out []*tenant.Network
	for _, obj := range objs {
		n := obj.(*tenant.Network)
		if n.Spec.SharesServices() && n.DeletionTimestamp == nil && len(n.Spec.Subnets) > 0 {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// rendered says whether OVN-Kubernetes has rendered tn's Network n into
// the host namespace of one of the Namespaces attached to it.
func (c *Controller) rendered(tn *tenant.Tenant, n string) bool {
	cudn := hostnames.ClusterUserDefinedNetwork(tn.UID, n)
	for _, ns := range c.attached(tn.Name, n) {
		if c.src.Attached(hostnames.Namespace(tn.Name, tn.UID, ns), cudn) {
			return true
		}
	}
	return false
}

// lastChangedBy is the user who changed one of networks last.
func lastChangedBy(networks []*tenant.Network) string {
	var at, by string
	for _, n := range networks {
		if a := n.Annotations[hostnames.ChangedAtAnnotation]; a >= at && hostnames.ChangedBy(n) != "" {
			at, by = a, hostnames.ChangedBy(n)
		}
	}
	return by
}

// syncServiceNetwork makes tenant t's service network: one
// ClusterNetworkConnect of its Shared networks while it has at least two,
// none otherwise (and none once the Tenant is gone or being deleted: tn
// is nil). The connect subnet is claimed before the connection is made
// and given back once it is gone from the host. What it found is recorded
// for the networks' ServicesShared conditions.
func (c *Controller) syncServiceNetwork(ctx context.Context, t string, tn *tenant.Tenant) error {
	if tn == nil {
		if _, err := c.removeServiceNetworks(ctx, t, nil, ""); err != nil {
			return err
		}
		c.record(t, nil)
		return nil
	}
	shared, err := c.sharedNetworks(t)
	if err != nil {
		return err
	}
	found := serviceNetwork{tenantUID: tn.UID}
	for _, n := range shared {
		found.networks = append(found.networks, n.Name)
		if c.rendered(tn, n.Name) {
			found.rendered = append(found.rendered, n.Name)
		}
	}
	if len(shared) < 2 {
		present, err := c.removeServiceNetworks(ctx, t, tn, "")
		if err != nil {
			return err
		}
		if !present {
			// Given back once the connection is gone from the host, so
			// that no other connection gets the subnet while it is in use.
			if err := c.releaseServiceNetworkSubnet(ctx, tn); err != nil {
				return err
			}
		}
		found.reason, found.message = ReasonNoOtherSharedNetwork, "no other Network of the tenant has serviceNetwork Shared: there is nothing to share Services with"
		c.record(t, &found)
		return nil
	}
	// Only this Tenant's connection stays (not one of a former tenant of
	// the same name, which the orphan check would otherwise remove).
	if _, err := c.removeServiceNetworks(ctx, t, tn, hostnames.ServiceNetworkConnect(tn.UID)); err != nil {
		return err
	}
	found, err = c.connectServiceNetwork(ctx, tn, shared, found)
	if err != nil {
		return err
	}
	c.record(t, &found)
	switch found.reason {
	case ReasonNoConnectSubnet:
		return controller.Requeue(noSubnetRecheck, "no connect subnet for the service network of tenant %s", t)
	case controller.ReasonWaiting:
		return controller.Requeue(time.Second, "%s", found.message)
	case controller.ReasonHostNameTaken:
		return controller.Requeue(noSubnetRecheck, "%s", found.message)
	}
	return nil
}

// connectServiceNetwork makes the ClusterNetworkConnect of tn's service
// network over shared, and completes found with what became of it.
func (c *Controller) connectServiceNetwork(ctx context.Context, tn *tenant.Tenant, shared []*tenant.Network, found serviceNetwork) (serviceNetwork, error) {
	name := hostnames.ServiceNetworkConnect(tn.UID)
	found.connect = name
	subnets := c.src.Storage.ConnectSubnets
	if subnets == nil {
		found.reason, found.message = ReasonNoConnectSubnet, "this server runs without IPAM: the connection has no subnet"
		return found, nil
	}
	block, networkPrefix, err := c.claimServiceNetworkSubnet(ctx, tn)
	if err != nil {
		found.reason, found.message = ReasonNoConnectSubnet, "no connect subnet for ClusterNetworkConnect "+name+": "+err.Error()
		return found, nil
	}
	found.subnet = block.String()
	spec := ServiceNetworkConnectSpec(tn, block, networkPrefix)
	marks := ServiceNetworkMarks(tn, lastChangedBy(shared))
	want, err := NewServiceNetworkConnect(tn, spec, marks)
	if err != nil {
		return found, err
	}
	ensured, err := c.kinds.ClusterNetworkConnects(&spec).Ensure(ctx, want, marks)
	if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
		// Trying again changes nothing: say why in the status.
		found.reason, found.message = controller.ReasonHostError, "the host refused ClusterNetworkConnect "+name+": "+err.Error()
		return found, nil
	}
	if err != nil {
		return found, err
	}
	if !ensured.Synced {
		found.reason, found.message = ensured.Reason, ensured.Message
		return found, nil
	}
	switch report, msg := hostkinds.ReadConnectReport(ensured.Obj); report {
	case hostkinds.ConnectAccepted:
		// Accepted says the connection is valid; the networks it
		// connects are those cluster-manager gave a slice of its subnet.
		if connected := hostkinds.ConnectedNetworks(ensured.Obj); connected < len(found.rendered) {
			found.reason, found.message = ReasonConnectPending, fmt.Sprintf(
				"OVN-Kubernetes has connected %d of the %d Shared networks rendered into namespaces through ClusterNetworkConnect %s so far",
				connected, len(found.rendered), name)
			break
		}
		found.connected = true
		found.reason = ReasonServicesConnected
	case hostkinds.ConnectRefused:
		found.reason, found.message = ReasonConnectFailed, "OVN-Kubernetes refused ClusterNetworkConnect "+name
		if msg != "" {
			found.message += ": " + msg
		}
	default:
		found.reason, found.message = ReasonConnectPending, "OVN-Kubernetes has not reported on ClusterNetworkConnect "+name+" yet"
	}
	return found, nil
}

// removeServiceNetworks deletes the service network connections made for
// tenant t but keep, and says whether the one of tn (the live Tenant, nil
// when there is none) is still on the host (being deleted included).
// Provider services' connections are left alone.
func (c *Controller) removeServiceNetworks(ctx context.Context, t string, tn *tenant.Tenant, keep string) (present bool, err error) {
	objs, err := c.src.HostClusterNetworkConnects.GetIndexer().ByIndex(controller.ByTenant, t)
	if err != nil {
		return false, err
	}
	kind := c.kinds.ClusterNetworkConnects(nil)
	for _, obj := range objs {
		u := obj.(*unstructured.Unstructured)
		found, ours := hostnames.MarksOf(u, "")
		if !ours || !isServiceNetworkConnect(u) {
			continue
		}
		mine := tn != nil && found.TenantUID == tn.UID && u.GetName() == hostnames.ServiceNetworkConnect(tn.UID)
		if mine {
			present = true
		}
		if keep != "" && u.GetName() == keep && mine {
			continue
		}
		removed, err := kind.Remove(ctx, "", u.GetName(), found)
		if err != nil {
			return present, err
		}
		if removed {
			klog.FromContext(ctx).Info("Deleted a service network's ClusterNetworkConnect", "clusterNetworkConnect", u.GetName())
		}
	}
	return present, nil
}

// heldSubnet is the connect subnet of a Tenant's service network as this
// term of the syncer claimed it (block valid), or found it given back
// (block invalid).
type heldSubnet struct {
	block         netip.Prefix
	networkPrefix int
}

// claimServiceNetworkSubnet returns the connect subnet of tn's service
// network: as claimed earlier in the term, or claimed now (the one tn
// holds, or a new one). Only the syncer gives it back, once the
// connection is gone, and the registry with the Tenant: what was claimed
// stays tn's while tn is live.
func (c *Controller) claimServiceNetworkSubnet(ctx context.Context, tn *tenant.Tenant) (netip.Prefix, int, error) {
	c.mu.Lock()
	h, ok := c.subnets[tn.UID]
	c.mu.Unlock()
	if ok && h.block.IsValid() {
		return h.block, h.networkPrefix, nil
	}
	block, networkPrefix, err := c.src.Storage.ConnectSubnets.ClaimServiceNetwork(ctx, tn.Name, string(tn.UID))
	if err != nil {
		return netip.Prefix{}, 0, err
	}
	c.mu.Lock()
	c.subnets[tn.UID] = heldSubnet{block: block, networkPrefix: networkPrefix}
	c.mu.Unlock()
	return block, networkPrefix, nil
}

// releaseServiceNetworkSubnet gives back the connect subnet of tn's
// service network, if it holds one. The subnet store is read once per
// Tenant and term while it holds none.
func (c *Controller) releaseServiceNetworkSubnet(ctx context.Context, tn *tenant.Tenant) error {
	subnets := c.src.Storage.ConnectSubnets
	c.mu.Lock()
	h, known := c.subnets[tn.UID]
	c.mu.Unlock()
	if subnets == nil || (known && !h.block.IsValid()) {
		return nil
	}
	block, held, err := subnets.HeldServiceNetwork(ctx, string(tn.UID))
	if err != nil {
		return err
	}
	if held {
		if err := subnets.ReleaseServiceNetwork(ctx, tn.Name, string(tn.UID), block); err != nil {
			return err
		}
		klog.FromContext(ctx).Info("Gave back the connect subnet of a service network", "subnet", block)
	}
	c.mu.Lock()
	c.subnets[tn.UID] = heldSubnet{}
	c.mu.Unlock()
	return nil
}

// record keeps what tenant t's service network reconcile found (nil: the
// Tenant is gone) and, when it changed, queues the tenant's Networks whose
// ServicesShared condition it may change.
func (c *Controller) record(t string, found *serviceNetwork) {
	c.mu.Lock()
	old, had := c.serviceNetworks[t]
	if found == nil {
		delete(c.serviceNetworks, t)
		if had {
			delete(c.subnets, old.tenantUID)
		}
	} else {
		c.serviceNetworks[t] = *found
	}
	changed := had != (found != nil) || (found != nil && !old.equal(*found))
	c.mu.Unlock()
	if changed {
		c.keys.EnqueueTenant(t, func(n *tenant.Network) bool {
			return n.Spec.SharesServices() || meta.FindStatusCondition(n.Status.Conditions, tenant.ConditionServicesShared) != nil
		})
	}
}

// serviceNetworkOf returns what the last reconcile of Tenant t's service
// network found.
func (c *Controller) serviceNetworkOf(t *tenant.Tenant) (serviceNetwork, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.serviceNetworks[t.Name]
	return s, ok && s.tenantUID == t.UID
}

// servicesShared is the ServicesShared condition of Shared network n
// (synced: its host network matches, labels included) from what the
// service network's last reconcile found.
func servicesShared(s serviceNetwork, found bool, n string, synced bool) (ok bool, reason, message string) {
	others := slices.DeleteFunc(slices.Clone(s.rendered), func(o string) bool { return o == n })
	switch {
	case !synced:
		return false, ReasonConnectPending, "the network is not synced on the host yet"
	case !found || !slices.Contains(s.networks, n):
		return false, ReasonConnectPending, "the tenant's service network does not take the network in yet"
	case s.reason == ReasonNoOtherSharedNetwork:
		return false, s.reason, s.message
	case !s.connected && s.reason != ReasonConnectPending:
		// The connection itself failed: no subnet, refused, not ours.
		return false, s.reason, s.message
	case !slices.Contains(s.rendered, n):
		return false, ReasonNoNamespaces, "no Namespace is on the network yet: OVN-Kubernetes connects a network once it is rendered into a namespace"
	case !s.connected:
		return false, s.reason, s.message
	case len(others) == 0:
		return false, ReasonNoOtherSharedNetwork, "no other Shared Network of the tenant has a Namespace yet: there is nothing to share Services with"
	}
	return true, ReasonServicesConnected, fmt.Sprintf(
		"the network's Services are reachable from Shared Networks %s, and theirs from it, through ClusterNetworkConnect %s (connect subnet %s), accepted by OVN-Kubernetes",
		strings.Join(others, ", "), s.connect, s.subnet)
}

// serviceNetworkHandler queues, for a tenant Network whose service network
// mode, subnets, last writer or existence changed while it was or is
// Shared, the key of its tenant's service network (a key that names the
// tenant alone).
func (c *Controller) serviceNetworkHandler() cache.ResourceEventHandlerFuncs {
	enqueueShared := func(obj interface{}) {
		if n, ok := controller.Unwrap(obj).(*tenant.Network); ok && n.Spec.SharesServices() {
			c.Queue.Add(queue.Key{Tenant: n.Namespace})
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueShared,
		UpdateFunc: func(old, obj interface{}) {
			o, okOld := old.(*tenant.Network)
			n, okNew := obj.(*tenant.Network)
			if okOld && okNew && (o.Spec.SharesServices() || n.Spec.SharesServices()) &&
				(o.Spec.ServiceNetwork != n.Spec.ServiceNetwork || len(o.Spec.Subnets) != len(n.Spec.Subnets) ||
					(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) || o.Annotations[hostnames.ChangedByAnnotation] != n.Annotations[hostnames.ChangedByAnnotation]) {
				c.Queue.Add(queue.Key{Tenant: n.Namespace})
			}
		},
		DeleteFunc: enqueueShared,
	}
}

// enqueueConnect queues the service network of the tenant of a
// ClusterNetworkConnect event: its drift, deletion, or OVN-Kubernetes'
// report on it.
func (c *Controller) enqueueConnect(obj interface{}) {
	m, err := meta.Accessor(controller.Unwrap(obj))
	if err != nil || !isServiceNetworkConnect(m) {
		return
	}
	if t := m.GetLabels()[hostnames.TenantLabel]; t != "" {
		c.Queue.Add(queue.Key{Tenant: t})
	}
}

// enqueueAttachment queues the service network of the tenant of a Shared
// network that OVN-Kubernetes rendered into a namespace, or no longer: the
// networks it can connect changed. The attachment is named as its
// network.
func (c *Controller) enqueueAttachment(obj interface{}) {
	m, err := meta.Accessor(controller.Unwrap(obj))
	if err != nil {
		return
	}
	cudn, exists, err := c.src.HostCUDNs.GetStore().GetByKey(m.GetName())
	if err != nil || !exists {
		return
	}
	if l := controller.LabelsOf(cudn); l[hostnames.ServiceNetworkLabel] != "" && l[hostnames.TenantLabel] != "" {
		c.Queue.Add(queue.Key{Tenant: l[hostnames.TenantLabel]})
	}
}

// serviceNetworkKeys are the keys of the tenants' service networks that
// the periodic check looks at: of the tenants with a Shared Network, and
// of those with a service network connection on the host.
func (c *Controller) serviceNetworkKeys() []queue.Key {
	tenants := map[string]bool{}
	for _, obj := range c.src.Networks.GetStore().List() {
		if n, ok := obj.(*tenant.Network); ok && n.Spec.SharesServices() {
			tenants[n.Namespace] = true
		}
	}
	for _, obj := range c.src.HostClusterNetworkConnects.GetStore().List() {
		if m, err := meta.Accessor(obj); err == nil && isServiceNetworkConnect(m) && m.GetLabels()[hostnames.TenantLabel] != "" {
			tenants[m.GetLabels()[hostnames.TenantLabel]] = true
		}
	}
	keys := make([]queue.Key, 0, len(tenants))
	for t := range tenants {
		keys = append(keys, queue.Key{Tenant: t})
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Tenant < keys[j].Tenant })
	return keys
}
