package tenancy

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
)

type tenantKey struct{}

// WithTenant returns a context in which requests act as tenant. An empty
// tenant means "no tenant": reads see an empty view.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantFrom returns the tenant stored by WithTenant. ok is false when the
// context was never scoped, which the registry treats as a programming error.
func TenantFrom(ctx context.Context) (tenant string, ok bool) {
	tenant, ok = ctx.Value(tenantKey{}).(string)
	return tenant, ok
}

type allTenantsKey struct{}

// WithAllTenants returns a context whose lists and watches read every
// tenant's range at once. Only the server's own controllers use it (the
// syncer's informers); requests never get it, and no write can be keyed in
// it (KeyFunc needs one tenant).
func WithAllTenants(ctx context.Context) context.Context {
	return context.WithValue(ctx, allTenantsKey{}, true)
}

func allTenants(ctx context.Context) bool {
	all, _ := ctx.Value(allTenantsKey{}).(bool)
	return all
}

type actingTenantKey struct{}

type actingTenant struct {
	name string
	uid  types.UID
}

// ActAsTenant returns a context in which the server's own controllers go
// through a tenant kind's guarded storage as tenant t (of UID uid), with
// its quota and validation, without being a member. Only in-process code
// can set a context value: no request can claim it.
func ActAsTenant(ctx context.Context, t string, uid types.UID) context.Context {
	return context.WithValue(ctx, actingTenantKey{}, actingTenant{name: t, uid: uid})
}

// ActingTenantFrom returns the tenant set by ActAsTenant.
func ActingTenantFrom(ctx context.Context) (string, types.UID, bool) {
	t, ok := ctx.Value(actingTenantKey{}).(actingTenant)
	return t.name, t.uid, ok && t.name != ""
}

type tenantUIDKey struct{}

// WithTenantUID records the UID of the tenant a request acts as. The
// server labels what the request creates with it, and reads only objects
// so labelled: a former tenant of the same name, whose objects may still
// be in the watch history, is another tenant.
func WithTenantUID(ctx context.Context, uid types.UID) context.Context {
	return context.WithValue(ctx, tenantUIDKey{}, uid)
}

// TenantUIDFrom returns the UID stored by WithTenantUID ("" if none).
func TenantUIDFrom(ctx context.Context) types.UID {
	uid, _ := ctx.Value(tenantUIDKey{}).(types.UID)
	return uid
}
