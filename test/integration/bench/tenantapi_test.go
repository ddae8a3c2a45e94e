package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	tenantclient "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned/typed/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// Sizes of BenchmarkTenantAPI; BENCH_API_WATCHES overrides the number of
// open watches on each side.
const (
	apiRequests    = 200 // creates, gets and lists on each side
	apiFanOutWrite = 10  // writes seen by every watch, on each side
	apiTenant      = "apibench"
	// apiDirectTenant is the tenant whose requests go to tenant-apiserver
	// itself, not through the aggregator: the same tenant shape, its own
	// objects, so that each side creates, gets and lists 200.
	apiDirectTenant = "apibench-direct"
	apiNamespace    = "apibench" // the host side's namespace of its custom resources
	// crPerHostNamespace custom resources go into every host namespace of
	// the syncer (a tenant's 5 Namespaces are 5 host namespaces), so that
	// the host's store holds as many as the tenant's holds Networks.
	crPerHostNamespace = 1
)

func apiWatches() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_API_WATCHES")); err == nil && v > 0 {
		return v
	}
	return 1000
}

// benchNetworks is the host side's custom resource: a namespaced
// "Network" of the tenant Network's shape, served by kube-apiserver from a
// CRD with a structural schema and a status subresource.
var benchNetworks = schema.GroupVersionResource{Group: "bench.tenant.io", Version: "v1", Resource: "networks"}

const benchNetworkCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: networks.bench.tenant.io
spec:
  group: bench.tenant.io
  scope: Namespaced
  names: {plural: networks, singular: network, kind: Network, listKind: NetworkList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              topology: {type: string, enum: [Layer2, Layer3]}
              subnets: {type: array, maxItems: 2, items: {type: string, maxLength: 43}}
          status:
            type: object
            properties:
              subnets: {type: array, items: {type: string}}
              conditions:
                type: array
                items:
                  type: object
                  x-kubernetes-preserve-unknown-fields: true
`

func benchNetwork(name string, i int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "bench.tenant.io/v1", "kind": "Network",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"topology": "Layer2",
			"subnets": []any{fmt.Sprintf("10.%d.%d.0/24", 100+i/256, i%256)}},
	}}
}

// BenchmarkTenantAPI measures the tenant API's own request latency on the
// large scale stack (10,000 tenants, 50,000 Namespaces and Networks, the
// syncer running) against the same operations on a custom resource served
// by the host kube-apiserver, whose store holds as many objects (one in
// each of the syncer's 50,000 host namespaces). The tenant API is measured
// twice: as tenants reach it, through the aggregator, and at
// tenant-apiserver itself (a second tenant of the same shape, its member's
// requests sent as the aggregator forwards them), which leaves out the hop
// through the host kube-apiserver. In turns, one request of each side after
// the other: creates, gets and lists (of the 200 objects the creates made
// on that side), then the watch fan-out: BENCH_API_WATCHES (1,000) watches
// open on each side (the tenant's through the aggregator, as its member;
// the host's of one namespace, as the admin), one create, and the time
// until every watch has seen it, ten times a side.
func BenchmarkTenantAPI(b *testing.B) {
	if !scaleSyncer() {
		b.Skip("BenchmarkTenantAPI measures the stack with the syncer (BENCH_SCALE_SYNCER=off)")
	}
	ctx := context.Background()
	set := scaleStacks(ctx, b)
	s := set.large
	admin, err := clientset.NewForConfig(framework.Unthrottled(s.RESTConfig(stack.AdminUser)))
	if err != nil {
		b.Fatal(err)
	}
	host := mustHost(b, s)
	dyn, err := dynamic.NewForConfig(framework.Unthrottled(s.RESTConfig(stack.AdminUser)))
	if err != nil {
		b.Fatal(err)
	}

	// The tenant side: a tenant of its own, room for every Network, and one
	// of the same shape whose member talks to tenant-apiserver directly.
	quota := int32(2*apiRequests + apiFanOutWrite + 1)
	// (10.202.0.0/16 is settleWrites' tenant's.)
	for name, cidr := range map[string]string{apiTenant: "10.201.0.0/16", apiDirectTenant: "10.203.0.0/16"} {
		t := &tenantv1alpha1.Tenant{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: tenantv1alpha1.TenantSpec{
				Network: tenantv1alpha1.TenantNetwork{CIDR: cidr},
				Quota:   tenantv1alpha1.TenantQuota{Networks: &quota},
			},
		}
		if _, err := admin.TenantV1alpha1().Tenants().Create(ctx, t, metav1.CreateOptions{}); ignoreExists(err) != nil {
			b.Fatal(err)
		}
		if err := s.WaitTenantReady(ctx, name, 2*time.Minute); err != nil {
			b.Fatal(err)
		}
	}
	member, err := asTenant(s, apiTenant)
	if err != nil {
		b.Fatal(err)
	}
	// The aggregator's hop left out: the request as kube-apiserver would
	// forward it (front-proxy certificate, X-Remote-User and -Group).
	// tenant-apiserver still asks the host to authorize it.
	directMember, err := clientset.NewForConfig(framework.Unthrottled(s.DirectTenantConfig("member-of-"+apiDirectTenant, "tenant.io:"+apiDirectTenant)))
	if err != nil {
		b.Fatal(err)
	}

	// The host side: the CRD, its store filled like the tenant's, and a
	// namespace for the measured objects.
	crdPath := filepath.Join(b.TempDir(), "crd.yaml")
	if err := os.WriteFile(crdPath, []byte(benchNetworkCRD), 0o644); err != nil {
		b.Fatal(err)
	}
	if _, stderr, err := s.Kubectl(ctx, stack.AdminUser, "apply", "-f", crdPath); err != nil {
		b.Fatalf("creating the CRD: %v: %s", err, stderr)
	}
	if err := s.WaitEstablished(ctx, time.Minute, "crd/networks.bench.tenant.io"); err != nil {
		b.Fatalf("waiting for the CRD: %v", err)
	}
	if _, err := host.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: apiNamespace}}, metav1.CreateOptions{}); ignoreExists(err) != nil {
		b.Fatal(err)
	}
	crs := dyn.Resource(benchNetworks).Namespace(apiNamespace)
	networks := member.TenantV1alpha1().Networks()
	directNetworks := directMember.TenantV1alpha1().Networks()
	name := func(i int) string { return fmt.Sprintf("api%d", i) }

	var rows []row
	// measure times create, get and list on the three sides, in turns,
	// with the store holding tenants tenants; prefix names its metrics. It
	// returns the p50s of create, get and list: through the aggregator,
	// to tenant-apiserver directly, and of the host CRD.
	measure := func(tenants int, prefix string) (p50s [3][3]time.Duration) {
		waitHostSettled(ctx, b, host)
		fillHostCRs(ctx, b, s, dyn)
		collectGarbage(ctx, b, s)
		k := 0
		one := func(what string, aggregated, own, crd func(i int) error) {
			var td, od, dd []time.Duration
			for i := 0; i < apiRequests; i++ {
				for _, side := range []struct {
					f func(int) error
					d *[]time.Duration
				}{{aggregated, &td}, {own, &od}, {crd, &dd}} {
					t0 := time.Now()
					if err := side.f(i); err != nil {
						b.Fatalf("%s at %d tenants: %v", what, tenants, err)
					}
					*side.d = append(*side.d, time.Since(t0))
				}
			}
			rows = append(rows, row{fmt.Sprintf("%s, tenant.io (aggregated), %d tenants", what, tenants), len(td), pctl(td, 50), pctl(td, 99)},
				row{fmt.Sprintf("%s, tenant.io (tenant-apiserver directly), %d tenants", what, tenants), len(od), pctl(od, 50), pctl(od, 99)},
				row{fmt.Sprintf("%s, host CRD, %d tenants", what, tenants), len(dd), pctl(dd, 50), pctl(dd, 99)})
			b.ReportMetric(float64(percentile(td, 50).Microseconds()), prefix+what+"-tenant-p50-µs")
			b.ReportMetric(float64(percentile(od, 50).Microseconds()), prefix+what+"-direct-p50-µs")
			b.ReportMetric(float64(percentile(dd, 50).Microseconds()), prefix+what+"-crd-p50-µs")
			b.ReportMetric(float64(percentile(td, 50))/float64(percentile(dd, 50)), prefix+what+"-tenant/crd-p50")
			b.ReportMetric(float64(percentile(td, 99))/float64(percentile(dd, 99)), prefix+what+"-tenant/crd-p99")
			p50s[k] = [3]time.Duration{percentile(td, 50), percentile(od, 50), percentile(dd, 50)}
			k++
		}
		// BENCH_PROFILE_DIR: CPU profiles of tenant-apiserver and kube-apiserver
		// over the first 10 s of the creates.
		profiled := profileCPU(ctx, b, s, fmt.Sprintf("tenantapi-create-%d", tenants), 10*time.Second)
		// What the syncer did before and during the creates, by controller.
		work := syncerWork(ctx, b, s)
		logSyncerWork(fmt.Sprintf("from the start to %d tenants", tenants), nil, work)
		created := time.Now()
		one("create", func(i int) error {
			_, err := networks.Create(ctx, &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: name(i)}}, metav1.CreateOptions{})
			return err
		}, func(i int) error {
			_, err := directNetworks.Create(ctx, &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: name(i)}}, metav1.CreateOptions{})
			return err
		}, func(i int) error {
			_, err := crs.Create(ctx, benchNetwork(name(i), i), metav1.CreateOptions{})
			return err
		})
		profiled()
		logSyncerWork(fmt.Sprintf("during the creates at %d tenants (%.1f s)", tenants, time.Since(created).Seconds()), work, syncerWork(ctx, b, s))
		one("get", func(i int) error {
			_, err := networks.Get(ctx, name(i), metav1.GetOptions{})
			return err
		}, func(i int) error {
			_, err := directNetworks.Get(ctx, name(i), metav1.GetOptions{})
			return err
		}, func(i int) error {
			_, err := crs.Get(ctx, name(i), metav1.GetOptions{})
			return err
		})
		tenantList := func(networks tenantclient.NetworkInterface) func(int) error {
			return func(int) error {
				l, err := networks.List(ctx, metav1.ListOptions{})
				if err == nil && len(l.Items) != apiRequests+1 {
					err = fmt.Errorf("%d tenant Networks, want %d", len(l.Items), apiRequests+1)
				}
				return err
			}
		}
		one("list", tenantList(networks), tenantList(directNetworks), func(int) error {
			l, err := crs.List(ctx, metav1.ListOptions{})
			if err == nil && len(l.Items) != apiRequests {
				err = fmt.Errorf("%d custom resources, want %d", len(l.Items), apiRequests)
			}
			return err
		})
		hostHeapProfile(ctx, b, s, fmt.Sprintf("tenantapi-%d-heap-kube-apiserver", tenants))
		return p50s
	}

	// BENCH_API_CHECKPOINT: the same at the checkpoint, the measured
	// objects removed, then at the full size.
	if checkpoint := set.largeFilled; checkpoint < largeTenants() {
		at := measure(checkpoint, fmt.Sprintf("at%d-", checkpoint))
		// Printed now: the populate to the full size is long.
		printTable(os.Stdout, fmt.Sprintf("BenchmarkTenantAPI: %d tenants in the store (the checkpoint), request start -> response", checkpoint), rows)
		removeAPIObjects(ctx, b, networks, crs, apiRequests)
		removeAPIObjects(ctx, b, directNetworks, nil, apiRequests)
		// The two tenants' default host namespaces are the syncer's too.
		set.grow(ctx, b, 2)
		full := measure(largeTenants(), "")
		for i, what := range []string{"create", "get", "list"} {
			growth := func(side int) float64 { return float64(full[i][side]) / float64(at[i][side]) }
			for j, side := range []string{"tenant", "direct", "crd"} {
				b.ReportMetric(growth(j), fmt.Sprintf("%s-%s-p50-%d/%d", what, side, largeTenants(), checkpoint))
			}
			// The host CRD's requests took turns with the tenant's on the
			// same host and machine, and cross no code of the product: what a
			// tenant request's p50 grew beyond the CRD's own growth is what
			// the product added.
			b.ReportMetric(growth(0)/growth(2), what+"-tenant-growth/crd-growth")
			b.ReportMetric(growth(1)/growth(2), what+"-direct-growth/crd-growth")
		}
	} else {
		measure(largeTenants(), "")
	}

	// The watch fan-out.
	n := apiWatches()
	tenantCfg := framework.Unthrottled(s.RESTConfig(stack.AdminUser))
	tenantCfg.Impersonate = rest.ImpersonationConfig{UserName: "member-of-" + apiTenant, Groups: []string{"tenant.io:" + apiTenant}}
	tenantWatch, err := clientset.NewForConfig(tenantCfg)
	if err != nil {
		b.Fatal(err)
	}
	tenantSide := openWatches(ctx, b, n, func(ctx context.Context, rv string) (watch.Interface, error) {
		return tenantWatch.TenantV1alpha1().Networks().Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	}, func() (string, error) {
		l, err := networks.List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return "", err
		}
		return l.ResourceVersion, nil
	})
	defer tenantSide.stop()
	hostSide := openWatches(ctx, b, n, func(ctx context.Context, rv string) (watch.Interface, error) {
		return crs.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	}, func() (string, error) {
		l, err := crs.List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return "", err
		}
		return l.GetResourceVersion(), nil
	})
	defer hostSide.stop()
	var tenantAll, hostAll, tenantEach, hostEach []time.Duration
	for i := 0; i < apiFanOutWrite; i++ {
		k := apiRequests + i
		all, each := tenantSide.fanOut(ctx, b, name(k), func() error {
			_, err := networks.Create(ctx, &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: name(k)}}, metav1.CreateOptions{})
			return err
		})
		tenantAll, tenantEach = append(tenantAll, all), append(tenantEach, each...)
		all, each = hostSide.fanOut(ctx, b, name(k), func() error {
			_, err := crs.Create(ctx, benchNetwork(name(k), k), metav1.CreateOptions{})
			return err
		})
		hostAll, hostEach = append(hostAll, all), append(hostEach, each...)
	}
	rows = append(rows,
		row{fmt.Sprintf("one create seen by all %d watches, tenant.io", n), len(tenantAll), pctl(tenantAll, 50), pctl(tenantAll, 99)},
		row{fmt.Sprintf("one create seen by all %d watches, host CRD", n), len(hostAll), pctl(hostAll, 50), pctl(hostAll, 99)},
		row{"  each watch's sighting, tenant.io", len(tenantEach), pctl(tenantEach, 50), pctl(tenantEach, 99)},
		row{"  each watch's sighting, host CRD", len(hostEach), pctl(hostEach, 50), pctl(hostEach, 99)})
	b.ReportMetric(float64(percentile(tenantAll, 50).Milliseconds()), "fanout-all-tenant-p50-ms")
	b.ReportMetric(float64(percentile(hostAll, 50).Milliseconds()), "fanout-all-crd-p50-ms")
	b.ReportMetric(float64(percentile(tenantAll, 50))/float64(percentile(hostAll, 50)), "fanout-all-tenant/crd-p50")
	b.ReportMetric(float64(n), "watches")
	printTable(os.Stdout, fmt.Sprintf("BenchmarkTenantAPI: %d tenants in the store, request start -> response (fan-out: create start -> seen)", largeTenants()), rows)
	// The rest of the process must not find these objects.
	for i := 0; i < apiRequests+apiFanOutWrite; i++ {
		_ = networks.Delete(ctx, name(i), metav1.DeleteOptions{})
		_ = directNetworks.Delete(ctx, name(i), metav1.DeleteOptions{})
	}
	_ = host.CoreV1().Namespaces().Delete(ctx, apiNamespace, metav1.DeleteOptions{})
}

// removeAPIObjects deletes the n tenant Networks and custom resources
// (crs may be nil) BenchmarkTenantAPI measured with and waits until both
// lists hold none of them (a Network goes once the syncer has removed its
// host network).
func removeAPIObjects(ctx context.Context, b *testing.B, networks tenantclient.NetworkInterface, crs dynamic.ResourceInterface, n int) {
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("api%d", i)
		if err := networks.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			b.Fatal(err)
		}
		if crs == nil {
			continue
		}
		if err := crs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			b.Fatal(err)
		}
	}
	var left string
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		tl, err := networks.List(ctx, metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		crsLeft := 0
		if crs != nil {
			cl, err := crs.List(ctx, metav1.ListOptions{})
			if err != nil {
				b.Fatal(err)
			}
			crsLeft = len(cl.Items)
		}
		if len(tl.Items) == 1 && crsLeft == 0 {
			return
		}
		left = fmt.Sprintf("%d tenant Networks (want the default one), %d custom resources", len(tl.Items), crsLeft)
	}
	b.Fatalf("the measured objects were not gone after 5 minutes: %s", left)
}

// waitHostSettled waits until kube-controller-manager has given every host
// namespace its default ServiceAccount: after a populate it is still
// writing them when the syncer has caught up (more so the larger the
// populate), and every request that crosses kube-apiserver would be
// measured beside that backlog. It logs how long it waited.
func waitHostSettled(ctx context.Context, b *testing.B, host kubernetes.Interface) {
	start := time.Now()
	var namespaces, accounts int
	for deadline := start.Add(15 * time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Second) {
		// The namespaces counted from one page of one (no selector, so
		// the list says how many remain); the default ServiceAccounts
		// from the watch cache.
		nl, err := host.CoreV1().Namespaces().List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		namespaces = len(nl.Items)
		if nl.RemainingItemCount != nil {
			namespaces += int(*nl.RemainingItemCount)
		}
		sl, err := host.CoreV1().ServiceAccounts(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=default", ResourceVersion: "0"})
		if err != nil {
			b.Fatal(err)
		}
		accounts = len(sl.Items)
		if accounts >= namespaces {
			b.Logf("the host settled %s after the syncer: %d namespaces, each with its default ServiceAccount", time.Since(start).Round(time.Second), namespaces)
			return
		}
	}
	b.Fatalf("the host had not settled after 15 minutes: %d namespaces, %d default ServiceAccounts", namespaces, accounts)
}

// fillHostCRs creates crPerHostNamespace custom resources in every host
// namespace the syncer made.
func fillHostCRs(ctx context.Context, b *testing.B, s *stack.Stack, dyn dynamic.Interface) {
	host := mustHost(b, s)
	var names []string
	opts := metav1.ListOptions{LabelSelector: hostnames.TenantLabel, Limit: 5000}
	for {
		l, err := host.CoreV1().Namespaces().List(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		for _, ns := range l.Items {
			names = append(names, ns.Name)
		}
		if opts.Continue = l.Continue; opts.Continue == "" {
			break
		}
	}
	start := time.Now()
	var jobs []job
	for _, ns := range names {
		jobs = append(jobs, func(ctx context.Context) error {
			for j := 0; j < crPerHostNamespace; j++ {
				if _, err := dyn.Resource(benchNetworks).Namespace(ns).Create(ctx, benchNetwork(fmt.Sprintf("net%d", j), j), metav1.CreateOptions{}); ignoreExists(err) != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := runJobs(ctx, populateWorkers, jobs); err != nil {
		b.Fatal(err)
	}
	b.Logf("created %d custom resources in %d host namespaces in %s", len(names)*crPerHostNamespace, len(names), time.Since(start).Round(time.Second))
}

// watchSet is n open watches of one collection, each recording when it
// first saw an object by name.
type watchSet struct {
	mu     sync.Mutex
	seen   []map[string]time.Time
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// openWatches opens n watches from the collection's current
// resourceVersion and returns once every one is open.
func openWatches(ctx context.Context, b *testing.B, n int, open func(context.Context, string) (watch.Interface, error), rv func() (string, error)) *watchSet {
	ctx, cancel := context.WithCancel(ctx)
	ws := &watchSet{seen: make([]map[string]time.Time, n), cancel: cancel}
	from, err := rv()
	if err != nil {
		b.Fatal(err)
	}
	sem := make(chan struct{}, 50)
	var opened sync.WaitGroup
	var failed atomic.Value
	for i := 0; i < n; i++ {
		ws.seen[i] = map[string]time.Time{}
		opened.Add(1)
		ws.done.Add(1)
		go func() {
			defer ws.done.Done()
			sem <- struct{}{}
			w, err := open(ctx, from)
			<-sem
			opened.Done()
			if err != nil {
				failed.Store(err)
				return
			}
			defer w.Stop()
			for e := range w.ResultChan() {
				if e.Type != watch.Added {
					continue
				}
				at := time.Now()
				m, ok := e.Object.(metav1.Object)
				if !ok {
					continue
				}
				ws.mu.Lock()
				if _, dup := ws.seen[i][m.GetName()]; !dup {
					ws.seen[i][m.GetName()] = at
				}
				ws.mu.Unlock()
			}
		}()
	}
	opened.Wait()
	if err, _ := failed.Load().(error); err != nil {
		cancel()
		b.Fatal(err)
	}
	return ws
}

// fanOut runs write, which creates the object name, and waits until every
// watch has seen it: it returns how long that took from the start of the
// write and each watch's own time.
func (ws *watchSet) fanOut(ctx context.Context, b *testing.B, name string, write func() error) (time.Duration, []time.Duration) {
	t0 := time.Now()
	if err := write(); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		ws.mu.Lock()
		missing := 0
		for _, s := range ws.seen {
			if _, ok := s[name]; !ok {
				missing++
			}
		}
		if missing == 0 {
			each := make([]time.Duration, 0, len(ws.seen))
			for _, s := range ws.seen {
				each = append(each, s[name].Sub(t0))
			}
			ws.mu.Unlock()
			sort.Slice(each, func(i, j int) bool { return each[i] < each[j] })
			return each[len(each)-1], each
		}
		ws.mu.Unlock()
		if time.Now().After(deadline) || ctx.Err() != nil {
			b.Fatalf("%d of %d watches never saw %s", missing, len(ws.seen), name)
		}
		time.Sleep(time.Millisecond)
	}
}

func (ws *watchSet) stop() {
	ws.cancel()
	ws.done.Wait()
}

// syncerWork reads, from tenant-apiserver's metrics, the syncer's work so
// far: reconciles (and those that failed) and queue adds by controller,
// failed host writes by kind, and the host health probe's changes of
// reachability.
func syncerWork(ctx context.Context, b *testing.B, s *stack.Stack) map[string]float64 {
	metrics, err := s.TenantMetrics(ctx)
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(metrics, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		x, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		var key string
		switch {
		case strings.HasPrefix(f[0], "tenant_syncer_reconciles_total{"):
			key = "reconciles " + labelValue(f[0], "controller")
			if labelValue(f[0], "result") == "error" {
				out["failed reconciles "+labelValue(f[0], "controller")] += x
			}
		case strings.HasPrefix(f[0], "tenant_syncer_host_write_errors_total{"):
			key = "host write errors " + labelValue(f[0], "kind")
		case strings.HasPrefix(f[0], "workqueue_adds_total{"):
			key = "queue adds " + labelValue(f[0], "name")
		case strings.HasPrefix(f[0], "tenant_syncer_host_reachability_changes_total{"):
			key = "reachability changes to " + labelValue(f[0], "state")
		default:
			continue
		}
		out[key] += x
	}
	return out
}

// labelValue returns the value of label name in a metric's series name.
func labelValue(series, name string) string {
	i := strings.Index(series, name+`="`)
	if i < 0 {
		return ""
	}
	v := series[i+len(name)+2:]
	if j := strings.IndexByte(v, '"'); j >= 0 {
		v = v[:j]
	}
	return v
}

// logSyncerWork prints the syncer's work between two syncerWork readings
// (before nil: since the start), largest first, at once.
func logSyncerWork(when string, before, after map[string]float64) {
	type entry struct {
		key string
		n   float64
	}
	var work []entry
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			work = append(work, entry{k, d})
		}
	}
	sort.Slice(work, func(i, j int) bool { return work[i].n > work[j].n })
	parts := make([]string, len(work))
	for i, e := range work {
		parts[i] = fmt.Sprintf("%s %.0f", e.key, e.n)
	}
	fmt.Printf("  syncer work %s: %s\n", when, strings.Join(parts, ", "))
}

// collectGarbage has tenant-apiserver and kube-apiserver each run a full
// collection (the heap profile's gc=1) and logs how long they took. The
// populate and the host's fill leave a heap's worth of garbage behind
// them, four times as much at 10,000 tenants as at 2,000; without this its
// collection falls into the timed requests at one size and not at the
// other, and is timed as theirs.
func collectGarbage(ctx context.Context, b *testing.B, s *stack.Stack) {
	for _, p := range debugServers(s) {
		start := time.Now()
		if _, err := fetchDebug(ctx, p.cfg, p.url+"/debug/pprof/heap?gc=1"); err != nil {
			b.Fatalf("a collection in %s: %v", p.name, err)
		}
		b.Logf("%s collected its garbage in %s", p.name, time.Since(start).Round(time.Millisecond))
	}
}

// hostHeapProfile saves, when BENCH_PROFILE_DIR is set, the host
// kube-apiserver's heap profile as of its last collection (none is forced:
// the watches timed next would pay for it) into dir/<step>.pprof: what
// the host holds for the tenants stored.
func hostHeapProfile(ctx context.Context, b *testing.B, s *stack.Stack, step string) {
	dir := os.Getenv("BENCH_PROFILE_DIR")
	if dir == "" {
		return
	}
	path := filepath.Join(dir, step+".pprof")
	if err := fetchProfile(ctx, s.RESTConfig(stack.AdminUser), s.KubeAPIServerURL()+"/debug/pprof/heap", path); err != nil {
		b.Logf("profile %s: %v", path, err)
	}
}
