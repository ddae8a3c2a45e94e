// Package vrfpeering is the storage of VRFPeering objects.
package vrfpeering

import (
	"k8s.io/apimachinery/pkg/fields"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// Kind describes VRFPeering to the generic strategies.
var Kind = kindstore.Kind[*tenant.VRFPeering, tenant.VRFPeeringSpec, tenant.VRFPeeringStatus]{
	Spec:        func(o *tenant.VRFPeering) *tenant.VRFPeeringSpec { return &o.Spec },
	Status:      func(o *tenant.VRFPeering) *tenant.VRFPeeringStatus { return &o.Status },
	Namespaced:  false,
	TenantOwned: false,
	// Binding records them when the peering is created.
	ServerOwnedStatus: func(dst, src *tenant.VRFPeering) {
		dst.Status.TenantUID, dst.Status.NetworkUID = src.Status.TenantUID, src.Status.NetworkUID
	},
	InitialStatus: func(o *tenant.VRFPeering) {
		kindstore.NotSynced(&o.Status.Conditions, "the syncer has not looked at the peering yet")
	},
	Validate:             validation.ValidateVRFPeering,
	ValidateUpdate:       validation.ValidateVRFPeeringUpdate,
	ValidateStatusUpdate: validation.ValidateVRFPeeringStatusUpdate,
}

// SelectableFields are the field selectors of VRFPeering besides metadata.name.
func SelectableFields(o *tenant.VRFPeering) fields.Set {
	return fields.Set{
		"spec.tenant":  o.Spec.Tenant,
		"spec.network": o.Spec.Network,
	}
}
