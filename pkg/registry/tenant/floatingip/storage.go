package floatingip

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/claims"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// NewStorage returns the storage of floatingips and floatingips/status. A FloatingIP
// gets its public IP from its tenant's when deps have a tenant space
// (PublicIP).
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, deps kindstore.Deps) (*kindstore.Storage, error) {
	st, err := kindstore.NewStorage(scheme, optsGetter, kindstore.Resource[*tenant.FloatingIP, tenant.FloatingIPSpec, tenant.FloatingIPStatus]{
		Kind:          Kind,
		Plural:        Resource,
		Singular:      "floatingip",
		ShortNames:    []string{"fip"},
		New:           func() runtime.Object { return &tenant.FloatingIP{} },
		NewList:       func() runtime.Object { return &tenant.FloatingIPList{} },
		Fields:        SelectableFields,
		QuotaResource: "floatingIPs",
		Table:         kindstore.Table[*tenant.FloatingIP]{Columns: columns},
	}, deps)
	if err != nil {
		return nil, err
	}
	claims.InstallPublicIPs(st, PublicIP, claims.NewTenantSpace(deps))
	installTargets(st)
	return st, nil
}

var columns = []kindstore.Column[*tenant.FloatingIP]{
	{Name: "Address", Type: "string", Description: "The public IP.", Cell: func(o *tenant.FloatingIP) interface{} {
		if o.Status.Address != "" {
			return o.Status.Address
		}
		return kindstore.OrNone(o.Spec.Address)
	}},
	{Name: "DNS Name", Type: "string", Priority: 1, Description: "The address's name in the provider's public DNS zone.", Cell: func(o *tenant.FloatingIP) interface{} {
		return kindstore.OrNone(o.Status.DNSName)
	}},
	{Name: "Target", Type: "string", Description: "Workload the address is bound to.", Cell: func(o *tenant.FloatingIP) interface{} {
		if o.Spec.Target == nil {
			return "<none>"
		}
		return string(o.Spec.Target.Kind) + "/" + o.Spec.Target.Name
	}},
	{Name: "Ports", Type: "string", Priority: 1, Description: "Inbound ports.", Cell: func(o *tenant.FloatingIP) interface{} {
		ports := make([]string, 0, len(o.Spec.Ports))
		for _, p := range o.Spec.Ports {
			ports = append(ports, fmt.Sprintf("%d/%s", p.Port, p.Protocol))
		}
		return kindstore.Join(ports)
	}},
	{Name: "Phase", Type: "string", Description: "Pending, Allocated, Associated or Failed.", Cell: func(o *tenant.FloatingIP) interface{} { return string(o.Status.Phase) }},
}
