package tenant

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of every kind in this package.
const GroupName = "tenant.io"

// SchemeGroupVersion is the internal group version used to register these objects.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: runtime.APIVersionInternal}

// Kind takes an unqualified kind and returns a group-qualified GroupKind.
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

// Resource takes an unqualified resource and returns a group-qualified GroupResource.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder collects the functions that add this package's types to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the internal types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&Tenant{}, &TenantList{},
		&AddressPool{}, &AddressPoolList{},
		&ProviderService{}, &ProviderServiceList{},
		&VRFPeering{}, &VRFPeeringList{},
		&Namespace{}, &NamespaceList{},
		&Network{}, &NetworkList{},
		&FloatingIP{}, &FloatingIPList{},
		&LoadBalancer{}, &LoadBalancerList{},
		&HostClass{}, &HostClassList{},
		&HostClaim{}, &HostClaimList{},
		&OffboardingReport{},
	)
	return nil
}
