// Package addresspool is the storage of AddressPool objects.
package addresspool

import (
	"k8s.io/apimachinery/pkg/fields"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// Kind describes AddressPool to the generic strategies.
var Kind = kindstore.Kind[*tenant.AddressPool, tenant.AddressPoolSpec, tenant.AddressPoolStatus]{
	Spec:                 func(o *tenant.AddressPool) *tenant.AddressPoolSpec { return &o.Spec },
	Status:               func(o *tenant.AddressPool) *tenant.AddressPoolStatus { return &o.Status },
	Namespaced:           false,
	TenantOwned:          false,
	Validate:             validation.ValidateAddressPool,
	ValidateUpdate:       validation.ValidateAddressPoolUpdate,
	ValidateStatusUpdate: validation.ValidateAddressPoolStatusUpdate,
}

// SelectableFields are the field selectors of AddressPool besides metadata.name.
func SelectableFields(o *tenant.AddressPool) fields.Set {
	return fields.Set{
		"spec.purpose": string(o.Spec.Purpose),
	}
}
