package validation

import (
	"fmt"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

var supportedFloatingIPTargetKinds = []tenant.FloatingIPTargetKind{
	tenant.FloatingIPTargetVirtualMachine, tenant.FloatingIPTargetPod,
}

var supportedFloatingIPPhases = []tenant.FloatingIPPhase{
	tenant.FloatingIPPhasePending, tenant.FloatingIPPhaseAllocated,
	tenant.FloatingIPPhaseAssociated, tenant.FloatingIPPhaseFailed,
}

// ValidateFloatingIP checks a FloatingIP on creation.
func ValidateFloatingIP(obj *tenant.FloatingIP) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&obj.ObjectMeta, true, ValidateFloatingIPName, metadataPath)
	allErrs = append(allErrs, validateFloatingIPSpec(&obj.Spec, specPath)...)
	return allErrs
}

// ValidateFloatingIPUpdate checks an update of a FloatingIP. The address is
// immutable once set or held (status.address), so that a tenant's address
// never moves under its clients; the target and ports may change.
func ValidateFloatingIPUpdate(newObj, oldObj *tenant.FloatingIP) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateFloatingIPSpec(&newObj.Spec, specPath)...)
	addressPath := specPath.Child("address")
	switch held := oldObj.Status.Address; {
	case oldObj.Spec.Address != "":
		allErrs = append(allErrs, validateImmutableOnceSet(newObj.Spec.Address, oldObj.Spec.Address, addressPath)...)
	case held != "" && newObj.Spec.Address != "" && newObj.Spec.Address != held:
		allErrs = append(allErrs, field.Invalid(addressPath, newObj.Spec.Address,
			fmt.Sprintf("%s: the FloatingIP holds %s", apimachineryvalidation.FieldImmutableErrorMsg, held)))
	}
	return allErrs
}

// ValidateFloatingIPStatusUpdate checks an update of a FloatingIP's status.
func ValidateFloatingIPStatusUpdate(newObj, oldObj *tenant.FloatingIP) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	st := &newObj.Status
	allErrs = append(allErrs, validateStatusCommon(st.ObservedGeneration, st.Conditions, statusPath)...)
	allErrs = append(allErrs, validateEnum(st.Phase, supportedFloatingIPPhases, true, statusPath.Child("phase"))...)
	if st.Address != "" {
		allErrs = append(allErrs, validatePublicIPv4Address(st.Address, statusPath.Child("address"))...)
	}
	allErrs = append(allErrs, validatePublicDNSName(st.DNSName, st.Address, statusPath)...)
	return allErrs
}

func validateFloatingIPSpec(spec *tenant.FloatingIPSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.Address != "" {
		allErrs = append(allErrs, validatePublicIPv4Address(spec.Address, fldPath.Child("address"))...)
	}
	if t := spec.Target; t != nil {
		tPath := fldPath.Child("target")
		allErrs = append(allErrs, validateEnum(t.Kind, supportedFloatingIPTargetKinds, false, tPath.Child("kind"))...)
		allErrs = append(allErrs, validateRequiredName(t.Name, utilvalidation.IsDNS1123Subdomain, tPath.Child("name"))...)
	}
	portsPath := fldPath.Child("ports")
	if len(spec.Ports) > MaxPorts {
		allErrs = append(allErrs, field.TooMany(portsPath, len(spec.Ports), MaxPorts))
	}
	seen := make(map[string]bool, len(spec.Ports))
	for i, p := range spec.Ports {
		pPath := portsPath.Index(i)
		errs := validatePortNumber(p.Port, pPath.Child("port"))
		errs = append(errs, validateProtocol(p.Protocol, pPath.Child("protocol"))...)
		allErrs = append(allErrs, errs...)
		key := fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if len(errs) == 0 && seen[key] {
			allErrs = append(allErrs, field.Duplicate(pPath, key))
		}
		seen[key] = true
	}
	return allErrs
}
