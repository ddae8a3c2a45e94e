package providerservice

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

func offer() *tenant.ProviderService {
	return &tenant.ProviderService{
		ObjectMeta: metav1.ObjectMeta{
			Name:          "dns",
			Annotations:   map[string]string{corev1.LastAppliedConfigAnnotation: `{"spec":{"tenants":["acme","globex"]}}`, "note": "resolvers"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Spec: tenant.ProviderServiceSpec{Tenants: []string{"acme", "globex"}},
		Status: tenant.ProviderServiceStatus{
			Offers:  []tenant.ProviderServiceOffer{{Tenant: "acme", UID: "u-acme"}, {Tenant: "globex", UID: "u-globex"}},
			Tenants: []tenant.ProviderServiceTenant{{Name: "acme", Connected: true}, {Name: "globex", Reason: "AliasTaken"}},
		},
	}
}

func TestForTenant(t *testing.T) {
	o := offer()
	got := ForTenant("acme", o).(*tenant.ProviderService)
	if !slices.Equal(got.Spec.Tenants, []string{"acme"}) || len(got.Status.Offers) != 1 || got.Status.Offers[0].Tenant != "acme" ||
		len(got.Status.Tenants) != 1 || got.Status.Tenants[0].Name != "acme" {
		t.Fatalf("acme reads %+v %+v", got.Spec, got.Status)
	}
	if len(got.ManagedFields) != 0 || got.Annotations[corev1.LastAppliedConfigAnnotation] != "" || got.Annotations["note"] != "resolvers" {
		t.Fatalf("acme reads managed fields %v, annotations %v", got.ManagedFields, got.Annotations)
	}
	if len(o.Spec.Tenants) != 2 || len(o.Status.Tenants) != 2 || len(o.ManagedFields) != 1 || len(o.Annotations) != 2 {
		t.Fatalf("the stored object was changed: %+v", o)
	}
	all := offer()
	all.Spec.Tenants, all.Spec.AllTenants = nil, true
	if got := ForTenant("initech", all).(*tenant.ProviderService); len(got.Spec.Tenants) != 0 || len(got.Status.Tenants) != 0 {
		t.Fatalf("initech reads %+v %+v", got.Spec, got.Status)
	}
}

func TestOfferedTo(t *testing.T) {
	o := offer()
	for _, c := range []struct {
		tenant string
		uid    string
		want   bool
	}{
		{"acme", "u-acme", true},
		{"acme", "u-acme-2", false}, // created again under the same name
		{"initech", "u-initech", false},
	} {
		if got := OfferedTo(c.tenant, types.UID(c.uid), o); got != c.want {
			t.Errorf("OfferedTo(%s, %s) = %v, want %v", c.tenant, c.uid, got, c.want)
		}
	}
	o.Spec.Tenants, o.Spec.AllTenants = nil, true
	if !OfferedTo("initech", "u-initech", o) {
		t.Error("an offer to all tenants is not offered to initech")
	}
}
