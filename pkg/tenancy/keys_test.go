package tenancy_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

const prefix = "/tenant.io/networks"

// requestContext is the context of a request acting as tenant in namespace
// ns; an empty tenant is a caller of no tenant, a nil tenant an unscoped
// context.
func requestContext(tenant *string, ns string) context.Context {
	ctx := genericapirequest.NewContext()
	if ns != "" {
		ctx = genericapirequest.WithNamespace(ctx, ns)
	}
	if tenant != nil {
		ctx = tenancy.WithTenant(ctx, *tenant)
	}
	return ctx
}

func ptr(s string) *string { return &s }

func TestKeyRootFunc(t *testing.T) {
	tests := []struct {
		name       string
		tenant     *string
		ns         string
		namespaced bool
		want       string
	}{
		{name: "cluster scoped", tenant: ptr("acme"), want: prefix + "/acme/"},
		{name: "cluster scoped ignores namespace", tenant: ptr("acme"), ns: "dev", want: prefix + "/acme/"},
		{name: "namespaced without namespace lists the tenant", tenant: ptr("acme"), namespaced: true, want: prefix + "/acme/"},
		{name: "namespaced with namespace", tenant: ptr("acme"), ns: "dev", namespaced: true, want: prefix + "/acme/dev/"},
		{name: "no tenant", tenant: ptr(""), want: prefix + "/-/"},
		{name: "no tenant namespaced", tenant: ptr(""), ns: "dev", namespaced: true, want: prefix + "/-/dev/"},
		{name: "unscoped context", tenant: nil, want: prefix + "/-/"},
		{name: "unscoped context namespaced", tenant: nil, ns: "dev", namespaced: true, want: prefix + "/-/dev/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tenancy.KeyRootFunc(prefix, tc.namespaced)(requestContext(tc.tenant, tc.ns))
			if got != tc.want {
				t.Errorf("KeyRootFunc() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestKeyRootsArePrefixFree checks that no tenant's (or namespace's) key
// range contains another's: a tenant named like the start of another, t1
// and t10, must not read the other's objects.
func TestKeyRootsArePrefixFree(t *testing.T) {
	tenants := []string{"", "t1", "t10", "t100", "t", "a", "a-b", "ab"}
	namespaces := []string{"", "d", "dev", "dev1", "dev-1"}
	type scope struct{ tenant, ns string }
	roots := map[scope]string{}
	for _, namespaced := range []bool{false, true} {
		for _, tn := range tenants {
			for _, ns := range namespaces {
				if !namespaced && ns != "" {
					continue
				}
				roots[scope{tn, ns}] = tenancy.KeyRootFunc(prefix, namespaced)(requestContext(ptr(tn), ns))
			}
		}
	}
	for a, ra := range roots {
		for b, rb := range roots {
			if a == b || !strings.HasPrefix(rb, ra) {
				continue
			}
			// Only a tenant's root may contain the roots of its own namespaces.
			if a.ns == "" && a.tenant == b.tenant {
				continue
			}
			t.Errorf("root %q of %+v contains root %q of %+v", ra, a, rb, b)
		}
	}
	// And the keys of one tenant fall in no other tenant's range.
	for _, tn := range tenants {
		key, err := tenancy.KeyFunc(prefix, false)(requestContext(ptr(tn), ""), "default")
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range tenants {
			root := tenancy.KeyRootFunc(prefix, false)(requestContext(ptr(other), ""))
			if in := strings.HasPrefix(key, root); in != (tn == other) {
				t.Errorf("key %q of tenant %q in range %q of tenant %q: %v", key, tn, root, other, in)
			}
		}
	}
}

func TestKeyFunc(t *testing.T) {
	tests := []struct {
		name       string
		tenant     *string
		ns         string
		namespaced bool
		objName    string
		want       string
		wantErr    bool
	}{
		{name: "cluster scoped", tenant: ptr("acme"), objName: "default", want: prefix + "/acme/default"},
		{name: "cluster scoped ignores namespace", tenant: ptr("acme"), ns: "dev", objName: "default", want: prefix + "/acme/default"},
		{name: "namespaced", tenant: ptr("acme"), ns: "dev", namespaced: true, objName: "web", want: prefix + "/acme/dev/web"},
		{name: "t1 is not t10", tenant: ptr("t1"), objName: "0x", want: prefix + "/t1/0x"},
		{name: "no tenant", tenant: ptr(""), objName: "default", want: prefix + "/-/default"},
		{name: "no tenant namespaced", tenant: ptr(""), ns: "dev", namespaced: true, objName: "web", want: prefix + "/-/dev/web"},
		{name: "unscoped context", tenant: nil, objName: "default", want: prefix + "/-/default"},
		{name: "names with dots are fine", tenant: ptr("acme"), objName: "a.b", want: prefix + "/acme/a.b"},
		{name: "name ...", tenant: ptr("acme"), objName: "...", want: prefix + "/acme/..."},

		{name: "namespaced without namespace", tenant: ptr("acme"), namespaced: true, objName: "web", wantErr: true},
		{name: "empty name", tenant: ptr("acme"), objName: "", wantErr: true},
		{name: "empty name namespaced", tenant: ptr("acme"), ns: "dev", namespaced: true, objName: "", wantErr: true},
		{name: "name .", tenant: ptr("acme"), objName: ".", wantErr: true},
		{name: "name ..", tenant: ptr("acme"), objName: "..", wantErr: true},
		{name: "name .. namespaced", tenant: ptr("acme"), ns: "dev", namespaced: true, objName: "..", wantErr: true},
		{name: "name a/b", tenant: ptr("acme"), objName: "a/b", wantErr: true},
		{name: "name ../globex/default", tenant: ptr("acme"), objName: "../globex/default", wantErr: true},
		{name: "name a/", tenant: ptr("acme"), objName: "a/", wantErr: true},
		{name: "name /a", tenant: ptr("acme"), objName: "/a", wantErr: true},
		{name: "name //", tenant: ptr("acme"), objName: "//", wantErr: true},
		{name: "name /", tenant: ptr("acme"), objName: "/", wantErr: true},
		{name: "namespace ..", tenant: ptr("acme"), ns: "..", namespaced: true, objName: "web", wantErr: true},
		{name: "namespace .", tenant: ptr("acme"), ns: ".", namespaced: true, objName: "web", wantErr: true},
		{name: "namespace a/b", tenant: ptr("acme"), ns: "a/b", namespaced: true, objName: "web", wantErr: true},
		{name: "namespace /", tenant: ptr("acme"), ns: "/", namespaced: true, objName: "web", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tenancy.KeyFunc(prefix, tc.namespaced)(requestContext(tc.tenant, tc.ns), tc.objName)
			if tc.wantErr {
				if err == nil {
					t.Errorf("KeyFunc(%q) = %q, want an error", tc.objName, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("KeyFunc(%q) error = %v", tc.objName, err)
			}
			if got != tc.want {
				t.Errorf("KeyFunc(%q) = %q, want %q", tc.objName, got, tc.want)
			}
			root := tenancy.KeyRootFunc(prefix, tc.namespaced)(requestContext(tc.tenant, tc.ns))
			if !strings.HasPrefix(got, root) {
				t.Errorf("key %q is outside its root %q", got, root)
			}
		})
	}
}

func TestObjectKeyFunc(t *testing.T) {
	tests := []struct {
		name       string
		namespaced bool
		obj        runtime.Object
		// tenant and ns are those of the request whose KeyFunc must agree.
		tenant, ns string
		wantErr    bool
	}{
		{
			name:   "cluster scoped",
			obj:    &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: "default", Labels: map[string]string{tenancy.TenantLabel: "acme"}}},
			tenant: "acme",
		},
		{
			name:   "cluster scoped ignores a namespace",
			obj:    &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "dev", Labels: map[string]string{tenancy.TenantLabel: "acme"}}},
			tenant: "acme",
		},
		{
			name:       "namespaced",
			namespaced: true,
			obj:        &tenant.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "dev", Labels: map[string]string{tenancy.TenantLabel: "t10", "app": "x"}}},
			tenant:     "t10",
			ns:         "dev",
		},
		{
			name:    "no labels",
			obj:     &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
			wantErr: true,
		},
		{
			name:    "other labels only",
			obj:     &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: "default", Labels: map[string]string{"app": "acme"}}},
			wantErr: true,
		},
		{
			name:    "empty tenant label",
			obj:     &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: "default", Labels: map[string]string{tenancy.TenantLabel: ""}}},
			wantErr: true,
		},
		{
			name:       "namespaced without label",
			namespaced: true,
			obj:        &tenant.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "dev"}},
			wantErr:    true,
		},
		{
			name:    "not an object",
			obj:     &metav1.Status{},
			wantErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tenancy.ObjectKeyFunc(prefix, tc.namespaced)(tc.obj)
			if tc.wantErr {
				if err == nil {
					t.Errorf("ObjectKeyFunc() = %q, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ObjectKeyFunc() error = %v", err)
			}
			name := tc.obj.(metav1.Object).GetName()
			want, err := tenancy.KeyFunc(prefix, tc.namespaced)(requestContext(ptr(tc.tenant), tc.ns), name)
			if err != nil {
				t.Fatalf("KeyFunc() error = %v", err)
			}
			if got != want {
				t.Errorf("ObjectKeyFunc() = %q, KeyFunc() = %q; want them equal", got, want)
			}
		})
	}
}

// tenantAccepted says whether a request can act as tenant t: t is a tenant
// the resolver returns, or "" for callers of no tenant.
func tenantAccepted(t string) bool {
	if t == "" {
		return true
	}
	got, err := tenancy.TenantOf(tenancy.GroupResolver{}, userInGroups(tenancy.GroupPrefix+t))
	return err == nil && got == t
}

// FuzzKeyFunc checks that KeyFunc keeps every object in its tenant's range
// and never files two objects under one key, and that ObjectKeyFunc files a
// stored object where KeyFunc looks for it.
func FuzzKeyFunc(f *testing.F) {
	seeds := [][6]string{
		{"t1", "", "0", "t10", "", ""},
		{"t1", "dev", "0x", "t10", "dev", "x"},
		{"acme", "dev", "default", "globex", "dev", "default"},
		{"", "", "default", "acme", "", "default"},
		{"acme", "dev", "..", "acme", "dev", "."},
		{"acme", "a", "b", "acme", "", "a/b"},
		{"acme", "/", "x", "acme", "", "/"},
		{"acme", "..", "x", "acme", "x", ".."},
		{"-", "", "x", "", "", "x"},
		{"a", "b/c", "d", "a", "b", "c/d"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5])
	}
	f.Fuzz(func(t *testing.T, tenant1, ns1, name1, tenant2, ns2, name2 string) {
		if !tenantAccepted(tenant1) || !tenantAccepted(tenant2) {
			return
		}
		for _, namespaced := range []bool{false, true} {
			key1, ok1 := fuzzKey(t, tenant1, ns1, name1, namespaced)
			key2, ok2 := fuzzKey(t, tenant2, ns2, name2, namespaced)
			if !ok1 || !ok2 {
				continue
			}
			same := tenant1 == tenant2 && name1 == name2 && (!namespaced || ns1 == ns2)
			if !same && key1 == key2 {
				t.Errorf("namespaced=%v: (%q, %q, %q) and (%q, %q, %q) both map to key %q",
					namespaced, tenant1, ns1, name1, tenant2, ns2, name2, key1)
			}
		}
	})
}

// fuzzKey returns the key of (tenant, ns, name) and whether KeyFunc accepted
// it, checking that an accepted key is in the ranges of its tenant and
// namespace, and that ObjectKeyFunc agrees with it.
func fuzzKey(t *testing.T, tn, ns, name string, namespaced bool) (string, bool) {
	t.Helper()
	ctx := requestContext(ptr(tn), ns)
	key, err := tenancy.KeyFunc(prefix, namespaced)(ctx, name)
	if err != nil {
		return "", false
	}
	tenantRoot := tenancy.KeyRootFunc(prefix, namespaced)(requestContext(ptr(tn), ""))
	if !strings.HasPrefix(key, tenantRoot) {
		t.Errorf("key %q of (%q, %q, %q) is outside the tenant's root %q", key, tn, ns, name, tenantRoot)
	}
	if root := tenancy.KeyRootFunc(prefix, namespaced)(ctx); !strings.HasPrefix(key, root) {
		t.Errorf("key %q of (%q, %q, %q) is outside its root %q", key, tn, ns, name, root)
	}
	if tn != "" {
		obj := &tenant.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{tenancy.TenantLabel: tn}}}
		if objKey, err := tenancy.ObjectKeyFunc(prefix, namespaced)(obj); err != nil || objKey != key {
			t.Errorf("ObjectKeyFunc(%q, %q, %q) = %q, %v; KeyFunc = %q", tn, ns, name, objKey, err, key)
		}
	}
	return key, true
}

func userInGroups(groups ...string) user.Info {
	return &user.DefaultInfo{Name: "fuzz", Groups: groups}
}

// TestAllTenants checks the in-process all-tenants scope of the syncer:
// lists and watches read every tenant's range, and no single object can be
// keyed in it.
func TestAllTenants(t *testing.T) {
	for _, namespaced := range []bool{false, true} {
		ctx := tenancy.WithAllTenants(genericapirequest.WithNamespace(genericapirequest.NewContext(), "dev"))
		if got := tenancy.KeyRootFunc(prefix, namespaced)(ctx); got != prefix+"/" {
			t.Errorf("namespaced=%v: KeyRootFunc = %q, want %q", namespaced, got, prefix+"/")
		}
		if key, err := tenancy.KeyFunc(prefix, namespaced)(ctx, "web"); err == nil {
			t.Errorf("namespaced=%v: KeyFunc keyed %q in the all-tenants scope", namespaced, key)
		}
	}
	// The acting tenant is only a context value: nothing else sets it.
	if _, _, ok := tenancy.ActingTenantFrom(genericapirequest.NewContext()); ok {
		t.Error("a plain context acts as a tenant")
	}
	if got, _, ok := tenancy.ActingTenantFrom(tenancy.ActAsTenant(context.Background(), "acme", "uid")); !ok || got != "acme" {
		t.Errorf("ActingTenantFrom = %q, %v", got, ok)
	}
}
