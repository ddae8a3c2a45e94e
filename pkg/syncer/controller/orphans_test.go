package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestOwnerLabel checks which kind label names the owner of a host object
// when several kinds of tenant objects make host objects of one kind.
func TestOwnerLabel(t *testing.T) {
	o := &Orphans{}
	services, egressIPs := HostObjects{Kind: "Service"}, HostObjects{Kind: "EgressIP"}
	o.Register("network", Owners{}, egressIPs)
	o.Register("namespace", Owners{}, HostObjects{Kind: "Namespace"})
	o.Register("loadbalancer", Owners{Namespaced: true}, services)
	o.Register("floatingip", Owners{Namespaced: true}, services, egressIPs)
	o.Register("", Owners{}, HostObjects{Kind: "IPAddressPool"})
	if got := len(o.Kinds()); got != 4 {
		t.Errorf("%d kinds registered, want 4 (Service and EgressIP once)", got)
	}
	labelled := func(labels ...string) metav1.Object {
		m := &metav1.ObjectMeta{Labels: map[string]string{}}
		for _, l := range labels {
			m.Labels[l] = "x"
		}
		return m
	}
	for _, c := range []struct {
		kind string
		obj  metav1.Object
		want string
	}{
		{"EgressIP", labelled("network"), "network"},
		{"EgressIP", labelled("network", "floatingip"), "floatingip"}, // the namespaced owner wins
		{"Service", labelled("namespace", "loadbalancer"), "loadbalancer"},
		{"Service", labelled("floatingip"), "floatingip"},
		{"Service", labelled(), "loadbalancer"}, // none carried: the first registered
		{"IPAddressPool", labelled("namespace"), ""},
		{"Pod", labelled("namespace"), ""},
	} {
		if got := o.OwnerLabel(c.kind, c.obj); got != c.want {
			t.Errorf("%s labelled %v: owner label %q, want %q", c.kind, c.obj.GetLabels(), got, c.want)
		}
	}
}
