package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/hostnames"
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
		// The same object as the syncer's informers hold it, its labels
		// read one at a time.
		held := heldWithLabels(t, c.obj.GetLabels())
		if got := o.OwnerLabel(c.kind, held); got != c.want {
			t.Errorf("%s labelled %v, held: owner label %q, want %q", c.kind, c.obj.GetLabels(), got, c.want)
		}
	}
	// A label with no value names no owner.
	if got := o.OwnerLabel("EgressIP", &metav1.ObjectMeta{Labels: map[string]string{"network": "x", "floatingip": ""}}); got != "network" {
		t.Errorf("EgressIP with an empty floatingip label: owner label %q, want network", got)
	}
}

// heldWithLabels returns a host namespace with labels as the syncer's
// informer holds it (host.HoldNamespace).
func heldWithLabels(tb testing.TB, labels map[string]string) metav1.Object {
	tb.Helper()
	obj, err := host.HoldNamespace(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "acme-5a1b2c-web", Labels: labels}})
	if err != nil {
		tb.Fatal(err)
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		tb.Fatalf("HoldNamespace returned %T, not a metav1.Object", obj)
	}
	return m
}

// BenchmarkOwnerLabel reports what finding the owner label of one host
// object costs the periodic check, which asks it of every host object the
// syncer made each pass: a held host namespace carrying the syncer's
// marks, its kind with the owner labels of a Service's (three registered).
func BenchmarkOwnerLabel(b *testing.B) {
	o := &Orphans{}
	services := HostObjects{Kind: "Service"}
	o.Register("namespace", Owners{Namespaced: true}, services)
	o.Register("loadbalancer", Owners{Namespaced: true}, services)
	o.Register("floatingip", Owners{Namespaced: true}, services)
	held := heldWithLabels(b, map[string]string{
		hostnames.TenantLabel: "acme", hostnames.NamespaceLabel: "web", "loadbalancer": "front",
		corev1.LabelMetadataName: "acme-5a1b2c-web", "app.kubernetes.io/managed-by": "tenant-apiserver",
	})
	b.ReportAllocs()
	for b.Loop() {
		if o.OwnerLabel("Service", held) != "loadbalancer" {
			b.Fatal("wrong owner label")
		}
	}
}
