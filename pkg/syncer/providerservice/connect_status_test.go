package providerservice

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestConnectFailed reads OVN-Kubernetes' reports on a
// ClusterNetworkConnect: cluster-manager's Accepted condition, and the
// API's status field.
func TestConnectFailed(t *testing.T) {
	cond := func(typ, status, msg string) interface{} {
		return map[string]interface{}{"type": typ, "status": status, "reason": "R", "message": msg}
	}
	for _, c := range []struct {
		name   string
		status map[string]interface{}
		failed bool
		msg    string
	}{
		{"no report yet", nil, false, ""},
		{"accepted", map[string]interface{}{"conditions": []interface{}{cond("Accepted", "True", "All validation checks passed successfully")}}, false, ""},
		{"refused", map[string]interface{}{"conditions": []interface{}{cond("Accepted", "False", "selected networks have overlapping subnets")}},
			true, ": selected networks have overlapping subnets"},
		{"refused, another condition first", map[string]interface{}{"conditions": []interface{}{
			cond("Progressing", "False", "other"), cond("Accepted", "False", "connect subnets overlap a join subnet")}},
			true, ": connect subnets overlap a join subnet"},
		{"status Failure", map[string]interface{}{"status": "Failure", "conditions": []interface{}{cond("Ready", "False", "no tunnel key")}},
			true, ": no tunnel key"},
		{"status Failure without a message", map[string]interface{}{"status": "Failure"}, true, ""},
		{"status Success", map[string]interface{}{"status": "Success"}, false, ""},
		{"a False condition that is not Accepted", map[string]interface{}{"conditions": []interface{}{cond("Progressing", "False", "x")}}, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]interface{}{"kind": "ClusterNetworkConnect"}}
			if c.status != nil {
				u.Object["status"] = c.status
			}
			failed, msg := connectFailed(u)
			if failed != c.failed || msg != c.msg {
				t.Fatalf("connectFailed = %v, %q; want %v, %q", failed, msg, c.failed, c.msg)
			}
		})
	}
}
