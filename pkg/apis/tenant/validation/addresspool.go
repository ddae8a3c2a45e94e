package validation

import (
	"fmt"
	"strings"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

var supportedAddressPoolPurposes = []tenant.AddressPoolPurpose{
	tenant.AddressPoolPurposeTenantNetworks, tenant.AddressPoolPurposePublicIPs, tenant.AddressPoolPurposeConnectSubnets,
}

// ValidateAddressPool checks an AddressPool on creation.
func ValidateAddressPool(obj *tenant.AddressPool) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&obj.ObjectMeta, false, ValidateAddressPoolName, metadataPath)
	allErrs = append(allErrs, validateAddressPoolSpec(&obj.Spec, specPath)...)
	return allErrs
}

// ValidateAddressPoolUpdate checks an update of an AddressPool. Its purpose
// is immutable: allocations of one kind cannot become the other.
func ValidateAddressPoolUpdate(newObj, oldObj *tenant.AddressPool) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateAddressPoolSpec(&newObj.Spec, specPath)...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(newObj.Spec.Purpose, oldObj.Spec.Purpose, specPath.Child("purpose"))...)
	return allErrs
}

// ValidateAddressPoolStatusUpdate checks an update of an AddressPool's status.
func ValidateAddressPoolStatusUpdate(newObj, oldObj *tenant.AddressPool) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	st := &newObj.Status
	allErrs = append(allErrs, validateStatusCommon(st.ObservedGeneration, st.Conditions, statusPath)...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(st.Capacity, statusPath.Child("capacity"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(st.Allocated, statusPath.Child("allocated"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(st.Free, statusPath.Child("free"))...)
	if st.Capacity < 0 || st.Allocated < 0 {
		return allErrs // the relations below mean nothing then
	}
	if st.Allocated > st.Capacity {
		allErrs = append(allErrs, field.Invalid(statusPath.Child("allocated"), st.Allocated, fmt.Sprintf("must not exceed status.capacity (%d)", st.Capacity)))
	}
	if st.Free != st.Capacity-st.Allocated {
		allErrs = append(allErrs, field.Invalid(statusPath.Child("free"), st.Free, fmt.Sprintf("must be status.capacity minus status.allocated (%d)", st.Capacity-st.Allocated)))
	}
	return allErrs
}

// poolEntry is one parsed entry of spec.cidrs or spec.ranges.
type poolEntry struct {
	path     *field.Path
	value    string
	interval ipv4Interval
}

func validateAddressPoolSpec(spec *tenant.AddressPoolSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateEnum(spec.Purpose, supportedAddressPoolPurposes, false, fldPath.Child("purpose"))
	// A ConnectSubnets pool hands out blocks as a TenantNetworks pool does.
	tenantNetworks := spec.Purpose == tenant.AddressPoolPurposeTenantNetworks || spec.Purpose == tenant.AddressPoolPurposeConnectSubnets
	publicIPs := spec.Purpose == tenant.AddressPoolPurposePublicIPs

	cidrsPath, rangesPath := fldPath.Child("cidrs"), fldPath.Child("ranges")
	if len(spec.CIDRs) == 0 && len(spec.Ranges) == 0 {
		allErrs = append(allErrs, field.Required(cidrsPath, "a pool needs at least one entry in spec.cidrs or spec.ranges"))
	}

	var entries []poolEntry
	allParsed := true
	minBits := -1 // prefix length of the largest CIDR
	for i, c := range spec.CIDRs {
		p := cidrsPath.Index(i)
		maxBits := 32
		if tenantNetworks {
			maxBits = MaxBlockPrefixLength // must hold at least one tenant block
		}
		prefix, errs := validateIPv4CIDR(c, 0, maxBits, p)
		if len(errs) > 0 {
			allErrs = append(allErrs, errs...)
			allParsed = false
			continue
		}
		if minBits < 0 || prefix.Bits() < minBits {
			minBits = prefix.Bits()
		}
		entries = append(entries, poolEntry{path: p, value: c, interval: prefixInterval(prefix)})
	}

	if len(spec.Ranges) > 0 && tenantNetworks {
		allErrs = append(allErrs, field.Forbidden(rangesPath, fmt.Sprintf("ranges are only allowed in PublicIPs pools; a %s pool hands out CIDR blocks, so list them in spec.cidrs", spec.Purpose)))
		allParsed = false
	} else {
		for i, r := range spec.Ranges {
			p := rangesPath.Index(i)
			first, last, err := ParseIPv4Range(r)
			if err != nil {
				allErrs = append(allErrs, field.Invalid(p, r, err.Error()))
				allParsed = false
				continue
			}
			entries = append(entries, poolEntry{path: p, value: r, interval: ipv4Interval{first: addrToUint32(first), last: addrToUint32(last)}})
		}
	}

	// Each address must belong to one entry only, or IPAM would count it twice.
	for j := range entries {
		for i := 0; i < j; i++ {
			if !entries[i].interval.overlaps(entries[j].interval) {
				continue
			}
			if entries[i].value == entries[j].value {
				allErrs = append(allErrs, field.Duplicate(entries[j].path, entries[j].value))
			} else {
				allErrs = append(allErrs, field.Invalid(entries[j].path, entries[j].value, fmt.Sprintf("overlaps %s (%s)", entries[i].path, entries[i].value)))
			}
			break
		}
	}

	intervals := make([]ipv4Interval, 0, len(entries))
	for _, e := range entries {
		intervals = append(intervals, e.interval)
	}
	excludePath := fldPath.Child("exclude")
	seenExclude := make(map[string]bool, len(spec.Exclude))
	for i, x := range spec.Exclude {
		p := excludePath.Index(i)
		iv, err := parseExclude(x)
		switch {
		case err != nil:
			allErrs = append(allErrs, field.Invalid(p, x, err.Error()))
		case seenExclude[x]:
			allErrs = append(allErrs, field.Duplicate(p, x))
		case allParsed && len(intervals) > 0 && !iv.coveredBy(intervals):
			allErrs = append(allErrs, field.Invalid(p, x, "must be inside the pool's spec.cidrs or spec.ranges"))
		}
		seenExclude[x] = true
	}

	if d := spec.DefaultPrefixLength; d != nil {
		p := fldPath.Child("defaultPrefixLength")
		switch {
		case publicIPs:
			allErrs = append(allErrs, field.Forbidden(p, "only TenantNetworks and ConnectSubnets pools hand out blocks; a PublicIPs pool hands out single addresses"))
		default:
			lo, hi := MinBlockPrefixLength, MaxBlockPrefixLength
			if spec.Purpose == tenant.AddressPoolPurposeConnectSubnets {
				lo, hi = MinConnectPrefixLength, MaxConnectPrefixLength
			}
			if errs := validateInt64Range(int64(*d), int64(lo), int64(hi), p); len(errs) > 0 {
				allErrs = append(allErrs, errs...)
			} else if minBits >= 0 && int(*d) < minBits {
				allErrs = append(allErrs, field.Invalid(p, *d, fmt.Sprintf("must be at least %d: a /%d block does not fit in any of spec.cidrs, the largest of which is a /%d", minBits, *d, minBits)))
			}
		}
	}
	return allErrs
}

// parseExclude parses an entry of spec.exclude: a canonical IPv4 CIDR or a
// single IPv4 address.
func parseExclude(s string) (ipv4Interval, error) {
	if strings.Contains(s, "/") {
		p, err := ParseIPv4CIDR(s)
		if err != nil {
			return ipv4Interval{}, err
		}
		return prefixInterval(p), nil
	}
	a, err := ParseIPv4Address(s)
	if err != nil {
		return ipv4Interval{}, fmt.Errorf("must be an IPv4 CIDR (e.g. 203.0.113.0/28) or a single IPv4 address (e.g. 203.0.113.1)")
	}
	v := addrToUint32(a)
	return ipv4Interval{first: v, last: v}, nil
}
