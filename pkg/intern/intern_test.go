package intern

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"unsafe"
)

func TestString(t *testing.T) {
	// Two copies of one string, as two decoded objects hold them.
	a, b := strings.Clone("tenant.io/tenant"), strings.Clone("tenant.io/tenant")
	if unsafe.StringData(a) == unsafe.StringData(b) {
		t.Fatal("the test's copies are one")
	}
	x, y := String(a), String(b)
	if x != a || y != b {
		t.Errorf("String changed the value: %q, %q", x, y)
	}
	if unsafe.StringData(x) != unsafe.StringData(y) {
		t.Error("equal strings interned apart")
	}
	if String("") != "" {
		t.Error("empty string changed")
	}
}

func TestStringStartsOverWhenFull(t *testing.T) {
	for i := 0; i < 3*maxStrings; i++ {
		s := fmt.Sprintf("uid-%d", i)
		if got := String(s); got != s {
			t.Fatalf("String(%q) = %q", s, got)
		}
	}
	table.Lock()
	n := len(table.m)
	table.Unlock()
	if n > maxStrings {
		t.Errorf("table holds %d strings, more than %d", n, maxStrings)
	}
	// Shared again once seen twice after the start over.
	x, y := String(strings.Clone("restricted")), String(strings.Clone("restricted"))
	if unsafe.StringData(x) != unsafe.StringData(y) {
		t.Error("not shared after the table started over")
	}
}

func TestMap(t *testing.T) {
	in := map[string]string{"tenant.io/tenant": "acme", "team": "payments"}
	out := Map(in)
	if !maps.Equal(in, out) {
		t.Errorf("Map(%v) = %v", in, out)
	}
	out["x"] = "y"
	if _, ok := in["x"]; ok {
		t.Error("Map returned the map it was given")
	}
	if Map(nil) != nil {
		t.Error("Map(nil) is not nil")
	}
}

func TestStrings(t *testing.T) {
	a, b, empty := strings.Clone("Synced"), strings.Clone("Synced"), ""
	Strings(&a, &b, &empty)
	if a != "Synced" || b != "Synced" || empty != "" {
		t.Errorf("Strings changed the values: %q %q %q", a, b, empty)
	}
	if unsafe.StringData(a) != unsafe.StringData(b) || unsafe.StringData(a) != unsafe.StringData(String(strings.Clone("Synced"))) {
		t.Error("equal strings interned apart")
	}
}
