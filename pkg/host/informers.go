package host

import "k8s.io/apimachinery/pkg/api/meta"

// WithoutManagedFields is the transform of an informer of host objects:
// it drops their managed fields as they enter the cache. Nothing here
// reads them, they are often the largest part of an object, and an update
// of a cached copy without them keeps the ones the host has.
func WithoutManagedFields(obj interface{}) (interface{}, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
