// Package hostkinds is the catalogue of the kinds of host objects the
// syncer makes: for each, how it is read (its informer) and written (its
// client) on the host, which of its fields are the syncer's to repair,
// and which changes replace it. The controllers share one Catalogue,
// built once from their Sources; controller.HostKind is how any of them
// is made to match.
package hostkinds

import (
	egressipv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	rav1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/routeadvertisements/v1"
	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// Catalogue holds the host kinds of the syncer, each read and written
// through the informers and clients of one Sources.
type Catalogue struct {
	// HostNamespaces are the host namespaces of tenant Namespaces, and
	// RoleBindings their members' bindings.
	HostNamespaces controller.HostKind[*corev1.Namespace]
	RoleBindings   controller.HostKind[*rbacv1.RoleBinding]
	// ResourceQuotas and LimitRanges are a host namespace's share of its
	// tenant's quota and its container defaults.
	ResourceQuotas controller.HostKind[*corev1.ResourceQuota]
	LimitRanges    controller.HostKind[*corev1.LimitRange]
	// Services are the LoadBalancer Services of LoadBalancers and
	// FloatingIPs; AliasServices, the ExternalName Services that name a
	// provider service in a tenant's host namespaces.
	Services, AliasServices controller.HostKind[*corev1.Service]
	// ClusterUserDefinedNetworks are the host networks of tenant
	// Networks; EgressIPs, their NAT gateways' and FloatingIPs' egress.
	ClusterUserDefinedNetworks controller.HostKind[*udnv1.ClusterUserDefinedNetwork]
	EgressIPs                  controller.HostKind[*egressipv1.EgressIP]
	// RouteAdvertisements are the VRF peerings' advertisements.
	RouteAdvertisements controller.HostKind[*rav1.RouteAdvertisements]
	// FlowSchemas are the tenants' shares of the host API.
	FlowSchemas controller.HostKind[*flowcontrolv1.FlowSchema]
	// Groups are the tenants' OpenShift Groups, in the platform's
	// identity layer (only on a host that serves them).
	Groups controller.HostKind[*unstructured.Unstructured]

	// The kinds read through the dynamic client, whose specs compare in
	// the typed form the caller gives (MetalLB, FRRConfigurations,
	// ClusterNetworkConnects).
	metalLB  map[schema.GroupVersionResource]controller.HostKind[*unstructured.Unstructured]
	frr      controller.HostKind[*unstructured.Unstructured]
	connects controller.HostKind[*unstructured.Unstructured]
}

// New returns the Catalogue of the host kinds read and written through src.
func New(src *controller.Sources) *Catalogue {
	c := &Catalogue{
		HostNamespaces:             newHostNamespaces(src),
		RoleBindings:               newRoleBindings(src),
		ResourceQuotas:             newResourceQuotas(src),
		LimitRanges:                newLimitRanges(src),
		Services:                   newServices(src),
		AliasServices:              newAliasServices(src),
		ClusterUserDefinedNetworks: newClusterUserDefinedNetworks(src),
		EgressIPs:                  newEgressIPs(src),
		RouteAdvertisements:        newRouteAdvertisements(src),
		FlowSchemas:                newFlowSchemas(src),
		Groups:                     newGroups(src),
		metalLB:                    map[schema.GroupVersionResource]controller.HostKind[*unstructured.Unstructured]{},
		frr:                        dynamicKind(src, controller.FRRConfigurations, "FRRConfiguration", src.HostFRRConfigurations),
		connects:                   newClusterNetworkConnects(src),
	}
	for _, gvr := range controller.MetalLBResources {
		c.metalLB[gvr] = dynamicKind(src, gvr, gvr.Resource, src.HostMetalLB[gvr])
	}
	return c
}
