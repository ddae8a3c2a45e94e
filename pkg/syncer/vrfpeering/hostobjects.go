// Package vrfpeering is the syncer's controller of VRFPeerings: for each, an
// OVN-Kubernetes RouteAdvertisements that advertises the peered Network's
// pod network into its own VRF, and the frr-k8s FRRConfiguration whose
// router in that VRF peers with the provider's routers.
package vrfpeering

import (
	"fmt"
	"net/netip"
	"time"

	frrv1beta1 "github.com/metallb/frr-k8s/api/v1beta1"
	rav1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/routeadvertisements/v1"
	ovntypes "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
)

// HostName is the name of the RouteAdvertisements and of the
// FRRConfiguration of VRFPeering name.
func HostName(name string) string { return hostnames.VRFPeering(name) }

// Marks are the marks of the host objects of VRFPeering p of Tenant t.
func Marks(t *tenant.Tenant, p *tenant.VRFPeering) hostnames.Marks {
	return hostnames.Marks{Tenant: t.Name, TenantUID: t.UID, KindLabel: hostnames.VRFPeeringLabel, Name: p.Name, OwnerUID: p.UID, ChangedBy: hostnames.ChangedBy(p)}
}

// Advertised are the prefixes p announces: spec.advertise, or the
// subnets of its Network n.
func Advertised(p *tenant.VRFPeering, n *tenant.Network) []string {
	if len(p.Spec.Advertise) > 0 {
		return append([]string(nil), p.Spec.Advertise...)
	}
	return append([]string(nil), n.Spec.Subnets...)
}

// RouteAdvertisements advertises the pod network of Network n (its
// ClusterUserDefinedNetwork cudn, selected by the label only the syncer
// sets) into the network's own VRF (targetVRF auto), on every node (the
// CRD requires it for the pod network), through the FRRConfiguration of p
// alone.
func RouteAdvertisements(t *tenant.Tenant, p *tenant.VRFPeering, cudn string) *rav1.RouteAdvertisements {
	marks := Marks(t, p)
	return &rav1.RouteAdvertisements{
		TypeMeta:   metav1.TypeMeta{APIVersion: rav1.SchemeGroupVersion.String(), Kind: "RouteAdvertisements"},
		ObjectMeta: metav1.ObjectMeta{Name: HostName(p.Name), Labels: marks.Labels(), Annotations: marks.Annotations()},
		Spec: rav1.RouteAdvertisementsSpec{
			TargetVRF: "auto",
			NetworkSelectors: ovntypes.NetworkSelectors{{
				NetworkSelectionType: ovntypes.ClusterUserDefinedNetworks,
				ClusterUserDefinedNetworkSelector: &ovntypes.ClusterUserDefinedNetworkSelector{
					NetworkSelector: metav1.LabelSelector{MatchLabels: map[string]string{hostnames.HostNetworkLabel: cudn}},
				},
			}},
			NodeSelector:             metav1.LabelSelector{},
			FRRConfigurationSelector: metav1.LabelSelector{MatchLabels: FRRConfigurationLabels(t, p)},
			Advertisements:           []rav1.AdvertisementType{rav1.PodNetwork},
		},
	}
}

// FRRConfigurationLabels select the FRRConfiguration of p: its tenant and
// peering marks, which only the syncer writes.
func FRRConfigurationLabels(t *tenant.Tenant, p *tenant.VRFPeering) map[string]string {
	return Marks(t, p).Labels()
}

// FRRConfigurationSpec is the frr-k8s configuration of p on Network n:
// one router of ASN spec.asn in VRF cudn (the network's VRF is named
// after its ClusterUserDefinedNetwork), peering with every neighbor,
// announcing the advertised prefixes and accepting exactly the received
// ones, on every node.
func FRRConfigurationSpec(p *tenant.VRFPeering, n *tenant.Network, cudn, namespace string) *frrv1beta1.FRRConfigurationSpec {
	advertised := Advertised(p, n)
	var receive []frrv1beta1.PrefixSelector
	if r := p.Spec.Receive; r != nil {
		for _, s := range r.Prefixes {
			receive = append(receive, frrv1beta1.PrefixSelector{Prefix: s})
		}
		if r.DefaultRoute {
			receive = append(receive, frrv1beta1.PrefixSelector{Prefix: "0.0.0.0/0"})
		}
	}
	router := frrv1beta1.Router{ASN: uint32(p.Spec.ASN), VRF: cudn, Prefixes: advertised}
	for _, nb := range p.Spec.Neighbors {
		out := frrv1beta1.Neighbor{
			ASN:           uint32(nb.ASN),
			Address:       nb.Address,
			HoldTime:      duration(nb.HoldTime),
			KeepaliveTime: duration(nb.KeepaliveTime),
			BFDProfile:    nb.BFDProfile,
			// OVN-Kubernetes accepts no FRRConfiguration for
			// RouteAdvertisements whose neighbors use multiprotocol BGP
			// ("DisableMP==false not supported"); the sessions carry
			// IPv4 only.
			DisableMP:   true,
			ToAdvertise: frrv1beta1.Advertise{Allowed: frrv1beta1.AllowedOutPrefixes{Mode: frrv1beta1.AllowRestricted, Prefixes: advertised}},
			ToReceive:   frrv1beta1.Receive{Allowed: frrv1beta1.AllowedInPrefixes{Mode: frrv1beta1.AllowRestricted, Prefixes: receive}},
		}
		if nb.Port != nil {
			port := uint16(*nb.Port)
			out.Port = &port
		}
		if nb.PasswordSecret != "" {
			out.PasswordSecret = frrv1beta1.SecretReference{Name: nb.PasswordSecret, Namespace: namespace}
		}
		router.Neighbors = append(router.Neighbors, out)
	}
	return &frrv1beta1.FRRConfigurationSpec{BGP: frrv1beta1.BGPConfig{Routers: []frrv1beta1.Router{router}}}
}

func duration(d *metav1.Duration) *metav1.Duration {
	if d == nil {
		return nil
	}
	return &metav1.Duration{Duration: d.Round(time.Second)}
}

// FRRConfiguration is the FRRConfiguration object of p, in namespace.
func FRRConfiguration(t *tenant.Tenant, p *tenant.VRFPeering, spec *frrv1beta1.FRRConfigurationSpec, namespace string) (*unstructured.Unstructured, error) {
	u, err := hostkinds.NewMetalLBObject(controller.FRRConfigurations, "FRRConfiguration", namespace, HostName(p.Name), spec)
	if err != nil {
		return nil, err
	}
	marks := Marks(t, p)
	marks.Apply(u)
	return u, nil
}

// Sessions sums up the BGP sessions frr-k8s reports with neighbor address
// in VRF vrf, one per node.
func Sessions(states []frrv1beta1.BGPSessionState, vrf, address string) tenant.VRFPeeringNeighborStatus {
	out := tenant.VRFPeeringNeighborStatus{Address: address, State: "Unknown"}
	notUp := ""
	want, err := netip.ParseAddr(address)
	if err != nil {
		return out
	}
	for _, s := range states {
		peer, err := netip.ParseAddr(s.Status.Peer)
		if err != nil || peer != want || s.Status.VRF != vrf {
			continue
		}
		out.Sessions++
		if s.Status.BGPStatus == "Established" {
			out.Established++
		} else if notUp == "" {
			notUp = s.Status.BGPStatus
			if notUp == "" {
				notUp = "Unknown"
			}
		}
	}
	switch {
	case out.Sessions == 0:
	case notUp != "":
		out.State = notUp
	default:
		out.State = "Established"
	}
	return out
}

// describe names a host object in messages.
func describe(kind, namespace, name string) string {
	if namespace == "" {
		return fmt.Sprintf("%s %s", kind, name)
	}
	return fmt.Sprintf("%s %s/%s", kind, namespace, name)
}
