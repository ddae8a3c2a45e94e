package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/klog/v2"
)

// startupGate answers requests with 503 and a Retry-After until what they
// need has loaded: the CAs that authenticate the aggregator's forwarded
// users and client certificates (without them a forwarded request is
// anonymous and gets a 403 it does not deserve), and the membership index
// (without it no user is a member of any tenant). The host's aggregator
// sends requests to a restarted server as soon as it accepts connections,
// before its readiness says anything; a 503 tells clients to retry.
// Health checks and profiles pass the gate.
type startupGate struct {
	open atomic.Bool
	// loopbackAuthorization is the Authorization header of the server's
	// own clients (the membership index, the syncer), which pass.
	loopbackAuthorization string

	mu         sync.Mutex
	conditions []startupCondition
}

// startupCondition is one thing the gate waits for: ready says whether it
// is there, and what is missing when not.
type startupCondition struct {
	what  string
	ready func() bool
}

// require adds a condition to the gate.
func (g *startupGate) require(what string, ready func() bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.conditions = append(g.conditions, startupCondition{what, ready})
}

// missing returns what the gate still waits for.
func (g *startupGate) missing() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, c := range g.conditions {
		if !c.ready() {
			out = append(out, c.what)
		}
	}
	return out
}

// startupGateTimeout bounds the wait: a host whose authentication
// ConfigMap lacks a CA must not keep the server shut for ever.
const startupGateTimeout = time.Minute

// run opens the gate once nothing is missing, or after timeout.
func (g *startupGate) run(ctx context.Context, timeout time.Duration) {
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return len(g.missing()) == 0, nil
	})
	if err != nil && ctx.Err() == nil {
		klog.FromContext(ctx).Info("Serving requests although the server is not done starting", "missing", g.missing(), "after", timeout)
	}
	g.open.Store(true)
}

// ungatedPaths pass the gate: the kubelet and the aggregator ask the health
// checks while the server starts, and the profiles (/debug/pprof, when
// --profiling is on) are how to see what a start spends its time on. The
// chain inside the gate still authenticates and authorizes them: until the
// client CA is in, a certificate's user is anonymous and refused (403).
var ungatedPaths = []string{"/healthz", "/livez", "/readyz", "/debug/pprof"}

// wrap puts the gate in front of handler.
func (g *startupGate) wrap(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.open.Load() {
			handler.ServeHTTP(w, r)
			return
		}
		if g.loopbackAuthorization != "" && r.Header.Get("Authorization") == g.loopbackAuthorization {
			handler.ServeHTTP(w, r)
			return
		}
		for _, p := range ungatedPaths {
			if r.URL.Path == p || strings.HasPrefix(r.URL.Path, p+"/") {
				handler.ServeHTTP(w, r)
				return
			}
		}
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		msg := fmt.Sprintf("the server is starting: waiting for %s", strings.Join(g.missing(), ", "))
		_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":"ServiceUnavailable","code":503}`+"\n", msg)
	})
}

// installStartupGate puts the gate in front of the handler chain of config
// and makes it wait for the CAs of the delegated authentication.
func installStartupGate(config *genericapiserver.Config) *startupGate {
	g := &startupGate{}
	if lb := config.LoopbackClientConfig; lb != nil && lb.BearerToken != "" {
		g.loopbackAuthorization = "Bearer " + lb.BearerToken
	}
	build := config.BuildHandlerChainFunc
	config.BuildHandlerChainFunc = func(h http.Handler, c *genericapiserver.Config) http.Handler {
		return g.wrap(build(h, c))
	}
	if rh := config.Authentication.RequestHeaderConfig; rh != nil && rh.CAContentProvider != nil {
		g.require("the request-header client CA", hasCA(rh.CAContentProvider))
		if rh.UsernameHeaders != nil {
			g.require("the request-header names", func() bool { return len(rh.UsernameHeaders.Value()) > 0 })
		}
	}
	if config.SecureServing != nil && config.SecureServing.ClientCA != nil {
		g.require("the client CA", hasCA(config.SecureServing.ClientCA))
	}
	return g
}

func hasCA(p dynamiccertificates.CAContentProvider) func() bool {
	return func() bool { return len(p.CurrentCABundleContent()) > 0 }
}

// startGate opens the gate once the server runs, and makes readiness wait
// for it.
func (s *Server) startGate(g *startupGate) error {
	s.GenericAPIServer.AddPostStartHookOrDie("tenant-startup-gate", func(ctx genericapiserver.PostStartHookContext) error {
		go g.run(ctx, startupGateTimeout)
		return nil
	})
	return s.GenericAPIServer.AddReadyzChecks(healthz.NamedCheck("tenant-startup-gate", func(*http.Request) error {
		if !g.open.Load() {
			return fmt.Errorf("waiting for %s", strings.Join(g.missing(), ", "))
		}
		return nil
	}))
}
