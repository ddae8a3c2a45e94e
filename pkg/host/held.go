package host

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/intern"
)

// Held objects are what the syncer's informers keep of the host objects
// it makes one of for every tenant Namespace: their identity, their
// labels and annotations, and the fields the syncer compares, and nothing
// else. A decoded object holds each label and annotation map as a Go map,
// and a Go map costs 344 bytes up to eight entries and 672 from the
// ninth; every map of these objects names its object (its namespace, its
// owner's UID), so no two are equal and none can be shared. A held object
// keeps its labels and annotations as Pairs instead: the entries that name
// it in a short array of its own, the rest in an array shared with every
// object whose other entries are equal (those of one tenant's namespaces).
//
// A held object implements metav1.Object for reading. Its maps are made
// on each call of GetLabels and GetAnnotations (Pairs.Get reads one entry
// without); what it does not hold reads as empty, and setting it panics:
// a held object is read-only, and a writer reads the host's whole object
// first (controller.HostKind with Held).

// ownKeys are the label and annotation keys whose values name one object:
// its name, its tenant Namespace, its owner, when its owner changed and
// when it was detached from its network.
var ownKeys = map[string]bool{
	corev1.LabelMetadataName:      true,
	hostnames.NamespaceLabel:      true,
	hostnames.OwnerUIDAnnotation:  true,
	hostnames.ChangedAtAnnotation: true,
	hostnames.DetachedAnnotation:  true,
}

// Pairs is a read-only string map of a held object: keys and values in
// turn, sorted by key, the entries whose key is one of ownKeys in own and
// the rest in shared, an array shared by every Pairs of equal entries.
type Pairs struct {
	shared, own []string
}

var pairTable = intern.NewSliceTable[string]()

// PairsOf returns m as Pairs, its keys and shared values interned.
func PairsOf(m map[string]string) Pairs {
	if len(m) == 0 {
		return Pairs{}
	}
	keys := make([]string, 0, len(m))
	nOwn := 0
	for k := range m {
		keys = append(keys, k)
		if ownKeys[k] {
			nOwn++
		}
	}
	slices.Sort(keys)
	shared := make([]string, 0, 2*(len(m)-nOwn))
	var own []string
	if nOwn > 0 {
		own = make([]string, 0, 2*nOwn)
	}
	for _, k := range keys {
		if ownKeys[k] {
			own = append(own, k, m[k])
		} else {
			shared = append(shared, k, m[k])
		}
	}
	for i := range shared {
		shared[i] = intern.String(shared[i])
	}
	for i := 0; i < len(own); i += 2 {
		own[i] = intern.String(own[i]) // the values name this object: no other holds them
	}
	return Pairs{shared: pairTable.Shared(shared), own: own}
}

// Get returns the value of key k.
func (p Pairs) Get(k string) (string, bool) {
	list := p.shared
	if ownKeys[k] {
		list = p.own
	}
	for i := 0; i < len(list); i += 2 {
		if list[i] == k {
			return list[i+1], true
		}
	}
	return "", false
}

// Len is the number of entries.
func (p Pairs) Len() int { return (len(p.shared) + len(p.own)) / 2 }

// Map returns the entries as a new map (nil when there are none).
func (p Pairs) Map() map[string]string {
	if p.Len() == 0 {
		return nil
	}
	m := make(map[string]string, p.Len())
	for _, list := range [2][]string{p.shared, p.own} {
		for i := 0; i < len(list); i += 2 {
			m[list[i]] = list[i+1]
		}
	}
	return m
}

// HeldMeta is the metadata a held object keeps. It implements
// metav1.Object for reading.
type HeldMeta struct {
	namespace, name   string
	uid               types.UID
	resourceVersion   string
	deletionTimestamp *metav1.Time
	// Labels and Annotations are the object's.
	Labels, Annotations Pairs
}

func heldMetaOf(m *metav1.ObjectMeta) HeldMeta {
	h := HeldMeta{
		namespace: m.Namespace, name: m.Name, uid: m.UID, resourceVersion: m.ResourceVersion,
		deletionTimestamp: m.DeletionTimestamp,
		Labels:            PairsOf(m.Labels), Annotations: PairsOf(m.Annotations),
	}
	// A namespace's kubernetes.io/metadata.name is its name: one string.
	for i := 1; i < len(h.Labels.own); i += 2 {
		if h.Labels.own[i] == h.name {
			h.Labels.own[i] = h.name
		}
	}
	return h
}

// objectMeta is what HeldMeta holds as metadata.
func (h *HeldMeta) objectMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Namespace: h.namespace, Name: h.name, UID: h.uid, ResourceVersion: h.resourceVersion,
		DeletionTimestamp: h.deletionTimestamp, Labels: h.Labels.Map(), Annotations: h.Annotations.Map(),
	}
}

func readOnly(what string) {
	panic(fmt.Sprintf("host: %s of a held object set: held objects are read-only, write the host's whole object", what))
}

func (h *HeldMeta) GetNamespace() string                          { return h.namespace }
func (h *HeldMeta) GetName() string                               { return h.name }
func (h *HeldMeta) GetGenerateName() string                       { return "" }
func (h *HeldMeta) GetUID() types.UID                             { return h.uid }
func (h *HeldMeta) GetResourceVersion() string                    { return h.resourceVersion }
func (h *HeldMeta) GetGeneration() int64                          { return 0 }
func (h *HeldMeta) GetSelfLink() string                           { return "" }
func (h *HeldMeta) GetCreationTimestamp() metav1.Time             { return metav1.Time{} }
func (h *HeldMeta) GetDeletionTimestamp() *metav1.Time            { return h.deletionTimestamp }
func (h *HeldMeta) GetDeletionGracePeriodSeconds() *int64         { return nil }
func (h *HeldMeta) GetLabels() map[string]string                  { return h.Labels.Map() }
func (h *HeldMeta) GetAnnotations() map[string]string             { return h.Annotations.Map() }
func (h *HeldMeta) GetFinalizers() []string                       { return nil }
func (h *HeldMeta) GetOwnerReferences() []metav1.OwnerReference   { return nil }
func (h *HeldMeta) GetManagedFields() []metav1.ManagedFieldsEntry { return nil }

func (h *HeldMeta) SetNamespace(string)                          { readOnly("namespace") }
func (h *HeldMeta) SetName(string)                               { readOnly("name") }
func (h *HeldMeta) SetGenerateName(string)                       { readOnly("generateName") }
func (h *HeldMeta) SetUID(types.UID)                             { readOnly("uid") }
func (h *HeldMeta) SetResourceVersion(string)                    { readOnly("resourceVersion") }
func (h *HeldMeta) SetGeneration(int64)                          { readOnly("generation") }
func (h *HeldMeta) SetSelfLink(string)                           { readOnly("selfLink") }
func (h *HeldMeta) SetCreationTimestamp(metav1.Time)             { readOnly("creationTimestamp") }
func (h *HeldMeta) SetDeletionTimestamp(*metav1.Time)            { readOnly("deletionTimestamp") }
func (h *HeldMeta) SetDeletionGracePeriodSeconds(*int64)         { readOnly("deletionGracePeriodSeconds") }
func (h *HeldMeta) SetLabels(map[string]string)                  { readOnly("labels") }
func (h *HeldMeta) SetAnnotations(map[string]string)             { readOnly("annotations") }
func (h *HeldMeta) SetFinalizers([]string)                       { readOnly("finalizers") }
func (h *HeldMeta) SetOwnerReferences([]metav1.OwnerReference)   { readOnly("ownerReferences") }
func (h *HeldMeta) SetManagedFields([]metav1.ManagedFieldsEntry) { readOnly("managedFields") }

var _ metav1.Object = &HeldMeta{}

// Label returns the value of label k ("" when there is none), without
// making a map.
func (h *HeldMeta) Label(k string) string {
	v, _ := h.Labels.Get(k)
	return v
}

// Annotation returns the value of annotation k ("" when there is none),
// without making a map.
func (h *HeldMeta) Annotation(k string) string {
	v, _ := h.Annotations.Get(k)
	return v
}

// HeldRoleBinding is what the syncer's informer keeps of a host
// RoleBinding: its metadata as HeldMeta, its subjects (one array for every
// RoleBinding of equal subjects, as Compact makes them) and its role.
type HeldRoleBinding struct {
	HeldMeta
	Subjects []rbacv1.Subject
	RoleRef  rbacv1.RoleRef
}

// HoldRoleBinding is the transform of the syncer's informer of
// RoleBindings: a *rbacv1.RoleBinding becomes a *HeldRoleBinding; anything
// else (a held one, a tombstone) is passed through.
func HoldRoleBinding(obj interface{}) (interface{}, error) {
	rb, ok := obj.(*rbacv1.RoleBinding)
	if !ok {
		return obj, nil
	}
	compactRoleBinding(rb)
	h := &HeldRoleBinding{HeldMeta: heldMetaOf(&rb.ObjectMeta), Subjects: rb.Subjects, RoleRef: rb.RoleRef}
	h.name = intern.String(h.name) // every members RoleBinding's name is one
	return h, nil
}

// RoleBinding returns the RoleBinding h holds, as far as it holds it: the
// fields it does not hold are empty. Its subjects are shared: they must
// not be written.
func (h *HeldRoleBinding) RoleBinding() *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: h.objectMeta(), Subjects: h.Subjects, RoleRef: h.RoleRef}
}

// HeldRoleBindingOf returns obj, a held RoleBinding or a whole one (a
// syncer's write the informer does not show yet), as a RoleBinding.
func HeldRoleBindingOf(obj interface{}) (*rbacv1.RoleBinding, error) {
	switch o := obj.(type) {
	case *HeldRoleBinding:
		return o.RoleBinding(), nil
	case *rbacv1.RoleBinding:
		return o, nil
	}
	return nil, fmt.Errorf("host: %T is not a RoleBinding", obj)
}

// HeldNamespace is what the syncer's informer keeps of a host namespace it
// made: its metadata as HeldMeta, its finalizers (one array for every
// namespace of equal finalizers, as Compact makes them) and its phase.
type HeldNamespace struct {
	HeldMeta
	Finalizers []corev1.FinalizerName
	Phase      corev1.NamespacePhase
}

// HoldNamespace is the transform of the syncer's informer of host
// namespaces: a *corev1.Namespace becomes a *HeldNamespace; anything else
// (a held one, a tombstone) is passed through.
func HoldNamespace(obj interface{}) (interface{}, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return obj, nil
	}
	compactNamespace(ns)
	return &HeldNamespace{HeldMeta: heldMetaOf(&ns.ObjectMeta), Finalizers: ns.Spec.Finalizers, Phase: ns.Status.Phase}, nil
}

// Namespace returns the namespace h holds, as far as it holds it: the
// fields it does not hold are empty. Its finalizers are shared: they must
// not be written.
func (h *HeldNamespace) Namespace() *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: h.objectMeta(), Spec: corev1.NamespaceSpec{Finalizers: h.Finalizers}, Status: corev1.NamespaceStatus{Phase: h.Phase}}
}

// HeldNamespaceOf returns obj, a held namespace or a whole one (a
// syncer's write the informer does not show yet), as a namespace.
func HeldNamespaceOf(obj interface{}) (*corev1.Namespace, error) {
	switch o := obj.(type) {
	case *HeldNamespace:
		return o.Namespace(), nil
	case *corev1.Namespace:
		return o, nil
	}
	return nil, fmt.Errorf("host: %T is not a Namespace", obj)
}
