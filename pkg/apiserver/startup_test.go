package apiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestStartupGate(t *testing.T) {
	var synced atomic.Bool
	g := &startupGate{loopbackAuthorization: "Bearer loopback"}
	g.require("the tenant membership index", synced.Load)
	h := g.wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	serve := func(path, authorization string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		if authorization != "" {
			r.Header.Set("Authorization", authorization)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { g.run(ctx, time.Minute); close(done) }()

	w := serve("/apis/tenant.io/v1alpha1/namespaces", "Bearer someone")
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" ||
		!strings.Contains(w.Body.String(), "waiting for the tenant membership index") {
		t.Errorf("a request while starting: %d %q (Retry-After %q), want 503 naming what is missing", w.Code, w.Body.String(), w.Header().Get("Retry-After"))
	}
	for _, p := range []string{"/readyz", "/livez/ping", "/healthz", "/debug/pprof/profile"} {
		if w := serve(p, ""); w.Code != http.StatusOK {
			t.Errorf("%s while starting: %d, want it served", p, w.Code)
		}
	}
	for _, p := range []string{"/debug/pprofile", "/debugging"} {
		if w := serve(p, "Bearer someone"); w.Code != http.StatusServiceUnavailable {
			t.Errorf("%s while starting: %d, want 503", p, w.Code)
		}
	}
	if w := serve("/apis/tenant.io/v1alpha1/tenants", "Bearer loopback"); w.Code != http.StatusOK {
		t.Errorf("the server's own client while starting: %d, want it served", w.Code)
	}

	synced.Store(true)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the gate did not open once nothing was missing")
	}
	if w := serve("/apis/tenant.io/v1alpha1/namespaces", "Bearer someone"); w.Code != http.StatusOK {
		t.Errorf("a request once started: %d, want it served", w.Code)
	}
}

func TestStartupGateTimeout(t *testing.T) {
	g := &startupGate{}
	g.require("a CA the host never publishes", func() bool { return false })
	g.run(context.Background(), 50*time.Millisecond)
	if !g.open.Load() {
		t.Error("the gate stays shut after its timeout")
	}
}
