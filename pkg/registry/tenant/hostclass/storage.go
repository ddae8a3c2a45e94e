package hostclass

import (
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/generic"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// Resource is the resource name of HostClasses.
const Resource = "hostclasses"

// NewStorage returns the storage of hostclasses and hostclasses/status.
// Tenants read the classes offered to them, without what describes the
// provider's inventory (ForTenant).
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, deps kindstore.Deps) (*kindstore.Storage, error) {
	return kindstore.NewStorage(scheme, optsGetter, kindstore.Resource[*tenant.HostClass, tenant.HostClassSpec, tenant.HostClassStatus]{
		Kind:            Kind,
		Plural:          Resource,
		Singular:        "hostclass",
		ShortNames:      []string{"hcls"},
		New:             func() runtime.Object { return &tenant.HostClass{} },
		NewList:         func() runtime.Object { return &tenant.HostClassList{} },
		Fields:          SelectableFields,
		VisibleToTenant: OfferedTo,
		RedactForTenant: ForTenant,
		Table:           kindstore.Table[*tenant.HostClass]{Columns: columns},
	}, deps)
}

var columns = []kindstore.Column[*tenant.HostClass]{
	{Name: "Labels", Type: "string", Description: "Labels of the servers that claims may select on, with their values.", Cell: func(o *tenant.HostClass) interface{} {
		out := make([]string, 0, len(o.Status.Labels))
		for _, l := range o.Status.Labels {
			out = append(out, l.Key+"="+strings.Join(l.Values, "|"))
		}
		if len(out) == 0 {
			return kindstore.Join(o.Spec.TenantLabels)
		}
		return kindstore.Join(out)
	}},
	{Name: "Available", Type: "integer", Description: "Servers that can be claimed now.", Cell: func(o *tenant.HostClass) interface{} { return int64(o.Status.Available) }},
	{Name: "Claimed", Type: "string", Description: "Servers bound to a HostClaim (the provider's to know: - for tenants).", Cell: func(o *tenant.HostClass) interface{} {
		return providerCount(o, o.Status.Claimed)
	}},
	{Name: "Hosts", Type: "string", Description: "Servers in the class (the provider's to know: - for tenants).", Cell: func(o *tenant.HostClass) interface{} {
		return providerCount(o, o.Status.Hosts)
	}},
	{Name: "Tenants", Type: "string", Priority: 1, Description: "Tenants the class is offered to.", Cell: func(o *tenant.HostClass) interface{} {
		if o.Spec.AllTenants {
			return "*"
		}
		return kindstore.Join(o.Spec.Tenants)
	}},
	{Name: "Host Namespace", Type: "string", Priority: 1, Description: "The provider namespace of the class's BareMetalHosts.", Cell: func(o *tenant.HostClass) interface{} {
		return kindstore.OrNone(o.Spec.HostNamespace)
	}},
}

// providerCount is n, or "-" in a tenant's read of o (ForTenant), which
// leaves the provider's counts out: every stored HostClass has a
// spec.hostNamespace, and only a tenant's read has none.
func providerCount(o *tenant.HostClass, n int32) string {
	if o.Spec.HostNamespace == "" {
		return "-"
	}
	return strconv.Itoa(int(n))
}

// OfferedTo says whether the HostClass obj is offered to tenant t: to all
// tenants, or to t by name.
func OfferedTo(t string, _ types.UID, obj runtime.Object) bool {
	o, ok := obj.(*tenant.HostClass)
	return ok && (o.Spec.AllTenants || slices.Contains(o.Spec.Tenants, t))
}

// ForTenant returns what a tenant reads of the HostClass obj: its name,
// its tenant labels and their values, whether it shows hardware, and the
// number of servers it has free. The provider's namespace, selector, the
// other tenants it is offered to, the counts of claimed servers, the
// conditions' messages (the syncer's name the namespace), managed fields
// and kubectl's last-applied annotation are left out.
func ForTenant(t string, obj runtime.Object) runtime.Object {
	o, ok := obj.(*tenant.HostClass)
	if !ok {
		return obj
	}
	out := o.DeepCopy()
	out.ManagedFields = nil
	out.Annotations = nil
	out.Labels = nil
	out.Spec.HostNamespace = ""
	out.Spec.HostSelector = nil
	if !o.Spec.AllTenants {
		out.Spec.Tenants = []string{t}
	}
	out.Status.Hosts, out.Status.Claimed = 0, 0
	for i := range out.Status.Conditions {
		out.Status.Conditions[i].Message = ""
	}
	return out
}
