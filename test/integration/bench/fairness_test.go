package bench

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	tenantapi "tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/pkg/syncer/onboarding"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// tenantsLevel is the priority level of artifacts/deploy that every
// tenant's FlowSchema names.
const tenantsLevel = "tenant-workloads"

// BenchmarkHostFairness measures what quiet tenants' requests to the host
// kube-apiserver wait while one tenant floods it, with the shipped flow
// control (each tenant one flow of tenant-workloads) and without it (the
// level deleted for the round: the tenants' FlowSchemas dangle, and their
// users fall in global-default, one flow per user), in turns on one stack.
//
// The host kube-apiserver has BENCH_FAIRNESS_SEATS seats in all (150:
// a quarter of its default), so that the flood fills every priority
// level, the seats they borrow included, before it fills the machine's
// cores. The noisy tenant has BENCH_FAIRNESS_USERS users (members through the
// host group tenant.io:<tenant>), each keeping BENCH_FAIRNESS_IN_FLIGHT
// dry-run ConfigMap creates in flight in its host namespace, which a
// webhook holds for BENCH_FAIRNESS_HOLD: the requests keep their seats
// without costing CPU. BENCH_FAIRNESS_QUIET quiet tenants' members each
// list ConfigMaps in their own host namespace, one request at a time,
// for BENCH_FAIRNESS_ROUND per round.
func BenchmarkHostFairness(b *testing.B) {
	if b.N > 1 {
		b.Fatal("BenchmarkHostFairness runs its rounds once (-benchtime 1x)")
	}
	users, inFlight, quiet, rounds := envInt(b, "BENCH_FAIRNESS_USERS", 32), envInt(b, "BENCH_FAIRNESS_IN_FLIGHT", 16),
		envInt(b, "BENCH_FAIRNESS_QUIET", 4), envInt(b, "BENCH_FAIRNESS_ROUNDS", 2)
	hold, round := envDuration(b, "BENCH_FAIRNESS_HOLD", time.Second), envDuration(b, "BENCH_FAIRNESS_ROUND", 20*time.Second)
	z := syncSizes{tenants: 1 + quiet, workers: 1 + quiet, perTenant: 1}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seats := envInt(b, "BENCH_FAIRNESS_SEATS", 150)
	s, stop := benchStack(ctx, b, "", z.tenants, func(o *stack.Options) {
		o.SkipOVNKube = true
		o.SkipMetalLB = true
		// A small host, so that the flood fills every level, borrowed
		// seats included, before it fills the machine's two cores.
		o.KubeAPIServerArgs = append(o.KubeAPIServerArgs,
			fmt.Sprintf("--max-requests-inflight=%d", seats*2/3), fmt.Sprintf("--max-mutating-requests-inflight=%d", seats/3))
	})
	defer stop()
	r := &syncRun{b: b, z: z, s: s, seen: newFirstSeen()}
	r.clients()
	r.tenantsReadyWatched(ctx)

	// Tenant 0 is the noisy one; each tenant's host namespace of its
	// Namespace default.
	hostNS := make([]string, z.tenants)
	for i := range z.tenants {
		tn, err := r.admin.TenantV1alpha1().Tenants().Get(ctx, syncTenantName(i), metav1.GetOptions{})
		if err != nil {
			b.Fatal(err)
		}
		hostNS[i] = hostnames.Namespace(tn.Name, tn.UID, "default")
		if err := waitHostNamespace(ctx, r.host, hostNS[i]); err != nil {
			b.Fatal(err)
		}
	}
	level := newTenantsLevel(ctx, b, r.host)
	level.waitSchemas(ctx, b, syncTenantName(0), true)

	stopWebhook := holdConfigMapCreates(ctx, b, r.host, "bench-fairness", hostNS[0], hold)
	defer stopWebhook()
	noise := startNoisyTenant(ctx, r, syncTenantName(0), hostNS[0], users, inFlight)
	// APF lends an idle level's seats and takes them back every 10 s.
	time.Sleep(15 * time.Second)

	b.ResetTimer()
	results := map[bool][]time.Duration{}
	for i := 0; i < rounds; i++ {
		for _, shipped := range []bool{true, false} {
			level.set(ctx, b, shipped)
			noiseBefore := noise.counts()
			d := quietRound(ctx, r, hostNS[1:], round)
			noiseAfter := noise.counts()
			results[shipped] = append(results[shipped], d...)
			r.notef("round %d, %s: quiet tenants' %d requests p50 %.1f ms, p99 %.1f ms; the noisy tenant's meanwhile: %d done, %d failed",
				i, flowControlName(shipped), len(d), pctl(d, 50), pctl(d, 99), noiseAfter[0]-noiseBefore[0], noiseAfter[1]-noiseBefore[1])
		}
	}
	b.StopTimer()
	done, failed := noise.stop()
	level.set(ctx, b, true)
	for _, shipped := range []bool{true, false} {
		d := results[shipped]
		name := map[bool]string{true: "shipped", false: "without"}[shipped]
		b.ReportMetric(pctl(d, 50), "quiet-"+name+"-p50-ms")
		b.ReportMetric(pctl(d, 99), "quiet-"+name+"-p99-ms")
		r.rows = append(r.rows, row{"quiet tenants' host list, " + flowControlName(shipped), len(d), pctl(d, 50), pctl(d, 99)})
	}
	if with := pctl(results[true], 99); with > 0 {
		b.ReportMetric(pctl(results[false], 99)/with, "p99-without/shipped")
	}
	r.notef("the noisy tenant: %d users with %d requests in flight each, held %s by a webhook: %d done, %d failed (429s past its queue, retried by client-go until they give up)",
		users, inFlight, hold, done, failed)
	r.reportAs(fmt.Sprintf("BenchmarkHostFairness: quiet tenants' host request latency under a noisy tenant's flood (%d quiet tenants, one request at a time each)", quiet))
}

func flowControlName(shipped bool) string {
	if shipped {
		return "each tenant one flow (shipped)"
	}
	return "one flow per user (without)"
}

// envDuration reads a duration from the environment, def if unset.
func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		b.Fatalf("%s=%q: want a positive duration", name, v)
	}
	return d
}

// waitHostNamespace waits until the host namespace exists.
func waitHostNamespace(ctx context.Context, host kubernetes.Interface, name string) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, syncTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := host.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		return err == nil, nil
	})
}

// quietRound has each quiet tenant's member list ConfigMaps in its host
// namespace, one request at a time, for d, and returns every request's
// duration.
func quietRound(ctx context.Context, r *syncRun, namespaces []string, d time.Duration) []time.Duration {
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for i, ns := range namespaces {
		client, err := kubernetes.NewForConfig(framework.Unthrottled(r.s.RESTConfig(syncTenantUser(i + 1).Name)))
		if err != nil {
			r.b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) && ctx.Err() == nil {
				start := time.Now()
				if _, err := client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
					if ctx.Err() == nil {
						r.b.Errorf("quiet tenant's list in %s: %v", ns, err)
					}
					return
				}
				took := time.Since(start)
				mu.Lock()
				all = append(all, took)
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	return all
}

// startNoisyTenant starts users members of tenant (by its host group),
// each keeping inFlight dry-run ConfigMap creates in flight in namespace.
func startNoisyTenant(ctx context.Context, r *syncRun, tenant, namespace string, users, inFlight int) *busyLoad {
	return startLoad(ctx, r, namespace, users, inFlight, func(u int) rest.ImpersonationConfig {
		return rest.ImpersonationConfig{UserName: fmt.Sprintf("noisy-%02d", u), Groups: []string{"tenant.io:" + tenant, "system:authenticated"}}
	})
}

// tenantsLevelObject is the tenants' priority level as the stack applied
// it, to delete and create again between rounds.
type tenantsLevelObject struct {
	host    kubernetes.Interface
	object  *flowcontrolv1.PriorityLevelConfiguration
	present bool
}

func newTenantsLevel(ctx context.Context, b *testing.B, host kubernetes.Interface) *tenantsLevelObject {
	o, err := host.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, tenantsLevel, metav1.GetOptions{})
	if err != nil {
		b.Fatalf("priority level %s of artifacts/deploy: %v", tenantsLevel, err)
	}
	return &tenantsLevelObject{host: host, object: o, present: true}
}

// set creates or deletes the level, waits until the host's configuration
// controller has seen it (the tenants' FlowSchemas dangle without it), and
// then for APF's seat lending to settle.
func (l *tenantsLevelObject) set(ctx context.Context, b *testing.B, present bool) {
	b.Helper()
	if present == l.present {
		return
	}
	api := l.host.FlowcontrolV1().PriorityLevelConfigurations()
	var err error
	if present {
		_, err = api.Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: l.object.Name, Labels: l.object.Labels, Annotations: l.object.Annotations},
			Spec:       l.object.Spec,
		}, metav1.CreateOptions{})
	} else {
		err = api.Delete(ctx, l.object.Name, metav1.DeleteOptions{})
	}
	if err != nil {
		b.Fatal(err)
	}
	l.present = present
	l.waitSchemas(ctx, b, syncTenantName(1), present)
	time.Sleep(12 * time.Second)
}

// waitSchemas waits until tenant's FlowSchema is dangling or not, as the
// level is absent or present.
func (l *tenantsLevelObject) waitSchemas(ctx context.Context, b *testing.B, tenant string, present bool) {
	b.Helper()
	want := flowcontrolv1.ConditionTrue
	if present {
		want = flowcontrolv1.ConditionFalse
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, syncTimeout, true, func(ctx context.Context) (bool, error) {
		fs, err := l.host.FlowcontrolV1().FlowSchemas().Get(ctx, "tenant.io-"+tenant, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range fs.Status.Conditions {
			if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
				return c.Status == want, nil
			}
		}
		return false, nil
	}); err != nil {
		b.Fatalf("FlowSchema tenant.io-%s never became Dangling=%s: %v", tenant, want, err)
	}
}

// BenchmarkHostClassification measures what the tenants' FlowSchemas cost
// the host's requests that match none of them: APF tries a request against
// every FlowSchema in order of precedence until one matches, and the
// tenants' (8500) come before service-accounts (9000) and global-default
// (9900). In turns on one stack, with BENCH_CLASSIFY_TENANTS FlowSchemas
// shaped like the syncer's (a tenant's group and the service accounts of
// BENCH_CLASSIFY_NAMESPACES host namespaces) and without them, a service
// account of no tenant reads one ConfigMap BENCH_CLASSIFY_REQUESTS times,
// one request at a time.
func BenchmarkHostClassification(b *testing.B) {
	if b.N > 1 {
		b.Fatal("BenchmarkHostClassification runs its rounds once (-benchtime 1x)")
	}
	tenants, namespaces, requests, rounds := envInt(b, "BENCH_CLASSIFY_TENANTS", 2000), envInt(b, "BENCH_CLASSIFY_NAMESPACES", 10),
		envInt(b, "BENCH_CLASSIFY_REQUESTS", 2000), envInt(b, "BENCH_CLASSIFY_ROUNDS", 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, stop := benchStack(ctx, b, "", 0, func(o *stack.Options) {
		o.SkipOVNKube = true
		o.SkipMetalLB = true
	})
	defer stop()
	admin, err := kubernetes.NewForConfig(framework.Unthrottled(s.RESTConfig(stack.AdminUser)))
	if err != nil {
		b.Fatal(err)
	}
	const ns, label = "bench-classify", "bench.tenant.io/classify"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	cfg := framework.Unthrottled(s.RESTConfig(stack.AdminUser))
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":reader",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	reader, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	schemas := admin.FlowcontrolV1().FlowSchemas()
	create := func() {
		var jobs []job
		for i := range tenants {
			jobs = append(jobs, func(ctx context.Context) error {
				tn := fmt.Sprintf("c%05d", i)
				var hostNamespaces []string
				for j := range namespaces {
					hostNamespaces = append(hostNamespaces, fmt.Sprintf("%s-abcdef-ns%d", tn, j))
				}
				fs := onboarding.FlowSchema(&tenantapi.Tenant{ObjectMeta: metav1.ObjectMeta{Name: tn, UID: "uid"}}, hostNamespaces)
				fs.Labels = map[string]string{label: ""}
				fs.Annotations = nil
				_, err := schemas.Create(ctx, fs, metav1.CreateOptions{})
				return err
			})
		}
		if err := runJobs(ctx, 10, jobs); err != nil {
			b.Fatal(err)
		}
	}
	remove := func() {
		if err := schemas.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: label}); err != nil {
			b.Fatal(err)
		}
	}
	settle := envDuration(b, "BENCH_CLASSIFY_SETTLE", 30*time.Second)
	var cpu []string
	measure := func() []time.Duration {
		// The host's configuration controller digests the objects, and
		// writes each one's status, through an informer: let it finish.
		time.Sleep(settle)
		before := takeCPU(s)
		defer func() { cpu = append(cpu, before.since(s)) }()
		out := make([]time.Duration, 0, requests)
		for range requests {
			start := time.Now()
			if _, err := reader.CoreV1().ConfigMaps(ns).Get(ctx, "probe", metav1.GetOptions{}); err != nil && !apierrors.IsForbidden(err) {
				b.Fatal(err)
			}
			out = append(out, time.Since(start))
		}
		return out
	}
	b.ResetTimer()
	var with, without []time.Duration
	for range rounds {
		create()
		with = append(with, measure()...)
		remove()
		without = append(without, measure()...)
	}
	b.StopTimer()
	b.ReportMetric(pctl(with, 50), "with-p50-ms")
	b.ReportMetric(pctl(without, 50), "without-p50-ms")
	b.ReportMetric(pctl(with, 99), "with-p99-ms")
	b.ReportMetric(pctl(without, 99), "without-p99-ms")
	for i, c := range cpu {
		fmt.Printf("  round %d, %s: %s\n", i/2, map[bool]string{true: "with", false: "without"}[i%2 == 0], c)
	}
	printTable(os.Stdout, fmt.Sprintf("BenchmarkHostClassification: a request that matches no tenant's FlowSchema, with %d of them (%d namespaces each) and without", tenants, namespaces),
		[]row{{"with the tenants' FlowSchemas", len(with), pctl(with, 50), pctl(with, 99)}, {"without", len(without), pctl(without, 50), pctl(without, 99)}})
}

// tenantsReadyWatched is tenantsReady with the watch of the Tenants it
// times running for its length.
func (r *syncRun) tenantsReadyWatched(ctx context.Context) {
	tenantsCtx, stop := context.WithCancel(ctx)
	defer stop()
	_, synced := watchTenantsReady(tenantsCtx, r.admin, r.seen)
	if !cache.WaitForCacheSync(ctx.Done(), synced) {
		r.b.Fatal("the watch of the Tenants never synced")
	}
	r.tenantsReady(ctx)
}
