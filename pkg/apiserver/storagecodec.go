package apiserver

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/intern"
)

// StorageCodec is the codec of tenant.io objects in etcd: JSON of
// v1alpha1, decoded into the internal types. The objects it decodes share
// their label and annotation keys and values, their managed-fields
// managers and versions, and their conditions' types, reasons and
// messages with the other objects it decoded, and equal label and
// annotation maps are one map (intern.SharedMap), equal managed-fields
// field sets one field set (intern.SharedFields): the watch caches hold
// every object of every tenant, and those strings are mostly alike, the
// labels of a tenant's objects all equal. Nothing writes into the label
// and annotation maps of a stored object (the strategies write the
// request's object, the syncer a deep copy), as nothing may into a watch
// cache's, nor into their field sets (the server's managed-fields code
// encodes new ones). A Tenant's maps are shared even when they name it
// (intern.SharedAcrossVersions): it is written for every quota charge of
// its tenant, and the watch cache's history holds tens of its versions.
func StorageCodec() runtime.Codec {
	return compactingCodec{Codec: Codecs.LegacyCodec(v1alpha1.SchemeGroupVersion)}
}

type compactingCodec struct {
	runtime.Codec
}

// Decode implements runtime.Decoder.
func (c compactingCodec) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, ok := decodeStored(data, defaults, into)
	if ok {
		compact(obj)
		return obj, gvk, nil
	}
	obj, gvk, err := c.Codec.Decode(data, defaults, into)
	if err == nil {
		compact(obj)
	}
	return obj, gvk, err
}

// decodeStored decodes a tenant.io object as this codec stores it, the
// JSON of a v1alpha1 object that starts with its kind and apiVersion, into
// the object the codec's own decoder makes of it (v1alpha1, defaulted,
// converted to the internal type, into when given). The watch caches
// decode such objects in the hundreds of thousands when they fill; this
// is faster than that decoder in two ways:
//   - that decoder reads the whole document once to find its kind before
//     it reads it into an object, a quarter of the time it takes a stored
//     Namespace; this reads the kind from the document's start;
//   - this reads the document with the JSON decoder of encoding/json/v2's
//     design (github.com/go-json-experiment/json), which takes about half
//     the time and half the allocations of the encoding/json reflection
//     that decoder uses. With its defaults it matches field names
//     case-sensitively and ignores unknown fields, as that decoder does;
//     it refuses duplicate names and invalid UTF-8, which that decoder
//     accepts: such a document goes the long way.
//
// ok is false for anything else (another form, a kind not of v1alpha1, an
// into of another kind, an error), which the codec's own decoder then
// reads and reports on as before.
func decodeStored(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, bool) {
	if defaults != nil {
		return nil, nil, false
	}
	kind, ok := storedKind(data)
	if !ok {
		return nil, nil, false
	}
	gvk := v1alpha1.SchemeGroupVersion.WithKind(kind)
	internal := schema.GroupVersionKind{Group: v1alpha1.GroupName, Version: runtime.APIVersionInternal, Kind: kind}
	if into == nil {
		obj, err := Scheme.New(internal)
		if err != nil {
			return nil, nil, false
		}
		into = obj
	} else if kinds, _, err := Scheme.ObjectKinds(into); err != nil || kinds[0] != internal {
		return nil, nil, false
	}
	versioned, err := Scheme.New(gvk)
	if err != nil {
		return nil, nil, false
	}
	// A second "kind" or "apiVersion" in the document, which the encoder
	// never writes, is a duplicate name: read such a document the long way,
	// where the later one decides the object's kind.
	if err := jsonv2.Unmarshal(data, versioned, storedOptions); err != nil || versioned.GetObjectKind().GroupVersionKind() != gvk {
		return nil, nil, false
	}
	Scheme.Default(versioned)
	if err := Scheme.Convert(versioned, into, runtime.InternalGroupVersioner); err != nil {
		return nil, nil, false
	}
	return into, &gvk, true
}

// storedOptions read a metav1.Time as its UnmarshalJSON does (null, or an
// RFC 3339 string, in local time), without the encoding/json.Unmarshal of
// the string that method makes: a stored Namespace holds four or five
// times, and reading it so takes 31 allocations instead of 43. Anything
// else is an error, as it is there, and the document goes the long way.
var storedOptions = jsonv2.WithUnmarshalers(jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, t *metav1.Time) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		t.Time = time.Time{}
		return nil
	case '"':
		parsed, err := time.Parse(time.RFC3339, tok.String())
		if err != nil {
			return err
		}
		t.Time = parsed.Local()
		return nil
	}
	return fmt.Errorf("a time is a string, not %v", tok.Kind())
}))

// storedPrefix and storedVersion frame what the encoder writes first: the
// kind, then the version.
const (
	storedPrefix  = `{"kind":"`
	storedVersion = `","apiVersion":"` + v1alpha1.GroupName + `/v1alpha1"`
)

// v1alpha1Kinds holds each kind of v1alpha1 by its name.
var v1alpha1Kinds = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	for kind := range Scheme.KnownTypes(v1alpha1.SchemeGroupVersion) {
		out[kind] = kind
	}
	return out
})

// storedKind returns the kind of a document that starts as the encoder
// writes a v1alpha1 object of a kind it knows, and whether it does.
func storedKind(data []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(data, []byte(storedPrefix))
	if !ok {
		return "", false
	}
	end := bytes.IndexByte(rest, '"')
	if end <= 0 || !bytes.HasPrefix(rest[end:], []byte(storedVersion)) {
		return "", false
	}
	if next := rest[end+len(storedVersion):]; len(next) == 0 || (next[0] != ',' && next[0] != '}') {
		return "", false
	}
	kind, ok := v1alpha1Kinds()[string(rest[:end])] // the map's string: none made per object
	return kind, ok
}

// compact interns the strings of a just-decoded object that objects share,
// and gives its managed fields and conditions arrays of their own length:
// the JSON decoders grow a slice by doubling, so that the three conditions
// of a synced Namespace (HostSynced, NetworkAttached, Ready) would hold
// room for four for as long as the watch cache holds the object.
func compact(obj runtime.Object) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	if _, ok := obj.(*tenant.Tenant); ok {
		intern.LabelsAcrossVersions(m)
	} else {
		intern.Labels(m)
	}
	managed := clipped(m.GetManagedFields())
	m.SetManagedFields(managed)
	for i := range managed {
		e := &managed[i]
		op := string(e.Operation)
		intern.Strings(&e.Manager, &e.APIVersion, &e.FieldsType, &e.Subresource, &op)
		e.Operation = metav1.ManagedFieldsOperationType(op)
		e.FieldsV1 = intern.SharedFields(e.FieldsV1)
	}
	if conditions := conditionsOf(obj); conditions != nil {
		*conditions = clipped(*conditions)
		for i := range *conditions {
			c := &(*conditions)[i]
			status := string(c.Status)
			intern.Strings(&c.Type, &c.Reason, &c.Message, &status)
			c.Status = metav1.ConditionStatus(status)
		}
	}
}

// clipped returns s, or a copy of it without room to grow when it has any.
func clipped[S ~[]E, E any](s S) S {
	if cap(s) == len(s) {
		return s
	}
	return slices.Clone(s)
}

// conditionsFields holds, by object type, the index path of its
// .Status.Conditions ([]metav1.Condition), or nil when it has none.
var conditionsFields sync.Map

var conditionsType = reflect.TypeFor[[]metav1.Condition]()

// conditionsOf returns the status conditions of obj, nil when its kind has none.
func conditionsOf(obj runtime.Object) *[]metav1.Condition {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	t := v.Elem().Type()
	path, ok := conditionsFields.Load(t)
	if !ok {
		var p []int
		if status, found := t.FieldByName("Status"); found && status.Type.Kind() == reflect.Struct {
			if c, found := status.Type.FieldByName("Conditions"); found && c.Type == conditionsType {
				p = append(append([]int{}, status.Index...), c.Index...)
			}
		}
		path, _ = conditionsFields.LoadOrStore(t, p)
	}
	p := path.([]int)
	if p == nil {
		return nil
	}
	return v.Elem().FieldByIndex(p).Addr().Interface().(*[]metav1.Condition)
}
