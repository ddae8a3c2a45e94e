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
	got := Memberships("u", []string{"devs", "tenant.io:a", "tenant.io:zz"}, tenants)
	want := []Membership{{Tenant: "a", Via: []string{"host group tenant.io:a"}}, {Tenant: "b", Via: []string{"member", "group devs"}}}
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
		{"pods", "3", "10"}, {"requests.cpu", "700m", ""}}
	if !slices.Equal(got, want) {
		t.Errorf("quotaLines: %+v, want %+v", got, want)
	}
	if got := SortedAddresses([]string{"203.0.113.10", "203.0.113.9", "203.0.113.100"}); !slices.Equal(got, []string{"203.0.113.9", "203.0.113.10", "203.0.113.100"}) {
		t.Errorf("sortedAddresses: %v", got)
	}
}
