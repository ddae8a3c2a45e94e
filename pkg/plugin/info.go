package plugin

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

// Info is everything a tenant is furnished with: `kubectl tenant info`.
type Info struct {
	Tenant      string `json:"tenant"`
	DisplayName string `json:"displayName,omitempty"`
	Phase       string `json:"phase"`
	// Problems are the Tenant's conditions that are not True.
	Problems        []Problem `json:"problems,omitempty"`
	NamespacePrefix string    `json:"namespacePrefix,omitempty"`
	// PrivateBlock is the tenant's private IPv4 block.
	PrivateBlock string `json:"privateBlock,omitempty"`
	// PublicIPs are the tenant's public addresses and who uses each.
	PublicIPs        []PublicIP        `json:"publicIPs"`
	Quota            []QuotaLine       `json:"quota"`
	Networks         []NetworkInfo     `json:"networks"`
	Namespaces       []NamespaceInfo   `json:"namespaces"`
	VRFPeerings      []PeeringInfo     `json:"vrfPeerings"`
	ProviderServices []ProviderService `json:"providerServices"`
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

func newInfoCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "info",
		Short: "What your tenancy holds: block, public IPs, quota, networks, namespaces, services",
		Example: `  kubectl tenant info
  kubectl tenant info -o yaml
  kubectl tenant info --tenant acme   # a provider, looking at acme`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := o.scope(cmd.Context())
			if err != nil {
				return err
			}
			info, err := gatherInfo(cmd.Context(), sc)
			if err != nil {
				return err
			}
			return o.printInfo(info)
		},
	}
}

func (o *Options) printInfo(info *Info) error {
	switch o.Output {
	case "json", "yaml":
		return printStructured(o.Out, o.Output, info)
	case "", "wide":
		return writeInfo(o.Out, info)
	}
	return fmt.Errorf("info has no %q output: use json or yaml", o.Output)
}

// gatherInfo reads everything Info shows, as the tenant sees it.
func gatherInfo(ctx context.Context, sc *tenantScope) (*Info, error) {
	// The tenant as its members see it, fresh.
	t, err := sc.api.Tenants().Get(ctx, sc.tnt.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	c := sc.api
	objs, err := listAddressHolders(ctx, sc)
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

	info := &Info{
		Tenant:          t.Name,
		DisplayName:     t.Spec.DisplayName,
		Phase:           string(t.Status.Phase),
		NamespacePrefix: t.Status.NamespacePrefix,
	}
	for _, c := range t.Status.Conditions {
		if c.Status != metav1.ConditionTrue {
			info.Problems = append(info.Problems, Problem{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message})
		}
	}
	if t.Status.Network != nil {
		info.PrivateBlock = t.Status.Network.CIDR
	}

	users := objs.users()
	info.PublicIPs = []PublicIP{}
	for _, a := range sortedAddresses(t.Status.PublicIPs) {
		p := users[a]
		p.Address = a
		info.PublicIPs = append(info.PublicIPs, p)
	}

	info.Quota = quotaLines(t)

	info.Networks = []NetworkInfo{}
	for _, n := range objs.networks {
		ni := NetworkInfo{Name: n.Name, Topology: string(n.Spec.Topology), Subnets: subnetsOf(&n), Ready: readyColumn(n.Status.Conditions)}
		if nat := natColumn(&n); nat != "-" {
			ni.NATGateway = nat
		}
		info.Networks = append(info.Networks, ni)
	}
	info.Namespaces = []NamespaceInfo{}
	for _, ns := range nss.Items {
		info.Namespaces = append(info.Namespaces, NamespaceInfo{Name: ns.Name, Network: ns.Spec.Network, HostNamespace: ns.Status.HostNamespace, Phase: string(ns.Status.Phase)})
	}
	info.VRFPeerings = []PeeringInfo{}
	for _, p := range peerings.Items {
		pi := PeeringInfo{Name: p.Name, Network: p.Spec.Network, Ready: readyColumn(p.Status.Conditions)}
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
	return info, nil
}

// quotaLines are the tenant's quotas, counts first, then compute, each with
// its use.
func quotaLines(t *tenantv1alpha1.Tenant) []QuotaLine {
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
	}
	keys := sets.New[corev1.ResourceName]()
	for k := range q.Compute {
		keys.Insert(k)
	}
	for k := range u.Compute {
		keys.Insert(k)
	}
	for _, k := range sets.List(keys) {
		l := QuotaLine{Resource: string(k), Used: "0"}
		if used, ok := u.Compute[k]; ok {
			l.Used = used.String()
		}
		if limit, ok := q.Compute[k]; ok {
			l.Limit = limit.String()
		}
		lines = append(lines, l)
	}
	return lines
}

// sortedAddresses sorts IP addresses numerically.
func sortedAddresses(in []string) []string {
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

// writeInfo is the human form of Info, within 80 columns for the usual
// names.
func writeInfo(w io.Writer, info *Info) error {
	title := info.Tenant
	if info.DisplayName != "" {
		title += " (" + info.DisplayName + ")"
	}
	fmt.Fprintf(w, "Tenant:         %s\n", title)
	fmt.Fprintf(w, "Phase:          %s\n", orNone(info.Phase))
	for _, p := range info.Problems {
		fmt.Fprintf(w, "  %s=%s %s: %s\n", p.Type, p.Status, p.Reason, p.Message)
	}
	fmt.Fprintf(w, "Private block:  %s\n", orNone(info.PrivateBlock))
	fmt.Fprintf(w, "Host prefix:    %s\n", orNone(info.NamespacePrefix))

	free := 0
	for _, p := range info.PublicIPs {
		if p.UsedBy == "" {
			free++
		}
	}
	fmt.Fprintf(w, "\nPublic IPs (%d, %d free):\n", len(info.PublicIPs), free)
	t := newTable(w)
	for _, p := range info.PublicIPs {
		switch p.UsedBy {
		case "":
			t.row("  "+p.Address, "free")
		case "NATGateway":
			t.row("  "+p.Address, "NAT gateway of network "+p.Name)
		default:
			t.row("  "+p.Address, p.UsedBy+" "+p.Namespace+"/"+p.Name)
		}
	}
	if err := t.flush(); err != nil {
		return err
	}

	fmt.Fprintf(w, "\nQuota:\n")
	t = newTable(w, "  RESOURCE", "USED", "LIMIT")
	for _, q := range info.Quota {
		limit := q.Limit
		if limit == "" {
			limit = "-"
		}
		t.row("  "+q.Resource, q.Used, limit)
	}
	if err := t.flush(); err != nil {
		return err
	}

	fmt.Fprintf(w, "\nNetworks:\n")
	if len(info.Networks) == 0 {
		fmt.Fprintf(w, "  none\n")
	} else {
		t = newTable(w, "  NAME", "TOPOLOGY", "SUBNETS", "NAT", "READY")
		for _, n := range info.Networks {
			nat := n.NATGateway
			if nat == "" {
				nat = "-"
			}
			t.row("  "+n.Name, n.Topology, strings.Join(n.Subnets, ","), nat, n.Ready)
		}
		if err := t.flush(); err != nil {
			return err
		}
	}

	fmt.Fprintf(w, "\nNamespaces (kubectl tenant ns use NAME):\n")
	if len(info.Namespaces) == 0 {
		fmt.Fprintf(w, "  none\n")
	} else {
		t = newTable(w, "  NAME", "NETWORK", "HOST NAMESPACE", "PHASE")
		for _, n := range info.Namespaces {
			t.row("  "+n.Name, n.Network, n.HostNamespace, n.Phase)
		}
		if err := t.flush(); err != nil {
			return err
		}
	}

	if len(info.VRFPeerings) > 0 {
		fmt.Fprintf(w, "\nVRF peerings:\n")
		t = newTable(w, "  NAME", "NETWORK", "NEIGHBORS", "READY")
		for _, p := range info.VRFPeerings {
			t.row("  "+p.Name, p.Network, strings.Join(p.Neighbors, ","), p.Ready)
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	if len(info.ProviderServices) > 0 {
		fmt.Fprintf(w, "\nProvider services (reach them by alias in every namespace):\n")
		t = newTable(w, "  ALIAS", "SERVICE", "CONNECTED")
		for _, s := range info.ProviderServices {
			t.row("  "+s.Alias, s.Name, fmt.Sprint(s.Connected))
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// addressHolders are the tenant objects that can hold public IPs.
type addressHolders struct {
	floatingIPs   []tenantv1alpha1.FloatingIP
	loadBalancers []tenantv1alpha1.LoadBalancer
	networks      []tenantv1alpha1.Network
}

// listAddressHolders lists the tenant's FloatingIPs, LoadBalancers and
// Networks (in all its namespaces).
func listAddressHolders(ctx context.Context, sc *tenantScope) (*addressHolders, error) {
	fips, err := sc.api.FloatingIPs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing floating IPs: %w", err)
	}
	lbs, err := sc.api.LoadBalancers(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing load balancers: %w", err)
	}
	nets, err := sc.api.Networks().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing networks: %w", err)
	}
	return &addressHolders{floatingIPs: fips.Items, loadBalancers: lbs.Items, networks: nets.Items}, nil
}

// users maps each public IP in use to what uses it (Address unset).
func (h *addressHolders) users() map[string]PublicIP {
	users := map[string]PublicIP{}
	for _, f := range h.floatingIPs {
		if f.Status.Address != "" {
			users[f.Status.Address] = PublicIP{UsedBy: "FloatingIP", Namespace: f.Namespace, Name: f.Name}
		}
	}
	for _, lb := range h.loadBalancers {
		if lb.Status.Address != "" {
			users[lb.Status.Address] = PublicIP{UsedBy: "LoadBalancer", Namespace: lb.Namespace, Name: lb.Name}
		}
	}
	for _, n := range h.networks {
		if n.Status.NATGatewayIP != "" {
			users[n.Status.NATGatewayIP] = PublicIP{UsedBy: "NATGateway", Name: n.Name}
		}
	}
	return users
}
