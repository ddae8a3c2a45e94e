package controller_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"tenant.io/tenant-apiserver/pkg/intern/interntest"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// renderedAttachment is the JSON of NetworkAttachmentDefinition name in
// host namespace ns as OVN-Kubernetes' cluster-manager renders it;
// metadataOnly, the host's answer to a client of metadata alone.
func renderedAttachment(ns, name string, metadataOnly bool) string {
	meta := fmt.Sprintf(`"metadata":{"name":%[2]q,"namespace":%[1]q,"uid":"0d5b4c8e-6a3f-4f7e-9b1e-%012[3]d","resourceVersion":"%[3]d","generation":1,
"creationTimestamp":"2026-11-27T10:00:00Z","labels":{"k8s.ovn.org/user-defined-network":""},
"finalizers":["k8s.ovn.org/user-defined-network-protection"],
"ownerReferences":[{"apiVersion":"k8s.ovn.org/v1","kind":"ClusterUserDefinedNetwork","name":%[2]q,"uid":"7c1e2f3a-1111-4a2b-8c3d-4e5f6a7b8c9d","controller":true,"blockOwnerDeletion":true}],
"managedFields":[{"manager":"ovnkube","operation":"Update","apiVersion":"k8s.cni.cncf.io/v1","time":"2026-11-27T10:00:00Z","fieldsType":"FieldsV1",
"fieldsV1":{"f:metadata":{"f:finalizers":{".":{},"v:\"k8s.ovn.org/user-defined-network-protection\"":{}},"f:labels":{".":{},"f:k8s.ovn.org/user-defined-network":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"7c1e2f3a-1111-4a2b-8c3d-4e5f6a7b8c9d\"}":{}}},"f:spec":{".":{},"f:config":{}}}}]}`,
		ns, name, len(ns)*1000+len(name))
	if metadataOnly {
		return `{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadata",` + meta + `}`
	}
	return `{"apiVersion":"k8s.cni.cncf.io/v1","kind":"NetworkAttachmentDefinition",` + meta + fmt.Sprintf(`,
"spec":{"config":"{\"cniVersion\":\"1.0.0\",\"joinSubnet\":\"100.65.0.0/16\",\"mtu\":1400,\"name\":\"cluster_udn_%[2]s\",\"netAttachDefName\":\"%[1]s/%[2]s\",\"role\":\"primary\",\"subnets\":\"10.1.2.0/24\",\"topology\":\"layer2\",\"transitSubnet\":\"100.88.0.0/16\",\"type\":\"ovn-k8s-cni-overlay\"}"}}`, ns, name)
}

func decodeMetadata(tb testing.TB, doc string) *metav1.PartialObjectMetadata {
	tb.Helper()
	m := &metav1.PartialObjectMetadata{}
	if err := json.Unmarshal([]byte(doc), m); err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestNameOnlyAttachments: the syncer's informer of rendered network
// attachments keeps what Attached reads (namespace, name, deletion) and
// the name, UID and version an informer keys and compares by, and none of
// the labels, owners, finalizers or managed fields.
func TestNameOnlyAttachments(t *testing.T) {
	in := decodeMetadata(t, renderedAttachment("acme-005766-dev", "tn286d5cac6ab3f", true))
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	in.DeletionTimestamp = &now
	out, err := controller.NameOnly(in)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := out.(*metav1.PartialObjectMetadata)
	if !ok {
		t.Fatalf("NameOnly gave %T, want metadata", out)
	}
	want := metav1.ObjectMeta{Namespace: in.Namespace, Name: in.Name, UID: in.UID, ResourceVersion: in.ResourceVersion, DeletionTimestamp: &now}
	if fmt.Sprint(m.ObjectMeta) != fmt.Sprint(want) {
		t.Errorf("kept %+v, want only %+v", m.ObjectMeta, want)
	}
	if got, err := controller.NameOnly("tombstone"); err != nil || got != "tombstone" {
		t.Errorf("NameOnly(non-object) = %v, %v", got, err)
	}
}

// attachmentNames are the host namespace and network of attachment i of
// 10,000: 100 tenants x 100 host namespaces, one network each.
func attachmentNames(i int) (ns, name string) {
	return fmt.Sprintf("tenant%03d-5a1b2c-ns%03d", i/100, i%100), fmt.Sprintf("tn%013x", i/100)
}

// BenchmarkNetworkAttachmentHeld reports the heap that 10,000 rendered
// network attachments (100 tenants x 100 host namespaces) hold in an
// informer, per attachment: listed whole (a dynamic client), listed as
// metadata, and as NameOnly keeps them.
func BenchmarkNetworkAttachmentHeld(b *testing.B) {
	for _, c := range []struct {
		name   string
		decode func(ns, name string) interface{}
	}{
		{"whole", func(ns, name string) interface{} {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON([]byte(renderedAttachment(ns, name, false))); err != nil {
				b.Fatal(err)
			}
			return u
		}},
		{"metadata", func(ns, name string) interface{} { return decodeMetadata(b, renderedAttachment(ns, name, true)) }},
		{"name-only", func(ns, name string) interface{} {
			obj, _ := controller.NameOnly(decodeMetadata(b, renderedAttachment(ns, name, true)))
			return obj
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			interntest.Held(b, func() []interface{} {
				held := make([]interface{}, 0, 10000)
				for i := 0; i < 10000; i++ {
					held = append(held, c.decode(attachmentNames(i)))
				}
				return held
			})
		})
	}
}

// BenchmarkNetworkAttachmentList reports the time an informer takes to
// decode one page of 500 rendered network attachments, per attachment:
// the whole objects in JSON, as a dynamic client asks for and decodes
// them, against their metadata in protobuf, the host's answer to a client
// of metadata alone (custom resources included).
func BenchmarkNetworkAttachmentList(b *testing.B) {
	items := make([]string, 500)
	meta := &metav1.PartialObjectMetadataList{}
	for i := range items {
		ns, name := attachmentNames(i)
		items[i] = renderedAttachment(ns, name, false)
		meta.Items = append(meta.Items, *decodeMetadata(b, renderedAttachment(ns, name, true)))
	}
	whole := []byte(`{"apiVersion":"k8s.cni.cncf.io/v1","kind":"NetworkAttachmentDefinitionList","metadata":{"resourceVersion":"1"},"items":[` +
		strings.Join(items, ",") + `]}`)
	proto, err := meta.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		page   []byte
		decode func([]byte) (int, error)
	}{
		{"whole-json", whole, func(p []byte) (int, error) {
			l := &unstructured.UnstructuredList{}
			err := l.UnmarshalJSON(p)
			return len(l.Items), err
		}},
		{"metadata-protobuf", proto, func(p []byte) (int, error) {
			l := &metav1.PartialObjectMetadataList{}
			err := l.Unmarshal(p)
			return len(l.Items), err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.page)))
			for b.Loop() {
				if n, err := c.decode(c.page); err != nil || n != 500 {
					b.Fatal(err, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1000/float64(b.N)/500, "µs/attachment")
		})
	}
}
