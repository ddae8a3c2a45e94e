package providerservice

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/generic"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// Resource is the resource name of ProviderServices.
const Resource = "providerservices"

// NewStorage returns the storage of providerservices and providerservices/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, deps kindstore.Deps) (*kindstore.Storage, error) {
	st, err := kindstore.NewStorage(scheme, optsGetter, kindstore.Resource[*tenant.ProviderService, tenant.ProviderServiceSpec, tenant.ProviderServiceStatus]{
		Kind:            Kind,
		Plural:          Resource,
		Singular:        "providerservice",
		ShortNames:      []string{"psvc"},
		New:             func() runtime.Object { return &tenant.ProviderService{} },
		NewList:         func() runtime.Object { return &tenant.ProviderServiceList{} },
		Fields:          SelectableFields,
		VisibleToTenant: OfferedTo,
		RedactForTenant: ForTenant,
		Table:           kindstore.Table[*tenant.ProviderService]{Columns: columns},
	}, deps)
	if err != nil {
		return nil, err
	}
	binding := &Binding{Storages: deps.Storages}
	st.Install(kindstore.OnWrite(binding.Create, binding.Update))
	return st, nil
}

var columns = []kindstore.Column[*tenant.ProviderService]{
	{Name: "Service", Type: "string", Description: "The host Service offered.", Cell: func(o *tenant.ProviderService) interface{} {
		return o.Spec.Service.Namespace + "/" + o.Spec.Service.Name
	}},
	{Name: "Alias", Type: "string", Description: "Name of the Service in the tenants' namespaces.", Cell: func(o *tenant.ProviderService) interface{} {
		return AliasOf(o)
	}},
	{Name: "Tenants", Type: "string", Description: "Tenants the service is offered to.", Cell: func(o *tenant.ProviderService) interface{} {
		if o.Spec.AllTenants {
			return "*"
		}
		return kindstore.Join(o.Spec.Tenants)
	}},
	{Name: "Connected", Type: "string", Description: "Tenants connected, of those offered the service.", Cell: func(o *tenant.ProviderService) interface{} {
		connected := 0
		for _, t := range o.Status.Tenants {
			if t.Connected && t.Reason == "" {
				connected++
			}
		}
		return fmt.Sprintf("%d/%d", connected, len(o.Status.Tenants))
	}},
	{Name: "Provider Network", Type: "string", Priority: 1, Description: "The ClusterUserDefinedNetwork of the Service's namespace.", Cell: func(o *tenant.ProviderService) interface{} {
		return o.Status.ProviderNetwork
	}},
}

// AliasOf returns the name of o's Service in the tenants' namespaces.
func AliasOf(o *tenant.ProviderService) string {
	if o.Spec.Alias != "" {
		return o.Spec.Alias
	}
	return o.Name
}

// OfferedTo says whether the ProviderService obj is offered to tenant t of
// UID uid: to all tenants, or to t by name while t is the tenant that was
// named (status.offers).
func OfferedTo(t string, uid types.UID, obj runtime.Object) bool {
	o, ok := obj.(*tenant.ProviderService)
	if !ok {
		return false
	}
	if o.Spec.AllTenants {
		return true
	}
	if !slices.Contains(o.Spec.Tenants, t) {
		return false
	}
	for _, offer := range o.Status.Offers {
		if offer.Tenant == t {
			return uid == "" || offer.UID == uid
		}
	}
	return false
}

// ForTenant returns what tenant t reads of the ProviderService obj: the
// offer as it concerns t alone. Other tenants' names, their number and
// their entries are left out, and so are the managed fields and kubectl's
// last-applied-configuration annotation, which spell out the whole spec.
func ForTenant(t string, obj runtime.Object) runtime.Object {
	o, ok := obj.(*tenant.ProviderService)
	if !ok {
		return obj
	}
	out := o.DeepCopy()
	out.ManagedFields = nil
	delete(out.Annotations, corev1.LastAppliedConfigAnnotation)
	if slices.Contains(o.Spec.Tenants, t) {
		out.Spec.Tenants = []string{t}
	} else {
		out.Spec.Tenants = nil
	}
	out.Status.Offers = slices.DeleteFunc(out.Status.Offers, func(x tenant.ProviderServiceOffer) bool { return x.Tenant != t })
	out.Status.Tenants = slices.DeleteFunc(out.Status.Tenants, func(x tenant.ProviderServiceTenant) bool { return x.Name != t })
	return out
}
