// Package outage takes parts of the stack away while tenants write and
// watch, and checks what the product promises about it: while etcd is
// killed or stalled, requests fail cleanly (5xx or a timeout, never a
// success that was not stored) and no process exits; afterwards watches
// resume from the last resourceVersion their clients saw without losing or
// repeating an event (compared with etcd's own history), every
// acknowledged write is there, the syncer converges on the host and IPAM
// holds no duplicate and no leaked address. The same for a tenant-apiserver
// killed under a write load of several tenants, and for the host
// kube-apiserver (the aggregator) restarted under tenants' watches.
//
// It runs a stack of its own whose tenant-apiserver stores into an etcd of
// its own, as installations do (the host's control plane and its etcd are
// the platform's, not ours to take away), and has short syncer and
// IPAM periods, so recovery is quick, and with etcd compaction off, so
// that the tests can read every revision of the test from etcd. The tests
// poll for outcomes; the only time bound is a generous "recovers within"
// deadline. The recovery times they measure are logged (t.Logf), not
// asserted.
package outage

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// sweepMinAge is how old an unclaimed address must be for the IPAM sweeper
// to reclaim it in this stack (a flag of the tenant-apiserver).
const sweepMinAge = 3 * time.Second

// tenantsPerTest is how many tenants, each with a member of its own, write
// and watch in each test.
const tenantsPerTest = 3

// etcdClient reads the stack's etcd directly: its history of the tenants'
// objects and the IPAM allocations.
var etcdClient *clientv3.Client

// memberUsers are the host users of the tenants of every test, by test:
// a user that is a member of two tenants may act as neither.
var memberUsers = map[string][]string{}

// testsWithTenants are the tests that onboard tenants of their own.
var testsWithTenants = []string{"etcdkill", "etcdpause", "tenantkill", "hostrestart"}

func init() {
	for _, test := range testsWithTenants {
		for i := range tenantsPerTest + 1 {
			memberUsers[test] = append(memberUsers[test], fmt.Sprintf("%s-user%d", test, i))
		}
	}
}

func TestMain(m *testing.M) {
	var users []stack.User
	for _, test := range testsWithTenants {
		for _, u := range memberUsers[test] {
			users = append(users, stack.User{Name: u})
		}
	}
	os.Exit(framework.RunMain(m, stack.Options{
		TenantAPIServerArgs: append(framework.QuickSyncerArgs(),
			"--ipam-sweep-min-age="+sweepMinAge.String(),
			// Every revision of a test stays readable in etcd, to compare
			// what the watchers saw with.
			"--etcd-compaction-interval=0",
		),
		// The tenant-apiserver's etcd is its own, as in an installation:
		// the etcd outages are the tenant-apiserver's, the host stays up.
		TenantEtcd: true,
		ExtraUsers: users,
		Setup:      setup,
	}))
}

// setup creates the demo address pools and connects to the stack's etcd.
func setup(ctx context.Context, s *stack.Stack) error {
	if err := stack.DemoPools(ctx, s); err != nil {
		return err
	}
	var err error
	etcdClient, err = clientv3.New(clientv3.Config{
		Endpoints:   []string{s.TenantEtcdURL()},
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return fmt.Errorf("connecting to etcd: %w", err)
	}
	return nil
}
