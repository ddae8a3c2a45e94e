package validation

import (
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

// ValidateNamespace checks a tenant Namespace on creation.
func ValidateNamespace(obj *tenant.Namespace) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&obj.ObjectMeta, false, ValidateTenantNamespaceName, metadataPath)
	allErrs = append(allErrs, validateDNSLabelRef(obj.Spec.Network, specPath.Child("network"))...)
	return allErrs
}

// ValidateNamespaceUpdate checks an update of a tenant Namespace. Its Network
// is immutable: OVN-Kubernetes fixes a namespace's primary network when the
// host namespace is created.
func ValidateNamespaceUpdate(newObj, oldObj *tenant.Namespace) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateDNSLabelRef(newObj.Spec.Network, specPath.Child("network"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(newObj.Spec.Network, oldObj.Spec.Network, specPath.Child("network"))...)
	return allErrs
}

var supportedNamespacePhases = []tenant.NamespacePhase{
	tenant.NamespacePhasePending, tenant.NamespacePhaseActive, tenant.NamespacePhaseTerminating,
}

// ValidateNamespaceStatusUpdate checks an update of a tenant Namespace's status.
func ValidateNamespaceStatusUpdate(newObj, oldObj *tenant.Namespace) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	st := &newObj.Status
	allErrs = append(allErrs, validateStatusCommon(st.ObservedGeneration, st.Conditions, statusPath)...)
	allErrs = append(allErrs, validateEnum(st.Phase, supportedNamespacePhases, true, statusPath.Child("phase"))...)
	if st.HostNamespace != "" {
		for _, msg := range apimachineryvalidation.ValidateNamespaceName(st.HostNamespace, false) {
			allErrs = append(allErrs, field.Invalid(statusPath.Child("hostNamespace"), st.HostNamespace, msg))
		}
	}
	return allErrs
}
