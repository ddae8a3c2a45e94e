package loadbalancer

import (
	"net/netip"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/base"
)

// Resource is the resource name of LoadBalancers, as base.LocalRef writes it.
const Resource = "loadbalancers"

// PublicIP says where a LoadBalancer asks for and records its public IP:
// both in spec.address, which a create that leaves it empty gets filled
// with the lowest free public IP of its tenant, like a Service's
// clusterIP. (Its status.address is what the host's load balancer,
// MetalLB, reports; the syncer asks MetalLB for exactly spec.address.) Its
// claim has Purpose "loadbalancer:<UID>" and Ref "loadbalancers
// <namespace>/<name>".
var PublicIP = base.PublicIPKind[*tenant.LoadBalancer]{
	Resource:  Resource,
	Kind:      "LoadBalancer",
	Use:       base.LocalUseLoadBalancer,
	Requested: func(o *tenant.LoadBalancer) *string { return &o.Spec.Address },
	Held:      func(o *tenant.LoadBalancer) *string { return &o.Spec.Address },
	Validate:  validation.ValidateLoadBalancer,
	ValidateSpecUpdate: func(n, o *tenant.LoadBalancer) field.ErrorList {
		probe := n.DeepCopy()
		probe.ObjectMeta = *o.ObjectMeta.DeepCopy()
		return validation.ValidateLoadBalancerUpdate(probe, o)
	},
}

// IPAM gives LoadBalancers their public IPs; see base.PublicIPs.
type IPAM = base.PublicIPs[*tenant.LoadBalancer]

// NewIPAM returns the IPAM of the LoadBalancers of st, claiming in space
// and checking st's quota; IPAM.Install makes it st's hooks.
func NewIPAM(space *base.LocalSpace, st *base.Storage) *IPAM {
	return &IPAM{Kind: PublicIP, Space: space, Store: st.Store, Quota: st.Main.Quota, QuotaResource: st.Main.QuotaResource}
}

// Records says whether LoadBalancer obj records block for use: its
// address in spec.address. It is the sweeper's rule for LoadBalancers
// (base.LocalKind).
func Records(obj runtime.Object, use string, block netip.Prefix) bool {
	return (&IPAM{Kind: PublicIP}).Records(obj, use, block)
}
