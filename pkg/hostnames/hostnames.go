// Package hostnames is the one place that decides how tenant objects are
// named and marked on the host, and how the public addresses they hold are
// named in the provider's public DNS zone (PublicDNSName). Every function
// is deterministic: the same tenant, UID and name always give the same
// host name, so the syncer can find its objects again after a restart
// without any state of its own.
//
// Host namespace of tenant Namespace <ns> of tenant <t>:
//
//	<t>-<first 6 hex digits of sha256(t's UID)>-<ns>
//
// cut to 63 characters when longer: the first 54 characters (without a
// trailing "-"), "-", and the first 8 hex digits of sha256 of the full name.
//
// ClusterUserDefinedNetwork of tenant Network <n>: "tn" and the first 13 hex
// digits of sha256(<t's UID>/<n>), 15 characters, because OVN-Kubernetes
// names the VRF device after the network only when the name fits in 15.
//
// ClusterNetworkConnects: "tc" and 13 hex digits of sha256(<t's UID>/<pn>)
// for a tenant's connection with provider network <pn>; "ts" and 13 hex
// digits of sha256(<t's UID>/service-network) for the one connection of
// the tenant's Shared Networks.
//
// The UID in the names makes a re-created tenant of the same name get
// names of its own, and the owner UID annotation (OwnerUIDAnnotation) is
// what the syncer checks before it touches a host object: a name alone
// never makes an object ours.
package hostnames

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// Labels and annotations on every host object the syncer makes.
const (
	// TenantLabel names the tenant of a host object.
	TenantLabel = "tenant.io/tenant"
	// KindLabelPrefix + lower-case kind ("tenant.io/namespace") carries the
	// name of the tenant object a host object realises.
	KindLabelPrefix = "tenant.io/"
	// OwnerUIDAnnotation holds the UID of the tenant object a host object
	// realises; the syncer never adopts, updates or deletes a host object
	// whose annotation does not match.
	OwnerUIDAnnotation = "tenant.io/owner-uid"
	// TenantUIDAnnotation holds the UID of the Tenant a host object was
	// made for: with the owner UID it tells an orphan of a deleted tenant
	// (or of a former tenant of the same name) from a live object.
	TenantUIDAnnotation = "tenant.io/tenant-uid"
	// ChangedByAnnotation holds, on a tenant.io object, the user whose
	// write last changed its spec (or created it), and on a host object,
	// the same of the tenant object it realises: a host audit entry of
	// the syncer's write leads to the tenant's user. Set by the server.
	ChangedByAnnotation = "tenant.io/changed-by"
	// ChangedAtAnnotation holds, on a tenant.io object, when its spec was
	// last changed (RFC 3339 with nanoseconds, UTC). Set by the server.
	ChangedAtAnnotation = "tenant.io/changed-at"

	// NamespaceLabel names, on a host namespace and what is inside it, the
	// tenant Namespace it realises.
	NamespaceLabel = KindLabelPrefix + "namespace"
	// NetworkLabel names, on a host namespace, the tenant Network that is
	// its primary network.
	NetworkLabel = KindLabelPrefix + "network"
	// HostNetworkLabel names, on a host namespace, the ClusterUserDefinedNetwork
	// of its primary Network: the CUDN and the NAT gateway's EgressIP select
	// their namespaces by it. Unlike NetworkLabel it is unique across
	// tenants, and across a tenant re-created under the same name.
	HostNetworkLabel = KindLabelPrefix + "host-network"
	// VRFPeeringLabel names, on its RouteAdvertisements and
	// FRRConfiguration, the VRFPeering they realise.
	VRFPeeringLabel = KindLabelPrefix + "vrfpeering"
	// ProviderServiceLabel names, on an alias Service in a tenant's host
	// namespace, the ProviderService it realises.
	ProviderServiceLabel = KindLabelPrefix + "providerservice"
	// ConnectLabel names, on a ClusterNetworkConnect, the provider network
	// it connects the tenant's networks with.
	ConnectLabel = KindLabelPrefix + "connect"
	// ConnectGroupLabel puts a ClusterUserDefinedNetwork in a connection
	// group, by which a ClusterNetworkConnect selects the networks it
	// connects (its selectors allow one label selector for CUDNs): on a
	// tenant's networks it is TenantConnectGroup, set by the syncer when it
	// makes them; on a provider network that serves an offered Service,
	// ProviderConnectGroup, set by the syncer when the service is offered.
	ConnectGroupLabel = "tenant.io/connect-group"
	// ServiceNetworkLabel puts a tenant's ClusterUserDefinedNetwork in the
	// tenant's shared service network: the syncer sets it, to the name of
	// the tenant's ServiceNetworkConnect, on the networks it makes for
	// the tenant's Networks whose spec.serviceNetwork is Shared, and on
	// no other. That ClusterNetworkConnect selects its networks by it and
	// by the tenant label. The value is derived from the tenant's UID, so
	// a network of another tenant, or of a former tenant of the same
	// name, never carries it.
	ServiceNetworkLabel = KindLabelPrefix + "service-network"
	// PrimaryUDNLabel makes OVN-Kubernetes give a namespace a primary
	// user-defined network; it is only honoured when set at creation.
	PrimaryUDNLabel = "k8s.ovn.org/primary-user-defined-network"
	// UDNRenderedLabel is on every NetworkAttachmentDefinition
	// OVN-Kubernetes renders from a user-defined network.
	UDNRenderedLabel = "k8s.ovn.org/user-defined-network"

	// IsolationLabel carries, on every host namespace of a tenant, the
	// tenant's spec.isolation (Hard or Soft): tenant-dns answers a Hard
	// tenant's pods from its own view and hides its names from everyone
	// else's.
	IsolationLabel = KindLabelPrefix + "isolation"

	// PodSecurityEnforceLabel, PodSecurityAuditLabel and
	// PodSecurityWarnLabel set the Pod Security Standard level that the
	// host's Pod Security admission enforces, audits and warns about in a
	// namespace; the syncer sets all three on every host namespace to the
	// tenant's level.
	PodSecurityEnforceLabel = "pod-security.kubernetes.io/enforce"
	PodSecurityAuditLabel   = "pod-security.kubernetes.io/audit"
	PodSecurityWarnLabel    = "pod-security.kubernetes.io/warn"
	// OpenShiftPodSecurityLabelSync set to "false" keeps OpenShift's
	// pod security label synchroniser from rewriting the Pod Security labels
	// of a namespace from the SCCs its service accounts may use.
	OpenShiftPodSecurityLabelSync = "security.openshift.io/scc.podSecurityLabelSync"
	// PriorityClassesAnnotation on a host namespace lists, comma-separated,
	// the PriorityClasses the tenant's pods and VMs there may name: those
	// the provider granted (Tenant.spec.priorityClasses) and the host's
	// default class. The scheduling guard policy reads it.
	PriorityClassesAnnotation = KindLabelPrefix + "priority-classes"
	// RouteDomainsAnnotation on a host namespace lists, comma-separated,
	// the DNS domains the HTTP routes of the namespace may name: each
	// domain and every name below it (Tenant.status.routeDomain, see
	// TenantRouteDomain). Empty: none. The routes guard policy
	// (artifacts/deploy/base/82-route-policies.yaml) reads it.
	RouteDomainsAnnotation = KindLabelPrefix + "route-domains"
	// DNSNameserverAnnotation on a host namespace of a tenant of Hard
	// isolation holds the address of the provider's tenant DNS server
	// (tenant-apiserver's --tenant-dns-address); DNSSearchesAnnotation the
	// space-separated search path of its pods (DNSSearches). The tenant DNS
	// policies (artifacts/deploy/base/81-tenant-dns-policies.yaml) set
	// every pod created there to resolve through that server alone, and
	// refuse a pod that does not. The syncer removes both when the tenant
	// is Soft.
	DNSNameserverAnnotation = KindLabelPrefix + "dns-nameserver"
	DNSSearchesAnnotation   = KindLabelPrefix + "dns-searches"
	// DetachedAnnotation on a host namespace being removed holds the
	// network it was detached from and when ("<cudn> <RFC 3339 time>"):
	// the syncer deletes it once OVN-Kubernetes has removed the network's
	// attachment there (see the host namespaces of pkg/syncer/hostkinds).
	DetachedAnnotation = KindLabelPrefix + "detached"
	// ManagedUsersAnnotation on a tenant's OpenShift Group lists, as a JSON
	// array, the users the syncer put there from Tenant.spec.members.users:
	// the only ones it takes out again. Users the identity provider's group
	// sync (or an admin) added stay.
	ManagedUsersAnnotation = KindLabelPrefix + "managed-users"

	// PodLabel is the label the syncer puts on the Pod a FloatingIP
	// targets, with the pod's own name as value: a Service can select a
	// pod by label only.
	PodLabel = KindLabelPrefix + "pod"
	// FloatingIPTargetLabel is the label the syncer puts on every pod a
	// FloatingIP binds (its Pod target, its VirtualMachine target's
	// launcher pods), with the FloatingIP's UID as value: the
	// FloatingIP's EgressIP selects the pods that have it, the NAT
	// gateway's those that do not, so no pod ever matches both.
	FloatingIPTargetLabel = "tenant.io/floatingip-target"
	// VirtualMachineLabel is the label KubeVirt puts on the pod of a
	// VirtualMachine, with the VM's name as value.
	VirtualMachineLabel = "vm.kubevirt.io/name"
	// ComputeQuota is the ResourceQuota in every host namespace of a tenant
	// with compute quota: the namespace's share of the tenant's total.
	ComputeQuota = "tenant.io-compute"
	// ContainerDefaults is the LimitRange beside it: the requests and
	// limits of containers that set none.
	ContainerDefaults = "tenant.io-container-defaults"
	// MembersRoleBinding is the RoleBinding in every host namespace of a
	// tenant that gives its members the admin ClusterRole there.
	MembersRoleBinding = "tenant.io:members"
)

// maxNameLength is the longest Kubernetes namespace name (a DNS label).
const maxNameLength = 63

// cudnNameLength is the longest network name whose VRF is named after it.
const cudnNameLength = 15

func sum(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "/")))
	return hex.EncodeToString(h[:])
}

// NamespacePrefix is the prefix of every host namespace of a tenant:
// "<tenant>-<6 hex of sha256(uid)>".
func NamespacePrefix(tenant string, uid types.UID) string {
	return tenant + "-" + sum(string(uid))[:6]
}

// Namespace is the host namespace of tenant Namespace ns.
func Namespace(tenant string, uid types.UID, ns string) string {
	full := NamespacePrefix(tenant, uid) + "-" + ns
	if len(full) <= maxNameLength {
		return full
	}
	suffix := sum(full)[:8]
	head := strings.TrimRight(full[:maxNameLength-len(suffix)-1], "-")
	return head + "-" + suffix
}

// ClusterUserDefinedNetwork is the name of the host ClusterUserDefinedNetwork
// (and of its VRF) of tenant Network network.
func ClusterUserDefinedNetwork(uid types.UID, network string) string {
	return "tn" + sum(string(uid), network)[:cudnNameLength-2]
}

// NATGatewayEgressIP is the name of the EgressIP of the NAT gateway of the
// Network whose ClusterUserDefinedNetwork is cudn.
func NATGatewayEgressIP(cudn string) string {
	return cudn + "-nat"
}

// LoadBalancerService is the name of the host Service of tenant
// LoadBalancer name, in its host namespace.
func LoadBalancerService(name string) string { return prefixed("lb-", name) }

// FloatingIPService is the name of the host Service of tenant FloatingIP
// name, in its host namespace.
func FloatingIPService(name string) string { return prefixed("fip-", name) }

// FloatingIPEgressIP is the name of the (cluster-scoped) EgressIP of tenant
// FloatingIP name in tenant Namespace ns of the tenant of UID uid.
func FloatingIPEgressIP(uid types.UID, ns, name string) string {
	return "fip-" + sum(string(uid), ns, name)[:20]
}

// prefixed is prefix+name, cut to a DNS label with a hash of the whole
// when longer than 63 characters.
func prefixed(prefix, name string) string {
	full := prefix + name
	if len(full) <= maxNameLength {
		return full
	}
	suffix := sum(full)[:8]
	return strings.TrimRight(full[:maxNameLength-len(suffix)-1], "-") + "-" + suffix
}

// ClusterNetworkConnect is the name of the ClusterNetworkConnect of the
// tenant of UID uid with provider network providerNetwork.
func ClusterNetworkConnect(uid types.UID, providerNetwork string) string {
	return "tc" + sum(string(uid), providerNetwork)[:cudnNameLength-2]
}

// ServiceNetworkConnect is the name of the ClusterNetworkConnect that
// gives the Shared Networks of the tenant of UID uid one service network:
// "ts" and 13 hex digits, never the name of a provider service's
// connection ("tc...").
func ServiceNetworkConnect(uid types.UID) string {
	return "ts" + sum(string(uid), "service-network")[:cudnNameLength-2]
}

// TenantConnectGroup is the connection group of tenant t's networks.
func TenantConnectGroup(t string) string { return "tenant." + t }

// ProviderConnectGroup is the connection group of provider network pn.
func ProviderConnectGroup(pn string) string { return "provider." + sum(pn)[:16] }

// VRFPeering is the name of the RouteAdvertisements and of the
// FRRConfiguration of VRFPeering name.
func VRFPeering(name string) string { return prefixed("vrfp-", name) }

// MetalLBPool is the name of the MetalLB IPAddressPool (and of its
// advertisement) holding a tenant's public IPs: the namespace prefix, which
// a re-created tenant of the same name does not share.
func MetalLBPool(tenant string, uid types.UID) string {
	return NamespacePrefix(tenant, uid)
}

// DNSSearches is the DNS search path of the pods of a tenant Namespace
// named ns (its name as the tenant sees it) in a cluster of DNS domain
// domain, space-separated as in resolv.conf: the tenant DNS server answers
// <service>.<ns>.svc.<domain> for the tenant's own Services, so a pod
// finds them by "<service>" and "<service>.<ns>", as in any cluster.
func DNSSearches(ns, domain string) string {
	return ns + ".svc." + domain + " svc." + domain + " " + domain
}

// HostDataSecret names the copy of a HostClaim's cloud-init data of kind
// (user-data, meta-data, network-data) next to its server, the
// BareMetalHost host, in the provider's namespace.
func HostDataSecret(host, kind string) string { return prefixed(kind+"-", host) }
