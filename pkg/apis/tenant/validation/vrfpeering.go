package validation

import (
	"fmt"
	"time"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	for i, n := range st.Neighbors {
		p := statusPath.Child("neighbors").Index(i)
		if _, errs := validateIPv4Address(n.Address, p.Child("address")); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
		}
		if n.State == "" {
			allErrs = append(allErrs, field.Required(p.Child("state"), ""))
		}
		allErrs = append(allErrs, validateInt64Range(int64(n.Sessions), 0, 1<<20, p.Child("sessions"))...)
		allErrs = append(allErrs, validateInt64Range(int64(n.Established), 0, int64(n.Sessions), p.Child("established"))...)
	}
	return allErrs
}

// asTrans is AS_TRANS (RFC 6793), the placeholder 2-byte speakers see
// for a 4-byte ASN: never a real AS.
const asTrans = 23456

// Limits of a VRFPeering's lists.
const (
	maxBGPNeighbors    = 16
	maxPeeringPrefixes = 64
)

func validateASN(asn int64, fldPath *field.Path) field.ErrorList {
	if errs := validateInt64Range(asn, 1, MaxASN, fldPath); len(errs) > 0 {
		return errs
	}
	if asn == asTrans {
		return field.ErrorList{field.Invalid(fldPath, asn, "23456 is AS_TRANS (RFC 6793), reserved")}
	}
	return nil
}

func validateVRFPeeringSpec(spec *tenant.VRFPeeringSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateTenantRef(spec.Tenant, fldPath.Child("tenant"))
	allErrs = append(allErrs, validateDNSLabelRef(spec.Network, fldPath.Child("network"))...)
	allErrs = append(allErrs, validateASN(spec.ASN, fldPath.Child("asn"))...)

	nPath := fldPath.Child("neighbors")
	switch {
	case len(spec.Neighbors) == 0:
		allErrs = append(allErrs, field.Required(nPath, "at least one BGP neighbor is required"))
	case len(spec.Neighbors) > maxBGPNeighbors:
		allErrs = append(allErrs, field.TooMany(nPath, len(spec.Neighbors), maxBGPNeighbors))
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
		allErrs = append(allErrs, validateASN(n.ASN, p.Child("asn"))...)
		if n.Port != nil {
			allErrs = append(allErrs, validatePortNumber(*n.Port, p.Child("port"))...)
		}
		if n.PasswordSecret != "" {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(n.PasswordSecret, false) {
				allErrs = append(allErrs, field.Invalid(p.Child("passwordSecret"), n.PasswordSecret, msg))
			}
		}
		if n.BFDProfile != "" {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(n.BFDProfile, false) {
				allErrs = append(allErrs, field.Invalid(p.Child("bfdProfile"), n.BFDProfile, msg))
			}
		}
		allErrs = append(allErrs, validateBGPTimers(n.HoldTime, n.KeepaliveTime, p)...)
	}

	aPath := fldPath.Child("advertise")
	if len(spec.Advertise) > maxPeeringPrefixes {
		allErrs = append(allErrs, field.TooMany(aPath, len(spec.Advertise), maxPeeringPrefixes))
	}
	allErrs = append(allErrs, validatePrefixSet(spec.Advertise, 8, 32, aPath)...)
	if r := spec.Receive; r != nil {
		rPath := fldPath.Child("receive", "prefixes")
		if len(r.Prefixes) > maxPeeringPrefixes {
			allErrs = append(allErrs, field.TooMany(rPath, len(r.Prefixes), maxPeeringPrefixes))
		}
		allErrs = append(allErrs, validatePrefixSet(r.Prefixes, 1, 32, rPath)...)
	}
	return allErrs
}

// validatePrefixSet checks a list of distinct canonical IPv4 CIDRs of
// /minBits to /maxBits (the default route has a field of its own).
func validatePrefixSet(prefixes []string, minBits, maxBits int, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := make(map[string]bool, len(prefixes))
	for i, s := range prefixes {
		p := fldPath.Index(i)
		if s == "0.0.0.0/0" {
			allErrs = append(allErrs, field.Invalid(p, s, "the default route is not a prefix here: set receive.defaultRoute"))
			continue
		}
		if _, errs := validateIPv4CIDR(s, minBits, maxBits, p); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
			continue
		}
		if seen[s] {
			allErrs = append(allErrs, field.Duplicate(p, s))
		}
		seen[s] = true
	}
	return allErrs
}

// BGP timers, as FRR takes them: whole seconds, a hold time of 3 to 65535
// seconds, a keepalive of at least a second and at most the hold time.
const (
	minHoldTime = 3 * time.Second
	maxHoldTime = 65535 * time.Second
)

func validateBGPTimers(hold, keepalive *metav1.Duration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	check := func(d *metav1.Duration, minD, maxD time.Duration, p *field.Path) bool {
		switch {
		case d.Duration%time.Second != 0:
			allErrs = append(allErrs, field.Invalid(p, d.Duration.String(), "must be whole seconds"))
		case d.Duration < minD || d.Duration > maxD:
			allErrs = append(allErrs, field.Invalid(p, d.Duration.String(), fmt.Sprintf("must be between %s and %s", minD, maxD)))
		default:
			return true
		}
		return false
	}
	holdOK := hold != nil && check(hold, minHoldTime, maxHoldTime, fldPath.Child("holdTime"))
	if keepalive != nil {
		kPath := fldPath.Child("keepaliveTime")
		if hold == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("holdTime"), "a keepaliveTime needs a holdTime"))
		}
		maxKeepalive := maxHoldTime
		if holdOK {
			maxKeepalive = hold.Duration
		}
		check(keepalive, time.Second, maxKeepalive, kPath)
	}
	return allErrs
}

// VRFPeeringConflict says why peerings p and o of one Network cannot
// share its VRF (the field of p at fault and the reason), or nil:
// frr-k8s merges their routers into the VRF's one BGP router, which has
// one ASN, and configures a neighbor once.
func VRFPeeringConflict(p, o *tenant.VRFPeering) (*field.Path, string) {
	spec := field.NewPath("spec")
	if p.Spec.ASN != o.Spec.ASN {
		return spec.Child("asn"), fmt.Sprintf("network %s is also peered by VRFPeering %s with ASN %d: the peerings of one network share its VRF's BGP router, and its ASN", p.Spec.Network, o.Name, o.Spec.ASN)
	}
	for i, nb := range p.Spec.Neighbors {
		for _, onb := range o.Spec.Neighbors {
			if nb.Address == onb.Address {
				return spec.Child("neighbors").Index(i).Child("address"), fmt.Sprintf("is already a neighbor of network %s's VRF in VRFPeering %s", p.Spec.Network, o.Name)
			}
		}
	}
	return nil, ""
}
