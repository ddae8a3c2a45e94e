// Package namespace is the storage of Namespace objects.
package namespace

import (
	"k8s.io/apimachinery/pkg/fields"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// Kind describes Namespace to the generic strategies.
var Kind = kindstore.Kind[*tenant.Namespace, tenant.NamespaceSpec, tenant.NamespaceStatus]{
	Spec:        func(o *tenant.Namespace) *tenant.NamespaceSpec { return &o.Spec },
	Status:      func(o *tenant.Namespace) *tenant.NamespaceStatus { return &o.Status },
	Namespaced:  false,
	TenantOwned: true,
	InitialStatus: func(o *tenant.Namespace) {
		o.Status.Phase = tenant.NamespacePhasePending
		kindstore.NotSynced(&o.Status.Conditions, "waiting for the syncer to create the host namespace")
	},
	Validate:             validation.ValidateNamespace,
	ValidateUpdate:       validation.ValidateNamespaceUpdate,
	ValidateStatusUpdate: validation.ValidateNamespaceStatusUpdate,
}

// SelectableFields are the field selectors of Namespace besides metadata.name.
func SelectableFields(o *tenant.Namespace) fields.Set {
	return fields.Set{
		"spec.network":         o.Spec.Network,
		"status.phase":         string(o.Status.Phase),
		"status.hostNamespace": o.Status.HostNamespace,
	}
}
