package v1alpha1

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
	// ConditionServicesShared is, on a Network whose spec.serviceNetwork
	// is Shared, True when OVN-Kubernetes has accepted the connection that
	// makes its Services reachable from the tenant's other Shared Networks.
	ConditionServicesShared = "ServicesShared"
)

// +genclient
// +genclient:nonNamespaced
// +genclient:method=GetOffboarding,verb=get,subresource=offboarding,result=tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1.OffboardingReport
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Tenant is a tenancy of the provider's cluster: who its members are, which
// private IPv4 block and how many public IPv4 addresses it gets, and its quota.
// Tenants are created by the provider; members of a tenant may read their own.
type Tenant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the provider's description of the tenancy.
	// +optional
	Spec TenantSpec `json:"spec,omitempty"`
	// status is what the server and syncer observed.
	// +optional
	Status TenantStatus `json:"status,omitempty"`
}

// TenantSpec is the provider's description of a tenancy.
type TenantSpec struct {
	// displayName is a human readable name of the tenant, such as the customer's name.
	// +optional
	DisplayName string `json:"displayName,omitempty"`
	// members are the users and groups acting as this tenant. Members of group
	// "tenant.io:<tenant name>" are members too.
	// +optional
	Members TenantMembers `json:"members,omitempty"`
	// network is the tenant's private IPv4 block: an explicit cidr, or a
	// prefixLength to allocate from a TenantNetworks AddressPool. Exactly one is set.
	Network TenantNetwork `json:"network"`
	// publicIPs says how many public IPv4 addresses the tenant gets from a PublicIPs AddressPool.
	// +optional
	PublicIPs TenantPublicIPs `json:"publicIPs,omitempty"`
	// quota limits how many objects of each kind the tenant may own.
	// +optional
	Quota TenantQuota `json:"quota,omitempty"`
	// podSecurity is the Pod Security Standard that the host enforces on the
	// pods of every host namespace of the tenant.
	// +optional
	PodSecurity TenantPodSecurity `json:"podSecurity,omitempty"`
	// priorityClasses are the host PriorityClasses the provider grants the
	// tenant: its pods and VMs (and the templates of its Deployments, Jobs,
	// VM pools...) may name these, and the cluster's default class, and no
	// other. Empty: only the cluster's default. Classes named system-*
	// belong to the cluster's own components and cannot be granted.
	// +optional
	// +listType=set
	PriorityClasses []string `json:"priorityClasses,omitempty"`
	// isolation is how far the tenant is isolated from the others. Its
	// networks are isolated either way. "Hard" also isolates its name
	// lookups: every pod of the tenant resolves names through the
	// provider's tenant DNS server, which answers the tenant's own
	// Services by the namespace names the tenant sees, the provider
	// services offered to it, and names outside the cluster, and answers
	// anything of another tenant as a name that does not exist. "Soft"
	// (the default) keeps the cluster's DNS: the tenant's pods resolve
	// host names (<service>.<host namespace>.svc), and other tenants'
	// Services can be looked up by name. Soft is the default because Hard
	// changes how every pod of the tenant resolves names, and needs the
	// provider to run the tenant DNS server (a Hard tenant is refused
	// when this server was not told its address). A change applies to
	// pods created afterwards.
	// +optional
	Isolation TenantIsolation `json:"isolation,omitempty"`
}

// TenantIsolation is how far a tenant is isolated from the others.
// +enum
type TenantIsolation string

// The isolation levels of a tenant.
const (
	// TenantIsolationSoft isolates the tenant's networks; its pods use the
	// cluster's DNS.
	TenantIsolationSoft TenantIsolation = "Soft"
	// TenantIsolationHard isolates the tenant's networks and its name
	// lookups (the tenant DNS server).
	TenantIsolationHard TenantIsolation = "Hard"
)

// TenantPodSecurity is the Pod Security Standard of a tenant's host namespaces.
type TenantPodSecurity struct {
	// level is the Pod Security Standard that the host enforces, audits and
	// warns about in every host namespace of the tenant: "restricted" (the
	// default) or "baseline". A tenant's pods never run "privileged": that is
	// root on the node.
	// +optional
	Level PodSecurityLevel `json:"level,omitempty"`
}

// PodSecurityLevel is a Pod Security Standard level, as the host's Pod
// Security admission names it.
type PodSecurityLevel string

// The Pod Security Standard levels a tenant may get.
const (
	// PodSecurityLevelRestricted is the hardened standard: non-root, no
	// privilege escalation, all capabilities dropped but NET_BIND_SERVICE,
	// a RuntimeDefault or Localhost seccomp profile.
	PodSecurityLevelRestricted PodSecurityLevel = "restricted"
	// PodSecurityLevelBaseline stops the known privilege escalations (host
	// namespaces, host paths and ports, privileged containers, added
	// capabilities beyond the default set) but lets containers run as root.
	PodSecurityLevelBaseline PodSecurityLevel = "baseline"
)

// TenantMembers lists the users and groups of a tenant.
type TenantMembers struct {
	// users are user names, as the host authenticates them.
	// +optional
	// +listType=set
	Users []string `json:"users,omitempty"`
	// groups are group names, as the host authenticates them.
	// +optional
	// +listType=set
	Groups []string `json:"groups,omitempty"`
}

// TenantNetwork is the private IPv4 block of a tenant.
type TenantNetwork struct {
	// cidr is an explicit IPv4 block, for example 10.42.0.0/16. It must be
	// inside a TenantNetworks AddressPool and overlap no other tenant's block. Immutable once set.
	// +optional
	CIDR string `json:"cidr,omitempty"`
	// prefixLength asks IPAM for a free block of this size (8-30) from a TenantNetworks AddressPool.
	// +optional
	PrefixLength *int32 `json:"prefixLength,omitempty"`
}

// TenantPublicIPs says how many public addresses a tenant gets.
type TenantPublicIPs struct {
	// count is the number of public IPv4 addresses (0-256).
	// +optional
	Count int32 `json:"count,omitempty"`
}

// TenantQuota limits the number of objects a tenant may own. Unset fields get defaults.
type TenantQuota struct {
	// namespaces is the maximum number of tenant Namespaces. Default 10.
	// +optional
	Namespaces *int32 `json:"namespaces,omitempty"`
	// networks is the maximum number of Networks. Default 4.
	// +optional
	Networks *int32 `json:"networks,omitempty"`
	// floatingIPs is the maximum number of FloatingIPs. Default 4.
	// +optional
	FloatingIPs *int32 `json:"floatingIPs,omitempty"`
	// loadBalancers is the maximum number of LoadBalancers. Default 4.
	// +optional
	LoadBalancers *int32 `json:"loadBalancers,omitempty"`
	// hostClaims is the maximum number of HostClaims. Default 0: servers
	// are the provider's to grant.
	// +optional
	HostClaims *int32 `json:"hostClaims,omitempty"`
	// compute limits what the tenant's workloads use in all its host
	// namespaces together, in ResourceQuota's terms: requests.cpu,
	// limits.cpu, requests.memory, limits.memory, requests.storage, pods,
	// persistentvolumeclaims and count/virtualmachines.kubevirt.io. The
	// host enforces it (each host namespace has a ResourceQuota its share
	// of the total; see docs/quota.md), and containers without requests or
	// limits get defaults from a LimitRange. Unset, nothing is limited.
	// +optional
	Compute corev1.ResourceList `json:"compute,omitempty"`
	// objects limits how many objects the tenant makes in all its host
	// namespaces together, in ResourceQuota's terms: services, secrets,
	// configmaps, persistentvolumeclaims, and count/<resource>[.<group>]
	// for any other kind (count/deployments.apps). Enforced by the host
	// like compute (docs/quota.md). Keys the provider's defaults name
	// (tenant-apiserver's --default-object-quota) are filled in when the
	// Tenant is created; a key may not be in compute too.
	// +optional
	Objects corev1.ResourceList `json:"objects,omitempty"`
}

// TenantUsage counts the objects a tenant owns.
type TenantUsage struct {
	// namespaces is the number of tenant Namespaces.
	Namespaces int32 `json:"namespaces"`
	// networks is the number of Networks.
	Networks int32 `json:"networks"`
	// floatingIPs is the number of FloatingIPs.
	FloatingIPs int32 `json:"floatingIPs"`
	// loadBalancers is the number of LoadBalancers.
	LoadBalancers int32 `json:"loadBalancers"`
	// hostClaims is the number of HostClaims.
	// +optional
	HostClaims int32 `json:"hostClaims,omitempty"`
	// publicIPs is how many of the addresses of status.publicIPs are in
	// use: held by the tenant's FloatingIPs, LoadBalancers and NAT gateways,
	// as their status reports them. The syncer counts them.
	// +optional
	PublicIPs int32 `json:"publicIPs,omitempty"`
	// compute is what the tenant's workloads use of the resources
	// spec.quota.compute limits, in all its host namespaces together (as
	// the host's ResourceQuotas count it).
	// +optional
	Compute corev1.ResourceList `json:"compute,omitempty"`
	// objects is how many objects of the kinds spec.quota.objects limits
	// the tenant holds, in all its host namespaces together (as the host's
	// ResourceQuotas count them).
	// +optional
	Objects corev1.ResourceList `json:"objects,omitempty"`
}

// TenantStatus is the observed state of a tenancy.
type TenantStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase is Pending, Provisioning, Ready, Terminating or Failed.
	// +optional
	Phase TenantPhase `json:"phase,omitempty"`
	// namespacePrefix is the prefix of the tenant's host namespaces: <tenant>-<6 hex of sha256(uid)>.
	// +optional
	NamespacePrefix string `json:"namespacePrefix,omitempty"`
	// routeDomain is the DNS domain of the tenant's HTTP routes on the
	// provider's gateways: <tenant>.<the provider's route domain>. The
	// HTTPRoutes of its host namespaces may name it and any name below it
	// (a wildcard included), and no other. Empty: the provider offers none.
	// +optional
	RouteDomain string `json:"routeDomain,omitempty"`
	// network is the private IPv4 block allocated to the tenant.
	// +optional
	Network *TenantNetworkStatus `json:"network,omitempty"`
	// publicIPs are the public IPv4 addresses allocated to the tenant.
	// +optional
	// +listType=atomic
	PublicIPs []string `json:"publicIPs,omitempty"`
	// usage counts the objects the tenant owns, for its quota.
	// +optional
	Usage TenantUsage `json:"usage,omitempty"`
	// conditions are Ready, AddressesAllocated and HostSynced.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// TenantNetworkStatus is an allocated IPv4 block.
type TenantNetworkStatus struct {
	// cidr is the allocated block.
	CIDR string `json:"cidr"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// TenantList is a list of Tenants.
type TenantList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the Tenants.
	Items []Tenant `json:"items"`
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

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// AddressPool is a provider IPAM pool: private IPv4 blocks for tenants, or
// public IPv4 addresses.
type AddressPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the pool.
	// +optional
	Spec AddressPoolSpec `json:"spec,omitempty"`
	// status reports the pool's fill.
	// +optional
	Status AddressPoolStatus `json:"status,omitempty"`
}

// AddressPoolSpec describes an IPAM pool.
type AddressPoolSpec struct {
	// purpose is TenantNetworks (private blocks for tenants), PublicIPs (single public addresses) or ConnectSubnets (the subnets of connections to provider networks). Immutable.
	Purpose AddressPoolPurpose `json:"purpose"`
	// cidrs are the IPv4 ranges of the pool, in CIDR form.
	// +optional
	// +listType=atomic
	CIDRs []string `json:"cidrs,omitempty"`
	// ranges are IPv4 ranges of the pool in "first-last" form (PublicIPs pools only).
	// +optional
	// +listType=atomic
	Ranges []string `json:"ranges,omitempty"`
	// exclude are CIDRs or single addresses inside the pool that are never handed out.
	// +optional
	// +listType=atomic
	Exclude []string `json:"exclude,omitempty"`
	// defaultPrefixLength is the block size handed to a tenant that asks for none (TenantNetworks pools), or
	// the size of every connect subnet (ConnectSubnets pools, default 24; each network of a connection gets a
	// slice four bits longer).
	// +optional
	DefaultPrefixLength *int32 `json:"defaultPrefixLength,omitempty"`
}

// AddressPoolStatus reports the fill of a pool, in addresses.
type AddressPoolStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// capacity is the number of addresses the pool can hand out.
	// +optional
	Capacity int64 `json:"capacity,omitempty"`
	// allocated is the number of addresses handed out.
	// +optional
	Allocated int64 `json:"allocated,omitempty"`
	// free is capacity minus allocated.
	// +optional
	Free int64 `json:"free,omitempty"`
	// conditions of the pool.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// AddressPoolList is a list of AddressPools.
type AddressPoolList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the AddressPools.
	Items []AddressPool `json:"items"`
}

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ProviderService offers a Service of the provider (DNS, NTP, object storage...)
// to selected tenants: they reach it from their networks under an alias name.
type ProviderService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says which Service is offered to whom.
	// +optional
	Spec ProviderServiceSpec `json:"spec,omitempty"`
	// status reports where the service is offered.
	// +optional
	Status ProviderServiceStatus `json:"status,omitempty"`
}

// ProviderServiceSpec says which host Service is offered to which tenants.
type ProviderServiceSpec struct {
	// service is the host Service offered.
	Service ServiceReference `json:"service"`
	// alias is the name of the Service that appears in the tenants' namespaces. Default: the metadata.name.
	// +optional
	Alias string `json:"alias,omitempty"`
	// tenants are the names of the tenants the service is offered to.
	// +optional
	// +listType=set
	Tenants []string `json:"tenants,omitempty"`
	// allTenants offers the service to every tenant, tenants onboarded
	// later included; tenants must then be empty.
	// +optional
	AllTenants bool `json:"allTenants,omitempty"`
	// podNetwork also connects the tenants' pod networks with the provider
	// network (ClusterNetworkConnect connectivity PodNetwork), not only the
	// Service network. Default: false, the tenants reach the provider's
	// Services only.
	// +optional
	PodNetwork bool `json:"podNetwork,omitempty"`
}

// ServiceReference names a host Service.
type ServiceReference struct {
	// namespace of the Service.
	Namespace string `json:"namespace"`
	// name of the Service.
	Name string `json:"name"`
}

// ProviderServiceStatus reports where a ProviderService is offered.
type ProviderServiceStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions of the offer.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	// offers bind each tenant of spec.tenants to the UID it had when it
	// was offered the service: a tenant deleted and created again under
	// the same name is not offered anything until the provider names it
	// again. Set by the server.
	// +optional
	// +listType=map
	// +listMapKey=tenant
	Offers []ProviderServiceOffer `json:"offers,omitempty"`
	// providerNetwork is the ClusterUserDefinedNetwork of the Service's
	// namespace, which the tenants' networks are connected to.
	// +optional
	ProviderNetwork string `json:"providerNetwork,omitempty"`
	// tenants report, per tenant offered the service, its connection and
	// alias. A tenant reads its own entry only.
	// +optional
	// +listType=map
	// +listMapKey=name
	Tenants []ProviderServiceTenant `json:"tenants,omitempty"`
}

// ProviderServiceOffer binds an offer to one incarnation of a tenant.
type ProviderServiceOffer struct {
	// tenant is the tenant's name.
	Tenant string `json:"tenant"`
	// uid is the tenant's UID when it was offered the service.
	UID types.UID `json:"uid"`
}

// ProviderServiceTenant reports a service's offer to one tenant.
type ProviderServiceTenant struct {
	// name of the tenant.
	Name string `json:"name"`
	// connected says whether the tenant's networks are connected to the
	// provider network: the ClusterNetworkConnect is on the host and
	// OVN-Kubernetes has not reported a failure of it.
	Connected bool `json:"connected"`
	// connectSubnet is the subnet of the connection, from a ConnectSubnets AddressPool.
	// +optional
	ConnectSubnet string `json:"connectSubnet,omitempty"`
	// aliases is the number of the tenant's namespaces where the alias
	// Service is in place.
	// +optional
	Aliases int32 `json:"aliases,omitempty"`
	// reason says, in one CamelCase word, why the tenant is not fully
	// served: AliasTaken, NoConnectSubnet, ConnectFailed, NoNetwork...;
	// empty when it is.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says it in words.
	// +optional
	Message string `json:"message,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ProviderServiceList is a list of ProviderServices.
type ProviderServiceList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ProviderServices.
	Items []ProviderService `json:"items"`
}

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VRFPeering peers the VRF of one tenant Network with provider routers over
// BGP (VRF-lite), so that the tenant's subnets are routed outside the cluster.
type VRFPeering struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the peering.
	// +optional
	Spec VRFPeeringSpec `json:"spec,omitempty"`
	// status reports the peering.
	// +optional
	Status VRFPeeringStatus `json:"status,omitempty"`
}

// VRFPeeringSpec describes the BGP peering of a tenant Network's VRF.
type VRFPeeringSpec struct {
	// tenant is the name of the tenant owning the Network. It must exist
	// when the peering is created. Immutable.
	Tenant string `json:"tenant"`
	// network is the name of the tenant's Network whose VRF is peered. It
	// must exist when the peering is created; Layer2 and Layer3 Networks
	// can both be peered (their pod network is advertised). Immutable.
	Network string `json:"network"`
	// asn is the local autonomous system number of the VRF's BGP router
	// (1-4294967295; 23456, AS_TRANS, is reserved). Several peerings of
	// one Network share that router: they must have the same asn.
	ASN int64 `json:"asn"`
	// neighbors are the provider routers to peer with, at most 16; a
	// neighbor appears in one peering of a Network only.
	// +listType=map
	// +listMapKey=address
	Neighbors []BGPNeighbor `json:"neighbors"`
	// advertise are the prefixes announced to the neighbors, each inside
	// one of the Network's subnets (OVN-Kubernetes advertises the pod
	// network of a Layer3 Network per node, a part of a subnet).
	// Default: the Network's subnets.
	// +optional
	// +listType=set
	Advertise []string `json:"advertise,omitempty"`
	// receive says which routes the neighbors may send into the VRF.
	// Default: none.
	// +optional
	Receive *VRFPeeringReceive `json:"receive,omitempty"`
}

// VRFPeeringReceive says which routes the VRF accepts from its neighbors.
type VRFPeeringReceive struct {
	// prefixes are the routes accepted, exactly as listed (IPv4 CIDRs).
	// None may overlap an AddressPool of this server (tenant blocks and
	// public IPs) outside the tenant's own block: another tenant's routes
	// never enter the VRF. The default route is defaultRoute.
	// +optional
	// +listType=set
	Prefixes []string `json:"prefixes,omitempty"`
	// defaultRoute accepts a default route (0.0.0.0/0).
	// +optional
	DefaultRoute bool `json:"defaultRoute,omitempty"`
}

// BGPNeighbor is one BGP neighbor of a VRF.
type BGPNeighbor struct {
	// address is the IPv4 unicast address of the neighbor. It may not lie
	// in an AddressPool of this server: a neighbor is a provider router,
	// never an address handed to tenants.
	Address string `json:"address"`
	// asn is the neighbor's autonomous system number (1-4294967295; 23456,
	// AS_TRANS, is reserved).
	ASN int64 `json:"asn"`
	// port is the neighbor's BGP port. Default 179.
	// +optional
	Port *int32 `json:"port,omitempty"`
	// passwordSecret names the Secret holding the session's password: a
	// Secret of type kubernetes.io/basic-auth, key "password", in the
	// frr-k8s namespace, where frr-k8s reads it.
	// +optional
	PasswordSecret string `json:"passwordSecret,omitempty"`
	// holdTime is the BGP hold time: 3s to 65535s, in whole seconds.
	// Default: frr-k8s's (180s).
	// +optional
	HoldTime *metav1.Duration `json:"holdTime,omitempty"`
	// keepaliveTime is the BGP keepalive interval: 1s up to the hold time,
	// in whole seconds; set with holdTime. Default: frr-k8s's (60s).
	// +optional
	KeepaliveTime *metav1.Duration `json:"keepaliveTime,omitempty"`
	// bfdProfile names a BFD profile the provider defines in its own
	// FRRConfiguration; BFD is off without one.
	// +optional
	BFDProfile string `json:"bfdProfile,omitempty"`
}

// VRFPeeringStatus reports the peering.
type VRFPeeringStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// tenantUID is the UID of the Tenant the peering was created for. A
	// Tenant created again under the same name is another tenant: the
	// peering does not apply to it (condition Orphaned).
	// +optional
	TenantUID types.UID `json:"tenantUID,omitempty"`
	// networkUID is the UID of the Network the peering was created for,
	// likewise.
	// +optional
	NetworkUID types.UID `json:"networkUID,omitempty"`
	// vrf is the name of the VRF on the nodes (the ClusterUserDefinedNetwork's name).
	// +optional
	VRF string `json:"vrf,omitempty"`
	// neighbors report the BGP sessions with each neighbor, as frr-k8s
	// reports them (BGPSessionState objects, one per node and neighbor).
	// +optional
	// +listType=map
	// +listMapKey=address
	Neighbors []VRFPeeringNeighborStatus `json:"neighbors,omitempty"`
	// conditions of the peering: HostSynced (the RouteAdvertisements and
	// FRRConfiguration exist and match), Accepted (OVN-Kubernetes' verdict
	// on the RouteAdvertisements), Orphaned (the Tenant or Network it was
	// made for is gone) and Ready (synced and accepted).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// VRFPeeringNeighborStatus reports the BGP sessions with one neighbor.
type VRFPeeringNeighborStatus struct {
	// address of the neighbor.
	Address string `json:"address"`
	// state of its sessions: Established when every node's is, Unknown
	// while frr-k8s reports none, and otherwise the BGP state of a session
	// that is not (Idle, Connect, Active, OpenSent, OpenConfirm).
	State string `json:"state"`
	// sessions counts the nodes reporting a session with the neighbor.
	// +optional
	Sessions int32 `json:"sessions,omitempty"`
	// established counts those whose session is established.
	// +optional
	Established int32 `json:"established,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VRFPeeringList is a list of VRFPeerings.
type VRFPeeringList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the VRFPeerings.
	Items []VRFPeering `json:"items"`
}

// NamespacePhase is the lifecycle state of a tenant Namespace.
type NamespacePhase string

// Namespace phases.
const (
	NamespacePhasePending     NamespacePhase = "Pending"
	NamespacePhaseActive      NamespacePhase = "Active"
	NamespacePhaseTerminating NamespacePhase = "Terminating"
)

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Namespace is a tenant's virtual namespace. Its name is private to the
// tenant; on the host it is a namespace "<tenant>-<hash6>-<name>" attached to
// the tenant Network named in spec.network.
type Namespace struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the namespace.
	// +optional
	Spec NamespaceSpec `json:"spec,omitempty"`
	// status reports the namespace on the host.
	// +optional
	Status NamespaceStatus `json:"status,omitempty"`
}

// NamespaceSpec describes a tenant namespace.
type NamespaceSpec struct {
	// network is the name of the tenant Network that is the namespace's primary network. Default "default". Immutable.
	// +optional
	Network string `json:"network,omitempty"`
}

// NamespaceStatus reports a tenant namespace.
type NamespaceStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase is Pending, Active or Terminating.
	// +optional
	Phase NamespacePhase `json:"phase,omitempty"`
	// hostNamespace is the name of the namespace on the host.
	// +optional
	HostNamespace string `json:"hostNamespace,omitempty"`
	// conditions are Ready, HostSynced and NetworkAttached. Ready is True
	// when the host namespace and its members' RoleBinding match
	// (HostSynced) and OVN-Kubernetes has attached the host namespace to
	// the Namespace's Network (NetworkAttached).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NamespaceList is a list of Namespaces.
type NamespaceList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the Namespaces.
	Items []Namespace `json:"items"`
}

// NetworkTopology is the OVN-Kubernetes topology of a Network.
type NetworkTopology string

// Network topologies.
const (
	NetworkTopologyLayer2 NetworkTopology = "Layer2"
	NetworkTopologyLayer3 NetworkTopology = "Layer3"
)

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Network is a tenant's private network (a VPC): an OVN-Kubernetes primary
// user-defined network with subnets inside the tenant's block, attached to
// the tenant Namespaces that name it, with an optional NAT gateway.
type Network struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the network.
	// +optional
	Spec NetworkSpec `json:"spec,omitempty"`
	// status reports the network on the host.
	// +optional
	Status NetworkStatus `json:"status,omitempty"`
}

// NetworkSpec describes a tenant network.
type NetworkSpec struct {
	// topology is Layer2 or Layer3. Default Layer2. Immutable.
	// +optional
	Topology NetworkTopology `json:"topology,omitempty"`
	// subnets are IPv4 CIDRs inside the tenant's block that overlap neither
	// each other nor the subnets of the tenant's other Networks. A Layer2
	// network has exactly one; a Layer3 network up to 16, each cut into
	// per-node subnets of /24 (or, for a subnet of /24 or smaller, of one bit
	// longer). Default: the lowest free /24 of the tenant's block (the
	// whole block when it is smaller). Immutable once set.
	// +optional
	// +listType=set
	Subnets []string `json:"subnets,omitempty"`
	// mtu is the maximum transmission unit of the network's pod interfaces,
	// 576 to 65536. Default: the value configured in OVN-Kubernetes (1400 on
	// a cluster with a 1500-byte underlay). Immutable.
	// +optional
	MTU *int32 `json:"mtu,omitempty"`
	// natGateway gives the network outbound SNAT through one of the tenant's public IPs.
	// +optional
	NATGateway *NATGateway `json:"natGateway,omitempty"`
	// serviceNetwork is "Shared" or "Private" (the default). The ClusterIP
	// Services of a Shared network are reachable from the pods of every
	// other Shared network of the tenant, and theirs from its pods: the
	// tenant's Shared networks have one service network, as if they were
	// one VPC for Services. Pods stay isolated: a pod reaches another
	// network's pods only through a Service. A Private network's Services
	// are reachable from its own Namespaces only. Another tenant's networks
	// are never connected, whatever they say. Private is the default
	// because sharing opens the network's Services to workloads that could
	// not reach them before, and the tenant should choose that per network.
	// The status reports the connection in the ServicesShared condition.
	// It can be changed at any time.
	// +optional
	ServiceNetwork ServiceNetworkMode `json:"serviceNetwork,omitempty"`
}

// ServiceNetworkMode says whether a Network's Services are shared with the
// tenant's other Networks.
// +enum
type ServiceNetworkMode string

// The service network modes of a Network.
const (
	// ServiceNetworkPrivate: the network's Services are reachable from its
	// own Namespaces only.
	ServiceNetworkPrivate ServiceNetworkMode = "Private"
	// ServiceNetworkShared: the network's Services are reachable from the
	// tenant's other Shared networks, and theirs from it.
	ServiceNetworkShared ServiceNetworkMode = "Shared"
)

// NATGateway configures outbound SNAT of a Network.
type NATGateway struct {
	// enabled turns the NAT gateway on.
	Enabled bool `json:"enabled"`
	// address is the tenant public IP to SNAT through. Default: the first free one.
	// +optional
	Address string `json:"address,omitempty"`
}

// NetworkStatus reports a tenant network.
type NetworkStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// subnets are the subnets in effect, after defaulting.
	// +optional
	// +listType=atomic
	Subnets []string `json:"subnets,omitempty"`
	// namespaces are the tenant Namespaces attached to the network.
	// +optional
	// +listType=set
	Namespaces []string `json:"namespaces,omitempty"`
	// natGatewayIP is the public IP the network's outbound traffic is SNATed to.
	// +optional
	NATGatewayIP string `json:"natGatewayIP,omitempty"`
	// hostNetwork is the name of the ClusterUserDefinedNetwork on the host.
	// +optional
	HostNetwork string `json:"hostNetwork,omitempty"`
	// conditions are Ready, HostSynced and NetworkCreated; EgressAssigned
	// with the NAT gateway enabled; ServicesShared when serviceNetwork is
	// Shared (True once OVN-Kubernetes accepted the connection of the
	// tenant's Shared networks, False with the reason otherwise).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NetworkList is a list of Networks.
type NetworkList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the Networks.
	Items []Network `json:"items"`
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

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// FloatingIP is one of the tenant's public IPv4 addresses, optionally bound 1:1
// to a VirtualMachine or Pod of the same namespace, with the inbound ports it accepts.
type FloatingIP struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the floating IP.
	// +optional
	Spec FloatingIPSpec `json:"spec,omitempty"`
	// status reports the floating IP.
	// +optional
	Status FloatingIPStatus `json:"status,omitempty"`
}

// FloatingIPSpec describes a floating IP.
type FloatingIPSpec struct {
	// address is one of the tenant's public IPs. Default: the first free one.
	// +optional
	Address string `json:"address,omitempty"`
	// target is the workload the address is bound to.
	// +optional
	Target *FloatingIPTarget `json:"target,omitempty"`
	// ports are the inbound ports forwarded to the target.
	// +optional
	// +listType=map
	// +listMapKey=port
	// +listMapKey=protocol
	Ports []FloatingIPPort `json:"ports,omitempty"`
}

// FloatingIPTarget names a workload in the FloatingIP's namespace.
type FloatingIPTarget struct {
	// kind is VirtualMachine or Pod.
	Kind FloatingIPTargetKind `json:"kind"`
	// name of the workload.
	Name string `json:"name"`
}

// FloatingIPPort is an inbound port of a FloatingIP.
type FloatingIPPort struct {
	// port number (1-65535).
	Port int32 `json:"port"`
	// protocol is TCP, UDP or SCTP. Default TCP.
	// +optional
	Protocol Protocol `json:"protocol,omitempty"`
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
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// address is the public IP in use.
	// +optional
	Address string `json:"address,omitempty"`
	// dnsName is the name of the address in the provider's public DNS
	// zone: <name>.<namespace>.<tenant>.<zone>, lower case, without the
	// trailing dot. Set while the FloatingIP holds its address and the
	// provider has a public zone (tenant-apiserver --public-dns-zone),
	// unless the DNSNamed condition says why not; empty otherwise.
	// +optional
	DNSName string `json:"dnsName,omitempty"`
	// phase is Pending (no address yet, or the target does not exist or
	// is another FloatingIP's: see the Ready condition's reason),
	// Allocated (the address is held, not bound), Associated or Failed.
	// +optional
	Phase FloatingIPPhase `json:"phase,omitempty"`
	// conditions are Ready, HostSynced, EgressAssigned (with a target)
	// and DNSNamed (with a public DNS zone).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// FloatingIPList is a list of FloatingIPs.
type FloatingIPList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the FloatingIPs.
	Items []FloatingIP `json:"items"`
}

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// LoadBalancer is an L4 load balancer on one of the tenant's public IPs over
// the pods and VMs of its namespace that its selector matches.
type LoadBalancer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the load balancer.
	// +optional
	Spec LoadBalancerSpec `json:"spec,omitempty"`
	// status reports the load balancer.
	// +optional
	Status LoadBalancerStatus `json:"status,omitempty"`
}

// LoadBalancerSpec describes a load balancer.
type LoadBalancerSpec struct {
	// address is one of the tenant's public IPs. Default: assigned from the tenant's pool.
	// +optional
	Address string `json:"address,omitempty"`
	// selector selects the backends by label, in the load balancer's namespace.
	// +optional
	Selector map[string]string `json:"selector,omitempty"`
	// ports are the balanced ports.
	// +listType=map
	// +listMapKey=port
	// +listMapKey=protocol
	Ports []LoadBalancerPort `json:"ports"`
	// sourceRanges are the IPv4 CIDRs allowed to connect. Default: everyone.
	// +optional
	// +listType=atomic
	SourceRanges []string `json:"sourceRanges,omitempty"`
}

// LoadBalancerPort is one balanced port.
type LoadBalancerPort struct {
	// name of the port; required when there are several ports.
	// +optional
	Name string `json:"name,omitempty"`
	// port is the public port (1-65535).
	Port int32 `json:"port"`
	// targetPort is the backends' port, a number or a named port. Default: port.
	// +optional
	TargetPort intstr.IntOrString `json:"targetPort,omitempty"`
	// protocol is TCP, UDP or SCTP. Default TCP.
	// +optional
	Protocol Protocol `json:"protocol,omitempty"`
}

// LoadBalancerStatus reports a load balancer.
type LoadBalancerStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// address is the public IP assigned on the host.
	// +optional
	Address string `json:"address,omitempty"`
	// dnsName is the name of the address in the provider's public DNS
	// zone: <name>.<namespace>.<tenant>.<zone>, lower case, without the
	// trailing dot. Set while the address is assigned on the host and the
	// provider has a public zone (tenant-apiserver --public-dns-zone),
	// unless the DNSNamed condition says why not; empty otherwise.
	// +optional
	DNSName string `json:"dnsName,omitempty"`
	// conditions are Ready, HostSynced and DNSNamed (with a public DNS
	// zone, once the address is assigned).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// LoadBalancerList is a list of LoadBalancers.
type LoadBalancerList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the LoadBalancers.
	Items []LoadBalancer `json:"items"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// OffboardingReport is the tenants/offboarding subresource: what stands in
// the way of deleting a Tenant now. A refused DELETE of the Tenant lists
// the same blockers as the causes of its 409.
type OffboardingReport struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the Tenant's name (and its uid and resourceVersion when read).
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// tenant is the name of the Tenant reported on.
	Tenant string `json:"tenant"`
	// ready is true when a DELETE of the Tenant would be accepted now.
	Ready bool `json:"ready"`
	// blockers are what the Tenant still has that a DELETE must wait for:
	// pods in its host namespaces, FloatingIPs, LoadBalancers, creates in
	// flight and, until the syncer has taken the Tenant in charge (the
	// tenant.io/offboarding finalizer), its Namespaces and Networks.
	// +optional
	// +listType=atomic
	Blockers []OffboardingBlocker `json:"blockers,omitempty"`
	// providerBlockers are the provider's objects made for this tenant
	// alone, which the provider must delete first (the tenant cannot):
	// the VRFPeerings of its Networks, and ProviderServices offered to it
	// alone.
	// +optional
	// +listType=atomic
	ProviderBlockers []OffboardingBlocker `json:"providerBlockers,omitempty"`
}

// OffboardingBlocker is one object that keeps a Tenant from being deleted.
type OffboardingBlocker struct {
	// resource is the kind of the blocker, as a resource name: pods,
	// virtualmachines, virtualmachineinstances, persistentvolumeclaims,
	// datavolumes, floatingips, loadbalancers, namespaces or networks;
	// vrfpeerings or providerservices among providerBlockers.
	Resource string `json:"resource"`
	// namespace is the tenant Namespace (as the tenant names it) the blocker
	// is in; empty for cluster-scoped blockers.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// name is the blocker's name; empty for creates still in flight.
	// +optional
	Name string `json:"name,omitempty"`
	// state is set for workloads in the tenant's host namespaces: Running
	// (pods, VirtualMachineInstances, VirtualMachines whose instance runs),
	// Stopped (VirtualMachines that do not run: their disks are kept) or
	// Disk (PersistentVolumeClaims and DataVolumes, which hold data).
	// +optional
	State WorkloadState `json:"state,omitempty"`
	// message says why the object blocks the delete.
	// +optional
	Message string `json:"message,omitempty"`
}

// WorkloadState says what deleting a workload on the host would destroy.
// +enum
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
