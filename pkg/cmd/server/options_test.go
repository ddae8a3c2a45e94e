package server

import (
	"io"
	"strings"
	"testing"
)

// TestStorageMediaType: tenant.io objects are stored as JSON, and a flag
// asking for another encoding is refused instead of ignored.
func TestStorageMediaType(t *testing.T) {
	for _, c := range []struct {
		mediaType string
		refused   bool
	}{
		{"application/json", false},
		{"application/yaml", true},
		{"application/vnd.kubernetes.protobuf", true},
		{"application/cbor", true},
	} {
		o := NewOptions(io.Discard, io.Discard)
		o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList = []string{"http://127.0.0.1:2379"}
		o.RecommendedOptions.Etcd.DefaultStorageMediaType = c.mediaType
		err := o.Validate(nil)
		refused := err != nil && strings.Contains(err.Error(), "--storage-media-type")
		if refused != c.refused {
			t.Errorf("--storage-media-type=%s: refused %v, want %v (%v)", c.mediaType, refused, c.refused, err)
		}
	}
}
