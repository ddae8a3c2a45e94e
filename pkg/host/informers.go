package host

import (
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// Compact is the transform of an informer of host objects, applied as
// they enter its cache. It drops their managed fields: nothing here reads
// them, they are often the largest part of an object, and an update of a
// cached copy without them keeps the ones the host has. And it keeps one
// copy of each label and annotation key and value (and of a RoleBinding's
// subjects and role): every host object the syncer makes carries the same
// keys and, within a tenant, mostly the same values, which each decoded
// object would otherwise hold a copy of.
func Compact(obj interface{}) (interface{}, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj, nil
	}
	m.SetManagedFields(nil)
	if l := m.GetLabels(); len(l) > 0 {
		m.SetLabels(internMap(l))
	}
	if a := m.GetAnnotations(); len(a) > 0 {
		m.SetAnnotations(internMap(a))
	}
	if rb, ok := obj.(*rbacv1.RoleBinding); ok {
		for i := range rb.Subjects {
			s := &rb.Subjects[i]
			s.Kind, s.APIGroup, s.Name, s.Namespace = intern(s.Kind), intern(s.APIGroup), intern(s.Name), intern(s.Namespace)
		}
		rb.RoleRef.APIGroup, rb.RoleRef.Kind, rb.RoleRef.Name = intern(rb.RoleRef.APIGroup), intern(rb.RoleRef.Kind), intern(rb.RoleRef.Name)
	}
	return obj, nil
}

// maxInterned bounds the strings the interner keeps: when full, it
// starts over (the objects keep the copies they hold), so that names and
// UIDs, which no two objects share, cost a bounded table, and the shared
// keys and values are soon in it again.
const maxInterned = 1 << 14

// interned are the strings Compact has handed out.
var interned = struct {
	sync.Mutex
	m map[string]string
}{m: make(map[string]string, maxInterned)}

// intern returns the copy of s that objects share.
func intern(s string) string {
	if s == "" {
		return s
	}
	interned.Lock()
	defer interned.Unlock()
	if v, ok := interned.m[s]; ok {
		return v
	}
	if len(interned.m) >= maxInterned {
		clear(interned.m)
	}
	interned.m[s] = s
	return s
}

// internMap returns a copy of m whose keys and values are interned.
func internMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[intern(k)] = intern(v)
	}
	return out
}

// Protobuf returns a copy of cfg whose clients send and accept protobuf
// (JSON too, when the host answers in it): for clients of the host's
// built-in kinds only, custom resources are served in JSON alone.
func Protobuf(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.ContentType = runtime.ContentTypeProtobuf
	out.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return out
}
