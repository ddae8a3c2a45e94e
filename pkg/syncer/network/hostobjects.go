package network

import (
	"net/netip"

	egressipv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// defaultHostSubnetLength is the per-node subnet of a Layer3 network whose
// subnets are all larger than it: OVN-Kubernetes' own default for IPv4.
const defaultHostSubnetLength = 24

// HostSubnetLength is the per-node subnet length of a Layer3 network with
// these subnets: /24, or one bit longer than the longest subnet when that
// is /24 or longer. OVN-Kubernetes wants one length for every subnet of a
// family, longer than each of them and shorter than /32; subnets are /8 to
// /30, so the result is /24 to /31. Unparsable subnets are skipped (they
// never pass validation).
func HostSubnetLength(subnets []string) int32 {
	longest := 0
	for _, s := range subnets {
		if p, err := netip.ParsePrefix(s); err == nil && p.Bits() > longest {
			longest = p.Bits()
		}
	}
	return int32(max(defaultHostSubnetLength, longest+1))
}

// NamespaceSelector selects the host namespaces attached to the network
// whose ClusterUserDefinedNetwork is cudn: those the syncer labelled with
// it, of tenant t. Nothing a tenant writes enters it.
func NamespaceSelector(t, cudn string) metav1.LabelSelector {
	return metav1.LabelSelector{MatchLabels: map[string]string{
		hostnames.TenantLabel:      t,
		hostnames.HostNetworkLabel: cudn,
	}}
}

// Marks are the marks of the host objects of Network n of Tenant t.
func Marks(t *tenant.Tenant, n *tenant.Network) hostnames.Marks {
	return hostnames.Marks{Tenant: t.Name, TenantUID: t.UID, KindLabel: hostnames.NetworkLabel, Name: n.Name, OwnerUID: n.UID, ChangedBy: hostnames.ChangedBy(n)}
}

// ClusterUserDefinedNetwork is the host network of Network n of Tenant t:
// a primary network of n's topology over n's subnets (as the registry
// stored them, defaults filled in) and MTU, attached to the host
// namespaces of the tenant Namespaces whose spec.network is n.
func ClusterUserDefinedNetwork(t *tenant.Tenant, n *tenant.Network) *udnv1.ClusterUserDefinedNetwork {
	name := hostnames.ClusterUserDefinedNetwork(t.UID, n.Name)
	marks := Marks(t, n)
	var mtu int32
	if n.Spec.MTU != nil {
		mtu = *n.Spec.MTU
	}
	spec := udnv1.NetworkSpec{Topology: udnv1.NetworkTopology(n.Spec.Topology)}
	switch n.Spec.Topology {
	case tenant.NetworkTopologyLayer3:
		hostSubnet := HostSubnetLength(n.Spec.Subnets)
		l3 := &udnv1.Layer3Config{Role: udnv1.NetworkRolePrimary, MTU: mtu}
		for _, s := range n.Spec.Subnets {
			l3.Subnets = append(l3.Subnets, udnv1.Layer3Subnet{CIDR: udnv1.CIDR(s), HostSubnet: hostSubnet})
		}
		spec.Layer3 = l3
	default:
		l2 := &udnv1.Layer2Config{Role: udnv1.NetworkRolePrimary, MTU: mtu}
		for _, s := range n.Spec.Subnets {
			l2.Subnets = append(l2.Subnets, udnv1.CIDR(s))
		}
		spec.Layer2 = l2
	}
	labels := marks.Labels()
	// VRF peerings' RouteAdvertisements select the network by it.
	labels[hostnames.HostNetworkLabel] = name
	// Provider services' ClusterNetworkConnects select the tenant's networks by it.
	labels[hostnames.ConnectGroupLabel] = hostnames.TenantConnectGroup(t.Name)
	// The tenant's service network selects its Shared networks by it.
	if n.Spec.SharesServices() {
		labels[hostnames.ServiceNetworkLabel] = hostnames.ServiceNetworkConnect(t.UID)
	}
	return &udnv1.ClusterUserDefinedNetwork{
		TypeMeta:   metav1.TypeMeta{APIVersion: udnv1.SchemeGroupVersion.String(), Kind: "ClusterUserDefinedNetwork"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: marks.Annotations()},
		Spec: udnv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: NamespaceSelector(t.Name, name),
			Network:           spec,
		},
	}
}

// NATPodSelector selects the pods a NAT gateway sends out: all but those
// a FloatingIP binds (labelled hostnames.FloatingIPTargetLabel), which
// leave through their FloatingIP's EgressIP. The two are disjoint by
// construction: a pod has the label or not.
func NATPodSelector() metav1.LabelSelector {
	return metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: hostnames.FloatingIPTargetLabel, Operator: metav1.LabelSelectorOpDoesNotExist},
	}}
}

// NATGatewayEgressIP is the EgressIP of the NAT gateway of Network n of
// Tenant t: every pod of the network's host namespaces but FloatingIPs'
// targets (NATPodSelector) leaves through address, n's
// status.natGatewayIP.
func NATGatewayEgressIP(t *tenant.Tenant, n *tenant.Network, address string) *egressipv1.EgressIP {
	cudn := hostnames.ClusterUserDefinedNetwork(t.UID, n.Name)
	marks := Marks(t, n)
	return &egressipv1.EgressIP{
		TypeMeta:   metav1.TypeMeta{APIVersion: egressipv1.SchemeGroupVersion.String(), Kind: "EgressIP"},
		ObjectMeta: metav1.ObjectMeta{Name: hostnames.NATGatewayEgressIP(cudn), Labels: marks.WithUIDLabels(marks.Labels()), Annotations: marks.Annotations()},
		Spec: egressipv1.EgressIPSpec{
			EgressIPs:         []string{address},
			NamespaceSelector: NamespaceSelector(t.Name, cudn),
			PodSelector:       NATPodSelector(),
		},
		// The EgressIP CRD has no status subresource and requires
		// status.items: an empty list, which OVN-Kubernetes fills.
		Status: egressipv1.EgressIPStatus{Items: []egressipv1.EgressIPStatusItem{}},
	}
}
