// Package network is the storage of Network objects.
package network

import (
	"slices"

	"k8s.io/apimachinery/pkg/fields"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// Kind describes Network to the generic strategies.
var Kind = kindstore.Kind[*tenant.Network, tenant.NetworkSpec, tenant.NetworkStatus]{
	Spec:        func(o *tenant.Network) *tenant.NetworkSpec { return &o.Spec },
	Status:      func(o *tenant.Network) *tenant.NetworkStatus { return &o.Status },
	Namespaced:  false,
	TenantOwned: true,
	// The registry's IPAM (see IPAM) sets these: they are what it claimed.
	ServerOwnedStatus: func(dst, src *tenant.Network) {
		dst.Status.Subnets = slices.Clone(src.Status.Subnets)
		dst.Status.NATGatewayIP = src.Status.NATGatewayIP
	},
	KeepAssigned: func(n, o *tenant.Network) {
		if len(n.Spec.Subnets) == 0 {
			n.Spec.Subnets = o.Spec.Subnets
		}
	},
	Validate:             validation.ValidateNetwork,
	ValidateUpdate:       validation.ValidateNetworkUpdate,
	ValidateStatusUpdate: validation.ValidateNetworkStatusUpdate,
}

// SelectableFields are the field selectors of Network besides metadata.name.
func SelectableFields(o *tenant.Network) fields.Set {
	return fields.Set{
		"spec.topology":       string(o.Spec.Topology),
		"spec.serviceNetwork": string(o.Spec.ServiceNetworkMode()),
	}
}
