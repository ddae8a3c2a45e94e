package tenant

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
)

func TestOnlyUsageChanged(t *testing.T) {
	old := &tenant.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: "acme", ResourceVersion: "1", Labels: map[string]string{"a": "b"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate}}},
		Status: tenant.TenantStatus{Usage: tenant.TenantUsage{Namespaces: 1}, Phase: tenant.TenantPhaseReady},
	}
	charged := old.DeepCopy()
	charged.ResourceVersion, charged.Status.Usage.Namespaces = "2", 2
	charged.ManagedFields = append(charged.ManagedFields, metav1.ManagedFieldsEntry{Manager: "n"})
	if !onlyUsageChanged(old, charged) {
		t.Errorf("a quota charge (usage, resourceVersion, managed fields) counted as a change that matters")
	}
	if old.ResourceVersion != "1" || old.Status.Usage.Namespaces != 1 || len(old.ManagedFields) != 1 {
		t.Errorf("the old object was written to: %+v", old)
	}
	relabelled := charged.DeepCopy()
	relabelled.Labels["a"] = "c"
	if onlyUsageChanged(old, relabelled) {
		t.Errorf("a label change passed for a usage change")
	}
	provisioning := charged.DeepCopy()
	provisioning.Status.Phase = tenant.TenantPhaseProvisioning
	if onlyUsageChanged(old, provisioning) {
		t.Errorf("a phase change passed for a usage change")
	}
}

// TestPoolNamespaces: the pool serves, of the tenant's host namespaces,
// the one of Namespace default and those holding a LoadBalancer or a
// FloatingIP; never a namespace the tenant has no host namespace for.
func TestPoolNamespaces(t *testing.T) {
	src, _ := controllertest.NewSources(t)
	c, err := New(src, AdvertiseL2)
	if err != nil {
		t.Fatal(err)
	}
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"}}
	other := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "globex", UID: "other-uid"}}
	host := func(t *tenant.Tenant, ns string) string { return hostnames.Namespace(t.Name, t.UID, ns) }
	labelled := func(t *tenant.Tenant, name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Labels: map[string]string{hostnames.TenantLabel: t.Name}}
	}
	all := []string{host(tn, "default"), host(tn, "dev"), host(tn, "prod"), host(tn, "web")}

	if got, want := c.poolNamespaces(tn, all), []string{host(tn, "default")}; !slices.Equal(got, want) {
		t.Errorf("with no LoadBalancer or FloatingIP: %v, want %v", got, want)
	}
	controllertest.Cache(t, src.LoadBalancers, "acme", "web", &tenant.LoadBalancer{ObjectMeta: labelled(tn, "lb")})
	controllertest.Cache(t, src.FloatingIPs, "acme", "dev", &tenant.FloatingIP{ObjectMeta: labelled(tn, "fip")})
	controllertest.Cache(t, src.FloatingIPs, "acme", "gone", &tenant.FloatingIP{ObjectMeta: labelled(tn, "fip")})
	controllertest.Cache(t, src.LoadBalancers, "globex", "prod", &tenant.LoadBalancer{ObjectMeta: labelled(other, "lb")})
	if got, want := c.poolNamespaces(tn, all), []string{host(tn, "default"), host(tn, "dev"), host(tn, "web")}; !slices.Equal(got, want) {
		t.Errorf("with a LoadBalancer in web and FloatingIPs in dev and gone: %v, want %v", got, want)
	}
	if got, want := c.poolNamespaces(tn, all[1:]), []string{host(tn, "dev"), host(tn, "web")}; !slices.Equal(got, want) {
		t.Errorf("without a host namespace for default: %v, want %v", got, want)
	}
	if got := c.poolNamespaces(tn, nil); len(got) != 0 {
		t.Errorf("without host namespaces: %v, want none", got)
	}
}
