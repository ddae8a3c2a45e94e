package host_test

import (
	"maps"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/intern/interntest"
)

// TestPairs: Pairs read as the map they were made from, entry by entry and
// whole; the entries that name no one object are one array for every map
// of equal such entries.
func TestPairs(t *testing.T) {
	a, b, other := syncedHostNamespace(t, 1, 1), syncedHostNamespace(t, 1, 2), syncedHostNamespace(t, 2, 1)
	pa, pb, po := host.PairsOf(a.Labels), host.PairsOf(b.Labels), host.PairsOf(other.Labels)
	if got := pa.Map(); !maps.Equal(got, a.Labels) {
		t.Errorf("Map: %v, want %v", got, a.Labels)
	}
	if pa.Len() != len(a.Labels) {
		t.Errorf("Len %d, want %d", pa.Len(), len(a.Labels))
	}
	for k, v := range a.Labels {
		if got, ok := pa.Get(k); !ok || got != v {
			t.Errorf("Get(%q) = %q, %v; want %q", k, got, ok, v)
		}
	}
	if got, ok := pa.Get("example.com/absent"); ok || got != "" {
		t.Errorf("Get of an absent key = %q, %v", got, ok)
	}
	if !host.SameShared(pa, pb) {
		t.Error("two namespaces of one tenant and network hold two arrays of the entries they share")
	}
	if host.SameShared(pa, po) {
		t.Error("namespaces of two tenants hold one array of different entries")
	}
	if got := host.PairsOf(nil); got.Len() != 0 || got.Map() != nil {
		t.Errorf("PairsOf(nil) = %v", got.Map())
	}
	// Owner UIDs alone.
	ann := host.PairsOf(a.Annotations)
	if !maps.Equal(ann.Map(), a.Annotations) {
		t.Errorf("annotations: %v, want %v", ann.Map(), a.Annotations)
	}
}

// TestHoldRoleBinding: a held RoleBinding reads as the RoleBinding it was
// made from, in everything it holds; setting a field panics, and what is
// not a RoleBinding passes through.
func TestHoldRoleBinding(t *testing.T) {
	rb := syncedRoleBinding(t, 1, 1)
	want := rb.DeepCopy()
	want.Finalizers = []string{"example.com/audit"}
	rb.Finalizers = want.Finalizers
	obj, err := host.HoldRoleBinding(rb)
	if err != nil {
		t.Fatal(err)
	}
	held, ok := obj.(*host.HeldRoleBinding)
	if !ok {
		t.Fatalf("HoldRoleBinding returned a %T", obj)
	}
	again, err := host.HoldRoleBinding(held)
	if err != nil || again != obj {
		t.Errorf("a held RoleBinding is transformed again: %v, %v", again, err)
	}
	got, err := host.HeldRoleBindingOf(held)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != want.Name || got.Namespace != want.Namespace || got.UID != want.UID || got.ResourceVersion != want.ResourceVersion ||
		!maps.Equal(got.Labels, want.Labels) || !maps.Equal(got.Annotations, want.Annotations) ||
		!slices.Equal(got.Subjects, want.Subjects) || got.RoleRef != want.RoleRef {
		t.Errorf("held RoleBinding reads as\n%+v\nwant\n%+v", got, want)
	}
	if got.Finalizers != nil || held.GetFinalizers() != nil {
		t.Errorf("a held RoleBinding holds its finalizers: %v", got.Finalizers)
	}
	var m metav1.Object = held
	if m.GetLabels()["tenant.io/tenant"] != "tenant-0001" || m.GetAnnotations()["tenant.io/owner-uid"] != want.Annotations["tenant.io/owner-uid"] {
		t.Errorf("metadata read through metav1.Object: %v %v", m.GetLabels(), m.GetAnnotations())
	}
	if whole, err := host.HeldRoleBindingOf(rb); err != nil || whole != rb {
		t.Errorf("a whole RoleBinding is not passed through: %v", err)
	}
	if _, err := host.HeldRoleBindingOf("x"); err == nil {
		t.Error("HeldRoleBindingOf(non-RoleBinding): no error")
	}
	if got, err := host.HoldRoleBinding("x"); err != nil || got != "x" {
		t.Errorf("HoldRoleBinding(non-object) = %v, %v", got, err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("setting a held object's labels did not panic")
			}
		}()
		m.SetLabels(map[string]string{"a": "b"})
	}()
}

// TestHoldNamespace: a held namespace reads as the namespace it was made
// from, in everything it holds; equal finalizers are one array.
func TestHoldNamespace(t *testing.T) {
	ns, other := syncedHostNamespace(t, 1, 1), syncedHostNamespace(t, 1, 2)
	want := ns.DeepCopy()
	obj, err := host.HoldNamespace(ns)
	if err != nil {
		t.Fatal(err)
	}
	held, ok := obj.(*host.HeldNamespace)
	if !ok {
		t.Fatalf("HoldNamespace returned a %T", obj)
	}
	if again, err := host.HoldNamespace(held); err != nil || again != obj {
		t.Errorf("a held namespace is transformed again: %v, %v", again, err)
	}
	got, err := host.HeldNamespaceOf(held)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != want.Name || got.UID != want.UID || got.ResourceVersion != want.ResourceVersion ||
		!maps.Equal(got.Labels, want.Labels) || !maps.Equal(got.Annotations, want.Annotations) ||
		!slices.Equal(got.Spec.Finalizers, want.Spec.Finalizers) || got.Status.Phase != want.Status.Phase {
		t.Errorf("held namespace reads as\n%+v\nwant\n%+v", got, want)
	}
	if got.ManagedFields != nil {
		t.Errorf("a held namespace holds managed fields")
	}
	otherHeld, err := host.HoldNamespace(other)
	if err != nil {
		t.Fatal(err)
	}
	if f := otherHeld.(*host.HeldNamespace).Finalizers; &f[0] != &held.Finalizers[0] {
		t.Error("two held namespaces hold two arrays of equal finalizers")
	}
	if !host.SameShared(held.Labels, otherHeld.(*host.HeldNamespace).Labels) {
		t.Error("two held namespaces of one tenant hold two arrays of the labels they share")
	}
	if whole, err := host.HeldNamespaceOf(ns); err != nil || whole != ns {
		t.Errorf("a whole namespace is not passed through: %v", err)
	}
	if _, err := host.HeldNamespaceOf(held.Namespace().Spec); err == nil {
		t.Error("HeldNamespaceOf(non-namespace): no error")
	}
}

// BenchmarkHostRoleBindingHeld reports the heap that 10,000 members
// RoleBindings (100 tenants x 100) hold in the syncer's informer, per
// RoleBinding: compacted, as the informers of other kinds keep their
// objects, and held (only what the syncer compares, host.HeldRoleBinding).
func BenchmarkHostRoleBindingHeld(b *testing.B) {
	for _, c := range []struct {
		name      string
		transform func(interface{}) (interface{}, error)
	}{
		{"compact", host.Compact},
		{"held", host.HoldRoleBinding},
	} {
		b.Run(c.name, func(b *testing.B) {
			interntest.Held(b, func() []interface{} {
				out := make([]interface{}, 0, 100*100)
				for t := 0; t < 100; t++ {
					for i := 0; i < 100; i++ {
						obj, err := c.transform(syncedRoleBinding(b, t, i))
						if err != nil {
							b.Fatal(err)
						}
						out = append(out, obj)
					}
				}
				return out
			})
		})
	}
}
