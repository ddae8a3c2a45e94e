package intern

import (
	"bytes"
	"hash/maphash"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A managed-fields entry holds the set of fields its manager set, as JSON,
// the same in every object of a kind that one client wrote the same way
// (every Namespace a tenant's tool creates alike). Only requests through
// the API record them: the syncer's in-process status writes add none.
// fieldsTable lets equal field sets be one.
var fieldsTable = newWeakTable[metav1.FieldsV1]()

// SharedFields returns a field set equal to f that it also returns for
// every equal one while any holder of the first lives: f itself the first
// time. Like SharedMap's maps, the field sets it returns are shared and
// must never be written (a deep copy copies them).
func SharedFields(f *metav1.FieldsV1) *metav1.FieldsV1 {
	if f == nil {
		return nil
	}
	raw := f.GetRawBytes()
	if len(raw) == 0 {
		return f
	}
	return fieldsTable.share(maphash.Bytes(fieldsTable.seed, raw), 0,
		func(p *metav1.FieldsV1) bool { return bytes.Equal(p.GetRawBytes(), raw) },
		func() *metav1.FieldsV1 { return f })
}
