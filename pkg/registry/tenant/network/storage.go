package network

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/claims"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// NewStorage returns the storage of networks and networks/status. A
// Network gets its subnets and NAT address from its tenant's space when
// deps have one (IPAM), and is not deleted while Namespaces name it
// (Deletion).
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, deps kindstore.Deps) (*kindstore.Storage, error) {
	st, err := kindstore.NewStorage(scheme, optsGetter, kindstore.Resource[*tenant.Network, tenant.NetworkSpec, tenant.NetworkStatus]{
		Kind:          Kind,
		Plural:        "networks",
		Singular:      "network",
		ShortNames:    []string{"net"},
		New:           func() runtime.Object { return &tenant.Network{} },
		NewList:       func() runtime.Object { return &tenant.NetworkList{} },
		Fields:        SelectableFields,
		QuotaResource: "networks",
		Table:         kindstore.Table[*tenant.Network]{Columns: columns},
	}, deps)
	if err != nil {
		return nil, err
	}
	installIPAM(st, claims.NewTenantSpace(deps))
	st.Install(kindstore.Hooks{BeforeDelete: (&Deletion{Storages: deps.Storages}).BeforeDelete})
	return st, nil
}

var columns = []kindstore.Column[*tenant.Network]{
	{Name: "Topology", Type: "string", Description: "Layer2 or Layer3.", Cell: func(o *tenant.Network) interface{} { return string(o.Spec.Topology) }},
	{Name: "Subnets", Type: "string", Description: "Subnets of the network.", Cell: func(o *tenant.Network) interface{} {
		if len(o.Status.Subnets) > 0 {
			return kindstore.Join(o.Status.Subnets)
		}
		return kindstore.Join(o.Spec.Subnets)
	}},
	{Name: "NAT Gateway", Type: "string", Description: "Public IP of outbound SNAT.", Cell: func(o *tenant.Network) interface{} { return kindstore.OrNone(o.Status.NATGatewayIP) }},
	{Name: "Namespaces", Type: "string", Priority: 1, Description: "Namespaces attached.", Cell: func(o *tenant.Network) interface{} { return kindstore.Join(o.Status.Namespaces) }},
	{Name: "Services", Type: "string", Priority: 1, Description: "Shared: the network's Services are reachable from the tenant's other Shared networks (condition ServicesShared); Private: from its own Namespaces only.", Cell: func(o *tenant.Network) interface{} {
		return string(o.Spec.ServiceNetworkMode())
	}},
	{Name: "Ready", Type: "string", Description: "Whether the network exists on the host.", Cell: func(o *tenant.Network) interface{} { return kindstore.ConditionStatus(o.Status.Conditions, "Ready") }},
}
