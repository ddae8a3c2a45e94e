package hostnames

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestPublicDNSName(t *testing.T) {
	label63 := strings.Repeat("n", 63)
	tenant30 := strings.Repeat("t", 30)
	// 94 characters: with the longest names (63, 63, 30) the name is 253.
	zone94 := strings.Repeat("z", 60) + "." + strings.Repeat("y", 33)
	for _, c := range []struct {
		what                          string
		zone, tenant, namespace, name string
		want                          string
		error                         string // part of the error; "" when a name is wanted
	}{
		{what: "the formula", zone: "tenants.example.net", tenant: "acme", namespace: "dev", name: "web", want: "web.dev.acme.tenants.example.net"},
		{what: "a zone with its trailing dot", zone: "tenants.example.net.", tenant: "acme", namespace: "dev", name: "web", want: "web.dev.acme.tenants.example.net"},
		{what: "lower case", zone: "Tenants.Example.NET", tenant: "acme", namespace: "dev", name: "web", want: "web.dev.acme.tenants.example.net"},
		{what: "a one-label zone", zone: "example", tenant: "acme", namespace: "default", name: "ssh", want: "ssh.default.acme.example"},
		{what: "no zone", zone: "", tenant: "acme", namespace: "dev", name: "web", error: "no public DNS zone"},
		{what: "253 characters", zone: zone94, tenant: tenant30, namespace: label63, name: label63,
			want: label63 + "." + label63 + "." + tenant30 + "." + zone94},
		{what: "254 characters", zone: "x" + zone94, tenant: tenant30, namespace: label63, name: label63,
			error: "is 254 characters, more than the 253 a DNS name may have"},
		{what: "a label of 64 characters", zone: "tenants.example.net", tenant: "acme", namespace: "dev", name: label63 + "n",
			error: "is 64 characters, more than the 63 a DNS label may have"},
		{what: "a label that is not one", zone: "tenants.example.net", tenant: "acme", namespace: "dev", name: "a_b", error: `label "a_b"`},
		{what: "an empty label", zone: "tenants..net", tenant: "acme", namespace: "dev", name: "web", error: `label ""`},
	} {
		got, err := PublicDNSName(c.zone, c.tenant, c.namespace, c.name)
		switch {
		case c.error == "" && (err != nil || got != c.want):
			t.Errorf("%s: %q, %v; want %q", c.what, got, err, c.want)
		case c.error != "" && (err == nil || !strings.Contains(err.Error(), c.error) || got != ""):
			t.Errorf("%s: %q, %v; want no name and an error saying %q", c.what, got, err, c.error)
		}
	}
}

func TestValidateDNSName(t *testing.T) {
	for _, c := range []struct {
		name  string
		valid bool
	}{
		{"tenants.example.net", true},
		{"example", true},
		{"1.example.net", true},
		{"xn--bcher-kva.example", true},
		{"", false},
		{"tenants.example.net.", false}, // not canonical: an empty last label
		{"Tenants.example.net", false},  // not canonical
		{"-tenants.example.net", false},
		{"tenants-.example.net", false},
		{"ten ants.example.net", false},
		{"ten_ants.example.net", false},
		{strings.Repeat("a", 64) + ".net", false},
		{strings.Repeat("a.", 126) + "ab", false}, // 254 characters
		{strings.Repeat("a.", 125) + "abc", true}, // 253
	} {
		errs := ValidateDNSName(c.name)
		if (len(errs) == 0) != c.valid {
			t.Errorf("%q: %v, want valid %v", c.name, errs, c.valid)
		}
	}
}

// FuzzPublicDNSName checks that whatever the names, PublicDNSName returns
// either a valid DNS name of at most 253 characters, made by the formula,
// or no name and an error; and that different objects of a zone never
// share a name.
func FuzzPublicDNSName(f *testing.F) {
	f.Add("tenants.example.net", "acme", "dev", "web", "api")
	f.Add(strings.Repeat("z", 94), strings.Repeat("t", 30), strings.Repeat("n", 63), strings.Repeat("n", 63), "m")
	f.Fuzz(func(t *testing.T, zone, tenant, namespace, name1, name2 string) {
		a, errA := PublicDNSName(zone, tenant, namespace, name1)
		if errA != nil {
			if a != "" {
				t.Fatalf("%q with error %v", a, errA)
			}
			return
		}
		if errs := ValidateDNSName(a); len(errs) > 0 || len(a) > MaxDNSNameLength {
			t.Fatalf("%q: %v", a, errs)
		}
		if a != strings.ToLower(name1+"."+namespace+"."+tenant+"."+strings.TrimSuffix(zone, ".")) {
			t.Fatalf("%q is not the formula's name of %q %q %q %q", a, zone, tenant, namespace, name1)
		}
		// Object names are DNS labels: two different ones get two names.
		if len(validation.IsDNS1123Label(name1)) > 0 || len(validation.IsDNS1123Label(name2)) > 0 {
			return
		}
		if b, err := PublicDNSName(zone, tenant, namespace, name2); err == nil && (a == b) != (name1 == name2) {
			t.Fatalf("names %q and %q map to %q and %q", name1, name2, a, b)
		}
	})
}

// TestTenantRouteDomain: a tenant's route domain is its name under the
// provider's, in canonical form; none without the provider's.
func TestTenantRouteDomain(t *testing.T) {
	for _, c := range []struct{ tenant, domain, want string }{
		{"acme", "apps.example.net", "acme.apps.example.net"},
		{"acme", "Apps.Example.NET.", "acme.apps.example.net"},
		{"acme", "", ""},
		{"acme", ".", ""},
	} {
		if got := TenantRouteDomain(c.tenant, c.domain); got != c.want {
			t.Errorf("TenantRouteDomain(%q, %q) = %q, want %q", c.tenant, c.domain, got, c.want)
		}
	}
	longest := strings.Repeat("a.", MaxRouteDomainLength/2-1) + "net"
	name := strings.Repeat("b", MaxDNSLabelLength) + "." + TenantRouteDomain(strings.Repeat("t", MaxDNSLabelLength), longest)
	if len(longest) > MaxRouteDomainLength || len(name) > MaxDNSNameLength {
		t.Errorf("a route domain of %d characters gives names of %d, more than %d", len(longest), len(name), MaxDNSNameLength)
	}
}
