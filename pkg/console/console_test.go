package console

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
)

func newTestServer(t *testing.T, mode string) *Server {
	t.Helper()
	s, err := NewServer(Config{API: &rest.Config{Host: "https://127.0.0.1:1"}, AuthMode: mode, TokenHeader: "X-Forwarded-Access-Token",
		SessionTTL: time.Hour, CSRFKey: []byte(strings.Repeat("k", 32)), Secure: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSignInPage(t *testing.T) {
	s := newTestServer(t, AuthToken)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/signin", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /signin: %d %s", rec.Code, rec.Body)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Name != signInCookie || !cookies[0].HttpOnly || !cookies[0].Secure || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("sign-in cookie: %+v", cookies)
	}
	if !strings.Contains(rec.Body.String(), `name="_csrf" value="`+s.csrfToken("signin:"+cookies[0].Value)+`"`) {
		t.Errorf("the sign-in form does not carry the CSRF token of its cookie:\n%s", rec.Body)
	}

	// A sign-in without the form's token is refused before any API call.
	req := httptest.NewRequest("POST", "/signin", strings.NewReader(url.Values{"token": {"t"}, csrfField: {"forged"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(cookies[0])
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("sign-in with a forged CSRF token: %d, want 403", rec.Code)
	}
}

func TestUnsignedRequests(t *testing.T) {
	s := newTestServer(t, AuthToken)
	for _, c := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/overview", http.StatusSeeOther},
		{"GET", "/networks", http.StatusSeeOther},
		{"POST", "/networks", http.StatusUnauthorized},
		{"GET", "/live/networks", http.StatusUnauthorized},
		{"GET", "/admin/tenants", http.StatusSeeOther},
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.code {
			t.Errorf("%s %s without a session: %d, want %d", c.method, c.path, rec.Code, c.code)
		}
	}
	h := newTestServer(t, AuthHeader)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/overview", nil))
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("header mode without the header: %d, want 401", rec.Code)
	}
}

func TestAPIErrorFields(t *testing.T) {
	err := apierrors.NewInvalid(schema.GroupKind{Group: "tenant.io", Kind: "Network"}, "blue", field.ErrorList{
		field.Invalid(field.NewPath("spec", "subnets").Index(0), "192.168.0.0/24", "not inside the tenant's block"),
		field.Required(field.NewPath("spec", "natGateway", "enabled"), ""),
		field.Invalid(field.NewPath("spec", "mtu"), 1, "too small"),
	})
	e := newAPIError(err, networks.fields)
	if e.Code != 422 || len(e.Fields["subnets"]) != 1 || len(e.Fields["nat"]) != 1 || len(e.Causes) != 1 || !strings.HasPrefix(e.Causes[0], "spec.mtu:") {
		t.Errorf("newAPIError: %+v", e)
	}
	if !strings.Contains(e.Fields["subnets"][0], "spec.subnets[0]") {
		t.Errorf("the field error does not name the API's field: %q", e.Fields["subnets"][0])
	}
}

func TestTenantFromForm(t *testing.T) {
	tn, ferr := tenantFromForm(url.Values{"name": {"initech"}, "users": {"ida, joe"}, "prefixLength": {"24"}, "publicIPs": {"2"},
		"quota-namespaces": {"5"}, "quota-requests.cpu": {"8"}, "isolation": {"Hard"}})
	if ferr != nil {
		t.Fatal(ferr)
	}
	if tn.Name != "initech" || len(tn.Spec.Members.Users) != 2 || *tn.Spec.Network.PrefixLength != 24 || tn.Spec.PublicIPs.Count != 2 ||
		tn.Spec.Isolation != "Hard" ||
		*tn.Spec.Quota.Namespaces != 5 || quantity(tn.Spec.Quota.Compute, "requests.cpu") != "8" {
		t.Errorf("tenantFromForm: %+v", tn.Spec)
	}
	if _, ferr := tenantFromForm(url.Values{"name": {"x"}, "publicIPs": {"two"}}); ferr == nil || ferr.Fields["publicIPs"] == nil {
		t.Errorf("a non-numeric public IP count: %v", ferr)
	}
}

func quantity(l corev1.ResourceList, name corev1.ResourceName) string {
	q, ok := l[name]
	if !ok {
		return ""
	}
	return q.String()
}
