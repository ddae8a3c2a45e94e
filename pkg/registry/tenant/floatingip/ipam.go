package floatingip

import (
	"net/netip"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/base"
)

// Resource is the resource name of FloatingIPs, as base.LocalRef writes it.
const Resource = "floatingips"

// PublicIP says where a FloatingIP asks for and records its public IP: it
// asks in spec.address (optional: else the lowest free one of its
// tenant's) and holds the address in status.address, which only the
// registry writes (Kind.ServerOwnedStatus); the syncer binds that address
// on the host. Its claim has Purpose "floatingip:<UID>" and Ref
// "floatingips <namespace>/<name>".
var PublicIP = base.PublicIPKind[*tenant.FloatingIP]{
	Resource:     Resource,
	Kind:         "FloatingIP",
	Use:          base.LocalUseFloatingIP,
	Requested:    func(o *tenant.FloatingIP) *string { return &o.Spec.Address },
	Held:         func(o *tenant.FloatingIP) *string { return &o.Status.Address },
	HeldInStatus: true,
	Validate:     validation.ValidateFloatingIP,
	ValidateSpecUpdate: func(n, o *tenant.FloatingIP) field.ErrorList {
		probe := n.DeepCopy()
		probe.ObjectMeta = *o.ObjectMeta.DeepCopy()
		return validation.ValidateFloatingIPUpdate(probe, o)
	},
}

// IPAM gives FloatingIPs their public IPs; see base.PublicIPs.
type IPAM = base.PublicIPs[*tenant.FloatingIP]

// NewIPAM returns the IPAM of the FloatingIPs of st, claiming in space and
// checking st's quota; IPAM.Install makes it st's hooks.
func NewIPAM(space *base.LocalSpace, st *base.Storage) *IPAM {
	return &IPAM{Kind: PublicIP, Space: space, Store: st.Store, Quota: st.Main.Quota, QuotaResource: st.Main.QuotaResource}
}

// Records says whether FloatingIP obj records block for use: its address
// in status.address. It is the sweeper's rule for FloatingIPs
// (base.LocalKind).
func Records(obj runtime.Object, use string, block netip.Prefix) bool {
	return (&IPAM{Kind: PublicIP}).Records(obj, use, block)
}
