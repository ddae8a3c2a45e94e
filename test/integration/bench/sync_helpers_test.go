package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// syncSizes are the sizes of BenchmarkSync. The defaults are the figures
// in docs/perf/sync.md; BENCH_SYNC_* environment variables override them for a
// quicker run (e.g. BENCH_SYNC_TENANTS=20 BENCH_SYNC_BURST=400 ...).
type syncSizes struct {
	tenants         int // BENCH_SYNC_TENANTS: Tenants created at once
	workers         int // BENCH_SYNC_WORKERS: concurrent creates of each side
	burst           int // BENCH_SYNC_BURST: tenant Namespaces of the burst, and as many host namespaces
	perTenant       int // BENCH_SYNC_PER_TENANT: Namespaces of each tenant at the restart
	noisy           int // BENCH_SYNC_NOISY: noisy tenants
	noisyNamespaces int // BENCH_SYNC_NOISY_NAMESPACES: Namespaces each noisy tenant creates
	noisyWorkers    int // BENCH_SYNC_NOISY_WORKERS: concurrent creates of each noisy tenant
	quiet           int // BENCH_SYNC_QUIET: quiet tenants
	quietNamespaces int // BENCH_SYNC_QUIET_NAMESPACES: Namespaces each quiet tenant creates
	quietDelay      time.Duration
	publicIPs       int // BENCH_SYNC_PUBLIC_IPS: public IPs of each tenant (its MetalLB pool)
	late            int // BENCH_SYNC_LATE_TENANTS: Tenants created at once after the restart, at full size
}

func syncSizesFromEnv() (syncSizes, error) {
	z := syncSizes{
		tenants: 100, workers: 20, burst: 2000, perTenant: 100,
		noisy: 10, noisyNamespaces: 900, noisyWorkers: 4,
		quiet: 40, quietNamespaces: 10, quietDelay: 2 * time.Second,
		publicIPs: 1,
	}
	if err := intsFromEnv(
		intSetting{"BENCH_SYNC_TENANTS", &z.tenants, 0},
		intSetting{"BENCH_SYNC_WORKERS", &z.workers, 0},
		intSetting{"BENCH_SYNC_BURST", &z.burst, 0},
		intSetting{"BENCH_SYNC_PER_TENANT", &z.perTenant, 0},
		intSetting{"BENCH_SYNC_NOISY", &z.noisy, 0},
		intSetting{"BENCH_SYNC_NOISY_NAMESPACES", &z.noisyNamespaces, 0},
		intSetting{"BENCH_SYNC_NOISY_WORKERS", &z.noisyWorkers, 0},
		intSetting{"BENCH_SYNC_QUIET", &z.quiet, 0},
		intSetting{"BENCH_SYNC_QUIET_NAMESPACES", &z.quietNamespaces, 0},
		intSetting{"BENCH_SYNC_PUBLIC_IPS", &z.publicIPs, 0},
		intSetting{"BENCH_SYNC_LATE_TENANTS", &z.late, 0},
	); err != nil {
		return z, err
	}
	if s := os.Getenv("BENCH_SYNC_QUIET_DELAY"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return z, fmt.Errorf("BENCH_SYNC_QUIET_DELAY: %w", err)
		}
		z.quietDelay = d
	}
	switch {
	case z.tenants < 1 || z.workers < 1 || z.noisyWorkers < 1:
		return z, fmt.Errorf("BENCH_SYNC_TENANTS, _WORKERS and _NOISY_WORKERS must be at least 1")
	case z.noisy+z.quiet > z.tenants:
		return z, fmt.Errorf("%d noisy + %d quiet tenants are more than the %d tenants", z.noisy, z.quiet, z.tenants)
	case z.quota() > 10000:
		return z, fmt.Errorf("the sizes need a namespace quota of %d, above the largest quota (10000)", z.quota())
	}
	return z, nil
}

// timeout bounds each wait for the syncer: 10 minutes, and a second more
// for every 100 Namespaces of the restart.
func (z syncSizes) timeout() time.Duration {
	return 10*time.Minute + time.Duration(z.tenants*z.perTenant/100)*time.Second
}

// burstOf is how many burst Namespaces tenant i creates: the burst spread
// evenly, the first tenants taking the remainder.
func (z syncSizes) burstOf(i int) int {
	n := z.burst / z.tenants
	if i < z.burst%z.tenants {
		n++
	}
	return n
}

// quota is the namespace quota every tenant gets: its default Namespace,
// those of the burst or of the restart, those of the fairness step.
func (z syncSizes) quota() int {
	return 1 + max(z.perTenant, z.burstOf(0)) + max(z.noisyNamespaces, z.quietNamespaces) + 10
}

// syncTenantName names bench tenant i: a short DNS label, so that host
// namespace names stay far from 63 characters.
func syncTenantName(i int) string { return fmt.Sprintf("t%03d", i) }

// syncTenantUser is the stack user acting as tenant i, by group membership.
func syncTenantUser(i int) stack.User {
	return stack.User{Name: "member-" + syncTenantName(i), Groups: []string{"tenant.io:" + syncTenantName(i)}}
}

// directPrefix starts the names of the host namespaces the benchmark
// creates directly, the reference the syncer is compared with.
const directPrefix = "direct-"

// firstSeen records when keys were first seen, and when their creation
// started.
type firstSeen struct {
	mu       sync.Mutex
	started  map[string]time.Time
	returned map[string]time.Time // when the create request returned
	seen     map[string]time.Time
}

func newFirstSeen() *firstSeen {
	return &firstSeen{started: map[string]time.Time{}, returned: map[string]time.Time{}, seen: map[string]time.Time{}}
}

func (f *firstSeen) start(key string) {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started[key] = now
}

// done records that the create request of key returned.
func (f *firstSeen) done(key string) {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.returned[key] = now
}

// alias makes key's start also alias's: a later milestone of the same create.
func (f *firstSeen) alias(key, alias string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, ok := f.started[key]; ok {
		f.started[alias] = t
	}
}

func (f *firstSeen) saw(key string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.seen[key]; !ok {
		f.seen[key] = at
	}
}

// missing returns how many of keys were not seen yet, and one of them.
func (f *firstSeen) missing(keys []string) (int, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, example := 0, ""
	for _, k := range keys {
		if _, ok := f.seen[k]; !ok {
			n++
			example = k
		}
	}
	return n, example
}

// latencies returns, for keys, the time from the start of their creation
// to their first sighting; all must have been seen.
func (f *firstSeen) latencies(keys []string) ([]time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]time.Duration, 0, len(keys))
	for _, k := range keys {
		start, ok := f.started[k]
		if !ok {
			return nil, fmt.Errorf("%s: creation never started", k)
		}
		seen, ok := f.seen[k]
		if !ok {
			return nil, fmt.Errorf("%s: never seen", k)
		}
		out = append(out, seen.Sub(start))
	}
	return out, nil
}

// lastSeen is the latest first sighting among keys.
func (f *firstSeen) lastSeen(keys []string) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	var last time.Time
	for _, k := range keys {
		if t := f.seen[k]; t.After(last) {
			last = t
		}
	}
	return last
}

// waitSeen waits until every key was seen. The error says how many were
// not, and names one.
func (f *firstSeen) waitSeen(ctx context.Context, keys []string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		n, example := f.missing(keys)
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d not seen after %s, e.g. %s", n, len(keys), timeout, example)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// syncedKey keys the host namespace the syncer makes for tenant
// Namespace ns of tenant t.
func syncedKey(t, ns string) string { return "synced/" + t + "/" + ns }

// directKey keys a host namespace created directly.
func directKey(name string) string { return "direct/" + name }

// tenantReadyKey keys a Tenant reaching phase Ready.
func tenantReadyKey(t string) string { return "ready/" + t }

// watchHostNamespaces records in f when each host namespace made by the
// syncer (by its tenant.io/tenant and tenant.io/namespace labels) or
// created directly (by its name) is first seen in a watch of every host
// namespace. One watch for both, so that both pay the same delivery cost.
func watchHostNamespaces(ctx context.Context, host kubernetes.Interface, f *firstSeen) cache.InformerSynced {
	record := func(obj interface{}) {
		now := time.Now()
		ns, ok := obj.(*corev1.Namespace)
		if !ok {
			return
		}
		l := ns.Labels
		switch {
		case l[hostnames.TenantLabel] != "" && l[hostnames.NamespaceLabel] != "":
			f.saw(syncedKey(l[hostnames.TenantLabel], l[hostnames.NamespaceLabel]), now)
		case strings.HasPrefix(ns.Name, directPrefix):
			f.saw(directKey(ns.Name), now)
		}
	}
	_, synced := recordWatch(ctx, &corev1.Namespace{}, host.CoreV1().Namespaces().List, host.CoreV1().Namespaces().Watch, record)
	return synced
}

// watchTenantsReady records in f when each Tenant is first seen in phase
// Ready, through a watch of the provider admin.
func watchTenantsReady(ctx context.Context, admin clientset.Interface, f *firstSeen) (cache.Store, cache.InformerSynced) {
	record := func(obj interface{}) {
		now := time.Now()
		if t, ok := obj.(*tenantv1alpha1.Tenant); ok && t.Status.Phase == tenantv1alpha1.TenantPhaseReady {
			f.saw(tenantReadyKey(t.Name), now)
		}
	}
	return recordWatch(ctx, &tenantv1alpha1.Tenant{}, admin.TenantV1alpha1().Tenants().List, admin.TenantV1alpha1().Tenants().Watch, record)
}

// recordWatch runs, until ctx ends, an informer of the objects (of obj's
// type) that list and watchFn list and watch, calling record with every
// object added or updated.
func recordWatch[L runtime.Object](ctx context.Context, obj runtime.Object,
	list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error),
	record func(obj interface{}),
) (cache.Store, cache.InformerSynced) {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			l, err := list(ctx, o)
			if err != nil {
				return nil, err
			}
			return l, nil
		},
		WatchFuncWithContext: watchFn,
	}
	store, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    obj,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    record,
			UpdateFunc: func(_, obj interface{}) { record(obj) },
		},
	})
	go informer.RunWithContext(ctx)
	return store, informer.HasSynced
}

// job is one create of the benchmark.
type job func(ctx context.Context) error

// runJobs runs jobs, in order, on workers goroutines. It stops handing out
// jobs at the first error and returns it.
func runJobs(ctx context.Context, workers int, jobs []job) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan job)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				if err := j(ctx); err != nil {
					cancel(err)
				}
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case next <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// timedCreate returns a job that records the start of key in f, then
// create, and the request's own duration in requests.
func timedCreate(f *firstSeen, key string, requests *durations, create func(context.Context) error) job {
	return func(ctx context.Context) error {
		f.start(key)
		t0 := time.Now()
		if err := create(ctx); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		requests.add(time.Since(t0))
		f.done(key)
		return nil
	}
}

// durations collects durations from several goroutines.
type durations struct {
	mu sync.Mutex
	d  []time.Duration
}

func (d *durations) add(v time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.d = append(d.d, v)
}

func (d *durations) all() []time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Duration(nil), d.d...)
}

// tenantNamespace is a tenant Namespace named name.
func tenantNamespace(name string) *tenantv1alpha1.Namespace {
	return &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// syncerInitialSync reads tenant_syncer_initial_sync_duration_seconds from
// the tenant-apiserver's own /metrics (the aggregator does not proxy it):
// 0 until the syncer's current term has reconciled everything once.
func syncerInitialSync(ctx context.Context, s *stack.Stack) (float64, error) {
	v, _, err := metricValue(ctx, s, "tenant_syncer_initial_sync_duration_seconds")
	return v, err
}

// metricValue reads an unlabelled metric from tenant-apiserver's own
// /metrics; found is false when the process has not set it.
func metricValue(ctx context.Context, s *stack.Stack, name string) (v float64, found bool, err error) {
	metrics, err := s.TenantMetrics(ctx)
	if err != nil {
		return 0, false, err
	}
	for _, line := range strings.Split(metrics, "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil, err
		}
	}
	return 0, false, nil
}

// logLines returns the lines of a log file containing substr.
func logLines(path, substr string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return out
}

// pctl is a percentile of d in milliseconds.
func pctl(d []time.Duration, p int) float64 {
	return float64(percentile(d, p)) / float64(time.Millisecond)
}

// row is one line of a summary table.
type row struct {
	what     string
	n        int
	p50, p99 float64 // milliseconds
}

func printTable(w io.Writer, title string, rows []row) {
	fmt.Fprintf(w, "\n%s\n", title)
	fmt.Fprintf(w, "  %-58s %7s %10s %10s\n", "measurement", "n", "p50 ms", "p99 ms")
	for _, r := range rows {
		fmt.Fprintf(w, "  %-58s %7d %10.1f %10.1f\n", r.what, r.n, r.p50, r.p99)
	}
}

// stackProcesses are the processes whose CPU time BenchmarkSync reports.
var stackProcesses = []string{"tenant-apiserver", "kube-apiserver", "etcd", "metallb-controller", "kube-controller-manager", "ovnkube-cluster-manager"}

// cpuSeconds reads the user and system CPU time of process pid (0: this
// test binary), in seconds.
func cpuSeconds(pid int) float64 {
	path := "/proc/self/stat"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/stat", pid)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: fields count from after it.
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // USER_HZ is 100 on Linux
}

// cpuSnapshot is the CPU time of the stack's processes and of the test
// binary ("bench clients") at one moment.
type cpuSnapshot struct {
	at  time.Time
	pid map[string]int
	cpu map[string]float64
}

func takeCPU(s *stack.Stack) cpuSnapshot {
	c := cpuSnapshot{at: time.Now(), pid: map[string]int{}, cpu: map[string]float64{"bench clients": cpuSeconds(0)}}
	for _, name := range stackProcesses {
		if pid := s.PID(name); pid != 0 {
			c.pid[name], c.cpu[name] = pid, cpuSeconds(pid)
		}
	}
	return c
}

// since describes the CPU each process used from c to now, as cores busy
// on average.
func (c cpuSnapshot) since(s *stack.Stack) string {
	now := takeCPU(s)
	wall := now.at.Sub(c.at).Seconds()
	var parts []string
	total := 0.0
	for _, name := range append(append([]string(nil), stackProcesses...), "bench clients") {
		d := now.cpu[name]
		if now.pid[name] == c.pid[name] { // not restarted in between
			d -= c.cpu[name]
		}
		total += d
		parts = append(parts, fmt.Sprintf("%s %.2f", name, d/wall))
	}
	return fmt.Sprintf("CPU over %.0f s, in cores busy: %s; total %.2f of %d", wall, strings.Join(parts, ", "), total/wall, goruntime.NumCPU())
}

// dump writes, for every key, when its creation started and when it was
// first seen, in milliseconds since t0 (-1: never), as CSV.
func (f *firstSeen) dump(path string, t0 time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	fmt.Fprintln(w, "key,start_ms,seen_ms")
	ms := func(t time.Time, ok bool) float64 {
		if !ok {
			return -1
		}
		return float64(t.Sub(t0)) / float64(time.Millisecond)
	}
	for k, start := range f.started {
		seen, ok := f.seen[k]
		fmt.Fprintf(w, "%s,%.1f,%.1f\n", k, ms(start, true), ms(seen, ok))
	}
	if err := w.Flush(); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// etcdRevision reads the current revision of the stack's etcd through its
// HTTP gateway.
func etcdRevision(ctx context.Context, s *stack.Stack) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.EtcdURL()+"/v3/kv/range", strings.NewReader(`{"key":"AA==","limit":1}`))
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	var out struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, err
	}
	return strconv.ParseInt(out.Header.Revision, 10, 64)
}

// cacheLag samples how far the tenant-apiserver's watch cache of tenant
// Namespaces, which also feeds the syncer's informer, is behind etcd: a
// LIST with resourceVersion=0 is served from the cache and carries the
// cache's revision; the lag is how long ago etcd was at that revision.
type cacheLag struct {
	mu   sync.Mutex
	lags []time.Duration
}

func sampleCacheLag(ctx context.Context, s *stack.Stack, member clientset.Interface) (stop func(), result func() []time.Duration) {
	ctx, cancel := context.WithCancel(ctx)
	l := &cacheLag{}
	type point struct {
		at  time.Time
		rev int64
	}
	var history []point
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if rev, err := etcdRevision(ctx, s); err == nil {
				history = append(history, point{time.Now(), rev})
			}
			list, err := member.TenantV1alpha1().Namespaces().List(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 1})
			if err == nil {
				if cached, err := strconv.ParseInt(list.ResourceVersion, 10, 64); err == nil {
					// The first sample at or past the cache's revision
					// (the revision of the newest Namespace event it has:
					// an estimate, exact while Namespaces are written).
					lag := time.Duration(0)
					for _, p := range history {
						if p.rev >= cached {
							lag = time.Since(p.at)
							break
						}
					}
					l.mu.Lock()
					l.lags = append(l.lags, lag)
					l.mu.Unlock()
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	return func() { cancel(); <-done }, func() []time.Duration {
		l.mu.Lock()
		defer l.mu.Unlock()
		return append([]time.Duration(nil), l.lags...)
	}
}

// benchStack starts the stack of a benchmark: users for its tenants bench
// tenants, the tenant-apiserver flags in environment variable argsEnv (if
// any), whatever tweak adds, and the demo AddressPools. The returned stop
// ends it, keeping its logs when the benchmark failed.
func benchStack(ctx context.Context, b *testing.B, argsEnv string, tenants int, tweak func(*stack.Options)) (*stack.Stack, func()) {
	b.Helper()
	opts := stack.Options{KeepWorkDir: os.Getenv(framework.KeepEnv) != "", Log: io.Discard}
	if argsEnv != "" {
		opts.TenantAPIServerArgs = strings.Fields(os.Getenv(argsEnv))
	}
	if testing.Verbose() {
		opts.Log = os.Stderr
	}
	for i := 0; i < tenants; i++ {
		opts.ExtraUsers = append(opts.ExtraUsers, syncTenantUser(i))
	}
	if tweak != nil {
		tweak(&opts)
	}
	s, err := stack.Start(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	stop := func() {
		if b.Failed() {
			s.KeepWorkDir()
			b.Logf("the stack's logs are kept in %s", filepath.Join(s.WorkDir(), "logs"))
		}
		if err := s.Stop(); err != nil {
			b.Error(err)
		}
	}
	if err := stack.DemoPools(ctx, s); err != nil {
		stop()
		b.Fatal(err)
	}
	return s, stop
}

// apfSnapshot is what API Priority and Fairness of the host kube-apiserver
// and of tenant-apiserver had done by a moment, by priority level.
type apfSnapshot map[string]apfLevel // "<server> <level>"

type apfLevel struct {
	dispatched, rejected, waitSum, waitCount float64
	seats                                    float64
}

// takeAPF reads the flow control metrics of both servers.
func takeAPF(ctx context.Context, s *stack.Stack) (apfSnapshot, error) {
	host, tenantServer, err := serverMetrics(ctx, s)
	if err != nil {
		return nil, err
	}
	out := apfSnapshot{}
	out.add("kube-apiserver", host)
	out.add("tenant-apiserver", tenantServer)
	return out, nil
}

func (a apfSnapshot) add(server, metrics string) {
	for _, line := range strings.Split(metrics, "\n") {
		name, _, ok := strings.Cut(line, "{")
		if !ok || !strings.HasPrefix(name, "apiserver_flowcontrol_") {
			continue
		}
		level := label(line, "priority_level")
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if level == "" || err != nil {
			continue
		}
		key := server + " " + level
		l := a[key]
		switch name {
		case "apiserver_flowcontrol_dispatched_requests_total":
			l.dispatched += v
		case "apiserver_flowcontrol_rejected_requests_total":
			l.rejected += v
		case "apiserver_flowcontrol_request_wait_duration_seconds_sum":
			if label(line, "execute") == "true" {
				l.waitSum += v
			}
		case "apiserver_flowcontrol_request_wait_duration_seconds_count":
			if label(line, "execute") == "true" {
				l.waitCount += v
			}
		case "apiserver_flowcontrol_nominal_limit_seats":
			l.seats = v
		default:
			continue
		}
		a[key] = l
	}
}

// since describes, per server and priority level that dispatched at least
// 100 requests from a to now, how many it dispatched and rejected (429) and
// how long they waited on average.
func (a apfSnapshot) since(now apfSnapshot) string { return a.sinceAtLeast(now, 100) }

// sinceAtLeast is since for the levels that dispatched at least least
// requests.
func (a apfSnapshot) sinceAtLeast(now apfSnapshot, least float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(now)) {
		n, b := now[k], a[k]
		dispatched := n.dispatched - b.dispatched
		if dispatched < least {
			continue
		}
		wait := 0.0
		if c := n.waitCount - b.waitCount; c > 0 {
			wait = (n.waitSum - b.waitSum) / c
		}
		parts = append(parts, fmt.Sprintf("%s: %.0f dispatched (%.0f seats), mean wait %.1f ms, %.0f rejected",
			k, dispatched, n.seats, wait*1000, n.rejected-b.rejected))
	}
	return "API Priority and Fairness, by server and level: " + strings.Join(parts, "; ")
}

// nadResource is the NetworkAttachmentDefinitions OVN-Kubernetes'
// cluster-manager renders from a ClusterUserDefinedNetwork into each
// namespace it selects, labelled udnLabel.
var nadResource = schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}

const udnLabel = "k8s.ovn.org/user-defined-network"

// ovnSnapshot is how far OVN-Kubernetes' cluster-manager had got with the
// tenants' host namespaces: each is selected by its tenant's default
// network, and gets a NetworkAttachmentDefinition of it. A step's figures
// compare with another run's only if the host did the same work in both:
// a cluster-manager gone idle (it did once, unnoticed) leaves the host
// lighter.
type ovnSnapshot struct {
	at         time.Time
	namespaces int // tenants' host namespaces
	rendered   int // of them with a NetworkAttachmentDefinition
}

// ovnWatch follows cluster-manager over a step: its progress from start,
// and the longest time it used no CPU (sampled every second from a second
// into the step, when the step's first namespaces wait for it).
type ovnWatch struct {
	start    ovnSnapshot
	restarts int                  // the stack's restarts of cluster-manager before the step
	stop     func() time.Duration // ends the sampling; the longest idle time
}

// idleCPU is less CPU than cluster-manager uses in a second with work to
// do; idleLimit is how long it may use that little while namespaces wait.
const (
	idleCPU   = 0.005
	idleLimit = 10 * time.Second
)

// watchOVN starts following cluster-manager, when the stack runs it.
func (r *syncRun) watchOVN(ctx context.Context) *ovnWatch {
	if !r.ovn {
		return nil
	}
	w := &ovnWatch{start: r.countOVN(ctx), restarts: r.s.Restarts("ovnkube-cluster-manager")}
	pid := r.s.PID("ovnkube-cluster-manager")
	done := make(chan struct{})
	result := make(chan time.Duration, 1)
	go func() {
		var longest, idle time.Duration
		last := cpuSeconds(pid)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for first := true; ; first = false {
			select {
			case <-done:
				result <- max(longest, idle)
				return
			case <-tick.C:
			}
			now := cpuSeconds(pid)
			if now-last < idleCPU && !first {
				idle += time.Second
			} else {
				longest, idle = max(longest, idle), 0
			}
			last = now
		}
	}()
	w.stop = func() time.Duration {
		close(done)
		return <-result
	}
	return w
}

// countOVN counts the tenants' host namespaces and those that have their
// NetworkAttachmentDefinition.
func (r *syncRun) countOVN(ctx context.Context) ovnSnapshot {
	c := ovnSnapshot{at: time.Now()}
	nads, err := r.meta.Resource(nadResource).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: udnLabel})
	if err != nil {
		r.b.Fatalf("listing NetworkAttachmentDefinitions: %v", err)
	}
	withNAD := make(map[string]bool, len(nads.Items))
	for _, n := range nads.Items {
		withNAD[n.Namespace] = true
	}
	nss, err := r.meta.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).List(ctx, metav1.ListOptions{LabelSelector: hostnames.TenantLabel})
	if err != nil {
		r.b.Fatalf("listing host namespaces: %v", err)
	}
	c.namespaces = len(nss.Items)
	for _, ns := range nss.Items {
		if withNAD[ns.Name] {
			c.rendered++
		}
	}
	return c
}

// checkOVN notes what cluster-manager rendered during the step, and fails
// the benchmark if it exited (even if the stack restarted it), or stopped
// working while namespaces waited for it (rendered nothing, or used no CPU
// for idleLimit): the step ran on a lighter host than the figures assume.
func (r *syncRun) checkOVN(ctx context.Context, step string, w *ovnWatch) {
	if w == nil {
		return
	}
	idle := w.stop()
	c, now := w.start, r.countOVN(ctx)
	wall := now.at.Sub(c.at).Seconds()
	waiting := now.namespaces - now.rendered
	r.notef("  OVN-Kubernetes' cluster-manager: %d NetworkAttachmentDefinitions rendered over %.0f s (%.1f/s); %d of %d tenant host namespaces without one at the step's end (%d at its start); longest without CPU %s",
		now.rendered-c.rendered, wall, float64(now.rendered-c.rendered)/wall, waiting, now.namespaces, c.namespaces-c.rendered, idle)
	restarts := r.s.Restarts("ovnkube-cluster-manager") - w.restarts
	switch {
	case r.s.PID("ovnkube-cluster-manager") == 0 || restarts > 0:
		r.b.Errorf("%s: OVN-Kubernetes' cluster-manager has exited (restarted %d times during the step; see %s): the step's figures do not compare with other runs'",
			step, restarts, r.s.LogPath("ovnkube-cluster-manager"))
	case waiting > 0 && now.rendered == c.rendered:
		r.b.Errorf("%s: OVN-Kubernetes' cluster-manager rendered no NetworkAttachmentDefinition in %.0f s while %d namespaces waited for one: it went idle, and the step's figures do not compare with other runs'", step, wall, waiting)
	case waiting > 0 && idle >= idleLimit:
		r.b.Errorf("%s: OVN-Kubernetes' cluster-manager used no CPU for %s while %d namespaces waited for their NetworkAttachmentDefinitions: it went idle, and the step's figures do not compare with other runs'", step, idle, waiting)
	}
}

// renderAttachments, on a stack without cluster-manager and with
// BENCH_SYNC_RENDER_ATTACHMENTS set, writes into every tenant host
// namespace the NetworkAttachmentDefinition cluster-manager would have
// rendered (named as the namespace's network, labelled as cluster-manager
// labels them, with a CNI configuration of the same size), and waits
// until every tenant Namespace is NetworkAttached: the restart that
// follows then lists them, as it does on a host running OVN-Kubernetes,
// whose cluster-manager would take hours to render 100,000.
func (r *syncRun) renderAttachments(ctx context.Context) {
	if r.ovn || os.Getenv("BENCH_SYNC_RENDER_ATTACHMENTS") == "" {
		return
	}
	dyn, err := dynamic.NewForConfig(framework.Unthrottled(r.s.RESTConfig(stack.AdminUser)))
	if err != nil {
		r.b.Fatal(err)
	}
	nss, err := r.meta.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).List(ctx, metav1.ListOptions{LabelSelector: hostnames.TenantLabel})
	if err != nil {
		r.b.Fatal(err)
	}
	var jobs []job
	for _, ns := range nss.Items {
		network := ns.Labels[hostnames.HostNetworkLabel]
		if network == "" {
			continue
		}
		nad := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
			"metadata": map[string]interface{}{"name": network, "namespace": ns.Name, "labels": map[string]interface{}{hostnames.UDNRenderedLabel: ""}},
			"spec": map[string]interface{}{"config": fmt.Sprintf(`{"cniVersion":"1.0.0","joinSubnet":"100.65.0.0/16","mtu":1400,"name":"cluster_udn_%[2]s",`+
				`"netAttachDefName":"%[1]s/%[2]s","role":"primary","subnets":"10.1.2.0/24","topology":"layer2","transitSubnet":"100.88.0.0/16","type":"ovn-k8s-cni-overlay"}`, ns.Name, network)},
		}}
		jobs = append(jobs, func(ctx context.Context) error {
			_, err := dyn.Resource(nadResource).Namespace(nad.GetNamespace()).Create(ctx, nad, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		})
	}
	start := time.Now()
	if err := runJobs(ctx, r.z.workers, jobs); err != nil {
		r.b.Fatal(err)
	}
	created := time.Since(start)
	r.waitFor(ctx, "NetworkAttached", 5*time.Second, r.notAttached)
	r.notef("attachments: %d NetworkAttachmentDefinitions written as cluster-manager renders them in %s (%.0f/s), every Namespace NetworkAttached after %s",
		len(jobs), created.Round(time.Millisecond), float64(len(jobs))/created.Seconds(), time.Since(start).Round(time.Millisecond))
}

// notAttached names a tenant Namespace not NetworkAttached yet, or
// returns "".
func (r *syncRun) notAttached(ctx context.Context) string {
	for i, c := range r.members {
		l, err := c.TenantV1alpha1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		for _, ns := range l.Items {
			if !meta.IsStatusConditionTrue(ns.Status.Conditions, tenantv1alpha1.ConditionNetworkAttached) {
				return fmt.Sprintf("Namespace %s of %s not NetworkAttached", ns.Name, syncTenantName(i))
			}
		}
	}
	return ""
}

// intSetting is an integer setting of a benchmark, read from the environment
// variable env into *p when it is set; values below min are refused.
type intSetting struct {
	env string
	p   *int
	min int
}

// intsFromEnv reads the settings that are set in the environment.
func intsFromEnv(vars ...intSetting) error {
	for _, v := range vars {
		s := os.Getenv(v.env)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < v.min {
			return fmt.Errorf("%s=%q: want an integer of at least %d", v.env, s, v.min)
		}
		*v.p = n
	}
	return nil
}

// runSides runs two sides' jobs at the same time, each workers at a time,
// fails b if a job failed, and returns when each side's last job returned.
func runSides(ctx context.Context, b *testing.B, workers int, first, second []job) [2]time.Time {
	var wg sync.WaitGroup
	var errs [2]error
	var ends [2]time.Time
	for side, jobs := range [][]job{first, second} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[side] = runJobs(ctx, workers, jobs)
			ends[side] = time.Now()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return ends
}

// runPaired runs the k-th job of both sides together, workers pairs at a
// time: each pair starts one job of each side at the same moment and ends
// when both returned, so both sides have the same jobs in flight and start
// them at the same times, and neither side's objects reach the host (and
// the queues of the controllers behind it) ahead of the other's because
// its jobs are quicker. It fails b if a job failed, and returns when each
// side's last job returned. With every > 0, the k-th pair starts no
// sooner than k*every after the first (paced: at a rate the controllers
// behind the host keep up with, the sides' times measure each object's
// path rather than its place in their queues).
func runPaired(ctx context.Context, b *testing.B, workers int, every time.Duration, first, second []job) [2]time.Time {
	if len(first) != len(second) {
		b.Fatalf("paired sides of %d and %d jobs", len(first), len(second))
	}
	var endMu sync.Mutex
	var ends [2]time.Time
	pairs := make([]job, 0, len(first))
	start := time.Now()
	for k := range first {
		pairs = append(pairs, func(ctx context.Context) error {
			if wait := time.Until(start.Add(time.Duration(k) * every)); wait > 0 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(wait):
				}
			}
			var wg sync.WaitGroup
			var errs [2]error
			for side, j := range []job{first[k], second[k]} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[side] = j(ctx)
					endMu.Lock()
					defer endMu.Unlock()
					if now := time.Now(); now.After(ends[side]) {
						ends[side] = now
					}
				}()
			}
			wg.Wait()
			return errors.Join(errs[:]...)
		})
	}
	if err := runJobs(ctx, workers, pairs); err != nil {
		b.Fatal(err)
	}
	return ends
}
