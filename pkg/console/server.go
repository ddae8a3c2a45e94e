// Package console is the tenant.io web console: server-rendered pages over
// the API, called with the signed-in user's own credentials, and tables
// kept live by server-sent events fed from the API's watches.
package console

import (
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config is what a Server needs.
type Config struct {
	// API is the host kube-apiserver: its address and CA, no credentials.
	API *rest.Config
	// AuthMode is AuthToken or AuthHeader; TokenHeader and SignOutURL
	// serve AuthHeader.
	AuthMode, TokenHeader, SignOutURL string
	// SessionTTL bounds a session (AuthToken).
	SessionTTL time.Duration
	// CSRFKey derives the CSRF tokens.
	CSRFKey []byte
	// Secure marks the cookies Secure: the console is served over TLS.
	Secure bool
}

// Server is the console's HTTP handler.
type Server struct {
	cfg      Config
	api      *apiClients
	sessions *sessionStore
	pages    map[string]*template.Template
	rows     *template.Template
	mux      *http.ServeMux
}

var _ http.Handler = &Server{}

// NewServer builds a Server.
func NewServer(cfg Config) (*Server, error) {
	if len(cfg.CSRFKey) < 32 {
		return nil, fmt.Errorf("the CSRF key needs at least 32 bytes")
	}
	api, err := newAPIClients(cfg.API)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, api: api, sessions: newSessionStore(cfg.SessionTTL), mux: http.NewServeMux()}
	if err := s.parseTemplates(); err != nil {
		return nil, err
	}
	s.routes()
	return s, nil
}

// templateFuncs are the helpers the templates use.
var templateFuncs = template.FuncMap{
	"join": strings.Join,
	"fieldErrors": func(e *apiError, field string) []string {
		if e == nil {
			return nil
		}
		return e.Fields[field]
	},
	"value":    func(f formValues, name string) string { return f.Get(name) },
	"checked":  func(f formValues, name string) bool { return f.Get(name) != "" },
	"selected": func(f formValues, name, v string) bool { return f.Get(name) == v },
}

// parseTemplates parses every page over the shared layout and partials.
func (s *Server) parseTemplates() error {
	base, err := template.New("").Funcs(templateFuncs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html")
	if err != nil {
		return err
	}
	s.rows = base
	names, err := fs.Glob(templateFS, "templates/page-*.html")
	if err != nil {
		return err
	}
	s.pages = map[string]*template.Template{}
	for _, n := range names {
		t, err := template.Must(base.Clone()).ParseFS(templateFS, n)
		if err != nil {
			return err
		}
		s.pages[strings.TrimSuffix(strings.TrimPrefix(n, "templates/page-"), ".html")] = t
	}
	return nil
}

func (s *Server) routes() {
	static, _ := fs.Sub(staticFS, "static")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })

	s.mux.HandleFunc("GET /signin", s.signInPage)
	s.mux.HandleFunc("POST /signin", s.signIn)
	s.mux.HandleFunc("POST /signout", s.signedIn(s.signOut))

	s.mux.HandleFunc("GET /{$}", s.signedIn(s.home))
	s.mux.HandleFunc("GET /overview", s.signedIn(s.overview))
	s.mux.HandleFunc("GET /offboarding", s.signedIn(s.offboarding))
	s.mux.HandleFunc("GET /routes", s.signedIn(s.routesPage))
	for _, k := range tenantKinds {
		s.mux.HandleFunc("GET /"+k.Resource, s.signedIn(s.listPage(k)))
		s.mux.HandleFunc("POST /"+k.Resource, s.signedIn(s.createObject(k)))
		path := "/" + k.Resource + "/{name}"
		if k.Namespaced {
			path = "/" + k.Resource + "/{namespace}/{name}"
		}
		s.mux.HandleFunc("GET "+path, s.signedIn(s.detailPage(k)))
		s.mux.HandleFunc("POST "+path+"/delete", s.signedIn(s.deleteObject(k)))
	}
	s.mux.HandleFunc("POST /floatingips/{namespace}/{name}/attach", s.signedIn(s.attachFloatingIP))
	s.mux.HandleFunc("POST /floatingips/{namespace}/{name}/detach", s.signedIn(s.detachFloatingIP))
	s.mux.HandleFunc("POST /hostclaims/{namespace}/{name}/power", s.signedIn(s.powerHostClaim))
	s.mux.HandleFunc("POST /hostclaims/{namespace}/{name}/reboot", s.signedIn(s.rebootHostClaim))
	s.mux.HandleFunc("GET /live/{kind}", s.signedIn(s.live))

	s.mux.HandleFunc("GET /admin/tenants", s.signedIn(s.adminTenants))
	s.mux.HandleFunc("POST /admin/tenants", s.signedIn(s.onboard))
	s.mux.HandleFunc("GET /admin/tenants/{name}", s.signedIn(s.adminTenant))
	s.mux.HandleFunc("GET /admin/pools", s.signedIn(s.adminPools))
}

// ServeHTTP adds the security headers every response carries and logs the
// request (never its credentials).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	if s.cfg.Secure {
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
	if !strings.HasPrefix(r.URL.Path, "/static/") {
		h.Set("Cache-Control", "no-store")
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	s.mux.ServeHTTP(rec, r)
	if r.URL.Path != "/healthz" && !strings.HasPrefix(r.URL.Path, "/static/") {
		klog.V(2).InfoS("Request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "user", rec.user, "duration", time.Since(start))
	}
}

// statusRecorder remembers a response's status and user for the log.
type statusRecorder struct {
	http.ResponseWriter
	status int
	user   string
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach Flush.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
