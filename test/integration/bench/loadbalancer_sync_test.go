package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/loadbalancer"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// lbSizes are the sizes of BenchmarkLoadBalancerSync. The defaults are the
// figures in docs/perf/host-kinds.md; BENCH_LB_* environment variables override them for a
// quicker run (e.g. BENCH_LB_TENANTS=2 BENCH_LB_PER_TENANT=3).
type lbSizes struct {
	tenants   int // BENCH_LB_TENANTS: Tenants, each with its public IPs
	perTenant int // BENCH_LB_PER_TENANT: LoadBalancers each tenant creates in the burst
	workers   int // BENCH_LB_WORKERS: concurrent creates of each side in the burst
	oneByOne  int // BENCH_LB_ONE_BY_ONE: LoadBalancers each tenant creates one by one before the burst (0: none)
	// BENCH_LB_ONE_PAUSE: the pause after each object of the one-by-one
	// step, so that MetalLB's controller stays below its client's rate
	// limit (20 requests/s, burst 30, the controller-runtime default).
	pause time.Duration
}

// The demo public pool (artifacts/examples/addresspools.yaml) holds
// 203.0.113.1-254 but the simulated nodes' .251-.253; the direct side's MetalLB pool is another /24 of the
// documentation ranges, also without its network and broadcast addresses.
const demoPublicPoolSize = 251

var lbDirectRange = netip.MustParsePrefix("198.51.100.0/24")

func lbSizesFromEnv() (lbSizes, error) {
	z := lbSizes{tenants: 10, perTenant: 10, workers: 10, oneByOne: 1, pause: 100 * time.Millisecond}
	if err := intsFromEnv(
		intSetting{"BENCH_LB_TENANTS", &z.tenants, 1},
		intSetting{"BENCH_LB_PER_TENANT", &z.perTenant, 1},
		intSetting{"BENCH_LB_WORKERS", &z.workers, 1},
		intSetting{"BENCH_LB_ONE_BY_ONE", &z.oneByOne, 0},
	); err != nil {
		return z, err
	}
	if s := os.Getenv("BENCH_LB_ONE_PAUSE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return z, fmt.Errorf("BENCH_LB_ONE_PAUSE: %w", err)
		}
		z.pause = d
	}
	switch {
	case z.tenants*z.publicIPs() > demoPublicPoolSize:
		return z, fmt.Errorf("%d tenants x %d public IPs: the demo public pool holds %d", z.tenants, z.publicIPs(), demoPublicPoolSize)
	case z.tenants*(z.perTenant+z.oneByOne) > 254:
		return z, fmt.Errorf("%d direct Services: the direct pool (%s) holds 254 addresses", z.tenants*(z.perTenant+z.oneByOne), lbDirectRange)
	}
	return z, nil
}

// publicIPs is the public IP count (and LoadBalancer quota) of each
// tenant: at least 10, at least its LoadBalancers.
func (z lbSizes) publicIPs() int { return max(10, z.perTenant+z.oneByOne) }

// The direct side: a host namespace and a MetalLB pool of its own, of the
// shape of a tenant's (pkg/syncer/onboarding/metallb.go), and its Services.
const (
	lbDirectNamespace = "bench-direct"
	lbDirectPool      = "bench-direct"
)

// benchLBName names LoadBalancer j (1-based) of a tenant; its host Service
// is "lb-web-001".
func benchLBName(j int) string { return fmt.Sprintf("web-%03d", j) }

// oneLBName names LoadBalancer j (1-based) of a tenant created one at a time.
func oneLBName(j int) string { return fmt.Sprintf("one-%03d", j) }

// lbDirectService names direct Service k, as long as the syncer's.
func lbDirectService(k int) string { return fmt.Sprintf("lb-dir-%03d", k) }

// Keys of firstSeen. A tenant LoadBalancer t/ns/name is timed to lbKey
// (its status.address set, in its member's watch); on the way its host
// Service is first seen (lbSvcKey) and then shows MetalLB's address
// (lbIPKey). A direct Service is timed to dirIPKey (its ingress set) and
// first seen at dirSvcKey. Host Services of both sides are seen in one
// watch, so both pay the same delivery cost.
func lbKey(t, ns, name string) string    { return "lb/" + t + "/" + ns + "/" + name }
func lbSvcKey(t, ns, name string) string { return "lbsvc/" + t + "/" + ns + "/" + name }
func lbIPKey(t, ns, name string) string  { return "lbip/" + t + "/" + ns + "/" + name }
func dirSvcKey(name string) string       { return "dirsvc/" + name }
func dirIPKey(name string) string        { return "dirip/" + name }

// BenchmarkLoadBalancerSync measures the LoadBalancer sync on a
// stack of its own, in one run: 10 Tenants with 11 public IPs each are
// created and Ready; a host namespace and a MetalLB pool of the tenants'
// shape are made for the Services created directly. Then, side by side:
//
//  1. One by one: one LoadBalancer per tenant and as many direct Services,
//     in turns, each create waiting for its address and then 100 ms, so
//     that nothing else is in MetalLB's queue: the latency of one.
//  2. Burst: 100 tenant LoadBalancers (10 per tenant, each tenant's member
//     creating its own through the aggregator without spec.address, 10 at
//     a time) and, at the same time, 100 Services of type LoadBalancer
//     created directly on the host by the admin, 10 at a time.
//
// A LoadBalancer is timed from the start of its create request to the
// first event of its member's watch that shows status.address; a direct
// Service to the first event of a watch of host Services that shows its
// ingress address. The same MetalLB controller assigns both sides. The
// stages of the tenant side (host Service made by the syncer, MetalLB's
// address on it) are seen in the same watch of host Services;
// tenant-apiserver's and kube-apiserver's /metrics tell how long the
// tenant-apiserver served each create, what it asked etcd, and what the
// host wrote. Then every LoadBalancer's address is checked: one of its
// tenant's public IPs, none twice. See lbSizes for the BENCH_LB_*
// variables that change the sizes; BENCH_LB_TENANT_APISERVER_ARGS adds
// tenant-apiserver flags and BENCH_LB_DUMP writes every key's start and
// first sighting as CSV.
func BenchmarkLoadBalancerSync(b *testing.B) {
	if b.N > 1 {
		b.Fatal("BenchmarkLoadBalancerSync fills its stack: run it once (-benchtime 1x)")
	}
	z, err := lbSizesFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	s, stop := benchStack(ctx, b, "BENCH_LB_TENANT_APISERVER_ARGS", z.tenants, nil)
	defer stop()
	b.Logf("load balancer sync stack in %s (started in %s), sizes %+v", s.WorkDir(), s.StartDuration().Round(time.Millisecond), z)
	r := &lbRun{syncRun: syncRun{b: b, z: syncSizes{tenants: z.tenants, workers: z.workers}, s: s, seen: newFirstSeen()}, lz: z}
	r.clients()
	if r.dyn, err = dynamic.NewForConfig(framework.Unthrottled(s.RESTConfig(stack.AdminUser))); err != nil {
		b.Fatal(err)
	}

	// One watch of every host Service for the whole run; one of Tenants
	// for the onboarding only. The watches end before the stack stops.
	watchCtx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	tenantsCtx, stopTenants := context.WithCancel(watchCtx)
	svcSynced := watchLBServices(watchCtx, r.host, r.seen)
	_, tenantsSynced := watchTenantsReady(tenantsCtx, r.admin, r.seen)
	if !cache.WaitForCacheSync(ctx.Done(), svcSynced, tenantsSynced) {
		b.Fatal("the watches never synced")
	}

	b.ResetTimer()
	r.t0 = time.Now()
	r.onboard(ctx)
	stopTenants()
	r.direct(ctx)
	r.watchMembers(watchCtx)
	r.returned = map[string]time.Time{}
	r.created = map[string]*tenantv1alpha1.LoadBalancer{}
	// The onboarding's last status writes and MetalLB's reload of the
	// pools settle before the measurements.
	time.Sleep(3 * time.Second)
	r.oneByOne(ctx)
	r.burst(ctx)
	b.StopTimer()
	r.check(ctx)
	r.report()
	if path := os.Getenv("BENCH_LB_DUMP"); path != "" {
		if err := r.seen.dump(path, r.t0); err != nil {
			b.Error(err)
		}
	}
}

// lbRun is the state of one BenchmarkLoadBalancerSync run.
type lbRun struct {
	syncRun
	lz  lbSizes
	dyn dynamic.Interface

	// Filled by onboard, by tenant index.
	publicIPs [][]string
	// The members' watches of LoadBalancers, by tenant index.
	lbStores []cache.Store
	// Filled by sideBySide, by measured key (lbKey, dirIPKey): when each
	// create returned, and the LoadBalancers as their create returned them.
	mu       sync.Mutex
	returned map[string]time.Time
	created  map[string]*tenantv1alpha1.LoadBalancer
}

// done notes that the create of key returned now, with obj if a LoadBalancer.
func (r *lbRun) done(key string, lb *tenantv1alpha1.LoadBalancer) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.returned[key] = now
	if lb != nil {
		r.created[key] = lb
	}
}

// seenAt is when key was first seen (zero: never).
func seenAt(f *firstSeen, key string) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[key]
}

// returnedAt is when the create of key returned.
func (r *lbRun) returnedAt(key string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.returned[key]
}

// gaps is, for each i, to(i) - from(i): the time one stage took.
func gaps(n int, from, to func(i int) time.Time) []time.Duration {
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, to(i).Sub(from(i)))
	}
	return out
}

// stage adds a row (and metrics <name>-p50-ms, -p99-ms) for a stage's durations.
func (r *lbRun) stage(name, what string, d []time.Duration) {
	r.b.ReportMetric(pctl(d, 50), name+"-p50-ms")
	r.b.ReportMetric(pctl(d, 99), name+"-p99-ms")
	r.rows = append(r.rows, row{what, len(d), pctl(d, 50), pctl(d, 99)})
}

// onboard creates the Tenants at once, waits until they are Ready and
// visible to their members, and notes their public IPs.
func (r *lbRun) onboard(ctx context.Context) {
	quota := int32(r.lz.publicIPs())
	prefix := int32(24)
	var keys []string
	var jobs []job
	var reqs durations
	for i := 0; i < r.lz.tenants; i++ {
		name := syncTenantName(i)
		keys = append(keys, tenantReadyKey(name))
		t := &tenantv1alpha1.Tenant{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: tenantv1alpha1.TenantSpec{
				Network:   tenantv1alpha1.TenantNetwork{PrefixLength: &prefix},
				PublicIPs: tenantv1alpha1.TenantPublicIPs{Count: quota},
				Quota:     tenantv1alpha1.TenantQuota{LoadBalancers: &quota},
			},
		}
		jobs = append(jobs, timedCreate(r.seen, tenantReadyKey(name), &reqs, func(ctx context.Context) error {
			_, err := r.admin.TenantV1alpha1().Tenants().Create(ctx, t, metav1.CreateOptions{})
			return err
		}))
	}
	cpu := takeCPU(r.s)
	start := time.Now()
	if err := runJobs(ctx, r.lz.workers, jobs); err != nil {
		r.b.Fatal(err)
	}
	if err := r.seen.waitSeen(ctx, keys, syncTimeout); err != nil {
		r.b.Fatal(err)
	}
	r.measure("tenant-ready", fmt.Sprintf("Tenant create -> Ready (%d public IPs each, %d at once)", quota, r.lz.tenants), keys)
	r.requests("   Tenant create request", &reqs)
	r.notef("onboarding: %d Tenants Ready %s after the first create", r.lz.tenants, r.seen.lastSeen(keys).Sub(start).Round(time.Millisecond))
	r.notef("  %s", cpu.since(r.s))

	var visible []job
	for i := 0; i < r.lz.tenants; i++ {
		visible = append(visible, func(ctx context.Context) error {
			return r.s.WaitTenantVisible(ctx, syncTenantUser(i).Name, syncTenantName(i))
		})
	}
	if err := runJobs(ctx, r.lz.workers, visible); err != nil {
		r.b.Fatal(err)
	}
	for i := 0; i < r.lz.tenants; i++ {
		t, err := r.admin.TenantV1alpha1().Tenants().Get(ctx, syncTenantName(i), metav1.GetOptions{})
		if err != nil {
			r.b.Fatal(err)
		}
		if len(t.Status.PublicIPs) != int(quota) {
			r.b.Fatalf("tenant %s is Ready with public IPs %v, want %d", t.Name, t.Status.PublicIPs, quota)
		}
		r.publicIPs = append(r.publicIPs, t.Status.PublicIPs)
	}
}

// direct makes the direct side's host namespace, its MetalLB pool (every
// address of lbDirectRange but the first and last, as /32s, never
// assigned automatically, allocated to that namespace only) and its L2
// advertisement, then checks with one Service that MetalLB assigns from
// the pool.
func (r *lbRun) direct(ctx context.Context) {
	if _, err := r.host.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: lbDirectNamespace}}, metav1.CreateOptions{}); err != nil {
		r.b.Fatal(err)
	}
	var addresses []string
	for a := lbDirectRange.Addr().Next(); lbDirectRange.Contains(a.Next()); a = a.Next() {
		addresses = append(addresses, a.String()+"/32")
	}
	for _, o := range []struct {
		gvr  schema.GroupVersionResource
		kind string
		spec interface{}
	}{
		{controller.IPAddressPools, "IPAddressPool", &metallbv1beta1.IPAddressPoolSpec{
			Addresses:  addresses,
			AutoAssign: ptr.To(false),
			AllocateTo: &metallbv1beta1.ServiceAllocation{Namespaces: []string{lbDirectNamespace}},
		}},
		{controller.L2Advertisements, "L2Advertisement", &metallbv1beta1.L2AdvertisementSpec{IPAddressPools: []string{lbDirectPool}}},
	} {
		spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o.spec)
		if err != nil {
			r.b.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: map[string]interface{}{"spec": spec}}
		u.SetGroupVersionKind(o.gvr.GroupVersion().WithKind(o.kind))
		u.SetName(lbDirectPool)
		u.SetNamespace(stack.MetalLBNamespace)
		if _, err := r.dyn.Resource(o.gvr).Namespace(stack.MetalLBNamespace).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			r.b.Fatalf("%s %s/%s: %v", o.kind, stack.MetalLBNamespace, lbDirectPool, err)
		}
	}

	// One Service outside the timing: MetalLB has the pool, and assigns
	// from it; it is deleted again, its address freed.
	const probe = "lb-dir-probe"
	start := time.Now()
	if _, err := r.host.CoreV1().Services(lbDirectNamespace).Create(ctx, directLBService(probe), metav1.CreateOptions{}); err != nil {
		r.b.Fatal(err)
	}
	if err := r.seen.waitSeen(ctx, []string{dirIPKey(probe)}, 2*time.Minute); err != nil {
		r.b.Fatalf("MetalLB never assigned an address of pool %s to Service %s/%s: %v", lbDirectPool, lbDirectNamespace, probe, err)
	}
	r.notef("direct pool: %d addresses; a probe Service got its address %s after its create",
		len(addresses), seenAt(r.seen, dirIPKey(probe)).Sub(start).Round(time.Millisecond))
	if err := r.host.CoreV1().Services(lbDirectNamespace).Delete(ctx, probe, metav1.DeleteOptions{}); err != nil {
		r.b.Fatal(err)
	}
}

// directLBService is a host Service of the shape the syncer makes for a
// LoadBalancer (type LoadBalancer, one port, a selector, the pool
// annotation), in the direct namespace, from the direct pool.
func directLBService(name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   lbDirectNamespace,
			Labels:      map[string]string{"bench.tenant.io/direct": "true"},
			Annotations: map[string]string{hostkinds.MetalLBAddressPoolAnnotation: lbDirectPool},
		},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
		},
	}
}

// benchLB is tenant LoadBalancer name: no address asked for, one port, a selector.
func benchLB(name string) *tenantv1alpha1.LoadBalancer {
	return &tenantv1alpha1.LoadBalancer{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: tenantv1alpha1.LoadBalancerSpec{
			Selector: map[string]string{"app": name},
			Ports:    []tenantv1alpha1.LoadBalancerPort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: tenantv1alpha1.ProtocolTCP}},
		},
	}
}

// watchMembers starts one watch of LoadBalancers per tenant, as its
// member, through the aggregator (tenant-apiserver shows a member the
// LoadBalancers of its own tenant only), and waits for their first list.
func (r *lbRun) watchMembers(ctx context.Context) {
	var synced []cache.InformerSynced
	for i := 0; i < r.lz.tenants; i++ {
		store, ok := watchLoadBalancers(ctx, r.members[i], syncTenantName(i), r.seen)
		r.lbStores = append(r.lbStores, store)
		synced = append(synced, ok)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		r.b.Fatal("the members' watches of LoadBalancers never synced")
	}
}

// step is one side-by-side measurement: each tenant creates count
// LoadBalancers named name(1..count) while as many Services named
// directName(1..) are created directly.
type step struct {
	title      string // what the summary calls it
	metric     string // prefix of its metrics
	name       func(j int) string
	directName func(k int) string
	count      int
	workers    int
	// oneByOne runs the creates of both sides, alternating, one after the
	// other, each waiting for its address and then for pause: the latency
	// with nothing else in MetalLB's queue.
	oneByOne bool
	pause    time.Duration
}

// oneByOne is the first measurement: one tenant LoadBalancer, then one
// direct Service, and so on, each waiting for its address.
func (r *lbRun) oneByOne(ctx context.Context) {
	if r.lz.oneByOne == 0 {
		return
	}
	r.sideBySide(ctx, step{
		title: "1. one by one", metric: "one-", name: oneLBName, directName: func(k int) string { return fmt.Sprintf("lb-one-%03d", k) },
		count: r.lz.oneByOne, workers: 1, oneByOne: true, pause: r.lz.pause,
	})
}

// burst is the measurement the sync goal is about: every LoadBalancer and direct Service
// at once, r.lz.workers creates in flight per side.
func (r *lbRun) burst(ctx context.Context) {
	r.sideBySide(ctx, step{
		title: "2. burst", name: benchLBName, directName: lbDirectService, count: r.lz.perTenant, workers: r.lz.workers,
	})
}

// sideBySide creates the tenant LoadBalancers and the direct host Services
// of st side by side, each side with its own workers (or, one by one, in
// turns), and waits for every address.
func (r *lbRun) sideBySide(ctx context.Context, st step) {
	const ns = "default"
	var syncKeys, svcKeys, ipKeys, directKeys, dirSvcKeys []string
	var syncJobs, directJobs []job
	var syncReqs, directReqs durations
	wait := func(key string, j job) job {
		if !st.oneByOne {
			return j
		}
		return func(ctx context.Context) error {
			if err := j(ctx); err != nil {
				return err
			}
			if err := r.seen.waitSeen(ctx, []string{key}, syncTimeout); err != nil {
				return err
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(st.pause):
				return nil
			}
		}
	}
	for j := 1; j <= st.count; j++ {
		for i := 0; i < r.lz.tenants; i++ {
			t, lb, c := syncTenantName(i), benchLB(st.name(j)), r.members[i]
			syncKey := lbKey(t, ns, lb.Name)
			syncKeys = append(syncKeys, syncKey)
			svcKeys = append(svcKeys, lbSvcKey(t, ns, lb.Name))
			ipKeys = append(ipKeys, lbIPKey(t, ns, lb.Name))
			syncJobs = append(syncJobs, wait(syncKey, timedCreate(r.seen, syncKey, &syncReqs, func(ctx context.Context) error {
				got, err := c.TenantV1alpha1().LoadBalancers(ns).Create(ctx, lb, metav1.CreateOptions{})
				if err != nil {
					return err
				}
				r.done(syncKey, got)
				return nil
			})))

			svc := directLBService(st.directName(len(directKeys) + 1))
			directKey := dirIPKey(svc.Name)
			directKeys = append(directKeys, directKey)
			dirSvcKeys = append(dirSvcKeys, dirSvcKey(svc.Name))
			directJobs = append(directJobs, wait(directKey, timedCreate(r.seen, directKey, &directReqs, func(ctx context.Context) error {
				if _, err := r.host.CoreV1().Services(lbDirectNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
					return err
				}
				r.done(directKey, nil)
				return nil
			})))
		}
	}
	before, err := r.serverMetrics(ctx)
	if err != nil {
		r.b.Fatal(err)
	}
	cpu := takeCPU(r.s)
	start := time.Now()
	errs := make([]error, 2)
	var ends [2]time.Time
	if st.oneByOne {
		var turns []job
		for k := range syncJobs {
			turns = append(turns, syncJobs[k], directJobs[k])
		}
		errs[0] = runJobs(ctx, 1, turns)
		ends[0] = time.Now()
		ends[1] = ends[0]
	} else {
		var wg sync.WaitGroup
		for side, jobs := range [][]job{syncJobs, directJobs} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[side] = runJobs(ctx, st.workers, jobs)
				ends[side] = time.Now()
			}()
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			r.b.Fatalf("%s: %v\n%s", st.title, err, r.pending(syncKeys))
		}
	}
	if err := r.seen.waitSeen(ctx, append(append([]string(nil), syncKeys...), directKeys...), syncTimeout); err != nil {
		r.b.Fatalf("%s: %v\n%s", st.title, err, r.pending(syncKeys))
	}
	cpuUse := cpu.since(r.s)
	after, err := r.serverMetrics(ctx)
	if err != nil {
		r.b.Fatal(err)
	}

	m := st.metric
	synced := r.measure(m+"lb-sync", fmt.Sprintf("%s: LoadBalancer -> status.address (%d x %d)", st.title, r.lz.tenants, st.count), syncKeys)
	r.requests("   LoadBalancer create request (aggregated)", &syncReqs)
	n := len(syncKeys)
	r.stage(m+"lb-svc", "   create returned -> host Service seen (syncer)", gaps(n,
		func(i int) time.Time { return r.returnedAt(syncKeys[i]) }, func(i int) time.Time { return seenAt(r.seen, svcKeys[i]) }))
	r.stage(m+"lb-ip", "   host Service seen -> its ingress IP seen (MetalLB)", gaps(n,
		func(i int) time.Time { return seenAt(r.seen, svcKeys[i]) }, func(i int) time.Time { return seenAt(r.seen, ipKeys[i]) }))
	r.stage(m+"lb-status", "   ingress IP seen -> LoadBalancer status seen (syncer)", gaps(n,
		func(i int) time.Time { return seenAt(r.seen, ipKeys[i]) }, func(i int) time.Time { return seenAt(r.seen, syncKeys[i]) }))
	direct := r.measure(m+"lb-direct", fmt.Sprintf("%s: direct host Service -> ingress IP (%d)", st.title, len(directKeys)), directKeys)
	r.requests("   host Service create request", &directReqs)
	n = len(directKeys)
	r.stage(m+"dir-svc", "   create returned -> host Service seen", gaps(n,
		func(i int) time.Time { return r.returnedAt(directKeys[i]) }, func(i int) time.Time { return seenAt(r.seen, dirSvcKeys[i]) }))
	r.stage(m+"dir-ip", "   host Service seen -> its ingress IP seen (MetalLB)", gaps(n,
		func(i int) time.Time { return seenAt(r.seen, dirSvcKeys[i]) }, func(i int) time.Time { return seenAt(r.seen, directKeys[i]) }))

	p50 := float64(percentile(synced, 50)) / float64(percentile(direct, 50))
	p99 := float64(percentile(synced, 99)) / float64(percentile(direct, 99))
	r.b.ReportMetric(p50, m+"sync/direct-p50")
	r.b.ReportMetric(p99, m+"sync/direct-p99")
	for _, side := range []struct {
		name string
		d    *durations
	}{{m + "lb-create", &syncReqs}, {m + "svc-create", &directReqs}} {
		all := side.d.all()
		r.b.ReportMetric(pctl(all, 50), side.name+"-p50-ms")
		r.b.ReportMetric(pctl(all, 99), side.name+"-p99-ms")
	}
	r.notef("%s: ratio sync / direct: p50 %.2f, p99 %.2f; creates done after %s (tenant) and %s (direct), last address after %s (LoadBalancer status) and %s (direct Service)",
		st.title, p50, p99, ends[0].Sub(start).Round(time.Millisecond), ends[1].Sub(start).Round(time.Millisecond),
		r.seen.lastSeen(syncKeys).Sub(start).Round(time.Millisecond), r.seen.lastSeen(directKeys).Sub(start).Round(time.Millisecond))
	for _, side := range []struct {
		what string
		keys []string
	}{{"LoadBalancer status.address", syncKeys}, {"direct Service ingress", directKeys}} {
		after := gaps(len(side.keys), func(i int) time.Time { return r.returnedAt(side.keys[i]) }, func(i int) time.Time { return seenAt(r.seen, side.keys[i]) })
		r.notef("  %s seen after the create returned: p50 %s, p99 %s",
			side.what, percentile(after, 50).Round(100*time.Microsecond), percentile(after, 99).Round(100*time.Microsecond))
	}
	r.noteServer(m, before, after, len(syncKeys), r.seen.lastSeen(append(append([]string(nil), syncKeys...), directKeys...)).Sub(start))
	r.notef("  %s", cpuUse)
}

// serverMetrics reads the request and etcd histograms of tenant-apiserver's
// own /metrics (the aggregator does not proxy it), and the request
// histogram of kube-apiserver, keyed "tenant/<series>" and "host/<series>".
func (r *lbRun) serverMetrics(ctx context.Context) (map[string]histogram, error) {
	out := map[string]histogram{}
	for _, from := range []struct {
		prefix string
		cfg    *rest.Config
		url    string
		names  []string
	}{
		{"tenant/", r.s.DirectTenantConfig(stack.AdminUser, "system:masters"), r.s.TenantAPIServerURL(),
			[]string{"apiserver_request_duration_seconds", "etcd_request_duration_seconds", "apiserver_watch_cache_read_wait_seconds"}},
		{"host/", r.s.RESTConfig(stack.AdminUser), r.s.KubeAPIServerURL(), []string{"apiserver_request_duration_seconds"}},
	} {
		m, err := scrapeHistograms(ctx, from.cfg, from.url, from.names...)
		if err != nil {
			return nil, err
		}
		for k, h := range m {
			out[from.prefix+k] = h
		}
	}
	return out, nil
}

// noteServer notes what tenant-apiserver measured itself over a step:
// how long it took to serve a LoadBalancer create, and the requests of its
// storage to etcd per LoadBalancer (the registry's, the syncer's status
// writes; the IPAM claims use an etcd client of their own, not counted),
// and the consistent reads served by a watch cache once it caught up; and
// the writes kube-apiserver served over the step's wall time (both sides,
// the syncer's, MetalLB's, the controller manager's).
func (r *lbRun) noteServer(metric string, before, after map[string]histogram, lbs int, wall time.Duration) {
	d := map[string]histogram{}
	for k, a := range after {
		b := before[k]
		if h := (histogram{a.sum - b.sum, a.count - b.count}); h.count > 0 {
			d[k] = h
		}
	}
	var create histogram
	var etcd, waits []string
	hostWrites := map[string]float64{}
	for k, h := range d {
		l := parseLabels(k)
		switch {
		case strings.HasPrefix(k, "host/apiserver_request_duration_seconds{"):
			switch l["verb"] {
			case "POST", "PUT", "PATCH", "APPLY", "DELETE":
				what := l["verb"] + " " + l["resource"]
				if l["subresource"] != "" {
					what += "/" + l["subresource"]
				}
				hostWrites[what] += h.count
			}
		case strings.HasPrefix(k, "tenant/apiserver_request_duration_seconds{") && l["verb"] == "POST" && l["resource"] == "loadbalancers" && l["subresource"] == "":
			create.sum += h.sum
			create.count += h.count
		case strings.HasPrefix(k, "tenant/etcd_request_duration_seconds{"):
			etcd = append(etcd, fmt.Sprintf("%s %s %.1f (mean %.1f ms)", l["operation"], l["resource"], h.count/float64(lbs), 1000*h.sum/h.count))
		case strings.HasPrefix(k, "tenant/apiserver_watch_cache_read_wait_seconds{"):
			waits = append(waits, fmt.Sprintf("%s %.1f (mean %.1f ms)", l["resource"], h.count/float64(lbs), 1000*h.sum/h.count))
		}
	}
	slices.Sort(etcd)
	slices.Sort(waits)
	if create.count > 0 {
		r.b.ReportMetric(1000*create.sum/create.count, metric+"lb-create-server-mean-ms")
		r.notef("  tenant-apiserver's own time for a LoadBalancer create (from its /metrics): mean %.1f ms over %.0f creates", 1000*create.sum/create.count, create.count)
	}
	r.notef("  tenant-apiserver's storage requests to etcd, per LoadBalancer: %s", strings.Join(etcd, ", "))
	r.notef("  consistent reads that waited for a watch cache to be fresh, per LoadBalancer: %s", strings.Join(waits, ", "))
	var writes []string
	for what, n := range hostWrites {
		writes = append(writes, fmt.Sprintf("%s %.0f", what, n))
	}
	slices.Sort(writes)
	r.notef("  kube-apiserver's writes over the %s until the last address: %s", wall.Round(time.Millisecond), strings.Join(writes, ", "))
}

// histogram is the sum and count of one histogram series.
type histogram struct{ sum, count float64 }

// scrapeHistograms reads, from the /metrics of the server at url, the sum
// and count of every series of the histograms names, keyed by
// "<name>{<labels>}".
func scrapeHistograms(ctx context.Context, cfg *rest.Config, url string, names ...string) (map[string]histogram, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("GET %s/metrics: %s: %s", url, resp.Status, body)
	}
	out := map[string]histogram{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		for _, name := range names {
			tail, ok := strings.CutPrefix(line, name)
			if !ok {
				continue
			}
			part, tail, ok := strings.Cut(tail, "{")
			if !ok || (part != "_sum" && part != "_count") {
				continue
			}
			labels, value, ok := strings.Cut(tail, "} ")
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil {
				continue
			}
			k := name + "{" + labels + "}"
			h := out[k]
			if part == "_sum" {
				h.sum = v
			} else {
				h.count = v
			}
			out[k] = h
		}
	}
	return out, sc.Err()
}

// parseLabels reads the labels of a series key "<name>{k="v",...}"
// (values without escaped quotes).
func parseLabels(key string) map[string]string {
	_, s, _ := strings.Cut(key, "{")
	s = strings.TrimSuffix(s, "}")
	out := map[string]string{}
	for s != "" {
		k, tail, ok := strings.Cut(s, "=\"")
		if !ok {
			break
		}
		v, tail, _ := strings.Cut(tail, "\"")
		out[strings.TrimPrefix(k, ",")] = v
		s = tail
	}
	return out
}

// pending describes, for the failure message, LoadBalancers of keys whose
// address was never seen: their spec.address and conditions.
func (r *lbRun) pending(keys []string) string {
	var lines []string
	for _, k := range keys {
		if !seenAt(r.seen, k).IsZero() {
			continue
		}
		parts := strings.Split(k, "/") // lb/<tenant>/<ns>/<name>
		line := k + ": not in the member's watch"
		for i := range r.lbStores {
			if syncTenantName(i) != parts[1] {
				continue
			}
			if obj, ok, _ := r.lbStores[i].GetByKey(parts[2] + "/" + parts[3]); ok {
				lb := obj.(*tenantv1alpha1.LoadBalancer)
				line = fmt.Sprintf("%s: spec.address %q, status %+v", k, lb.Spec.Address, lb.Status)
			}
		}
		lines = append(lines, line)
		if len(lines) == 3 {
			break
		}
	}
	return strings.Join(lines, "\n")
}

// check verifies, outside the timing, that every LoadBalancer of the burst
// has an address of its tenant's public IPs, none twice, and says how many
// had spec.address filled in by the registry.
func (r *lbRun) check(ctx context.Context) {
	const ns = "default"
	owner := map[string]string{}
	var problems []string
	filled, asked := 0, 0
	for i := 0; i < r.lz.tenants; i++ {
		list, err := r.members[i].TenantV1alpha1().LoadBalancers(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			r.b.Fatal(err)
		}
		byName := map[string]*tenantv1alpha1.LoadBalancer{}
		for k := range list.Items {
			byName[list.Items[k].Name] = &list.Items[k]
		}
		var names []string
		for j := 1; j <= r.lz.perTenant; j++ {
			names = append(names, benchLBName(j))
		}
		for j := 1; j <= r.lz.oneByOne; j++ {
			names = append(names, oneLBName(j))
		}
		for _, name := range names {
			who := syncTenantName(i) + "/" + ns + "/" + name
			lb := byName[name]
			if lb == nil {
				problems = append(problems, who+": not listed by its member")
				continue
			}
			addr := lb.Status.Address
			switch {
			case addr == "":
				problems = append(problems, who+": no status.address")
				continue
			case !slices.Contains(r.publicIPs[i], addr):
				problems = append(problems, fmt.Sprintf("%s: address %s is not one of the tenant's public IPs %v", who, addr, r.publicIPs[i]))
			case owner[addr] != "":
				problems = append(problems, fmt.Sprintf("%s: address %s is also %s's", who, addr, owner[addr]))
			}
			owner[addr] = who
			if c := r.created[lbKey(syncTenantName(i), ns, lb.Name)]; c != nil && c.Spec.Address != "" {
				filled++
			}
			if lb.Spec.Address != "" {
				asked++
				if lb.Spec.Address != addr {
					problems = append(problems, fmt.Sprintf("%s: spec.address %s but status.address %s", who, lb.Spec.Address, addr))
				}
			}
		}
	}
	total := r.lz.tenants * (r.lz.perTenant + r.lz.oneByOne)
	if len(problems) > 0 {
		r.b.Errorf("%d problems with the %d LoadBalancers' addresses, e.g.:\n%s", len(problems), total, strings.Join(problems[:min(5, len(problems))], "\n"))
		return
	}
	r.notef("check: all %d LoadBalancers have distinct addresses, each one of its tenant's public IPs; spec.address filled in by the create for %d of them, set now for %d (and equal to status.address)",
		total, filled, asked)
}

// report prints the summary table.
func (r *lbRun) report() {
	printTable(os.Stdout, fmt.Sprintf("BenchmarkLoadBalancerSync: create start -> address seen in a watch (%d tenants; %d LoadBalancers each one by one, then a burst of %d each, %d workers per side)",
		r.lz.tenants, r.lz.oneByOne, r.lz.perTenant, r.lz.workers), r.rows)
	for _, line := range r.summary {
		fmt.Fprintf(os.Stdout, "  %s\n", line)
	}
	fmt.Fprintln(os.Stdout)
}

// watchLBServices records in f, from one watch of every host Service (as
// the host admin), when each host Service of a tenant LoadBalancer (by its
// tenant.io/tenant, tenant.io/namespace and tenant.io/loadbalancer
// labels) and each Service of the direct namespace (by name) is first
// seen, and first seen with MetalLB's ingress address.
func watchLBServices(ctx context.Context, host kubernetes.Interface, f *firstSeen) cache.InformerSynced {
	record := func(obj interface{}) {
		now := time.Now()
		svc, ok := obj.(*corev1.Service)
		if !ok {
			return
		}
		assigned := hostkinds.AssignedAddress(svc) != ""
		l := svc.Labels
		switch {
		case l[hostnames.TenantLabel] != "" && l[hostnames.NamespaceLabel] != "" && l[loadbalancer.LoadBalancerLabel] != "":
			t, ns, name := l[hostnames.TenantLabel], l[hostnames.NamespaceLabel], l[loadbalancer.LoadBalancerLabel]
			f.saw(lbSvcKey(t, ns, name), now)
			if assigned {
				f.saw(lbIPKey(t, ns, name), now)
			}
		case svc.Namespace == lbDirectNamespace:
			f.saw(dirSvcKey(svc.Name), now)
			if assigned {
				f.saw(dirIPKey(svc.Name), now)
			}
		}
	}
	_, synced := recordWatch(ctx, &corev1.Service{}, host.CoreV1().Services("").List, host.CoreV1().Services("").Watch, record)
	return synced
}

// watchLoadBalancers records in f when each LoadBalancer of tenant t is
// first seen with status.address set, in a watch of every LoadBalancer
// its member (client c) sees.
func watchLoadBalancers(ctx context.Context, c clientset.Interface, t string, f *firstSeen) (cache.Store, cache.InformerSynced) {
	record := func(obj interface{}) {
		now := time.Now()
		if lb, ok := obj.(*tenantv1alpha1.LoadBalancer); ok && lb.Status.Address != "" {
			f.saw(lbKey(t, lb.Namespace, lb.Name), now)
		}
	}
	return recordWatch(ctx, &tenantv1alpha1.LoadBalancer{}, c.TenantV1alpha1().LoadBalancers("").List, c.TenantV1alpha1().LoadBalancers("").Watch, record)
}
