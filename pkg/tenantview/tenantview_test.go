package tenantview

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

func TestMemberships(t *testing.T) {
	tenants := []tenantv1alpha1.Tenant{
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: tenantv1alpha1.TenantSpec{Members: tenantv1alpha1.TenantMembers{Users: []string{"u"}, Groups: []string{"devs"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: tenantv1alpha1.TenantSpec{Members: tenantv1alpha1.TenantMembers{Users: []string{"other"}}}},
	}
	got := Memberships("u", []string{"devs", "tenant.io:a", "tenant.io:zz", "tenant.io-a", "tenant.io-c"}, tenants)
	want := []Membership{{Tenant: "a", Via: []string{"host group tenant.io:a", "identity group tenant.io-a"}}, {Tenant: "b", Via: []string{"member", "group devs"}},
		{Tenant: "c", Via: []string{"identity group tenant.io-c"}}}
	if len(got) != len(want) {
		t.Fatalf("memberships: %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Tenant != want[i].Tenant || !slices.Equal(got[i].Via, want[i].Via) {
			t.Errorf("membership %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestQuotaLinesAndAddresses(t *testing.T) {
	five := int32(5)
	tn := &tenantv1alpha1.Tenant{
		Spec: tenantv1alpha1.TenantSpec{Quota: tenantv1alpha1.TenantQuota{Namespaces: &five, Compute: corev1.ResourceList{"pods": resource.MustParse("10")}}},
		Status: tenantv1alpha1.TenantStatus{Usage: tenantv1alpha1.TenantUsage{Namespaces: 2, Compute: corev1.ResourceList{
			"pods": resource.MustParse("3"), "requests.cpu": resource.MustParse("700m")}}},
	}
	got := QuotaLines(tn)
	want := []QuotaLine{{"namespaces", "2", "5"}, {"networks", "0", ""}, {"floatingips", "0", ""}, {"loadbalancers", "0", ""},
		{"hostclaims", "0", ""}, {"pods", "3", "10"}, {"requests.cpu", "700m", ""}}
	if !slices.Equal(got, want) {
		t.Errorf("quotaLines: %+v, want %+v", got, want)
	}
	if got := SortedAddresses([]string{"203.0.113.10", "203.0.113.9", "203.0.113.100"}); !slices.Equal(got, []string{"203.0.113.9", "203.0.113.10", "203.0.113.100"}) {
		t.Errorf("sortedAddresses: %v", got)
	}
}

func TestHostColumns(t *testing.T) {
	class := &tenantv1alpha1.HostClass{
		Spec:   tenantv1alpha1.HostClassSpec{TenantLabels: []string{"rack", "gpu"}},
		Status: tenantv1alpha1.HostClassStatus{Labels: []tenantv1alpha1.HostClassLabel{{Key: "rack", Values: []string{"r1", "r2"}}}},
	}
	if got := HostClassLabels(class); got != "rack=r1|r2,gpu" {
		t.Errorf("HostClassLabels: %q", got)
	}
	if got := HostClassLabels(&tenantv1alpha1.HostClass{}); got != "" {
		t.Errorf("HostClassLabels of a class without labels: %q", got)
	}
	claim := &tenantv1alpha1.HostClaim{Status: tenantv1alpha1.HostClaimStatus{Addresses: []tenantv1alpha1.HostAddress{
		{Type: "Hostname", Address: "db-1"}, {Type: "InternalIP", Address: "192.0.2.10"}}}}
	if got := HostAddress(claim); got != "192.0.2.10" {
		t.Errorf("HostAddress: %q, want the InternalIP", got)
	}
	claim.Status.Addresses = claim.Status.Addresses[:1]
	if got := HostAddress(claim); got != "db-1" {
		t.Errorf("HostAddress without an InternalIP: %q", got)
	}
	for _, c := range []struct {
		h    *tenantv1alpha1.HostHardware
		want string
	}{
		{nil, ""},
		{&tenantv1alpha1.HostHardware{CPUArch: "x86_64", CPUCount: 32, RAMMebibytes: 131072, StorageGigabytes: 960, NICCount: 2}, "x86_64, 32 CPUs, 128 GiB RAM, 960 GB disk, 2 NICs"},
		{&tenantv1alpha1.HostHardware{RAMMebibytes: 512}, "512 MiB RAM"},
	} {
		if got := HostHardware(c.h); got != c.want {
			t.Errorf("HostHardware(%+v) = %q, want %q", c.h, got, c.want)
		}
	}
}
