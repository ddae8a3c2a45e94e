// Package tenancy decides which tenant a request acts as and how the objects
// of a tenant are laid out in storage.
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
