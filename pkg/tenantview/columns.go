package tenantview

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

// ConditionOf returns the condition of type typ, or nil.
func ConditionOf(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// Ready is a Ready condition as a column: True, or False/Unknown with its
// reason.
func Ready(conds []metav1.Condition) string {
	c := ConditionOf(conds, "Ready")
	switch {
	case c == nil:
		return "Unknown"
	case c.Status == metav1.ConditionTrue:
		return "True"
	case c.Reason != "":
		return string(c.Status) + " (" + c.Reason + ")"
	}
	return string(c.Status)
}

// Subnets are a Network's subnets: as allocated, else as asked.
func Subnets(n *tenantv1alpha1.Network) []string {
	if len(n.Status.Subnets) > 0 {
		return n.Status.Subnets
	}
	return n.Spec.Subnets
}

// NAT is a Network's NAT gateway address, "pending" until it has one, "-"
// without a NAT gateway.
func NAT(n *tenantv1alpha1.Network) string {
	if n.Spec.NATGateway == nil || !n.Spec.NATGateway.Enabled {
		return "-"
	}
	if n.Status.NATGatewayIP == "" {
		return "pending"
	}
	return n.Status.NATGatewayIP
}

// HostAddress is a claimed server's address as a column: its first
// InternalIP, else its first address of any type, "" without one.
func HostAddress(c *tenantv1alpha1.HostClaim) string {
	for _, a := range c.Status.Addresses {
		if a.Type == "InternalIP" {
			return a.Address
		}
	}
	if len(c.Status.Addresses) > 0 {
		return c.Status.Addresses[0].Address
	}
	return ""
}

// HostClassLabels are the labels a HostClass lets claims select on, with
// the values its servers have: "rack=r1|r2,gpu=a100"; a key its servers
// have no value of yet stands alone.
func HostClassLabels(c *tenantv1alpha1.HostClass) string {
	values := map[string][]string{}
	for _, l := range c.Status.Labels {
		values[l.Key] = l.Values
	}
	keys := append([]string(nil), c.Spec.TenantLabels...)
	for _, l := range c.Status.Labels {
		if !slices.Contains(keys, l.Key) {
			keys = append(keys, l.Key)
		}
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if v := values[k]; len(v) > 0 {
			out = append(out, k+"="+strings.Join(v, "|"))
		} else {
			out = append(out, k)
		}
	}
	return strings.Join(out, ",")
}

// HostHardware summarizes a claimed server's hardware in one line:
// "x86_64, 32 CPUs, 128 GiB RAM, 960 GB disk, 2 NICs"; "" without a summary.
func HostHardware(h *tenantv1alpha1.HostHardware) string {
	if h == nil {
		return ""
	}
	var out []string
	if h.CPUArch != "" {
		out = append(out, h.CPUArch)
	}
	if h.CPUCount > 0 {
		out = append(out, fmt.Sprintf("%d CPUs", h.CPUCount))
	}
	switch {
	case h.RAMMebibytes >= 1024:
		out = append(out, fmt.Sprintf("%d GiB RAM", h.RAMMebibytes/1024))
	case h.RAMMebibytes > 0:
		out = append(out, fmt.Sprintf("%d MiB RAM", h.RAMMebibytes))
	}
	if h.StorageGigabytes > 0 {
		out = append(out, fmt.Sprintf("%d GB disk", h.StorageGigabytes))
	}
	if h.NICCount > 0 {
		out = append(out, fmt.Sprintf("%d NICs", h.NICCount))
	}
	return strings.Join(out, ", ")
}
