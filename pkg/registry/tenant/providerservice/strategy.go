// Package providerservice is the storage of ProviderService objects.
package providerservice

import (
	"k8s.io/apimachinery/pkg/fields"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// Kind describes ProviderService to the generic strategies.
var Kind = kindstore.Kind[*tenant.ProviderService, tenant.ProviderServiceSpec, tenant.ProviderServiceStatus]{
	Spec:        func(o *tenant.ProviderService) *tenant.ProviderServiceSpec { return &o.Spec },
	Status:      func(o *tenant.ProviderService) *tenant.ProviderServiceStatus { return &o.Status },
	Namespaced:  false,
	TenantOwned: false,
	// Binding records them.
	ServerOwnedStatus: func(dst, src *tenant.ProviderService) {
		dst.Status.Offers = src.Status.Offers
	},
	InitialStatus: func(o *tenant.ProviderService) {
		kindstore.NotSynced(&o.Status.Conditions, "the syncer has not looked at the service yet")
	},
	Validate:             validation.ValidateProviderService,
	ValidateUpdate:       validation.ValidateProviderServiceUpdate,
	ValidateStatusUpdate: validation.ValidateProviderServiceStatusUpdate,
}

// SelectableFields are the field selectors of ProviderService besides metadata.name.
func SelectableFields(o *tenant.ProviderService) fields.Set {
	return fields.Set{
		"spec.service.namespace": o.Spec.Service.Namespace,
		"spec.service.name":      o.Spec.Service.Name,
	}
}
