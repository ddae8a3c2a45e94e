package framework

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"tenant.io/tenant-apiserver/pkg/stack"
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

// Short syncer and IPAM periods for the stacks of tests that fail the
// syncer over, wait for drift repair or for IPAM upkeep: each happens
// within seconds.
const (
	SyncerLeaseDuration = 4 * time.Second
	SyncerRenewDeadline = 3 * time.Second
	SyncerRetryPeriod   = 500 * time.Millisecond
	SyncerCheckPeriod   = 2 * time.Second
	IPAMPeriod          = time.Second
)

// QuickSyncerArgs are the tenant-apiserver flags of those periods.
func QuickSyncerArgs() []string {
	return []string{
		"--syncer-lease-duration=" + SyncerLeaseDuration.String(),
		"--syncer-renew-deadline=" + SyncerRenewDeadline.String(),
		"--syncer-retry-period=" + SyncerRetryPeriod.String(),
		"--syncer-check-period=" + SyncerCheckPeriod.String(),
		// The tests' stores are small: a pass goes in at once.
		"--syncer-check-rate=10000",
		"--ipam-period=" + IPAMPeriod.String(),
	}
}

// StartHostOnCleanup starts the host kube-apiserver of s again when the
// test ends with it stopped: the package's next test needs it.
func StartHostOnCleanup(t *testing.T, s *stack.Stack) {
	t.Cleanup(func() {
		if s.PID("kube-apiserver") != 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := s.StartHost(ctx); err != nil {
			t.Errorf("cleanup: starting the host kube-apiserver: %v", err)
		}
	})
}
