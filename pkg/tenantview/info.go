// Package tenantview is a tenant as its members see it through the API:
// what it holds (Info), who the caller is in it (Memberships) and the
// columns both the kubectl plugin and the web console show. Everything is
// read with the caller's own credentials.
package tenantview

import (
	"context"
	"fmt"
	"net/netip"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	tenantclient "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned/typed/tenant/v1alpha1"
)

// Info is everything a tenant is furnished with: `kubectl tenant info`.
type Info struct {
	Tenant      string `json:"tenant"`
	DisplayName string `json:"displayName,omitempty"`
	Phase       string `json:"phase"`
	// Problems are the Tenant's conditions that are not True.
	Problems        []Problem `json:"problems,omitempty"`
	NamespacePrefix string    `json:"namespacePrefix,omitempty"`
	// RouteDomain is the DNS domain the tenant's HTTP routes may name, with
	// every name below it (Tenant status.routeDomain); empty when the
	// provider offers none.
	RouteDomain string `json:"routeDomain,omitempty"`
	// PrivateBlock is the tenant's private IPv4 block.
	PrivateBlock string `json:"privateBlock,omitempty"`
	// PublicIPs are the tenant's public addresses and who uses each.
	PublicIPs        []PublicIP        `json:"publicIPs"`
	Quota            []QuotaLine       `json:"quota"`
	Networks         []NetworkInfo     `json:"networks"`
	Namespaces       []NamespaceInfo   `json:"namespaces"`
	VRFPeerings      []PeeringInfo     `json:"vrfPeerings"`
	ProviderServices []ProviderService `json:"providerServices"`
	// Hosts are the tenant's HostClaims: the bare-metal servers it claims.
	Hosts []HostInfo `json:"hosts"`
}

// Problem is a condition that is not True.
type Problem struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// PublicIP is one of the tenant's public addresses: free, or used by a
// LoadBalancer, a FloatingIP or a Network's NAT gateway.
type PublicIP struct {
	Address string `json:"address"`
	// UsedBy is LoadBalancer, FloatingIP or NATGateway; empty when free.
	UsedBy    string `json:"usedBy,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// DNSName is the address's name in the provider's public DNS zone,
	// the status.dnsName of the FloatingIP or LoadBalancer using it.
	DNSName string `json:"dnsName,omitempty"`
}

// QuotaLine is one quota: its use against its limit ("" limit: none).
type QuotaLine struct {
	Resource string `json:"resource"`
	Used     string `json:"used"`
	Limit    string `json:"limit,omitempty"`
}

// NetworkInfo is a tenant Network.
type NetworkInfo struct {
	Name       string   `json:"name"`
	Topology   string   `json:"topology"`
	Subnets    []string `json:"subnets"`
	NATGateway string   `json:"natGateway,omitempty"`
	Ready      string   `json:"ready"`
}

// NamespaceInfo is a tenant Namespace and the host namespace its workloads
// run in.
type NamespaceInfo struct {
	Name          string `json:"name"`
	Network       string `json:"network,omitempty"`
	HostNamespace string `json:"hostNamespace,omitempty"`
	Phase         string `json:"phase"`
}

// NamespaceInfos are the Namespaces as Info shows them.
func NamespaceInfos(nss []tenantv1alpha1.Namespace) []NamespaceInfo {
	out := make([]NamespaceInfo, 0, len(nss))
	for _, ns := range nss {
		out = append(out, NamespaceInfo{Name: ns.Name, Network: ns.Spec.Network, HostNamespace: ns.Status.HostNamespace, Phase: string(ns.Status.Phase)})
	}
	return out
}

// PeeringInfo is a VRF peering of one of the tenant's Networks.
type PeeringInfo struct {
	Name      string   `json:"name"`
	Network   string   `json:"network"`
	Neighbors []string `json:"neighbors"`
	Ready     string   `json:"ready"`
}

// ProviderService is a provider service offered to the tenant, by the alias
// name its namespaces resolve.
type ProviderService struct {
	Alias     string `json:"alias"`
	Name      string `json:"name"`
	Connected bool   `json:"connected"`
}

// HostInfo is a HostClaim: the server a tenant claims in one of its
// namespaces, and where it stands.
type HostInfo struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	HostClass string `json:"hostClass"`
	Phase     string `json:"phase"`
	Address   string `json:"address,omitempty"`
	Power     string `json:"power,omitempty"`
}

// Gather reads everything Info shows of tenant, through api: with the
// credentials of one of its members, what that member sees.
func Gather(ctx context.Context, api tenantclient.TenantV1alpha1Interface, tenant string) (*Info, error) {
	t, err := api.Tenants().Get(ctx, tenant, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	c := api
	objs, err := ListAddressHolders(ctx, api)
	if err != nil {
		return nil, err
	}
	nss, err := c.Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing namespaces: %w", err)
	}
	peerings, err := c.VRFPeerings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing VRF peerings: %w", err)
	}
	services, err := c.ProviderServices().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing provider services: %w", err)
	}
	hosts, err := c.HostClaims(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing host claims: %w", err)
	}

	info := &Info{
		Tenant:          t.Name,
		DisplayName:     t.Spec.DisplayName,
		Phase:           string(t.Status.Phase),
		NamespacePrefix: t.Status.NamespacePrefix,
		RouteDomain:     t.Status.RouteDomain,
	}
	for _, c := range t.Status.Conditions {
		if c.Status != metav1.ConditionTrue {
			info.Problems = append(info.Problems, Problem{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message})
		}
	}
	if t.Status.Network != nil {
		info.PrivateBlock = t.Status.Network.CIDR
	}

	users := objs.Users()
	info.PublicIPs = []PublicIP{}
	for _, a := range SortedAddresses(t.Status.PublicIPs) {
		p := users[a]
		p.Address = a
		info.PublicIPs = append(info.PublicIPs, p)
	}

	info.Quota = QuotaLines(t)

	info.Networks = []NetworkInfo{}
	for _, n := range objs.Networks {
		ni := NetworkInfo{Name: n.Name, Topology: string(n.Spec.Topology), Subnets: Subnets(&n), Ready: Ready(n.Status.Conditions)}
		if nat := NAT(&n); nat != "-" {
			ni.NATGateway = nat
		}
		info.Networks = append(info.Networks, ni)
	}
	info.Namespaces = NamespaceInfos(nss.Items)
	info.VRFPeerings = []PeeringInfo{}
	for _, p := range peerings.Items {
		pi := PeeringInfo{Name: p.Name, Network: p.Spec.Network, Ready: Ready(p.Status.Conditions)}
		for _, n := range p.Spec.Neighbors {
			pi.Neighbors = append(pi.Neighbors, fmt.Sprintf("%s AS%d", n.Address, n.ASN))
		}
		info.VRFPeerings = append(info.VRFPeerings, pi)
	}
	info.ProviderServices = []ProviderService{}
	for _, s := range services.Items {
		ps := ProviderService{Name: s.Name, Alias: s.Spec.Alias}
		if ps.Alias == "" {
			ps.Alias = s.Name
		}
		for _, e := range s.Status.Tenants {
			if e.Name == t.Name {
				ps.Connected = e.Connected
			}
		}
		info.ProviderServices = append(info.ProviderServices, ps)
	}
	info.Hosts = []HostInfo{}
	for i := range hosts.Items {
		h := &hosts.Items[i]
		info.Hosts = append(info.Hosts, HostInfo{Name: h.Name, Namespace: h.Namespace, HostClass: h.Spec.HostClass,
			Phase: string(h.Status.Phase), Address: HostAddress(h), Power: string(h.Status.Power)})
	}
	return info, nil
}

// QuotaLines are the tenant's quotas, counts of tenant.io kinds first, then
// compute, then the counts of host objects, each with its use.
func QuotaLines(t *tenantv1alpha1.Tenant) []QuotaLine {
	q, u := t.Spec.Quota, t.Status.Usage
	count := func(name string, used int32, limit *int32) QuotaLine {
		l := QuotaLine{Resource: name, Used: fmt.Sprint(used)}
		if limit != nil {
			l.Limit = fmt.Sprint(*limit)
		}
		return l
	}
	lines := []QuotaLine{
		count("namespaces", u.Namespaces, q.Namespaces),
		count("networks", u.Networks, q.Networks),
		count("floatingips", u.FloatingIPs, q.FloatingIPs),
		count("loadbalancers", u.LoadBalancers, q.LoadBalancers),
		count("hostclaims", u.HostClaims, q.HostClaims),
	}
	lines = append(lines, resourceLines(q.Compute, u.Compute)...)
	return append(lines, resourceLines(q.Objects, u.Objects)...)
}

// resourceLines are the lines of a ResourceQuota-like limit and its use,
// sorted by resource.
func resourceLines(limits, usage corev1.ResourceList) []QuotaLine {
	keys := sets.New[corev1.ResourceName]()
	for k := range limits {
		keys.Insert(k)
	}
	for k := range usage {
		keys.Insert(k)
	}
	var lines []QuotaLine
	for _, k := range sets.List(keys) {
		l := QuotaLine{Resource: string(k), Used: "0"}
		if used, ok := usage[k]; ok {
			l.Used = used.String()
		}
		if limit, ok := limits[k]; ok {
			l.Limit = limit.String()
		}
		lines = append(lines, l)
	}
	return lines
}

// SortedAddresses sorts IP addresses numerically.
func SortedAddresses(in []string) []string {
	out := append([]string(nil), in...)
	sort.SliceStable(out, func(i, j int) bool {
		a, errA := netip.ParseAddr(out[i])
		b, errB := netip.ParseAddr(out[j])
		if errA != nil || errB != nil {
			return out[i] < out[j]
		}
		return a.Less(b)
	})
	return out
}

// AddressHolders are the tenant objects that can hold public IPs.
type AddressHolders struct {
	FloatingIPs   []tenantv1alpha1.FloatingIP
	LoadBalancers []tenantv1alpha1.LoadBalancer
	Networks      []tenantv1alpha1.Network
}

// ListAddressHolders lists the tenant's FloatingIPs, LoadBalancers and
// Networks (in all its namespaces).
func ListAddressHolders(ctx context.Context, api tenantclient.TenantV1alpha1Interface) (*AddressHolders, error) {
	fips, err := api.FloatingIPs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing floating IPs: %w", err)
	}
	lbs, err := api.LoadBalancers(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing load balancers: %w", err)
	}
	nets, err := api.Networks().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing networks: %w", err)
	}
	return &AddressHolders{FloatingIPs: fips.Items, LoadBalancers: lbs.Items, Networks: nets.Items}, nil
}

// Users maps each public IP in use to what uses it and the name it has
// in the public DNS zone (Address unset).
func (h *AddressHolders) Users() map[string]PublicIP {
	users := map[string]PublicIP{}
	for _, f := range h.FloatingIPs {
		if f.Status.Address != "" {
			users[f.Status.Address] = PublicIP{UsedBy: "FloatingIP", Namespace: f.Namespace, Name: f.Name, DNSName: f.Status.DNSName}
		}
	}
	for _, lb := range h.LoadBalancers {
		if lb.Status.Address != "" {
			users[lb.Status.Address] = PublicIP{UsedBy: "LoadBalancer", Namespace: lb.Namespace, Name: lb.Name, DNSName: lb.Status.DNSName}
		}
	}
	for _, n := range h.Networks {
		if n.Status.NATGatewayIP != "" {
			users[n.Status.NATGatewayIP] = PublicIP{UsedBy: "NATGateway", Name: n.Name}
		}
	}
	return users
}
