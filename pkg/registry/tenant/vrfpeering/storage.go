package vrfpeering

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/generic"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// Resource is the resource name of VRFPeerings.
const Resource = "vrfpeerings"

// NewStorage returns the storage of vrfpeerings and vrfpeerings/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, deps kindstore.Deps) (*kindstore.Storage, error) {
	st, err := kindstore.NewStorage(scheme, optsGetter, kindstore.Resource[*tenant.VRFPeering, tenant.VRFPeeringSpec, tenant.VRFPeeringStatus]{
		Kind:            Kind,
		Plural:          Resource,
		Singular:        "vrfpeering",
		ShortNames:      []string{"vrfp"},
		New:             func() runtime.Object { return &tenant.VRFPeering{} },
		NewList:         func() runtime.Object { return &tenant.VRFPeeringList{} },
		Fields:          SelectableFields,
		VisibleToTenant: PeersNetworkOf,
		Table:           kindstore.Table[*tenant.VRFPeering]{Columns: columns},
	}, deps)
	if err != nil {
		return nil, err
	}
	binding := &Binding{Storages: deps.Storages}
	st.Install(kindstore.OnWrite(binding.Create, binding.Update))
	return st, nil
}

// PeersNetworkOf says whether the VRFPeering obj peers a Network of tenant
// t of UID uid: its members read it. A peering made for a former tenant of
// the same name is not theirs.
func PeersNetworkOf(t string, uid types.UID, obj runtime.Object) bool {
	o, ok := obj.(*tenant.VRFPeering)
	return ok && o.Spec.Tenant == t && uid != "" && o.Status.TenantUID == uid
}

// State summarises the peering for its STATE column: Orphaned, the
// sessions established out of those reported, or why it is not ready.
func State(o *tenant.VRFPeering) string {
	if c := meta.FindStatusCondition(o.Status.Conditions, tenant.ConditionOrphaned); c != nil && c.Status == "True" {
		return "Orphaned"
	}
	if c := meta.FindStatusCondition(o.Status.Conditions, tenant.ConditionReady); c == nil || c.Status != "True" {
		if c != nil && c.Reason != "" {
			return c.Reason
		}
		return "Pending"
	}
	var sessions, established int32
	for _, n := range o.Status.Neighbors {
		sessions += n.Sessions
		established += n.Established
	}
	if sessions == 0 {
		return "NoSessions"
	}
	return fmt.Sprintf("%d/%d Established", established, sessions)
}

var columns = []kindstore.Column[*tenant.VRFPeering]{
	{Name: "Tenant", Type: "string", Description: "Tenant owning the Network.", Cell: func(o *tenant.VRFPeering) interface{} { return o.Spec.Tenant }},
	{Name: "Network", Type: "string", Description: "The tenant Network whose VRF is peered.", Cell: func(o *tenant.VRFPeering) interface{} { return o.Spec.Network }},
	{Name: "VRF", Type: "string", Description: "VRF name on the nodes.", Cell: func(o *tenant.VRFPeering) interface{} { return kindstore.OrNone(o.Status.VRF) }},
	{Name: "ASN", Type: "integer", Priority: 1, Description: "Local autonomous system number.", Cell: func(o *tenant.VRFPeering) interface{} { return o.Spec.ASN }},
	{Name: "Neighbors", Type: "string", Description: "BGP neighbors.", Cell: func(o *tenant.VRFPeering) interface{} {
		addrs := make([]string, 0, len(o.Spec.Neighbors))
		for _, n := range o.Spec.Neighbors {
			addrs = append(addrs, n.Address)
		}
		return kindstore.Join(addrs)
	}},
	{Name: "State", Type: "string", Description: "BGP sessions established, or why the peering is not in place.", Cell: func(o *tenant.VRFPeering) interface{} { return State(o) }},
}
