// Package hostclaim is the storage of HostClaim objects: a tenant's claim
// on a server of a HostClass.
package hostclaim

import (
	"k8s.io/apimachinery/pkg/fields"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// Kind describes HostClaim to the generic strategies.
var Kind = kindstore.Kind[*tenant.HostClaim, tenant.HostClaimSpec, tenant.HostClaimStatus]{
	Spec:        func(o *tenant.HostClaim) *tenant.HostClaimSpec { return &o.Spec },
	Status:      func(o *tenant.HostClaim) *tenant.HostClaimStatus { return &o.Status },
	Namespaced:  true,
	TenantOwned: true,
	InitialStatus: func(o *tenant.HostClaim) {
		o.Status.Phase = tenant.HostClaimPending
		kindstore.NotSynced(&o.Status.Conditions, "the syncer has not looked for a server yet")
	},
	Validate:             validation.ValidateHostClaim,
	ValidateUpdate:       validation.ValidateHostClaimUpdate,
	ValidateStatusUpdate: validation.ValidateHostClaimStatusUpdate,
}

// SelectableFields are the field selectors of HostClaim besides metadata.name and metadata.namespace.
func SelectableFields(o *tenant.HostClaim) fields.Set {
	return fields.Set{
		"spec.hostClass": o.Spec.HostClass,
		"status.phase":   string(o.Status.Phase),
	}
}
