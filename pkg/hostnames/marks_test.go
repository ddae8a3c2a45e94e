package hostnames

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMarks(t *testing.T) {
	m := Marks{Tenant: "acme", TenantUID: "tuid", KindLabel: NamespaceLabel, Name: "dev", OwnerUID: "nsuid"}
	obj := &metav1.ObjectMeta{Labels: map[string]string{"keep": "me", TenantLabel: "globex"}, Annotations: map[string]string{"other": "x"}}
	if m.On(obj) {
		t.Fatal("marks found on an unmarked object")
	}
	m.Apply(obj)
	if !m.On(obj) || obj.Labels["keep"] != "me" || obj.Annotations["other"] != "x" {
		t.Fatalf("after Apply: labels %v annotations %v", obj.Labels, obj.Annotations)
	}
	if obj.Labels[TenantLabel] != "acme" || obj.Labels[NamespaceLabel] != "dev" ||
		obj.Annotations[OwnerUIDAnnotation] != "nsuid" || obj.Annotations[TenantUIDAnnotation] != "tuid" {
		t.Fatalf("marks: labels %v annotations %v", obj.Labels, obj.Annotations)
	}
	if !OwnedBy(obj, "nsuid") || OwnedBy(obj, "other") || OwnedBy(obj, "") {
		t.Error("OwnedBy")
	}
	got, ok := MarksOf(obj, NamespaceLabel)
	if !ok || got != m {
		t.Errorf("MarksOf = %+v, %v; want %+v", got, ok, m)
	}

	// Someone else's namespace under the same name: no owner annotation,
	// not ours whatever its labels say.
	foreign := &metav1.ObjectMeta{Labels: map[string]string{TenantLabel: "acme", NamespaceLabel: "dev"}}
	if _, ok := MarksOf(foreign, NamespaceLabel); ok || OwnedBy(foreign, "nsuid") {
		t.Error("an object without the owner annotations counts as the syncer's")
	}
	// Tenant-level marks have no kind label.
	tm := Marks{Tenant: "acme", TenantUID: "tuid", OwnerUID: "tuid"}
	if l := tm.Labels(); len(l) != 1 || l[TenantLabel] != "acme" {
		t.Errorf("tenant marks labels %v", l)
	}
	if MetalLBPool("acme", "tuid") != NamespacePrefix("acme", "tuid") {
		t.Error("pool name is not the namespace prefix")
	}
}
