// Package loadbalancer is the storage of LoadBalancer objects.
package loadbalancer

import (
	"k8s.io/apimachinery/pkg/fields"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// Kind describes LoadBalancer to the generic strategies.
var Kind = kindstore.Kind[*tenant.LoadBalancer, tenant.LoadBalancerSpec, tenant.LoadBalancerStatus]{
	Spec:        func(o *tenant.LoadBalancer) *tenant.LoadBalancerSpec { return &o.Spec },
	Status:      func(o *tenant.LoadBalancer) *tenant.LoadBalancerStatus { return &o.Status },
	Namespaced:  true,
	TenantOwned: true,
	// spec.address is defaulted by the registry's IPAM (see NewIPAM), and
	// kept by an update that omits it.
	KeepAssigned: func(n, o *tenant.LoadBalancer) {
		if n.Spec.Address == "" {
			n.Spec.Address = o.Spec.Address
		}
	},
	Validate:             validation.ValidateLoadBalancer,
	ValidateUpdate:       validation.ValidateLoadBalancerUpdate,
	ValidateStatusUpdate: validation.ValidateLoadBalancerStatusUpdate,
}

// SelectableFields are the field selectors of LoadBalancer besides metadata.name and metadata.namespace.
func SelectableFields(o *tenant.LoadBalancer) fields.Set {
	return fields.Set{
		"spec.address":   o.Spec.Address,
		"status.address": o.Status.Address,
	}
}
