package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of every kind in this package.
const GroupName = "tenant.io"

// SchemeGroupVersion is the group version used to register these objects.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// Resource takes an unqualified resource and returns a group-qualified GroupResource.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder collects the functions that add this package's types to a scheme.
	SchemeBuilder      runtime.SchemeBuilder
	localSchemeBuilder = &SchemeBuilder
	// AddToScheme adds the v1alpha1 types, conversions and defaults to a scheme.
	AddToScheme = localSchemeBuilder.AddToScheme
)

func init() {
	// The generated conversion and defaulting functions register themselves
	// through localSchemeBuilder too.
	localSchemeBuilder.Register(addKnownTypes, addDefaultingFuncs)
}

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
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
