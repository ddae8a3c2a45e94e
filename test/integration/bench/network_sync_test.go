package bench

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	udnclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1/apis/clientset/versioned"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// netSizes are the sizes of BenchmarkNetworkSync. The defaults are the
// figures in docs/perf/host-kinds.md; BENCH_NET_* environment variables override them for
// a quicker run (e.g. BENCH_NET_TENANTS=5 BENCH_NET_PER_TENANT=4).
type netSizes struct {
	tenants   int // BENCH_NET_TENANTS: Tenants, each a /16 block
	perTenant int // BENCH_NET_PER_TENANT: Networks each tenant creates (besides its default one)
	workers   int // BENCH_NET_WORKERS: concurrent creates of each side
	// BENCH_NET_ORDER: "apart" (the default) runs each side with its own
	// workers as fast as it goes; "paired" starts the k-th create of both
	// sides at the same moment, so that each side's networks enter
	// cluster-manager's queue at comparable times: apart, the quicker
	// direct creates put their networks ahead of the tenant's in that
	// queue, and the time to NetworkCreated measures queue position.
	order string
}

// Orders of the burst's creates (BENCH_NET_ORDER).
const (
	netOrderPaired = "paired"
	netOrderApart  = "apart"
)

// directSubnets is where the host networks created directly take their
// /24s from: outside the tenant pool (10.0.0.0/8), 4,096 of them.
var directSubnets = netip.MustParsePrefix("172.16.0.0/12")

func netSizesFromEnv() (netSizes, error) {
	z := netSizes{tenants: 50, perTenant: 10, workers: 20, order: netOrderApart}
	switch o := os.Getenv("BENCH_NET_ORDER"); o {
	case "":
	case netOrderPaired, netOrderApart:
		z.order = o
	default:
		return z, fmt.Errorf("BENCH_NET_ORDER=%q: want %q or %q", o, netOrderPaired, netOrderApart)
	}
	if err := intsFromEnv(
		intSetting{"BENCH_NET_TENANTS", &z.tenants, 1},
		intSetting{"BENCH_NET_PER_TENANT", &z.perTenant, 1},
		intSetting{"BENCH_NET_WORKERS", &z.workers, 1},
	); err != nil {
		return z, err
	}
	switch {
	case z.tenants > 252:
		return z, fmt.Errorf("BENCH_NET_TENANTS=%d: the tenant pool (10.0.0.0/8 but the cluster network 10.128.0.0/14) holds 252 blocks of /16", z.tenants)
	case z.perTenant > 255:
		return z, fmt.Errorf("BENCH_NET_PER_TENANT=%d: a /16 block holds 255 /24s besides the default Network's", z.perTenant)
	case z.tenants*z.perTenant > 1<<(24-directSubnets.Bits()):
		return z, fmt.Errorf("%d Networks: %s holds %d direct /24s", z.tenants*z.perTenant, directSubnets, 1<<(24-directSubnets.Bits()))
	}
	return z, nil
}

// networkQuota is the Network quota of each tenant: its default Network,
// those of the benchmark, and a spare one; at least 12.
func (z netSizes) networkQuota() int32 {
	return int32(max(12, 1+z.perTenant+1))
}

// netDirectPrefix starts the names of the host networks the benchmark
// creates directly ("bd00042": 7 characters, within the 15 of a CUDN name
// that is also its VRF's).
const netDirectPrefix = "bd"

// cudnKey keys the host ClusterUserDefinedNetwork name, whoever made it.
func cudnKey(name string) string { return "cudn/" + name }

// createdKey keys OVN-Kubernetes' NetworkCreated=True on host network name.
func createdKey(name string) string { return "created/" + name }

// readyKey keys Ready=True on the tenant Network of host network name.
func readyKey(name string) string { return "ready/" + name }

// BenchmarkNetworkSync measures the Network sync on a stack of its
// own, in one run: 50 Tenants (a /16 block each) are created and Ready,
// then, side by side, 500 tenant Networks (10 per tenant, each tenant's
// member creating its own through the aggregator, 20 at a time) are timed
// from the start of their create request to the first sighting of their
// ClusterUserDefinedNetwork in a watch of every host CUDN, while 500 CUDNs
// of the same shape are created directly on the host by the admin, 20 at
// a time, and timed to their first sighting in the same watch. Then each
// side is timed, from the same starts, to OVN-Kubernetes' cluster-manager
// reporting the network created: the tenant's Network to Ready=True in a
// watch of Networks, the direct CUDN to NetworkCreated=True in the watch of
// CUDNs. Each Network is Layer2 with an explicit subnet, the /24 number
// 1..10 of its tenant's block, so the timing does not include defaulting.
// Every CUDN of the syncer is then checked for its labels and owner
// annotations.
// See netSizes for the BENCH_NET_* variables that shrink it and for
// BENCH_NET_ORDER (the two sides' creates apart or paired);
// BENCH_NET_TENANT_APISERVER_ARGS adds tenant-apiserver flags,
// BENCH_NET_DUMP writes every key's start and first sighting as CSV, and
// BENCH_NET_AUDIT=<dir> has the host kube-apiserver write an audit log
// there, from which the run counts the requests made on each side's
// networks.
func BenchmarkNetworkSync(b *testing.B) {
	if b.N > 1 {
		b.Fatal("BenchmarkNetworkSync fills its stack: run it once (-benchtime 1x)")
	}
	z, err := netSizesFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var audit *netAudit
	var tweak func(*stack.Options)
	if dir := os.Getenv("BENCH_NET_AUDIT"); dir != "" {
		audit = &netAudit{dir: dir}
		args, err := audit.args()
		if err != nil {
			b.Fatal(err)
		}
		tweak = func(o *stack.Options) { o.KubeAPIServerArgs = append(o.KubeAPIServerArgs, args...) }
	}
	s, stop := benchStack(ctx, b, "BENCH_NET_TENANT_APISERVER_ARGS", z.tenants, tweak)
	defer stop()
	b.Logf("network sync stack in %s, sizes %+v", s.WorkDir(), z)
	// The sync harness's clients, measurements and summary serve as they
	// are: its sizes only need the tenant and worker counts.
	r := &netRun{syncRun: syncRun{b: b, z: syncSizes{tenants: z.tenants, workers: z.workers}, s: s, seen: newFirstSeen()}, nz: z,
		versions: newCUDNVersions(), audit: audit}
	r.clients()
	if r.udn, err = udnclientset.NewForConfig(framework.Unthrottled(s.RESTConfig(stack.AdminUser))); err != nil {
		b.Fatal(err)
	}

	// One watch of every host CUDN for the whole run; one of Tenants for
	// the onboarding only; after it, each member's watch of its Networks.
	tenantsCtx, stopTenants := context.WithCancel(ctx)
	cudnSynced := watchHostCUDNs(ctx, r.udn, r.seen, r.versions)
	_, tenantsSynced := watchTenantsReady(tenantsCtx, r.admin, r.seen)
	if !cache.WaitForCacheSync(ctx.Done(), cudnSynced, tenantsSynced) {
		b.Fatal("the watches never synced")
	}

	b.ResetTimer()
	r.t0 = time.Now()
	r.onboard(ctx)
	stopTenants()
	var networksSynced []cache.InformerSynced
	for i := range r.members {
		networksSynced = append(networksSynced, watchNetworksReady(ctx, r.members[i], r.seen))
	}
	if !cache.WaitForCacheSync(ctx.Done(), networksSynced...) {
		b.Fatal("the members' watches of Networks never synced")
	}
	r.burst(ctx)
	b.StopTimer()
	r.check(ctx)
	r.hostWrites(ctx)
	if audit != nil {
		lines, err := summarizeNetAudit(audit.log(), r.netSides, r.burstStart)
		if err != nil {
			b.Error(err)
		}
		for _, l := range lines {
			r.notef("%s", l)
		}
	}
	r.report()
	if path := os.Getenv("BENCH_NET_DUMP"); path != "" {
		if err := r.seen.dump(path, r.t0); err != nil {
			b.Error(err)
		}
	}
}

// netRun is the state of one BenchmarkNetworkSync run.
type netRun struct {
	syncRun
	nz  netSizes
	udn udnclientset.Interface
	// versions counts the writes of every host CUDN; audit, when set, is
	// the host's audit log of the run.
	versions *cudnVersions
	audit    *netAudit
	// burstStart is when the burst's first creates started; netSides the
	// host network names of each side ("tenant", "direct").
	burstStart time.Time
	netSides   map[string][]string
	// namespaceQuota is the Tenants' Namespace quota; nil: the default.
	namespaceQuota *int32

	// Filled by onboard, by tenant index.
	tenantUIDs []types.UID
	blocks     []netip.Prefix
	// Filled by burst, by cudnKey: the tenant Networks as their create
	// returned them, and when each create (of either side) returned.
	mu       sync.Mutex
	networks map[string]*tenantv1alpha1.Network
	returned map[string]time.Time
}

// done notes that the create of key returned now.
func (r *netRun) done(key string) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.returned[key] = now
}

// afterReturn is, for keys, how long after its create request returned
// each CUDN was first seen (negative: seen before the response arrived).
func (r *netRun) afterReturn(keys []string) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Duration
	for _, k := range keys {
		out = append(out, r.seen.lastSeen([]string{k}).Sub(r.returned[k]))
	}
	return out
}

// benchNetworkName names Network j (1-based) of a tenant.
func benchNetworkName(j int) string { return fmt.Sprintf("net-%03d", j) }

// nthSubnet is the /24 number n of block (n from 0).
func nthSubnet(block netip.Prefix, n int) string {
	a := block.Masked().Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v += uint32(n) << 8
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), 24).String()
}

// onboard creates the Tenants at once, waits until they are Ready and
// visible to their members, and notes their UIDs and blocks.
func (r *netRun) onboard(ctx context.Context) {
	quota := r.nz.networkQuota()
	prefix := int32(16)
	var keys []string
	var jobs []job
	var reqs durations
	for i := 0; i < r.nz.tenants; i++ {
		name := syncTenantName(i)
		keys = append(keys, tenantReadyKey(name))
		t := &tenantv1alpha1.Tenant{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: tenantv1alpha1.TenantSpec{
				Network: tenantv1alpha1.TenantNetwork{PrefixLength: &prefix},
				Quota:   tenantv1alpha1.TenantQuota{Networks: &quota, Namespaces: r.namespaceQuota},
			},
		}
		jobs = append(jobs, timedCreate(r.seen, tenantReadyKey(name), &reqs, func(ctx context.Context) error {
			_, err := r.admin.TenantV1alpha1().Tenants().Create(ctx, t, metav1.CreateOptions{})
			return err
		}))
	}
	cpu := takeCPU(r.s)
	start := time.Now()
	if err := runJobs(ctx, r.nz.workers, jobs); err != nil {
		r.b.Fatal(err)
	}
	if err := r.seen.waitSeen(ctx, keys, syncTimeout); err != nil {
		r.b.Fatal(err)
	}
	r.measure("tenant-ready", fmt.Sprintf("Tenant create -> Ready (/16 each, %d at once)", r.nz.tenants), keys)
	r.requests("   Tenant create request", &reqs)
	r.notef("onboarding: %d Tenants Ready %s after the first create", r.nz.tenants, r.seen.lastSeen(keys).Sub(start).Round(time.Millisecond))
	r.notef("  %s", cpu.since(r.s))

	var visible []job
	for i := 0; i < r.nz.tenants; i++ {
		visible = append(visible, func(ctx context.Context) error {
			return r.s.WaitTenantVisible(ctx, syncTenantUser(i).Name, syncTenantName(i))
		})
	}
	if err := runJobs(ctx, r.nz.workers, visible); err != nil {
		r.b.Fatal(err)
	}
	for i := 0; i < r.nz.tenants; i++ {
		t, err := r.admin.TenantV1alpha1().Tenants().Get(ctx, syncTenantName(i), metav1.GetOptions{})
		if err != nil {
			r.b.Fatal(err)
		}
		if t.Status.Network == nil {
			r.b.Fatalf("tenant %s is Ready without a block", t.Name)
		}
		block, err := netip.ParsePrefix(t.Status.Network.CIDR)
		if err != nil || block.Bits() != 16 {
			r.b.Fatalf("tenant %s: block %q, want a /16 (%v)", t.Name, t.Status.Network.CIDR, err)
		}
		r.tenantUIDs = append(r.tenantUIDs, t.UID)
		r.blocks = append(r.blocks, block)
	}
	// The onboarding's last status writes settle before the burst.
	time.Sleep(3 * time.Second)
}

// directCUDN is host network number k created directly: the shape of the
// syncer's (Layer2, primary, one /24, a namespace selector on two labels),
// under labels of its own so the syncer's checker leaves it alone.
func directCUDN(k int) *udnv1.ClusterUserDefinedNetwork {
	name := fmt.Sprintf("%s%05d", netDirectPrefix, k)
	return &udnv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"bench.tenant.io/direct": "true"}},
		Spec: udnv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{
				"bench.tenant.io/tenant":  "direct",
				"bench.tenant.io/network": name,
			}},
			Network: udnv1.NetworkSpec{
				Topology: udnv1.NetworkTopologyLayer2,
				Layer2: &udnv1.Layer2Config{
					Role:    udnv1.NetworkRolePrimary,
					Subnets: udnv1.DualStackCIDRs{udnv1.CIDR(nthSubnet(directSubnets, k))},
				},
			},
		},
	}
}

// burst creates the tenant Networks and the direct host networks side by
// side, paired or each side with its own workers (netSizes.order), and
// waits for every CUDN, then for every network's creation.
func (r *netRun) burst(ctx context.Context) {
	r.networks = map[string]*tenantv1alpha1.Network{}
	r.returned = map[string]time.Time{}
	var syncKeys, directKeys []string
	var syncJobs, directJobs []job
	var syncReqs, directReqs durations
	for j := 1; j <= r.nz.perTenant; j++ {
		for i := 0; i < r.nz.tenants; i++ {
			n := &tenantv1alpha1.Network{
				ObjectMeta: metav1.ObjectMeta{Name: benchNetworkName(j)},
				Spec: tenantv1alpha1.NetworkSpec{
					Topology: tenantv1alpha1.NetworkTopologyLayer2,
					Subnets:  []string{nthSubnet(r.blocks[i], j)},
				},
			}
			syncKey := cudnKey(hostnames.ClusterUserDefinedNetwork(r.tenantUIDs[i], n.Name))
			c := r.members[i]
			syncKeys = append(syncKeys, syncKey)
			syncJobs = append(syncJobs, timedCreate(r.seen, syncKey, &syncReqs, func(ctx context.Context) error {
				got, err := c.TenantV1alpha1().Networks().Create(ctx, n, metav1.CreateOptions{})
				if err != nil {
					return err
				}
				r.done(syncKey)
				r.mu.Lock()
				defer r.mu.Unlock()
				r.networks[syncKey] = got
				return nil
			}))

			cudn := directCUDN(len(directKeys))
			directKey := cudnKey(cudn.Name)
			directKeys = append(directKeys, directKey)
			directJobs = append(directJobs, timedCreate(r.seen, directKey, &directReqs, func(ctx context.Context) error {
				if _, err := r.udn.K8sV1().ClusterUserDefinedNetworks().Create(ctx, cudn, metav1.CreateOptions{}); err != nil {
					return err
				}
				r.done(directKey)
				return nil
			}))
		}
	}
	cpu := takeCPU(r.s)
	start := time.Now()
	r.burstStart = start
	var ends [2]time.Time
	switch r.nz.order {
	case netOrderApart:
		ends = runSides(ctx, r.b, r.nz.workers, syncJobs, directJobs)
	default:
		ends = runPaired(ctx, r.b, r.nz.workers, 0, syncJobs, directJobs)
	}
	if err := r.seen.waitSeen(ctx, append(append([]string(nil), syncKeys...), directKeys...), syncTimeout); err != nil {
		r.b.Fatal(err)
	}
	cpuUse := cpu.since(r.s)
	var readyKeys, createdKeys, syncCreatedKeys []string
	for _, k := range syncKeys {
		readyKeys = append(readyKeys, readyKey(strings.TrimPrefix(k, "cudn/")))
		r.seen.alias(k, readyKeys[len(readyKeys)-1])
		// The syncer's CUDN's own NetworkCreated, in the host watch.
		syncCreatedKeys = append(syncCreatedKeys, createdKey(strings.TrimPrefix(k, "cudn/")))
		r.seen.alias(k, syncCreatedKeys[len(syncCreatedKeys)-1])
	}
	for _, k := range directKeys {
		createdKeys = append(createdKeys, createdKey(strings.TrimPrefix(k, "cudn/")))
		r.seen.alias(k, createdKeys[len(createdKeys)-1])
	}
	if err := r.seen.waitSeen(ctx, append(append([]string(nil), readyKeys...), createdKeys...), syncTimeout); err != nil {
		r.b.Fatal(err)
	}
	readyCPU := cpu.since(r.s)
	synced := r.measure("net-sync", fmt.Sprintf("tenant Network -> host CUDN (%d x %d)", r.nz.tenants, r.nz.perTenant), syncKeys)
	r.requests("   tenant Network create request (aggregated)", &syncReqs)
	direct := r.measure("net-direct", fmt.Sprintf("host CUDN created directly (%d)", len(directKeys)), directKeys)
	r.requests("   host CUDN create request", &directReqs)
	p50 := float64(percentile(synced, 50)) / float64(percentile(direct, 50))
	p99 := float64(percentile(synced, 99)) / float64(percentile(direct, 99))
	r.b.ReportMetric(p50, "sync/direct-p50")
	r.b.ReportMetric(p99, "sync/direct-p99")
	for _, side := range []struct {
		name string
		d    *durations
	}{{"net-create", &syncReqs}, {"cudn-create", &directReqs}} {
		all := side.d.all()
		r.b.ReportMetric(pctl(all, 50), side.name+"-p50-ms")
		r.b.ReportMetric(pctl(all, 99), side.name+"-p99-ms")
	}
	r.notef("burst: ratio sync / direct: p50 %.2f, p99 %.2f; creates done after %s (tenant) and %s (direct), last CUDN after %s (synced) and %s (direct)",
		p50, p99, ends[0].Sub(start).Round(time.Millisecond), ends[1].Sub(start).Round(time.Millisecond),
		r.seen.lastSeen(syncKeys).Sub(start).Round(time.Millisecond), r.seen.lastSeen(directKeys).Sub(start).Round(time.Millisecond))
	// The syncer reads Networks from the tenant-apiserver's own storage,
	// so it may start while the response still travels back through the
	// aggregator: how much of the latency comes after the create returned.
	for _, side := range []struct {
		what string
		keys []string
	}{{"tenant Network", syncKeys}, {"direct", directKeys}} {
		after := r.afterReturn(side.keys)
		early := 0
		for _, d := range after {
			if d < 0 {
				early++
			}
		}
		r.notef("  %s: CUDN first seen after the create returned: p50 %s, p99 %s; %d of %d seen before the response arrived",
			side.what, percentile(after, 50).Round(100*time.Microsecond), percentile(after, 99).Round(100*time.Microsecond), early, len(after))
	}
	r.notef("  %s", cpuUse)

	if err := r.seen.waitSeen(ctx, syncCreatedKeys, syncTimeout); err != nil {
		r.b.Fatal(err)
	}
	ready := r.measure("net-ready", fmt.Sprintf("tenant Network -> Ready, OVN-Kubernetes' NetworkCreated (%d)", len(readyKeys)), readyKeys)
	r.measure("net-sync-created", fmt.Sprintf("   tenant Network -> its CUDN's NetworkCreated on the host (%d)", len(syncCreatedKeys)), syncCreatedKeys)
	created := r.measure("net-direct-created", fmt.Sprintf("host CUDN created directly -> NetworkCreated (%d)", len(createdKeys)), createdKeys)
	r.b.ReportMetric(pctl(ready, 50), "ready-p50-ms")
	r.b.ReportMetric(pctl(ready, 99), "ready-p99-ms")
	r.b.ReportMetric(float64(percentile(ready, 50))/float64(percentile(created, 50)), "ready/direct-created-p50")
	r.b.ReportMetric(float64(percentile(ready, 99))/float64(percentile(created, 99)), "ready/direct-created-p99")
	r.notef("OVN-Kubernetes: last Network Ready after %s, last direct CUDN created after %s; ratio p50 %.2f, p99 %.2f",
		r.seen.lastSeen(readyKeys).Sub(start).Round(time.Millisecond), r.seen.lastSeen(createdKeys).Sub(start).Round(time.Millisecond),
		float64(percentile(ready, 50))/float64(percentile(created, 50)), float64(percentile(ready, 99))/float64(percentile(created, 99)))
	mirror := r.between(syncCreatedKeys, readyKeys)
	r.notef("  the syncer's CUDN NetworkCreated on the host -> its Network seen Ready: p50 %s, p99 %s",
		percentile(mirror, 50).Round(time.Millisecond), percentile(mirror, 99).Round(time.Millisecond))
	var syncNames, directNames []string
	for _, k := range syncKeys {
		syncNames = append(syncNames, strings.TrimPrefix(k, "cudn/"))
	}
	for _, k := range directKeys {
		directNames = append(directNames, strings.TrimPrefix(k, "cudn/"))
	}
	r.notef("  writes of each CUDN after its create, in the watch of CUDNs once every network was created: tenant %s; direct %s",
		r.versions.writes(syncNames), r.versions.writes(directNames))
	r.netSides = map[string][]string{"tenant": syncNames, "direct": directNames}
	r.notef("  until every network was created: %s", readyCPU)
	r.notef("  RSS after the burst: %s", stackRSS(r.s))
}

// between returns, for each i, how long after from[i] was first seen
// to[i] was.
func (r *netRun) between(from, to []string) []time.Duration {
	r.seen.mu.Lock()
	defer r.seen.mu.Unlock()
	out := make([]time.Duration, 0, len(from))
	for i := range from {
		out = append(out, r.seen.seen[to[i]].Sub(r.seen.seen[from[i]]))
	}
	return out
}

// hostWrites describes, per side, who wrote the CUDNs as they are now:
// their managedFields' managers (operation, subresource), generations and
// finalizers.
func (r *netRun) hostWrites(ctx context.Context) {
	list, err := r.udn.K8sV1().ClusterUserDefinedNetworks().List(ctx, metav1.ListOptions{})
	if err != nil {
		r.b.Fatal(err)
	}
	byName := map[string]*udnv1.ClusterUserDefinedNetwork{}
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	for _, side := range []string{"tenant", "direct"} {
		counts := map[string]int{}
		for _, name := range r.netSides[side] {
			c := byName[name]
			if c == nil {
				counts["missing"]++
				continue
			}
			for _, m := range c.ManagedFields {
				sub := ""
				if m.Subresource != "" {
					sub = " /" + m.Subresource
				}
				counts[fmt.Sprintf("manager %s %s%s", m.Manager, m.Operation, sub)]++
			}
			counts[fmt.Sprintf("generation %d", c.Generation)]++
			counts[fmt.Sprintf("finalizers %v", c.Finalizers)]++
		}
		var parts []string
		for k, v := range counts {
			parts = append(parts, fmt.Sprintf("%s: %d", k, v))
		}
		slices.Sort(parts)
		r.notef("  %s CUDNs as they are after the burst (of %d): %s", side, len(r.netSides[side]), strings.Join(parts, "; "))
	}
}

// stackRSS describes the resident memory of the stack's processes.
func stackRSS(s *stack.Stack) string {
	var parts []string
	total := 0.0
	for _, name := range stackProcesses {
		if pid := s.PID(name); pid != 0 {
			m := rssMiB(pid)
			total += m
			parts = append(parts, fmt.Sprintf("%s %.0f MiB", name, m))
		}
	}
	return fmt.Sprintf("%s; total %.0f MiB", strings.Join(parts, ", "), total)
}

// check verifies, outside the timing, that every CUDN the syncer made for
// the burst carries its tenant's and Network's labels and UIDs and the
// requested subnet.
func (r *netRun) check(ctx context.Context) {
	list, err := r.udn.K8sV1().ClusterUserDefinedNetworks().List(ctx, metav1.ListOptions{LabelSelector: hostnames.NetworkLabel})
	if err != nil {
		r.b.Fatal(err)
	}
	byName := map[string]*udnv1.ClusterUserDefinedNetwork{}
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	var problems []string
	for i := 0; i < r.nz.tenants; i++ {
		for j := 1; j <= r.nz.perTenant; j++ {
			name := hostnames.ClusterUserDefinedNetwork(r.tenantUIDs[i], benchNetworkName(j))
			n := r.networks[cudnKey(name)]
			c := byName[name]
			switch {
			case c == nil:
				problems = append(problems, fmt.Sprintf("%s/%s: no CUDN %s labelled %s", syncTenantName(i), benchNetworkName(j), name, hostnames.NetworkLabel))
				continue
			case n == nil:
				problems = append(problems, fmt.Sprintf("%s/%s: no Network recorded", syncTenantName(i), benchNetworkName(j)))
				continue
			}
			var got []string
			if c.Spec.Network.Layer2 != nil {
				for _, s := range c.Spec.Network.Layer2.Subnets {
					got = append(got, string(s))
				}
			}
			if c.Labels[hostnames.TenantLabel] != syncTenantName(i) || c.Labels[hostnames.NetworkLabel] != n.Name ||
				c.Annotations[hostnames.OwnerUIDAnnotation] != string(n.UID) || c.Annotations[hostnames.TenantUIDAnnotation] != string(r.tenantUIDs[i]) ||
				!slices.Equal(got, n.Spec.Subnets) {
				problems = append(problems, fmt.Sprintf("%s/%s: CUDN %s has labels %v, annotations %v, Layer2 subnets %v", syncTenantName(i), n.Name, name, c.Labels, c.Annotations, got))
			}
		}
	}
	if len(problems) > 0 {
		r.b.Errorf("%d of %d CUDNs not as the syncer must make them, e.g.:\n%s", len(problems), r.nz.tenants*r.nz.perTenant, strings.Join(problems[:min(5, len(problems))], "\n"))
		return
	}
	r.notef("check: all %d CUDNs of the burst carry their tenant and Network labels, owner and tenant UIDs and subnet (%d CUDNs labelled %s on the host)",
		r.nz.tenants*r.nz.perTenant, len(list.Items), hostnames.NetworkLabel)
}

// report prints the summary table.
func (r *netRun) report() {
	printTable(os.Stdout, fmt.Sprintf("BenchmarkNetworkSync: create start -> first seen in a watch (%d tenants x %d Networks, %d workers per side, creates %s)", r.nz.tenants, r.nz.perTenant, r.nz.workers, r.nz.order), r.rows)
	for _, line := range r.summary {
		fmt.Fprintf(os.Stdout, "  %s\n", line)
	}
	fmt.Fprintln(os.Stdout)
}

// watchNetworksReady records in f when each tenant Network of member's
// tenant is first seen Ready, keyed by its host network.
func watchNetworksReady(ctx context.Context, member clientset.Interface, f *firstSeen) cache.InformerSynced {
	record := func(obj interface{}) {
		now := time.Now()
		if n, ok := obj.(*tenantv1alpha1.Network); ok && n.Status.HostNetwork != "" &&
			meta.IsStatusConditionTrue(n.Status.Conditions, tenantv1alpha1.ConditionReady) {
			f.saw(readyKey(n.Status.HostNetwork), now)
		}
	}
	_, synced := recordWatch(ctx, &tenantv1alpha1.Network{}, member.TenantV1alpha1().Networks().List, member.TenantV1alpha1().Networks().Watch, record)
	return synced
}

// watchHostCUDNs records in f when each host ClusterUserDefinedNetwork,
// the syncer's or one created directly, is first seen (by name) in a
// watch of every host CUDN. One watch for both, so that both pay the same
// delivery cost; versions counts every CUDN's writes.
func watchHostCUDNs(ctx context.Context, udn udnclientset.Interface, f *firstSeen, versions *cudnVersions) cache.InformerSynced {
	record := func(obj interface{}) {
		now := time.Now()
		if c, ok := obj.(*udnv1.ClusterUserDefinedNetwork); ok {
			versions.saw(c)
			f.saw(cudnKey(c.Name), now)
			if meta.IsStatusConditionTrue(c.Status.Conditions, "NetworkCreated") {
				f.saw(createdKey(c.Name), now)
			}
		}
	}
	_, synced := recordWatch(ctx, &udnv1.ClusterUserDefinedNetwork{}, udn.K8sV1().ClusterUserDefinedNetworks().List, udn.K8sV1().ClusterUserDefinedNetworks().Watch, record)
	return synced
}
