package hostclaim

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
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

// A sync that could not read the server leaves the claim's phase, power
// and Associated condition as they were: only HostSynced and Ready say
// that the status may be out of date.
func TestStatusKeptWhenNotSynced(t *testing.T) {
	hc := &tenant.HostClaim{}
	hc.Generation = 2
	hc.Status.Phase, hc.Status.Power = tenant.HostClaimProvisioned, tenant.HostPowerOn
	hc.Status.Conditions = []metav1.Condition{{Type: ConditionAssociated, Status: metav1.ConditionTrue, Reason: ReasonBound, ObservedGeneration: 2}}
	c := &Controller{}
	set := c.setStatus(nil, queue.Key{}, hc, outcome{Reason: controller.ReasonHostUnreachable, Message: "connection refused"})
	if !set(hc) {
		t.Fatal("nothing changed")
	}
	if hc.Status.Phase != tenant.HostClaimProvisioned || hc.Status.Power != tenant.HostPowerOn {
		t.Errorf("phase %s power %s, want them kept", hc.Status.Phase, hc.Status.Power)
	}
	for typ, want := range map[string]metav1.ConditionStatus{ConditionAssociated: metav1.ConditionTrue, tenant.ConditionHostSynced: metav1.ConditionFalse, tenant.ConditionReady: metav1.ConditionFalse} {
		if got := meta.FindStatusCondition(hc.Status.Conditions, typ); got == nil || got.Status != want {
			t.Errorf("%s: %+v, want %s", typ, got, want)
		}
	}
}

// The claim's phase follows the server's Metal3 state; an error names its
// kind only.
func TestHostPhase(t *testing.T) {
	for _, tc := range []struct {
		state, operational string
		image              bool
		want               tenant.HostClaimPhase
	}{
		{stateAvailable, "OK", false, tenant.HostClaimBound},
		{stateAvailable, "OK", true, tenant.HostClaimProvisioning},
		{stateProvisioning, "OK", true, tenant.HostClaimProvisioning},
		{stateProvisioned, "OK", true, tenant.HostClaimProvisioned},
		{stateDeprovisioning, "OK", false, tenant.HostClaimDeprovisioning},
		{stateProvisioned, operationalError, true, tenant.HostClaimFailed},
	} {
		h := &bareMetalHost{}
		h.Status.Provisioning.State, h.Status.OperationalStatus, h.Status.ErrorType = tc.state, tc.operational, "provisioning error"
		if tc.image {
			h.Spec.Image = &bmhImage{URL: "https://i/x"}
		}
		got, _, msg := hostPhase(h)
		if got != tc.want {
			t.Errorf("%s/%s image %v: %s, want %s", tc.state, tc.operational, tc.image, got, tc.want)
		}
		if got == tenant.HostClaimFailed && msg != "the server reports a provisioning error; the provider sees the details" {
			t.Errorf("failed message %q", msg)
		}
	}
}
