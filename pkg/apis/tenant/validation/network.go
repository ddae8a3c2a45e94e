package validation

import (
	"fmt"
	"net/netip"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

var supportedNetworkTopologies = []tenant.NetworkTopology{tenant.NetworkTopologyLayer2, tenant.NetworkTopologyLayer3}

var supportedServiceNetworks = []tenant.ServiceNetworkMode{tenant.ServiceNetworkPrivate, tenant.ServiceNetworkShared}

// ValidateNetwork checks a Network on creation. Whether the subnets lie
// inside the tenant's block is checked by the registry, which knows the
// Tenant, with ValidateSubnetsWithinBlock.
func ValidateNetwork(obj *tenant.Network) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&obj.ObjectMeta, false, ValidateNetworkName, metadataPath)
	allErrs = append(allErrs, validateNetworkSpec(&obj.Spec, specPath)...)
	return allErrs
}

// ValidateNetworkUpdate checks an update of a Network. Topology, subnets
// and MTU are immutable once set, as the spec of the host
// ClusterUserDefinedNetwork is; the NAT gateway and the service network
// mode may change.
func ValidateNetworkUpdate(newObj, oldObj *tenant.Network) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateNetworkSpec(&newObj.Spec, specPath)...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(newObj.Spec.Topology, oldObj.Spec.Topology, specPath.Child("topology"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(newObj.Spec.MTU, oldObj.Spec.MTU, specPath.Child("mtu"))...)
	if len(oldObj.Spec.Subnets) > 0 {
		allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(newObj.Spec.Subnets, oldObj.Spec.Subnets, specPath.Child("subnets"))...)
	}
	return allErrs
}

// ValidateNetworkStatusUpdate checks an update of a Network's status.
func ValidateNetworkStatusUpdate(newObj, oldObj *tenant.Network) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	st := &newObj.Status
	allErrs = append(allErrs, validateStatusCommon(st.ObservedGeneration, st.Conditions, statusPath)...)
	allErrs = append(allErrs, validateSubnets(st.Subnets, statusPath.Child("subnets"))...)
	nsPath := statusPath.Child("namespaces")
	allErrs = append(allErrs, validateUniqueNonEmptyStrings(st.Namespaces, nsPath)...)
	for i, ns := range st.Namespaces {
		if ns == "" {
			continue
		}
		for _, msg := range ValidateTenantNamespaceName(ns, false) {
			allErrs = append(allErrs, field.Invalid(nsPath.Index(i), ns, msg))
		}
	}
	if st.NATGatewayIP != "" {
		allErrs = append(allErrs, validatePublicIPv4Address(st.NATGatewayIP, statusPath.Child("natGatewayIP"))...)
	}
	if st.HostNetwork != "" {
		for _, msg := range dnsLabelWithMaxLength(st.HostNetwork, MaxHostNetworkNameLength) {
			allErrs = append(allErrs, field.Invalid(statusPath.Child("hostNetwork"), st.HostNetwork, msg))
		}
	}
	return allErrs
}

func validateNetworkSpec(spec *tenant.NetworkSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateEnum(spec.Topology, supportedNetworkTopologies, false, fldPath.Child("topology"))
	allErrs = append(allErrs, validateSubnets(spec.Subnets, fldPath.Child("subnets"))...)
	// OVN-Kubernetes gives a Layer2 network one subnet per IP family.
	if spec.Topology == tenant.NetworkTopologyLayer2 && len(spec.Subnets) > 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("subnets"), spec.Subnets, "a Layer2 network has exactly one IPv4 subnet"))
	}
	if spec.MTU != nil && (*spec.MTU < MinMTU || *spec.MTU > MaxMTU) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("mtu"), *spec.MTU, fmt.Sprintf("must be between %d and %d", MinMTU, MaxMTU)))
	}
	if gw := spec.NATGateway; gw != nil && gw.Address != "" {
		allErrs = append(allErrs, validatePublicIPv4Address(gw.Address, fldPath.Child("natGateway", "address"))...)
	}
	// Empty is Private: objects made inside the server are not defaulted.
	allErrs = append(allErrs, validateEnum(spec.ServiceNetwork, supportedServiceNetworks, true, fldPath.Child("serviceNetwork"))...)
	return allErrs
}

// validateSubnets checks a Network's subnets: canonical IPv4 CIDRs between
// /8 and /30, at most MaxSubnets, no two sharing an address.
func validateSubnets(subnets []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(subnets) > MaxSubnets {
		allErrs = append(allErrs, field.TooMany(fldPath, len(subnets), MaxSubnets))
	}
	parsed := make([]netip.Prefix, len(subnets))
	for i, s := range subnets {
		p := fldPath.Index(i)
		prefix, errs := validateIPv4CIDR(s, MinBlockPrefixLength, MaxBlockPrefixLength, p)
		if len(errs) > 0 {
			allErrs = append(allErrs, errs...)
			continue
		}
		parsed[i] = prefix
		for j := 0; j < i; j++ {
			if !parsed[j].IsValid() || !PrefixesOverlap(parsed[j], prefix) {
				continue
			}
			if parsed[j] == prefix {
				allErrs = append(allErrs, field.Duplicate(p, s))
			} else {
				allErrs = append(allErrs, field.Invalid(p, s, fmt.Sprintf("overlaps %s (%s)", fldPath.Index(j), subnets[j])))
			}
			break
		}
	}
	return allErrs
}
