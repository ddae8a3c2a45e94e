package tenantview

import (
	"slices"
	"sort"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

// HostGroupPrefix makes the host group whose members belong to a tenant:
// tenant.io:<tenant>.
const HostGroupPrefix = "tenant.io:"

// IdentityGroupPrefix makes the tenant's group in the platform's identity
// layer (an OpenShift Group), whose members belong to the tenant too:
// tenant.io-<tenant>.
const IdentityGroupPrefix = "tenant.io-"

// Membership is one tenant the caller belongs to and through what.
type Membership struct {
	Tenant string `json:"tenant"`
	// Via says how: "member" (spec.members.users), "group <g>"
	// (spec.members.groups), "host group tenant.io:<tenant>" or
	// "identity group tenant.io-<tenant>".
	Via []string `json:"via"`
}

// Memberships says which of tenants user (in groups) belongs to, and
// through what, as the server decides it.
func Memberships(user string, groups []string, tenants []tenantv1alpha1.Tenant) []Membership {
	var out []Membership
	for i := range tenants {
		t := &tenants[i]
		var via []string
		if slices.Contains(t.Spec.Members.Users, user) {
			via = append(via, "member")
		}
		for _, g := range t.Spec.Members.Groups {
			if slices.Contains(groups, g) {
				via = append(via, "group "+g)
			}
		}
		if slices.Contains(groups, HostGroupPrefix+t.Name) {
			via = append(via, "host group "+HostGroupPrefix+t.Name)
		}
		if slices.Contains(groups, IdentityGroupPrefix+t.Name) {
			via = append(via, "identity group "+IdentityGroupPrefix+t.Name)
		}
		if len(via) > 0 {
			out = append(out, Membership{Tenant: t.Name, Via: via})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tenant < out[j].Tenant })
	return out
}
