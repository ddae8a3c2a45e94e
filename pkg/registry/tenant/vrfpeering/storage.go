package vrfpeering

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/base"
)

// NewStorage returns the storage of vrfpeerings and vrfpeerings/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, deps base.Deps) (*base.Storage, error) {
	return base.NewStorage(scheme, optsGetter, base.Resource[*tenant.VRFPeering, tenant.VRFPeeringSpec, tenant.VRFPeeringStatus]{
		Kind:       Kind,
		Plural:     "vrfpeerings",
		Singular:   "vrfpeering",
		ShortNames: []string{"vrfp"},
		New:        func() runtime.Object { return &tenant.VRFPeering{} },
		NewList:    func() runtime.Object { return &tenant.VRFPeeringList{} },
		Fields:     SelectableFields,
		Table:      base.Table[*tenant.VRFPeering]{Columns: columns},
	}, deps)
}

var columns = []base.Column[*tenant.VRFPeering]{
	{Name: "Tenant", Type: "string", Description: "Tenant owning the Network.", Cell: func(o *tenant.VRFPeering) interface{} { return o.Spec.Tenant }},
	{Name: "Network", Type: "string", Description: "The tenant Network whose VRF is peered.", Cell: func(o *tenant.VRFPeering) interface{} { return o.Spec.Network }},
	{Name: "ASN", Type: "integer", Description: "Local autonomous system number.", Cell: func(o *tenant.VRFPeering) interface{} { return o.Spec.ASN }},
	{Name: "Neighbors", Type: "string", Description: "BGP neighbors.", Cell: func(o *tenant.VRFPeering) interface{} {
		addrs := make([]string, 0, len(o.Spec.Neighbors))
		for _, n := range o.Spec.Neighbors {
			addrs = append(addrs, n.Address)
		}
		return base.Join(addrs)
	}},
	{Name: "VRF", Type: "string", Priority: 1, Description: "VRF name on the nodes.", Cell: func(o *tenant.VRFPeering) interface{} { return base.OrNone(o.Status.VRF) }},
	{Name: "Ready", Type: "string", Description: "Whether the peering is in place.", Cell: func(o *tenant.VRFPeering) interface{} { return base.ConditionStatus(o.Status.Conditions, "Ready") }},
}
