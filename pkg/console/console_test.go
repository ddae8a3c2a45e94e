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

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/tenantview"
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

func TestHostClaimFromForm(t *testing.T) {
	h, ferr := hostClaimFromForm(url.Values{"namespace": {"dev"}, "name": {" db-1 "}, "hostClass": {"metal"}, "selector": {"rack=r1"},
		"image": {"https://images.example.net/a.qcow2"}, "checksum": {"abc123"}, "userData": {"db-init"}, "online": {"on"}})
	if ferr != nil {
		t.Fatal(ferr)
	}
	if h.Namespace != "dev" || h.Name != "db-1" || h.Spec.HostClass != "metal" || h.Spec.HostSelector.MatchLabels["rack"] != "r1" || !h.Spec.Online ||
		h.Spec.Image == nil || h.Spec.Image.Checksum != "abc123" || h.Spec.UserData == nil || h.Spec.UserData.Name != "db-init" {
		t.Errorf("hostClaimFromForm: %+v %+v", h.ObjectMeta, h.Spec)
	}
	h, ferr = hostClaimFromForm(url.Values{"namespace": {"dev"}, "name": {"db-2"}, "hostClass": {"metal"}})
	if ferr != nil || h.Spec.Image != nil || h.Spec.HostSelector != nil || h.Spec.UserData != nil || h.Spec.Online {
		t.Errorf("a bare claim: %+v %v", h.Spec, ferr)
	}
	for field, f := range map[string]url.Values{
		"namespace": {"name": {"x"}, "hostClass": {"metal"}},
		"hostClass": {"namespace": {"dev"}, "name": {"x"}},
		"selector":  {"namespace": {"dev"}, "name": {"x"}, "hostClass": {"metal"}, "selector": {"rack in r1"}},
		"image":     {"namespace": {"dev"}, "name": {"x"}, "hostClass": {"metal"}, "checksum": {"abc"}},
	} {
		if _, ferr := hostClaimFromForm(f); ferr == nil || ferr.Fields[field] == nil {
			t.Errorf("form %v: %+v, want an error of field %s", f, ferr, field)
		}
	}
	e := newAPIError(apierrors.NewInvalid(schema.GroupKind{Group: "tenant.io", Kind: "HostClaim"}, "db-1", field.ErrorList{
		field.Required(field.NewPath("spec", "image", "checksum"), ""), field.NotFound(field.NewPath("spec", "hostClass"), "gold"),
	}), hostClaims.fields)
	if len(e.Fields["checksum"]) != 1 || len(e.Fields["hostClass"]) != 1 || len(e.Causes) != 0 {
		t.Errorf("a HostClaim's field errors: %+v", e)
	}
}

// TestHostClaimPages: the Hosts page offers the classes in its form and
// lists them; a claim's page has the power and reboot buttons.
func TestHostClaimPages(t *testing.T) {
	s := newTestServer(t, AuthToken)
	rec := httptest.NewRecorder()
	s.render(rec, httptest.NewRequest("GET", "/hostclaims", nil), http.StatusOK, "list", &page{Title: "Hosts", Nav: "hostclaims", CSRF: "tok", Data: &listData{
		Kind: hostClaims, Table: &tableData{Kind: hostClaims}, Namespaces: []string{"dev"},
		HostClasses: []hostClassOffer{{Name: "metal", Labels: "rack=r1|r2", Hardware: "Summary", Available: 3}},
	}})
	body := rec.Body.String()
	for _, want := range []string{`<option value="metal">metal (3 available)</option>`, `id="hostclasses-table"`, "<td>rack=r1|r2</td>", `name="online"`, "No host claims."} {
		if !strings.Contains(body, want) {
			t.Errorf("the Hosts page lacks %s:\n%s", want, body)
		}
	}
	rec = httptest.NewRecorder()
	claim := &tenantv1alpha1.HostClaim{Spec: tenantv1alpha1.HostClaimSpec{HostClass: "metal", Online: true}, Status: tenantv1alpha1.HostClaimStatus{Phase: "Pending"}}
	s.render(rec, httptest.NewRequest("GET", "/hostclaims/dev/db-1", nil), http.StatusOK, "detail", &page{Title: "HostClaim dev/db-1", Nav: "hostclaims", CSRF: "tok", Data: &detailData{
		Kind: hostClaims, Namespace: "dev", Name: "db-1", Link: "/hostclaims/dev/db-1", HostClaim: &hostClaimFacts{HostClaim: claim},
	}})
	body = rec.Body.String()
	for _, want := range []string{`action="/hostclaims/dev/db-1/power"`, `name="power" value="off"><button type="submit" id="power-off">`, `action="/hostclaims/dev/db-1/reboot"`, `id="host-phase">Pending<`} {
		if !strings.Contains(body, want) {
			t.Errorf("a HostClaim's page lacks %s:\n%s", want, body)
		}
	}
}

// TestRoutesPage: the Routes page shows the route domain and each route's
// columns; without a domain it says routes cannot be published; an
// unsigned request goes to sign in.
func TestRoutesPage(t *testing.T) {
	s := newTestServer(t, AuthToken)
	rec := httptest.NewRecorder()
	s.render(rec, httptest.NewRequest("GET", "/routes", nil), http.StatusOK, "routes", &page{Title: "Routes", Nav: "routes", CSRF: "tok", Caller: &caller{User: "alice", Tenant: "acme"}, Data: &routesData{
		RouteDomain: "acme.apps.example.net",
		Routes: []tenantview.Route{{Namespace: "dev", Name: "shop", Kind: "HTTPRoute", Hostnames: []string{"shop.acme.apps.example.net", "*.acme.apps.example.net"},
			Accepted: "False (NotAllowedByListeners)", Backends: []string{"shop", "prod/api"}}},
	}})
	body := rec.Body.String()
	for _, want := range []string{`<code id="route-domain">acme.apps.example.net</code>`, `<tr data-key="dev/shop/HTTPRoute"><td>dev</td><td>shop</td><td>HTTPRoute</td>` +
		`<td>shop.acme.apps.example.net, *.acme.apps.example.net</td><td>False (NotAllowedByListeners)</td><td>shop, prod/api</td></tr>`, "read-only", `aria-current="page">Routes`} {
		if !strings.Contains(body, want) {
			t.Errorf("the Routes page does not contain %q:\n%s", want, body)
		}
	}
	rec = httptest.NewRecorder()
	s.render(rec, httptest.NewRequest("GET", "/routes", nil), http.StatusOK, "routes", &page{Title: "Routes", Nav: "routes", Data: &routesData{}})
	if body := rec.Body.String(); !strings.Contains(body, "no route domain") || !strings.Contains(body, "No routes.") {
		t.Errorf("the Routes page without a domain:\n%s", body)
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/routes", nil))
	if rec.Code != http.StatusSeeOther {
		t.Errorf("GET /routes without a session: %d, want 303", rec.Code)
	}
}
