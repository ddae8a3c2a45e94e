package tenantview

import (
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
