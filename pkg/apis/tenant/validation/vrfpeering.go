package validation

import (
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

// ValidateVRFPeering checks a VRFPeering on creation.
func ValidateVRFPeering(obj *tenant.VRFPeering) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&obj.ObjectMeta, false, ValidateVRFPeeringName, metadataPath)
	allErrs = append(allErrs, validateVRFPeeringSpec(&obj.Spec, specPath)...)
	return allErrs
}

// ValidateVRFPeeringUpdate checks an update of a VRFPeering. The peered
// Network is immutable: moving the peering means deleting the host
// RouteAdvertisements and FRRConfiguration of one VRF and creating another's.
func ValidateVRFPeeringUpdate(newObj, oldObj *tenant.VRFPeering) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateVRFPeeringSpec(&newObj.Spec, specPath)...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(newObj.Spec.Tenant, oldObj.Spec.Tenant, specPath.Child("tenant"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(newObj.Spec.Network, oldObj.Spec.Network, specPath.Child("network"))...)
	return allErrs
}

// ValidateVRFPeeringStatusUpdate checks an update of a VRFPeering's status.
func ValidateVRFPeeringStatusUpdate(newObj, oldObj *tenant.VRFPeering) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	st := &newObj.Status
	allErrs = append(allErrs, validateStatusCommon(st.ObservedGeneration, st.Conditions, statusPath)...)
	if st.VRF != "" {
		for _, msg := range dnsLabelWithMaxLength(st.VRF, MaxHostNetworkNameLength) {
			allErrs = append(allErrs, field.Invalid(statusPath.Child("vrf"), st.VRF, msg))
		}
	}
	return allErrs
}

func validateVRFPeeringSpec(spec *tenant.VRFPeeringSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateTenantRef(spec.Tenant, fldPath.Child("tenant"))
	allErrs = append(allErrs, validateDNSLabelRef(spec.Network, fldPath.Child("network"))...)
	allErrs = append(allErrs, validateInt64Range(spec.ASN, 1, MaxASN, fldPath.Child("asn"))...)

	nPath := fldPath.Child("neighbors")
	if len(spec.Neighbors) == 0 {
		allErrs = append(allErrs, field.Required(nPath, "at least one BGP neighbor is required"))
	}
	seen := make(map[string]bool, len(spec.Neighbors))
	for i, n := range spec.Neighbors {
		p := nPath.Index(i)
		addrPath := p.Child("address")
		if errs := validateRoutableIPv4Address(n.Address, addrPath); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
		} else if seen[n.Address] {
			allErrs = append(allErrs, field.Duplicate(addrPath, n.Address))
		}
		seen[n.Address] = true
		allErrs = append(allErrs, validateInt64Range(n.ASN, 1, MaxASN, p.Child("asn"))...)
		if n.Port != nil {
			allErrs = append(allErrs, validatePortNumber(*n.Port, p.Child("port"))...)
		}
	}
	return allErrs
}
