package outage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestTenantAPIServerKilledUnderLoad SIGKILLs the tenant-apiserver while
// four tenants create, update and delete Namespaces and Networks and the
// provider creates and deletes Tenants, and starts it again. Every write
// that got a success is there afterwards and every acknowledged delete is
// gone; once the syncer has converged nothing is half-made on the host
// (no host namespace, RoleBinding, ClusterUserDefinedNetwork or pool
// without its tenant object, every tenant object with its host objects,
// usage counting what each tenant has); IPAM holds no duplicate and,
// after the sweeper, no leak; the host kube-apiserver stays up.
func TestTenantAPIServerKilledUnderLoad(t *testing.T) {
	ctx := framework.Context(t, 15*time.Minute)
	s := theStack()
	const tenants = tenantsPerTest + 1
	_, members := onboardTenants(ctx, t, "tenantkill", tenants)

	hostPID := s.PID("kube-apiserver")
	l := newLoad(t, "tenantkill", members)
	loadStart := time.Now()
	stopLoad := l.start(ctx)
	t.Cleanup(stopLoad)
	eventually(ctx, t, recoverTimeout, "the load writing", func(context.Context) (bool, string) {
		n := l.successes()
		return n >= 60, fmt.Sprintf("%d successful writes", n)
	})

	t.Cleanup(func() {
		if s.PID("tenant-apiserver") != 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := s.StartTenantAPIServer(ctx); err != nil {
			t.Errorf("cleanup: starting the tenant-apiserver: %v", err)
		}
	})
	killedAt := time.Now()
	if err := s.KillTenantAPIServer(); err != nil {
		t.Fatalf("killing the tenant-apiserver: %v", err)
	}
	t.Logf("SIGKILLed the tenant-apiserver after %d successful writes", l.successes())
	restartAt := time.Now()
	if err := s.StartTenantAPIServer(ctx); err != nil {
		t.Fatalf("starting the tenant-apiserver again: %v", err)
	}
	servingAt := time.Now()

	l.waitEveryWriterSucceeds(ctx, t, servingAt)
	firstWrite := l.firstSuccessAfter(killedAt).Sub(restartAt)
	stopLoad()
	loadEnd := time.Now()
	waitConverged(ctx, t, "tenantkill")
	converged := time.Since(restartAt)

	t.Logf("answers before the kill: %s", describeCounts(l.countsBetween(loadStart, killedAt)))
	t.Logf("answers to requests sent while it was down or starting: %s", describeCounts(l.countsBetween(killedAt, servingAt)))
	t.Logf("answers after it served again: %s", describeCounts(l.countsBetween(servingAt, loadEnd)))
	checkOutageAnswers(t, l.countsBetween(killedAt, servingAt))

	checked := l.verify(ctx, t)
	t.Logf("%d objects hold what the answers acknowledged", checked)
	rep, took := waitIPAMClean(ctx, t)
	t.Logf("IPAM: %d allocations for %d tenants, no duplicate, no leak (clean %s after convergence)", rep.Allocations, rep.Tenants, took.Round(100*time.Millisecond))
	if pid := s.PID("kube-apiserver"); pid != hostPID {
		t.Errorf("kube-apiserver exited: pid %d before, %d now", hostPID, pid)
	}

	t.Logf("FIGURES tenant-apiserver SIGKILLed and restarted at once: serving through the aggregator %s after the restart; first successful tenant write %s after the restart; host converged %s after the restart",
		servingAt.Sub(restartAt).Round(10*time.Millisecond), firstWrite.Round(10*time.Millisecond), converged.Round(100*time.Millisecond))
}
