package hostnames

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Public DNS names.
//
// With a public DNS zone (tenant-apiserver --public-dns-zone), the public
// address a FloatingIP or LoadBalancer holds has a name in it:
//
//	<name>.<tenant Namespace>.<tenant>.<zone>
//
// in lower case, without a trailing dot: LoadBalancer "web" in Namespace
// "dev" of tenant "acme" in zone "tenants.example.net" is
// "web.dev.acme.tenants.example.net". The syncer writes it into the
// object's status.dnsName, and the tenant DNS server answers it with the
// object's address; both build it with PublicDNSName.

// Limits of a DNS name in text form (RFC 1035, section 2.3.4).
const (
	// MaxDNSNameLength is the longest name without its trailing dot: 255
	// octets on the wire.
	MaxDNSNameLength = 253
	// MaxDNSLabelLength is the longest label.
	MaxDNSLabelLength = 63
)

// PublicDNSName returns the public DNS name of the address that
// FloatingIP or LoadBalancer name, in Namespace namespace of tenant,
// holds, in zone (with or without its trailing dot, in any case). There is
// none, and the error says why, when zone is empty or the name would not
// be a DNS name: longer than MaxDNSNameLength characters, or with a label
// longer than MaxDNSLabelLength or not of letters, digits and hyphens.
// Object names are DNS labels and tenant names shorter still, so with a
// valid zone only the whole name's length can be at fault, and only with a
// zone longer than 94 characters.
func PublicDNSName(zone, tenant, namespace, name string) (string, error) {
	zone = CanonicalDNSName(zone)
	if zone == "" {
		return "", fmt.Errorf("no public DNS zone is configured")
	}
	full := strings.ToLower(name + "." + namespace + "." + tenant + "." + zone)
	if errs := ValidateDNSName(full); len(errs) > 0 {
		return "", fmt.Errorf("%s is not a DNS name: %s", full, strings.Join(errs, "; "))
	}
	return full, nil
}

// TenantRouteDomain returns the DNS domain of tenant's HTTP routes under
// the provider's route domain (tenant-apiserver --route-domain):
// "<tenant>.<domain>" in canonical form (CanonicalDNSName), or "" when
// domain is empty. The tenant owns that name and every name below it on
// the provider's gateways; tenant names are DNS labels, so tenants'
// domains never overlap.
func TenantRouteDomain(tenant, domain string) string {
	domain = CanonicalDNSName(domain)
	if domain == "" {
		return ""
	}
	return strings.ToLower(tenant) + "." + domain
}

// MaxRouteDomainLength is the longest provider route domain: with a
// tenant's name in front and a label of a route's own below it (each a
// DNS label), a tenant's names still fit in MaxDNSNameLength.
const MaxRouteDomainLength = MaxDNSNameLength - 2*(MaxDNSLabelLength+1)

// CanonicalDNSName is name in lower case without a trailing dot.
func CanonicalDNSName(name string) string {
	return strings.ToLower(strings.TrimSuffix(name, "."))
}

// ValidateDNSName checks a DNS name in canonical form (CanonicalDNSName):
// at most MaxDNSNameLength characters of labels separated by dots, each an
// RFC 1123 label (lower-case letters, digits and hyphens, not starting or
// ending with a hyphen, at most MaxDNSLabelLength characters). It returns
// what is wrong, nothing when it is valid.
func ValidateDNSName(name string) []string {
	if name == "" {
		return []string{"must not be empty"}
	}
	var errs []string
	if len(name) > MaxDNSNameLength {
		errs = append(errs, fmt.Sprintf("is %d characters, more than the %d a DNS name may have", len(name), MaxDNSNameLength))
	}
	for _, label := range strings.Split(name, ".") {
		if len(label) > MaxDNSLabelLength {
			errs = append(errs, fmt.Sprintf("label %q is %d characters, more than the %d a DNS label may have", label, len(label), MaxDNSLabelLength))
			continue
		}
		for _, msg := range validation.IsDNS1123Label(label) {
			errs = append(errs, fmt.Sprintf("label %q: %s", label, msg))
		}
	}
	return errs
}
