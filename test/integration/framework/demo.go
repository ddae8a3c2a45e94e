package framework

import "context"

// Demo runs after a local stack (RunLocal, `make run`) is up and before it
// reports READY. It is where demo content goes — AddressPools, a Tenant or
// two for alice and bob — so that a person trying the product finds
// something to look at. It must be idempotent and fast, use s.Kubectl or
// s.Clients (as AdminUser for provider objects), and return an error rather
// than leave half-made state silently. Tests never run it.
//
// It creates the demo tenants acme (alice) and globex (bob).
func Demo(ctx context.Context, s *Stack) error {
	return DemoTenants(ctx, s)
}
