// Package hostclass is the storage of HostClass objects: the classes of
// bare-metal servers the provider offers to tenants.
package hostclass

import (
	"k8s.io/apimachinery/pkg/fields"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// Kind describes HostClass to the generic strategies.
var Kind = kindstore.Kind[*tenant.HostClass, tenant.HostClassSpec, tenant.HostClassStatus]{
	Spec:        func(o *tenant.HostClass) *tenant.HostClassSpec { return &o.Spec },
	Status:      func(o *tenant.HostClass) *tenant.HostClassStatus { return &o.Status },
	Namespaced:  false,
	TenantOwned: false,
	InitialStatus: func(o *tenant.HostClass) {
		kindstore.NotSynced(&o.Status.Conditions, "the syncer has not counted the class's servers yet")
	},
	Validate:             validation.ValidateHostClass,
	ValidateUpdate:       validation.ValidateHostClassUpdate,
	ValidateStatusUpdate: validation.ValidateHostClassStatusUpdate,
}

// SelectableFields are the field selectors of HostClass besides metadata.name.
func SelectableFields(o *tenant.HostClass) fields.Set {
	return fields.Set{"spec.hostNamespace": o.Spec.HostNamespace}
}
