package providerservice

import (
	"fmt"
	"net/netip"

	cncv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/clusternetworkconnect/v1"
	ovntypes "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
)

// ConnectSpec is the spec of the ClusterNetworkConnect of tenant t with
// provider network pn. Its one CUDN selector selects two connection
// groups (hostnames.ConnectGroupLabel): the provider network's and tenant
// t's. The syncer puts a tenant group on the networks it makes for that
// tenant only, and a provider group on provider networks only (CUDNs
// without a tenant label), and tenants cannot write CUDNs: a connection
// never selects the networks of two tenants.
func ConnectSpec(t, pn string, subnet netip.Prefix, networkPrefix int, podNetwork bool) cncv1.ClusterNetworkConnectSpec {
	connectivity := []cncv1.ConnectivityType{cncv1.ServiceNetwork}
	if podNetwork {
		connectivity = append(connectivity, cncv1.PodNetwork)
	}
	return cncv1.ClusterNetworkConnectSpec{
		NetworkSelectors: ovntypes.NetworkSelectors{{
			NetworkSelectionType: ovntypes.ClusterUserDefinedNetworks,
			ClusterUserDefinedNetworkSelector: &ovntypes.ClusterUserDefinedNetworkSelector{NetworkSelector: metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: hostnames.ConnectGroupLabel, Operator: metav1.LabelSelectorOpIn,
					Values: []string{hostnames.ProviderConnectGroup(pn), hostnames.TenantConnectGroup(t)},
				}},
			}},
		}},
		ConnectSubnets: []cncv1.ConnectSubnet{{CIDR: cncv1.CIDR(subnet.String()), NetworkPrefix: int32(networkPrefix)}},
		Connectivity:   connectivity,
	}
}

// ConnectMarks are the marks of the ClusterNetworkConnect of tenant t
// (UID uid) with provider network pn: the Tenant owns it. changedBy is the
// user who last changed the Tenant.
func ConnectMarks(t string, uid types.UID, pn, changedBy string) hostnames.Marks {
	return hostnames.Marks{Tenant: t, TenantUID: uid, KindLabel: hostnames.ConnectLabel, Name: pn, OwnerUID: uid, ChangedBy: changedBy}
}

// NewConnect returns the ClusterNetworkConnect object of spec.
func NewConnect(uid types.UID, pn string, spec cncv1.ClusterNetworkConnectSpec, marks hostnames.Marks) (*unstructured.Unstructured, error) {
	u, err := hostkinds.NewMetalLBObject(controller.ClusterNetworkConnects, "ClusterNetworkConnect", "", hostnames.ClusterNetworkConnect(uid, pn), spec)
	if err != nil {
		return nil, err
	}
	marks.Apply(u)
	return u, nil
}

// AliasMarks are the marks of the alias Service of ProviderService ps (UID
// psUID, last changed by changedBy) in a host namespace of tenant t.
func AliasMarks(t string, uid types.UID, ps string, psUID types.UID, changedBy string) hostnames.Marks {
	return hostnames.Marks{Tenant: t, TenantUID: uid, KindLabel: hostnames.ProviderServiceLabel, Name: ps, OwnerUID: psUID, ChangedBy: changedBy}
}

// Alias is the alias Service named alias in host namespace hostNS for the
// provider Service svc: an ExternalName Service whose name resolves, in
// cluster DNS, to svc's own name, so that a tenant pod reaches svc's
// cluster IP (reachable from its network through the connection) as
// <alias>. Its ports are svc's, for the reader: DNS does not use them.
func Alias(hostNS, alias string, svc *corev1.Service, clusterDomain string, marks hostnames.Marks) *corev1.Service {
	ports := make([]corev1.ServicePort, 0, len(svc.Spec.Ports))
	for _, p := range svc.Spec.Ports {
		ports = append(ports, corev1.ServicePort{Name: p.Name, Port: p.Port, Protocol: p.Protocol, TargetPort: p.TargetPort})
	}
	out := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: hostNS, Name: alias},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: fmt.Sprintf("%s.%s.svc.%s", svc.Name, svc.Namespace, clusterDomain),
			Ports:        ports,
		},
	}
	marks.Apply(out)
	return out
}
