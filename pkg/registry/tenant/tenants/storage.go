package tenants

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// Resource is the tenants resource.
var Resource = kindstore.Resource[*tenant.Tenant, tenant.TenantSpec, tenant.TenantStatus]{
	Kind:       Kind,
	Plural:     "tenants",
	Singular:   "tenant",
	ShortNames: []string{"tnt"},
	New:        func() runtime.Object { return &tenant.Tenant{} },
	NewList:    func() runtime.Object { return &tenant.TenantList{} },
	Fields:     SelectableFields,
	// Every quota charge of the tenant writes its Tenant.
	Rewritten: true,
	// Members of a tenant read their own Tenant: their block, public IPs, quota and usage.
	NamedByTenant: true,
	VisibleToTenant: func(t string, _ types.UID, obj runtime.Object) bool {
		o, ok := obj.(*tenant.Tenant)
		return ok && o.Name == t
	},
	Table: kindstore.Table[*tenant.Tenant]{Columns: columns},
}

// NewStorage returns the storage of tenants, tenants/status and
// tenants/offboarding. A Tenant is created and updated with its addresses
// when deps have an IPAM allocator, made Hard only when deps name a tenant
// DNS server, and deleted only when nothing is attached to it (Offboarding).
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, deps kindstore.Deps) (*kindstore.Storage, error) {
	st, err := kindstore.NewStorage(scheme, optsGetter, withRouteDomain(Resource, deps.RouteDomain), deps)
	if err != nil {
		return nil, err
	}
	st.Install(kindstore.OnWrite(defaultObjectQuota(deps.DefaultObjectQuota), nil))
	// Before any address is claimed: a refused Tenant claims nothing.
	st.Install(kindstore.OnWrite(hardIsolation(deps.TenantDNSAddress), hardIsolation(deps.TenantDNSAddress)))
	installAddresses(st, deps)
	offboarding := &Offboarding{Storages: deps.Storages, HostWorkloads: deps.HostWorkloads}
	st.Install(kindstore.Hooks{BeforeDelete: offboarding.BeforeDelete})
	st.Subresources = map[string]rest.Storage{"offboarding": NewOffboardingREST(st.Main, offboarding)}
	return st, nil
}

// withRouteDomain returns r with status.routeDomain set by the server on
// every write, create and status update alike: <tenant>.<domain>, or
// empty without a provider route domain. Nobody else sets it.
func withRouteDomain(r kindstore.Resource[*tenant.Tenant, tenant.TenantSpec, tenant.TenantStatus], domain string) kindstore.Resource[*tenant.Tenant, tenant.TenantSpec, tenant.TenantStatus] {
	serverOwned := r.Kind.ServerOwnedStatus
	r.Kind.ServerOwnedStatus = func(dst, src *tenant.Tenant) {
		serverOwned(dst, src)
		dst.Status.RouteDomain = hostnames.TenantRouteDomain(dst.Name, domain)
	}
	return r
}

var columns = []kindstore.Column[*tenant.Tenant]{
	{Name: "Display Name", Type: "string", Priority: 1, Description: "Human readable name.", Cell: func(o *tenant.Tenant) interface{} { return o.Spec.DisplayName }},
	{Name: "Phase", Type: "string", Description: "Lifecycle phase.", Cell: func(o *tenant.Tenant) interface{} { return string(o.Status.Phase) }},
	{Name: "Route Domain", Type: "string", Priority: 1, Description: "DNS domain of the tenant's HTTP routes.", Cell: func(o *tenant.Tenant) interface{} { return kindstore.OrNone(o.Status.RouteDomain) }},
	{Name: "CIDR", Type: "string", Description: "Private IPv4 block.", Cell: func(o *tenant.Tenant) interface{} {
		if o.Status.Network != nil {
			return o.Status.Network.CIDR
		}
		return kindstore.OrNone(o.Spec.Network.CIDR)
	}},
	{Name: "Public IPs", Type: "string", Description: "Public IPv4 addresses in use (held by FloatingIPs, LoadBalancers and NAT gateways) of those allocated.", Cell: func(o *tenant.Tenant) interface{} {
		return fmt.Sprintf("%d/%d", o.Status.Usage.PublicIPs, len(o.Status.PublicIPs))
	}},
	{Name: "Pod Security", Type: "string", Priority: 1, Description: "Pod Security Standard enforced in the tenant's host namespaces.", Cell: func(o *tenant.Tenant) interface{} { return kindstore.OrNone(string(o.Spec.PodSecurity.Level)) }},
	{Name: "Isolation", Type: "string", Priority: 1, Description: "Hard: the tenant's name lookups are isolated too (tenant DNS); Soft: its networks only.", Cell: func(o *tenant.Tenant) interface{} { return kindstore.OrNone(string(o.Spec.Isolation)) }},
	{Name: "Namespace Prefix", Type: "string", Priority: 1, Description: "Prefix of the tenant's host namespaces.", Cell: func(o *tenant.Tenant) interface{} { return kindstore.OrNone(o.Status.NamespacePrefix) }},
	{Name: "CPU", Type: "string", Description: "CPU requests used of the compute quota.", Cell: computeCell(corev1.ResourceRequestsCPU)},
	{Name: "Memory", Type: "string", Description: "Memory requests used of the compute quota.", Cell: computeCell(corev1.ResourceRequestsMemory)},
	{Name: "Pods", Type: "string", Priority: 1, Description: "Pods of the compute quota.", Cell: computeCell(corev1.ResourcePods)},
	{Name: "VMs", Type: "string", Priority: 1, Description: "KubeVirt VirtualMachines of the compute quota.", Cell: computeCell(tenant.ResourceVirtualMachines)},
	{Name: "Services", Type: "string", Priority: 1, Description: "Services in the tenant's host namespaces, of the object quota.", Cell: computeCell(corev1.ResourceServices)},
	{Name: "Secrets", Type: "string", Priority: 1, Description: "Secrets in the tenant's host namespaces, of the object quota.", Cell: computeCell(corev1.ResourceSecrets)},
	{Name: "ConfigMaps", Type: "string", Priority: 1, Description: "ConfigMaps in the tenant's host namespaces, of the object quota.", Cell: computeCell(corev1.ResourceConfigMaps)},
	{Name: "PVCs", Type: "string", Priority: 1, Description: "PersistentVolumeClaims in the tenant's host namespaces, of the compute or object quota.", Cell: computeCell(corev1.ResourcePersistentVolumeClaims)},
}

// computeCell shows "<used>/<limit>" of resource r of a tenant's compute
// quota or object counts, or <none> when neither limits it.
func computeCell(r corev1.ResourceName) func(o *tenant.Tenant) interface{} {
	return func(o *tenant.Tenant) interface{} {
		if limit, ok := o.Spec.Quota.Compute[r]; ok {
			used := o.Status.Usage.Compute[r]
			return used.String() + "/" + limit.String()
		}
		if limit, ok := o.Spec.Quota.Objects[r]; ok {
			used := o.Status.Usage.Objects[r]
			return used.String() + "/" + limit.String()
		}
		return kindstore.OrNone("")
	}
}
