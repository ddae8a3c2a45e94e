package loadbalancer

import (
	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/claims"
)

// Resource is the resource name of LoadBalancers, as claims.Ref writes it.
const Resource = "loadbalancers"

// PublicIP says where a LoadBalancer asks for and records its public IP:
// both in spec.address, which a create that leaves it empty gets filled
// with the lowest free public IP of its tenant, like a Service's
// clusterIP. (Its status.address is what the host's load balancer,
// MetalLB, reports; the syncer asks MetalLB for exactly spec.address.) Its
// claim has Purpose "loadbalancer:<UID>" and Ref "loadbalancers
// <namespace>/<name>".
var PublicIP = claims.PublicIP[*tenant.LoadBalancer]{
	Resource:  Resource,
	Kind:      "LoadBalancer",
	Use:       claims.UseLoadBalancer,
	Requested: func(o *tenant.LoadBalancer) *string { return &o.Spec.Address },
	Held:      func(o *tenant.LoadBalancer) *string { return &o.Spec.Address },
}
