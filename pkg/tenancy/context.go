package tenancy

import "context"

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
