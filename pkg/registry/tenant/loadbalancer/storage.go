package loadbalancer

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/claims"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// NewStorage returns the storage of loadbalancers and loadbalancers/status. A LoadBalancer
// gets its public IP from its tenant's when deps have a tenant space
// (PublicIP).
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, deps kindstore.Deps) (*kindstore.Storage, error) {
	st, err := kindstore.NewStorage(scheme, optsGetter, kindstore.Resource[*tenant.LoadBalancer, tenant.LoadBalancerSpec, tenant.LoadBalancerStatus]{
		Kind:          Kind,
		Plural:        Resource,
		Singular:      "loadbalancer",
		ShortNames:    []string{"lb"},
		New:           func() runtime.Object { return &tenant.LoadBalancer{} },
		NewList:       func() runtime.Object { return &tenant.LoadBalancerList{} },
		Fields:        SelectableFields,
		QuotaResource: "loadBalancers",
		Table:         kindstore.Table[*tenant.LoadBalancer]{Columns: columns},
	}, deps)
	if err != nil {
		return nil, err
	}
	claims.InstallPublicIPs(st, PublicIP, claims.NewTenantSpace(deps))
	return st, nil
}

var columns = []kindstore.Column[*tenant.LoadBalancer]{
	{Name: "Address", Type: "string", Description: "The public IP assigned on the host.", Cell: func(o *tenant.LoadBalancer) interface{} {
		if o.Status.Address != "" {
			return o.Status.Address
		}
		return "<pending>"
	}},
	{Name: "DNS Name", Type: "string", Priority: 1, Description: "The address's name in the provider's public DNS zone.", Cell: func(o *tenant.LoadBalancer) interface{} {
		return kindstore.OrNone(o.Status.DNSName)
	}},
	{Name: "Ports", Type: "string", Description: "Balanced ports.", Cell: func(o *tenant.LoadBalancer) interface{} {
		ports := make([]string, 0, len(o.Spec.Ports))
		for _, p := range o.Spec.Ports {
			ports = append(ports, fmt.Sprintf("%d:%s/%s", p.Port, p.TargetPort.String(), p.Protocol))
		}
		return kindstore.Join(ports)
	}},
	{Name: "Selector", Type: "string", Priority: 1, Description: "Backends' labels.", Cell: func(o *tenant.LoadBalancer) interface{} { return labels.FormatLabels(o.Spec.Selector) }},
	{Name: "Ready", Type: "string", Description: "Whether the load balancer serves.", Cell: func(o *tenant.LoadBalancer) interface{} {
		return kindstore.ConditionStatus(o.Status.Conditions, "Ready")
	}},
}
