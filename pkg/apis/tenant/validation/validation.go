// Package validation checks tenant.io objects in their internal form, after
// defaulting. Every function returns a field.ErrorList whose paths name the
// offending field and whose details say how to fix it, so that the API server
// can answer 422 Invalid with something a user can act on.
//
// Checks that need other objects (a Network's subnets inside its Tenant's
// block, pool capacity, quota) belong to the registry; the helpers they need
// (ParseIPv4CIDR, PrefixesOverlap, ValidateSubnetsWithinBlock...) live here so
// that both sides agree on what a valid address is.
package validation

import (
	"fmt"
	"strings"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

// Limits enforced by this package.
const (
	// MaxTenantNameLength is the longest Tenant name. A tenant's name starts
	// every one of its host namespaces ("<tenant>-<6 hex>-<namespace>"), and a
	// short tenant name leaves most of the 63 characters to the namespace.
	MaxTenantNameLength = 30
	// MaxDisplayNameLength is the longest Tenant spec.displayName.
	MaxDisplayNameLength = 256
	// MaxQuota is the largest value of any Tenant quota field.
	MaxQuota = 10000
	// MaxPublicIPs is the largest number of public IPv4 addresses a Tenant may ask for.
	MaxPublicIPs = 256
	// MinBlockPrefixLength is the prefix length of the largest tenant block or subnet (/8).
	MinBlockPrefixLength = 8
	// MaxBlockPrefixLength is the prefix length of the smallest tenant block or subnet (/30):
	// smaller ones leave no usable host address.
	MaxBlockPrefixLength = 30
	// MinConnectPrefixLength is the prefix length of the largest connect
	// subnet (/16): OVN-Kubernetes uses no more of one.
	MinConnectPrefixLength = 16
	// MaxConnectPrefixLength is the prefix length of the smallest connect
	// subnet (/27): each network of a connection gets a slice
	// ConnectNetworkPrefixBits longer, at most a /31.
	MaxConnectPrefixLength = 27
	// DefaultConnectPrefixLength is the size of a connect subnet when the
	// ConnectSubnets pool names none.
	DefaultConnectPrefixLength = 24
	// ConnectNetworkPrefixBits is how much longer than its connect subnet
	// the slice of each connected network is: 16 networks per connection.
	ConnectNetworkPrefixBits = 4
	// MaxSubnets is the largest number of subnets of a Network.
	MaxSubnets = 16
	// MaxPorts is the largest number of ports of a FloatingIP or LoadBalancer.
	MaxPorts = 64
	// MaxASN is the largest 4-byte autonomous system number.
	MaxASN = 4294967295
	// MaxHostNetworkNameLength is the longest host network (ClusterUserDefinedNetwork)
	// name: OVN-Kubernetes names the VRF device after it, and Linux interface names
	// are at most 15 characters.
	MaxHostNetworkNameLength = 15
	// MinMTU and MaxMTU bound a Network's MTU, as OVN-Kubernetes does.
	MinMTU, MaxMTU = 576, 65536

	// generatedNameSuffixLength is how many random characters metadata.generateName gets.
	generatedNameSuffixLength = 5
)

var (
	metadataPath = field.NewPath("metadata")
	specPath     = field.NewPath("spec")
	statusPath   = field.NewPath("status")
)

// ValidateTenantName is an apimachineryvalidation.ValidateNameFunc for Tenant
// names: DNS-1123 labels of at most MaxTenantNameLength characters. With
// prefix set it checks a metadata.generateName, which must leave room for
// the generated suffix.
func ValidateTenantName(name string, prefix bool) []string {
	if prefix {
		errs := apimachineryvalidation.NameIsDNSLabel(name, true)
		if maxLen := MaxTenantNameLength - generatedNameSuffixLength; len(name) > maxLen {
			errs = append(errs, fmt.Sprintf("must be no more than %d characters, leaving room for the %d generated ones", maxLen, generatedNameSuffixLength))
		}
		return errs
	}
	errs := dnsLabelWithMaxLength(name, MaxTenantNameLength)
	if seg := hostPrefixSegment(name); seg != "" {
		errs = append(errs, fmt.Sprintf("must not have a part of 6 hexadecimal digits after a '-' (%q): "+
			"host namespaces are named <tenant>-<6 hex digits>-<namespace>, and such a name would read as another tenant's prefix", seg))
	}
	return errs
}

// hostPrefixSegment returns the first '-'-separated part of a tenant name,
// after the first, made of exactly 6 hexadecimal digits, or "". A tenant's
// host namespaces are "<tenant>-<6 hex>-<namespace>"; without such parts,
// no tenant's names ever start with another tenant's "<tenant>-<6 hex>-",
// which is how the guard policies tell a tenant's namespaces.
func hostPrefixSegment(name string) string {
	parts := strings.Split(name, "-")
	for _, p := range parts[1:] {
		if len(p) == 6 && strings.Trim(p, "0123456789abcdef") == "" {
			return p
		}
	}
	return ""
}

// ValidateTenantNamespaceName is an apimachineryvalidation.ValidateNameFunc for
// tenant Namespace names: DNS-1123 labels. The host namespace name
// "<tenant>-<6 hex>-<name>" is shortened with a hash when it would pass 63
// characters, so the full 63 are allowed here.
var ValidateTenantNamespaceName = apimachineryvalidation.NameIsDNSLabel

// ValidateNetworkName is an apimachineryvalidation.ValidateNameFunc for Network
// names: DNS-1123 labels.
var ValidateNetworkName = apimachineryvalidation.NameIsDNSLabel

// ValidateFloatingIPName is an apimachineryvalidation.ValidateNameFunc for
// FloatingIP names. A FloatingIP becomes a host Service, so its name follows
// the Service name rules: a DNS-1035 label.
var ValidateFloatingIPName = apimachineryvalidation.NameIsDNS1035Label

// ValidateLoadBalancerName is an apimachineryvalidation.ValidateNameFunc for
// LoadBalancer names. A LoadBalancer becomes a host Service, so its name
// follows the Service name rules: a DNS-1035 label.
var ValidateLoadBalancerName = apimachineryvalidation.NameIsDNS1035Label

// ValidateAddressPoolName is an apimachineryvalidation.ValidateNameFunc for
// AddressPool names: DNS-1123 subdomains.
var ValidateAddressPoolName = apimachineryvalidation.NameIsDNSSubdomain

// ValidateProviderServiceName is an apimachineryvalidation.ValidateNameFunc for
// ProviderService names: DNS-1123 subdomains. A name that is not also a
// DNS-1035 label needs a spec.alias.
var ValidateProviderServiceName = apimachineryvalidation.NameIsDNSSubdomain

// ValidateVRFPeeringName is an apimachineryvalidation.ValidateNameFunc for
// VRFPeering names: DNS-1123 subdomains.
var ValidateVRFPeeringName = apimachineryvalidation.NameIsDNSSubdomain

// dnsLabelWithMaxLength checks a DNS-1123 label with a length limit below 63,
// reporting the tighter limit only.
func dnsLabelWithMaxLength(name string, maxLen int) []string {
	var errs []string
	if len(name) > maxLen {
		errs = append(errs, utilvalidation.MaxLenError(maxLen))
	}
	longMsg := utilvalidation.MaxLenError(utilvalidation.DNS1123LabelMaxLength)
	for _, msg := range utilvalidation.IsDNS1123Label(name) {
		if msg != longMsg {
			errs = append(errs, msg)
		}
	}
	return errs
}

// validateRequiredName checks a reference to another object by name: required,
// and valid under check.
func validateRequiredName(name string, check func(string) []string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	for _, msg := range check(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	return allErrs
}

// validateTenantRef checks the name of a Tenant referred to by another object.
func validateTenantRef(name string, fldPath *field.Path) field.ErrorList {
	return validateRequiredName(name, func(s string) []string { return ValidateTenantName(s, false) }, fldPath)
}

// validateDNSLabelRef checks the name of an object whose names are DNS-1123 labels.
func validateDNSLabelRef(name string, fldPath *field.Path) field.ErrorList {
	return validateRequiredName(name, utilvalidation.IsDNS1123Label, fldPath)
}

// validateObservedGeneration checks status.observedGeneration.
func validateObservedGeneration(gen int64, fldPath *field.Path) field.ErrorList {
	return apimachineryvalidation.ValidateNonnegativeField(gen, fldPath)
}

// validateStatusCommon checks what every status has: observedGeneration and conditions.
func validateStatusCommon(observedGeneration int64, conditions []metav1.Condition, fldPath *field.Path) field.ErrorList {
	allErrs := validateObservedGeneration(observedGeneration, fldPath.Child("observedGeneration"))
	allErrs = append(allErrs, metav1validation.ValidateConditions(conditions, fldPath.Child("conditions"))...)
	return allErrs
}

// validateEnum checks that value is one of supported. An empty value is
// Required unless optional is set, in which case it is accepted.
func validateEnum[T ~string](value T, supported []T, optional bool, fldPath *field.Path) field.ErrorList {
	if value == "" {
		if optional {
			return nil
		}
		return field.ErrorList{field.Required(fldPath, fmt.Sprintf("must be one of %q", supported))}
	}
	for _, s := range supported {
		if value == s {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(fldPath, value, supported)}
}

// validateInt64Range checks min <= value <= max.
func validateInt64Range(value, minValue, maxValue int64, fldPath *field.Path) field.ErrorList {
	if value < minValue || value > maxValue {
		return field.ErrorList{field.Invalid(fldPath, value, fmt.Sprintf("must be between %d and %d, inclusive", minValue, maxValue))}
	}
	return nil
}

// validatePortNumber checks a TCP/UDP/SCTP port number.
func validatePortNumber(port int32, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range utilvalidation.IsValidPortNum(int(port)) {
		allErrs = append(allErrs, field.Invalid(fldPath, port, msg))
	}
	return allErrs
}

var supportedProtocols = []tenant.Protocol{tenant.ProtocolTCP, tenant.ProtocolUDP, tenant.ProtocolSCTP}

// validateProtocol checks an L4 protocol; defaulting sets TCP, so empty is an error.
func validateProtocol(p tenant.Protocol, fldPath *field.Path) field.ErrorList {
	return validateEnum(p, supportedProtocols, false, fldPath)
}

// validateImmutableOnceSet reports a change of a string field that had a value.
func validateImmutableOnceSet(newValue, oldValue string, fldPath *field.Path) field.ErrorList {
	if oldValue != "" && newValue != oldValue {
		return field.ErrorList{field.Invalid(fldPath, newValue, apimachineryvalidation.FieldImmutableErrorMsg)}
	}
	return nil
}

// validateUniqueNonEmptyStrings checks a list of names: each non-empty, none repeated.
func validateUniqueNonEmptyStrings(values []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := make(map[string]bool, len(values))
	for i, v := range values {
		p := fldPath.Index(i)
		switch {
		case v == "":
			allErrs = append(allErrs, field.Required(p, "must not be empty"))
		case seen[v]:
			allErrs = append(allErrs, field.Duplicate(p, v))
		}
		seen[v] = true
	}
	return allErrs
}
