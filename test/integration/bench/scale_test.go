package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// Scale of BenchmarkPrivateList; BENCH_TENANTS overrides the large store
// size (10,000 by default) for a quick run.
const (
	smallTenants     = 10
	objectsPerTenant = 5 // Namespaces, and as many Networks, "default" included
	ownNetworks      = 50
	listRequests     = 200
	populateWorkers  = 24
	// populateTimeout bounds the wait for the syncer to catch up with
	// the populated tenants.
	populateTimeout = 30 * time.Minute
)

// scaleSyncer says whether the scale stacks run the syncer: yes, unless
// BENCH_SCALE_SYNCER=off (then the stores hold the same tenant objects,
// and the host none of theirs: what the API and its storage cost alone).
func scaleSyncer() bool { return os.Getenv("BENCH_SCALE_SYNCER") != "off" }

func largeTenants() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_TENANTS")); err == nil && v > smallTenants {
		return v
	}
	return 10000
}

// apiCheckpoint is BENCH_API_CHECKPOINT: the number of tenants at which
// BenchmarkTenantAPI also measures, on the way to largeTenants, so that
// the two sizes compare in one run on one stack (0: none). The large
// store is first filled to it; the other scale benchmarks, which measure
// the store as it was populated, skip.
func apiCheckpoint() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_API_CHECKPOINT")); err == nil && v > smallTenants && v < largeTenants() {
		return v
	}
	return 0
}

// asTenant returns a client acting, by impersonation, as a member of tenant t.
func asTenant(s *stack.Stack, t string) (clientset.Interface, error) {
	cfg := framework.Unthrottled(s.RESTConfig(stack.AdminUser))
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "member-of-" + t, Groups: []string{"tenant.io:" + t}}
	return clientset.NewForConfig(cfg)
}

// populate creates tenants [from, to): each a Tenant whose onboarding
// gives it its Network and Namespace "default", then objectsPerTenant-1
// more of each, which the syncer turns into host namespaces (labelled with
// their tenant), RoleBindings and ClusterUserDefinedNetworks.
func populate(ctx context.Context, b *testing.B, s *stack.Stack, from, to int) {
	admin, err := clientset.NewForConfig(framework.Unthrottled(s.RESTConfig(stack.AdminUser)))
	if err != nil {
		b.Fatal(err)
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := 0; w < populateWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := populateTenant(ctx, s, admin, fmt.Sprintf("t%d", i)); err != nil {
					failed.Store(err)
				}
			}
		}()
	}
	start := time.Now()
	for i := from; i < to; i++ {
		if failed.Load() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	b.Logf("populated tenants %d..%d in %s", from, to-1, time.Since(start).Round(time.Second))
}

func populateTenant(ctx context.Context, s *stack.Stack, admin clientset.Interface, name string) error {
	if err := createScaleTenant(ctx, admin, name, objectsPerTenant); err != nil {
		return err
	}
	c, err := asTenant(s, name)
	if err != nil {
		return err
	}
	if err := waitVisible(ctx, c, name); err != nil {
		return err
	}
	// Without the syncer, no onboarding makes the Network and Namespace
	// "default" (the block's first /24).
	if !scaleSyncer() {
		def := &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
		if _, err := c.TenantV1alpha1().Networks().Create(ctx, def, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return err
		}
		ns := &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: tenantv1alpha1.NamespaceSpec{Network: "default"}}
		if _, err := c.TenantV1alpha1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return err
		}
	}
	// The Networks are /26s of the block's second /24 (the first is the
	// Network "default"'s), the Namespaces attach to net1: the syncer
	// makes the defaults concurrently.
	block := netip.MustParsePrefix(tenantCIDR(name)).Addr().As4()
	for j := 1; j < objectsPerTenant; j++ {
		subnet := netip.PrefixFrom(netip.AddrFrom4([4]byte{block[0], block[1], block[2] + 1, byte(64 * (j - 1))}), 26)
		net := &tenantv1alpha1.Network{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("net%d", j)},
			Spec:       tenantv1alpha1.NetworkSpec{Subnets: []string{subnet.String()}},
		}
		if _, err := c.TenantV1alpha1().Networks().Create(ctx, net, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return err
		}
	}
	for j := 1; j < objectsPerTenant; j++ {
		ns := &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ns%d", j)}, Spec: tenantv1alpha1.NamespaceSpec{Network: "net1"}}
		if _, err := c.TenantV1alpha1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return err
		}
	}
	return nil
}

// waitVisible waits until tenant name is visible to c, one of its
// members: the membership index follows Tenants through an informer.
func waitVisible(ctx context.Context, c clientset.Interface, name string) error {
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := c.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{}); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("tenant %s never visible to its member: %w", name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tenantCIDR gives every bench tenant a block of its own: t<i> gets the
// /23 number i of 10.0.0.0/8, the measured tenant 10.200.0.0/16.
func tenantCIDR(name string) string {
	i, err := strconv.Atoi(strings.TrimPrefix(name, "t"))
	if err != nil {
		return "10.200.0.0/16"
	}
	return fmt.Sprintf("10.%d.%d.0/23", (2*i)/256, (2*i)%256)
}

func createScaleTenant(ctx context.Context, admin clientset.Interface, name string, networks int32) error {
	t := &tenantv1alpha1.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: tenantv1alpha1.TenantSpec{
			Network: tenantv1alpha1.TenantNetwork{CIDR: tenantCIDR(name)},
			Quota:   tenantv1alpha1.TenantQuota{Networks: &networks},
		},
	}
	_, err := admin.TenantV1alpha1().Tenants().Create(ctx, t, metav1.CreateOptions{})
	return ignoreExists(err)
}

func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// waitPopulated waits until every Tenant is Ready with objectsPerTenant
// Namespaces (Ready includes every Namespace HostSynced) and the host
// holds the syncer's namespaces of all of them: want in all.
func waitPopulated(ctx context.Context, b *testing.B, s *stack.Stack, want int) {
	admin, err := clientset.NewForConfig(framework.Unthrottled(s.RESTConfig(stack.AdminUser)))
	if err != nil {
		b.Fatal(err)
	}
	host := mustHost(b, s)
	start := time.Now()
	var problem string
	for deadline := start.Add(populateTimeout); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		problem = notPopulated(ctx, admin, host, want)
		if problem == "" {
			b.Logf("the syncer caught up %s after the populate", time.Since(start).Round(time.Second))
			return
		}
	}
	b.Fatalf("not synced after %s: %s", populateTimeout, problem)
}

// notPopulated names one thing the syncer has not done yet, or returns "".
func notPopulated(ctx context.Context, admin clientset.Interface, host kubernetes.Interface, want int) string {
	opts := metav1.ListOptions{Limit: 1000}
	for {
		l, err := admin.TenantV1alpha1().Tenants().List(ctx, opts)
		if err != nil {
			return err.Error()
		}
		for _, t := range l.Items {
			ready := t.Status.Phase == tenantv1alpha1.TenantPhaseReady || !scaleSyncer()
			if t.Name == apiTenant || t.Name == apiDirectTenant {
				// BenchmarkTenantAPI's own, with its default Namespace
				// alone; the host namespace count has it.
				if !ready {
					return fmt.Sprintf("tenant %s: phase %s", t.Name, t.Status.Phase)
				}
				continue
			}
			if !ready || t.Status.Usage.Namespaces < objectsPerTenant || t.Status.Usage.Networks < objectsPerTenant {
				return fmt.Sprintf("tenant %s: phase %s, %d Namespaces, %d Networks", t.Name, t.Status.Phase, t.Status.Usage.Namespaces, t.Status.Usage.Networks)
			}
		}
		if opts.Continue = l.Continue; opts.Continue == "" {
			break
		}
	}
	if !scaleSyncer() {
		return ""
	}
	n, err := countHostNamespaces(ctx, host)
	if err != nil {
		return err.Error()
	}
	if n != want {
		return fmt.Sprintf("%d host namespaces of the syncer, want %d", n, want)
	}
	return ""
}

// countHostNamespaces counts the host namespaces the syncer made, a page at a time.
func countHostNamespaces(ctx context.Context, host kubernetes.Interface) (int, error) {
	n := 0
	opts := metav1.ListOptions{LabelSelector: hostnames.TenantLabel, Limit: 5000}
	for {
		l, err := host.CoreV1().Namespaces().List(ctx, opts)
		if err != nil {
			return 0, err
		}
		n += len(l.Items)
		if opts.Continue = l.Continue; opts.Continue == "" {
			return n, nil
		}
	}
}

// rssMiB reads the resident set size of process pid.
func rssMiB(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// scaleSet are the two stacks of BenchmarkPrivateList and
// BenchmarkTenantAPI and the measured tenant's member on each.
type scaleSet struct {
	small, large                 *stack.Stack
	smallMeasured, largeMeasured clientset.Interface
	// populated is when the populate ended; rss the tenant-apiservers'
	// RSS then (small, large), in MiB.
	populated time.Time
	rss       [2]float64
	// largeFilled is the number of tenants the large store holds:
	// apiCheckpoint until grow, then largeTenants.
	largeFilled int
	grown       sync.Once
}

// grow fills the large store from the checkpoint to its full size, once;
// extra are the host namespaces of the syncer made since the first
// populate (by tenants of a benchmark's own).
func (set *scaleSet) grow(ctx context.Context, b *testing.B, extra int) {
	set.grown.Do(func() {
		if set.largeFilled >= largeTenants() {
			return
		}
		populate(ctx, b, set.large, set.largeFilled, largeTenants())
		waitPopulated(ctx, b, set.large, (largeTenants()+1)*objectsPerTenant+extra)
		set.largeFilled = largeTenants()
		// Let the burst settle, as after the first populate.
		time.Sleep(10 * time.Second)
	})
}

// scale is populated once per process (it takes most of the two
// benchmarks' time) and stopped by TestMain.
var scale struct {
	once  sync.Once
	set   *scaleSet
	stops []*stack.Stack
}

// scaleStacks starts and populates the scale stacks on first use: a small
// one with 10 tenants and a large one with BENCH_TENANTS (10,000), each
// with tenant "measured" (50 Networks, 5 Namespaces), the syncer running.
// With BENCH_API_CHECKPOINT the large store is filled to the checkpoint,
// and set.grow fills the rest.
func scaleStacks(ctx context.Context, b *testing.B) *scaleSet {
	scale.once.Do(func() {
		start := func() *stack.Stack {
			opts := stack.Options{KeepWorkDir: os.Getenv(framework.KeepEnv) != "", Log: io.Discard, SkipOVNKube: true, SkipMetalLB: true,
				TenantAPIServerArgs: strings.Fields(os.Getenv("BENCH_LIST_TENANT_APISERVER_ARGS")),
				TenantAPIServerEnv:  strings.Fields(os.Getenv("BENCH_SCALE_TENANT_APISERVER_ENV"))}
			if !scaleSyncer() {
				opts.TenantAPIServerArgs = append(opts.TenantAPIServerArgs, "--syncer=false")
			}
			if os.Getenv("BENCH_PROFILE_DIR") != "" {
				opts.KubeAPIServerArgs = append(opts.KubeAPIServerArgs, "--profiling=true")
			}
			if testing.Verbose() {
				opts.Log = os.Stderr
			}
			s, err := stack.Start(ctx, opts)
			if err != nil {
				b.Fatal(err)
			}
			scale.stops = append(scale.stops, s)
			if err := stack.DemoPools(ctx, s); err != nil {
				b.Fatal(err)
			}
			return s
		}
		prepare := func(s *stack.Stack, tenants int) clientset.Interface {
			admin, err := clientset.NewForConfig(framework.Unthrottled(s.RESTConfig(stack.AdminUser)))
			if err != nil {
				b.Fatal(err)
			}
			// The measured tenant's quota: its 50 Networks.
			if err := createScaleTenant(ctx, admin, "measured", ownNetworks); err != nil {
				b.Fatal(err)
			}
			if err := populateTenant(ctx, s, admin, "measured"); err != nil {
				b.Fatal(err)
			}
			measured, err := asTenant(s, "measured")
			if err != nil {
				b.Fatal(err)
			}
			populate(ctx, b, s, 0, tenants)
			for j := objectsPerTenant; j < ownNetworks; j++ {
				net := &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("net%d", j)}}
				if _, err := measured.TenantV1alpha1().Networks().Create(ctx, net, metav1.CreateOptions{}); ignoreExists(err) != nil {
					b.Fatal(err)
				}
			}
			waitPopulated(ctx, b, s, (tenants+1)*objectsPerTenant)
			return measured
		}
		set := &scaleSet{small: start(), large: start(), largeFilled: largeTenants()}
		if c := apiCheckpoint(); c > 0 {
			set.largeFilled = c
		}
		set.smallMeasured = prepare(set.small, smallTenants)
		set.largeMeasured = prepare(set.large, set.largeFilled)
		set.populated = time.Now()
		set.rss = [2]float64{rssMiB(set.small.PID("tenant-apiserver")), rssMiB(set.large.PID("tenant-apiserver"))}
		b.Logf("tenant-apiserver RSS right after the populate: %.0f MiB (large), %.0f MiB (small)", set.rss[1], set.rss[0])
		heapProfiles(ctx, b, set, "populated")
		logMemory(ctx, b, set, "populated")
		// Let the burst settle (garbage collection, etcd compaction) before measuring.
		time.Sleep(10 * time.Second)
		scale.set = set
	})
	if scale.set == nil {
		b.Fatal("the scale stacks did not start")
	}
	return scale.set
}

// stopScaleStacks stops the scale stacks, if a benchmark started them.
func stopScaleStacks() {
	for _, s := range scale.stops {
		_ = s.Stop()
	}
}

// BenchmarkPrivateList measures what a tenant's private view costs as the
// store grows, with the syncer running. Two stacks run side by side: one
// holds 10 tenants, the other 10,000 (each tenant with 5 Namespaces and 5
// Networks, "default" included, and the syncer's 5 host namespaces,
// RoleBindings and ClusterUserDefinedNetworks: 50,000 host namespaces
// labelled with their tenant). In both, tenant "measured" owns 50 Networks
// and 5 Namespaces. The benchmark alternates a LIST of the measured
// tenant's Networks on the small and on the large stack, then, on the
// large one, alternates a LIST of its own 5 Namespaces through the
// aggregator with the host kube-apiserver listing its 5 host namespaces by
// label among 50,000 (the floor of any proxy that filters core
// namespaces). It also reports both tenant-apiservers' and kube-apiservers'
// RSS; BENCH_PROFILE_DIR saves heap profiles of both tenant-apiservers.
//
// OVN-Kubernetes' cluster-manager and MetalLB do not run in these stacks:
// what they do with 50,000 networks and namespaces is not what is measured
// here (see "Network create -> Ready, through OVN-Kubernetes").
func BenchmarkPrivateList(b *testing.B) {
	if apiCheckpoint() > 0 {
		b.Skip("BENCH_API_CHECKPOINT fills the store for BenchmarkTenantAPI alone")
	}
	ctx := context.Background()
	sc := scaleStacks(ctx, b)
	large, smallClient, largeClient := sc.large, sc.smallMeasured, sc.largeMeasured

	listNetworks := func(c clientset.Interface) func() (int, error) {
		return func() (int, error) {
			l, err := c.TenantV1alpha1().Networks().List(ctx, metav1.ListOptions{})
			if err != nil {
				return 0, err
			}
			return len(l.Items), nil
		}
	}
	listNamespaces := func() (int, error) {
		l, err := largeClient.TenantV1alpha1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		return len(l.Items), nil
	}
	host := mustHost(b, large)
	listHost := func() (int, error) {
		l, err := host.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: hostnames.TenantLabel + "=measured"})
		if err != nil {
			return 0, err
		}
		return len(l.Items), nil
	}

	for i := 0; i < b.N; i++ {
		smallD, largeD := alternate(b, listNetworks(smallClient), listNetworks(largeClient), ownNetworks, ownNetworks)
		report := func(d []time.Duration, p int, unit string) time.Duration {
			v := percentile(d, p)
			b.ReportMetric(float64(v.Microseconds()), unit)
			return v
		}
		smallP50 := report(smallD, 50, "list50-10tenants-p50-µs")
		report(smallD, 99, "list50-10tenants-p99-µs")
		largeP50 := report(largeD, 50, "list50-large-p50-µs")
		report(largeD, 99, "list50-large-p99-µs")
		b.ReportMetric(float64(largeP50)/float64(smallP50), "list50-large/small-p50")
		// Without the syncer, the host holds no namespace of the tenants.
		if scaleSyncer() {
			ours, theirs := alternate(b, listNamespaces, listHost, objectsPerTenant, objectsPerTenant)
			oursP50 := report(ours, 50, "tenant-ns-list-p50-µs")
			theirsP50 := report(theirs, 50, "host-ns-labellist-p50-µs")
			b.ReportMetric(float64(theirsP50)/float64(oursP50), "host/tenant-ns-p50")
		}
		b.ReportMetric(float64(largeTenants()), "tenants")
		reportRSS(b, "populated", sc.rss[0], sc.rss[1])
	}
}

// reportRSS reports the tenant-apiservers' RSS, in all and per 1,000
// tenants x 10 objects: the large one's divided by its thousands of
// tenants, and what the large one has more than the small one divided by
// the thousands of tenants it has more.
func reportRSS(b *testing.B, when string, small, large float64) {
	b.ReportMetric(large, when+"-RSS-MiB")
	b.ReportMetric(small, when+"-small-RSS-MiB")
	b.ReportMetric(large/(float64(largeTenants())/1000), when+"-RSS-MiB-per-1000-tenants")
	b.ReportMetric((large-small)/(float64(largeTenants()-smallTenants)/1000), when+"-added-RSS-MiB-per-1000-tenants")
}

// heapMiB reads the live heap (small, large) of the tenant-apiservers
// from their own metrics: taken right after heapProfiles' collection, it
// is what survived it.
func heapMiB(ctx context.Context, b *testing.B, set *scaleSet) [2]float64 {
	var heap [2]float64
	for j, s := range []*stack.Stack{set.small, set.large} {
		v, found, err := metricValue(ctx, s, "go_memstats_heap_alloc_bytes")
		if err == nil && !found {
			err = fmt.Errorf("no go_memstats_heap_alloc_bytes in tenant-apiserver's metrics")
		}
		if err != nil {
			b.Fatal(err)
		}
		heap[j] = v / (1 << 20)
	}
	return heap
}

// busyWork names what a goroutine dump of tenant-apiserver shows while
// work runs that holds memory only while it runs: a watch cache's
// consistency check (a page of up to 10,000 objects decoded from etcd,
// and the cache's list beside it) and the syncer's periodic check.
var busyWork = map[string]string{
	"cacher.(*consistencyChecker).check": "a watch cache's consistency check",
	"checker.(*Checker).Pass":            "the syncer's periodic check",
}

// busyWith says what s's tenant-apiserver is busy with, "" if nothing:
// the work above, or keys in the syncer's queues (waiting or being
// reconciled; the periodic check queues every object after its pass).
func busyWith(ctx context.Context, s *stack.Stack) (string, error) {
	metrics, err := s.TenantMetrics(ctx)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(metrics, "\n") {
		name, rest, ok := strings.Cut(line, "{")
		if !ok || (name != "workqueue_depth" && name != "workqueue_unfinished_work_seconds") {
			continue
		}
		f := strings.Fields(rest)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil && v > 0 {
			return "a work queue (" + line + ")", nil
		}
	}
	dump, err := fetchDebug(ctx, s.DirectTenantConfig(stack.AdminUser, "system:masters"), s.TenantAPIServerURL()+"/debug/pprof/goroutine?debug=1")
	if err != nil {
		return "", err
	}
	for fn, what := range busyWork {
		if bytes.Contains(dump, []byte(fn)) {
			return what, nil
		}
	}
	return "", nil
}

// quietHeapMiB reads the live heap (small, large) of the tenant-apiservers
// after a collection made while neither runs work that holds memory only
// while it runs (busyWith, before and after the collection), waiting up
// to 3 minutes for such a moment: the heap of the objects held, without a
// check that happened to run. It logs what it waited for.
func quietHeapMiB(ctx context.Context, b *testing.B, set *scaleSet, when string) [2]float64 {
	var heap [2]float64
	for j, s := range []*stack.Stack{set.small, set.large} {
		start := time.Now()
		waited := map[string]int{}
		for {
			before, err := busyWith(ctx, s)
			if err != nil {
				b.Fatal(err)
			}
			if before == "" {
				if err := fetchProfile(ctx, s.DirectTenantConfig(stack.AdminUser, "system:masters"), s.TenantAPIServerURL()+"/debug/pprof/heap?gc=1", os.DevNull); err != nil {
					b.Fatal(err)
				}
				v, found, err := metricValue(ctx, s, "go_memstats_heap_alloc_bytes")
				if err == nil && !found {
					err = fmt.Errorf("no go_memstats_heap_alloc_bytes in tenant-apiserver's metrics")
				}
				if err != nil {
					b.Fatal(err)
				}
				after, err := busyWith(ctx, s)
				if err != nil {
					b.Fatal(err)
				}
				if after == "" {
					heap[j] = v / (1 << 20)
					break
				}
				before = after
			}
			waited[before]++
			if time.Since(start) > 3*time.Minute {
				b.Fatalf("%s: tenant-apiserver of %d tenants never quiet in 3 minutes (busy with: %v)", when, []int{smallTenants, largeTenants()}[j], waited)
			}
			time.Sleep(time.Second)
		}
		b.Logf("%s: quiet heap of the %d-tenant stack %.1f MiB, after %s (busy with: %v)", when, []int{smallTenants, largeTenants()}[j], heap[j], time.Since(start).Round(time.Second), waited)
	}
	return heap
}

// logMemory logs where the large tenant-apiserver's memory is, from the
// Go runtime's view (runtimeMemory), and reports its heap spans in use.
func logMemory(ctx context.Context, b *testing.B, set *scaleSet, when string) {
	v := runtimeMemory(ctx, b, set.large, when)
	b.ReportMetric(v["heap_inuse_bytes"], when+"-heap-spans-in-use-MiB")
}

// runtimeMemory logs where a tenant-apiserver's memory is, from the Go
// runtime's view: the heap allocated (live objects, and garbage not yet
// collected unless the caller just collected), the heap's spans in use (live objects and
// the free slots between them), the free spans not yet returned to the
// system, and the runtime's total; RSS is about what it has not returned.
// It returns the go_memstats_* figures in MiB, named without the prefix.
func runtimeMemory(ctx context.Context, b *testing.B, s *stack.Stack, when string) map[string]float64 {
	metrics, err := s.TenantMetrics(ctx)
	if err != nil {
		b.Fatal(err)
	}
	v := map[string]float64{}
	var capacities []string
	for _, line := range strings.Split(metrics, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && strings.HasPrefix(f[0], "go_memstats_") {
			if x, err := strconv.ParseFloat(f[1], 64); err == nil {
				v[strings.TrimPrefix(f[0], "go_memstats_")] = x / (1 << 20)
			}
		}
		// The watch caches' room for events: each holds up to that many of
		// the latest events (and the objects they carry), whatever their age.
		if len(f) == 2 && strings.HasPrefix(f[0], "watch_cache_capacity{") && f[1] != "100" {
			capacities = append(capacities, strings.TrimPrefix(f[0], "watch_cache_capacity")+" "+f[1])
		}
	}
	b.Logf("%s: watch cache capacities above the least (100): %s", when, strings.Join(capacities, ", "))
	pid := s.PID("tenant-apiserver")
	b.Logf("%s: RSS %.0f MiB; Go: heap allocated %.0f, heap spans in use %.0f, free spans kept %.0f, returned %.0f, stacks %.0f, runtime total %.0f, next GC at %.0f MiB; CPU used since start %.1f s",
		when, rssMiB(pid), v["heap_alloc_bytes"], v["heap_inuse_bytes"],
		v["heap_idle_bytes"]-v["heap_released_bytes"], v["heap_released_bytes"], v["stack_inuse_bytes"], v["sys_bytes"], v["next_gc_bytes"], cpuSeconds(pid))
	return v
}

// reportHeap reports live heaps as reportRSS reports RSS, named when
// and what ("heap", "quiet-heap").
func reportHeap(b *testing.B, when, what string, heap [2]float64) {
	b.ReportMetric(heap[1], when+"-"+what+"-MiB")
	b.ReportMetric(heap[0], when+"-small-"+what+"-MiB")
	b.ReportMetric(heap[1]/(float64(largeTenants())/1000), when+"-"+what+"-MiB-per-1000-tenants")
	b.ReportMetric((heap[1]-heap[0])/(float64(largeTenants()-smallTenants)/1000), when+"-added-"+what+"-MiB-per-1000-tenants")
}

// heapProfiles has both tenant-apiservers collect garbage (the heap
// profile endpoint does, with gc=1) and, when BENCH_PROFILE_DIR is set,
// saves their heap profiles, named after when.
func heapProfiles(ctx context.Context, b *testing.B, set *scaleSet, when string) {
	dir := os.Getenv("BENCH_PROFILE_DIR")
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for name, s := range map[string]*stack.Stack{"small": set.small, "large": set.large} {
		path := os.DevNull
		if dir != "" {
			path = filepath.Join(dir, fmt.Sprintf("heap-%s-%s-tenant-apiserver.pprof", when, name))
		}
		if err := fetchProfile(ctx, s.DirectTenantConfig(stack.AdminUser, "system:masters"), s.TenantAPIServerURL()+"/debug/pprof/heap?gc=1", path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScaleMemory reports the memory of the scale stacks at rest:
// the watch caches keep every event of the last 75 s (and the previous
// version of every object updated then), so right after the populate a
// good part of tenant-apiserver's heap is the burst's history. Once that
// history is older than 75 s, a few writes to each kind let the caches
// shrink their history (they do so on writes); a minute later, a garbage
// collection, and the tenant-apiservers' live heap and RSS, and the host
// kube-apiservers' RSS, are reported.
func BenchmarkScaleMemory(b *testing.B) {
	if apiCheckpoint() > 0 {
		b.Skip("BENCH_API_CHECKPOINT fills the store for BenchmarkTenantAPI alone")
	}
	ctx := context.Background()
	sc := scaleStacks(ctx, b)
	for i := 0; i < b.N; i++ {
		if wait := time.Until(sc.populated.Add(80 * time.Second)); wait > 0 {
			time.Sleep(wait)
		}
		for _, s := range []*stack.Stack{sc.small, sc.large} {
			settleWrites(ctx, b, s)
		}
		time.Sleep(time.Minute)
		heapProfiles(ctx, b, sc, "rest")
		heap := heapMiB(ctx, b, sc)
		// The runtime returns freed memory to the system in the background.
		time.Sleep(30 * time.Second)
		reportRSS(b, "rest", rssMiB(sc.small.PID("tenant-apiserver")), rssMiB(sc.large.PID("tenant-apiserver")))
		logMemory(ctx, b, sc, "rest")
		reportHeap(b, "rest", "heap", heap)
		reportHeap(b, "rest", "quiet-heap", quietHeapMiB(ctx, b, sc, "rest"))
		b.ReportMetric(rssMiB(sc.large.PID("kube-apiserver")), "kube-apiserver-RSS-MiB")
		b.ReportMetric(rssMiB(sc.small.PID("kube-apiserver")), "small-kube-apiserver-RSS-MiB")
		b.ReportMetric(float64(largeTenants()), "tenants")

		// A restarted tenant-apiserver holds the same objects without the
		// populate's history and without the holes the burst left in its
		// heap (the Go heap does not move objects).
		for j, s := range []*stack.Stack{sc.small, sc.large} {
			logPath := s.LogPath("tenant-apiserver")
			filledBefore, doneBefore := len(logLines(logPath, "Syncer caches filled")), len(logLines(logPath, "Initial sync done"))
			if err := s.StopTenantAPIServer(); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			stopProfile := func() {}
			if j == 1 {
				// BENCH_PROFILE_DIR: the large stack's restart, from its first answer.
				stopProfile = profileStarting(ctx, b, s, os.Getenv("BENCH_PROFILE_DIR"), "restart", start, restartProfileSeconds()*time.Second)
			}
			if err := s.StartTenantAPIServer(ctx); err != nil {
				b.Fatal(err)
			}
			var initial float64
			if !scaleSyncer() {
				initial = -1 // nothing to wait for
			}
			for deadline := time.Now().Add(10 * time.Minute); initial == 0; time.Sleep(100 * time.Millisecond) {
				v, err := syncerInitialSync(ctx, s)
				if err == nil {
					initial = v
				}
				if time.Now().After(deadline) {
					b.Fatalf("no initial sync reported after 10 minutes (%v)", err)
				}
			}
			if j == 1 && scaleSyncer() {
				b.ReportMetric(initial, "restart-initial-sync-s")
				b.ReportMetric(time.Since(start).Seconds(), "restart-to-synced-s")
				for _, l := range append(logLines(logPath, "Syncer caches filled")[filledBefore:], logLines(logPath, "Initial sync done")[doneBefore:]...) {
					b.Logf("restart of the %d-tenant stack: %s", largeTenants(), strings.TrimSpace(l))
				}
			}
			stopProfile()
		}
		time.Sleep(30 * time.Second)
		heapProfiles(ctx, b, sc, "restarted")
		heap = heapMiB(ctx, b, sc)
		time.Sleep(30 * time.Second)
		reportRSS(b, "restarted", rssMiB(sc.small.PID("tenant-apiserver")), rssMiB(sc.large.PID("tenant-apiserver")))
		logMemory(ctx, b, sc, "restarted")
		reportHeap(b, "restarted", "heap", heap)
		reportHeap(b, "restarted", "quiet-heap", quietHeapMiB(ctx, b, sc, "restarted"))
	}
}

// settleWrites makes tenant "settle" and 40 Networks and Namespaces of
// it: writes of Tenants, Networks and Namespaces (and their status) after
// the populate's history has aged.
func settleWrites(ctx context.Context, b *testing.B, s *stack.Stack) {
	admin, err := clientset.NewForConfig(framework.Unthrottled(s.RESTConfig(stack.AdminUser)))
	if err != nil {
		b.Fatal(err)
	}
	const n = 40
	quota := int32(n + 1)
	t := &tenantv1alpha1.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: "settle"},
		Spec: tenantv1alpha1.TenantSpec{
			Network: tenantv1alpha1.TenantNetwork{CIDR: "10.202.0.0/16"},
			Quota:   tenantv1alpha1.TenantQuota{Networks: &quota, Namespaces: &quota},
		},
	}
	if _, err := admin.TenantV1alpha1().Tenants().Create(ctx, t, metav1.CreateOptions{}); ignoreExists(err) != nil {
		b.Fatal(err)
	}
	c, err := asTenant(s, "settle")
	if err != nil {
		b.Fatal(err)
	}
	if err := waitVisible(ctx, c, "settle"); err != nil {
		b.Fatal(err)
	}
	for j := 0; j < n; j++ {
		if _, err := c.TenantV1alpha1().Networks().Create(ctx, &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d", j)}}, metav1.CreateOptions{}); ignoreExists(err) != nil {
			b.Fatal(err)
		}
		ns := &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d", j)}, Spec: tenantv1alpha1.NamespaceSpec{Network: "s0"}}
		if _, err := c.TenantV1alpha1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); ignoreExists(err) != nil {
			b.Fatal(err)
		}
	}
}

// alternate runs a and b listRequests times each, alternating so that
// machine noise hits both alike, and checks their item counts.
func alternate(tb testing.TB, a, b func() (int, error), wantA, wantB int) (da, db []time.Duration) {
	for i := 0; i < listRequests; i++ {
		for _, c := range []struct {
			f    func() (int, error)
			want int
			d    *[]time.Duration
		}{{a, wantA, &da}, {b, wantB, &db}} {
			t0 := time.Now()
			n, err := c.f()
			if err != nil {
				tb.Fatal(err)
			}
			*c.d = append(*c.d, time.Since(t0))
			if n != c.want {
				tb.Fatalf("list returned %d items, want %d", n, c.want)
			}
		}
	}
	return da, db
}

func mustHost(b *testing.B, s *stack.Stack) kubernetes.Interface {
	host, err := kubernetes.NewForConfig(framework.Unthrottled(s.RESTConfig(stack.AdminUser)))
	if err != nil {
		b.Fatal(err)
	}
	return host
}

// restartProfileSeconds is how long BenchmarkScaleMemory profiles the
// restart of the large stack (BENCH_PROFILE_RESTART_SECONDS, default 30).
func restartProfileSeconds() time.Duration {
	if v, err := strconv.Atoi(os.Getenv("BENCH_PROFILE_RESTART_SECONDS")); err == nil && v > 0 {
		return time.Duration(v)
	}
	return 30
}
