package outage

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"

	"tenant.io/tenant-apiserver/test/integration/framework"
)

// etcdOutage is one way of taking etcd away: begin takes it away, end
// brings it back and returns once it serves again.
type etcdOutage struct {
	what  string
	begin func() error
	end   func(context.Context) error
	down  time.Duration
}

// TestEtcdKilled SIGKILLs etcd for 20 s while three tenants write and
// watch, then starts it again on the same ports and data dir.
func TestEtcdKilled(t *testing.T) {
	s := theStack()
	runEtcdOutage(t, "etcdkill", etcdOutage{
		what:  "etcd SIGKILLed",
		begin: s.KillTenantEtcd,
		end:   s.StartTenantEtcd,
		down:  20 * time.Second,
	})
}

// TestEtcdPaused SIGSTOPs etcd for 10 s while three tenants write and
// watch, then SIGCONTs it: etcd is slow, not dead (its sockets stay open).
func TestEtcdPaused(t *testing.T) {
	s := theStack()
	runEtcdOutage(t, "etcdpause", etcdOutage{
		what:  "etcd SIGSTOPped",
		begin: s.PauseTenantEtcd,
		end:   func(context.Context) error { return s.ResumeTenantEtcd() },
		down:  10 * time.Second,
	})
}

// runEtcdOutage onboards tenantsPerTest tenants, starts their watches
// (Namespaces and Networks, as their members through the aggregator) and
// a write load (theirs, and the provider's Tenants), takes etcd away for
// o.down and brings it back, then checks: the answers during the outage
// were clean (5xx, 429 or a timeout, or a success that was stored); no
// API server exited or panicked; every acknowledged write is there and
// every acknowledged delete gone; each watch resumed from its last
// resourceVersion and received exactly the events etcd recorded; the host
// converged; IPAM holds no duplicate and, after the sweeper, no leak.
func runEtcdOutage(t *testing.T, prefix string, o etcdOutage) {
	ctx := framework.Context(t, 15*time.Minute)
	s := theStack()
	_, members := onboardTenants(ctx, t, prefix, tenantsPerTest)

	ws := startWatchers(ctx, t, members)
	procs := watchProcesses(t)
	l := newLoad(t, prefix, members)
	loadStart := time.Now()
	stopLoad := l.start(ctx)
	t.Cleanup(stopLoad)
	// Some writes succeed before the outage.
	eventually(ctx, t, recoverTimeout, "the load writing", func(context.Context) (bool, string) {
		n := l.successes()
		return n >= 30, fmt.Sprintf("%d successful writes", n)
	})

	outageAt := time.Now()
	if err := o.begin(); err != nil {
		t.Fatalf("%s: %v", o.what, err)
	}
	t.Cleanup(func() {
		// Whatever happened, the next test needs etcd.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := s.ResumeTenantEtcd(); err != nil && s.PID("tenant-etcd") != 0 {
			t.Logf("cleanup: resuming etcd: %v", err)
		}
		if s.PID("tenant-etcd") == 0 {
			if err := s.StartTenantEtcd(ctx); err != nil {
				t.Errorf("cleanup: starting etcd: %v", err)
			}
		}
	})
	t.Logf("%s at %s", o.what, outageAt.Format("15:04:05.000"))
	time.Sleep(o.down)
	if err := o.end(ctx); err != nil {
		t.Fatalf("bringing etcd back: %v", err)
	}
	backAt := time.Now()
	t.Logf("etcd back and healthy %s after the outage began", backAt.Sub(outageAt).Round(100*time.Millisecond))

	// Recovery, measured from the moment etcd serves again.
	l.waitEveryWriterSucceeds(ctx, t, backAt)
	firstWrite := l.firstSuccessAfter(backAt).Sub(backAt)
	resumed := ws.waitResumed(ctx, t, backAt)
	stopLoad()
	loadEnd := time.Now()
	waitConverged(ctx, t, prefix)
	converged := time.Since(backAt)

	before := l.countsBetween(loadStart, outageAt)
	during := l.countsBetween(outageAt, backAt)
	after := l.countsBetween(backAt, loadEnd)
	t.Logf("answers before the outage: %s", describeCounts(before))
	t.Logf("answers to requests sent during the outage: %s", describeCounts(during))
	t.Logf("answers after etcd came back: %s", describeCounts(after))
	checkOutageAnswers(t, during)

	procs.check(t)
	checked := l.verify(ctx, t)
	t.Logf("%d objects hold what the answers acknowledged", checked)
	ws.verify(ctx, t, func(tenant string) dynamic.Interface { return dynamicFor(t, s.RESTConfig(members[tenant])) })
	rep, took := waitIPAMClean(ctx, t)
	t.Logf("IPAM: %d allocations for %d tenants, no duplicate, no leak (clean %s after convergence)", rep.Allocations, rep.Tenants, took.Round(100*time.Millisecond))
	procs.check(t)

	t.Logf("FIGURES %s for %s: first successful tenant write %s after etcd was back; all %d watches delivering again after %s; host converged after %s",
		o.what, o.down, firstWrite.Round(10*time.Millisecond), len(ws.all), resumed.Round(10*time.Millisecond), converged.Round(100*time.Millisecond))
	ends := 0
	for _, w := range ws.all {
		ends += w.endsAfter(outageAt)
	}
	t.Logf("watches that ended (and were resumed) since the outage began: %d", ends)
}

// checkOutageAnswers fails the test for any answer to a request sent while
// etcd was away that is neither a success (verified as stored later), nor
// a server error or 429, nor a timeout or lost connection, nor one of the
// answers that say what is there (404, 409) — which a request sent just
// before etcd came back may legitimately get.
func checkOutageAnswers(t *testing.T, counts map[string]int) {
	t.Helper()
	for res, n := range counts {
		switch {
		case res == "2xx", res == "timeout", res == "connection error", res == "429", res == "404", res == "409", strings.HasPrefix(res, "5"):
		default:
			t.Errorf("%d requests sent during the outage got %s: want a clean 5xx, 429 or timeout", n, res)
		}
	}
}
