package host_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/intern/interntest"
)

// syncedHostNamespace is a host namespace as the syncer makes it for tenant
// Namespace i of tenant t, decoded from protobuf as an informer does (every
// string a copy of its own).
func syncedHostNamespace(tb testing.TB, t, i int) *corev1.Namespace {
	name := fmt.Sprintf("t-tenant-%04d-ns%d-5kq2x", t, i)
	ns := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: "0b6f3c1e-8a41-4d0c-9d52-7c1f0a3e5b21", ResourceVersion: "123456",
			Labels: map[string]string{
				"kubernetes.io/metadata.name":                    name,
				"tenant.io/tenant":                               fmt.Sprintf("tenant-%04d", t),
				"tenant.io/namespace":                            fmt.Sprintf("ns%d", i),
				"tenant.io/network":                              "default",
				"tenant.io/host-network":                         fmt.Sprintf("t-%04d-default-8c2d1f0a", t),
				"k8s.ovn.org/primary-user-defined-network":       "",
				"pod-security.kubernetes.io/enforce":             "restricted",
				"pod-security.kubernetes.io/audit":               "restricted",
				"pod-security.kubernetes.io/warn":                "restricted",
				"security.openshift.io/scc.podSecurityLabelSync": "false",
			},
			Annotations: map[string]string{
				"tenant.io/owner-uid":  fmt.Sprintf("9d1c2b3a-0000-4000-8000-%012d", t*100+i),
				"tenant.io/tenant-uid": fmt.Sprintf("5e6f7a8b-0000-4000-8000-%012d", t),
				"tenant.io/changed-by": "member-of-tenant",
			},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "tenant-apiserver-syncer", Operation: metav1.ManagedFieldsOperationUpdate}},
		},
		Spec:   corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
	return fromProtobuf(tb, ns, &corev1.Namespace{})
}

// fromProtobuf returns out decoded from in's protobuf, as an informer gets
// it: every string a copy of its own.
func fromProtobuf[T interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}](tb testing.TB, in, out T) T {
	data, err := in.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	if err := out.Unmarshal(data); err != nil {
		tb.Fatal(err)
	}
	return out
}

// syncedRoleBinding is the members RoleBinding the syncer makes in the
// host namespace of tenant Namespace i of tenant t, decoded from protobuf:
// it carries the same marks as its namespace.
func syncedRoleBinding(tb testing.TB, t, i int) *rbacv1.RoleBinding {
	ns := syncedHostNamespace(tb, t, i)
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{
			Name: "tenant-members", Namespace: ns.Name, UID: "7a1d2e3f-8a41-4d0c-9d52-7c1f0a3e5b21", ResourceVersion: "123457",
			Labels:      map[string]string{"tenant.io/tenant": ns.Labels["tenant.io/tenant"], "tenant.io/namespace": ns.Labels["tenant.io/namespace"]},
			Annotations: maps.Clone(ns.Annotations),
		},
		Subjects: []rbacv1.Subject{
			{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "tenant.io:" + ns.Labels["tenant.io/tenant"]},
			{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "tenant.io-" + ns.Labels["tenant.io/tenant"]},
		},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
	}
	return fromProtobuf(tb, rb, &rbacv1.RoleBinding{})
}

func TestCompact(t *testing.T) {
	a, b := syncedHostNamespace(t, 1, 1), syncedHostNamespace(t, 1, 2)
	wantA := maps.Clone(a.Labels)
	wantAnnotations := maps.Clone(a.Annotations)
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant-members", Namespace: a.Name, Labels: map[string]string{"tenant.io/tenant": "tenant-0001"}},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "tenant.io:tenant-0001"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "tenant-admin"},
	}
	wantRB := rb.DeepCopy()
	u := &unstructured.Unstructured{}
	u.SetName("b")
	u.SetLabels(map[string]string{"tenant.io/tenant": "tenant-0001"})
	u.SetManagedFields(a.ManagedFields)
	for _, obj := range []interface{}{a, b, rb, u} {
		got, err := host.Compact(obj)
		if err != nil {
			t.Fatal(err)
		}
		m := got.(metav1.Object)
		if m.GetManagedFields() != nil || m.GetName() == "" {
			t.Errorf("%T: managed fields %v, name %q: want none and the name kept", obj, m.GetManagedFields(), m.GetName())
		}
	}
	if !maps.Equal(a.Labels, wantA) || !maps.Equal(a.Annotations, wantAnnotations) {
		t.Errorf("labels or annotations changed:\n%v\n%v", a.Labels, a.Annotations)
	}
	if rb.Subjects[0] != wantRB.Subjects[0] || rb.RoleRef != wantRB.RoleRef {
		t.Errorf("RoleBinding changed: %+v %+v", rb.Subjects, rb.RoleRef)
	}
	if u.GetLabels()["tenant.io/tenant"] != "tenant-0001" {
		t.Errorf("unstructured labels changed: %v", u.GetLabels())
	}
	// Equal strings of separately decoded objects are one copy now.
	for _, s := range []struct{ what, x, y string }{
		{"label key", interntest.KeyOf(a.Labels, "pod-security.kubernetes.io/enforce"), interntest.KeyOf(b.Labels, "pod-security.kubernetes.io/enforce")},
		{"label value", a.Labels["pod-security.kubernetes.io/enforce"], b.Labels["pod-security.kubernetes.io/audit"]},
		{"tenant label", a.Labels["tenant.io/tenant"], rb.Labels["tenant.io/tenant"]},
		{"annotation value", a.Annotations["tenant.io/tenant-uid"], b.Annotations["tenant.io/tenant-uid"]},
	} {
		if unsafe.StringData(s.x) != unsafe.StringData(s.y) {
			t.Errorf("%s %q: two copies", s.what, s.x)
		}
	}
	// Equal maps are one: the marks of a namespace and of its RoleBinding.
	mapOf := func(m map[string]string) uintptr { return reflect.ValueOf(m).Pointer() }
	members, err := host.Compact(syncedRoleBinding(t, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if mapOf(members.(*rbacv1.RoleBinding).Annotations) != mapOf(a.Annotations) {
		t.Error("a namespace and its RoleBinding hold two maps of the same marks")
	}
	if mapOf(a.Annotations) == mapOf(b.Annotations) || mapOf(a.Labels) == mapOf(b.Labels) {
		t.Error("two namespaces hold one map of different marks")
	}
	// Equal subjects are one array: every members RoleBinding of a tenant
	// names its members; another tenant's are its own.
	other, err := host.Compact(syncedRoleBinding(t, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	x, y := members.(*rbacv1.RoleBinding).Subjects, other.(*rbacv1.RoleBinding).Subjects
	if len(x) != 2 || &x[0] != &y[0] {
		t.Errorf("two RoleBindings of one tenant hold two arrays of the same subjects %v", x)
	}
	third, err := host.Compact(syncedRoleBinding(t, 2, 1))
	if err != nil {
		t.Fatal(err)
	}
	if z := third.(*rbacv1.RoleBinding).Subjects; &z[0] == &x[0] || z[0].Name != "tenant.io:tenant-0002" {
		t.Errorf("another tenant's RoleBinding holds subjects %v", z)
	}
	// Likewise namespaces' finalizers.
	if len(a.Spec.Finalizers) != 1 || a.Spec.Finalizers[0] != corev1.FinalizerKubernetes || &a.Spec.Finalizers[0] != &b.Spec.Finalizers[0] {
		t.Errorf("two namespaces hold two arrays of finalizers %v", a.Spec.Finalizers)
	}
	// Not an object (a tombstone): passed through.
	if got, err := host.Compact("x"); err != nil || got != "x" {
		t.Errorf("Compact(non-object) = %v, %v", got, err)
	}
}

// BenchmarkHostNamespaceHeld reports the heap that 10,000 host namespaces
// (100 tenants x 100, decoded from protobuf) hold once in an informer's
// cache, per namespace: with their managed fields dropped only, compacted,
// and held (only what the syncer compares, host.HeldNamespace).
func BenchmarkHostNamespaceHeld(b *testing.B) {
	benchmarkHeld(b, func(tb testing.TB, t, i int) []interface{} {
		return []interface{}{syncedHostNamespace(tb, t, i)}
	})
}

// BenchmarkHostTenantNamespaceHeld reports the same per host object of
// 10,000 tenant Namespaces (each a host namespace and its members
// RoleBinding), whose maps of marks compacting shares.
func BenchmarkHostTenantNamespaceHeld(b *testing.B) {
	benchmarkHeld(b, func(tb testing.TB, t, i int) []interface{} {
		return []interface{}{syncedHostNamespace(tb, t, i), syncedRoleBinding(tb, t, i)}
	})
}

// benchmarkHeld reports the heap held per object by the host objects
// objectsOf returns for tenant Namespace i of tenant t, 100 tenants x 100,
// once the informers' transform has had them.
func benchmarkHeld(b *testing.B, objectsOf func(tb testing.TB, t, i int) []interface{}) {
	const tenants, perTenant = 100, 100
	n := tenants * perTenant * len(objectsOf(b, 0, 0))
	for _, c := range []struct {
		name      string
		transform func(interface{}) (interface{}, error)
	}{
		{"managed-fields-dropped", func(obj interface{}) (interface{}, error) {
			obj.(metav1.Object).SetManagedFields(nil)
			return obj, nil
		}},
		{"compact", host.Compact},
		{"held", func(obj interface{}) (interface{}, error) {
			if _, ok := obj.(*rbacv1.RoleBinding); ok {
				return host.HoldRoleBinding(obj)
			}
			return host.HoldNamespace(obj)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			interntest.Held(b, func() []interface{} {
				cache := make([]interface{}, 0, n)
				for t := 0; t < tenants; t++ {
					for i := 0; i < perTenant; i++ {
						for _, obj := range objectsOf(b, t, i) {
							obj, err := c.transform(obj)
							if err != nil {
								b.Fatal(err)
							}
							cache = append(cache, obj)
						}
					}
				}
				return cache
			})
		})
	}
}

// BenchmarkHostRoleBindingsIndexed reports the heap an informer's store
// of 10,000 compacted members RoleBindings (100 tenants x 100 host
// namespaces, one in each) holds per RoleBinding: indexed by tenant, as the
// syncer's is, and by tenant and by namespace, as an informer factory's
// is by default (a set of one key per namespace).
func BenchmarkHostRoleBindingsIndexed(b *testing.B) {
	const tenants, perTenant = 100, 100
	byTenant := func(obj interface{}) ([]string, error) {
		return []string{obj.(metav1.Object).GetLabels()["tenant.io/tenant"]}, nil
	}
	for _, c := range []struct {
		name     string
		indexers cache.Indexers
	}{
		{"by-tenant", cache.Indexers{"tenant": byTenant}},
		{"by-tenant-and-namespace", cache.Indexers{"tenant": byTenant, cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}},
	} {
		b.Run(c.name, func(b *testing.B) {
			interntest.HeldPer(b, tenants*perTenant, func() cache.Indexer {
				store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, c.indexers)
				for t := 0; t < tenants; t++ {
					for i := 0; i < perTenant; i++ {
						obj, err := host.Compact(syncedRoleBinding(b, t, i))
						if err != nil {
							b.Fatal(err)
						}
						if err := store.Add(obj); err != nil {
							b.Fatal(err)
						}
					}
				}
				return store
			})
		})
	}
}

// TestClientsAskNoCompression lists namespaces through clients made from
// Protobuf and Uncompressed configurations against a TLS server that records
// what they accept: neither asks for gzip, and the given configuration,
// which does, is left as it was.
func TestClientsAskNoCompression(t *testing.T) {
	var mu sync.Mutex
	var accepted []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		accepted = append(accepted, r.Header.Get("Accept-Encoding"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"NamespaceList","apiVersion":"v1","metadata":{},"items":[]}`))
	}))
	defer srv.Close()
	// Over TLS, as to the host: client-go gives a plain HTTP client Go's
	// default transport, whatever it asks.
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	for _, c := range []*rest.Config{cfg, host.Protobuf(cfg), host.Uncompressed(cfg)} {
		client, err := kubernetes.NewForConfig(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(accepted) != 3 || !strings.Contains(accepted[0], "gzip") || accepted[1] != "" || accepted[2] != "" {
		t.Errorf("Accept-Encoding of the given, protobuf and uncompressed clients: %q; want gzip, none, none", accepted)
	}
	if cfg.DisableCompression || cfg.ContentType != "" {
		t.Errorf("the given configuration changed: %+v", cfg)
	}
}
