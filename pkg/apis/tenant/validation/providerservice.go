package validation

import (
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

// ValidateProviderService checks a ProviderService on creation.
func ValidateProviderService(obj *tenant.ProviderService) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&obj.ObjectMeta, false, ValidateProviderServiceName, metadataPath)
	allErrs = append(allErrs, validateProviderServiceSpec(obj.Name, &obj.Spec, specPath)...)
	return allErrs
}

// ValidateProviderServiceUpdate checks an update of a ProviderService. The
// offer may change freely: the syncer adds and removes the aliases.
func ValidateProviderServiceUpdate(newObj, oldObj *tenant.ProviderService) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateProviderServiceSpec(newObj.Name, &newObj.Spec, specPath)...)
	return allErrs
}

// ValidateProviderServiceStatusUpdate checks an update of a ProviderService's status.
func ValidateProviderServiceStatusUpdate(newObj, oldObj *tenant.ProviderService) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateStatusCommon(newObj.Status.ObservedGeneration, newObj.Status.Conditions, statusPath)...)
	return allErrs
}

func validateProviderServiceSpec(name string, spec *tenant.ProviderServiceSpec, fldPath *field.Path) field.ErrorList {
	svcPath := fldPath.Child("service")
	allErrs := validateDNSLabelRef(spec.Service.Namespace, svcPath.Child("namespace"))
	allErrs = append(allErrs, validateRequiredName(spec.Service.Name, utilvalidation.IsDNS1035Label, svcPath.Child("name"))...)

	// The alias is the name of a Service in each tenant namespace, so it
	// follows the Service name rules; without one, metadata.name is used.
	aliasPath := fldPath.Child("alias")
	if spec.Alias != "" {
		for _, msg := range utilvalidation.IsDNS1035Label(spec.Alias) {
			allErrs = append(allErrs, field.Invalid(aliasPath, spec.Alias, msg))
		}
	} else if name != "" && len(utilvalidation.IsDNS1035Label(name)) > 0 {
		allErrs = append(allErrs, field.Required(aliasPath, "must be set when metadata.name is not a valid Service name (a DNS-1035 label, e.g. my-name)"))
	}

	tenantsPath := fldPath.Child("tenants")
	seen := make(map[string]bool, len(spec.Tenants))
	for i, t := range spec.Tenants {
		p := tenantsPath.Index(i)
		if errs := validateTenantRef(t, p); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
		} else if seen[t] {
			allErrs = append(allErrs, field.Duplicate(p, t))
		}
		seen[t] = true
	}
	if spec.AllTenants && len(spec.Tenants) > 0 {
		allErrs = append(allErrs, field.Invalid(tenantsPath, spec.Tenants, "must be empty when spec.allTenants is true"))
	}
	return allErrs
}
