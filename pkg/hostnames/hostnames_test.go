package hostnames

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

const uid = types.UID("3f2a1b9c-0000-4000-8000-000000000001")

func TestNamespace(t *testing.T) {
	prefix := NamespacePrefix("acme", uid)
	if len(prefix) != len("acme-")+6 || !strings.HasPrefix(prefix, "acme-") {
		t.Fatalf("prefix %q", prefix)
	}
	long30 := strings.Repeat("t", 30)
	long63 := strings.Repeat("n", 63)
	for _, c := range []struct {
		tenant, ns string
		want       string // "" when only validity is checked
	}{
		{"acme", "dev", prefix + "-dev"},
		{"acme", "default", prefix + "-default"},
		{long30, long63, ""},
		{long30, strings.Repeat("n", 24), ""},
		{"a", "b-" + strings.Repeat("x", 60), ""},
	} {
		got := Namespace(c.tenant, uid, c.ns)
		if c.want != "" && got != c.want {
			t.Errorf("Namespace(%s, %s) = %q, want %q", c.tenant, c.ns, got, c.want)
		}
		if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
			t.Errorf("Namespace(%s, %s) = %q is not a DNS label: %v", c.tenant, c.ns, got, errs)
		}
		if again := Namespace(c.tenant, uid, c.ns); again != got {
			t.Errorf("not deterministic: %q then %q", got, again)
		}
	}
	// Past 63 characters, names that differ only at the end stay apart.
	a, b := Namespace(long30, uid, long63[:62]+"a"), Namespace(long30, uid, long63[:62]+"b")
	if a == b || len(a) > 63 || len(b) > 63 {
		t.Errorf("truncated names %q and %q", a, b)
	}
	// A tenant re-created under the same name gets other names.
	if Namespace("acme", uid, "dev") == Namespace("acme", "other-uid", "dev") {
		t.Error("the UID does not enter the name")
	}
}

func TestClusterUserDefinedNetwork(t *testing.T) {
	got := ClusterUserDefinedNetwork(uid, "default")
	if len(got) != 15 || !strings.HasPrefix(got, "tn") {
		t.Fatalf("CUDN name %q", got)
	}
	if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
		t.Errorf("%q: %v", got, errs)
	}
	if got == ClusterUserDefinedNetwork(uid, "other") || got == ClusterUserDefinedNetwork("other-uid", "default") {
		t.Error("different networks share a name")
	}
}

func TestServiceNetworkConnect(t *testing.T) {
	got := ServiceNetworkConnect(uid)
	if len(got) != 15 || !strings.HasPrefix(got, "ts") {
		t.Fatalf("connect name %q", got)
	}
	if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
		t.Errorf("%q: %v", got, errs)
	}
	if got != ServiceNetworkConnect(uid) {
		t.Error("not deterministic")
	}
	// A tenant re-created under the same name gets another connection.
	if got == ServiceNetworkConnect("other-uid") {
		t.Error("the UID does not enter the name")
	}
	// Never a provider service's connection of the same tenant, whatever
	// the provider network is called.
	for _, pn := range []string{"service-network", "", got} {
		if ClusterNetworkConnect(uid, pn) == got {
			t.Errorf("provider network %q: the provider connection has the service network's name", pn)
		}
	}
	// The label value is the name: a valid label value.
	if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
		t.Errorf("%q as a label value: %v", got, errs)
	}
}

// FuzzNamespace checks that any valid tenant and namespace name give a
// valid, deterministic host name of at most 63 characters, and that two
// different namespaces of a tenant never share one.
func FuzzNamespace(f *testing.F) {
	f.Add("acme", "dev", "prod", "uid-1")
	f.Add(strings.Repeat("t", 30), strings.Repeat("n", 63), strings.Repeat("n", 62)+"m", "u")
	f.Fuzz(func(t *testing.T, tenant, ns1, ns2, id string) {
		if len(tenant) > 30 || len(validation.IsDNS1123Label(tenant)) > 0 ||
			len(validation.IsDNS1123Label(ns1)) > 0 || len(validation.IsDNS1123Label(ns2)) > 0 {
			return
		}
		a, b := Namespace(tenant, types.UID(id), ns1), Namespace(tenant, types.UID(id), ns2)
		for _, n := range []string{a, b} {
			if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
				t.Fatalf("%q: %v", n, errs)
			}
		}
		if (ns1 == ns2) != (a == b) {
			t.Fatalf("namespaces %q and %q map to %q and %q", ns1, ns2, a, b)
		}
	})
}

func TestDNSSearches(t *testing.T) {
	if got, want := DNSSearches("dev", "cluster.local"), "dev.svc.cluster.local svc.cluster.local cluster.local"; got != want {
		t.Errorf("DNSSearches = %q, want %q", got, want)
	}
}
