package console

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"tenant.io/tenant-apiserver/pkg/console"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

var csrfInput = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// httpUser is a user of the console without a browser: an HTTP client with
// a cookie jar, signed in through the sign-in form.
type httpUser struct {
	t    *testing.T
	c    *http.Client
	base string
	csrf string
}

func signInHTTP(t *testing.T, user string) *httpUser {
	t.Helper()
	s := framework.Current()
	u := &httpUser{t: t, c: s.ConsoleHTTPClient(), base: s.ConsoleURL()}
	u.c.Jar, _ = cookiejar.New(nil)
	_, body := u.do("GET", "/signin", nil, nil)
	m := csrfInput.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the sign-in page has no CSRF token:\n%s", body)
	}
	resp, _ := u.do("POST", "/signin", url.Values{"token": {s.Token(user)}, "_csrf": {m[1]}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("signing in as %s: %s", user, resp.Status)
	}
	var session string
	for _, h := range resp.Header.Values("Set-Cookie") {
		if strings.HasPrefix(h, "tenant_console_session=") {
			session = h
		}
	}
	for _, flag := range []string{"HttpOnly", "Secure", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(session, flag) {
			t.Errorf("the session cookie %q lacks %s", redact(session), flag)
		}
	}
	_, body = u.do("GET", "/overview", nil, nil)
	if m = csrfInput.FindStringSubmatch(body); m == nil {
		t.Fatalf("the overview has no CSRF token:\n%s", body)
	}
	u.csrf = m[1]
	return u
}

func redact(cookie string) string {
	name, rest, _ := strings.Cut(cookie, "=")
	_, attrs, _ := strings.Cut(rest, ";")
	return name + "=...;" + attrs
}

// do sends a request (a form when values is set) and returns the response
// and its body.
func (u *httpUser) do(method, path string, values url.Values, header http.Header) (*http.Response, string) {
	u.t.Helper()
	var body io.Reader
	if values != nil {
		body = strings.NewReader(values.Encode())
	}
	req, err := http.NewRequest(method, u.base+path, body)
	if err != nil {
		u.t.Fatal(err)
	}
	if values != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := u.c.Do(req)
	if err != nil {
		u.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		u.t.Fatal(err)
	}
	return resp, string(b)
}

// TestCSRF: a form without the session's CSRF token, with another
// session's, or sent from another site is refused and changes nothing; the
// same form with the token works.
func TestCSRF(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	alice, bob := signInHTTP(t, "alice"), signInHTTP(t, "bob")
	api := tenantClient(t, "alice").TenantV1alpha1()
	form := func(csrf string) url.Values {
		v := url.Values{"name": {"csrf-net"}, "topology": {"Layer3"}}
		if csrf != "" {
			v.Set("_csrf", csrf)
		}
		return v
	}
	for _, c := range []struct {
		what   string
		values url.Values
		header http.Header
	}{
		{"no token", form(""), nil},
		{"a forged token", form("forged"), nil},
		{"bob's token", form(bob.csrf), nil},
		{"another origin", form(alice.csrf), http.Header{"Origin": {"https://evil.example"}}},
		{"a cross-site fetch", form(alice.csrf), http.Header{"Sec-Fetch-Site": {"cross-site"}}},
	} {
		resp, body := alice.do("POST", "/networks", c.values, c.header)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "CSRF") {
			t.Errorf("alice's create with %s: %s %q, want 403 naming the CSRF token", c.what, resp.Status, excerpt(body))
		}
	}
	if _, err := api.Networks().Get(ctx, "csrf-net", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after the refused forms csrf-net: %v, want NotFound", err)
	}
	resp, _ := alice.do("POST", "/networks", form(alice.csrf), http.Header{"Origin": {alice.base}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("alice's create with her token: %s", resp.Status)
	}
	if _, err := api.Networks().Get(ctx, "csrf-net", metav1.GetOptions{}); err != nil {
		t.Errorf("csrf-net after the accepted form: %v", err)
	}
	resp, _ = alice.do("POST", "/networks/csrf-net/delete", url.Values{"_csrf": {alice.csrf}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("deleting csrf-net: %s", resp.Status)
	}
}

// TestNoTokenLeaks: no user's token appears in any page, script, style
// sheet or event stream the console serves, nor in its log.
func TestNoTokenLeaks(t *testing.T) {
	s := framework.Current()
	var tokens []string
	for _, u := range s.Users() {
		tokens = append(tokens, u.Token)
	}
	check := func(where, text string) {
		t.Helper()
		for _, tok := range tokens {
			if strings.Contains(text, tok) {
				t.Errorf("%s contains a user's token", where)
			}
		}
	}
	for _, user := range []string{"alice", "admin"} {
		u := signInHTTP(t, user)
		for _, path := range []string{"/signin", "/overview", "/namespaces", "/networks", "/floatingips", "/loadbalancers", "/offboarding",
			"/networks/default", "/namespaces/dev", "/admin/tenants", "/admin/tenants/acme", "/admin/pools", "/static/console.js", "/static/console.css"} {
			resp, body := u.do("GET", path, nil, nil)
			check(user+" GET "+path+" ("+resp.Status+")", body)
			for k, vs := range resp.Header {
				check(user+" GET "+path+" header "+k, strings.Join(vs, " "))
			}
		}
		check(user+"'s first live event", u.firstEvent("/live/networks"))
	}
	log, err := os.ReadFile(s.LogPath("tenant-console"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), `path="/overview"`) {
		t.Errorf("the console's log does not show its requests (it runs with --v=2)")
	}
	check("the console's log", string(log))
}

// firstEvent reads a live stream until its first event.
func (u *httpUser) firstEvent(path string) string {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", u.base+path, nil)
	if err != nil {
		u.t.Fatal(err)
	}
	resp, err := u.c.Do(req)
	if err != nil {
		u.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		u.t.Fatalf("GET %s: %s, Content-Type %q", path, resp.Status, ct)
	}
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(b.String(), "retry:") && strings.Contains(b.String(), "event: rows") && sc.Text() == "" {
			break
		}
	}
	return b.String()
}

// TestProviderPagesForbidden: a tenant member reaching the provider pages
// gets the API's 403, shown as the API states it, and creates nothing.
func TestProviderPagesForbidden(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	alice := signInHTTP(t, "alice")
	for _, path := range []string{"/admin/pools", "/admin/tenants"} {
		resp, body := alice.do("GET", path, nil, nil)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `cannot list resource &#34;addresspools&#34;`) {
			t.Errorf("alice GET %s: %s, want the API's 403 on addresspools:\n%s", path, resp.Status, body)
		}
	}
	resp, body := alice.do("POST", "/admin/tenants", url.Values{"_csrf": {alice.csrf}, "name": {"alice-corp"}, "users": {"alice"}, "prefixLength": {"24"}}, nil)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `cannot create resource &#34;tenants&#34;`) {
		t.Errorf("alice onboarding a tenant: %s, want the API's 403:\n%s", resp.Status, body)
	}
	if _, err := tenantClient(t, "admin").TenantV1alpha1().Tenants().Get(ctx, "alice-corp", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("alice-corp after alice's refused onboarding: %v, want NotFound", err)
	}
}

// TestSignOut: after signing out, the old session cookie opens nothing.
func TestSignOut(t *testing.T) {
	alice := signInHTTP(t, "alice")
	old := alice.c.Jar.Cookies(mustURL(t, alice.base))
	resp, _ := alice.do("POST", "/signout", url.Values{"_csrf": {alice.csrf}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/signin" {
		t.Fatalf("signing out: %s to %q", resp.Status, resp.Header.Get("Location"))
	}
	replay := &httpUser{t: t, c: framework.Current().ConsoleHTTPClient(), base: alice.base}
	replay.c.Jar, _ = cookiejar.New(nil)
	replay.c.Jar.SetCookies(mustURL(t, alice.base), old)
	resp, _ = replay.do("GET", "/overview", nil, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/signin" {
		t.Errorf("the signed-out session's cookie: %s to %q, want the sign-in page", resp.Status, resp.Header.Get("Location"))
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestHeaderAuthMode: behind an authenticating proxy the console takes the
// user's token from the proxy's header with every request and keeps no
// session; the API still decides what each user sees.
func TestHeaderAuthMode(t *testing.T) {
	s := framework.Current()
	srv, err := console.NewServer(console.Config{
		API:         &rest.Config{Host: s.KubeAPIServerURL(), TLSClientConfig: rest.TLSClientConfig{CAData: s.HostCAPEM()}},
		AuthMode:    console.AuthHeader,
		TokenHeader: "X-Forwarded-Access-Token",
		SignOutURL:  "/oauth2/sign_out",
		SessionTTL:  time.Hour,
		CSRFKey:     []byte(strings.Repeat("x", 32)),
	})
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(srv)
	defer proxy.Close()
	as := func(user string) http.Header { return http.Header{"X-Forwarded-Access-Token": {s.Token(user)}} }
	u := &httpUser{t: t, c: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, base: proxy.URL}

	resp, _ := u.do("GET", "/overview", nil, nil)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token header: %s, want 401", resp.Status)
	}
	resp, body := u.do("GET", "/overview", nil, as("alice"))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `id="tenant-name">acme<`) || len(resp.Header.Values("Set-Cookie")) != 0 {
		t.Fatalf("alice through the proxy: %s, cookies %v:\n%s", resp.Status, resp.Header.Values("Set-Cookie"), body)
	}
	csrf := csrfInput.FindStringSubmatch(body)[1]
	resp, body = u.do("GET", "/networks", nil, as("bob"))
	if resp.StatusCode != http.StatusOK || strings.Contains(body, "acme") {
		t.Errorf("bob through the proxy: %s, sees acme: %v", resp.Status, strings.Contains(body, "acme"))
	}
	resp, _ = u.do("POST", "/networks", url.Values{"name": {"hdr-net"}, "_csrf": {csrf}}, as("bob"))
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("bob posting with alice's CSRF token: %s, want 403", resp.Status)
	}
	resp, _ = u.do("POST", "/signout", url.Values{"_csrf": {csrf}}, as("alice"))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/oauth2/sign_out" {
		t.Errorf("sign out through the proxy: %s to %q", resp.Status, resp.Header.Get("Location"))
	}
}

// excerpt is the start of a long body, for messages.
func excerpt(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
