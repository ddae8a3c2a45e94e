package apiserver

import (
	"bytes"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// storageCodec is a codec of objects in etcd like the server's
// (Codecs.LegacyCodec of v1alpha1, which writes JSON), writing mediaType.
func storageCodec(b testing.TB, mediaType string) runtime.Codec {
	codecs := serializer.NewCodecFactory(Scheme, serializer.WithSerializer(cbor.NewSerializerInfo))
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		b.Fatalf("no serializer of %s", mediaType)
	}
	return codecs.CodecForVersions(info.Serializer, codecs.UniversalDeserializer(),
		schema.GroupVersions{v1alpha1.SchemeGroupVersion}, runtime.InternalGroupVersioner)
}

// storedNamespace is a tenant Namespace as the syncer leaves it: created by
// kubectl (one managed fields entry: the syncer's status writes are made in
// process, past the field manager), HostSynced, NetworkAttached and Ready.
func storedNamespace() *tenant.Namespace {
	created := metav1.NewTime(time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC))
	condition := func(t, reason, message string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, ObservedGeneration: 1,
			LastTransitionTime: created, Reason: reason, Message: message}
	}
	return &tenant.Namespace{
		ObjectMeta: metav1.ObjectMeta{
			Name:              "team-0042",
			UID:               "0b6f3c1e-8a41-4d0c-9d52-7c1f0a3e5b21",
			Generation:        1,
			CreationTimestamp: created,
			Labels:            map[string]string{tenancy.TenantLabel: "acme-0001", "team": "payments"},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "kubectl-create", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "tenant.io/v1alpha1", Time: &created, FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{".":{},"f:team":{}}}}`),
			}},
		},
		Spec: tenant.NamespaceSpec{Network: "default"},
		Status: tenant.NamespaceStatus{
			ObservedGeneration: 1,
			Phase:              tenant.NamespacePhaseActive,
			HostNamespace:      "t-acme-0001-team-0042-5kq2x",
			Conditions: []metav1.Condition{
				condition(tenant.ConditionHostSynced, "Synced", "host namespace and RoleBinding match"),
				condition(tenant.ConditionNetworkAttached, "Attached", "OVN-Kubernetes rendered the network into the host namespace"),
				condition(tenant.ConditionReady, "Ready", "the namespace is ready"),
			},
		},
	}
}

// BenchmarkStorageDecode decodes a stored tenant Namespace as a watch cache
// filling from etcd does (bytes -> v1alpha1 -> defaults -> internal), and
// encodes it as every write does: in JSON, as the server stores objects,
// and in CBOR, which it could; with its managed fields and without.
func BenchmarkStorageDecode(b *testing.B) {
	for _, mt := range []string{runtime.ContentTypeJSON, runtime.ContentTypeCBOR} {
		codec := storageCodec(b, mt)
		for _, managed := range []bool{true, false} {
			ns := storedNamespace()
			name := mt
			if !managed {
				ns.ManagedFields = nil
				name += "/no-managed-fields"
			}
			data, err := runtime.Encode(codec, ns)
			if err != nil {
				b.Fatal(err)
			}
			b.Run("decode/"+name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := runtime.Decode(codec, data); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(data)), "stored-bytes")
			})
			b.Run("encode/"+name, func(b *testing.B) {
				b.ReportAllocs()
				var buf bytes.Buffer
				for b.Loop() {
					buf.Reset()
					if err := codec.Encode(ns, &buf); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
