package tenancy

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apiserver/pkg/authentication/user"
)

// GroupPrefix is the prefix of the host groups that make their members
// members of a tenant: group "tenant.io:acme" means tenant acme.
const GroupPrefix = "tenant.io:"

// IdentityGroupPrefix is the prefix of the group the syncer registers each
// tenant as in the platform's identity layer, whose members are members of
// the tenant too: OpenShift Group "tenant.io-acme" means tenant acme.
// OpenShift refuses ':' in a Group's name, so that Group cannot be called
// GroupPrefix+tenant; its members reach the API with the Group's name
// among their groups (docs/identity.md).
const IdentityGroupPrefix = "tenant.io-"

// IdentityGroup is the name of tenant t's group in the identity layer.
func IdentityGroup(t string) string { return IdentityGroupPrefix + t }

// TenantGroups are the host groups whose members are members of tenant t
// whatever its spec.members say: GroupPrefix+t and IdentityGroup(t).
func TenantGroups(t string) []string { return []string{GroupPrefix + t, IdentityGroup(t)} }

// Resolver maps an authenticated user to the tenants it is a member of.
type Resolver interface {
	// TenantsOf returns the names of the tenants u is a member of, sorted.
	TenantsOf(u user.Info) []string
}

// GroupResolver makes a user a member of tenant T when it is in host group
// "tenant.io:T", whether or not T exists. The server uses Membership; this
// resolver serves tests of storage that run without Tenants.
type GroupResolver struct{}

var _ Resolver = GroupResolver{}

// TenantsOf implements Resolver.
func (GroupResolver) TenantsOf(u user.Info) []string {
	var tenants []string
	for _, g := range u.GetGroups() {
		if name, ok := cutTenantGroup(g); ok {
			tenants = append(tenants, name)
		}
	}
	sort.Strings(tenants)
	return dedupSorted(tenants)
}

// cutTenantGroup returns T for a group "tenant.io:T" or "tenant.io-T"
// whose T can be a tenant name.
func cutTenantGroup(g string) (string, bool) {
	name, ok := strings.CutPrefix(g, GroupPrefix)
	if !ok {
		name, ok = strings.CutPrefix(g, IdentityGroupPrefix)
	}
	if !ok || len(validation.IsDNS1123Label(name)) != 0 {
		return "", false
	}
	return name, true
}

func dedupSorted(s []string) []string {
	if len(s) < 2 {
		return s
	}
	out := s[:1]
	for _, v := range s[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// AmbiguousError says that a user is a member of several tenants, so the
// server cannot tell which one a request acts as.
type AmbiguousError struct {
	User    string
	Tenants []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("user %q is a member of several tenants (%s); act as one of them with --as-group=%s<tenant>",
		e.User, strings.Join(e.Tenants, ", "), GroupPrefix)
}

// UIDResolver is a Resolver that also knows the UID of the tenants it
// resolves to.
type UIDResolver interface {
	Resolver
	// TenantUID returns the UID of tenant name, if it exists.
	TenantUID(name string) (types.UID, bool)
}

// CallerTenant returns the tenant a request acts as, and its UID when the
// resolver knows it: the tenant of ActAsTenant for the server's own
// controllers, else the one tenant u is a member of (TenantOf).
func CallerTenant(ctx context.Context, r Resolver, u user.Info) (string, types.UID, error) {
	if t, uid, ok := ActingTenantFrom(ctx); ok {
		return t, uid, nil
	}
	t, err := TenantOf(r, u)
	if err != nil || t == "" {
		return t, "", err
	}
	if ur, ok := r.(UIDResolver); ok {
		uid, _ := ur.TenantUID(t)
		return t, uid, nil
	}
	return t, "", nil
}

// TenantOf returns the one tenant u acts as: "" when u is a member of none,
// and an *AmbiguousError when u is a member of several.
func TenantOf(r Resolver, u user.Info) (string, error) {
	tenants := r.TenantsOf(u)
	switch len(tenants) {
	case 0:
		return "", nil
	case 1:
		return tenants[0], nil
	default:
		return "", &AmbiguousError{User: u.GetName(), Tenants: tenants}
	}
}
