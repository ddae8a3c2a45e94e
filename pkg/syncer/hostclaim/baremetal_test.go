package hostclaim

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A BareMetalHost as the host serves it decodes into the fields the syncer
// reads, and the object it came from is kept for the write back.
func TestFromUnstructured(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "metal3.io/v1alpha1", "kind": "BareMetalHost",
		"metadata": map[string]interface{}{"name": "server-001", "namespace": "metal3-hosts"},
		"spec": map[string]interface{}{
			"online": true, "bootMACAddress": "52:54:00:00:00:01",
			"bmc":         map[string]interface{}{"address": "redfish://192.0.2.1/redfish/v1/Systems/1", "credentialsName": "server-001-bmc"},
			"consumerRef": map[string]interface{}{"apiVersion": "tenant.io/v1alpha1", "kind": "HostClaim", "namespace": "acme-abcdef-dev", "name": "web", "uid": "u1"},
		},
		"status": map[string]interface{}{
			"poweredOn": true, "operationalStatus": "OK",
			"provisioning": map[string]interface{}{"state": "provisioned", "ID": "x", "image": map[string]interface{}{"url": "https://i/x.qcow2"}},
			"hardware": map[string]interface{}{"ramMebibytes": int64(16384), "cpu": map[string]interface{}{"arch": "x86_64", "count": int64(8)},
				"nics":    []interface{}{map[string]interface{}{"name": "eno1", "mac": "52:54:00:00:00:01", "ip": "192.0.2.101", "speedGbps": int64(25)}},
				"storage": []interface{}{map[string]interface{}{"sizeBytes": int64(480e9)}}},
		},
	}}
	h, err := fromUnstructured(u)
	if err != nil {
		t.Fatal(err)
	}
	if h.Name != "server-001" || h.Spec.ConsumerRef == nil || h.Spec.ConsumerRef.UID != "u1" || !h.Status.PoweredOn ||
		h.Status.Provisioning.State != stateProvisioned || h.Status.HardwareDetails == nil || h.Status.HardwareDetails.CPU.Count != 8 ||
		len(h.Status.HardwareDetails.NIC) != 1 || h.Status.HardwareDetails.Storage[0].SizeBytes != 480e9 {
		t.Errorf("decoded %+v", h.bmhFields)
	}
	if h.raw != u {
		t.Error("the host's object is not kept")
	}
	c := h.DeepCopy()
	c.Spec.ConsumerRef.Name = "other"
	if h.Spec.ConsumerRef.Name != "web" {
		t.Error("DeepCopy shares the consumer reference")
	}
}
