package tenant

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TenantPhase is the coarse lifecycle state of a Tenant.
type TenantPhase string

// Tenant phases.
const (
	TenantPhasePending      TenantPhase = "Pending"
	TenantPhaseProvisioning TenantPhase = "Provisioning"
	TenantPhaseReady        TenantPhase = "Ready"
	TenantPhaseTerminating  TenantPhase = "Terminating"
	TenantPhaseFailed       TenantPhase = "Failed"
)

// FinalizerOffboarding holds a Tenant being deleted until the syncer has
// removed its tenant objects and every host object made for it. The syncer
// adds it when it onboards the Tenant.
const FinalizerOffboarding = "tenant.io/offboarding"

// DefaultNamespace is the tenant Namespace every Tenant is onboarded with.
const DefaultNamespace = "default"

// DefaultNetwork is the tenant Network every Tenant is onboarded with, and
// the primary network of a Namespace that names none.
const DefaultNetwork = "default"

// Condition types shared by the kinds of this group.
const (
	// ConditionReady is True when the object is fully realised on the host.
	ConditionReady = "Ready"
	// ConditionHostSynced is True when the host objects exist and match the spec.
	ConditionHostSynced = "HostSynced"
	// ConditionAddressesAllocated is True when IPAM has handed out the addresses the object needs.
	ConditionAddressesAllocated = "AddressesAllocated"
	// ConditionNetworkCreated is True when the Network's ClusterUserDefinedNetwork exists on the host.
	ConditionNetworkCreated = "NetworkCreated"
	// ConditionNetworkAttached is True on a Namespace when OVN-Kubernetes
	// has rendered its Network into its host namespace (the
	// NetworkAttachmentDefinition its pods are attached by): until then
	// no pod of the namespace can start.
	ConditionNetworkAttached = "NetworkAttached"
	// ConditionEgressAssigned is, on a Network with an enabled NAT gateway
	// and on a FloatingIP with a target, True when OVN-Kubernetes has
	// assigned the object's EgressIP to an egress node.
	ConditionEgressAssigned = "EgressAssigned"
	// ConditionDNSNamed is, on a FloatingIP or LoadBalancer that holds
	// its address while the provider has a public DNS zone, True when
	// status.dnsName names the address, and False when it cannot: the
	// name would not be a DNS name (NameTooLong), or an older
	// LoadBalancer or FloatingIP of the same name in the Namespace has it
	// (NameTaken).
	ConditionDNSNamed = "DNSNamed"
	// ConditionAccepted is OVN-Kubernetes' verdict on a VRFPeering's RouteAdvertisements.
	ConditionAccepted = "Accepted"
	// ConditionOrphaned is True when the Tenant or Network a VRFPeering was
	// made for no longer exists (a new one of the same name is another).
	ConditionOrphaned = "Orphaned"
	// ConditionProviderServices is, on a tenant Namespace, True when the
	// alias of every provider service offered to the tenant is in its host
	// namespace, and False when a Service of the tenant's own holds an
	// alias's name.
	ConditionProviderServices = "ProviderServices"
	// ConditionServicesShared is, on a Network whose spec.serviceNetwork
	// is Shared, True when OVN-Kubernetes has accepted the
	// ClusterNetworkConnect that makes its Services reachable from the
	// tenant's other Shared Networks (and theirs from it).
	ConditionServicesShared = "ServicesShared"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Tenant is a tenancy of the provider's cluster: who its members are, which
// private IPv4 block and how many public IPv4 addresses it gets, and its quota.
// Tenants are created by the provider; members of a tenant may read their own.
type Tenant struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// spec is the provider's description of the tenancy.
	Spec TenantSpec
	// status is what the server and syncer observed.
	Status TenantStatus
}

// TenantSpec is the provider's description of a tenancy.
type TenantSpec struct {
	// displayName is a human readable name of the tenant, such as the customer's name.
	DisplayName string
	// members are the users and groups acting as this tenant. Members of group
	// "tenant.io:<tenant name>" are members too.
	Members TenantMembers
	// network is the tenant's private IPv4 block: an explicit cidr, or a
	// prefixLength to allocate from a TenantNetworks AddressPool. Exactly one is set.
	Network TenantNetwork
	// publicIPs says how many public IPv4 addresses the tenant gets from a PublicIPs AddressPool.
	PublicIPs TenantPublicIPs
	// quota limits how many objects of each kind the tenant may own.
	Quota TenantQuota
	// podSecurity is the Pod Security Standard that the host enforces on the
	// pods of every host namespace of the tenant.
	PodSecurity TenantPodSecurity
	// priorityClasses are the host PriorityClasses the tenant's pods and VMs
	// may name, besides the cluster's default class.
	PriorityClasses []string
	// isolation is Hard or Soft: with Hard, the tenant's pods resolve
	// names through the provider's tenant DNS, which answers the tenant's
	// own names only.
	Isolation TenantIsolation
}

// TenantIsolation is how far a tenant is isolated from the others.
type TenantIsolation string

// The isolation levels of a tenant.
const (
	TenantIsolationSoft TenantIsolation = "Soft"
	TenantIsolationHard TenantIsolation = "Hard"
)

// TenantPodSecurity is the Pod Security Standard of a tenant's host namespaces.
type TenantPodSecurity struct {
	// level is "restricted" (the default) or "baseline"; never "privileged".
	Level PodSecurityLevel
}

// PodSecurityLevel is a Pod Security Standard level, as the host's Pod
// Security admission names it.
type PodSecurityLevel string

// The Pod Security Standard levels a tenant may get, and the one it may not.
const (
	PodSecurityLevelRestricted PodSecurityLevel = "restricted"
	PodSecurityLevelBaseline   PodSecurityLevel = "baseline"
	// PodSecurityLevelPrivileged is named only to refuse it.
	PodSecurityLevelPrivileged PodSecurityLevel = "privileged"
)

// TenantMembers lists the users and groups of a tenant.
type TenantMembers struct {
	// users are user names, as the host authenticates them.
	Users []string
	// groups are group names, as the host authenticates them.
	Groups []string
}

// TenantNetwork is the private IPv4 block of a tenant.
type TenantNetwork struct {
	// cidr is an explicit IPv4 block, for example 10.42.0.0/16. It must be
	// inside a TenantNetworks AddressPool and overlap no other tenant's block. Immutable once set.
	CIDR string
	// prefixLength asks IPAM for a free block of this size (8-30) from a TenantNetworks AddressPool.
	PrefixLength *int32
}

// TenantPublicIPs says how many public addresses a tenant gets.
type TenantPublicIPs struct {
	// count is the number of public IPv4 addresses (0-256).
	Count int32
}

// TenantQuota limits the number of objects a tenant may own. Unset fields get defaults.
type TenantQuota struct {
	// namespaces is the maximum number of tenant Namespaces. Default 10.
	Namespaces *int32
	// networks is the maximum number of Networks. Default 4.
	Networks *int32
	// floatingIPs is the maximum number of FloatingIPs. Default 4.
	FloatingIPs *int32
	// loadBalancers is the maximum number of LoadBalancers. Default 4.
	LoadBalancers *int32
	// hostClaims is the maximum number of HostClaims. Default 0: servers
	// are the provider's to grant.
	HostClaims *int32
	// compute limits what the tenant's workloads use in all its host
	// namespaces together, in ResourceQuota's terms (ComputeResources);
	// unset, nothing is limited.
	Compute corev1.ResourceList
	// objects limits how many objects of some kinds the tenant makes in all
	// its host namespaces together (ObjectCountResources, and
	// count/<resource>[.<group>]); enforced like compute.
	Objects corev1.ResourceList
}

// ObjectCountResources are the object counts Tenant.spec.quota.objects may
// limit by their ResourceQuota names; any count/<resource>[.<group>] is
// accepted too.
var ObjectCountResources = []corev1.ResourceName{
	corev1.ResourceServices, corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
}

// ComputeResources are the resources Tenant.spec.quota.compute may limit:
// the requests and limits of CPU and memory, storage requests, and the
// numbers of pods, PersistentVolumeClaims and KubeVirt VirtualMachines.
var ComputeResources = []corev1.ResourceName{
	corev1.ResourceRequestsCPU, corev1.ResourceLimitsCPU,
	corev1.ResourceRequestsMemory, corev1.ResourceLimitsMemory,
	corev1.ResourceRequestsStorage,
	corev1.ResourcePods, corev1.ResourcePersistentVolumeClaims,
	ResourceVirtualMachines,
}

// ResourceVirtualMachines is the object count quota of KubeVirt
// VirtualMachines.
const ResourceVirtualMachines corev1.ResourceName = "count/virtualmachines.kubevirt.io"

// TenantUsage counts the objects a tenant owns.
type TenantUsage struct {
	// namespaces is the number of tenant Namespaces.
	Namespaces int32
	// networks is the number of Networks.
	Networks int32
	// floatingIPs is the number of FloatingIPs.
	FloatingIPs int32
	// loadBalancers is the number of LoadBalancers.
	LoadBalancers int32
	// hostClaims is the number of HostClaims.
	HostClaims int32
	// publicIPs is how many of the tenant's public IPv4 addresses its
	// FloatingIPs, LoadBalancers and NAT gateways hold.
	PublicIPs int32
	// compute is what the tenant's workloads use of the resources its
	// quota limits, in all its host namespaces together.
	Compute corev1.ResourceList
	// objects is how many objects of the kinds spec.quota.objects limits
	// the tenant holds, in all its host namespaces together.
	Objects corev1.ResourceList
}

// TenantStatus is the observed state of a tenancy.
type TenantStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	ObservedGeneration int64
	// phase is Pending, Provisioning, Ready, Terminating or Failed.
	Phase TenantPhase
	// namespacePrefix is the prefix of the tenant's host namespaces: <tenant>-<6 hex of sha256(uid)>.
	NamespacePrefix string
	// routeDomain is the DNS domain of the tenant's HTTP routes on the
	// provider's gateways: <tenant>.<the provider's route domain>. The
	// HTTPRoutes of its host namespaces may name it and any name below it
	// (a wildcard included), and no other. Empty: the provider offers none.
	RouteDomain string
	// network is the private IPv4 block allocated to the tenant.
	Network *TenantNetworkStatus
	// publicIPs are the public IPv4 addresses allocated to the tenant.
	PublicIPs []string
	// usage counts the objects the tenant owns, for its quota.
	Usage TenantUsage
	// conditions are Ready, AddressesAllocated and HostSynced.
	Conditions []metav1.Condition
}

// TenantNetworkStatus is an allocated IPv4 block.
type TenantNetworkStatus struct {
	// cidr is the allocated block.
	CIDR string
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// TenantList is a list of Tenants.
type TenantList struct {
	metav1.TypeMeta
	metav1.ListMeta

	// items are the Tenants.
	Items []Tenant
}

// AddressPoolPurpose says what an AddressPool hands out.
type AddressPoolPurpose string

// AddressPool purposes.
const (
	// AddressPoolPurposeTenantNetworks pools hand out private IPv4 blocks to tenants.
	AddressPoolPurposeTenantNetworks AddressPoolPurpose = "TenantNetworks"
	// AddressPoolPurposePublicIPs pools hand out single public IPv4 addresses.
	AddressPoolPurposePublicIPs AddressPoolPurpose = "PublicIPs"
	// AddressPoolPurposeConnectSubnets pools hand out the connect subnets
	// of the networks' connections to provider services.
	AddressPoolPurposeConnectSubnets AddressPoolPurpose = "ConnectSubnets"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// AddressPool is a provider IPAM pool: private IPv4 blocks for tenants, or
// public IPv4 addresses.
type AddressPool struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// spec describes the pool.
	Spec AddressPoolSpec
	// status reports the pool's fill.
	Status AddressPoolStatus
}

// AddressPoolSpec describes an IPAM pool.
type AddressPoolSpec struct {
	// purpose is TenantNetworks (private blocks for tenants), PublicIPs (single public addresses) or ConnectSubnets (the subnets of connections to provider networks). Immutable.
	Purpose AddressPoolPurpose
	// cidrs are the IPv4 ranges of the pool, in CIDR form.
	CIDRs []string
	// ranges are IPv4 ranges of the pool in "first-last" form (PublicIPs pools only).
	Ranges []string
	// exclude are CIDRs or single addresses inside the pool that are never handed out.
	Exclude []string
	// defaultPrefixLength is the block size handed to a tenant that asks for none (TenantNetworks pools), or
	// the size of every connect subnet (ConnectSubnets pools, default 24; each network of a connection gets a
	// slice four bits longer).
	DefaultPrefixLength *int32
}

// AddressPoolStatus reports the fill of a pool, in addresses.
type AddressPoolStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	ObservedGeneration int64
	// capacity is the number of addresses the pool can hand out.
	Capacity int64
	// allocated is the number of addresses handed out.
	Allocated int64
	// free is capacity minus allocated.
	Free int64
	// conditions of the pool.
	Conditions []metav1.Condition
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// AddressPoolList is a list of AddressPools.
type AddressPoolList struct {
	metav1.TypeMeta
	metav1.ListMeta

	// items are the AddressPools.
	Items []AddressPool
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ProviderService offers a Service of the provider (DNS, NTP, object storage...)
// to selected tenants: they reach it from their networks under an alias name.
type ProviderService struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// spec says which Service is offered to whom.
	Spec ProviderServiceSpec
	// status reports where the service is offered.
	Status ProviderServiceStatus
}

// ProviderServiceSpec says which host Service is offered to which tenants.
type ProviderServiceSpec struct {
	// service is the host Service offered.
	Service ServiceReference
	// alias is the name of the Service that appears in the tenants' namespaces. Default: the metadata.name.
	Alias string
	// tenants are the names of the tenants the service is offered to.
	Tenants []string
	// allTenants offers the service to every tenant; tenants must then be empty.
	AllTenants bool
	// podNetwork also connects the tenants' pod networks with the provider
	// network, not only the Service network.
	PodNetwork bool
}

// ServiceReference names a host Service.
type ServiceReference struct {
	// namespace of the Service.
	Namespace string
	// name of the Service.
	Name string
}

// ProviderServiceStatus reports where a ProviderService is offered.
type ProviderServiceStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	ObservedGeneration int64
	// conditions of the offer.
	Conditions []metav1.Condition
	// offers bind each tenant of spec.tenants to the UID it had when it was
	// offered the service. Set by the server.
	Offers []ProviderServiceOffer
	// providerNetwork is the ClusterUserDefinedNetwork of the Service's namespace.
	ProviderNetwork string
	// tenants report, per tenant offered the service, its connection and alias.
	Tenants []ProviderServiceTenant
}

// ProviderServiceOffer binds an offer to one incarnation of a tenant.
type ProviderServiceOffer struct {
	// tenant is the tenant's name.
	Tenant string
	// uid is the tenant's UID.
	UID types.UID
}

// ProviderServiceTenant reports a service's offer to one tenant.
type ProviderServiceTenant struct {
	// name of the tenant.
	Name string
	// connected says whether the tenant's networks are connected to the provider network.
	Connected bool
	// connectSubnet is the subnet of the connection.
	ConnectSubnet string
	// aliases is the number of the tenant's namespaces where the alias Service is in place.
	Aliases int32
	// reason says, in one CamelCase word, why the tenant is not served (empty when it is).
	Reason string
	// message says it in words.
	Message string
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ProviderServiceList is a list of ProviderServices.
type ProviderServiceList struct {
	metav1.TypeMeta
	metav1.ListMeta

	// items are the ProviderServices.
	Items []ProviderService
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VRFPeering peers the VRF of one tenant Network with provider routers over
// BGP (VRF-lite), so that the tenant's subnets are routed outside the cluster.
type VRFPeering struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// spec describes the peering.
	Spec VRFPeeringSpec
	// status reports the peering.
	Status VRFPeeringStatus
}

// VRFPeeringSpec describes the BGP peering of a tenant Network's VRF.
type VRFPeeringSpec struct {
	// tenant is the name of the tenant owning the Network. Immutable.
	Tenant string
	// network is the name of the tenant's Network whose VRF is peered. Immutable.
	Network string
	// asn is the local autonomous system number (1-4294967295, not 23456).
	ASN int64
	// neighbors are the provider routers to peer with.
	Neighbors []BGPNeighbor
	// advertise are the prefixes announced to the neighbors, each inside
	// one of the Network's subnets. Default: the Network's subnets.
	Advertise []string
	// receive says which routes the neighbors may send into the VRF.
	// Default: none.
	Receive *VRFPeeringReceive
}

// VRFPeeringReceive says which routes the VRF accepts from its neighbors.
type VRFPeeringReceive struct {
	// prefixes are the routes accepted, exactly as listed. None may
	// overlap the addresses this server hands out (tenant blocks and
	// public IPs) outside the tenant's own block.
	Prefixes []string
	// defaultRoute accepts a default route (0.0.0.0/0).
	DefaultRoute bool
}

// BGPNeighbor is one BGP neighbor of a VRF.
type BGPNeighbor struct {
	// address is the IPv4 address of the neighbor.
	Address string
	// asn is the neighbor's autonomous system number (1-4294967295, not 23456).
	ASN int64
	// port is the neighbor's BGP port. Default 179.
	Port *int32
	// passwordSecret names the Secret holding the session's password.
	PasswordSecret string
	// holdTime is the BGP hold time (3s-65535s, whole seconds).
	HoldTime *metav1.Duration
	// keepaliveTime is the BGP keepalive interval (1s up to holdTime).
	KeepaliveTime *metav1.Duration
	// bfdProfile names the provider's BFD profile for the session.
	BFDProfile string
}

// VRFPeeringStatus reports the peering.
type VRFPeeringStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	ObservedGeneration int64
	// tenantUID and networkUID are the UIDs of the Tenant and Network the
	// peering was created for.
	TenantUID  types.UID
	NetworkUID types.UID
	// vrf is the name of the VRF on the nodes (the ClusterUserDefinedNetwork's name).
	VRF string
	// neighbors report the BGP sessions with each neighbor.
	Neighbors []VRFPeeringNeighborStatus
	// conditions of the peering.
	Conditions []metav1.Condition
}

// VRFPeeringNeighborStatus reports the BGP sessions with one neighbor.
type VRFPeeringNeighborStatus struct {
	// address of the neighbor.
	Address string
	// state of its sessions.
	State string
	// sessions and established count the nodes reporting a session with
	// the neighbor, and those whose session is established.
	Sessions    int32
	Established int32
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VRFPeeringList is a list of VRFPeerings.
type VRFPeeringList struct {
	metav1.TypeMeta
	metav1.ListMeta

	// items are the VRFPeerings.
	Items []VRFPeering
}

// NamespacePhase is the lifecycle state of a tenant Namespace.
type NamespacePhase string

// Namespace phases.
const (
	NamespacePhasePending     NamespacePhase = "Pending"
	NamespacePhaseActive      NamespacePhase = "Active"
	NamespacePhaseTerminating NamespacePhase = "Terminating"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Namespace is a tenant's virtual namespace. Its name is private to the
// tenant; on the host it is a namespace "<tenant>-<hash6>-<name>" attached to
// the tenant Network named in spec.network.
type Namespace struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// spec describes the namespace.
	Spec NamespaceSpec
	// status reports the namespace on the host.
	Status NamespaceStatus
}

// NamespaceSpec describes a tenant namespace.
type NamespaceSpec struct {
	// network is the name of the tenant Network that is the namespace's primary network. Default "default". Immutable.
	Network string
}

// NamespaceStatus reports a tenant namespace.
type NamespaceStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	ObservedGeneration int64
	// phase is Pending, Active or Terminating.
	Phase NamespacePhase
	// hostNamespace is the name of the namespace on the host.
	HostNamespace string
	// conditions are Ready, HostSynced and NetworkAttached. Ready is True
	// when the host namespace and its members' RoleBinding match
	// (HostSynced) and OVN-Kubernetes has attached the host namespace to
	// the Namespace's Network (NetworkAttached).
	Conditions []metav1.Condition
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NamespaceList is a list of Namespaces.
type NamespaceList struct {
	metav1.TypeMeta
	metav1.ListMeta

	// items are the Namespaces.
	Items []Namespace
}

// NetworkTopology is the OVN-Kubernetes topology of a Network.
type NetworkTopology string

// Network topologies.
const (
	NetworkTopologyLayer2 NetworkTopology = "Layer2"
	NetworkTopologyLayer3 NetworkTopology = "Layer3"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Network is a tenant's private network (a VPC): an OVN-Kubernetes primary
// user-defined network with subnets inside the tenant's block, attached to
// the tenant Namespaces that name it, with an optional NAT gateway.
type Network struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// spec describes the network.
	Spec NetworkSpec
	// status reports the network on the host.
	Status NetworkStatus
}

// NetworkSpec describes a tenant network.
type NetworkSpec struct {
	// topology is Layer2 or Layer3. Default Layer2. Immutable.
	Topology NetworkTopology
	// subnets are IPv4 CIDRs inside the tenant's block that do not overlap
	// each other. Default: the next free /24 of the tenant's block.
	Subnets []string
	// mtu is the maximum transmission unit of the network's pod interfaces. Immutable.
	MTU *int32
	// natGateway gives the network outbound SNAT through one of the tenant's public IPs.
	NATGateway *NATGateway
	// serviceNetwork is Shared or Private (the default, also when empty):
	// the Services of a Shared network are reachable from the tenant's
	// other Shared networks, and theirs from it.
	ServiceNetwork ServiceNetworkMode
}

// ServiceNetworkMode says whether a Network's Services are shared with the
// tenant's other Networks.
type ServiceNetworkMode string

// The service network modes of a Network.
const (
	ServiceNetworkPrivate ServiceNetworkMode = "Private"
	ServiceNetworkShared  ServiceNetworkMode = "Shared"
)

// NATGateway configures outbound SNAT of a Network.
type NATGateway struct {
	// enabled turns the NAT gateway on.
	Enabled bool
	// address is the tenant public IP to SNAT through. Default: the first free one.
	Address string
}

// NetworkStatus reports a tenant network.
type NetworkStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	ObservedGeneration int64
	// subnets are the subnets in effect, after defaulting.
	Subnets []string
	// namespaces are the tenant Namespaces attached to the network.
	Namespaces []string
	// natGatewayIP is the public IP the network's outbound traffic is SNATed to.
	NATGatewayIP string
	// hostNetwork is the name of the ClusterUserDefinedNetwork on the host.
	HostNetwork string
	// conditions are Ready, HostSynced and NetworkCreated.
	Conditions []metav1.Condition
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NetworkList is a list of Networks.
type NetworkList struct {
	metav1.TypeMeta
	metav1.ListMeta

	// items are the Networks.
	Items []Network
}

// FloatingIPPhase is the state of a FloatingIP.
type FloatingIPPhase string

// FloatingIP phases.
const (
	// FloatingIPPhasePending: the FloatingIP has no address yet, or its
	// target does not exist (or is another FloatingIP's).
	FloatingIPPhasePending FloatingIPPhase = "Pending"
	// FloatingIPPhaseAllocated: it holds its address, not (yet) bound to
	// its target.
	FloatingIPPhaseAllocated FloatingIPPhase = "Allocated"
	// FloatingIPPhaseAssociated: the address is bound to the target both
	// ways.
	FloatingIPPhaseAssociated FloatingIPPhase = "Associated"
	FloatingIPPhaseFailed     FloatingIPPhase = "Failed"
)

// FloatingIPTargetKind is the kind of workload a FloatingIP is bound to.
type FloatingIPTargetKind string

// FloatingIP target kinds.
const (
	FloatingIPTargetVirtualMachine FloatingIPTargetKind = "VirtualMachine"
	FloatingIPTargetPod            FloatingIPTargetKind = "Pod"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// FloatingIP is one of the tenant's public IPv4 addresses, optionally bound 1:1
// to a VirtualMachine or Pod of the same namespace, with the inbound ports it accepts.
type FloatingIP struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// spec describes the floating IP.
	Spec FloatingIPSpec
	// status reports the floating IP.
	Status FloatingIPStatus
}

// FloatingIPSpec describes a floating IP.
type FloatingIPSpec struct {
	// address is one of the tenant's public IPs. Default: the first free one.
	Address string
	// target is the workload the address is bound to.
	Target *FloatingIPTarget
	// ports are the inbound ports forwarded to the target.
	Ports []FloatingIPPort
}

// FloatingIPTarget names a workload in the FloatingIP's namespace.
type FloatingIPTarget struct {
	// kind is VirtualMachine or Pod.
	Kind FloatingIPTargetKind
	// name of the workload.
	Name string
}

// FloatingIPPort is an inbound port of a FloatingIP.
type FloatingIPPort struct {
	// port number (1-65535).
	Port int32
	// protocol is TCP, UDP or SCTP. Default TCP.
	Protocol Protocol
}

// Protocol is an L4 protocol.
type Protocol string

// Protocols.
const (
	ProtocolTCP  Protocol = "TCP"
	ProtocolUDP  Protocol = "UDP"
	ProtocolSCTP Protocol = "SCTP"
)

// FloatingIPStatus reports a floating IP.
type FloatingIPStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	ObservedGeneration int64
	// address is the public IP in use.
	Address string
	// dnsName is the address's name in the provider's public DNS zone,
	// set while the address is held and the zone is configured.
	DNSName string
	// phase is Pending, Allocated, Associated or Failed.
	Phase FloatingIPPhase
	// conditions are Ready, HostSynced, EgressAssigned and DNSNamed.
	Conditions []metav1.Condition
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// FloatingIPList is a list of FloatingIPs.
type FloatingIPList struct {
	metav1.TypeMeta
	metav1.ListMeta

	// items are the FloatingIPs.
	Items []FloatingIP
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// LoadBalancer is an L4 load balancer on one of the tenant's public IPs over
// the pods and VMs of its namespace that its selector matches.
type LoadBalancer struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// spec describes the load balancer.
	Spec LoadBalancerSpec
	// status reports the load balancer.
	Status LoadBalancerStatus
}

// LoadBalancerSpec describes a load balancer.
type LoadBalancerSpec struct {
	// address is one of the tenant's public IPs. Default: assigned from the tenant's pool.
	Address string
	// selector selects the backends by label, in the load balancer's namespace.
	Selector map[string]string
	// ports are the balanced ports.
	Ports []LoadBalancerPort
	// sourceRanges are the IPv4 CIDRs allowed to connect. Default: everyone.
	SourceRanges []string
}

// LoadBalancerPort is one balanced port.
type LoadBalancerPort struct {
	// name of the port; required when there are several ports.
	Name string
	// port is the public port (1-65535).
	Port int32
	// targetPort is the backends' port, a number or a named port. Default: port.
	TargetPort intstr.IntOrString
	// protocol is TCP, UDP or SCTP. Default TCP.
	Protocol Protocol
}

// LoadBalancerStatus reports a load balancer.
type LoadBalancerStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	ObservedGeneration int64
	// address is the public IP assigned on the host.
	Address string
	// dnsName is the address's name in the provider's public DNS zone,
	// set while the address is assigned and the zone is configured.
	DNSName string
	// conditions are Ready, HostSynced and DNSNamed.
	Conditions []metav1.Condition
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// LoadBalancerList is a list of LoadBalancers.
type LoadBalancerList struct {
	metav1.TypeMeta
	metav1.ListMeta

	// items are the LoadBalancers.
	Items []LoadBalancer
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// OffboardingReport is the tenants/offboarding subresource: what stands in
// the way of deleting a Tenant now. A refused DELETE of the Tenant lists
// the same blockers as the causes of its 409.
type OffboardingReport struct {
	metav1.TypeMeta
	// metadata is the Tenant's name (and its uid and resourceVersion when read).
	metav1.ObjectMeta

	// tenant is the name of the Tenant reported on.
	Tenant string
	// ready is true when a DELETE of the Tenant would be accepted now.
	Ready bool
	// blockers are what the Tenant still has that a DELETE must wait for.
	Blockers []OffboardingBlocker
	// providerBlockers are the provider's objects made for this tenant
	// alone, which the provider must delete first.
	ProviderBlockers []OffboardingBlocker
}

// OffboardingBlocker is one object that keeps a Tenant from being deleted.
type OffboardingBlocker struct {
	// resource is the kind of the blocker, as a resource name: pods,
	// virtualmachines, virtualmachineinstances, persistentvolumeclaims,
	// datavolumes, floatingips, loadbalancers, namespaces or networks.
	Resource string
	// namespace is the tenant Namespace (as the tenant names it) the blocker
	// is in; empty for cluster-scoped blockers.
	Namespace string
	// name is the blocker's name; empty for creates still in flight.
	Name string
	// state is set for workloads in the tenant's host namespaces: Running,
	// Stopped or Disk.
	State WorkloadState
	// message says why the object blocks the delete.
	Message string
}

// WorkloadState says what deleting a workload on the host would destroy.
type WorkloadState string

const (
	// WorkloadRunning: a pod, a VirtualMachineInstance, or a
	// VirtualMachine whose instance runs.
	WorkloadRunning WorkloadState = "Running"
	// WorkloadStopped: a VirtualMachine that does not run; its disks are
	// kept.
	WorkloadStopped WorkloadState = "Stopped"
	// WorkloadDisk: a PersistentVolumeClaim or DataVolume, which holds data.
	WorkloadDisk WorkloadState = "Disk"
)
