package validation

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

// ValidateTenant checks a Tenant on creation.
func ValidateTenant(obj *tenant.Tenant) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&obj.ObjectMeta, false, ValidateTenantName, metadataPath)
	allErrs = append(allErrs, validateTenantSpec(&obj.Spec, specPath)...)
	return allErrs
}

// ValidateTenantUpdate checks an update of a Tenant. The tenant's block never
// moves: host networks, subnets and addresses are carved out of it.
func ValidateTenantUpdate(newObj, oldObj *tenant.Tenant) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateTenantSpec(&newObj.Spec, specPath)...)

	netPath := specPath.Child("network")
	newNet, oldNet := newObj.Spec.Network, oldObj.Spec.Network
	allErrs = append(allErrs, validateImmutableOnceSet(newNet.CIDR, oldNet.CIDR, netPath.Child("cidr"))...)
	if oldNet.PrefixLength != nil && (newNet.PrefixLength == nil || *newNet.PrefixLength != *oldNet.PrefixLength) {
		allErrs = append(allErrs, field.Invalid(netPath.Child("prefixLength"), newNet.PrefixLength, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	// A tenant that let IPAM pick its block may write the block down in its
	// spec later, but only the block it has.
	if st := oldObj.Status.Network; st != nil && st.CIDR != "" {
		if oldNet.CIDR == "" && newNet.CIDR != "" && newNet.CIDR != st.CIDR {
			allErrs = append(allErrs, field.Invalid(netPath.Child("cidr"), newNet.CIDR,
				fmt.Sprintf("the tenant's block is already allocated (status.network.cidr is %s) and cannot change", st.CIDR)))
		}
		if allocated, err := ParseIPv4CIDR(st.CIDR); err == nil && oldNet.PrefixLength == nil && newNet.PrefixLength != nil && int(*newNet.PrefixLength) != allocated.Bits() {
			allErrs = append(allErrs, field.Invalid(netPath.Child("prefixLength"), *newNet.PrefixLength,
				fmt.Sprintf("the tenant's block is already allocated (status.network.cidr is %s) and cannot change", st.CIDR)))
		}
	}
	return allErrs
}

var supportedTenantPhases = []tenant.TenantPhase{
	tenant.TenantPhasePending, tenant.TenantPhaseProvisioning, tenant.TenantPhaseReady,
	tenant.TenantPhaseTerminating, tenant.TenantPhaseFailed,
}

// ValidateTenantStatusUpdate checks an update of a Tenant's status.
func ValidateTenantStatusUpdate(newObj, oldObj *tenant.Tenant) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	st := &newObj.Status
	allErrs = append(allErrs, validateStatusCommon(st.ObservedGeneration, st.Conditions, statusPath)...)
	allErrs = append(allErrs, validateEnum(st.Phase, supportedTenantPhases, true, statusPath.Child("phase"))...)
	if st.NamespacePrefix != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSLabel(st.NamespacePrefix, false) {
			allErrs = append(allErrs, field.Invalid(statusPath.Child("namespacePrefix"), st.NamespacePrefix, msg))
		}
	}
	if st.Network != nil {
		_, errs := validateIPv4CIDR(st.Network.CIDR, MinBlockPrefixLength, MaxBlockPrefixLength, statusPath.Child("network", "cidr"))
		allErrs = append(allErrs, errs...)
	}
	ipsPath := statusPath.Child("publicIPs")
	if len(st.PublicIPs) > MaxPublicIPs {
		allErrs = append(allErrs, field.TooMany(ipsPath, len(st.PublicIPs), MaxPublicIPs))
	}
	seen := make(map[string]bool, len(st.PublicIPs))
	for i, ip := range st.PublicIPs {
		p := ipsPath.Index(i)
		if errs := validatePublicIPv4Address(ip, p); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
		} else if seen[ip] {
			allErrs = append(allErrs, field.Duplicate(p, ip))
		}
		seen[ip] = true
	}
	usagePath := statusPath.Child("usage")
	for _, u := range []struct {
		name  string
		value int32
	}{
		{"namespaces", st.Usage.Namespaces},
		{"networks", st.Usage.Networks},
		{"floatingIPs", st.Usage.FloatingIPs},
		{"loadBalancers", st.Usage.LoadBalancers},
		{"hostClaims", st.Usage.HostClaims},
		{"publicIPs", st.Usage.PublicIPs},
	} {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(u.value), usagePath.Child(u.name))...)
	}
	return allErrs
}

func validateTenantSpec(spec *tenant.TenantSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(spec.DisplayName) > MaxDisplayNameLength {
		allErrs = append(allErrs, field.TooLong(fldPath.Child("displayName"), spec.DisplayName, MaxDisplayNameLength))
	}
	allErrs = append(allErrs, validateTenantMembers(&spec.Members, fldPath.Child("members"))...)
	allErrs = append(allErrs, validateTenantNetwork(&spec.Network, fldPath.Child("network"))...)
	allErrs = append(allErrs, validateInt64Range(int64(spec.PublicIPs.Count), 0, MaxPublicIPs, fldPath.Child("publicIPs", "count"))...)
	allErrs = append(allErrs, validateTenantQuota(&spec.Quota, fldPath.Child("quota"))...)
	allErrs = append(allErrs, validatePodSecurityLevel(spec.PodSecurity.Level, fldPath.Child("podSecurity", "level"))...)
	allErrs = append(allErrs, validatePriorityClasses(spec.PriorityClasses, fldPath.Child("priorityClasses"))...)
	allErrs = append(allErrs, validateEnum(spec.Isolation, supportedIsolations, true, fldPath.Child("isolation"))...)
	return allErrs
}

var supportedIsolations = []tenant.TenantIsolation{tenant.TenantIsolationSoft, tenant.TenantIsolationHard}

// MaxPriorityClasses is how many PriorityClasses a tenant may be granted.
const MaxPriorityClasses = 16

// validatePriorityClasses accepts PriorityClass names (DNS subdomains),
// each once, none of the cluster's own system-* classes: those outrank
// every workload and are evicted last under node pressure.
func validatePriorityClasses(classes []string, fldPath *field.Path) field.ErrorList {
	allErrs := validateUniqueNonEmptyStrings(classes, fldPath)
	if len(classes) > MaxPriorityClasses {
		allErrs = append(allErrs, field.TooMany(fldPath, len(classes), MaxPriorityClasses))
	}
	for i, c := range classes {
		p := fldPath.Index(i)
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(c, false) {
			allErrs = append(allErrs, field.Invalid(p, c, msg))
		}
		if strings.HasPrefix(c, "system-") {
			allErrs = append(allErrs, field.Invalid(p, c,
				"system-* PriorityClasses belong to the cluster's own components: a tenant's pods at that priority would preempt other tenants' pods and be evicted last"))
		}
	}
	return allErrs
}

var supportedPodSecurityLevels = []tenant.PodSecurityLevel{tenant.PodSecurityLevelRestricted, tenant.PodSecurityLevelBaseline}

func validatePodSecurityLevel(level tenant.PodSecurityLevel, fldPath *field.Path) field.ErrorList {
	if level == tenant.PodSecurityLevelPrivileged {
		return field.ErrorList{field.Invalid(fldPath, level,
			`a tenant's pods never run privileged (that is root on the node): use "restricted" or "baseline"`)}
	}
	return validateEnum(level, supportedPodSecurityLevels, true, fldPath)
}

// anonymousUser is the user name of unauthenticated requests.
const anonymousUser = "system:anonymous"

func validateTenantMembers(m *tenant.TenantMembers, fldPath *field.Path) field.ErrorList {
	usersPath, groupsPath := fldPath.Child("users"), fldPath.Child("groups")
	allErrs := validateUniqueNonEmptyStrings(m.Users, usersPath)
	for i, u := range m.Users {
		if u == anonymousUser {
			allErrs = append(allErrs, field.Invalid(usersPath.Index(i), u, "must not be the anonymous user: every unauthenticated request would act as the tenant"))
		}
	}
	allErrs = append(allErrs, validateUniqueNonEmptyStrings(m.Groups, groupsPath)...)
	for i, g := range m.Groups {
		if strings.HasPrefix(g, "system:") {
			allErrs = append(allErrs, field.Invalid(groupsPath.Index(i), g, "must not be a system group (system:...): those hold users outside the tenant"))
		}
	}
	return allErrs
}

func validateTenantNetwork(n *tenant.TenantNetwork, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if n.CIDR != "" && n.PrefixLength != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, fmt.Sprintf("cidr: %s, prefixLength: %d", n.CIDR, *n.PrefixLength),
			"cidr and prefixLength are mutually exclusive: set cidr for an explicit block, or prefixLength to allocate one from a TenantNetworks AddressPool"))
	}
	if n.CIDR != "" {
		_, errs := validateIPv4CIDR(n.CIDR, MinBlockPrefixLength, MaxBlockPrefixLength, fldPath.Child("cidr"))
		allErrs = append(allErrs, errs...)
	}
	if n.PrefixLength != nil {
		allErrs = append(allErrs, validateInt64Range(int64(*n.PrefixLength), MinBlockPrefixLength, MaxBlockPrefixLength, fldPath.Child("prefixLength"))...)
	}
	return allErrs
}

func validateTenantQuota(q *tenant.TenantQuota, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, f := range []struct {
		name  string
		value *int32
	}{
		{"namespaces", q.Namespaces},
		{"networks", q.Networks},
		{"floatingIPs", q.FloatingIPs},
		{"loadBalancers", q.LoadBalancers},
		{"hostClaims", q.HostClaims},
	} {
		if f.value != nil {
			allErrs = append(allErrs, validateInt64Range(int64(*f.value), 0, MaxQuota, fldPath.Child(f.name))...)
		}
	}
	allErrs = append(allErrs, validateComputeQuota(q.Compute, fldPath.Child("compute"))...)
	return append(allErrs, ValidateObjectQuota(q.Objects, q.Compute, fldPath.Child("objects"))...)
}

// countResource is a ResourceQuota object count of any kind:
// count/<resource> for the core group, count/<resource>.<group> otherwise.
var countResource = regexp.MustCompile(`^count/[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// ValidateObjectQuota accepts the object counts of
// tenant.ObjectCountResources and count/<resource>[.<group>], as whole,
// non-negative numbers, none of them limited in compute too (the host
// would get one limit from two places).
func ValidateObjectQuota(objects, compute corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, name := range sortedNames(objects) {
		path := fldPath.Key(name)
		q := objects[corev1.ResourceName(name)]
		_, inCompute := compute[corev1.ResourceName(name)]
		switch {
		case !slices.Contains(tenant.ObjectCountResources, corev1.ResourceName(name)) && !countResource.MatchString(name):
			allErrs = append(allErrs, field.NotSupported(path, name, []string{"services", "secrets", "configmaps", "persistentvolumeclaims", "count/<resource>[.<group>]"}))
		case inCompute:
			allErrs = append(allErrs, field.Invalid(path, name, "spec.quota.compute limits it already: set it in one place"))
		case q.Sign() < 0:
			allErrs = append(allErrs, field.Invalid(path, q.String(), "must not be negative"))
		case q.MilliValue()%1000 != 0:
			allErrs = append(allErrs, field.Invalid(path, q.String(), "must be a whole number"))
		case q.Value() > MaxObjectQuota:
			allErrs = append(allErrs, field.Invalid(path, q.String(), fmt.Sprintf("must be at most %d", MaxObjectQuota)))
		}
	}
	return allErrs
}

// MaxObjectQuota is the largest object count of spec.quota.objects.
const MaxObjectQuota = 1000000

// validateComputeQuota accepts the resources of tenant.ComputeResources
// with non-negative amounts; counts (pods, persistentvolumeclaims, VMs)
// must be whole numbers.
func validateComputeQuota(compute corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allowed := make([]string, 0, len(tenant.ComputeResources))
	for _, r := range tenant.ComputeResources {
		allowed = append(allowed, string(r))
	}
	for _, name := range sortedNames(compute) {
		path := fldPath.Key(name)
		q := compute[corev1.ResourceName(name)]
		switch {
		case !slices.Contains(allowed, name):
			allErrs = append(allErrs, field.NotSupported(path, name, allowed))
		case q.Sign() < 0:
			allErrs = append(allErrs, field.Invalid(path, q.String(), "must not be negative"))
		case isCount(corev1.ResourceName(name)) && q.MilliValue()%1000 != 0:
			allErrs = append(allErrs, field.Invalid(path, q.String(), "must be a whole number"))
		}
	}
	return allErrs
}

func isCount(r corev1.ResourceName) bool {
	return r == corev1.ResourcePods || r == corev1.ResourcePersistentVolumeClaims || r == tenant.ResourceVirtualMachines
}

// sortedNames are the resource names of list, sorted, so that errors come
// in a stable order.
func sortedNames(list corev1.ResourceList) []string {
	names := make([]string, 0, len(list))
	for name := range list {
		names = append(names, string(name))
	}
	sort.Strings(names)
	return names
}
