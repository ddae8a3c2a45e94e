package providerservice

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/generic"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/base"
)

// NewStorage returns the storage of providerservices and providerservices/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, deps base.Deps) (*base.Storage, error) {
	return base.NewStorage(scheme, optsGetter, base.Resource[*tenant.ProviderService, tenant.ProviderServiceSpec, tenant.ProviderServiceStatus]{
		Kind:            Kind,
		Plural:          "providerservices",
		Singular:        "providerservice",
		ShortNames:      []string{"psvc"},
		New:             func() runtime.Object { return &tenant.ProviderService{} },
		NewList:         func() runtime.Object { return &tenant.ProviderServiceList{} },
		Fields:          SelectableFields,
		VisibleToTenant: OfferedTo,
		Table:           base.Table[*tenant.ProviderService]{Columns: columns},
	}, deps)
}

var columns = []base.Column[*tenant.ProviderService]{
	{Name: "Service", Type: "string", Description: "The host Service offered.", Cell: func(o *tenant.ProviderService) interface{} {
		return o.Spec.Service.Namespace + "/" + o.Spec.Service.Name
	}},
	{Name: "Alias", Type: "string", Description: "Name of the Service in the tenants' namespaces.", Cell: func(o *tenant.ProviderService) interface{} {
		if o.Spec.Alias != "" {
			return o.Spec.Alias
		}
		return o.Name
	}},
	{Name: "Tenants", Type: "string", Description: "Tenants the service is offered to.", Cell: func(o *tenant.ProviderService) interface{} {
		if o.Spec.AllTenants {
			return "*"
		}
		return base.Join(o.Spec.Tenants)
	}},
}

// OfferedTo says whether the ProviderService obj is offered to tenant t.
func OfferedTo(t string, _ types.UID, obj runtime.Object) bool {
	o, ok := obj.(*tenant.ProviderService)
	if !ok {
		return false
	}
	if o.Spec.AllTenants {
		return true
	}
	for _, name := range o.Spec.Tenants {
		if name == t {
			return true
		}
	}
	return false
}
