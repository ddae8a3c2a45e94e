// Package tenants is the storage of Tenant objects: their addresses,
// default quota and offboarding report. (It is named tenants, not tenant,
// so that it never hides the API package pkg/apis/tenant.)
package tenants

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// Kind describes Tenant to the generic strategies.
var Kind = kindstore.Kind[*tenant.Tenant, tenant.TenantSpec, tenant.TenantStatus]{
	Spec:        func(o *tenant.Tenant) *tenant.TenantSpec { return &o.Spec },
	Status:      func(o *tenant.Tenant) *tenant.TenantStatus { return &o.Status },
	Namespaced:  false,
	TenantOwned: false,
	ServerOwnedStatus: func(dst, src *tenant.Tenant) {
		// The prefix follows from the name and UID: nobody sets it.
		dst.Status.NamespacePrefix = hostnames.NamespacePrefix(dst.Name, dst.UID)
		dst.Status.Network, dst.Status.PublicIPs = src.Status.Network, src.Status.PublicIPs
		if c := meta.FindStatusCondition(src.Status.Conditions, ConditionAddressesAllocated); c != nil {
			meta.SetStatusCondition(&dst.Status.Conditions, *c)
		}
	},
	InitialStatus: func(o *tenant.Tenant) {
		o.Status.Phase = tenant.TenantPhasePending
		kindstore.NotSynced(&o.Status.Conditions, "waiting for the syncer to onboard the tenant on the host")
	},
	Validate:             validation.ValidateTenant,
	ValidateUpdate:       validation.ValidateTenantUpdate,
	ValidateStatusUpdate: validation.ValidateTenantStatusUpdate,
}

// SelectableFields are the field selectors of Tenant besides metadata.name.
func SelectableFields(o *tenant.Tenant) fields.Set {
	return fields.Set{
		"status.phase": string(o.Status.Phase),
	}
}
