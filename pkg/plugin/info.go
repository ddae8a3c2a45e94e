package plugin

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"tenant.io/tenant-apiserver/pkg/tenantview"

	"github.com/spf13/cobra"
)

func newInfoCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "info",
		Short: "What your tenancy holds: block, public IPs, quota, networks, namespaces, hosts, services",
		Example: `  kubectl tenant info
  kubectl tenant info -o yaml
  kubectl tenant info --tenant acme   # a provider, looking at acme`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := o.scope(cmd.Context())
			if err != nil {
				return err
			}
			info, err := tenantview.Gather(cmd.Context(), sc.api, sc.tnt.Name)
			if err != nil {
				return err
			}
			return o.printInfo(info)
		},
	}
}

func (o *Options) printInfo(info *tenantview.Info) error {
	switch o.Output {
	case "json", "yaml":
		return printStructured(o.Out, o.Output, info)
	case "", "wide":
		return writeInfo(o.Out, info)
	}
	return fmt.Errorf("info has no %q output: use json or yaml", o.Output)
}

// writeInfo is the human form of Info, within 80 columns for the usual
// names.
func writeInfo(w io.Writer, info *tenantview.Info) error {
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
	fmt.Fprintf(w, "Route domain:   %s\n", orNone(info.RouteDomain))

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
	if err := writeDNSNames(w, info.PublicIPs); err != nil {
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

	if len(info.Hosts) > 0 {
		fmt.Fprintf(w, "\nHosts (kubectl tenant host list -A):\n")
		t = newTable(w, "  NAME", "NAMESPACE", "CLASS", "PHASE", "ADDRESS", "POWER")
		for _, h := range info.Hosts {
			t.row("  "+h.Name, h.Namespace, h.HostClass, h.Phase, h.Address, h.Power)
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

// writeDNSNames lists the public IPs that have a name in the provider's
// public DNS zone, by name; nothing when none has.
func writeDNSNames(w io.Writer, ips []tenantview.PublicIP) error {
	var named []tenantview.PublicIP
	for _, p := range ips {
		if p.DNSName != "" {
			named = append(named, p)
		}
	}
	if len(named) == 0 {
		return nil
	}
	sort.Slice(named, func(i, j int) bool { return named[i].DNSName < named[j].DNSName })
	fmt.Fprintf(w, "\nPublic DNS names:\n")
	t := newTable(w)
	for _, p := range named {
		t.row("  "+p.DNSName, p.Address, p.UsedBy)
	}
	return t.flush()
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
