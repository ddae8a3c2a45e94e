package addresspool

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// NewStorage returns the storage of addresspools and addresspools/status.
// With deps' IPAM, pools never overlap and are not deleted or shrunk under
// their allocations (Consistency).
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, deps kindstore.Deps) (*kindstore.Storage, error) {
	st, err := kindstore.NewStorage(scheme, optsGetter, kindstore.Resource[*tenant.AddressPool, tenant.AddressPoolSpec, tenant.AddressPoolStatus]{
		Kind:       Kind,
		Plural:     "addresspools",
		Singular:   "addresspool",
		ShortNames: []string{"apool"},
		New:        func() runtime.Object { return &tenant.AddressPool{} },
		NewList:    func() runtime.Object { return &tenant.AddressPoolList{} },
		Fields:     SelectableFields,
		Table:      kindstore.Table[*tenant.AddressPool]{Columns: columns},
	}, deps)
	if err != nil {
		return nil, err
	}
	installConsistency(st, deps)
	return st, nil
}

var columns = []kindstore.Column[*tenant.AddressPool]{
	{Name: "Purpose", Type: "string", Description: "TenantNetworks or PublicIPs.", Cell: func(o *tenant.AddressPool) interface{} { return string(o.Spec.Purpose) }},
	{Name: "CIDRs", Type: "string", Description: "IPv4 ranges of the pool.", Cell: func(o *tenant.AddressPool) interface{} {
		return kindstore.Join(append(append([]string{}, o.Spec.CIDRs...), o.Spec.Ranges...))
	}},
	{Name: "Capacity", Type: "integer", Description: "Addresses the pool can hand out.", Cell: func(o *tenant.AddressPool) interface{} { return o.Status.Capacity }},
	{Name: "Allocated", Type: "integer", Description: "Addresses handed out.", Cell: func(o *tenant.AddressPool) interface{} { return o.Status.Allocated }},
	{Name: "Free", Type: "integer", Description: "Addresses still free.", Cell: func(o *tenant.AddressPool) interface{} { return o.Status.Free }},
}
