package controller_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"tenant.io/tenant-apiserver/pkg/intern/interntest"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// renderedAttachment is NetworkAttachmentDefinition name in host namespace
// ns as OVN-Kubernetes' cluster-manager renders it, decoded from JSON as
// an informer of the dynamic client decodes it.
func renderedAttachment(tb testing.TB, ns, name string) *unstructured.Unstructured {
	tb.Helper()
	doc := fmt.Sprintf(`{"apiVersion":"k8s.cni.cncf.io/v1","kind":"NetworkAttachmentDefinition",
"metadata":{"name":%[2]q,"namespace":%[1]q,"uid":"0d5b4c8e-6a3f-4f7e-9b1e-%012[3]d","resourceVersion":"%[3]d","generation":1,
"creationTimestamp":"2026-11-27T10:00:00Z","labels":{"k8s.ovn.org/user-defined-network":""},
"finalizers":["k8s.ovn.org/user-defined-network-protection"],
"ownerReferences":[{"apiVersion":"k8s.ovn.org/v1","kind":"ClusterUserDefinedNetwork","name":%[2]q,"uid":"7c1e2f3a-1111-4a2b-8c3d-4e5f6a7b8c9d","controller":true,"blockOwnerDeletion":true}],
"managedFields":[{"manager":"ovnkube","operation":"Update","apiVersion":"k8s.cni.cncf.io/v1","time":"2026-11-27T10:00:00Z","fieldsType":"FieldsV1",
"fieldsV1":{"f:metadata":{"f:finalizers":{".":{},"v:\"k8s.ovn.org/user-defined-network-protection\"":{}},"f:labels":{".":{},"f:k8s.ovn.org/user-defined-network":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"7c1e2f3a-1111-4a2b-8c3d-4e5f6a7b8c9d\"}":{}}},"f:spec":{".":{},"f:config":{}}}}]},
"spec":{"config":"{\"cniVersion\":\"1.0.0\",\"joinSubnet\":\"100.65.0.0/16\",\"mtu\":1400,\"name\":\"cluster_udn_%[2]s\",\"netAttachDefName\":\"%[1]s/%[2]s\",\"role\":\"primary\",\"subnets\":\"10.1.2.0/24\",\"topology\":\"layer2\",\"transitSubnet\":\"100.88.0.0/16\",\"type\":\"ovn-k8s-cni-overlay\"}"}}`,
		ns, name, len(ns)*1000+len(name))
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(doc)); err != nil {
		tb.Fatal(err)
	}
	return u
}

// TestNameOnlyAttachments: the syncer's informer of rendered network
// attachments keeps what Attached reads (namespace, name, deletion) and
// the name, UID and version an informer keys and compares by, and none of
// the CNI configuration, labels, owners or managed fields.
func TestNameOnlyAttachments(t *testing.T) {
	in := renderedAttachment(t, "acme-005766-dev", "tn286d5cac6ab3f")
	now := metav1.NewTime(time.Now().Truncate(time.Second)) // what JSON holds
	in.SetDeletionTimestamp(&now)
	out, err := controller.NameOnly(in)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := out.(*metav1.PartialObjectMetadata)
	if !ok {
		t.Fatalf("NameOnly gave %T, want metadata", out)
	}
	want := metav1.ObjectMeta{Namespace: in.GetNamespace(), Name: in.GetName(), UID: in.GetUID(), ResourceVersion: in.GetResourceVersion(), DeletionTimestamp: m.DeletionTimestamp}
	if m.DeletionTimestamp == nil || !m.DeletionTimestamp.Equal(&now) {
		t.Errorf("deletion time %v, want %v", m.DeletionTimestamp, now)
	}
	if fmt.Sprint(m.ObjectMeta) != fmt.Sprint(want) {
		t.Errorf("kept %+v, want only %+v", m.ObjectMeta, want)
	}
	if got, err := controller.NameOnly("tombstone"); err != nil || got != "tombstone" {
		t.Errorf("NameOnly(non-object) = %v, %v", got, err)
	}
}

// BenchmarkNetworkAttachmentHeld reports the heap that 10,000 rendered
// network attachments (100 tenants x 100 host namespaces) hold in the
// syncer's informer, per attachment: as listed, and as NameOnly keeps them.
func BenchmarkNetworkAttachmentHeld(b *testing.B) {
	for _, c := range []struct {
		name      string
		transform func(interface{}) (interface{}, error)
	}{
		{"as-listed", func(obj interface{}) (interface{}, error) { return obj, nil }},
		{"name-only", controller.NameOnly},
	} {
		b.Run(c.name, func(b *testing.B) {
			interntest.Held(b, func() []interface{} {
				held := make([]interface{}, 0, 10000)
				for t := 0; t < 100; t++ {
					for i := 0; i < 100; i++ {
						obj, err := c.transform(renderedAttachment(b, fmt.Sprintf("tenant%03d-5a1b2c-ns%03d", t, i), fmt.Sprintf("tn%013x", t)))
						if err != nil {
							b.Fatal(err)
						}
						held = append(held, obj)
					}
				}
				return held
			})
		})
	}
}
