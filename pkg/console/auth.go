package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"tenant.io/tenant-apiserver/pkg/adminclient"
	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	tenantclient "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned/typed/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/tenantview"
)

const (
	// sessionCookie holds the session ID (AuthToken mode).
	sessionCookie = "tenant_console_session"
	// signInCookie protects the sign-in form against login CSRF.
	signInCookie = "tenant_console_signin"
	// csrfField is the hidden form field of the CSRF token.
	csrfField = "_csrf"
)

// apiClients makes clients of the host API for one user's token over one
// shared connection pool.
type apiClients struct {
	cfg *rest.Config
	rt  http.RoundTripper
}

func newAPIClients(cfg *rest.Config) (*apiClients, error) {
	anonymous := rest.AnonymousClientConfig(cfg)
	rt, err := rest.TransportFor(anonymous)
	if err != nil {
		return nil, err
	}
	return &apiClients{cfg: anonymous, rt: rt}, nil
}

// userClients are the clients of one user's token.
type userClients struct {
	api  tenantclient.TenantV1alpha1Interface
	kube kubernetes.Interface
	// views reads admin.tenant.io, the provider's views of every tenant.
	views *adminclient.Client
	// dynamic reads the host's kinds this module has no types of: the
	// Gateway API routes of the tenant's host namespaces.
	dynamic dynamic.Interface
}

// forToken returns the clients of the user whose bearer token this is.
func (a *apiClients) forToken(token string) (*userClients, error) {
	hc := &http.Client{Transport: transport.NewBearerAuthRoundTripper(token, a.rt)}
	cfg := rest.CopyConfig(a.cfg)
	cfg.QPS, cfg.Burst = 50, 100
	tc, err := versioned.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	kc, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	vc, err := adminclient.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	dc, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	return &userClients{api: tc.TenantV1alpha1(), kube: kc, views: vc, dynamic: dc}, nil
}

// session is a signed-in user (AuthToken mode). The token stays here.
type session struct {
	id      string
	token   string
	user    string
	expires time.Time
}

// sessionStore keeps the sessions of this process in memory.
type sessionStore struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]*session
}

func newSessionStore(ttl time.Duration) *sessionStore {
	return &sessionStore{ttl: ttl, m: map[string]*session{}}
}

func (s *sessionStore) create(token, user string) (*session, error) {
	id, err := randomString()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	sess := &session{id: id, token: token, user: user, expires: now.Add(s.ttl)}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.m {
		if now.After(v.expires) {
			delete(s.m, k)
		}
	}
	s.m[id] = sess
	return sess, nil
}

func (s *sessionStore) get(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.m[id]
	if sess != nil && time.Now().After(sess.expires) {
		delete(s.m, id)
		return nil
	}
	return sess
}

func (s *sessionStore) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

func randomString() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// caller is the user of one request and the clients that act as it.
type caller struct {
	// User is the name the host authenticated.
	User   string
	Groups []string
	// Provider is true when the API lets the user update Tenants.
	Provider bool
	// Tenants are the tenants the user belongs to.
	Tenants []tenantview.Membership
	// Tenant is the one tenant the user acts in ("" for none or several).
	Tenant string
	// CSRF is the token forms carry back.
	CSRF string

	*userClients
	// sessionID is set in AuthToken mode.
	sessionID string
}

type callerKey struct{}

func callerFrom(r *http.Request) *caller { return r.Context().Value(callerKey{}).(*caller) }

// credentials finds the request's token and what its CSRF token derives
// from; ok is false when the request carries none.
func (s *Server) credentials(r *http.Request) (token, csrfBase, sessionID string, ok bool) {
	if s.cfg.AuthMode == AuthHeader {
		token = strings.TrimSpace(strings.TrimPrefix(r.Header.Get(s.cfg.TokenHeader), "Bearer "))
		if token == "" {
			return "", "", "", false
		}
		sum := sha256.Sum256([]byte(token))
		return token, "token:" + base64.RawURLEncoding.EncodeToString(sum[:]), "", true
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return "", "", "", false
	}
	sess := s.sessions.get(c.Value)
	if sess == nil {
		return "", "", "", false
	}
	return sess.token, "session:" + sess.id, sess.id, true
}

func (s *Server) csrfToken(base string) string {
	m := hmac.New(sha256.New, s.cfg.CSRFKey)
	m.Write([]byte("csrf\x00" + base))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// sameOrigin refuses requests a browser marks as coming from another site.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || u.Host != r.Host {
			return false
		}
	}
	return true
}

// maxFormBytes bounds a form's body.
const maxFormBytes = 64 << 10

// parseForm reads a form's body, refusing one too large or malformed.
func parseForm(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "Bad request: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// signedIn resolves the caller, or sends the browser to sign in. Every
// unsafe request must carry the caller's CSRF token and come from this
// origin.
func (s *Server) signedIn(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token, csrfBase, sessionID, ok := s.credentials(r)
		if !ok {
			s.needSignIn(w, r)
			return
		}
		c := &caller{CSRF: s.csrfToken(csrfBase), sessionID: sessionID}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if !parseForm(w, r) {
				return
			}
			if !sameOrigin(r) || !hmac.Equal([]byte(r.PostForm.Get(csrfField)), []byte(c.CSRF)) {
				http.Error(w, "Forbidden: the form's CSRF token is missing or wrong. Reload the page and try again.", http.StatusForbidden)
				return
			}
		}
		var err error
		if c.userClients, err = s.api.forToken(token); err != nil {
			http.Error(w, "Internal error: "+err.Error(), http.StatusInternalServerError)
			return
		}
		// The live tables need no identity: the API scopes the watch.
		if !strings.HasPrefix(r.URL.Path, "/live/") {
			if err := c.resolve(r.Context()); err != nil {
				if apierrors.IsUnauthorized(err) {
					if sessionID != "" {
						s.sessions.remove(sessionID)
					}
					s.needSignIn(w, r)
					return
				}
				s.renderError(w, r, c, err)
				return
			}
		}
		if rec, ok := w.(*statusRecorder); ok {
			rec.user = c.User
		}
		h(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
	}
}

// resolve asks the host who the caller is, whether it is a provider, and
// which tenants it belongs to.
func (c *caller) resolve(ctx context.Context) error {
	review, err := c.kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	c.User, c.Groups = review.Status.UserInfo.Username, review.Status.UserInfo.Groups
	var (
		wg        sync.WaitGroup
		accessErr error
		tenants   *tenantv1alpha1.TenantList
		listErr   error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		access, err := c.kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Group: tenantv1alpha1.SchemeGroupVersion.Group, Resource: "tenants", Verb: "update",
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			accessErr = err
			return
		}
		c.Provider = access.Status.Allowed
	}()
	tenants, listErr = c.api.Tenants().List(ctx, metav1.ListOptions{})
	wg.Wait()
	if accessErr != nil {
		return accessErr
	}
	if listErr != nil && !apierrors.IsForbidden(listErr) {
		return listErr
	}
	if tenants != nil {
		c.Tenants = tenantview.Memberships(c.User, c.Groups, tenants.Items)
	}
	if len(c.Tenants) == 1 {
		c.Tenant = c.Tenants[0].Tenant
	}
	return nil
}

func (s *Server) needSignIn(w http.ResponseWriter, r *http.Request) {
	if s.cfg.AuthMode == AuthHeader {
		http.Error(w, "Unauthorized: the authenticating proxy sent no "+s.cfg.TokenHeader+" header.", http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/live/") {
		http.Redirect(w, r, "/signin", http.StatusSeeOther)
		return
	}
	http.Error(w, "Unauthorized: sign in first.", http.StatusUnauthorized)
}

// signInPage is the sign-in form; a cookie of its own ties the form to this
// browser.
func (s *Server) signInPage(w http.ResponseWriter, r *http.Request) {
	s.renderSignIn(w, r, http.StatusOK, "")
}

func (s *Server) renderSignIn(w http.ResponseWriter, r *http.Request, status int, problem string) {
	if s.cfg.AuthMode == AuthHeader {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	nonce, err := randomString()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, s.cookie(signInCookie, nonce, 10*time.Minute))
	s.render(w, r, status, "signin", &page{Title: "Sign in", CSRF: s.csrfToken("signin:" + nonce), Data: problem})
}

// signIn checks the token with the host and starts a session.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	if s.cfg.AuthMode == AuthHeader {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if !parseForm(w, r) {
		return
	}
	nonce, err := r.Cookie(signInCookie)
	if err != nil || !sameOrigin(r) || !hmac.Equal([]byte(r.PostForm.Get(csrfField)), []byte(s.csrfToken("signin:"+nonce.Value))) {
		http.Error(w, "Forbidden: the sign-in form's CSRF token is missing or wrong. Reload the page and try again.", http.StatusForbidden)
		return
	}
	token := strings.TrimSpace(r.PostForm.Get("token"))
	if token == "" {
		s.renderSignIn(w, r, http.StatusUnprocessableEntity, "Enter a token.")
		return
	}
	clients, err := s.api.forToken(token)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	review, err := clients.kube.AuthenticationV1().SelfSubjectReviews().Create(r.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		status, msg := http.StatusBadGateway, "The API could not be asked who you are: "+err.Error()
		if apierrors.IsUnauthorized(err) {
			status, msg = http.StatusUnauthorized, "The API did not accept this token (401 Unauthorized)."
		}
		s.renderSignIn(w, r, status, msg)
		return
	}
	sess, err := s.sessions.create(token, review.Status.UserInfo.Username)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, s.cookie(signInCookie, "", -1))
	http.SetCookie(w, s.cookie(sessionCookie, sess.id, s.cfg.SessionTTL))
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) signOut(w http.ResponseWriter, r *http.Request) {
	c := callerFrom(r)
	if s.cfg.AuthMode == AuthHeader {
		http.Redirect(w, r, s.cfg.SignOutURL, http.StatusSeeOther)
		return
	}
	s.sessions.remove(c.sessionID)
	http.SetCookie(w, s.cookie(sessionCookie, "", -1))
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

// cookie is a cookie no script can read and no other site can send.
func (s *Server) cookie(name, value string, maxAge time.Duration) *http.Cookie {
	c := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, Secure: s.cfg.Secure, SameSite: http.SameSiteStrictMode}
	if maxAge < 0 {
		c.MaxAge = -1
	} else {
		c.MaxAge = int(maxAge / time.Second)
	}
	return c
}
