package apiserver

import (
	"fmt"
	"maps"
	"math/rand"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	apifuzzer "k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	tenantfuzzer "tenant.io/tenant-apiserver/pkg/apis/tenant/fuzzer"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/intern/interntest"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// storedNamespaceOf is storedNamespace as Namespace i of tenant t: its
// own name, UID and host namespace, its tenant's labels, and the
// annotations the server records of who changed its spec and when.
func storedNamespaceOf(t, i int) *tenant.Namespace {
	ns := storedNamespace()
	ns.Name = fmt.Sprintf("team-%04d", i)
	ns.UID = types.UID(fmt.Sprintf("0b6f3c1e-8a41-4d0c-9d52-%012d", t*1000+i))
	ns.Labels = map[string]string{
		tenancy.TenantLabel:    fmt.Sprintf("acme-%04d", t),
		tenancy.TenantUIDLabel: fmt.Sprintf("5e6f7a8b-0000-4000-8000-%012d", t),
		"team":                 "payments",
	}
	ns.Annotations = map[string]string{
		hostnames.ChangedByAnnotation: "member-of-acme",
		hostnames.ChangedAtAnnotation: fmt.Sprintf("2026-11-26T04:%02d:%02d.%06dZ", i%60, t%60, t*1000+i),
	}
	ns.Status.HostNamespace = fmt.Sprintf("t-acme-%04d-team-%04d-5kq2x", t, i)
	// The syncer's messages name the tenant's network, not the host namespace.
	cudn := fmt.Sprintf("t-%04d-default-8c2d1f0a", t)
	c := ns.Status.Conditions
	c[0].Message = "the host namespace and its members RoleBinding match"
	c[1].Message = "OVN-Kubernetes rendered ClusterUserDefinedNetwork " + cudn + " into the host namespace (its NetworkAttachmentDefinition " + cudn + ")"
	c[2].Message = c[0].Message
	return ns
}

// namingHostNamespace is ns with condition messages that also name its
// host namespace, each a string of its own.
func namingHostNamespace(ns *tenant.Namespace) *tenant.Namespace {
	c := ns.Status.Conditions
	c[0].Message = "host namespace " + ns.Status.HostNamespace + " and its members RoleBinding match"
	c[1].Message = strings.Replace(c[1].Message, "(its NetworkAttachmentDefinition ", "(NetworkAttachmentDefinition "+ns.Status.HostNamespace+"/", 1)
	c[2].Message = c[0].Message
	return ns
}

func TestStorageCodec(t *testing.T) {
	codec := StorageCodec()
	decode := func(ns *tenant.Namespace) *tenant.Namespace {
		t.Helper()
		data, err := kruntime.Encode(codec, ns)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := kruntime.Decode(codec, data)
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*tenant.Namespace)
	}
	want := storedNamespaceOf(1, 1)
	a, b := decode(want), decode(storedNamespaceOf(1, 2))
	// What is stored comes back as it was.
	if !apiequality.Semantic.DeepEqual(a, want) {
		t.Errorf("decoded\n%+v\nwant\n%+v", a, want)
	}
	// Into an object of the caller's (etcd's Get and GuaranteedUpdate).
	data, err := kruntime.Encode(codec, want)
	if err != nil {
		t.Fatal(err)
	}
	into := &tenant.Namespace{}
	if err := kruntime.DecodeInto(codec, data, into); err != nil || !apiequality.Semantic.DeepEqual(into, want) {
		t.Errorf("decoded into\n%+v (%v)\nwant\n%+v", into, err, want)
	}
	// The strings objects have in common are one copy.
	for _, s := range []struct{ what, x, y string }{
		{"label key", interntest.KeyOf(a.Labels, tenancy.TenantLabel), interntest.KeyOf(b.Labels, tenancy.TenantLabel)},
		{"label value", a.Labels[tenancy.TenantLabel], b.Labels[tenancy.TenantLabel]},
		{"manager", a.ManagedFields[0].Manager, b.ManagedFields[0].Manager},
		{"managed API version", a.ManagedFields[0].APIVersion, into.ManagedFields[0].APIVersion},
		{"condition type", a.Status.Conditions[0].Type, b.Status.Conditions[0].Type},
		{"condition status", string(a.Status.Conditions[1].Status), string(b.Status.Conditions[0].Status)},
		{"condition message", a.Status.Conditions[1].Message, b.Status.Conditions[1].Message},
	} {
		if unsafe.StringData(s.x) != unsafe.StringData(s.y) {
			t.Errorf("%s %q: two copies", s.what, s.x)
		}
	}
	// Equal field sets are one: a client creates every Namespace alike.
	if a.ManagedFields[0].FieldsV1 != b.ManagedFields[0].FieldsV1 || into.ManagedFields[0].FieldsV1 != a.ManagedFields[0].FieldsV1 {
		t.Error("the field sets of two Namespaces created alike are two")
	}
	otherFields := storedNamespaceOf(1, 3)
	otherFields.ManagedFields[0].FieldsV1 = metav1.NewFieldsV1(`{"f:spec":{"f:network":{}}}`)
	if c := decode(otherFields); c.ManagedFields[0].FieldsV1 == a.ManagedFields[0].FieldsV1 || c.ManagedFields[0].FieldsV1.String() != `{"f:spec":{"f:network":{}}}` {
		t.Errorf("a different field set came back as %q", c.ManagedFields[0].FieldsV1.String())
	}
	// Equal label maps are one map: a tenant's objects share their labels.
	mapOf := func(m map[string]string) uintptr { return reflect.ValueOf(m).Pointer() }
	if mapOf(a.Labels) != mapOf(b.Labels) {
		t.Error("two objects of one tenant hold two label maps")
	}
	if again := decode(want); mapOf(again.Labels) != mapOf(a.Labels) {
		t.Error("two decodes of one object hold two label maps")
	}
	if mapOf(a.Annotations) == mapOf(b.Annotations) || !maps.Equal(b.Annotations, storedNamespaceOf(1, 2).Annotations) {
		t.Errorf("annotations of two objects: one map %v, second %v", mapOf(a.Annotations) == mapOf(b.Annotations), b.Annotations)
	}
	if other := decode(storedNamespaceOf(2, 1)); mapOf(other.Labels) == mapOf(a.Labels) || other.Labels[tenancy.TenantLabel] != "acme-0002" {
		t.Errorf("another tenant's object holds labels %v", other.Labels)
	}
	// A kind without conditions, and the unversioned kinds the codec also decodes.
	if conditionsOf(&metav1.Status{}) != nil {
		t.Error("conditions found in a metav1.Status")
	}
	if c := conditionsOf(a); c == nil || len(*c) != 3 {
		t.Errorf("conditions of a Namespace: %v", c)
	}
	// The decoders grow slices by doubling: three conditions would hold room for four.
	if c := a.Status.Conditions; cap(c) != len(c) {
		t.Errorf("%d conditions held in an array of %d", len(c), cap(c))
	}
	for _, obj := range []kruntime.Object{&tenant.Tenant{}, &tenant.Network{}, &tenant.FloatingIP{}, &tenant.LoadBalancer{}, &tenant.VRFPeering{}, &tenant.ProviderService{}, &tenant.AddressPool{}} {
		if conditionsOf(obj) == nil {
			t.Errorf("%T: no conditions found", obj)
		}
	}
}

// storedNamespaces returns 10,000 tenant Namespaces (1,000 tenants x 10)
// as codec stores them.
func storedNamespaces(b *testing.B, codec kruntime.Codec) [][]byte {
	return storedObjects(b, codec, 1000, 10, func(t, i int) kruntime.Object { return storedNamespaceOf(t, i) })
}

// storedObjects returns object(t, i) for each of tenants x perTenant, as
// codec stores them.
func storedObjects(b *testing.B, codec kruntime.Codec, tenants, perTenant int, object func(t, i int) kruntime.Object) [][]byte {
	stored := make([][]byte, 0, tenants*perTenant)
	for t := 0; t < tenants; t++ {
		for i := 0; i < perTenant; i++ {
			data, err := kruntime.Encode(codec, object(t, i))
			if err != nil {
				b.Fatal(err)
			}
			stored = append(stored, data)
		}
	}
	return stored
}

// BenchmarkStoredNamespaceHeld reports the heap that 10,000 stored tenant
// Namespaces (1,000 tenants x 10) hold once decoded, as a watch cache
// holds them: decoded by the plain storage codec, and by StorageCodec;
// and by StorageCodec with condition messages that name each Namespace's
// host namespace, which no two Namespaces share.
func BenchmarkStoredNamespaceHeld(b *testing.B) {
	plain := Codecs.LegacyCodec(v1alpha1.SchemeGroupVersion)
	stored := storedNamespaces(b, plain)
	named := storedObjects(b, plain, 1000, 10, func(t, i int) kruntime.Object { return namingHostNamespace(storedNamespaceOf(t, i)) })
	for _, c := range []struct {
		name   string
		codec  kruntime.Codec
		stored [][]byte
	}{{"plain", plain, stored}, {"storage-codec", StorageCodec(), stored}, {"storage-codec-messages-naming-host-namespace", StorageCodec(), named}} {
		b.Run(c.name, func(b *testing.B) {
			interntest.Held(b, func() []kruntime.Object {
				cache := make([]kruntime.Object, 0, len(c.stored))
				for _, data := range c.stored {
					obj, err := kruntime.Decode(c.codec, data)
					if err != nil {
						b.Fatal(err)
					}
					cache = append(cache, obj)
				}
				return cache
			})
		})
	}
}

// BenchmarkStoredDecode decodes stored tenant Namespaces (10,000 of 1,000
// tenants) into new objects, as a watch cache filling from etcd does: the
// codec's own decoder then the interning of StorageCodec ("decoder"), and
// StorageCodec ("storage-codec"), which reads what it stored the short way.
func BenchmarkStoredDecode(b *testing.B) {
	codec := StorageCodec()
	stored := storedNamespaces(b, codec)
	decoder := codec.(compactingCodec).Codec
	// The objects held, as a watch cache holds them: the shared strings and
	// maps of the decodes timed are in the tables already, for both.
	held := make([]kruntime.Object, 0, len(stored))
	for _, data := range stored {
		obj, err := kruntime.Decode(codec, data)
		if err != nil {
			b.Fatal(err)
		}
		held = append(held, obj)
	}
	defer runtime.KeepAlive(held)
	for _, c := range []struct {
		name   string
		decode func(data []byte, into kruntime.Object) error
	}{
		{"decoder", func(data []byte, into kruntime.Object) error {
			obj, _, err := decoder.Decode(data, nil, into)
			if err == nil {
				compact(obj)
			}
			return err
		}},
		{"storage-codec", func(data []byte, into kruntime.Object) error {
			_, _, err := codec.Decode(data, nil, into)
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if err := c.decode(stored[n%len(stored)], &tenant.Namespace{}); err != nil {
					b.Fatal(err)
				}
				n++
			}
		})
	}
}

// TestStoredDecodeReadsAsTheDecoder fills every tenant.io kind at random,
// stores it as the server does and reads it back both ways: the short way
// the codec takes for what it stored itself, and the codec's own decoder.
// Both must give the same object, with the caller's object to decode into
// and without one.
func TestStoredDecodeReadsAsTheDecoder(t *testing.T) {
	codec := StorageCodec()
	decoder := codec.(compactingCodec).Codec
	filler := apifuzzer.FuzzerFor(apifuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, tenantfuzzer.Funcs), rand.NewSource(1), Codecs)
	internal := schema.GroupVersion{Group: v1alpha1.GroupName, Version: kruntime.APIVersionInternal}
	kinds := 0
	for kind, typ := range Scheme.KnownTypes(internal) {
		if typ.PkgPath() != reflect.TypeFor[tenant.Tenant]().PkgPath() {
			continue // the options and watch events every group version has
		}
		kinds++
		for i := 0; i < 200; i++ {
			obj, err := Scheme.New(internal.WithKind(kind))
			if err != nil {
				t.Fatal(err)
			}
			filler.Fill(obj)
			data, err := kruntime.Encode(codec, obj)
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			if k, ok := storedKind(data); !ok || k != kind {
				t.Fatalf("%s stored as %.60s...: read as kind %q (%v)", kind, data, k, ok)
			}
			for _, given := range []bool{true, false} {
				var fastInto, slowInto kruntime.Object
				if given {
					fastInto, _ = Scheme.New(internal.WithKind(kind))
					slowInto, _ = Scheme.New(internal.WithKind(kind))
				}
				fast, gvk, ok := decodeStored(data, nil, fastInto)
				if !ok {
					t.Fatalf("%s (into given: %v): not read the short way", kind, given)
				}
				slow, slowGVK, err := decoder.Decode(data, nil, slowInto)
				if err != nil {
					t.Fatalf("%s: %v", kind, err)
				}
				if *gvk != *slowGVK || !apiequality.Semantic.DeepEqual(fast, slow) {
					t.Fatalf("%s (into given: %v): read the short way as %v\n%#v\nthe decoder's (%v)\n%#v", kind, given, gvk, fast, slowGVK, slow)
				}
				if given && fast != fastInto {
					t.Errorf("%s: not decoded into the given object", kind)
				}
			}
		}
	}
	if kinds < 8 {
		t.Errorf("only %d kinds tried", kinds)
	}
	// The v1alpha1 defaults apply, as they do to what the decoder reads: the
	// filled objects above have them already.
	obj, _, ok := decodeStored([]byte(`{"kind":"Namespace","apiVersion":"tenant.io/v1alpha1","metadata":{"name":"a"},"spec":{}}`), nil, nil)
	if ns, isNamespace := obj.(*tenant.Namespace); !ok || !isNamespace || ns.Name != "a" || ns.Spec.Network != v1alpha1.DefaultNetworkName {
		t.Errorf("a Namespace stored without its network read as %#v (%v)", obj, ok)
	}
}

// TestStoredDecodeLeavesTheRestToTheDecoder checks what the short way does
// not read: each is read by the codec's own decoder, with its result or
// its error.
func TestStoredDecodeLeavesTheRestToTheDecoder(t *testing.T) {
	codec := StorageCodec()
	ns := storedNamespaceOf(1, 1)
	data, err := kruntime.Encode(codec, ns)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimPrefix(string(data), `{"kind":"Namespace","apiVersion":"tenant.io/v1alpha1",`)
	if body == string(data) {
		t.Fatalf("stored as %.60s...", data)
	}
	for _, c := range []struct {
		name    string
		data    string
		into    kruntime.Object
		want    kruntime.Object // nil: an error
		wantErr string
	}{
		{name: "bytes after the object", data: string(data) + " x", wantErr: "after top-level value"},
		{name: "not JSON in a field not read", data: `{"kind":"Namespace","apiVersion":"tenant.io/v1alpha1","unknown":[1,,2],` + body, wantErr: "beginning of value"},
		{name: "apiVersion first", data: `{"apiVersion":"tenant.io/v1alpha1","kind":"Namespace",` + body, want: ns},
		{name: "spaces", data: `{ "kind":"Namespace","apiVersion":"tenant.io/v1alpha1",` + body, want: ns},
		{name: "a later kind decides", data: `{"kind":"Namespace","apiVersion":"tenant.io/v1alpha1",` + strings.TrimSuffix(strings.TrimSpace(body), "}") + `,"kind":"Tenant"}`,
			into: &tenant.Namespace{}, wantErr: "TenantSpec"},
		{name: "another version", data: `{"kind":"Namespace","apiVersion":"tenant.io/v1beta1",` + body, wantErr: "v1beta1"},
		{name: "an unknown kind", data: `{"kind":"Namespaces","apiVersion":"tenant.io/v1alpha1",` + body, wantErr: "Namespaces"},
		{name: "into another kind", data: string(data), into: &tenant.Tenant{}, wantErr: "Namespace"},
		{name: "not JSON", data: `{"kind":"Namespace","apiVersion":"tenant.io/v1alpha1",` + body[:40], wantErr: "unexpected end"},
		{name: "a name twice", data: `{"kind":"Namespace","apiVersion":"tenant.io/v1alpha1","metadata":{"name":"a","labels":{"x":"1","x":"2"}},"spec":{}}`,
			want: &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"x": "2"}}, Spec: tenant.NamespaceSpec{Network: v1alpha1.DefaultNetworkName}}},
		{name: "not UTF-8", data: "{\"kind\":\"Namespace\",\"apiVersion\":\"tenant.io/v1alpha1\",\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"\xff\"}},\"spec\":{}}",
			want: &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"x": "\uFFFD"}}, Spec: tenant.NamespaceSpec{Network: v1alpha1.DefaultNetworkName}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, _, ok := decodeStored([]byte(c.data), nil, c.into); ok {
				t.Fatal("read the short way")
			}
			got, _, err := codec.Decode([]byte(c.data), nil, c.into)
			switch {
			case c.want != nil && (err != nil || !apiequality.Semantic.DeepEqual(got, c.want)):
				t.Errorf("decoded %+v, %v; want %+v", got, err, c.want)
			case c.want == nil && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("decoded %+v, %v; want an error naming %q", got, err, c.wantErr)
			}
		})
	}
}

// TestStoredDecodeReadsTimesAsTheDecoder reads times in every form JSON
// can hold them both ways: the short way reads them itself, not through
// metav1.Time's UnmarshalJSON, and must read what that method reads and
// refuse what it refuses (such a document goes the long way).
func TestStoredDecodeReadsTimesAsTheDecoder(t *testing.T) {
	codec := StorageCodec()
	decoder := codec.(compactingCodec).Codec
	for _, c := range []struct {
		time  string
		short bool // read the short way
	}{
		{`"2026-11-26T04:00:00Z"`, true},
		{`"2026-11-26T04:00:00.123456Z"`, true},
		{`"2026-11-26T06:00:00+02:00"`, true},
		{`"2026-11-26T04:00:00\u005A"`, true},
		{`null`, true},
		{`"2026-11-26 04:00:00Z"`, false},
		{`"yesterday"`, false},
		{`""`, false},
		{`1764129600`, false},
		{`{"seconds":1}`, false},
	} {
		data := []byte(`{"kind":"Namespace","apiVersion":"tenant.io/v1alpha1","metadata":{"name":"a","creationTimestamp":` + c.time +
			`},"spec":{},"status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":` + c.time + `,"reason":"R","message":""}]}}`)
		if _, _, ok := decodeStored(data, nil, nil); ok != c.short {
			t.Errorf("%s: read the short way %v, want %v", c.time, ok, c.short)
		}
		got, _, err := codec.Decode(data, nil, nil)
		want, _, wantErr := decoder.Decode(data, nil, nil)
		if (err == nil) != (wantErr == nil) || !apiequality.Semantic.DeepEqual(got, want) {
			t.Errorf("%s: read as %+v (%v), the decoder's %+v (%v)", c.time, got, err, want, wantErr)
			continue
		}
		if ns, ok := got.(*tenant.Namespace); ok && c.time != `null` &&
			(!ns.CreationTimestamp.Equal(&ns.Status.Conditions[0].LastTransitionTime) || ns.CreationTimestamp.Location() != time.Local) {
			t.Errorf("%s: read as %v and %v", c.time, ns.CreationTimestamp, ns.Status.Conditions[0].LastTransitionTime)
		}
	}
}
