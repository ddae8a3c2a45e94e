package intern

import (
	"runtime"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSharedFields(t *testing.T) {
	const status = `{"f:status":{"f:phase":{}}}`
	a := SharedFields(metav1.NewFieldsV1(status))
	b := SharedFields(metav1.NewFieldsV1(status))
	other := SharedFields(metav1.NewFieldsV1(`{"f:spec":{"f:network":{}}}`))
	if a != b {
		t.Error("two equal field sets are two")
	}
	if other == a || other.String() != `{"f:spec":{"f:network":{}}}` {
		t.Errorf("a different field set came back as %q", other.String())
	}
	if a.String() != status {
		t.Errorf("shared field set %q, want %q", a.String(), status)
	}
	if SharedFields(nil) != nil {
		t.Error("nil field set came back set")
	}
	if empty := (&metav1.FieldsV1{}); SharedFields(empty) != empty {
		t.Error("an empty field set was swapped")
	}
	// Once no one holds it, the table does not keep it: the next equal
	// set is the caller's own.
	runtime.KeepAlive(b) // and no further, a neither
	runtime.GC()
	runtime.GC()
	c := metav1.NewFieldsV1(status)
	if got := SharedFields(c); got != c {
		t.Error("a field set no one held was kept")
	}
	runtime.KeepAlive(c)
}
