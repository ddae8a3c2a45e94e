package namespace

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
)

// TestReconcileTenantDNS checks the tenant DNS annotations of a host
// namespace: written when the Tenant is Hard, put back when edited or
// removed, gone when it is Soft; and, on a syncer that knows no tenant
// DNS server, kept as they were for a Hard tenant, whose Namespace is then
// not HostSynced.
func TestReconcileTenantDNS(t *testing.T) {
	const address, searches = "172.30.0.53", "dev.svc.example.org svc.example.org example.org"
	ctx := context.Background()
	for _, c := range []struct {
		name string
		dns  TenantDNS
	}{
		{"with a tenant DNS server", TenantDNS{Address: address, ClusterDomain: "example.org"}},
		{"without one", TenantDNS{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, fakes, tn, ns, reconcile := namespaceFixtureWith(t, "", c.dns)
			hostName := hostnames.Namespace(tn.Name, tn.UID, ns.Name)
			namespaces := fakes.Kube.CoreV1().Namespaces()
			host := func() *corev1.Namespace {
				t.Helper()
				h, err := namespaces.Get(ctx, hostName, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return h
			}
			annotations := func(h *corev1.Namespace) (string, string) {
				return h.Annotations[hostnames.DNSNameserverAnnotation], h.Annotations[hostnames.DNSSearchesAnnotation]
			}
			cached := func(what string, check func(*corev1.Namespace) bool) {
				t.Helper()
				controllertest.Eventually(t, "the informer has the host namespace "+what, func() bool {
					obj, exists, _ := src.HostNamespaces.GetStore().GetByKey(hostName)
					return exists && check(heldNamespace(t, obj))
				})
			}
			setIsolation := func(isolation tenant.TenantIsolation) {
				t.Helper()
				changed := tn.DeepCopy()
				changed.Spec.Isolation = isolation
				fakes.Tenants.Put("", "", changed)
				controllertest.Cache(t, src.Tenants, tn.Name, "", changed)
			}
			hostSynced := func() *metav1.Condition {
				st := fakes.Namespaces.Stored(tn.Name, "", ns.Name).(*tenant.Namespace).Status
				return meta.FindStatusCondition(st.Conditions, tenant.ConditionHostSynced)
			}
			reconcileAll := func(what string) {
				t.Helper()
				reconcile(what)
				cached("", func(*corev1.Namespace) bool { return true })
				reconcile(what + ", with the host namespace cached")
			}

			// Soft (the default): none.
			reconcileAll("Soft")
			if ns, s := annotations(host()); ns != "" || s != "" {
				t.Fatalf("a Soft tenant's host namespace has nameserver %q, searches %q", ns, s)
			}

			if c.dns.Address == "" {
				// A Hard tenant on a syncer without a server: what a former
				// configuration wrote stays, and the Namespace says why it is
				// not synced.
				h := host()
				h.Annotations[hostnames.DNSNameserverAnnotation] = "172.30.0.54"
				h.Annotations[hostnames.DNSSearchesAnnotation] = searches
				if _, err := namespaces.Update(ctx, h, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				cached("written before", func(h *corev1.Namespace) bool {
					return h.Annotations[hostnames.DNSNameserverAnnotation] == "172.30.0.54"
				})
				setIsolation(tenant.TenantIsolationHard)
				reconcile("Hard without a server")
				if ns, s := annotations(host()); ns != "172.30.0.54" || s != searches {
					t.Errorf("nameserver %q, searches %q: want those written before kept", ns, s)
				}
				if cond := hostSynced(); cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != ReasonNoTenantDNS {
					t.Errorf("HostSynced %+v, want False, %s", cond, ReasonNoTenantDNS)
				}
				return
			}

			setIsolation(tenant.TenantIsolationHard)
			reconcile("Hard")
			if ns, s := annotations(host()); ns != address || s != searches {
				t.Errorf("nameserver %q, searches %q; want %q, %q", ns, s, address, searches)
			}
			if cond := hostSynced(); cond == nil || cond.Status != metav1.ConditionTrue {
				t.Errorf("HostSynced %+v, want True", cond)
			}

			// Edited and removed by someone else: put back.
			h := host()
			h.Annotations[hostnames.DNSNameserverAnnotation] = "8.8.8.8"
			delete(h.Annotations, hostnames.DNSSearchesAnnotation)
			if _, err := namespaces.Update(ctx, h, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			cached("edited", func(h *corev1.Namespace) bool { return h.Annotations[hostnames.DNSNameserverAnnotation] == "8.8.8.8" })
			reconcile("after the edit")
			if ns, s := annotations(host()); ns != address || s != searches {
				t.Errorf("after repair: nameserver %q, searches %q; want %q, %q", ns, s, address, searches)
			}
			cached("repaired", func(h *corev1.Namespace) bool { return h.Annotations[hostnames.DNSNameserverAnnotation] == address })

			// Soft again: both go, others' annotations stay.
			h = host()
			h.Annotations["provider.example/team"] = "blue"
			if _, err := namespaces.Update(ctx, h, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			cached("annotated by the provider", func(h *corev1.Namespace) bool { return h.Annotations["provider.example/team"] == "blue" })
			setIsolation(tenant.TenantIsolationSoft)
			reconcile("Soft again")
			h = host()
			if _, ok := h.Annotations[hostnames.DNSNameserverAnnotation]; ok {
				t.Errorf("a Soft tenant's host namespace keeps %s: %v", hostnames.DNSNameserverAnnotation, h.Annotations)
			}
			if _, ok := h.Annotations[hostnames.DNSSearchesAnnotation]; ok {
				t.Errorf("a Soft tenant's host namespace keeps %s: %v", hostnames.DNSSearchesAnnotation, h.Annotations)
			}
			if h.Annotations["provider.example/team"] != "blue" || h.Annotations[hostnames.OwnerUIDAnnotation] != string(ns.UID) {
				t.Errorf("other annotations lost: %v", h.Annotations)
			}
		})
	}
}
