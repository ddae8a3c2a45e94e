// Package ipam tests IPAM through the whole stack: AddressPools, the blocks
// and public IPs Tenants get as they are created, changed and deleted, and
// what is left in etcd after concurrent creates and a crash of the
// tenant-apiserver. It runs a stack of its own, with a short IPAM period and
// sweep age, so that pool status and the sweeper can be watched at work.
package ipam

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	engine "tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

const (
	// ipamPrefix is where the tenant-apiserver of the stack (--etcd-prefix=/tenant.io)
	// keeps its allocations.
	ipamPrefix = "/tenant.io/ipam"
	// ipamPeriod and sweepMinAge are the stack's --ipam-period and
	// --ipam-sweep-min-age.
	ipamPeriod  = time.Second
	sweepMinAge = 3 * time.Second
)

var (
	// etcdClient reads the stack's etcd directly; allocations reads the
	// allocations through the IPAM engine's own decoding.
	etcdClient  *clientv3.Client
	allocations *engine.Allocator
)

func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m, stack.Options{
		TenantAPIServerArgs: []string{
			"--ipam-period=" + ipamPeriod.String(),
			"--ipam-sweep-min-age=" + sweepMinAge.String(),
		},
		Setup: setup,
	}))
}

// setup connects to the stack's etcd, for the tests to read the allocations.
func setup(_ context.Context, s *stack.Stack) error {
	var err error
	etcdClient, err = clientv3.New(clientv3.Config{
		Endpoints:   []string{s.EtcdURL()},
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return fmt.Errorf("connecting to etcd: %w", err)
	}
	allocations = engine.New(etcdClient, ipamPrefix)
	return nil
}

// ---------------------------------------------------------------------------
// Helpers

func clientFor(t *testing.T, cfg *rest.Config) clientset.Interface {
	t.Helper()
	// Concurrency tests send hundreds of requests at once.
	cfg.QPS, cfg.Burst = 2000, 2000
	cs, err := clientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// ensureDefaultNetwork creates the Network "default" of m's tenant unless
// it exists: the Namespaces of the tests name it (a Namespace must name an
// existing Network), and onboarding creates it only a moment after the
// Tenant. It retries while m is not yet resolved to its tenant.
func ensureDefaultNetwork(ctx context.Context, t *testing.T, m clientset.Interface) {
	t.Helper()
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, last = m.TenantV1alpha1().Networks().Create(ctx, &tenantv1alpha1.Network{
			ObjectMeta: metav1.ObjectMeta{Name: "default"},
			Spec:       tenantv1alpha1.NetworkSpec{Topology: tenantv1alpha1.NetworkTopologyLayer2},
		}, metav1.CreateOptions{})
		return last == nil || apierrors.IsAlreadyExists(last), nil
	}); err != nil {
		t.Fatalf("creating network default: %v (last error: %v)", err, last)
	}
}

// admin is the provider admin's client, through the aggregator.
func admin(t *testing.T) clientset.Interface {
	t.Helper()
	return clientFor(t, framework.Current().RESTConfig(stack.AdminUser))
}

// member is the admin impersonating user "x" of group tenant.io:<tenant>.
func member(t *testing.T, tenant string) clientset.Interface {
	t.Helper()
	cfg := framework.Current().RESTConfig(stack.AdminUser)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "x", Groups: []string{"tenant.io:" + tenant}}
	return clientFor(t, cfg)
}

func int32p(v int32) *int32 { return &v }

// requireNoPools makes sure no AddressPool is left from another test: which
// pool a block comes from depends on every pool there is.
func requireNoPools(ctx context.Context, t *testing.T, cs clientset.Interface) {
	t.Helper()
	list, err := cs.TenantV1alpha1().AddressPools().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) > 0 {
		var names []string
		for _, p := range list.Items {
			names = append(names, p.Name)
		}
		t.Fatalf("AddressPools left by an earlier test: %v", names)
	}
}

// createPool creates an AddressPool and deletes it when the test ends (after
// the tenants the test creates later, which hold its allocations).
func createPool(ctx context.Context, t *testing.T, cs clientset.Interface, name string, spec tenantv1alpha1.AddressPoolSpec) *tenantv1alpha1.AddressPool {
	t.Helper()
	p, err := cs.TenantV1alpha1().AddressPools().Create(ctx, &tenantv1alpha1.AddressPool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating AddressPool %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := cs.TenantV1alpha1().AddressPools().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: deleting AddressPool %s: %v", name, err)
		}
	})
	return p
}

func newTenant(name string, network tenantv1alpha1.TenantNetwork, publicIPs int32) *tenantv1alpha1.Tenant {
	return &tenantv1alpha1.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: tenantv1alpha1.TenantSpec{
			Network:   network,
			PublicIPs: tenantv1alpha1.TenantPublicIPs{Count: publicIPs},
		},
	}
}

// createTenant creates a Tenant and, if that worked, deletes it when the test ends.
func createTenant(ctx context.Context, t *testing.T, cs clientset.Interface, tn *tenantv1alpha1.Tenant) (*tenantv1alpha1.Tenant, error) {
	t.Helper()
	created, err := cs.TenantV1alpha1().Tenants().Create(ctx, tn, metav1.CreateOptions{})
	if err == nil {
		t.Cleanup(func() { deleteTenant(t, cs, tn.Name) })
	}
	return created, err
}

// mustCreateTenant creates a Tenant that must be created with its addresses.
func mustCreateTenant(ctx context.Context, t *testing.T, cs clientset.Interface, tn *tenantv1alpha1.Tenant) *tenantv1alpha1.Tenant {
	t.Helper()
	created, err := createTenant(ctx, t, cs, tn)
	if err != nil {
		t.Fatalf("creating tenant %s: %v", tn.Name, err)
	}
	checkAllocatedCondition(t, created)
	if created.Status.Network == nil || created.Status.Network.CIDR == "" {
		t.Fatalf("tenant %s: no status.network.cidr: %+v", tn.Name, created.Status)
	}
	if got, want := len(created.Status.PublicIPs), int(tn.Spec.PublicIPs.Count); got != want {
		t.Fatalf("tenant %s: %d public IPs in status (%v), want %d", tn.Name, got, created.Status.PublicIPs, want)
	}
	return created
}

func checkAllocatedCondition(t *testing.T, tn *tenantv1alpha1.Tenant) {
	t.Helper()
	c := meta.FindStatusCondition(tn.Status.Conditions, tenantv1alpha1.ConditionAddressesAllocated)
	if c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("tenant %s: condition %s is %+v, want True", tn.Name, tenantv1alpha1.ConditionAddressesAllocated, c)
	}
}

// deleteTenant deletes a tenant, tolerating a short 409 while the usage of
// objects deleted just before catches up (or while the syncer has not yet
// given it the finalizer tenant.io/offboarding and its Namespace "default"
// blocks), and waits until it is gone with its addresses: the syncer
// removes its Namespaces and host objects first, and only then are its
// addresses given back.
func deleteTenant(t *testing.T, cs clientset.Interface, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tn, err := cs.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Errorf("cleanup: reading tenant %s: %v", name, err)
		return
	}
	if err := acceptDelete(ctx, cs, name); err != nil {
		t.Errorf("cleanup: %v", err)
		return
	}
	if err := waitTenantsGone(ctx, cs, map[string]types.UID{name: tn.UID}); err != nil {
		t.Errorf("cleanup: %v", err)
	}
}

func acceptDelete(ctx context.Context, cs clientset.Interface, name string) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		last = cs.TenantV1alpha1().Tenants().Delete(ctx, name, metav1.DeleteOptions{})
		return last == nil || apierrors.IsNotFound(last), nil
	})
	if err != nil {
		return fmt.Errorf("deleting tenant %s: %v (last error: %v)", name, err, last)
	}
	return nil
}

// waitTenantsGone waits until none of the tenants (name to UID) exists any
// more and nothing is allocated to them any more: a Tenant leaves the API
// the moment its last finalizer goes, and its addresses are given back
// right after, by the request that removed it.
func waitTenantsGone(ctx context.Context, cs clientset.Interface, tenants map[string]types.UID) error {
	var left []string
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		list, err := cs.TenantV1alpha1().Tenants().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		left = nil
		for _, tn := range list.Items {
			if _, ok := tenants[tn.Name]; ok {
				left = append(left, tn.Name)
			}
		}
		if len(left) > 0 {
			return false, nil
		}
		allocs, err := allocations.ListAll(ctx)
		if err != nil {
			return false, nil
		}
		for name, uid := range tenants {
			if n := len(ownedBy(allocs, uid)); n > 0 {
				left = append(left, fmt.Sprintf("%s (deleted, %d allocations held)", name, n))
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		sort.Strings(left)
		return fmt.Errorf("tenants %v still exist or hold addresses after their delete was accepted: %v", left, err)
	}
	return nil
}

// deleteTenantsAtEnd deletes, when the test ends, every tenant whose name
// starts with prefix (concurrency tests create them by the hundred), and
// waits until they are gone.
func deleteTenantsAtEnd(t *testing.T, cs clientset.Interface, prefix string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		list, err := cs.TenantV1alpha1().Tenants().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Errorf("cleanup: listing tenants: %v", err)
			return
		}
		var wg sync.WaitGroup
		sem := make(chan struct{}, 20)
		deleted := map[string]types.UID{}
		for _, tn := range list.Items {
			if !strings.HasPrefix(tn.Name, prefix) {
				continue
			}
			deleted[tn.Name] = tn.UID
			wg.Add(1)
			sem <- struct{}{}
			go func(name string) {
				defer wg.Done()
				defer func() { <-sem }()
				if err := acceptDelete(ctx, cs, name); err != nil {
					t.Errorf("cleanup: %v", err)
				}
			}(tn.Name)
		}
		wg.Wait()
		if err := waitTenantsGone(ctx, cs, deleted); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
}

// updateTenant applies change to the current Tenant and updates it, again
// when another writer came first (not when the server refuses the change).
func updateTenant(ctx context.Context, cs clientset.Interface, name string, change func(*tenantv1alpha1.Tenant)) (*tenantv1alpha1.Tenant, error) {
	for {
		cur, err := cs.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		change(cur)
		updated, err := cs.TenantV1alpha1().Tenants().Update(ctx, cur, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) && strings.Contains(err.Error(), "the object has been modified") {
			continue
		}
		return updated, err
	}
}

func getTenant(ctx context.Context, t *testing.T, cs clientset.Interface, name string) *tenantv1alpha1.Tenant {
	t.Helper()
	tn, err := cs.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting tenant %s: %v", name, err)
	}
	return tn
}

// wantAPIError checks that err is an API error with code whose message
// contains every string of contains, and returns its status.
func wantAPIError(t *testing.T, what string, err error, code int32, contains ...string) metav1.Status {
	t.Helper()
	var s apierrors.APIStatus
	if err == nil || !errors.As(err, &s) {
		t.Errorf("%s: got %v, want HTTP %d", what, err, code)
		return metav1.Status{}
	}
	st := s.Status()
	if st.Code != code {
		t.Errorf("%s: got HTTP %d (%v), want %d", what, st.Code, err, code)
		return st
	}
	for _, c := range contains {
		if !strings.Contains(st.Message, c) {
			t.Errorf("%s: message %q lacks %q", what, st.Message, c)
		}
	}
	return st
}

// wantFieldError checks that the 422 status names field.
func wantFieldError(t *testing.T, what string, st metav1.Status, field string) {
	t.Helper()
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			if c.Field == field {
				return
			}
		}
	}
	t.Errorf("%s: no cause on field %s in %+v", what, field, st.Details)
}

// wantCauses checks that the 409 status lists, among its causes, one whose
// field and message contain each pair of want.
func wantCauses(t *testing.T, what string, st metav1.Status, want ...[2]string) {
	t.Helper()
	var causes []metav1.StatusCause
	if st.Details != nil {
		causes = st.Details.Causes
	}
	for _, w := range want {
		found := slices.ContainsFunc(causes, func(c metav1.StatusCause) bool {
			return strings.Contains(c.Field, w[0]) && strings.Contains(c.Message, w[1])
		})
		if !found {
			t.Errorf("%s: no cause with field %q and message %q among %+v", what, w[0], w[1], causes)
		}
	}
}

// poolStatus polls the status of pool name until it has capacity and
// allocated (and free is the difference), and fails after 20 s with the last
// status read.
func waitPoolStatus(ctx context.Context, t *testing.T, cs clientset.Interface, name string, capacity, allocated int64) {
	t.Helper()
	var last tenantv1alpha1.AddressPoolStatus
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := cs.TenantV1alpha1().AddressPools().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			lastErr = err
			return false, nil
		}
		last = p.Status
		return last.Capacity == capacity && last.Allocated == allocated && last.Free == capacity-allocated, nil
	})
	if err != nil {
		t.Fatalf("AddressPool %s: status %+v (last error %v), want capacity %d, allocated %d, free %d",
			name, last, lastErr, capacity, allocated, capacity-allocated)
	}
}

func poolStatus(ctx context.Context, t *testing.T, cs clientset.Interface, name string) tenantv1alpha1.AddressPoolStatus {
	t.Helper()
	p, err := cs.TenantV1alpha1().AddressPools().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Status
}

// listAllocations reads every allocation from etcd.
func listAllocations(ctx context.Context, t *testing.T) []engine.Allocation {
	t.Helper()
	allocs, err := allocations.ListAll(ctx)
	if err != nil {
		t.Fatalf("reading the allocations from etcd: %v", err)
	}
	return allocs
}

// ownedBy returns the allocations of the tenant with uid.
func ownedBy(allocs []engine.Allocation, uid types.UID) []engine.Allocation {
	var out []engine.Allocation
	for _, a := range allocs {
		if a.Owner.TenantUID == string(uid) {
			out = append(out, a)
		}
	}
	return out
}

// allocationKeys is a comparable summary of allocations: block, tenant UID, purpose.
func allocationKeys(allocs []engine.Allocation) []string {
	out := make([]string, 0, len(allocs))
	for _, a := range allocs {
		out = append(out, a.Block.String()+" "+a.Owner.TenantUID+" "+a.Owner.Purpose)
	}
	sort.Strings(out)
	return out
}

func addrValue(a netip.Addr) uint64 {
	b := a.As4()
	return uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
}

func blockSize(p netip.Prefix) uint64 { return 1 << (32 - p.Bits()) }

// inPrefixes reports whether addr lies in one of ps.
func inPrefixes(addr netip.Addr, ps ...string) bool {
	for _, s := range ps {
		if netip.MustParsePrefix(s).Contains(addr) {
			return true
		}
	}
	return false
}

// inRange reports whether addr lies in first-last.
func inRange(addr netip.Addr, first, last string) bool {
	v := addrValue(addr)
	return v >= addrValue(netip.MustParseAddr(first)) && v <= addrValue(netip.MustParseAddr(last))
}

// ipamReport summarises verifyIPAM.
type ipamReport struct {
	allocations, tenants int
}

// verifyIPAM checks the IPAM invariants over everything in etcd and every
// Tenant (framework.IPAMProblems) and fails the test for each problem.
func verifyIPAM(ctx context.Context, t *testing.T, cs clientset.Interface) ipamReport {
	t.Helper()
	list, err := cs.TenantV1alpha1().Tenants().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing tenants: %v", err)
	}
	problems, rep, err := framework.IPAMProblems(ctx, etcdClient, list.Items)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	return ipamReport{allocations: rep.Allocations, tenants: rep.Tenants}
}

// ---------------------------------------------------------------------------
// 1. Pools

func TestPools(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	cs := admin(t)
	requireNoPools(ctx, t, cs)
	pools := cs.TenantV1alpha1().AddressPools()

	createPool(ctx, t, cs, "t1-net", tenantv1alpha1.AddressPoolSpec{
		Purpose:             tenantv1alpha1.AddressPoolPurposeTenantNetworks,
		CIDRs:               []string{"10.10.0.0/16"},
		Exclude:             []string{"10.10.255.0/24"},
		DefaultPrefixLength: int32p(24),
	})
	// 192.0.2.10-29 and 192.0.2.64/28, without .20 and .64-.67: 31 addresses.
	createPool(ctx, t, cs, "t1-pub", tenantv1alpha1.AddressPoolSpec{
		Purpose: tenantv1alpha1.AddressPoolPurposePublicIPs,
		Ranges:  []string{"192.0.2.10-192.0.2.29"},
		CIDRs:   []string{"192.0.2.64/28"},
		Exclude: []string{"192.0.2.20", "192.0.2.64/30"},
	})
	waitPoolStatus(ctx, t, cs, "t1-net", 65536-256, 0)
	waitPoolStatus(ctx, t, cs, "t1-pub", 31, 0)

	t.Run("overlap", func(t *testing.T) {
		for _, c := range []struct {
			name  string
			spec  tenantv1alpha1.AddressPoolSpec
			other string
		}{
			{"t1-ovl-net", tenantv1alpha1.AddressPoolSpec{Purpose: tenantv1alpha1.AddressPoolPurposeTenantNetworks, CIDRs: []string{"10.10.128.0/20"}}, "t1-net"},
			{"t1-ovl-big", tenantv1alpha1.AddressPoolSpec{Purpose: tenantv1alpha1.AddressPoolPurposeTenantNetworks, CIDRs: []string{"10.0.0.0/8"}}, "t1-net"},
			{"t1-ovl-excluded", tenantv1alpha1.AddressPoolSpec{Purpose: tenantv1alpha1.AddressPoolPurposeTenantNetworks, CIDRs: []string{"10.10.255.0/24"}}, "t1-net"},
			{"t1-ovl-range", tenantv1alpha1.AddressPoolSpec{Purpose: tenantv1alpha1.AddressPoolPurposePublicIPs, Ranges: []string{"192.0.2.25-192.0.2.40"}}, "t1-pub"},
			{"t1-ovl-cross", tenantv1alpha1.AddressPoolSpec{Purpose: tenantv1alpha1.AddressPoolPurposeTenantNetworks, CIDRs: []string{"192.0.2.0/24"}}, "t1-pub"},
		} {
			_, err := pools.Create(ctx, &tenantv1alpha1.AddressPool{ObjectMeta: metav1.ObjectMeta{Name: c.name}, Spec: c.spec}, metav1.CreateOptions{})
			if err == nil {
				t.Cleanup(func() { _ = pools.Delete(context.Background(), c.name, metav1.DeleteOptions{}) })
			}
			wantAPIError(t, "creating "+c.name, err, 422, c.other)
		}
		// The same through kubectl.
		manifest := filepathIn(t, "overlap.yaml", `apiVersion: tenant.io/v1alpha1
kind: AddressPool
metadata: {name: t1-ovl-kubectl}
spec: {purpose: PublicIPs, cidrs: [192.0.2.64/26]}
`)
		_, stderr, err := framework.Current().Kubectl(ctx, stack.AdminUser, "create", "-f", manifest)
		if err == nil {
			t.Cleanup(func() { _ = pools.Delete(context.Background(), "t1-ovl-kubectl", metav1.DeleteOptions{}) })
			t.Errorf("kubectl create of an overlapping pool succeeded")
		} else if !strings.Contains(stderr, "is invalid") || !strings.Contains(stderr, "t1-pub") {
			t.Errorf("kubectl create of an overlapping pool: %q, want Invalid naming t1-pub", stderr)
		}
		// An update into another pool's space is refused too.
		// The pool controller writes the new pool's status, so an update
		// from an older read is a 409 Conflict; retry those, as a client
		// would, and expect the overlap to be refused.
		createPool(ctx, t, cs, "t1-spare", tenantv1alpha1.AddressPoolSpec{Purpose: tenantv1alpha1.AddressPoolPurposePublicIPs, CIDRs: []string{"192.0.2.128/28"}})
		waitPoolStatus(ctx, t, cs, "t1-spare", 16, 0)
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			p, err := pools.Get(ctx, "t1-spare", metav1.GetOptions{})
			if err != nil {
				return err
			}
			p.Spec.CIDRs = append(p.Spec.CIDRs, "192.0.2.16/28")
			_, err = pools.Update(ctx, p, metav1.UpdateOptions{})
			return err
		})
		wantAPIError(t, "growing t1-spare into t1-pub", err, 422, "t1-pub")
	})

	// A tenant takes the lowest /24 and every public address.
	tn := mustCreateTenant(ctx, t, cs, newTenant("t1-a", tenantv1alpha1.TenantNetwork{PrefixLength: int32p(24)}, 31))
	if got := tn.Status.Network.CIDR; got != "10.10.0.0/24" {
		t.Errorf("t1-a got block %s, want 10.10.0.0/24", got)
	}
	seen := map[string]bool{}
	for _, ip := range tn.Status.PublicIPs {
		addr := netip.MustParseAddr(ip)
		inPool := inRange(addr, "192.0.2.10", "192.0.2.29") || inPrefixes(addr, "192.0.2.64/28")
		excluded := ip == "192.0.2.20" || inPrefixes(addr, "192.0.2.64/30")
		if seen[ip] || !inPool || excluded {
			t.Errorf("t1-a got public IP %s: duplicate, outside the pool or excluded (all: %v)", ip, tn.Status.PublicIPs)
		}
		seen[ip] = true
	}
	waitPoolStatus(ctx, t, cs, "t1-net", 65536-256, 256)
	waitPoolStatus(ctx, t, cs, "t1-pub", 31, 31)

	t.Run("shrink", func(t *testing.T) {
		p, err := pools.Get(ctx, "t1-net", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		shrunk := p.DeepCopy()
		shrunk.Spec.CIDRs = []string{"10.10.128.0/17"}
		shrunk.Spec.Exclude = nil
		_, err = pools.Update(ctx, shrunk, metav1.UpdateOptions{})
		st := wantAPIError(t, "shrinking t1-net below 10.10.0.0/24", err, 409, "t1-net")
		wantCauses(t, "shrinking t1-net", st, [2]string{"10.10.0.0/24", "t1-a"})

		excluded := p.DeepCopy()
		excluded.Spec.Exclude = append(excluded.Spec.Exclude, "10.10.0.0/23")
		_, err = pools.Update(ctx, excluded, metav1.UpdateOptions{})
		st = wantAPIError(t, "excluding 10.10.0.0/23 from t1-net", err, 409, "t1-net")
		wantCauses(t, "excluding from t1-net", st, [2]string{"10.10.0.0/24", "t1-a"})

		pub, err := pools.Get(ctx, "t1-pub", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pub.Spec.CIDRs = nil
		pub.Spec.Exclude = []string{"192.0.2.20"}
		_, err = pools.Update(ctx, pub, metav1.UpdateOptions{})
		st = wantAPIError(t, "dropping 192.0.2.64/28 from t1-pub", err, 409, "t1-pub")
		for _, ip := range []string{"192.0.2.68", "192.0.2.79"} {
			wantCauses(t, "dropping 192.0.2.64/28 from t1-pub", st, [2]string{ip + "/32", "t1-a"})
		}
		if st.Details != nil && len(st.Details.Causes) != 12 {
			t.Errorf("dropping 192.0.2.64/28 from t1-pub: %d causes, want the 12 allocations lost: %+v", len(st.Details.Causes), st.Details.Causes)
		}

		// Losing only free space is fine, and shows in the status.
		free := p.DeepCopy()
		free.Spec.Exclude = append(free.Spec.Exclude, "10.10.254.0/24")
		if _, err := pools.Update(ctx, free, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("excluding free space from t1-net: %v", err)
		}
		waitPoolStatus(ctx, t, cs, "t1-net", 65536-512, 256)
	})

	t.Run("delete", func(t *testing.T) {
		err := pools.Delete(ctx, "t1-net", metav1.DeleteOptions{})
		st := wantAPIError(t, "deleting t1-net", err, 409, "t1-net")
		wantCauses(t, "deleting t1-net", st, [2]string{"10.10.0.0/24", "t1-a"})
		err = pools.Delete(ctx, "t1-pub", metav1.DeleteOptions{})
		st = wantAPIError(t, "deleting t1-pub", err, 409, "t1-pub")
		if st.Details == nil || len(st.Details.Causes) != 31 {
			t.Errorf("deleting t1-pub: want the 31 allocations as causes, got %+v", st.Details)
		}
		for _, name := range []string{"t1-net", "t1-pub"} {
			if _, err := pools.Get(ctx, name, metav1.GetOptions{}); err != nil {
				t.Errorf("%s after the refused delete: %v", name, err)
			}
		}

		// An unused pool goes.
		createPool(ctx, t, cs, "t1-unused", tenantv1alpha1.AddressPoolSpec{Purpose: tenantv1alpha1.AddressPoolPurposeTenantNetworks, CIDRs: []string{"10.11.0.0/16"}})
		if err := pools.Delete(ctx, "t1-unused", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("deleting an unused pool: %v", err)
		}
		if _, err := pools.Get(ctx, "t1-unused", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("t1-unused after delete: %v, want NotFound", err)
		}

		// Once the tenant is gone, its pools go too.
		deleteTenant(t, cs, "t1-a")
		waitPoolStatus(ctx, t, cs, "t1-pub", 31, 0)
		for _, name := range []string{"t1-net", "t1-pub"} {
			if err := pools.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting %s once unused: %v", name, err)
			}
		}
	})
	verifyIPAM(ctx, t, cs)
}

// TestConcurrentOverlappingPools creates two overlapping pools at once,
// again and again: at most one of each pair may exist.
func TestConcurrentOverlappingPools(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	cs := admin(t)
	requireNoPools(ctx, t, cs)
	pools := cs.TenantV1alpha1().AddressPools()
	const rounds = 10
	both := 0
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// The same /16 for the first, a /20 inside it for the second.
				cidr := []string{fmt.Sprintf("10.%d.0.0/16", 100+round), fmt.Sprintf("10.%d.16.0/20", 100+round)}[i]
				_, errs[i] = pools.Create(ctx, &tenantv1alpha1.AddressPool{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("t8-%d-%d", round, i)},
					Spec:       tenantv1alpha1.AddressPoolSpec{Purpose: tenantv1alpha1.AddressPoolPurposeTenantNetworks, CIDRs: []string{cidr}},
				}, metav1.CreateOptions{})
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil && !apierrors.IsInvalid(err) {
				t.Errorf("round %d, pool %d: %v, want success or 422", round, i, err)
			}
		}
		if errs[0] == nil && errs[1] == nil {
			both++
		}
		for i := range 2 {
			if err := pools.Delete(ctx, fmt.Sprintf("t8-%d-%d", round, i), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting t8-%d-%d: %v", round, i, err)
			}
		}
	}
	if both > 0 {
		t.Errorf("both of two overlapping pools were created in %d of %d rounds", both, rounds)
	}
}

// filepathIn writes content into a file of the test's temporary directory.
func filepathIn(t *testing.T, name, content string) string {
	t.Helper()
	path := t.TempDir() + "/" + name
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ---------------------------------------------------------------------------
// 2. Onboarding

func TestOnboarding(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	cs := admin(t)
	requireNoPools(ctx, t, cs)
	tenants := cs.TenantV1alpha1().Tenants()

	createPool(ctx, t, cs, "t2-net", tenantv1alpha1.AddressPoolSpec{
		Purpose:             tenantv1alpha1.AddressPoolPurposeTenantNetworks,
		CIDRs:               []string{"10.20.0.0/16"},
		Exclude:             []string{"10.20.255.0/24"},
		DefaultPrefixLength: int32p(20),
	})
	// 198.51.100.1-7: 7 addresses.
	createPool(ctx, t, cs, "t2-pub", tenantv1alpha1.AddressPoolSpec{
		Purpose: tenantv1alpha1.AddressPoolPurposePublicIPs,
		CIDRs:   []string{"198.51.100.0/29"},
		Exclude: []string{"198.51.100.0"},
	})

	// Explicit, then first fit around it.
	for _, c := range []struct {
		name    string
		network tenantv1alpha1.TenantNetwork
		want    string
	}{
		{"t2-explicit", tenantv1alpha1.TenantNetwork{CIDR: "10.20.1.0/24"}, "10.20.1.0/24"},
		{"t2-len24", tenantv1alpha1.TenantNetwork{PrefixLength: int32p(24)}, "10.20.0.0/24"},
		{"t2-len23", tenantv1alpha1.TenantNetwork{PrefixLength: int32p(23)}, "10.20.2.0/23"},
		{"t2-default", tenantv1alpha1.TenantNetwork{}, "10.20.16.0/20"},
		{"t2-len24-b", tenantv1alpha1.TenantNetwork{PrefixLength: int32p(24)}, "10.20.4.0/24"},
	} {
		tn := mustCreateTenant(ctx, t, cs, newTenant(c.name, c.network, 0))
		if got := tn.Status.Network.CIDR; got != c.want {
			t.Errorf("%s (%+v): got block %s, want %s", c.name, c.network, got, c.want)
		}
		if got := getTenant(ctx, t, cs, c.name).Status.Network; got == nil || got.CIDR != c.want {
			t.Errorf("%s as read back: status.network %+v, want %s", c.name, got, c.want)
		}
	}
	waitPoolStatus(ctx, t, cs, "t2-net", 65536-256, 256+256+512+4096+256)

	// Through kubectl: server-side apply creates through the update path.
	manifest := filepathIn(t, "tenant.yaml", `apiVersion: tenant.io/v1alpha1
kind: Tenant
metadata: {name: t2-kubectl}
spec: {network: {prefixLength: 24}}
`)
	if _, _, err := framework.Current().Kubectl(ctx, stack.AdminUser, "apply", "--server-side", "-f", manifest); err != nil {
		t.Fatalf("kubectl apply --server-side of a Tenant: %v", err)
	}
	t.Cleanup(func() { deleteTenant(t, cs, "t2-kubectl") })
	applied := getTenant(ctx, t, cs, "t2-kubectl")
	checkAllocatedCondition(t, applied)
	if applied.Status.Network == nil || applied.Status.Network.CIDR != "10.20.5.0/24" {
		t.Errorf("t2-kubectl: status.network %+v, want 10.20.5.0/24", applied.Status.Network)
	}
	stdout, _, err := framework.Current().Kubectl(ctx, stack.AdminUser, "get", "tenant", "t2-kubectl", "-o", "jsonpath={.status.network.cidr}")
	if err != nil || stdout != "10.20.5.0/24" {
		t.Errorf("kubectl get tenant t2-kubectl: %q %v, want 10.20.5.0/24", stdout, err)
	}
	waitPoolStatus(ctx, t, cs, "t2-net", 65536-256, 256+256+512+4096+256+256)

	before := allocationKeys(listAllocations(ctx, t))
	for _, c := range []struct {
		name, cidr string
		contains   []string
	}{
		{"t2-outside", "10.99.0.0/24", []string{"is not inside a TenantNetworks AddressPool"}},
		{"t2-straddle", "10.20.0.0/15", nil},
		{"t2-same", "10.20.1.0/24", []string{"already allocated", "t2-explicit"}},
		{"t2-inside", "10.20.1.128/25", nil},
		{"t2-around", "10.20.0.0/22", []string{"already allocated"}},
		{"t2-excluded", "10.20.255.0/24", []string{"exclude"}},
	} {
		_, err := createTenant(ctx, t, cs, newTenant(c.name, tenantv1alpha1.TenantNetwork{CIDR: c.cidr}, 0))
		st := wantAPIError(t, c.name+" with cidr "+c.cidr, err, 422, c.contains...)
		wantFieldError(t, c.name, st, "spec.network.cidr")
		if _, err := tenants.Get(ctx, c.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s after the refused create: %v, want NotFound", c.name, err)
		}
	}
	if after := allocationKeys(listAllocations(ctx, t)); !slices.Equal(before, after) {
		t.Errorf("refused explicit claims changed the allocations:\nbefore %v\nafter  %v", before, after)
	}

	t.Run("publicIPs", func(t *testing.T) {
		tn := mustCreateTenant(ctx, t, cs, newTenant("t2-ips", tenantv1alpha1.TenantNetwork{PrefixLength: int32p(28)}, 3))
		for _, ip := range tn.Status.PublicIPs {
			if a := netip.MustParseAddr(ip); !inPrefixes(a, "198.51.100.0/29") || ip == "198.51.100.0" {
				t.Errorf("t2-ips got %s, outside t2-pub or excluded", ip)
			}
		}
		waitPoolStatus(ctx, t, cs, "t2-pub", 7, 3)
		netBefore := poolStatus(ctx, t, cs, "t2-net")

		// 5 > 4 free: refused, and nothing is kept, not even the block.
		for _, c := range []struct {
			name  string
			count int32
		}{{"t2-toomany", 5}, {"t2-toomany-default", 7}} {
			before := allocationKeys(listAllocations(ctx, t))
			network := tenantv1alpha1.TenantNetwork{PrefixLength: int32p(28)}
			if c.name == "t2-toomany-default" {
				network = tenantv1alpha1.TenantNetwork{}
			}
			_, err := createTenant(ctx, t, cs, newTenant(c.name, network, c.count))
			wantAPIError(t, fmt.Sprintf("%s with %d public IPs, 4 free", c.name, c.count), err, 409, "t2-pub")
			// Checked at once: within the sweep age, only the create's own
			// release can have given the block back.
			allocs := listAllocations(ctx, t)
			for _, a := range allocs {
				if a.Owner.Tenant == c.name {
					t.Errorf("leak: %s (%s) is still allocated to %s after its create was refused", a.Block, a.Owner.Purpose, c.name)
				}
			}
			if after := allocationKeys(allocs); !slices.Equal(before, after) {
				t.Errorf("%s: refused create changed the allocations:\nbefore %v\nafter  %v", c.name, before, after)
			}
			if _, err := tenants.Get(ctx, c.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("%s after the refused create: %v, want NotFound", c.name, err)
			}
		}
		waitPoolStatus(ctx, t, cs, "t2-pub", 7, 3)
		waitPoolStatus(ctx, t, cs, "t2-net", netBefore.Capacity, netBefore.Allocated)

		// Exactly what is left works, and then nothing is left.
		exact := mustCreateTenant(ctx, t, cs, newTenant("t2-exact", tenantv1alpha1.TenantNetwork{PrefixLength: int32p(28)}, 4))
		all := append(slices.Clone(tn.Status.PublicIPs), exact.Status.PublicIPs...)
		sort.Strings(all)
		if want := []string{"198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4", "198.51.100.5", "198.51.100.6", "198.51.100.7"}; !slices.Equal(all, want) {
			t.Errorf("public IPs of t2-ips and t2-exact: %v, want %v", all, want)
		}
		waitPoolStatus(ctx, t, cs, "t2-pub", 7, 7)
		before := allocationKeys(listAllocations(ctx, t))
		_, err := createTenant(ctx, t, cs, newTenant("t2-none", tenantv1alpha1.TenantNetwork{CIDR: "10.20.200.0/24"}, 1))
		wantAPIError(t, "t2-none with 1 public IP, none free", err, 409, "t2-pub")
		if after := allocationKeys(listAllocations(ctx, t)); !slices.Equal(before, after) {
			t.Errorf("t2-none: refused create changed the allocations:\nbefore %v\nafter  %v", before, after)
		}
		// The explicit block it gave back can be had.
		mustCreateTenant(ctx, t, cs, newTenant("t2-after", tenantv1alpha1.TenantNetwork{CIDR: "10.20.200.0/24"}, 0))
	})
	verifyIPAM(ctx, t, cs)
}

// ---------------------------------------------------------------------------
// 3. Changes

func TestChanges(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	cs := admin(t)
	requireNoPools(ctx, t, cs)
	tenants := cs.TenantV1alpha1().Tenants()

	createPool(ctx, t, cs, "t3-net", tenantv1alpha1.AddressPoolSpec{
		Purpose: tenantv1alpha1.AddressPoolPurposeTenantNetworks, CIDRs: []string{"10.30.0.0/16"}, DefaultPrefixLength: int32p(24),
	})
	createPool(ctx, t, cs, "t3-pub", tenantv1alpha1.AddressPoolSpec{
		Purpose: tenantv1alpha1.AddressPoolPurposePublicIPs, CIDRs: []string{"198.51.100.32/28"},
	})
	const name = "t3-chg"
	tn := mustCreateTenant(ctx, t, cs, newTenant(name, tenantv1alpha1.TenantNetwork{}, 2))
	waitPoolStatus(ctx, t, cs, "t3-pub", 16, 2)

	checkEtcd := func(what string, tn *tenantv1alpha1.Tenant) {
		t.Helper()
		var ips []string
		for _, a := range ownedBy(listAllocations(ctx, t), tn.UID) {
			if a.Owner.Purpose == engine.PurposePublicIP {
				ips = append(ips, a.Block.Addr().String())
			}
		}
		want := slices.Clone(tn.Status.PublicIPs)
		sort.Strings(ips)
		sort.Strings(want)
		if !slices.Equal(ips, want) {
			t.Errorf("%s: public IPs allocated in etcd %v, status says %v", what, ips, want)
		}
	}

	// Raise: 3 more, distinct, the first 2 kept.
	raised, err := updateTenant(ctx, cs, name, func(tn *tenantv1alpha1.Tenant) { tn.Spec.PublicIPs.Count = 5 })
	if err != nil {
		t.Fatalf("raising publicIPs.count to 5: %v", err)
	}
	if len(raised.Status.PublicIPs) != 5 || !slices.Equal(raised.Status.PublicIPs[:2], tn.Status.PublicIPs) {
		t.Errorf("after raising to 5: public IPs %v, want 5 starting with %v", raised.Status.PublicIPs, tn.Status.PublicIPs)
	}
	if distinct := len(map[string]bool{raised.Status.PublicIPs[0]: true, raised.Status.PublicIPs[1]: true, raised.Status.PublicIPs[2]: true, raised.Status.PublicIPs[3]: true, raised.Status.PublicIPs[4]: true}); len(raised.Status.PublicIPs) == 5 && distinct != 5 {
		t.Errorf("after raising to 5: public IPs %v are not distinct", raised.Status.PublicIPs)
	}
	checkAllocatedCondition(t, raised)
	checkEtcd("after raising to 5", raised)
	waitPoolStatus(ctx, t, cs, "t3-pub", 16, 5)

	// Lower: the 2 dropped are released.
	lowered, err := updateTenant(ctx, cs, name, func(tn *tenantv1alpha1.Tenant) { tn.Spec.PublicIPs.Count = 3 })
	if err != nil {
		t.Fatalf("lowering publicIPs.count to 3: %v", err)
	}
	if len(lowered.Status.PublicIPs) != 3 {
		t.Errorf("after lowering to 3: public IPs %v", lowered.Status.PublicIPs)
	}
	for _, ip := range lowered.Status.PublicIPs {
		if !slices.Contains(raised.Status.PublicIPs, ip) {
			t.Errorf("after lowering to 3: %s is new (had %v)", ip, raised.Status.PublicIPs)
		}
	}
	checkEtcd("after lowering to 3", lowered)
	waitPoolStatus(ctx, t, cs, "t3-pub", 16, 3)

	// A FloatingIP of the tenant uses its last address.
	m := member(t, name)
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := m.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the member never saw tenant %s: %v", name, err)
	}
	ensureDefaultNetwork(ctx, t, m)
	if _, err := m.TenantV1alpha1().Namespaces().Create(ctx, &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Namespace web as a member: %v", err)
	}
	used := lowered.Status.PublicIPs[2]
	if _, err := m.TenantV1alpha1().FloatingIPs("web").Create(ctx, &tenantv1alpha1.FloatingIP{
		ObjectMeta: metav1.ObjectMeta{Name: "fip1"},
		Spec: tenantv1alpha1.FloatingIPSpec{
			Address: used,
			Ports:   []tenantv1alpha1.FloatingIPPort{{Port: 22, Protocol: "TCP"}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating FloatingIP fip1 with address %s: %v", used, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := m.TenantV1alpha1().FloatingIPs("web").Delete(ctx, "fip1", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: deleting FloatingIP fip1: %v", err)
		}
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
			err := m.TenantV1alpha1().Namespaces().Delete(ctx, "web", metav1.DeleteOptions{})
			return err == nil || apierrors.IsNotFound(err), nil
		}); err != nil {
			t.Errorf("cleanup: deleting Namespace web: %v", err)
		}
	})

	t.Run("lower below the used address", func(t *testing.T) {
		before := allocationKeys(listAllocations(ctx, t))
		_, err := updateTenant(ctx, cs, name, func(tn *tenantv1alpha1.Tenant) { tn.Spec.PublicIPs.Count = 0 })
		wantAPIError(t, "lowering publicIPs.count to 0 while fip1 uses "+used, err, 409, used, "floatingips", "web/fip1")
		cur := getTenant(ctx, t, cs, name)
		if cur.Spec.PublicIPs.Count != 3 || !slices.Equal(cur.Status.PublicIPs, lowered.Status.PublicIPs) {
			t.Errorf("after the refused lowering: spec count %d, public IPs %v, want 3 and %v", cur.Spec.PublicIPs.Count, cur.Status.PublicIPs, lowered.Status.PublicIPs)
		}
		if after := allocationKeys(listAllocations(ctx, t)); !slices.Equal(before, after) {
			t.Errorf("the refused lowering changed the allocations:\nbefore %v\nafter  %v", before, after)
		}

		// Lowering by one drops an unused address and keeps the used one.
		two, err := updateTenant(ctx, cs, name, func(tn *tenantv1alpha1.Tenant) { tn.Spec.PublicIPs.Count = 2 })
		if err != nil {
			t.Fatalf("lowering publicIPs.count to 2 while fip1 uses %s: %v", used, err)
		}
		if len(two.Status.PublicIPs) != 2 || !slices.Contains(two.Status.PublicIPs, used) {
			t.Errorf("after lowering to 2: public IPs %v, want 2 including %s", two.Status.PublicIPs, used)
		}
		checkEtcd("after lowering to 2", two)
		waitPoolStatus(ctx, t, cs, "t3-pub", 16, 2)
	})

	t.Run("status writes keep the addresses", func(t *testing.T) {
		// The syncer writes the status too: a write of its between the read
		// and the update is a 409, and the status is forged again.
		var keepNet tenantv1alpha1.TenantNetworkStatus
		var keepIPs []string
		var updated *tenantv1alpha1.Tenant
		for {
			cur := getTenant(ctx, t, cs, name)
			keepNet, keepIPs = *cur.Status.Network, slices.Clone(cur.Status.PublicIPs)
			forged := cur.DeepCopy()
			forged.Status.Network = &tenantv1alpha1.TenantNetworkStatus{CIDR: "10.99.0.0/24"}
			forged.Status.PublicIPs = []string{"198.51.100.40", "198.51.100.41", "198.51.100.42"}
			forged.Status.Phase = tenantv1alpha1.TenantPhaseProvisioning
			meta.SetStatusCondition(&forged.Status.Conditions, metav1.Condition{Type: tenantv1alpha1.ConditionAddressesAllocated, Status: metav1.ConditionFalse, Reason: "Forged", Message: "forged"})
			var err error
			updated, err = tenants.UpdateStatus(ctx, forged, metav1.UpdateOptions{})
			if apierrors.IsConflict(err) && strings.Contains(err.Error(), "the object has been modified") {
				continue
			}
			if err != nil {
				t.Fatalf("updating the status: %v", err)
			}
			break
		}
		// What the update stored is read back at its resourceVersion: the
		// syncer sets the phase again right after.
		stored, err := tenants.List(ctx, metav1.ListOptions{
			FieldSelector:        "metadata.name=" + name,
			ResourceVersion:      updated.ResourceVersion,
			ResourceVersionMatch: metav1.ResourceVersionMatchExact,
		})
		if err != nil {
			t.Fatalf("reading tenant %s at resourceVersion %s: %v", name, updated.ResourceVersion, err)
		}
		if len(stored.Items) != 1 {
			t.Fatalf("reading tenant %s at resourceVersion %s: %d items", name, updated.ResourceVersion, len(stored.Items))
		}
		for what, tn := range map[string]*tenantv1alpha1.Tenant{"the answer": updated, "the tenant read back": &stored.Items[0]} {
			if tn.Status.Phase != tenantv1alpha1.TenantPhaseProvisioning {
				t.Errorf("%s: phase %q, want the written Provisioning", what, tn.Status.Phase)
			}
			if tn.Status.Network == nil || *tn.Status.Network != keepNet || !slices.Equal(tn.Status.PublicIPs, keepIPs) {
				t.Errorf("%s: status network %+v and public IPs %v, want them kept: %+v and %v", what, tn.Status.Network, tn.Status.PublicIPs, keepNet, keepIPs)
			}
			checkAllocatedCondition(t, tn)
		}
		// And whatever was written since keeps them too.
		if now := getTenant(ctx, t, cs, name); now.Status.Network == nil || *now.Status.Network != keepNet || !slices.Equal(now.Status.PublicIPs, keepIPs) {
			t.Errorf("the tenant read back later: status network %+v and public IPs %v, want them kept: %+v and %v", now.Status.Network, now.Status.PublicIPs, keepNet, keepIPs)
		} else {
			checkAllocatedCondition(t, now)
		}

		// A merge patch of /status, and one of the main resource, neither.
		patch := []byte(`{"status":{"network":{"cidr":"10.98.0.0/24"},"publicIPs":["198.51.100.43"]}}`)
		for _, sub := range [][]string{{"status"}, nil} {
			patched, err := tenants.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, sub...)
			if err != nil {
				t.Fatalf("patching %v: %v", sub, err)
			}
			if patched.Status.Network == nil || *patched.Status.Network != keepNet || !slices.Equal(patched.Status.PublicIPs, keepIPs) {
				t.Errorf("patch of %v: status network %+v and public IPs %v, want them kept: %+v and %v", sub, patched.Status.Network, patched.Status.PublicIPs, keepNet, keepIPs)
			}
		}
		checkEtcd("after the status writes", getTenant(ctx, t, cs, name))
	})
	verifyIPAM(ctx, t, cs)
}

// TestChangesRacingStatusWrites lowers and raises publicIPs.count while
// another writer (as the syncer and the quota tracker do) keeps writing the
// Tenant's status: whatever the outcome of each update, the addresses the
// Tenant records must stay allocated to it.
func TestChangesRacingStatusWrites(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	cs := admin(t)
	requireNoPools(ctx, t, cs)
	tenants := cs.TenantV1alpha1().Tenants()
	createPool(ctx, t, cs, "t7-net", tenantv1alpha1.AddressPoolSpec{
		Purpose: tenantv1alpha1.AddressPoolPurposeTenantNetworks, CIDRs: []string{"10.70.0.0/16"}, DefaultPrefixLength: int32p(24),
	})
	createPool(ctx, t, cs, "t7-pub", tenantv1alpha1.AddressPoolSpec{
		Purpose: tenantv1alpha1.AddressPoolPurposePublicIPs, CIDRs: []string{"198.51.100.64/27"},
	})
	const name = "t7-race"
	mustCreateTenant(ctx, t, cs, newTenant(name, tenantv1alpha1.TenantNetwork{}, 8))

	stop := make(chan struct{})
	writerDone := make(chan struct{})
	var writes atomic.Int32
	go func() {
		defer close(writerDone)
		phases := []string{"Pending", "Provisioning"}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			patch := []byte(`{"status":{"phase":"` + phases[i%2] + `"}}`)
			if _, err := tenants.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err == nil {
				writes.Add(1)
			}
		}
	}()

	// Half the changes are updates of what was read, which a status write
	// in between makes lose (409); the other half are merge patches with
	// no resourceVersion, which the store applies again on the current
	// object when a status write comes between its read and its write:
	// their tries race the writer inside the store, and every one is stored.
	var lowered, raised, conflicts int
	for i := 0; i < 60; i++ {
		cur, err := tenants.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := int32(6)
		if cur.Spec.PublicIPs.Count == 6 {
			want = 8
		}
		if i%2 == 0 {
			cur.Spec.PublicIPs.Count = want
			_, err = tenants.Update(ctx, cur, metav1.UpdateOptions{})
		} else {
			patch := fmt.Sprintf(`{"spec":{"publicIPs":{"count":%d}}}`, want)
			_, err = tenants.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		}
		switch {
		case err == nil && want == 6:
			lowered++
		case err == nil:
			raised++
		case i%2 == 0 && apierrors.IsConflict(err) && strings.Contains(err.Error(), "the object has been modified"):
			conflicts++
		default:
			t.Errorf("changing publicIPs.count to %d (%s): %v", want, map[bool]string{true: "update", false: "patch"}[i%2 == 0], err)
		}
	}
	close(stop)
	<-writerDone
	t.Logf("%d status writes; %d lowerings and %d raisings stored, %d updates lost to a concurrent write", writes.Load(), lowered, raised, conflicts)
	if lowered == 0 || raised == 0 || writes.Load() == 0 {
		t.Fatalf("the race was not run: %d lowerings and %d raisings stored, %d status writes", lowered, raised, writes.Load())
	}

	// Whatever a lost update allocated is the sweeper's; what the Tenant
	// records must be allocated to it.
	time.Sleep(sweepMinAge + 2*ipamPeriod)
	verifyIPAM(ctx, t, cs)

	// An address the Tenant records but etcd calls free goes to the next
	// tenant: take every free address and look for duplicates.
	var free int64
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		st := poolStatus(ctx, t, cs, "t7-pub")
		free = st.Free
		allocated := 0
		for _, a := range listAllocations(ctx, t) {
			if a.Owner.Purpose == engine.PurposePublicIP {
				allocated++
			}
		}
		return st.Allocated == int64(allocated), nil
	}); err != nil {
		t.Fatalf("t7-pub status never matched etcd: %v", err)
	}
	if free > 0 {
		mustCreateTenant(ctx, t, cs, newTenant("t7-next", tenantv1alpha1.TenantNetwork{}, int32(free)))
		verifyIPAM(ctx, t, cs)
	}
}

// ---------------------------------------------------------------------------
// 4. Delete

func TestDelete(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	cs := admin(t)
	requireNoPools(ctx, t, cs)
	tenants := cs.TenantV1alpha1().Tenants()

	createPool(ctx, t, cs, "t4-net", tenantv1alpha1.AddressPoolSpec{
		Purpose: tenantv1alpha1.AddressPoolPurposeTenantNetworks, CIDRs: []string{"10.40.0.0/16"}, DefaultPrefixLength: int32p(24),
	})
	createPool(ctx, t, cs, "t4-pub", tenantv1alpha1.AddressPoolSpec{
		Purpose: tenantv1alpha1.AddressPoolPurposePublicIPs, CIDRs: []string{"198.51.100.48/28"},
	})
	// Another tenant's allocations stay through the delete.
	other := mustCreateTenant(ctx, t, cs, newTenant("t4-other", tenantv1alpha1.TenantNetwork{}, 1))
	waitPoolStatus(ctx, t, cs, "t4-net", 65536, 256)
	waitPoolStatus(ctx, t, cs, "t4-pub", 16, 1)
	netBefore, pubBefore := poolStatus(ctx, t, cs, "t4-net"), poolStatus(ctx, t, cs, "t4-pub")
	otherAllocs := allocationKeys(ownedBy(listAllocations(ctx, t), other.UID))

	const name = "t4-gone"
	tn := mustCreateTenant(ctx, t, cs, newTenant(name, tenantv1alpha1.TenantNetwork{PrefixLength: int32p(22)}, 4))
	if got := len(ownedBy(listAllocations(ctx, t), tn.UID)); got != 5 {
		t.Fatalf("%s holds %d allocations in etcd, want 5 (a /22 and 4 addresses)", name, got)
	}
	waitPoolStatus(ctx, t, cs, "t4-net", 65536, netBefore.Allocated+1024)
	waitPoolStatus(ctx, t, cs, "t4-pub", 16, pubBefore.Allocated+4)

	// While a FloatingIP uses one of its addresses it cannot go, and keeps
	// everything. (Once the syncer has onboarded it, its Namespaces do not
	// block: the syncer deletes them itself when the delete is accepted.)
	m := member(t, name)
	ensureDefaultNetwork(ctx, t, m) // which onboarding's Namespace "default" names
	if err := framework.Current().WaitTenantReady(ctx, name, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := m.TenantV1alpha1().Namespaces().Create(ctx, &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev"}}, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), nil
	}); err != nil {
		t.Fatalf("creating Namespace dev as a member of %s: %v", name, err)
	}
	if _, err := m.TenantV1alpha1().FloatingIPs("dev").Create(ctx, &tenantv1alpha1.FloatingIP{
		ObjectMeta: metav1.ObjectMeta{Name: "fip1"},
		Spec: tenantv1alpha1.FloatingIPSpec{
			Address: tn.Status.PublicIPs[0],
			Ports:   []tenantv1alpha1.FloatingIPPort{{Port: 22, Protocol: "TCP"}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating FloatingIP dev/fip1 with address %s: %v", tn.Status.PublicIPs[0], err)
	}
	err := tenants.Delete(ctx, name, metav1.DeleteOptions{})
	st := wantAPIError(t, "deleting a tenant with a FloatingIP", err, 409)
	wantCauses(t, "deleting a tenant with a FloatingIP", st, [2]string{"floatingips dev/fip1", ""})
	if st.Details != nil && len(st.Details.Causes) != 1 {
		t.Errorf("deleting a tenant with a FloatingIP: causes %+v, want only floatingips dev/fip1", st.Details.Causes)
	}
	if cur := getTenant(ctx, t, cs, name); cur.DeletionTimestamp != nil {
		t.Errorf("the refused delete marked %s deleted at %s", name, cur.DeletionTimestamp)
	}
	if got := len(ownedBy(listAllocations(ctx, t), tn.UID)); got != 5 {
		t.Errorf("after the refused delete %s holds %d allocations, want 5", name, got)
	}
	if err := m.TenantV1alpha1().FloatingIPs("dev").Delete(ctx, "fip1", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting FloatingIP dev/fip1: %v", err)
	}

	// Now it goes: the delete is accepted, the syncer removes its Namespace
	// and host objects, and once the Tenant is gone its addresses go with it
	// at once (not by the sweeper).
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		last = tenants.Delete(ctx, name, metav1.DeleteOptions{})
		return last == nil, nil
	}); err != nil {
		t.Fatalf("deleting tenant %s: %v (last error %v)", name, err, last)
	}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := tenants.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatalf("tenant %s still exists a minute after its delete was accepted: %v", name, err)
	}
	deleted := time.Now()
	// The server gives the addresses back right after it removed the
	// Tenant from etcd, in the same request: a read that came in between
	// is repeated, for a moment.
	var allocs []engine.Allocation
	for {
		allocs = listAllocations(ctx, t)
		if len(ownedBy(allocs, tn.UID)) == 0 || time.Since(deleted) > 300*time.Millisecond {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if age := time.Since(deleted); age >= sweepMinAge {
		t.Logf("reading etcd took %s: the sweeper may have helped", age)
	}
	if left := ownedBy(allocs, tn.UID); len(left) > 0 {
		t.Errorf("after deleting %s, etcd still holds %v", name, allocationKeys(left))
	}
	resp, err := etcdClient.Get(ctx, ipamPrefix+"/owners/"+string(tn.UID)+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 0 {
		t.Errorf("after deleting %s, %d owner index keys are left", name, resp.Count)
	}
	if got := allocationKeys(ownedBy(allocs, other.UID)); !slices.Equal(got, otherAllocs) {
		t.Errorf("deleting %s changed t4-other's allocations: %v, want %v", name, got, otherAllocs)
	}
	waitPoolStatus(ctx, t, cs, "t4-net", netBefore.Capacity, netBefore.Allocated)
	waitPoolStatus(ctx, t, cs, "t4-pub", pubBefore.Capacity, pubBefore.Allocated)

	// The space is free again: the same block and addresses can be had.
	again := mustCreateTenant(ctx, t, cs, newTenant(name, tenantv1alpha1.TenantNetwork{CIDR: tn.Status.Network.CIDR}, 4))
	if again.UID == tn.UID {
		t.Errorf("the re-created tenant has the old UID")
	}
	verifyIPAM(ctx, t, cs)
}

// ---------------------------------------------------------------------------
// 5. Concurrency

func TestConcurrentCreatesExhaustPool(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	cs := admin(t)
	requireNoPools(ctx, t, cs)
	createPool(ctx, t, cs, "t5-net", tenantv1alpha1.AddressPoolSpec{
		Purpose: tenantv1alpha1.AddressPoolPurposeTenantNetworks, CIDRs: []string{"10.50.0.0/19"},
	})
	deleteTenantsAtEnd(t, cs, "t5-")

	const n, blocks = 50, 32
	type result struct {
		tenant *tenantv1alpha1.Tenant
		err    error
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			tn, err := cs.TenantV1alpha1().Tenants().Create(ctx, newTenant(fmt.Sprintf("t5-%02d", i), tenantv1alpha1.TenantNetwork{PrefixLength: int32p(24)}, 0), metav1.CreateOptions{})
			results[i] = result{tn, err}
		}()
	}
	close(start)
	wg.Wait()

	created := map[string]*tenantv1alpha1.Tenant{}
	exhausted := 0
	for i, r := range results {
		switch {
		case r.err == nil:
			created[r.tenant.Name] = r.tenant
		case apierrors.IsConflict(r.err) && strings.Contains(r.err.Error(), "t5-net"):
			exhausted++
		default:
			t.Errorf("create of t5-%02d: %v, want success or 409 naming pool t5-net", i, r.err)
		}
	}
	if len(created) != blocks || exhausted != n-blocks {
		t.Errorf("%d creates succeeded and %d were refused as exhausted, want %d and %d", len(created), exhausted, blocks, n-blocks)
	}

	// The allocations are exactly the created tenants' blocks, and cover the /19.
	allocs := listAllocations(ctx, t)
	var inPool []netip.Prefix
	for _, a := range allocs {
		if !netip.MustParsePrefix("10.50.0.0/19").Overlaps(a.Block) {
			continue
		}
		inPool = append(inPool, a.Block)
		tn := created[a.Owner.Tenant]
		switch {
		case tn == nil:
			t.Errorf("%s is allocated to %s (uid %s), whose create was not acknowledged", a.Block, a.Owner.Tenant, a.Owner.TenantUID)
		case string(tn.UID) != a.Owner.TenantUID || tn.Status.Network == nil || tn.Status.Network.CIDR != a.Block.String():
			t.Errorf("%s is allocated to %s uid %s; the created tenant has uid %s and block %+v", a.Block, a.Owner.Tenant, a.Owner.TenantUID, tn.UID, tn.Status.Network)
		}
	}
	if len(inPool) != blocks {
		t.Errorf("%d allocations in 10.50.0.0/19, want %d: %v", len(inPool), blocks, inPool)
	}
	var total uint64
	for _, b := range inPool {
		total += blockSize(b)
		if b.Bits() != 24 {
			t.Errorf("allocation %s is not a /24", b)
		}
	}
	if total != 8192 {
		t.Errorf("the allocations cover %d addresses of the /19, want 8192", total)
	}
	for i, r := range results {
		if r.err != nil {
			if _, err := cs.TenantV1alpha1().Tenants().Get(ctx, fmt.Sprintf("t5-%02d", i), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("t5-%02d, refused, exists: %v", i, err)
			}
		}
	}
	rep := verifyIPAM(ctx, t, cs)
	if rep.allocations != blocks {
		t.Errorf("%d allocations in etcd, want the %d blocks", rep.allocations, blocks)
	}
	waitPoolStatus(ctx, t, cs, "t5-net", 8192, 8192)
}

// ---------------------------------------------------------------------------
// 6. Crash

func TestCrashDuringOnboarding(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	s := framework.Current()
	cs := admin(t)
	requireNoPools(ctx, t, cs)
	createPool(ctx, t, cs, "t6-net", tenantv1alpha1.AddressPoolSpec{
		Purpose: tenantv1alpha1.AddressPoolPurposeTenantNetworks, CIDRs: []string{"10.60.0.0/16"},
	})
	createPool(ctx, t, cs, "t6-pub", tenantv1alpha1.AddressPoolSpec{
		Purpose: tenantv1alpha1.AddressPoolPurposePublicIPs, CIDRs: []string{"203.0.113.0/24"}, Exclude: []string{"203.0.113.0", "203.0.113.255"},
	})
	deleteTenantsAtEnd(t, cs, "t6-")
	waitPoolStatus(ctx, t, cs, "t6-pub", 254, 0)

	const n, killAfter = 200, 50
	type result struct {
		tenant *tenantv1alpha1.Tenant
		err    error
	}
	results := make([]result, n)
	var succeeded, finished atomic.Int32
	kill := make(chan struct{})
	var killOnce sync.Once
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer finished.Add(1)
			<-start
			rctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			tn, err := cs.TenantV1alpha1().Tenants().Create(rctx, newTenant(fmt.Sprintf("t6-%03d", i), tenantv1alpha1.TenantNetwork{PrefixLength: int32p(28)}, 1), metav1.CreateOptions{})
			results[i] = result{tn, err}
			if err == nil && succeeded.Add(1) == killAfter {
				killOnce.Do(func() { close(kill) })
			}
		}()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	close(start)
	select {
	case <-kill:
	case <-allDone:
		t.Fatalf("the creates ended before %d succeeded: %d succeeded", killAfter, succeeded.Load())
	}
	inFlight, done := n-int(finished.Load()), succeeded.Load()
	if err := s.KillTenantAPIServer(); err != nil {
		t.Fatalf("killing the tenant-apiserver: %v", err)
	}
	killedAt := time.Now()
	t.Logf("SIGKILLed the tenant-apiserver after %d successful creates, with %d of %d creates in flight", done, inFlight, n)
	if inFlight == 0 {
		t.Errorf("no create was in flight at the kill: the test proves nothing")
	}
	<-allDone
	// What the crash left, before the restarted server's sweeper runs.
	atCrash := listAllocations(ctx, t)

	if err := s.StartTenantAPIServer(ctx); err != nil {
		t.Fatalf("restarting the tenant-apiserver: %v", err)
	}
	t.Logf("tenant-apiserver serving again %s after the kill", time.Since(killedAt).Round(100*time.Millisecond))
	// Every allocation is older than the sweep age by then, and the sweeper
	// has run a couple of times.
	time.Sleep(sweepMinAge + 3*ipamPeriod)

	acknowledged, refused := 0, 0
	for i, r := range results {
		name := fmt.Sprintf("t6-%03d", i)
		if r.err != nil {
			refused++
			if apierrors.IsConflict(r.err) || apierrors.IsInvalid(r.err) || apierrors.IsAlreadyExists(r.err) {
				t.Errorf("create of %s: %v; the pools are big enough and the names unique", name, r.err)
			}
			continue
		}
		acknowledged++
		// Nothing acknowledged is lost.
		got, err := cs.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
		switch {
		case err != nil:
			t.Errorf("acknowledged tenant %s is gone after the crash: %v", name, err)
		case got.UID != r.tenant.UID || got.Status.Network == nil || r.tenant.Status.Network == nil ||
			got.Status.Network.CIDR != r.tenant.Status.Network.CIDR || !slices.Equal(got.Status.PublicIPs, r.tenant.Status.PublicIPs):
			t.Errorf("acknowledged tenant %s changed across the crash: was uid %s %+v %v, is uid %s %+v %v", name,
				r.tenant.UID, r.tenant.Status.Network, r.tenant.Status.PublicIPs, got.UID, got.Status.Network, got.Status.PublicIPs)
		}
	}

	rep := verifyIPAM(ctx, t, cs)
	list, err := cs.TenantV1alpha1().Tenants().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	existing := 0
	for _, tn := range list.Items {
		if strings.HasPrefix(tn.Name, "t6-") {
			existing++
			checkAllocatedCondition(t, &tn)
		}
	}
	live := map[string]bool{}
	for _, tn := range list.Items {
		live[string(tn.UID)] = true
	}
	swept := 0
	for _, a := range atCrash {
		if !live[a.Owner.TenantUID] {
			swept++
		}
	}
	t.Logf("%d creates acknowledged, %d failed; %d t6 tenants exist; %d allocations right after the crash, %d of them of no tenant (reclaimed by the sweeper); %d allocations now",
		acknowledged, refused, existing, len(atCrash), swept, rep.allocations)
	if existing < acknowledged {
		t.Errorf("%d t6 tenants exist, fewer than the %d acknowledged", existing, acknowledged)
	}
	if rep.allocations != 2*rep.tenants {
		t.Errorf("%d allocations for %d tenants, want a block and an address each", rep.allocations, rep.tenants)
	}
	// The pools' status agrees: a /28 and an address per tenant.
	waitPoolStatus(ctx, t, cs, "t6-net", 65536, int64(16*existing))
	waitPoolStatus(ctx, t, cs, "t6-pub", 254, int64(existing))
}
