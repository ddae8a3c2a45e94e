package validation

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// ParseIPv4CIDR parses s as an IPv4 CIDR in canonical form: the network
// address (no host bits set), written exactly as netip.Prefix.String writes it
// ("10.42.0.0/16", not "10.42.0.1/16" nor "10.042.0.0/16"). Storing only the
// canonical form keeps string comparison and overlap checks meaningful.
func ParseIPv4CIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, errors.New("must be a valid IPv4 CIDR, e.g. 10.42.0.0/16")
	}
	if !p.Addr().Is4() {
		return netip.Prefix{}, errors.New("must be an IPv4 CIDR, e.g. 10.42.0.0/16 (IPv6 is not supported)")
	}
	if m := p.Masked(); m != p {
		return netip.Prefix{}, fmt.Errorf("must be the network address, e.g. %s", m)
	}
	if p.String() != s {
		return netip.Prefix{}, fmt.Errorf("must be in canonical form, e.g. %s", p)
	}
	return p, nil
}

// ParseIPv4Address parses s as an IPv4 address in canonical dotted-decimal
// form ("203.0.113.10"). IPv4-mapped IPv6 addresses are refused.
func ParseIPv4Address(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return netip.Addr{}, errors.New("must be a valid IPv4 address, e.g. 203.0.113.10")
	}
	if a.String() != s {
		return netip.Addr{}, fmt.Errorf("must be in canonical form, e.g. %s", a)
	}
	return a, nil
}

// ParseIPv4Range parses s as an inclusive IPv4 range "first-last", such as
// "203.0.113.10-203.0.113.20", with first <= last.
func ParseIPv4Range(s string) (first, last netip.Addr, err error) {
	const example = "e.g. 203.0.113.10-203.0.113.20"
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return netip.Addr{}, netip.Addr{}, fmt.Errorf("must be an IPv4 range of the form first-last, %s", example)
	}
	if first, err = ParseIPv4Address(a); err != nil {
		return netip.Addr{}, netip.Addr{}, fmt.Errorf("must be an IPv4 range of the form first-last, %s: the first address %w", example, err)
	}
	if last, err = ParseIPv4Address(b); err != nil {
		return netip.Addr{}, netip.Addr{}, fmt.Errorf("must be an IPv4 range of the form first-last, %s: the last address %w", example, err)
	}
	if last.Less(first) {
		return netip.Addr{}, netip.Addr{}, fmt.Errorf("the first address %s must not be after the last address %s", first, last)
	}
	return first, last, nil
}

// PrefixesOverlap reports whether two prefixes share any address. Two CIDRs
// overlap exactly when one contains the other.
func PrefixesOverlap(a, b netip.Prefix) bool {
	return a.Overlaps(b)
}

// PrefixContains reports whether every address of inner is in outer.
func PrefixContains(outer, inner netip.Prefix) bool {
	return outer.IsValid() && inner.IsValid() &&
		outer.Addr().BitLen() == inner.Addr().BitLen() &&
		outer.Bits() <= inner.Bits() && outer.Contains(inner.Addr())
}

// ValidateSubnetsWithinBlock checks that every subnet lies inside a tenant's
// block; the registry calls it with the Tenant's allocated block, which
// ValidateNetwork cannot see. Entries that are not valid IPv4 CIDRs are
// skipped: ValidateNetwork reports them.
func ValidateSubnetsWithinBlock(subnets []string, block netip.Prefix, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, s := range subnets {
		p, err := ParseIPv4CIDR(s)
		if err != nil {
			continue
		}
		if !PrefixContains(block, p) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), s, fmt.Sprintf("must be inside the tenant's block %s", block)))
		}
	}
	return allErrs
}

// validateIPv4CIDR checks a canonical IPv4 CIDR whose prefix length is in
// [minBits, maxBits]. It returns the prefix when it is valid.
func validateIPv4CIDR(value string, minBits, maxBits int, fldPath *field.Path) (netip.Prefix, field.ErrorList) {
	if value == "" {
		return netip.Prefix{}, field.ErrorList{field.Required(fldPath, "must be an IPv4 CIDR, e.g. 10.42.0.0/16")}
	}
	p, err := ParseIPv4CIDR(value)
	if err != nil {
		return netip.Prefix{}, field.ErrorList{field.Invalid(fldPath, value, err.Error())}
	}
	if p.Bits() < minBits || p.Bits() > maxBits {
		return netip.Prefix{}, field.ErrorList{field.Invalid(fldPath, value, fmt.Sprintf("prefix length must be between /%d and /%d, inclusive", minBits, maxBits))}
	}
	return p, nil
}

// validateIPv4Address checks a canonical IPv4 address and returns it when valid.
func validateIPv4Address(value string, fldPath *field.Path) (netip.Addr, field.ErrorList) {
	if value == "" {
		return netip.Addr{}, field.ErrorList{field.Required(fldPath, "must be an IPv4 address, e.g. 203.0.113.10")}
	}
	a, err := ParseIPv4Address(value)
	if err != nil {
		return netip.Addr{}, field.ErrorList{field.Invalid(fldPath, value, err.Error())}
	}
	return a, nil
}

// validateRoutableIPv4Address checks an IPv4 address a router can be reached
// at: not 0.0.0.0, loopback, multicast or the broadcast address.
func validateRoutableIPv4Address(value string, fldPath *field.Path) field.ErrorList {
	a, errs := validateIPv4Address(value, fldPath)
	if len(errs) > 0 {
		return errs
	}
	if msg := unusableAddressReason(a); msg != "" {
		return field.ErrorList{field.Invalid(fldPath, value, msg)}
	}
	return nil
}

// validatePublicIPv4Address checks an address that can be handed to a tenant
// as a public IP: routable, and not link-local either.
func validatePublicIPv4Address(value string, fldPath *field.Path) field.ErrorList {
	a, errs := validateIPv4Address(value, fldPath)
	if len(errs) > 0 {
		return errs
	}
	msg := unusableAddressReason(a)
	if msg == "" && a.IsLinkLocalUnicast() {
		msg = "must not be a link-local address (169.254.0.0/16)"
	}
	if msg != "" {
		return field.ErrorList{field.Invalid(fldPath, value, msg)}
	}
	return nil
}

// validatePublicDNSName checks the dnsName of a status at statusPath
// whose address is address: a DNS name in canonical form, and only beside
// an address, so that a status never names an address its object does not
// hold.
func validatePublicDNSName(name, address string, statusPath *field.Path) field.ErrorList {
	if name == "" {
		return nil
	}
	fldPath := statusPath.Child("dnsName")
	var allErrs field.ErrorList
	for _, msg := range hostnames.ValidateDNSName(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	if address == "" {
		allErrs = append(allErrs, field.Invalid(fldPath, name, "must be empty while "+statusPath.Child("address").String()+" is empty: only an address the object holds is named"))
	}
	return allErrs
}

var limitedBroadcast = netip.AddrFrom4([4]byte{255, 255, 255, 255})

func unusableAddressReason(a netip.Addr) string {
	switch {
	case a.IsUnspecified():
		return "must not be the unspecified address 0.0.0.0"
	case a.IsLoopback():
		return "must not be a loopback address (127.0.0.0/8)"
	case a.IsMulticast():
		return "must not be a multicast address (224.0.0.0/4)"
	case a == limitedBroadcast:
		return "must not be the broadcast address 255.255.255.255"
	}
	return ""
}

// ipv4Interval is an inclusive range of IPv4 addresses as integers, the
// common form of CIDRs, ranges and single addresses.
type ipv4Interval struct {
	first, last uint32
}

func addrToUint32(a netip.Addr) uint32 {
	b := a.As4()
	return binary.BigEndian.Uint32(b[:])
}

func prefixInterval(p netip.Prefix) ipv4Interval {
	first := addrToUint32(p.Addr())
	size := uint64(1) << (32 - p.Bits())
	return ipv4Interval{first: first, last: uint32(uint64(first) + size - 1)}
}

func (i ipv4Interval) overlaps(o ipv4Interval) bool {
	return i.first <= o.last && o.first <= i.last
}

// coveredBy reports whether every address of i is in the union of set.
func (i ipv4Interval) coveredBy(set []ipv4Interval) bool {
	sorted := append([]ipv4Interval(nil), set...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].first < sorted[b].first })
	next := uint64(i.first) // the first address not yet known to be covered
	for _, s := range sorted {
		if uint64(s.first) > next {
			return false // a gap: later intervals start later still
		}
		if uint64(s.last)+1 > next {
			next = uint64(s.last) + 1
		}
		if next > uint64(i.last) {
			return true
		}
	}
	return false
}
