package plugin

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"tenant.io/tenant-apiserver/pkg/apis/admin"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/tenantview"
)

// The provider's views of every tenant's objects: admin.tenant.io, read
// with the caller's own credentials (host RBAC: tenant.io:provider-admin or
// tenant.io:provider-viewer).

// viewFilter is what the view commands select: one tenant (--tenant), or
// what is not Ready.
type viewFilter struct {
	tenant   string
	notReady bool
}

// options selects the filter's tenant on the server, by its label.
func (f *viewFilter) options() metav1.ListOptions {
	if f.tenant == "" {
		return metav1.ListOptions{}
	}
	return metav1.ListOptions{LabelSelector: labels.Set{hostnames.TenantLabel: f.tenant}.String()}
}

// keep says whether an object of these conditions is listed.
func (f *viewFilter) keep(conds []metav1.Condition) bool {
	return !f.notReady || tenantview.Ready(conds) != string(metav1.ConditionTrue)
}

// notReadyReason is the reason and message of a Ready condition that is not
// True, "" otherwise.
func notReadyReason(conds []metav1.Condition) string {
	c := tenantview.ConditionOf(conds, "Ready")
	switch {
	case c == nil:
		return "no Ready condition yet"
	case c.Status == metav1.ConditionTrue:
		return ""
	case c.Message != "":
		return c.Reason + ": " + c.Message
	}
	return c.Reason
}

func tenantOf(m metav1.Object) string { return m.GetLabels()[hostnames.TenantLabel] }

// newViewCommand is a list command over one admin view.
func newViewCommand(o *Options, use, alias, short string, list func(ctx context.Context, s *session, f *viewFilter) (*listing, error)) *cobra.Command {
	var f viewFilter
	cmd := newListCommand(o, use, short, false, func(ctx context.Context, _ bool) (*listing, error) {
		s, err := o.getSession(ctx)
		if err != nil {
			return nil, err
		}
		f.tenant = o.Tenant
		l, err := list(ctx, s, &f)
		if err != nil {
			return nil, err
		}
		l.gv = admin.SchemeGroupVersion
		return l, nil
	})
	cmd.Aliases = []string{alias}
	cmd.Long = short + `.

Reads admin.tenant.io, the provider's read-only views of every tenant:
objects are named "<tenant>.<name>", namespaced ones live in namespace
"<tenant>.<namespace>", so the same name in two tenants never collides.
--tenant T lists tenant T's only. Needs the ClusterRole
tenant.io:provider-admin or tenant.io:provider-viewer; a member of a
tenant is refused.`
	cmd.Example = "  kubectl tenant admin " + use + " --not-ready\n  kubectl tenant admin " + use + " --tenant acme -o wide"
	cmd.Flags().BoolVar(&f.notReady, "not-ready", false, "Only those whose Ready condition is not True")
	return cmd
}

func newViewsCommands(o *Options) []*cobra.Command {
	return []*cobra.Command{
		newViewCommand(o, "namespaces", "ns", "Every tenant's Namespaces", func(ctx context.Context, s *session, f *viewFilter) (*listing, error) {
			list, err := s.views.Namespaces().List(ctx, f.options())
			if err != nil {
				return nil, err
			}
			l := &listing{kind: "Namespace", resource: "namespace." + admin.GroupName,
				headers: []string{"NAME", "TENANT", "HOST NAMESPACE", "NETWORK", "PHASE", "READY", "AGE"}, wide: []string{"REASON"}}
			for i := range list.Items {
				n := &list.Items[i]
				if f.keep(n.Status.Conditions) {
					l.add(n, n.Name, []string{n.Name, tenantOf(n), orNone(n.Status.HostNamespace), orNone(n.Spec.Network), string(n.Status.Phase),
						tenantview.Ready(n.Status.Conditions), age(o.Now(), n.CreationTimestamp)}, notReadyReason(n.Status.Conditions))
				}
			}
			return l, nil
		}),
		newViewCommand(o, "networks", "net", "Every tenant's Networks", func(ctx context.Context, s *session, f *viewFilter) (*listing, error) {
			list, err := s.views.Networks().List(ctx, f.options())
			if err != nil {
				return nil, err
			}
			l := &listing{kind: "Network", resource: "network." + admin.GroupName,
				headers: []string{"NAME", "TENANT", "TOPOLOGY", "SUBNETS", "NAT", "READY", "AGE"}, wide: []string{"HOST NETWORK", "REASON"}}
			for i := range list.Items {
				n := &list.Items[i]
				if f.keep(n.Status.Conditions) {
					l.add(n, n.Name, []string{n.Name, tenantOf(n), string(n.Spec.Topology), strings.Join(tenantview.Subnets(n), ","), tenantview.NAT(n),
						tenantview.Ready(n.Status.Conditions), age(o.Now(), n.CreationTimestamp)}, orNone(n.Status.HostNetwork), notReadyReason(n.Status.Conditions))
				}
			}
			return l, nil
		}),
		newViewCommand(o, "fips", "floatingips", "Every tenant's FloatingIPs", func(ctx context.Context, s *session, f *viewFilter) (*listing, error) {
			list, err := s.views.FloatingIPs("").List(ctx, f.options())
			if err != nil {
				return nil, err
			}
			l := &listing{kind: "FloatingIP", resource: "floatingip." + admin.GroupName, all: true,
				headers: []string{"NAME", "TENANT", "ADDRESS", "TARGET", "PHASE", "READY", "AGE"}, wide: []string{"PORTS", "REASON", "DNS NAME"}}
			for i := range list.Items {
				fip := &list.Items[i]
				if f.keep(fip.Status.Conditions) {
					l.add(fip, fip.Name, []string{fip.Name, tenantOf(fip), orNone(fip.Status.Address), tenantview.Target(fip.Spec.Target), string(fip.Status.Phase),
						tenantview.Ready(fip.Status.Conditions), age(o.Now(), fip.CreationTimestamp)}, tenantview.FIPPorts(fip.Spec.Ports), notReadyReason(fip.Status.Conditions), fip.Status.DNSName)
				}
			}
			return l, nil
		}),
		newViewCommand(o, "lbs", "loadbalancers", "Every tenant's LoadBalancers", func(ctx context.Context, s *session, f *viewFilter) (*listing, error) {
			list, err := s.views.LoadBalancers("").List(ctx, f.options())
			if err != nil {
				return nil, err
			}
			l := &listing{kind: "LoadBalancer", resource: "loadbalancer." + admin.GroupName, all: true,
				headers: []string{"NAME", "TENANT", "ADDRESS", "PORTS", "READY", "AGE"}, wide: []string{"SELECTOR", "REASON", "DNS NAME"}}
			for i := range list.Items {
				lb := &list.Items[i]
				if f.keep(lb.Status.Conditions) {
					l.add(lb, lb.Name, []string{lb.Name, tenantOf(lb), orNone(lb.Status.Address), tenantview.LBPorts(lb.Spec.Ports),
						tenantview.Ready(lb.Status.Conditions), age(o.Now(), lb.CreationTimestamp)}, tenantview.Selector(lb.Spec.Selector), notReadyReason(lb.Status.Conditions), lb.Status.DNSName)
				}
			}
			return l, nil
		}),
		newViewCommand(o, "hosts", "hostclaims", "Every tenant's HostClaims", func(ctx context.Context, s *session, f *viewFilter) (*listing, error) {
			list, err := s.views.HostClaims("").List(ctx, f.options())
			if err != nil {
				return nil, err
			}
			l := &listing{kind: "HostClaim", resource: "hostclaim." + admin.GroupName, all: true,
				headers: []string{"NAME", "TENANT", "PHASE", "CLASS", "ADDRESS", "POWER", "READY", "AGE"}, wide: []string{"ONLINE", "IMAGE", "BOOT MAC", "HARDWARE", "REASON"}}
			for i := range list.Items {
				h := &list.Items[i]
				if f.keep(h.Status.Conditions) {
					l.add(h, h.Name, []string{h.Name, tenantOf(h), string(h.Status.Phase), h.Spec.HostClass, orNone(tenantview.HostAddress(h)), orNone(string(h.Status.Power)),
						tenantview.Ready(h.Status.Conditions), age(o.Now(), h.CreationTimestamp)}, append(hostClaimWideColumns(h), notReadyReason(h.Status.Conditions))...)
				}
			}
			return l, nil
		}),
		newWhoisCommand(o),
	}
}

// holding is one thing that holds an address.
type holding struct {
	tenant, kind, name, how string
}

func newWhoisCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "whois ADDRESS",
		Short: "Which tenant holds an address, and what of it holds it",
		Long: `Finds what holds an IPv4 address: the Tenant whose private block or
public IPs contain it, and the Networks (subnets, NAT gateway), FloatingIPs
and LoadBalancers of every tenant that use it. Reads the Tenants and the
admin views. Exit status 1 when nothing holds it.`,
		Example: `  kubectl tenant admin whois 203.0.113.7`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			addr, err := netip.ParseAddr(args[0])
			if err != nil || !addr.Is4() {
				return fmt.Errorf("%q is not an IPv4 address", args[0])
			}
			s, err := o.requireProvider(ctx)
			if err != nil {
				return err
			}
			found, err := whois(ctx, s, addr)
			if err != nil {
				return err
			}
			if len(found) == 0 {
				return fmt.Errorf("no tenant holds %s", addr)
			}
			t := newTable(o.Out, "TENANT", "KIND", "NAME", "HOLDS IT AS")
			for _, h := range found {
				t.row(h.tenant, h.kind, h.name, h.how)
			}
			return t.flush()
		},
	}
}

// whois lists what holds addr, Tenants first, then by kind and name.
func whois(ctx context.Context, s *session, addr netip.Addr) ([]holding, error) {
	in := func(cidr string) bool {
		p, err := netip.ParsePrefix(cidr)
		return err == nil && p.Contains(addr)
	}
	is := func(a string) bool { return a != "" && a == addr.String() }
	var out []holding
	tenants, err := s.api.Tenants().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing tenants: %w", err)
	}
	for _, t := range tenants.Items {
		if t.Status.Network != nil && in(t.Status.Network.CIDR) {
			out = append(out, holding{t.Name, "Tenant", t.Name, "private block " + t.Status.Network.CIDR})
		}
		for _, ip := range t.Status.PublicIPs {
			if is(ip) {
				out = append(out, holding{t.Name, "Tenant", t.Name, "public IP"})
			}
		}
	}
	nets, err := s.views.Networks().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing every tenant's networks: %w", err)
	}
	for i := range nets.Items {
		n := &nets.Items[i]
		for _, sub := range tenantview.Subnets(n) {
			if in(sub) {
				out = append(out, holding{tenantOf(n), "Network", n.Name, "subnet " + sub})
			}
		}
		if is(n.Status.NATGatewayIP) {
			out = append(out, holding{tenantOf(n), "Network", n.Name, "NAT gateway address"})
		}
	}
	fips, err := s.views.FloatingIPs("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing every tenant's floating IPs: %w", err)
	}
	for i := range fips.Items {
		f := &fips.Items[i]
		if is(f.Status.Address) {
			out = append(out, holding{tenantOf(f), "FloatingIP", f.Namespace + "/" + f.Name, "address (" + tenantview.Target(f.Spec.Target) + ")"})
		}
	}
	lbs, err := s.views.LoadBalancers("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing every tenant's load balancers: %w", err)
	}
	for i := range lbs.Items {
		lb := &lbs.Items[i]
		if is(lb.Status.Address) {
			out = append(out, holding{tenantOf(lb), "LoadBalancer", lb.Namespace + "/" + lb.Name, "address"})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].kind == "Tenant" && out[j].kind != "Tenant" })
	return out, nil
}
