package tenants_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apiserver"
	"tenant.io/tenant-apiserver/pkg/registry/registrytest"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/tenants"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// TestHardIsolationNeedsTenantDNS runs two servers on one etcd, one started
// with a tenant DNS address and one without: only the first makes Tenants
// Hard; the second refuses that with a 422 on spec.isolation, and still
// serves the other updates of a Tenant that is Hard already.
func TestHardIsolationNeedsTenantDNS(t *testing.T) {
	url := registrytest.StartEtcd(t)
	newStorage := func(address string) *kindstore.Storage {
		t.Helper()
		storage, err := apiserver.NewStorage(registrytest.RESTOptionsGetter(url, false),
			kindstore.Deps{Resolver: tenancy.GroupResolver{}, Authorizer: onlyAdmin, TenantDNSAddress: address})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			for _, s := range storage.List() {
				s.Main.Destroy()
			}
		})
		return storage.Tenants
	}
	withDNS, without := newStorage("172.30.0.53"), newStorage("")
	create := func(st *kindstore.Storage, name string, isolation tenant.TenantIsolation) error {
		tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: tenant.TenantSpec{Isolation: isolation}}
		_, err := st.Main.Create(as(admin, ""), tn, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		return err
	}
	update := func(st *kindstore.Storage, name string, change func(*tenant.Tenant)) error {
		_, _, err := st.Main.Update(as(admin, ""), name, rest.DefaultUpdatedObjectInfo(nil,
			func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
				tn := old.(*tenant.Tenant).DeepCopy()
				change(tn)
				return tn, nil
			}), nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		return err
	}
	hard := func(tn *tenant.Tenant) { tn.Spec.Isolation = tenant.TenantIsolationHard }
	addMember := func(tn *tenant.Tenant) { tn.Spec.Members.Users = append(tn.Spec.Members.Users, "alice") }

	refusedHard := func(t *testing.T, err error) {
		t.Helper()
		if !apierrors.IsInvalid(err) {
			t.Fatalf("got %v, want 422 Invalid", err)
		}
		causes := err.(apierrors.APIStatus).Status().Details.Causes
		if len(causes) != 1 || causes[0].Field != "spec.isolation" || !strings.Contains(causes[0].Message, tenants.NoTenantDNSMessage) {
			t.Errorf("causes %+v, want spec.isolation: %s", causes, tenants.NoTenantDNSMessage)
		}
	}
	for _, c := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"create Hard without a tenant DNS server", func(t *testing.T) {
			refusedHard(t, create(without, "hard-refused", tenant.TenantIsolationHard))
			if _, err := without.Store.Get(noNamespace(), "hard-refused", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("refused Tenant stored: %v", err)
			}
		}},
		{"create Soft without a tenant DNS server", func(t *testing.T) {
			if err := create(without, "soft", tenant.TenantIsolationSoft); err != nil {
				t.Fatal(err)
			}
		}},
		{"update Soft to Hard without a tenant DNS server", func(t *testing.T) {
			if err := create(without, "soft-to-hard", ""); err != nil {
				t.Fatal(err)
			}
			refusedHard(t, update(without, "soft-to-hard", hard))
		}},
		{"create Hard and update Soft to Hard with a tenant DNS server", func(t *testing.T) {
			if err := create(withDNS, "hard", tenant.TenantIsolationHard); err != nil {
				t.Fatal(err)
			}
			if err := create(withDNS, "becomes-hard", tenant.TenantIsolationSoft); err != nil {
				t.Fatal(err)
			}
			if err := update(withDNS, "becomes-hard", hard); err != nil {
				t.Fatal(err)
			}
		}},
		{"a Hard Tenant's other updates without a tenant DNS server", func(t *testing.T) {
			if err := create(withDNS, "stays-hard", tenant.TenantIsolationHard); err != nil {
				t.Fatal(err)
			}
			if err := update(without, "stays-hard", addMember); err != nil {
				t.Fatalf("member added to a Hard Tenant: %v", err)
			}
			if err := update(without, "stays-hard", func(tn *tenant.Tenant) { tn.Spec.Isolation = tenant.TenantIsolationSoft }); err != nil {
				t.Fatalf("Hard Tenant made Soft: %v", err)
			}
			refusedHard(t, update(without, "stays-hard", hard))
		}},
	} {
		t.Run(c.name, c.run)
	}
}
