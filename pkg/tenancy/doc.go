// Package tenancy decides which tenant a request acts as, what it may read
// and write (the guards of tenant-owned and provider resources), how the
// objects of a tenant are laid out in storage, and ends the watches of a
// caller whose tenant changed.
//
// Tenant-scoped objects (Namespaces, Networks) and tenant-namespaced objects
// (FloatingIPs, LoadBalancers) are stored under a key range of their own per
// tenant:
//
//	<resource prefix>/<tenant>/<name>
//	<resource prefix>/<tenant>/<namespace>/<name>
//
// so a tenant's LIST and WATCH read only its own range, never everyone's
// objects filtered afterwards. The tenant of a stored object is also in its
// label tenant.io/tenant, which the server sets and nobody may change; that is
// how the watch cache files an object under its key.
package tenancy
