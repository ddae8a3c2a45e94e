package hostkinds

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestReadConnectReport reads OVN-Kubernetes' verdicts on a
// ClusterNetworkConnect: nothing yet, cluster-manager's Accepted
// condition either way, and the API's status field.
func TestReadConnectReport(t *testing.T) {
	cond := func(typ, status, msg string) interface{} {
		return map[string]interface{}{"type": typ, "status": status, "reason": "R", "message": msg}
	}
	for _, c := range []struct {
		name   string
		status map[string]interface{}
		want   ConnectReport
		msg    string
	}{
		{"no report yet", nil, ConnectUnreported, ""},
		{"accepted", map[string]interface{}{"conditions": []interface{}{cond("Accepted", "True", "All validation checks passed successfully")}}, ConnectAccepted, ""},
		{"status Success", map[string]interface{}{"status": "Success"}, ConnectAccepted, ""},
		{"refused", map[string]interface{}{"conditions": []interface{}{cond("Accepted", "False", "selected networks have overlapping subnets")}},
			ConnectRefused, "selected networks have overlapping subnets"},
		{"status Failure over Accepted True", map[string]interface{}{"status": "Failure", "conditions": []interface{}{
			cond("Accepted", "True", "ok"), cond("Ready", "False", "no tunnel key")}}, ConnectRefused, "no tunnel key"},
		{"another condition False only", map[string]interface{}{"conditions": []interface{}{cond("Progressing", "False", "x")}}, ConnectUnreported, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]interface{}{"kind": "ClusterNetworkConnect"}}
			if c.status != nil {
				u.Object["status"] = c.status
			}
			if got, msg := ReadConnectReport(u); got != c.want || msg != c.msg {
				t.Fatalf("ReadConnectReport = %v, %q; want %v, %q", got, msg, c.want, c.msg)
			}
		})
	}
}

// TestConnectedNetworks counts the networks cluster-manager gave a slice
// of a connection's subnets.
func TestConnectedNetworks(t *testing.T) {
	for _, c := range []struct {
		annotation string
		want       int
	}{
		{"", 0},
		{"not json", 0},
		{"{}", 0},
		{`{"layer2_3":{"ipv4":"100.72.0.0/31"}}`, 1},
		{`{"layer2_3":{"ipv4":"100.72.0.0/31"},"layer3_4":{"ipv4":"100.72.0.16/28"}}`, 2},
	} {
		u := &unstructured.Unstructured{Object: map[string]interface{}{}}
		if c.annotation != "" {
			u.SetAnnotations(map[string]string{ConnectSubnetAnnotation: c.annotation})
		}
		if got := ConnectedNetworks(u); got != c.want {
			t.Errorf("ConnectedNetworks(%q) = %d, want %d", c.annotation, got, c.want)
		}
	}
}
