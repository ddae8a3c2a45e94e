package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// syncTimeout bounds each wait of the other sync benchmarks for the
// syncer (BenchmarkSync's grow with its sizes, syncSizes.timeout); generous,
// it only turns a stuck syncer into a failure instead of a hang.
const syncTimeout = 10 * time.Minute

// BenchmarkSync measures the syncer's Namespace sync on a stack of its own
// (tenant-apiserver flags from BENCH_SYNC_TENANT_APISERVER_ARGS), in four
// steps of one run:
//
//  1. Tenant create -> Ready: 100 Tenants (a /24 block and one public IP
//     each) created at once by 20 goroutines of the provider admin, timed
//     from the start of the create request to the first watch event that
//     shows phase Ready.
//  2. Namespace sync vs direct: a burst of 2,000 tenant Namespaces (20 per
//     tenant, each tenant's member creating its own, 20 at a time) timed to
//     the first sighting of the host namespace in a watch of host
//     namespaces, while 2,000 host namespaces are created directly by the
//     host admin, 20 at a time, timed to their first sighting in the same
//     watch.
//  3. Restart resync: with 100 tenants x 100 Namespaces synced, a graceful
//     restart of tenant-apiserver; the syncer reports on /metrics how long
//     its new term took to reconcile everything once.
//  4. Fairness: 10 noisy tenants create 900 Namespaces each, as fast as 4
//     goroutines each can; 2 s later 40 quiet tenants create 10 each, one
//     after the other; each Namespace is timed to its host namespace.
//
// The restart comes before the fairness step so that it resyncs exactly
// 100 x 100 Namespaces. The sizes are those of docs/perf/sync.md; see syncSizes for
// the BENCH_SYNC_* variables that change them. With BENCH_SYNC_LATE_TENANTS
// (the restart at 1,000 x 100 sets it), two steps come after the restart:
// that many more Tenants created at once and timed to Ready with the store
// full, and what the host's namespaces cost the host kube-apiserver (its
// RSS, a full list of them, a label-selected list). On a stack without
// cluster-manager (BENCH_SYNC_SKIP_OVNKUBE), BENCH_SYNC_RENDER_ATTACHMENTS
// writes the NetworkAttachmentDefinitions it would have rendered before
// the restart, so that the restart lists them as on a real host.
func BenchmarkSync(b *testing.B) {
	if b.N > 1 {
		b.Fatal("BenchmarkSync fills its stack: run it once (-benchtime 1x)")
	}
	z, err := syncSizesFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	profileDir := os.Getenv("BENCH_SYNC_PROFILE_DIR")
	s, stop := benchStack(ctx, b, "BENCH_SYNC_TENANT_APISERVER_ARGS", z.tenants, func(o *stack.Options) {
		// Without OVN-Kubernetes' cluster-manager, whose client is
		// limited to 50 requests a second: at 100,000 namespaces it would
		// still be writing their NetworkAttachmentDefinitions half an hour later.
		o.SkipOVNKube = os.Getenv("BENCH_SYNC_SKIP_OVNKUBE") != ""
		// Without the MetalLB controller, which reloads its configuration
		// on every namespace event and lists every namespace to do it: at
		// 100,000 namespaces it was still busy with the fill's events
		// (0.76 of the 2 cores) during the restart. Only for runs
		// without public IPs, which need it.
		o.SkipMetalLB = os.Getenv("BENCH_SYNC_SKIP_METALLB") != "" && z.publicIPs == 0
		if profileDir != "" {
			o.KubeAPIServerArgs = append(o.KubeAPIServerArgs, "--profiling=true")
		}
	})
	defer stop()
	b.Logf("sync stack in %s, sizes %+v", s.WorkDir(), z)
	r := &syncRun{b: b, z: z, s: s, seen: newFirstSeen(), profileDir: profileDir, ovn: os.Getenv("BENCH_SYNC_SKIP_OVNKUBE") == ""}
	r.clients()

	// One watch of every host namespace for the whole run, and one of
	// Tenants for step 1 only: later, Tenants grow large (their conditions
	// list the Namespaces not synced yet) and the watch would add the
	// harness's own load to the tenant-apiserver's.
	tenantsCtx, stopTenants := context.WithCancel(ctx)
	hostSynced := watchHostNamespaces(ctx, r.host, r.seen)
	_, tenantsSynced := watchTenantsReady(tenantsCtx, r.admin, r.seen)
	if !cache.WaitForCacheSync(ctx.Done(), hostSynced, tenantsSynced) {
		b.Fatal("the watches never synced")
	}

	b.ResetTimer()
	r.t0 = time.Now()
	r.tenantsReady(ctx)
	stopTenants()
	r.burst(ctx)
	r.fill(ctx)
	r.renderAttachments(ctx)
	r.restart(ctx)
	r.lateTenants(ctx)
	r.hostCosts(ctx)
	r.fairness(ctx)
	b.StopTimer()
	if writes, err := hostWrites(ctx, r.host); err != nil {
		b.Errorf("reading the host's request counts: %v", err)
	} else {
		var parts []string
		for _, res := range []string{"namespaces", "rolebindings", "ipaddresspools", "clusteruserdefinednetworks"} {
			parts = append(parts, fmt.Sprintf("%s %d (and %d answered 409)", res, writes[res], writes[res+"/409"]))
		}
		r.notef("host writes over the run (create, update, patch, delete): %s", strings.Join(parts, ", "))
	}
	r.report()
	if path := os.Getenv("BENCH_SYNC_DUMP"); path != "" {
		if err := r.seen.dump(path, r.t0); err != nil {
			b.Error(err)
		}
	}
}

// syncRun is the state of one BenchmarkSync run.
type syncRun struct {
	b          *testing.B
	z          syncSizes
	s          *stack.Stack
	seen       *firstSeen
	profileDir string
	t0         time.Time // the start of step 1

	admin   clientset.Interface
	host    kubernetes.Interface
	meta    metadata.Interface
	ovn     bool                  // the stack runs OVN-Kubernetes' cluster-manager
	members []clientset.Interface // by tenant index

	rows    []row
	summary []string
}

func (r *syncRun) clients() {
	var err error
	adminConfig := framework.Unthrottled(r.s.RESTConfig(stack.AdminUser))
	if r.admin, err = clientset.NewForConfig(adminConfig); err != nil {
		r.b.Fatal(err)
	}
	if r.host, err = kubernetes.NewForConfig(adminConfig); err != nil {
		r.b.Fatal(err)
	}
	if r.meta, err = metadata.NewForConfig(adminConfig); err != nil {
		r.b.Fatal(err)
	}
	for i := 0; i < r.z.tenants; i++ {
		c, err := clientset.NewForConfig(framework.Unthrottled(r.s.RESTConfig(syncTenantUser(i).Name)))
		if err != nil {
			r.b.Fatal(err)
		}
		r.members = append(r.members, c)
	}
}

// measure reports the latencies of keys as metric <name>-p50-ms and
// -p99-ms and a row of the summary, and returns them.
func (r *syncRun) measure(name, what string, keys []string) []time.Duration {
	d, err := r.seen.latencies(keys)
	if err != nil {
		r.b.Fatal(err)
	}
	r.b.ReportMetric(pctl(d, 50), name+"-p50-ms")
	r.b.ReportMetric(pctl(d, 99), name+"-p99-ms")
	r.rows = append(r.rows, row{what, len(d), pctl(d, 50), pctl(d, 99)})
	return d
}

// requests adds a row for the create requests' own durations.
func (r *syncRun) requests(what string, d *durations) {
	all := d.all()
	r.rows = append(r.rows, row{what, len(all), pctl(all, 50), pctl(all, 99)})
}

func (r *syncRun) notef(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	r.summary = append(r.summary, line)
	r.b.Log(line)
}

// tenantsReady is step 1: Tenants created at once until they are Ready.
func (r *syncRun) tenantsReady(ctx context.Context) {
	quota := int32(r.z.quota())
	var names []string
	for i := 0; i < r.z.tenants; i++ {
		names = append(names, syncTenantName(i))
	}
	var reqs durations
	keys, jobs := r.tenantCreates(names, &quota, &reqs)
	if len(jobs) == 0 { // the burst gave every tenant its Namespaces
		r.waitAllSynced(ctx)
		return
	}
	stopProfiles := r.profile(ctx, "tenants", 20*time.Second)
	requests, err := hostRequests(ctx, r.host)
	if err != nil {
		r.b.Fatal(err)
	}
	cpu := takeCPU(r.s)
	start := time.Now()
	if err := runJobs(ctx, r.z.workers, jobs); err != nil {
		r.b.Fatal(err)
	}
	if err := r.seen.waitSeen(ctx, keys, r.z.timeout()); err != nil {
		r.b.Fatal(err)
	}
	stopProfiles()
	requestsAfter, err := hostRequests(ctx, r.host)
	if err != nil {
		r.b.Fatal(err)
	}
	r.measure("tenant-ready", fmt.Sprintf("1. Tenant create -> Ready (%d at once)", r.z.tenants), keys)
	r.requests("   Tenant create request", &reqs)
	r.notef("step 1: %d Tenants Ready %s after the first create", r.z.tenants, r.seen.lastSeen(keys).Sub(start).Round(time.Millisecond))
	r.notef("  %s", cpu.since(r.s))
	r.notef("  host requests per Tenant until the last was Ready (all clients, the benchmark's own watches' included): %s",
		perObject(requests, requestsAfter, len(keys)))

	// The membership index follows Tenants through an informer of its own.
	var visible []job
	for i := 0; i < r.z.tenants; i++ {
		visible = append(visible, func(ctx context.Context) error {
			return r.s.WaitTenantVisible(ctx, syncTenantUser(i).Name, syncTenantName(i))
		})
	}
	if err := runJobs(ctx, r.z.workers, visible); err != nil {
		r.b.Fatal(err)
	}
}

// tenantCreates returns the jobs that create Tenants names (a /24 each,
// the run's public IPs, a namespace quota if given), each timed to its
// phase Ready, and their keys.
func (r *syncRun) tenantCreates(names []string, namespaceQuota *int32, reqs *durations) (keys []string, jobs []job) {
	prefix := int32(24)
	for _, name := range names {
		keys = append(keys, tenantReadyKey(name))
		t := &tenantv1alpha1.Tenant{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: tenantv1alpha1.TenantSpec{
				Network:   tenantv1alpha1.TenantNetwork{PrefixLength: &prefix},
				PublicIPs: tenantv1alpha1.TenantPublicIPs{Count: int32(r.z.publicIPs)},
				Quota:     tenantv1alpha1.TenantQuota{Namespaces: namespaceQuota},
			},
		}
		jobs = append(jobs, timedCreate(r.seen, tenantReadyKey(name), reqs, func(ctx context.Context) error {
			_, err := r.admin.TenantV1alpha1().Tenants().Create(ctx, t, metav1.CreateOptions{})
			return err
		}))
	}
	return keys, jobs
}

// createNamespace returns the job that creates tenant Namespace ns as a
// member of tenant i, timed to its host namespace.
func (r *syncRun) createNamespace(i int, ns string, reqs *durations) (string, job) {
	key := syncedKey(syncTenantName(i), ns)
	c := r.members[i]
	return key, timedCreate(r.seen, key, reqs, func(ctx context.Context) error {
		_, err := c.TenantV1alpha1().Namespaces().Create(ctx, tenantNamespace(ns), metav1.CreateOptions{})
		return err
	})
}

// burst is step 2: tenant Namespaces and direct host namespaces created
// side by side, each side with its own workers.
func (r *syncRun) burst(ctx context.Context) {
	var syncKeys, directKeys []string
	var syncJobs, directJobs []job
	var syncReqs, directReqs durations
	for j := 0; j < r.z.burstOf(0); j++ {
		for i := 0; i < r.z.tenants; i++ {
			if j >= r.z.burstOf(i) {
				continue
			}
			key, create := r.createNamespace(i, fmt.Sprintf("b-%03d", j), &syncReqs)
			syncKeys, syncJobs = append(syncKeys, key), append(syncJobs, create)

			name := fmt.Sprintf("%s%05d", directPrefix, len(directKeys))
			key = directKey(name)
			directKeys = append(directKeys, key)
			directJobs = append(directJobs, timedCreate(r.seen, key, &directReqs, func(ctx context.Context) error {
				_, err := r.host.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
				return err
			}))
		}
	}
	stopProfiles := r.profile(ctx, "burst", 20*time.Second)
	stopLag, lags := sampleCacheLag(ctx, r.s, r.members[0])
	apf := r.takeAPF(ctx)
	stages := r.takeStages(ctx)
	ovn := r.watchOVN(ctx)
	cpu := takeCPU(r.s)
	start := time.Now()
	ends := runSides(ctx, r.b, r.z.workers, syncJobs, directJobs)
	if err := r.seen.waitSeen(ctx, append(append([]string(nil), syncKeys...), directKeys...), r.z.timeout()); err != nil {
		r.b.Fatal(err)
	}
	cpuUse := cpu.since(r.s)
	apfUse := apf.since(r.takeAPF(ctx))
	stageUse := stages.since(r.takeStages(ctx), createStages)
	stopLag()
	stopProfiles()
	synced := r.measure("ns-sync", fmt.Sprintf("2. tenant Namespace -> host namespace (burst of %d)", len(syncKeys)), syncKeys)
	r.requests("   tenant Namespace create request (aggregated)", &syncReqs)
	direct := r.measure("ns-direct", fmt.Sprintf("2. host namespace created directly (burst of %d)", len(directKeys)), directKeys)
	r.requests("   host namespace create request", &directReqs)
	p50 := float64(percentile(synced, 50)) / float64(percentile(direct, 50))
	p99 := float64(percentile(synced, 99)) / float64(percentile(direct, 99))
	r.b.ReportMetric(p50, "sync/direct-p50")
	r.b.ReportMetric(p99, "sync/direct-p99")
	r.notef("step 2: ratio sync / direct: p50 %.2f, p99 %.2f (goal p99 <= 1.5); creates done after %s (tenant) and %s (direct), last host namespace after %s (synced) and %s (direct)",
		p50, p99, ends[0].Sub(start).Round(time.Millisecond), ends[1].Sub(start).Round(time.Millisecond),
		r.seen.lastSeen(syncKeys).Sub(start).Round(time.Millisecond), r.seen.lastSeen(directKeys).Sub(start).Round(time.Millisecond))
	r.notef("  %s", cpuUse)
	r.checkOVN(ctx, "step 2", ovn)
	r.notef("  %s", apfUse)
	r.noteLag(lags())
	r.noteStages("synced", syncKeys, "direct", directKeys, stageUse)
}

// noteStages notes, for two sets of keys, the time from the end of their
// create requests to their host namespaces, and where the step's requests
// spent their time.
func (r *syncRun) noteStages(aName string, a []string, bName string, b []string, stageUse []string) {
	var parts []string
	for _, side := range []struct {
		name string
		keys []string
	}{{aName, a}, {bName, b}} {
		if d := r.seen.afterReturn(side.keys); len(d) > 0 {
			parts = append(parts, fmt.Sprintf("%s p50 %.1f / p99 %.1f ms", side.name, pctl(d, 50), pctl(d, 99)))
		}
	}
	r.notef("  create returned -> host namespace seen: %s", strings.Join(parts, ", "))
	r.notef("  where the time goes, from both servers' histograms over the step (p50 and p99 estimated from their buckets):")
	for _, line := range stageUse {
		r.notef("    %s", line)
	}
}

// takeStages reads the histograms of createStages from both servers.
func (r *syncRun) takeStages(ctx context.Context) stageSnapshot {
	st, err := takeStages(ctx, r.s, createStages)
	if err != nil {
		r.b.Fatal(err)
	}
	return st
}

// takeAPF reads both servers' flow control metrics.
func (r *syncRun) takeAPF(ctx context.Context) apfSnapshot {
	a, err := takeAPF(ctx, r.s)
	if err != nil {
		r.b.Fatal(err)
	}
	return a
}

// noteLag notes how far the watch cache was behind etcd.
func (r *syncRun) noteLag(lags []time.Duration) {
	if len(lags) == 0 {
		return
	}
	r.notef("  tenant-apiserver watch cache of Namespaces behind etcd (%d samples): p50 %s, p99 %s, max %s",
		len(lags), percentile(lags, 50).Round(time.Millisecond), percentile(lags, 99).Round(time.Millisecond), percentile(lags, 100).Round(time.Millisecond))
}

// fill gives every tenant perTenant Namespaces (some came with the burst)
// and waits until all are synced and every Tenant is Ready again.
func (r *syncRun) fill(ctx context.Context) {
	var keys []string
	var jobs []job
	var reqs durations
	for j := 0; j < r.z.perTenant; j++ {
		for i := 0; i < r.z.tenants; i++ {
			if j < r.z.burstOf(i) {
				continue
			}
			key, create := r.createNamespace(i, fmt.Sprintf("r-%03d", j), &reqs)
			keys, jobs = append(keys, key), append(jobs, create)
		}
	}
	if len(jobs) == 0 { // the burst gave every tenant its Namespaces
		r.waitAllSynced(ctx)
		return
	}
	ovn := r.watchOVN(ctx)
	cpu := takeCPU(r.s)
	start := time.Now()
	if err := runJobs(ctx, r.z.workers, jobs); err != nil {
		r.b.Fatal(err)
	}
	created := time.Since(start)
	if err := r.seen.waitSeen(ctx, keys, r.z.timeout()); err != nil {
		r.b.Fatal(err)
	}
	onHost := r.seen.lastSeen(keys).Sub(start)
	cpuUse := cpu.since(r.s)
	r.waitAllSynced(ctx)
	r.notef("fill: %d more Namespaces created in %s (%.0f/s), on the host after %s (%.0f/s), all HostSynced and Tenants Ready after %s",
		len(keys), created.Round(time.Millisecond), float64(len(keys))/created.Seconds(),
		onHost.Round(time.Millisecond), float64(len(keys))/onHost.Seconds(), time.Since(start).Round(time.Millisecond))
	r.notef("  %s", cpuUse)
	r.checkOVN(ctx, "step 3", ovn)
}

// waitAllSynced waits until every tenant Namespace says HostSynced and
// every Tenant is Ready with all its Namespaces counted.
func (r *syncRun) waitAllSynced(ctx context.Context) {
	r.waitFor(ctx, "synced", time.Second, r.notSynced)
}

// waitFor checks every period until problem names nothing (""); if it
// still names one after as long as a step may take, the benchmark fails
// saying it is not what yet, and naming that problem.
func (r *syncRun) waitFor(ctx context.Context, what string, period time.Duration, problem func(context.Context) string) {
	deadline := time.Now().Add(r.z.timeout())
	for {
		p := problem(ctx)
		if p == "" {
			return
		}
		if time.Now().After(deadline) {
			r.b.Fatalf("not %s after %s: %s", what, r.z.timeout(), p)
		}
		time.Sleep(period)
	}
}

// notSynced names one thing not synced yet, or returns "".
func (r *syncRun) notSynced(ctx context.Context) string {
	want := int32(1 + r.z.perTenant)
	tenants, err := r.admin.TenantV1alpha1().Tenants().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	for _, t := range tenants.Items {
		if t.Status.Phase != tenantv1alpha1.TenantPhaseReady || t.Status.Usage.Namespaces != want {
			return fmt.Sprintf("tenant %s: phase %s, %d Namespaces", t.Name, t.Status.Phase, t.Status.Usage.Namespaces)
		}
	}
	for i, c := range r.members {
		l, err := c.TenantV1alpha1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		for _, ns := range l.Items {
			if !meta.IsStatusConditionTrue(ns.Status.Conditions, "HostSynced") {
				return fmt.Sprintf("Namespace %s of %s not HostSynced", ns.Name, syncTenantName(i))
			}
		}
	}
	return ""
}

// countHostNamespaces counts the host namespaces the syncer made.
func (r *syncRun) countHostNamespaces(ctx context.Context) int {
	l, err := r.host.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: hostnames.TenantLabel})
	if err != nil {
		r.b.Fatal(err)
	}
	return len(l.Items)
}

// restart is step 3: a graceful restart of tenant-apiserver (which
// releases the syncer Lease), then the new term's initial sync. With
// BENCH_SYNC_RESTART_BINARIES (a comma-separated list of tenant-apiserver
// executables) each restart runs them in turn, the stack's own build last,
// on the same stored data; BENCH_SYNC_RESTARTS repeats the round.
func (r *syncRun) restart(ctx context.Context) {
	binaries := []string{""} // "" is the stack's own build
	if v := os.Getenv("BENCH_SYNC_RESTART_BINARIES"); v != "" {
		binaries = append(strings.Split(v, ","), "")
	}
	rounds := 1
	if v := os.Getenv("BENCH_SYNC_RESTARTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			r.b.Fatalf("BENCH_SYNC_RESTARTS=%q: want a positive integer", v)
		}
		rounds = n
	}
	own := r.s.TenantAPIServerBinary()
	results := map[string][]float64{}
	for round := 0; round < rounds; round++ {
		for _, bin := range binaries {
			path := bin
			if path == "" {
				path = own
			}
			if err := r.s.SetTenantAPIServerBinary(path); err != nil {
				r.b.Fatal(err)
			}
			results[bin] = append(results[bin], r.restartOnce(ctx, path, round == rounds-1 && bin == ""))
		}
	}
	for _, bin := range binaries {
		v := results[bin]
		sort.Float64s(v)
		name := "restart-initial-sync-s"
		if bin != "" {
			name = "restart-initial-sync-" + filepath.Base(filepath.Dir(bin)) + "-s"
		}
		r.b.ReportMetric(v[len(v)/2], name)
		if len(binaries) > 1 || rounds > 1 {
			label := bin
			if label == "" {
				label = "the stack's build"
			}
			r.notef("  restarts of %s: initial sync %v s (median %.2f)", label, v, v[len(v)/2])
		}
	}
}

// restartOnce restarts tenant-apiserver from path and returns its syncer's
// initial sync in seconds; profile says whether to profile it.
func (r *syncRun) restartOnce(ctx context.Context, path string, profile bool) float64 {
	before := r.countHostNamespaces(ctx)
	logPath := r.s.LogPath("tenant-apiserver")
	doneBefore := len(logLines(logPath, "Initial sync done"))
	filledBefore := len(logLines(logPath, "Syncer caches filled"))
	// Let the burst settle (etcd compaction, garbage collection) first.
	time.Sleep(5 * time.Second)
	cpu := takeCPU(r.s)
	apf := r.takeHostAPF(ctx)
	if err := r.s.StopTenantAPIServer(); err != nil {
		r.b.Fatal(err)
	}
	start := time.Now()
	if profile {
		defer r.profileFromStart(ctx, "restart", start, 20*time.Second)()
	}
	if err := r.s.StartTenantAPIServer(ctx); err != nil {
		r.b.Fatal(err)
	}
	serving := time.Since(start)
	var initial float64
	deadline := time.Now().Add(r.z.timeout())
	for {
		v, err := syncerInitialSync(ctx, r.s)
		if err == nil && v > 0 {
			initial = v
			break
		}
		if time.Now().After(deadline) {
			r.b.Fatalf("no initial sync reported after %s (last: %v, %v)", r.z.timeout(), v, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	wall := time.Since(start)
	r.b.ReportMetric(wall.Seconds(), "restart-to-synced-s")
	after := r.countHostNamespaces(ctx)
	cpuUse := cpu.since(r.s)
	r.notef("step 3: restart of %s with %d tenants x %d Namespaces (+ default): initial sync %.2f s (goal <= 10 s); process start to serving %s, to initial sync reported %s; host namespaces of the syncer %d before, %d after",
		path, r.z.tenants, r.z.perTenant, initial, serving.Round(time.Millisecond), wall.Round(time.Millisecond), before, after)
	if lines := logLines(logPath, "Syncer caches filled"); len(lines) > filledBefore {
		r.notef("  log: %s", strings.TrimSpace(lines[len(lines)-1]))
	}
	if lines := logLines(logPath, "Initial sync done"); len(lines) > doneBefore {
		r.notef("  log: %s", strings.TrimSpace(lines[len(lines)-1]))
	}
	r.notef("  %s", cpuUse)
	// A restart sends the host a few dozen requests, its informers' lists.
	r.notef("  the host's %s", apf.sinceAtLeast(r.takeHostAPF(ctx), 1))
	// Each build's memory once its reconciles have settled, beside the
	// host kube-apiserver's in the same moment.
	time.Sleep(20 * time.Second)
	v := runtimeMemory(ctx, r.b, r.s, "restarted "+filepath.Base(filepath.Dir(path)))
	tenantRSS, hostRSS := rssMiB(r.s.PID("tenant-apiserver")), rssMiB(r.s.PID("kube-apiserver"))
	r.notef("  20 s after the initial sync: RSS tenant-apiserver %.0f MiB (heap allocated, live and not yet collected, %.0f; heap spans in use %.0f), kube-apiserver %.0f MiB: %.3f",
		tenantRSS, v["heap_alloc_bytes"], v["heap_inuse_bytes"], hostRSS, tenantRSS/hostRSS)
	return initial
}

// takeHostAPF reads the host kube-apiserver's flow control metrics (a
// restarted tenant-apiserver starts its own from zero).
func (r *syncRun) takeHostAPF(ctx context.Context) apfSnapshot {
	host, err := r.host.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		r.b.Fatal(err)
	}
	out := apfSnapshot{}
	out.add("kube-apiserver", string(host))
	return out
}

// lateTenants creates, when BENCH_SYNC_LATE_TENANTS is set, that many
// more Tenants at once with the store at its full size, timed to Ready.
func (r *syncRun) lateTenants(ctx context.Context) {
	if r.z.late == 0 {
		return
	}
	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	_, synced := watchTenantsReady(watchCtx, r.admin, r.seen)
	if !cache.WaitForCacheSync(ctx.Done(), synced) {
		r.b.Fatal("the watch of Tenants never synced")
	}
	var names []string
	for i := 0; i < r.z.late; i++ {
		names = append(names, fmt.Sprintf("late%03d", i))
	}
	var reqs durations
	keys, jobs := r.tenantCreates(names, nil, &reqs)
	if err := runJobs(ctx, r.z.workers, jobs); err != nil {
		r.b.Fatal(err)
	}
	if err := r.seen.waitSeen(ctx, keys, r.z.timeout()); err != nil {
		r.b.Fatal(err)
	}
	r.measure("late-tenant-ready", fmt.Sprintf("5. Tenant create -> Ready, %d at once, %d x %d Namespaces stored", r.z.late, r.z.tenants, r.z.perTenant), keys)
	r.requests("   Tenant create request", &reqs)
}

// hostCosts reports, when the run is at restart scale (BENCH_SYNC_LATE_TENANTS
// set), what the host's namespaces cost the host kube-apiserver: its RSS
// beside tenant-apiserver's and etcd's, and ten each of a full list of
// namespaces in pages of 500 (how an informer starts), a label-selected
// list of one tenant's (served from kube-apiserver's watch cache) and,
// beside it, the same tenant's Namespaces listed by its member.
func (r *syncRun) hostCosts(ctx context.Context) {
	if r.z.late == 0 {
		return
	}
	var full, selected, tenant []time.Duration
	total := 0
	for i := 0; i < 10; i++ {
		t0 := time.Now()
		n := 0
		opts := metav1.ListOptions{Limit: 500}
		for {
			l, err := r.host.CoreV1().Namespaces().List(ctx, opts)
			if err != nil {
				r.b.Fatal(err)
			}
			n += len(l.Items)
			if opts.Continue = l.Continue; opts.Continue == "" {
				break
			}
		}
		full, total = append(full, time.Since(t0)), n
		t0 = time.Now()
		if _, err := r.host.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: hostnames.TenantLabel + "=" + syncTenantName(0)}); err != nil {
			r.b.Fatal(err)
		}
		selected = append(selected, time.Since(t0))
		t0 = time.Now()
		if _, err := r.members[0].TenantV1alpha1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
			r.b.Fatal(err)
		}
		tenant = append(tenant, time.Since(t0))
	}
	r.rows = append(r.rows,
		row{fmt.Sprintf("host: list of all %d namespaces, pages of 500", total), len(full), pctl(full, 50), pctl(full, 99)},
		row{"host: label-selected list of one tenant's namespaces", len(selected), pctl(selected, 50), pctl(selected, 99)},
		row{"tenant.io: the same tenant's Namespaces, by its member", len(tenant), pctl(tenant, 50), pctl(tenant, 99)})
	rss := map[string]float64{}
	for _, p := range []string{"kube-apiserver", "tenant-apiserver", "etcd"} {
		rss[p] = rssMiB(r.s.PID(p))
		r.b.ReportMetric(rss[p], p+"-RSS-MiB")
	}
	r.b.ReportMetric(pctl(full, 50), "host-full-list-p50-ms")
	r.b.ReportMetric(rss["tenant-apiserver"]/rss["kube-apiserver"], "tenant-to-host-RSS")
	r.notef("at %d host namespaces: RSS kube-apiserver %.0f MiB, tenant-apiserver %.0f MiB (%.3f of kube-apiserver's), etcd %.0f MiB",
		total, rss["kube-apiserver"], rss["tenant-apiserver"], rss["tenant-apiserver"]/rss["kube-apiserver"], rss["etcd"])
	v := runtimeMemory(ctx, r.b, r.s, "at the end")
	r.notef("  tenant-apiserver's heap allocated (live and not yet collected) %.0f MiB, heap spans in use %.0f MiB", v["heap_alloc_bytes"], v["heap_inuse_bytes"])
	if r.profileDir != "" {
		// After the RSS above: the profile collects garbage first (gc=1).
		path := filepath.Join(r.profileDir, "heap-end-tenant-apiserver.pprof")
		if err := fetchProfile(ctx, r.s.DirectTenantConfig(stack.AdminUser, "system:masters"), r.s.TenantAPIServerURL()+"/debug/pprof/heap?gc=1", path); err != nil {
			r.b.Fatal(err)
		}
	}
}

// fairness is step 4: noisy tenants burst while quiet tenants create a few
// Namespaces each.
func (r *syncRun) fairness(ctx context.Context) {
	if r.z.noisy+r.z.quiet == 0 {
		return
	}
	var noisyKeys, quietKeys []string
	var noisyReqs, quietReqs durations
	noisyJobs := make([][]job, r.z.noisy)
	for i := 0; i < r.z.noisy; i++ {
		for j := 0; j < r.z.noisyNamespaces; j++ {
			key, create := r.createNamespace(i, fmt.Sprintf("n-%03d", j), &noisyReqs)
			noisyKeys, noisyJobs[i] = append(noisyKeys, key), append(noisyJobs[i], create)
		}
	}
	quietJobs := make([][]job, r.z.quiet)
	for q := 0; q < r.z.quiet; q++ {
		i := r.z.noisy + q
		for j := 0; j < r.z.quietNamespaces; j++ {
			key, create := r.createNamespace(i, fmt.Sprintf("q-%03d", j), &quietReqs)
			quietKeys, quietJobs[q] = append(quietKeys, key), append(quietJobs[q], create)
		}
	}

	stopProfiles := r.profile(ctx, "fairness", 20*time.Second)
	stopSampling, largest := r.sampleTenant(ctx, syncTenantName(0))
	stopLag, lags := sampleCacheLag(ctx, r.s, r.members[0])
	apf := r.takeAPF(ctx)
	stages := r.takeStages(ctx)
	ovn := r.watchOVN(ctx)
	cpu := takeCPU(r.s)
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	var noisyDone, quietDone, quietStart time.Time
	run := func(workers int, jobs []job, done *time.Time) {
		defer wg.Done()
		err := runJobs(ctx, workers, jobs)
		mu.Lock()
		defer mu.Unlock()
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if now := time.Now(); now.After(*done) {
			*done = now
		}
	}
	for _, jobs := range noisyJobs {
		wg.Add(1)
		go run(r.z.noisyWorkers, jobs, &noisyDone)
	}
	time.Sleep(r.z.quietDelay)
	quietStart = time.Now()
	for _, jobs := range quietJobs {
		wg.Add(1)
		go run(1, jobs, &quietDone)
	}
	wg.Wait()
	if firstErr != nil {
		r.b.Fatal(firstErr)
	}
	if err := r.seen.waitSeen(ctx, append(append([]string(nil), noisyKeys...), quietKeys...), r.z.timeout()); err != nil {
		r.b.Fatal(err)
	}
	cpuUse := cpu.since(r.s)
	apfUse := apf.since(r.takeAPF(ctx))
	stageUse := stages.since(r.takeStages(ctx), createStages)
	stopLag()
	stopSampling()
	stopProfiles()
	if len(quietKeys) > 0 {
		r.measure("quiet", fmt.Sprintf("4. quiet tenants' Namespace -> host (%d x %d)", r.z.quiet, r.z.quietNamespaces), quietKeys)
		r.requests("   quiet tenant Namespace create request", &quietReqs)
	}
	if len(noisyKeys) > 0 {
		r.measure("noisy", fmt.Sprintf("4. noisy tenants' Namespace -> host (%d x %d)", r.z.noisy, r.z.noisyNamespaces), noisyKeys)
		r.requests("   noisy tenant Namespace create request", &noisyReqs)
	}
	// How much of the noisy burst was still ahead of the syncer when the
	// last quiet Namespace reached the host: the quiet ones went past it.
	quietLast := r.seen.lastSeen(quietKeys)
	behind := 0
	for _, k := range noisyKeys {
		if r.seen.lastSeen([]string{k}).After(quietLast) {
			behind++
		}
	}
	r.notef("step 4: quiet creates from %s to %s, last quiet host namespace at %s with %d of %d noisy ones not on the host yet; noisy creates done at %s, last noisy host namespace at %s",
		quietStart.Sub(start).Round(time.Millisecond), quietDone.Sub(start).Round(time.Millisecond), quietLast.Sub(start).Round(time.Millisecond),
		behind, len(noisyKeys), noisyDone.Sub(start).Round(time.Millisecond), r.seen.lastSeen(noisyKeys).Sub(start).Round(time.Millisecond))
	r.notef("  %s", cpuUse)
	r.checkOVN(ctx, "step 4", ovn)
	r.notef("  %s", apfUse)
	if r.z.noisy > 0 {
		r.notef("  noisy tenant %s during the burst: largest Tenant %.1f KiB, largest Ready message %d bytes", syncTenantName(0), float64(largest().size)/1024, largest().message)
	}
	r.noteLag(lags())
	r.noteStages("quiet", quietKeys, "noisy", noisyKeys, stageUse)
}

// tenantSize is how large a Tenant was.
type tenantSize struct{ size, message int }

// sampleTenant reads Tenant name every second until stopped, and keeps the
// largest JSON size and Ready condition message seen.
func (r *syncRun) sampleTenant(ctx context.Context, name string) (stop func(), largest func() tenantSize) {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var top tenantSize
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if t, err := r.admin.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{}); err == nil {
				data, _ := json.Marshal(t)
				msg := 0
				if c := meta.FindStatusCondition(t.Status.Conditions, "Ready"); c != nil {
					msg = len(c.Message)
				}
				mu.Lock()
				top.size, top.message = max(top.size, len(data)), max(top.message, msg)
				mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	return func() { cancel(); <-done }, func() tenantSize { mu.Lock(); defer mu.Unlock(); return top }
}

// profile collects, when BENCH_SYNC_PROFILE_DIR is set, CPU profiles of
// tenant-apiserver and kube-apiserver over the first d of a step, in the
// background; the returned func waits for them.
func (r *syncRun) profile(ctx context.Context, step string, d time.Duration) func() {
	return profileCPUInto(ctx, r.b, r.s, r.profileDir, step, d)
}

// profileFromStart is profileStarting into BENCH_SYNC_PROFILE_DIR.
func (r *syncRun) profileFromStart(ctx context.Context, step string, start time.Time, d time.Duration) func() {
	return profileStarting(ctx, r.b, r.s, r.profileDir, step, start, d)
}

// profileStarting profiles, when dir is set, a tenant-apiserver
// that is starting: from the moment it accepts connections (before it is
// ready: its lists and the syncer's initial sync are what a restart
// profile is for), over d from then (start is when it was started), beside kube-apiserver over the same time. With
// BENCH_SYNC_TRACE set it also takes an execution trace of tenant-apiserver
// (dir/<step>-tenant-apiserver.trace), whose goroutine timeline shows what
// waits for what. The returned func waits for them.
func profileStarting(ctx context.Context, b *testing.B, s *stack.Stack, dir, step string, start time.Time, d time.Duration) func() {
	if dir == "" {
		return func() {}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	cfg := s.DirectTenantConfig(stack.AdminUser, "system:masters")
	type fetch struct{ url, path string }
	fetches := []fetch{{fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", s.TenantAPIServerURL(), int(d.Seconds())),
		filepath.Join(dir, step+"-tenant-apiserver.pprof")}}
	if os.Getenv("BENCH_SYNC_TRACE") != "" {
		fetches = append(fetches, fetch{fmt.Sprintf("%s/debug/pprof/trace?seconds=%d", s.TenantAPIServerURL(), int(d.Seconds())),
			filepath.Join(dir, step+"-tenant-apiserver.trace")})
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The first answer marks the start; until then, connections are refused.
		probe, err := rest.HTTPClientFor(cfg)
		if err != nil {
			b.Logf("profile of the starting tenant-apiserver: %v", err)
			return
		}
		deadline := time.Now().Add(time.Minute)
		for {
			resp, err := probe.Get(s.TenantAPIServerURL() + "/livez")
			if err == nil {
				_ = resp.Body.Close()
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				b.Logf("profile of the starting tenant-apiserver: %v", err)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		b.Logf("profiling the starting tenant-apiserver from %s after its start", time.Since(start).Round(time.Millisecond))
		var inner sync.WaitGroup
		for _, f := range fetches {
			inner.Add(1)
			go func() {
				defer inner.Done()
				// Refused (403) until the server has its client CA: ask again.
				for try := 0; ; try++ {
					err := fetchProfile(ctx, cfg, f.url, f.path)
					if err == nil {
						return
					}
					if try == 50 || ctx.Err() != nil {
						b.Logf("profile %s: %v", f.path, err)
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			}()
		}
		host := filepath.Join(dir, step+"-kube-apiserver.pprof")
		if err := fetchProfile(ctx, s.RESTConfig(stack.AdminUser), fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", s.KubeAPIServerURL(), int(d.Seconds())), host); err != nil {
			b.Logf("profile %s: %v", host, err)
		}
		inner.Wait()
	}()
	return wg.Wait
}

// profileCPU is profileCPUInto BENCH_PROFILE_DIR.
func profileCPU(ctx context.Context, b *testing.B, s *stack.Stack, step string, d time.Duration) func() {
	return profileCPUInto(ctx, b, s, os.Getenv("BENCH_PROFILE_DIR"), step, d)
}

// profileCPUInto collects, when dir is set, CPU profiles of tenant-apiserver
// and kube-apiserver (started with --profiling) over d, in the background,
// into dir/<step>-<process>.pprof; the returned func waits for them.
func profileCPUInto(ctx context.Context, b *testing.B, s *stack.Stack, dir, step string, d time.Duration) func() {
	if dir == "" {
		return func() {}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, p := range debugServers(s) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := filepath.Join(dir, fmt.Sprintf("%s-%s.pprof", step, p.name))
			if err := fetchProfile(ctx, p.cfg, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", p.url, int(d.Seconds())), path); err != nil {
				b.Logf("profile %s: %v", path, err)
			}
		}()
	}
	return wg.Wait
}

// debugServer is one of the stack's API servers, as its debug endpoints
// (profiles, a collection) are reached.
type debugServer struct {
	name string
	url  string
	cfg  *rest.Config
}

// debugServers are the stack's tenant-apiserver and kube-apiserver.
func debugServers(s *stack.Stack) []debugServer {
	return []debugServer{
		{"tenant-apiserver", s.TenantAPIServerURL(), s.DirectTenantConfig(stack.AdminUser, "system:masters")},
		{"kube-apiserver", s.KubeAPIServerURL(), s.RESTConfig(stack.AdminUser)},
	}
}

func fetchProfile(ctx context.Context, cfg *rest.Config, url, path string) error {
	data, err := fetchDebug(ctx, cfg, url)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// fetchDebug reads a debug endpoint (a profile, a goroutine dump).
func fetchDebug(ctx context.Context, cfg *rest.Config, url string) ([]byte, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 2 * time.Minute
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s", resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// report prints the summary table.
func (r *syncRun) report() {
	r.reportAs(fmt.Sprintf("BenchmarkSync: create start -> first seen in a watch (%d tenants, %d workers per side)", r.z.tenants, r.z.workers))
}

// reportAs prints the rows under title, then the summary.
func (r *syncRun) reportAs(title string) {
	printTable(os.Stdout, title, r.rows)
	for _, line := range r.summary {
		fmt.Fprintf(os.Stdout, "  %s\n", line)
	}
	fmt.Fprintln(os.Stdout)
}
