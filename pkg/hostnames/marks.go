package hostnames

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Marks are the labels and annotations that make a host object the
// syncer's: which tenant (by name and UID) it was made for, which tenant
// object it realises (kind label and name), and that object's UID.
type Marks struct {
	Tenant    string
	TenantUID types.UID
	// KindLabel (e.g. NamespaceLabel) and Name name the tenant object;
	// KindLabel is empty for objects of the Tenant itself.
	KindLabel string
	Name      string
	OwnerUID  types.UID
	// ChangedBy is the user who last changed the tenant object (its
	// ChangedByAnnotation); recorded on the host object when set, never
	// part of what makes a host object the syncer's.
	ChangedBy string
}

// ChangedBy returns the user recorded on tenant object obj as the last to
// change it: the value of Marks.ChangedBy.
func ChangedBy(obj metav1.Object) string { return obj.GetAnnotations()[ChangedByAnnotation] }

// Labels are the marks' labels.
func (m Marks) Labels() map[string]string {
	l := map[string]string{TenantLabel: m.Tenant}
	if m.KindLabel != "" {
		l[m.KindLabel] = m.Name
	}
	return l
}

// Annotations are the marks' annotations.
func (m Marks) Annotations() map[string]string {
	a := map[string]string{OwnerUIDAnnotation: string(m.OwnerUID), TenantUIDAnnotation: string(m.TenantUID)}
	if m.ChangedBy != "" {
		a[ChangedByAnnotation] = m.ChangedBy
	}
	return a
}

// UIDLabels are the owner and tenant UIDs as labels (under the keys of
// their annotations), for host kinds whose annotations are not the
// syncer's alone: OVN-Kubernetes' cluster-manager replaces all of an
// EgressIP's annotations when it gives it a mark. MarksOf and OwnedBy read
// them where the annotations are missing, so such an object is still known
// as the syncer's, and Ensure puts the annotations back.
func (m Marks) UIDLabels() map[string]string {
	return map[string]string{OwnerUIDAnnotation: string(m.OwnerUID), TenantUIDAnnotation: string(m.TenantUID)}
}

// WithUIDLabels adds the UID labels of m to labels and returns it.
func (m Marks) WithUIDLabels(labels map[string]string) map[string]string {
	for k, v := range m.UIDLabels() {
		labels[k] = v
	}
	return labels
}

// LabelReader is an object that reads its labels and annotations one at a
// time without making maps: the host objects the syncer's informers hold
// in part (host.HeldMeta).
type LabelReader interface {
	Label(key string) string
	Annotation(key string) string
}

// Label is obj's label key ("" when it has none), read without making a
// map when obj is a LabelReader.
func Label(obj metav1.Object, key string) string {
	if r, ok := obj.(LabelReader); ok {
		return r.Label(key)
	}
	return obj.GetLabels()[key]
}

// annotation is obj's annotation key.
func annotation(obj metav1.Object, key string) string {
	if r, ok := obj.(LabelReader); ok {
		return r.Annotation(key)
	}
	return obj.GetAnnotations()[key]
}

// uidMark is the UID mark key of obj: its annotation, else its label.
func uidMark(obj metav1.Object, key string) string {
	if v := annotation(obj, key); v != "" {
		return v
	}
	return Label(obj, key)
}

// Apply sets the marks on obj, keeping its other labels and annotations.
func (m Marks) Apply(obj metav1.Object) {
	obj.SetLabels(merge(obj.GetLabels(), m.Labels()))
	obj.SetAnnotations(merge(obj.GetAnnotations(), m.Annotations()))
}

// On says whether obj carries every mark as it should.
func (m Marks) On(obj metav1.Object) bool {
	return contains(obj.GetLabels(), m.Labels()) && contains(obj.GetAnnotations(), m.Annotations())
}

// OwnedBy says whether obj is the syncer's object for owner: the only
// objects the syncer ever updates or deletes. A name alone never makes an
// object the syncer's, so a host object someone else made under the name
// the syncer would have used is left alone.
func OwnedBy(obj metav1.Object, owner types.UID) bool {
	return owner != "" && uidMark(obj, OwnerUIDAnnotation) == string(owner)
}

// MarksOf returns the marks a host object carries, and whether it carries
// the full set that only the syncer writes (tenant label, tenant UID and
// owner UID annotations). kindLabel is the label naming its tenant object
// ("" for the Tenant's own objects).
func MarksOf(obj metav1.Object, kindLabel string) (Marks, bool) {
	m := Marks{
		Tenant: Label(obj, TenantLabel), TenantUID: types.UID(uidMark(obj, TenantUIDAnnotation)),
		KindLabel: kindLabel, OwnerUID: types.UID(uidMark(obj, OwnerUIDAnnotation)),
	}
	ok := m.Tenant != "" && m.TenantUID != "" && m.OwnerUID != ""
	if kindLabel != "" {
		m.Name = Label(obj, kindLabel)
		ok = ok && m.Name != ""
	}
	return m, ok
}

func merge(into, from map[string]string) map[string]string {
	out := make(map[string]string, len(into)+len(from))
	for k, v := range into {
		out[k] = v
	}
	for k, v := range from {
		out[k] = v
	}
	return out
}

func contains(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}
