package hostkinds

import (
	"reflect"
	"testing"

	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
)

// TestEveryHostKindKeepsWhatItWrote: every host kind of the catalogue,
// those read through the dynamic client included, reads what the syncer
// wrote before its informer shows it (TestRewrittenKindsKeepWhatTheyWrote
// shows what goes wrong without), and keeps it for its own informer,
// whose events say when the informer has caught up.
func TestEveryHostKindKeepsWhatItWrote(t *testing.T) {
	src, _ := controllertest.NewSources(t)
	// What the syncer wrote, by the address of the informer it is kept for.
	writtenOf := map[uintptr]uintptr{}
	add := func(inf cache.SharedIndexInformer) {
		if w := src.WrittenOf(inf); w != nil {
			writtenOf[reflect.ValueOf(inf).Pointer()] = reflect.ValueOf(w).Pointer()
		}
	}
	sv := reflect.ValueOf(src).Elem()
	for i := range sv.NumField() {
		if !sv.Type().Field(i).IsExported() {
			continue
		}
		if inf, ok := sv.Field(i).Interface().(cache.SharedIndexInformer); ok && inf != nil {
			add(inf)
		}
	}
	for _, inf := range src.HostMetalLB {
		add(inf)
	}

	check := func(name string, k reflect.Value) {
		t.Helper()
		written, informer := k.FieldByName("Written"), k.FieldByName("Informer")
		if !written.IsValid() || !informer.IsValid() {
			t.Fatalf("%s is not a host kind: %s", name, k.Type())
		}
		switch {
		case written.IsNil():
			t.Errorf("host kind %s keeps nothing it wrote", name)
		case informer.IsNil():
			t.Errorf("host kind %s has no informer", name)
		case writtenOf[informer.Elem().Pointer()] != written.Pointer():
			t.Errorf("host kind %s keeps what it wrote for another informer than its own", name)
		}
	}
	v := reflect.ValueOf(New(src)).Elem()
	n := 0
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if f.Kind() == reflect.Map {
			for _, key := range f.MapKeys() {
				check(name+"["+key.FieldByName("Resource").String()+"]", f.MapIndex(key))
				n++
			}
			continue
		}
		check(name, f)
		n++
	}
	if n < 16 {
		t.Errorf("checked %d host kinds, want every one of the catalogue's (16)", n)
	}
}
