package framework

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// Context returns a context that ends after d or with the test.
func Context(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Unthrottled returns a copy of cfg without client-side rate limits, for
// tests that send bursts of requests (the server's own limits still apply).
func Unthrottled(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}
