package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

// TestAdminTenantsRequests: the provider's table of tenants, public IPs in
// use included, costs the same three requests (who the caller is, whether
// it is the provider, the list of Tenants) with 3 tenants or 300: nothing
// is read per tenant, and no other tenant's objects are listed.
func TestAdminTenantsRequests(t *testing.T) {
	for _, n := range []int{3, 300} {
		list := tenantv1alpha1.TenantList{TypeMeta: metav1.TypeMeta{APIVersion: "tenant.io/v1alpha1", Kind: "TenantList"}}
		for i := range n {
			tn := tenantv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("t%03d", i)}}
			tn.Status.Phase = tenantv1alpha1.TenantPhaseReady
			tn.Status.PublicIPs = []string{"203.0.113.1", "203.0.113.2", "203.0.113.3"}
			tn.Status.Usage.PublicIPs = int32(i % 4)
			list.Items = append(list.Items, tn)
		}
		var mu sync.Mutex
		var requests []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			requests = append(requests, r.Method+" "+r.URL.Path)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			var out any
			switch r.Method + " " + r.URL.Path {
			case "POST /apis/authentication.k8s.io/v1/selfsubjectreviews":
				out = &authenticationv1.SelfSubjectReview{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "SelfSubjectReview"},
					Status: authenticationv1.SelfSubjectReviewStatus{UserInfo: authenticationv1.UserInfo{Username: "provider"}}}
			case "POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
				out = &authorizationv1.SelfSubjectAccessReview{TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SelfSubjectAccessReview"},
					Status: authorizationv1.SubjectAccessReviewStatus{Allowed: true}}
			case "GET /apis/tenant.io/v1alpha1/tenants":
				out = &list
			default:
				http.NotFound(w, r)
				return
			}
			_ = json.NewEncoder(w).Encode(out)
		}))
		var stdout, stderr bytes.Buffer
		cmd := NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr})
		cmd.SetArgs([]string{"--server", srv.URL, "admin", "tenants"})
		err := cmd.Execute()
		srv.Close()
		if err != nil {
			t.Fatalf("%d tenants: admin tenants: %v\n%s", n, err, stderr.String())
		}
		if len(requests) != 3 {
			t.Errorf("%d tenants: %d requests, want 3: %v", n, len(requests), requests)
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		if len(lines) != n+1 {
			t.Fatalf("%d tenants: %d lines:\n%s", n, len(lines), stdout.String())
		}
		for i, line := range lines[1:] {
			f := strings.Fields(line)
			if want := fmt.Sprintf("%d/3", i%4); len(f) < 4 || f[0] != list.Items[i].Name || f[3] != want {
				t.Errorf("%d tenants: row %q, want %s with PUBLIC IPS %s", n, line, list.Items[i].Name, want)
			}
		}
	}
}
