package floatingip

import (
	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/claims"
)

// Resource is the resource name of FloatingIPs, as claims.Ref writes it.
const Resource = "floatingips"

// PublicIP says where a FloatingIP asks for and records its public IP: it
// asks in spec.address (optional: else the lowest free one of its
// tenant's) and holds the address in status.address, which only the
// registry writes (Kind.ServerOwnedStatus); the syncer binds that address
// on the host. Its claim has Purpose "floatingip:<UID>" and Ref
// "floatingips <namespace>/<name>".
var PublicIP = claims.PublicIP[*tenant.FloatingIP]{
	Resource:     Resource,
	Kind:         "FloatingIP",
	Use:          claims.UseFloatingIP,
	Requested:    func(o *tenant.FloatingIP) *string { return &o.Spec.Address },
	Held:         func(o *tenant.FloatingIP) *string { return &o.Status.Address },
	HeldInStatus: true,
}
