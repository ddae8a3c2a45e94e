package tenancy

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"

	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

func tenantWith(name string, users, groups []string) *v1alpha1.Tenant {
	return &v1alpha1.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1alpha1.TenantSpec{Members: v1alpha1.TenantMembers{Users: users, Groups: groups}},
	}
}

func TestMembership(t *testing.T) {
	m := NewMembership()
	notified := 0
	m.OnChange(func() { notified++ })

	alice := &user.DefaultInfo{Name: "alice"}
	inAcmeGroup := &user.DefaultInfo{Name: "x", Groups: []string{"tenant.io:acme"}}
	inAdmins := &user.DefaultInfo{Name: "y", Groups: []string{"acme-admins"}}
	if got := m.TenantsOf(inAcmeGroup); len(got) != 0 {
		t.Errorf("group of a tenant that does not exist resolves to %v", got)
	}

	m.Set(tenantWith("acme", []string{"alice"}, []string{"acme-admins"}))
	m.Set(tenantWith("globex", []string{"alice"}, nil))
	for _, c := range []struct {
		u    user.Info
		want []string
	}{
		{alice, []string{"acme", "globex"}},
		{inAcmeGroup, []string{"acme"}},
		{&user.DefaultInfo{Name: "z", Groups: []string{"tenant.io-acme"}}, []string{"acme"}},
		{&user.DefaultInfo{Name: "w", Groups: []string{"tenant.io-initech"}}, nil},
		{inAdmins, []string{"acme"}},
		{&user.DefaultInfo{Name: "carol"}, nil},
	} {
		if got := m.TenantsOf(c.u); !reflect.DeepEqual(got, c.want) {
			t.Errorf("TenantsOf(%s) = %v, want %v", c.u.GetName(), got, c.want)
		}
	}
	if notified != 2 {
		t.Errorf("%d notifications for two new tenants", notified)
	}

	// An update that leaves the members alone (a usage update) notifies nobody.
	m.Set(tenantWith("acme", []string{"alice"}, []string{"acme-admins"}))
	if notified != 2 {
		t.Errorf("an update without member changes notified (%d)", notified)
	}
	// Removing alice from acme does.
	m.Set(tenantWith("acme", nil, []string{"acme-admins"}))
	if notified != 3 || !reflect.DeepEqual(m.TenantsOf(alice), []string{"globex"}) {
		t.Errorf("after removing alice: %d notifications, alice in %v", notified, m.TenantsOf(alice))
	}
	m.Delete("globex")
	if _, exists := m.TenantUID("globex"); notified != 4 || len(m.TenantsOf(alice)) != 0 || exists {
		t.Errorf("after deleting globex: %d notifications, alice in %v", notified, m.TenantsOf(alice))
	}
}

// TestMembersOnly checks that the index's trimmed Tenants resolve members
// as the full ones do, and keep nothing else.
func TestMembersOnly(t *testing.T) {
	full := tenantWith("acme", []string{"alice"}, []string{"devs"})
	full.UID, full.ResourceVersion = "u1", "7"
	full.Labels = map[string]string{"team": "a"}
	full.Spec.DisplayName = "Acme"
	full.Status.Phase = v1alpha1.TenantPhaseReady
	got, err := MembersOnly(full)
	if err != nil {
		t.Fatal(err)
	}
	trimmed := got.(*v1alpha1.Tenant)
	want := &v1alpha1.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "u1", ResourceVersion: "7"},
		Spec:       v1alpha1.TenantSpec{Members: full.Spec.Members},
	}
	if !reflect.DeepEqual(trimmed, want) {
		t.Errorf("MembersOnly() = %+v, want %+v", trimmed, want)
	}
	a, b := NewMembership(), NewMembership()
	a.Set(full)
	b.Set(trimmed)
	for _, u := range []user.Info{&user.DefaultInfo{Name: "alice"}, &user.DefaultInfo{Name: "bob", Groups: []string{"devs"}}} {
		if x, y := a.TenantsOf(u), b.TenantsOf(u); !reflect.DeepEqual(x, y) {
			t.Errorf("%s: tenants %v from the full Tenant, %v from the trimmed one", u.GetName(), x, y)
		}
	}
}
