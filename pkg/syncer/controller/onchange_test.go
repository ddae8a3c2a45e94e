package controller

import (
	"slices"
	"testing"
)

// TestOnChange checks that adds and deletes always enqueue, and updates
// only when changed says so, with the new object.
func TestOnChange(t *testing.T) {
	type obj struct{ gen int }
	var got []interface{}
	h := OnChange(func(o interface{}) { got = append(got, o) }, func(o, n *obj) bool { return o.gen != n.gen })
	a, b, c := &obj{1}, &obj{1}, &obj{2}
	h.OnAdd(a, false)
	h.OnUpdate(a, b)
	h.OnUpdate(b, c)
	h.OnUpdate("not an obj", c)
	h.OnDelete(c)
	if want := []interface{}{a, c, c}; !slices.Equal(got, want) {
		t.Errorf("enqueued %v, want %v (the add, the update that changed gen, the delete)", got, want)
	}
}
