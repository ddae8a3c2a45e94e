package validation

import (
	"fmt"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

// ValidateLoadBalancer checks a LoadBalancer on creation.
func ValidateLoadBalancer(obj *tenant.LoadBalancer) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&obj.ObjectMeta, true, ValidateLoadBalancerName, metadataPath)
	allErrs = append(allErrs, validateLoadBalancerSpec(&obj.Spec, specPath)...)
	return allErrs
}

// ValidateLoadBalancerUpdate checks an update of a LoadBalancer. The address
// is immutable once set; selector, ports and source ranges may change.
func ValidateLoadBalancerUpdate(newObj, oldObj *tenant.LoadBalancer) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateLoadBalancerSpec(&newObj.Spec, specPath)...)
	allErrs = append(allErrs, validateImmutableOnceSet(newObj.Spec.Address, oldObj.Spec.Address, specPath.Child("address"))...)
	return allErrs
}

// ValidateLoadBalancerStatusUpdate checks an update of a LoadBalancer's status.
func ValidateLoadBalancerStatusUpdate(newObj, oldObj *tenant.LoadBalancer) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	st := &newObj.Status
	allErrs = append(allErrs, validateStatusCommon(st.ObservedGeneration, st.Conditions, statusPath)...)
	if st.Address != "" {
		allErrs = append(allErrs, validatePublicIPv4Address(st.Address, statusPath.Child("address"))...)
	}
	allErrs = append(allErrs, validatePublicDNSName(st.DNSName, st.Address, statusPath)...)
	return allErrs
}

func validateLoadBalancerSpec(spec *tenant.LoadBalancerSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.Address != "" {
		allErrs = append(allErrs, validatePublicIPv4Address(spec.Address, fldPath.Child("address"))...)
	}

	selPath := fldPath.Child("selector")
	if len(spec.Selector) == 0 {
		allErrs = append(allErrs, field.Required(selPath, "a load balancer without a selector has no backends; select pods or VMs by label, e.g. app: web"))
	}
	allErrs = append(allErrs, metav1validation.ValidateLabels(spec.Selector, selPath)...)

	allErrs = append(allErrs, validateLoadBalancerPorts(spec.Ports, fldPath.Child("ports"))...)

	srPath := fldPath.Child("sourceRanges")
	seen := make(map[string]bool, len(spec.SourceRanges))
	for i, r := range spec.SourceRanges {
		p := srPath.Index(i)
		if _, errs := validateIPv4CIDR(r, 0, 32, p); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
		} else if seen[r] {
			allErrs = append(allErrs, field.Duplicate(p, r))
		}
		seen[r] = true
	}
	return allErrs
}

func validateLoadBalancerPorts(ports []tenant.LoadBalancerPort, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case len(ports) == 0:
		allErrs = append(allErrs, field.Required(fldPath, "at least one port is required"))
	case len(ports) > MaxPorts:
		allErrs = append(allErrs, field.TooMany(fldPath, len(ports), MaxPorts))
	}
	names := make(map[string]bool, len(ports))
	keys := make(map[string]bool, len(ports))
	for i, p := range ports {
		pPath := fldPath.Index(i)
		namePath := pPath.Child("name")
		switch {
		case p.Name == "" && len(ports) > 1:
			allErrs = append(allErrs, field.Required(namePath, "ports must be named when there are several"))
		case p.Name == "":
		case names[p.Name]:
			allErrs = append(allErrs, field.Duplicate(namePath, p.Name))
		default:
			for _, msg := range utilvalidation.IsDNS1123Label(p.Name) {
				allErrs = append(allErrs, field.Invalid(namePath, p.Name, msg))
			}
		}
		names[p.Name] = true

		errs := validatePortNumber(p.Port, pPath.Child("port"))
		errs = append(errs, validateProtocol(p.Protocol, pPath.Child("protocol"))...)
		allErrs = append(allErrs, errs...)
		key := fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if len(errs) == 0 && keys[key] {
			allErrs = append(allErrs, field.Duplicate(pPath, key))
		}
		keys[key] = true

		allErrs = append(allErrs, validateTargetPort(p.TargetPort, pPath.Child("targetPort"))...)
	}
	return allErrs
}

// validateTargetPort checks a backend port: a number, or the name of a
// container port (an IANA service name).
func validateTargetPort(tp intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch tp.Type {
	case intstr.Int:
		allErrs = append(allErrs, validatePortNumber(tp.IntVal, fldPath)...)
	case intstr.String:
		if tp.StrVal == "" {
			allErrs = append(allErrs, field.Required(fldPath, "must be a port number or the name of a port of the backends"))
			break
		}
		for _, msg := range utilvalidation.IsValidPortName(tp.StrVal) {
			allErrs = append(allErrs, field.Invalid(fldPath, tp.StrVal, msg))
		}
	default:
		allErrs = append(allErrs, field.Invalid(fldPath, tp, "must be a port number or a port name"))
	}
	return allErrs
}
