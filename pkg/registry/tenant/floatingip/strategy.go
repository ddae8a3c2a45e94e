// Package floatingip is the storage of FloatingIP objects.
package floatingip

import (
	"k8s.io/apimachinery/pkg/fields"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// Kind describes FloatingIP to the generic strategies.
var Kind = kindstore.Kind[*tenant.FloatingIP, tenant.FloatingIPSpec, tenant.FloatingIPStatus]{
	Spec:        func(o *tenant.FloatingIP) *tenant.FloatingIPSpec { return &o.Spec },
	Status:      func(o *tenant.FloatingIP) *tenant.FloatingIPStatus { return &o.Status },
	Namespaced:  true,
	TenantOwned: true,
	// The registry's IPAM (see NewIPAM) sets it: it is what it claimed.
	ServerOwnedStatus: func(dst, src *tenant.FloatingIP) {
		dst.Status.Address = src.Status.Address
	},
	KeepAssigned: func(n, o *tenant.FloatingIP) {
		if n.Spec.Address == "" {
			n.Spec.Address = o.Spec.Address
		}
	},
	Validate:             validation.ValidateFloatingIP,
	ValidateUpdate:       validation.ValidateFloatingIPUpdate,
	ValidateStatusUpdate: validation.ValidateFloatingIPStatusUpdate,
}

// SelectableFields are the field selectors of FloatingIP besides metadata.name and metadata.namespace.
func SelectableFields(o *tenant.FloatingIP) fields.Set {
	return fields.Set{
		"spec.address":   o.Spec.Address,
		"status.address": o.Status.Address,
		"status.phase":   string(o.Status.Phase),
	}
}
