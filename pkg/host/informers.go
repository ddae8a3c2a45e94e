package host

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"tenant.io/tenant-apiserver/pkg/intern"
)

// Compact is the transform of an informer of host objects, applied as
// they enter its cache. It drops their managed fields: nothing here reads
// them, they are often the largest part of an object, and an update of a
// cached copy without them keeps the ones the host has. And it keeps one
// copy of each label and annotation key and value (and of a RoleBinding's
// subjects and role): every host object the syncer makes carries the same
// keys and, within a tenant, mostly the same values, which each decoded
// object would otherwise hold a copy of; equal label and annotation maps
// are one map (intern.SharedMap), as the marks of a host namespace and of
// its RoleBinding are. Equal subjects of RoleBindings are one array (every
// members RoleBinding of a tenant names its members), and so are equal
// finalizers of namespaces. Cached objects are read-only: a writer copies
// first.
func Compact(obj interface{}) (interface{}, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj, nil
	}
	m.SetManagedFields(nil)
	intern.Labels(m)
	switch o := obj.(type) {
	case *rbacv1.RoleBinding:
		compactRoleBinding(o)
	case *corev1.Namespace:
		compactNamespace(o)
	}
	return obj, nil
}

// compactRoleBinding interns rb's subjects and role, and makes its
// subjects the array shared by every RoleBinding of equal subjects.
func compactRoleBinding(rb *rbacv1.RoleBinding) {
	for i := range rb.Subjects {
		s := &rb.Subjects[i]
		intern.Strings(&s.Kind, &s.APIGroup, &s.Name, &s.Namespace)
	}
	rb.Subjects = subjects.Shared(rb.Subjects)
	intern.Strings(&rb.RoleRef.APIGroup, &rb.RoleRef.Kind, &rb.RoleRef.Name)
}

// compactNamespace interns ns's finalizers and phase, and makes its
// finalizers the array shared by every namespace of equal finalizers.
func compactNamespace(ns *corev1.Namespace) {
	for i := range ns.Spec.Finalizers {
		f := string(ns.Spec.Finalizers[i])
		ns.Spec.Finalizers[i] = corev1.FinalizerName(intern.String(f))
	}
	ns.Spec.Finalizers = finalizers.Shared(ns.Spec.Finalizers)
	ns.Status.Phase = corev1.NamespacePhase(intern.String(string(ns.Status.Phase)))
}

var (
	subjects   = intern.NewSliceTable[rbacv1.Subject]()
	finalizers = intern.NewSliceTable[corev1.FinalizerName]()
)

// Protobuf returns a copy of cfg whose clients send and accept protobuf
// (JSON too, when the host answers in it), uncompressed (see
// Uncompressed): for clients of the host's built-in kinds only, custom
// resources are served in JSON alone.
func Protobuf(cfg *rest.Config) *rest.Config {
	out := Uncompressed(cfg)
	out.ContentType = runtime.ContentTypeProtobuf
	out.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return out
}

// Uncompressed returns a copy of cfg whose clients do not ask the host to
// gzip its answers. The host compresses the large ones, which are the
// lists that fill informers: at 41,000 host namespaces a quarter of the
// host's CPU serving the lists of a restart went to compressing them, and
// this process spent half as much again taking them apart, for a
// connection within the cluster.
func Uncompressed(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.DisableCompression = true
	return out
}
