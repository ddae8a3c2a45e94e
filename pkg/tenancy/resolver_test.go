package tenancy_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"

	"tenant.io/tenant-apiserver/pkg/tenancy"
)

func TestGroupResolverTenantsOf(t *testing.T) {
	tests := []struct {
		name   string
		groups []string
		want   []string
	}{
		{name: "no groups"},
		{name: "only host groups", groups: []string{"system:authenticated", "developers", "system:masters"}},
		{name: "one tenant", groups: []string{"system:authenticated", "tenant.io:acme"}, want: []string{"acme"}},
		{name: "prefix only", groups: []string{"tenant.io:"}},
		{name: "prefix is case sensitive", groups: []string{"Tenant.io:acme", "TENANT.IO:acme"}},
		{name: "prefix not at start", groups: []string{"system:tenant.io:acme", " tenant.io:acme"}},
		{name: "prefix without colon", groups: []string{"tenant.ioacme", "tenant.io/acme"}},
		{name: "upper case tenant", groups: []string{"tenant.io:Acme"}},
		{name: "tenant with slash", groups: []string{"tenant.io:acme/globex", "tenant.io:../acme"}},
		{name: "tenant with colon", groups: []string{"tenant.io:acme:admins"}},
		{name: "tenant with dot", groups: []string{"tenant.io:acme.corp", "tenant.io:.", "tenant.io:.."}},
		{name: "dash segment is not a tenant", groups: []string{"tenant.io:-", "tenant.io:-acme", "tenant.io:acme-"}},
		{name: "tenant with spaces", groups: []string{"tenant.io: acme", "tenant.io:acme "}},
		{name: "tenant longer than a DNS label", groups: []string{"tenant.io:" + strings.Repeat("a", 64)}},
		{name: "tenant of a DNS label's length", groups: []string{"tenant.io:" + strings.Repeat("a", 63)}, want: []string{strings.Repeat("a", 63)}},
		{name: "invalid next to valid", groups: []string{"tenant.io:Bad", "tenant.io:good", "tenant.io:"}, want: []string{"good"}},
		{name: "duplicates", groups: []string{"tenant.io:acme", "tenant.io:acme", "x", "tenant.io:acme"}, want: []string{"acme"}},
		{name: "several sorted", groups: []string{"tenant.io:globex", "tenant.io:acme", "tenant.io:initech"}, want: []string{"acme", "globex", "initech"}},
		{name: "several with duplicates", groups: []string{"tenant.io:globex", "tenant.io:acme", "tenant.io:globex", "tenant.io:acme"}, want: []string{"acme", "globex"}},
		{name: "t1 and t10", groups: []string{"tenant.io:t10", "tenant.io:t1"}, want: []string{"t1", "t10"}},
		{name: "identity group", groups: []string{"tenant.io-acme"}, want: []string{"acme"}},
		{name: "identity group and host group of one tenant", groups: []string{"tenant.io-acme", "tenant.io:acme"}, want: []string{"acme"}},
		{name: "identity group not a tenant name", groups: []string{"tenant.io-", "tenant.io-Acme", "tenant.io--acme", "tenant.io-acme.corp", "xtenant.io-acme"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			groups := append([]string(nil), tc.groups...)
			got := tenancy.GroupResolver{}.TenantsOf(&user.DefaultInfo{Name: "u", Groups: groups})
			if len(got) != 0 || len(tc.want) != 0 {
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("TenantsOf(%q) = %q, want %q", tc.groups, got, tc.want)
				}
			}
			if !reflect.DeepEqual(groups, tc.groups) {
				t.Errorf("TenantsOf changed the user's groups to %q", groups)
			}
		})
	}
}

func TestTenantOf(t *testing.T) {
	tests := []struct {
		name        string
		groups      []string
		want        string
		wantTenants []string // of the *AmbiguousError; nil when no error is expected
	}{
		{name: "none", groups: []string{"system:authenticated"}, want: ""},
		{name: "only invalid", groups: []string{"tenant.io:", "tenant.io:Acme"}, want: ""},
		{name: "one", groups: []string{"system:authenticated", "tenant.io:acme"}, want: "acme"},
		{name: "one twice", groups: []string{"tenant.io:acme", "tenant.io:acme"}, want: "acme"},
		{name: "two", groups: []string{"tenant.io:globex", "tenant.io:acme"}, wantTenants: []string{"acme", "globex"}},
		{name: "three with duplicate", groups: []string{"tenant.io:c", "tenant.io:a", "tenant.io:b", "tenant.io:a"}, wantTenants: []string{"a", "b", "c"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tenancy.TenantOf(tenancy.GroupResolver{}, &user.DefaultInfo{Name: "mallory", Groups: tc.groups})
			if tc.wantTenants == nil {
				if err != nil {
					t.Fatalf("TenantOf() error = %v", err)
				}
				if got != tc.want {
					t.Errorf("TenantOf() = %q, want %q", got, tc.want)
				}
				return
			}
			if got != "" {
				t.Errorf("TenantOf() = %q with an error, want \"\"", got)
			}
			var ambiguous *tenancy.AmbiguousError
			if !errors.As(err, &ambiguous) {
				t.Fatalf("TenantOf() error = %v (%T), want *AmbiguousError", err, err)
			}
			if ambiguous.User != "mallory" || !reflect.DeepEqual(ambiguous.Tenants, tc.wantTenants) {
				t.Errorf("AmbiguousError = %+v, want user mallory and tenants %q", ambiguous, tc.wantTenants)
			}
			msg := err.Error()
			for _, want := range append([]string{`"mallory"`, strings.Join(tc.wantTenants, ", "), "--as-group=tenant.io:<tenant>"}, tc.wantTenants...) {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
		})
	}
}

// fixedResolver is a Resolver that ignores the user.
type fixedResolver []string

func (r fixedResolver) TenantsOf(user.Info) []string { return r }

func TestTenantOfCustomResolver(t *testing.T) {
	u := &user.DefaultInfo{Name: "bob"}
	if got, err := tenancy.TenantOf(fixedResolver{"globex"}, u); err != nil || got != "globex" {
		t.Errorf("TenantOf() = %q, %v; want globex, nil", got, err)
	}
	if got, err := tenancy.TenantOf(fixedResolver(nil), u); err != nil || got != "" {
		t.Errorf("TenantOf() = %q, %v; want \"\", nil", got, err)
	}
	var ambiguous *tenancy.AmbiguousError
	if _, err := tenancy.TenantOf(fixedResolver{"a", "b"}, u); !errors.As(err, &ambiguous) {
		t.Errorf("TenantOf() error = %v, want *AmbiguousError", err)
	}
}

func TestTenantContext(t *testing.T) {
	ctx := context.Background()
	if got, ok := tenancy.TenantFrom(ctx); ok || got != "" {
		t.Errorf("TenantFrom(unscoped) = %q, %v; want \"\", false", got, ok)
	}
	if got, ok := tenancy.TenantFrom(tenancy.WithTenant(ctx, "")); !ok || got != "" {
		t.Errorf("TenantFrom(WithTenant(\"\")) = %q, %v; want \"\", true", got, ok)
	}
	acme := tenancy.WithTenant(ctx, "acme")
	if got, ok := tenancy.TenantFrom(acme); !ok || got != "acme" {
		t.Errorf("TenantFrom(WithTenant(acme)) = %q, %v; want acme, true", got, ok)
	}
	if got, _ := tenancy.TenantFrom(tenancy.WithTenant(acme, "globex")); got != "globex" {
		t.Errorf("TenantFrom(rescoped) = %q, want globex", got)
	}
	if got, _ := tenancy.TenantFrom(acme); got != "acme" {
		t.Errorf("rescoping changed the parent context to %q", got)
	}
}
