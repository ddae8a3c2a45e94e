// Package admin is the admin.tenant.io API group: the provider's read-only
// views of every tenant's objects. Its kinds are tenant.io's Namespace,
// Network, FloatingIP, LoadBalancer and HostClaim, with the same fields;
// what differs is their names, which carry their tenant so that objects of
// different tenants never share a key:
//
//   - a tenant kind's object (Namespace, Network) is named
//     "<tenant>.<name>": Network "default" of tenant acme is "acme.default";
//   - a namespaced kind's object (FloatingIP, LoadBalancer, HostClaim)
//     keeps its name and lives in namespace "<tenant>.<namespace>":
//     FloatingIP "web" in acme's Namespace "prod" is "web" in "acme.prod",
//     which is also the name of that Namespace in this group.
//
// Tenant names are DNS labels, so the first "." of a name always ends the
// tenant. Every object also carries the label tenant.io/tenant.
package admin

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

// GroupName is the API group of the provider's views.
const GroupName = "admin.tenant.io"

// SchemeGroupVersion is the served version of the group.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// InternalGroupVersion is the group's internal version, where the
// registry's objects (tenant.io's internal types) are kinds of this group.
var InternalGroupVersion = schema.GroupVersion{Group: GroupName, Version: runtime.APIVersionInternal}

// Resource takes an unqualified resource and returns a group-qualified GroupResource.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

// Kinds are the kinds the group serves.
var Kinds = []string{"Namespace", "Network", "FloatingIP", "LoadBalancer", "HostClaim"}

// AddToScheme registers the group's kinds, internal and v1alpha1, with
// tenant.io's conversions and field selectors, v1alpha1 preferred.
func AddToScheme(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(InternalGroupVersion,
		&tenant.Namespace{}, &tenant.NamespaceList{},
		&tenant.Network{}, &tenant.NetworkList{},
		&tenant.FloatingIP{}, &tenant.FloatingIPList{},
		&tenant.LoadBalancer{}, &tenant.LoadBalancerList{},
		&tenant.HostClaim{}, &tenant.HostClaimList{},
	)
	AddVersionedToScheme(scheme)
	if err := v1alpha1.RegisterConversions(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddFieldLabelConversionFuncs(scheme, SchemeGroupVersion, Kinds...); err != nil {
		return err
	}
	return scheme.SetVersionPriority(SchemeGroupVersion)
}

// AddVersionedToScheme registers the group's v1alpha1 kinds alone: what a
// client that decodes the group's objects into tenant.io's v1alpha1 types
// needs.
func AddVersionedToScheme(scheme *runtime.Scheme) {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&v1alpha1.Namespace{}, &v1alpha1.NamespaceList{},
		&v1alpha1.Network{}, &v1alpha1.NetworkList{},
		&v1alpha1.FloatingIP{}, &v1alpha1.FloatingIPList{},
		&v1alpha1.LoadBalancer{}, &v1alpha1.LoadBalancerList{},
		&v1alpha1.HostClaim{}, &v1alpha1.HostClaimList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
}

// Name is the name in this group of tenant t's object name (of a tenant
// kind) or namespace (of a namespaced kind).
func Name(t, name string) string { return t + "." + name }

// SplitName splits a name of this group into its tenant and the name in
// the tenant's view; ok is false when s names no tenant's object.
func SplitName(s string) (t, name string, ok bool) {
	t, name, ok = strings.Cut(s, ".")
	return t, name, ok && t != "" && name != ""
}
