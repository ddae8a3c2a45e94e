package validation

import (
	"net/netip"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

// FuzzParseIPv4CIDR checks that ParseIPv4CIDR never panics and only accepts
// canonical IPv4 CIDRs: an accepted string re-stringifies to itself and is its
// own network address.
func FuzzParseIPv4CIDR(f *testing.F) {
	for _, s := range []string{
		"10.42.0.0/16", "10.42.0.1/16", "0.0.0.0/0", "255.255.255.255/32", "10.042.0.0/16",
		"10.0.0.0/08", "fd00::/8", "::ffff:10.0.0.0/104", "1.2.3.4/-1", "1.2.3.4/33", "", "/", "1.2.3.4%eth0/32",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseIPv4CIDR(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseIPv4CIDR(%q): empty error", s)
			}
			return
		}
		if p.String() != s {
			t.Fatalf("ParseIPv4CIDR(%q) accepted a non-canonical form of %s", s, p)
		}
		if !p.Addr().Is4() || p.Masked() != p {
			t.Fatalf("ParseIPv4CIDR(%q) = %v: not an IPv4 network address", s, p)
		}
		iv := prefixInterval(p)
		if iv.first > iv.last || uint64(iv.last-iv.first)+1 != uint64(1)<<(32-p.Bits()) {
			t.Fatalf("prefixInterval(%v) = %v", p, iv)
		}
		if !PrefixContains(p, p) || !PrefixesOverlap(p, p) {
			t.Fatalf("%v does not contain or overlap itself", p)
		}
	})
}

// FuzzValidateNetwork feeds arbitrary subnets and NAT gateway addresses to
// ValidateNetwork: it must not panic, every error must name a field, and an
// accepted Network's subnets must be canonical and pairwise disjoint.
func FuzzValidateNetwork(f *testing.F) {
	f.Add("10.42.0.0/24,10.42.1.0/24", "203.0.113.10", "Layer2")
	f.Add("10.42.0.0/23,10.42.1.0/24", "", "Layer3")
	f.Add("10.42.0.1/24", "0.0.0.0", "Layer2")
	f.Add("10.42.0.0/24,10.42.0.0/24", "169.254.0.1", "")
	f.Add(",", "::1", "Layer4")
	f.Fuzz(func(t *testing.T, subnets, natAddress, topology string) {
		n := &tenant.Network{
			ObjectMeta: metav1.ObjectMeta{Name: "default"},
			Spec: tenant.NetworkSpec{
				Topology:   tenant.NetworkTopology(topology),
				NATGateway: &tenant.NATGateway{Enabled: true, Address: natAddress},
			},
		}
		if subnets != "" {
			n.Spec.Subnets = strings.Split(subnets, ",")
		}
		errs := ValidateNetwork(n)
		for _, e := range errs {
			if e.Field == "" {
				t.Fatalf("error without a field: %v", e)
			}
		}
		block := netip.MustParsePrefix("10.0.0.0/8")
		_ = ValidateSubnetsWithinBlock(n.Spec.Subnets, block, specPath.Child("subnets"))
		if len(errs) > 0 {
			return
		}
		parsed := make([]netip.Prefix, 0, len(n.Spec.Subnets))
		for _, s := range n.Spec.Subnets {
			p, err := ParseIPv4CIDR(s)
			if err != nil {
				t.Fatalf("accepted subnet %q: %v", s, err)
			}
			for _, q := range parsed {
				if PrefixesOverlap(p, q) {
					t.Fatalf("accepted overlapping subnets %v and %v", p, q)
				}
			}
			parsed = append(parsed, p)
		}
		if natAddress != "" {
			if _, err := ParseIPv4Address(natAddress); err != nil {
				t.Fatalf("accepted NAT gateway address %q: %v", natAddress, err)
			}
		}
	})
}
