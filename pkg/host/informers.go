package host

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

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

// Protobuf returns a copy of cfg whose clients send and accept protobuf
// (JSON too, when the host answers in it): for clients of the host's
// built-in kinds only, custom resources are served in JSON alone.
func Protobuf(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.ContentType = runtime.ContentTypeProtobuf
	out.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return out
}
