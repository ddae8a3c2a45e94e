package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	rav1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/routeadvertisements/v1"
	raclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/routeadvertisements/v1/apis/clientset/versioned"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/vrfpeering"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// vrfSizes are the sizes of BenchmarkVRFPeeringSync; BENCH_VRF_TENANTS,
// BENCH_VRF_PER_TENANT and BENCH_VRF_WORKERS override them.
type vrfSizes struct {
	tenants, perTenant, workers int
}

func vrfSizesFromEnv() (vrfSizes, error) {
	z := vrfSizes{tenants: 50, perTenant: 4, workers: 20}
	for _, v := range []struct {
		env string
		p   *int
	}{{"BENCH_VRF_TENANTS", &z.tenants}, {"BENCH_VRF_PER_TENANT", &z.perTenant}, {"BENCH_VRF_WORKERS", &z.workers}} {
		if s := os.Getenv(v.env); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > 250 {
				return z, fmt.Errorf("%s=%q: want 1 to 250", v.env, s)
			}
			*v.p = n
		}
	}
	return z, nil
}

func raKey(name string) string  { return "ra/" + name }
func frrKey(name string) string { return "frr/" + name }

// BenchmarkVRFPeeringSync measures the VRF peering sync on a stack of its
// own, in one run: 50 Tenants are created and Ready, then, side by side,
// 200 VRFPeerings (4 per tenant, on its Network "default", created by the
// provider admin through the aggregator, 20 at a time) are timed from the
// start of their create request until both their RouteAdvertisements and
// their FRRConfiguration have been seen in watches of every host object of
// those kinds, while 200 pairs of the same shape are created directly on
// the host by the admin (both at once, as the syncer writes them), 20 at
// a time, timed the same way.
func BenchmarkVRFPeeringSync(b *testing.B) {
	if b.N > 1 {
		b.Fatal("BenchmarkVRFPeeringSync fills its stack: run it once (-benchtime 1x)")
	}
	z, err := vrfSizesFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, stop := benchStack(ctx, b, "", z.tenants, nil)
	defer stop()
	r := &syncRun{b: b, z: syncSizes{tenants: z.tenants, workers: z.workers}, s: s, seen: newFirstSeen()}
	r.clients()
	cfg := framework.Unthrottled(s.RESTConfig(stack.AdminUser))
	ra, err := raclientset.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	tenantsCtx, stopTenants := context.WithCancel(ctx)
	raSynced, frrSynced := watchVRFHostObjects(ctx, ra, dyn, r.seen)
	_, tenantsSynced := watchTenantsReady(tenantsCtx, r.admin, r.seen)
	if !cache.WaitForCacheSync(ctx.Done(), raSynced, frrSynced, tenantsSynced) {
		b.Fatal("the watches never synced")
	}

	b.ResetTimer()
	r.t0 = time.Now()
	r.tenantsReady(ctx)
	stopTenants()
	// The onboarding's last status writes settle before the burst.
	time.Sleep(3 * time.Second)

	var syncRA, syncFRR, directRA, directFRR []string
	var syncJobs, directJobs []job
	var syncReqs, directReqs durations
	direct := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "direct", UID: "direct-uid"}}
	directNet := &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "direct-net"}, Spec: tenant.NetworkSpec{Subnets: []string{"172.16.0.0/24"}}}
	for j := 1; j <= z.perTenant; j++ {
		for i := 0; i < z.tenants; i++ {
			name := fmt.Sprintf("%s-p%d", syncTenantName(i), j)
			p := &tenantv1alpha1.VRFPeering{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: tenantv1alpha1.VRFPeeringSpec{Tenant: syncTenantName(i), Network: "default", ASN: 64512,
					Neighbors: []tenantv1alpha1.BGPNeighbor{{Address: fmt.Sprintf("192.0.2.%d", j), ASN: 65000}}},
			}
			host := hostnames.VRFPeering(name)
			syncRA, syncFRR = append(syncRA, raKey(host)), append(syncFRR, frrKey(host))
			syncJobs = append(syncJobs, timedCreate(r.seen, raKey(host), &syncReqs, func(ctx context.Context) error {
				r.seen.start(frrKey(host))
				_, err := r.admin.TenantV1alpha1().VRFPeerings().Create(ctx, p, metav1.CreateOptions{})
				return err
			}))

			// The same two objects, under names and labels of their own.
			dp := &tenant.VRFPeering{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("d%05d", len(directRA)), UID: "direct"},
				Spec: tenant.VRFPeeringSpec{Tenant: "direct", Network: "default", ASN: 64512,
					Neighbors: []tenant.BGPNeighbor{{Address: fmt.Sprintf("192.0.2.%d", j), ASN: 65000}}}}
			cudn := hostnames.ClusterUserDefinedNetwork(direct.UID, "default")
			dra := vrfpeering.RouteAdvertisements(direct, dp, cudn)
			dfrr, err := vrfpeering.FRRConfiguration(direct, dp, vrfpeering.FRRConfigurationSpec(dp, directNet, cudn, stack.FRRNamespace), stack.FRRNamespace)
			if err != nil {
				b.Fatal(err)
			}
			for _, m := range []metav1.Object{dra, dfrr} {
				m.SetLabels(map[string]string{"bench.tenant.io/direct": "true"})
				m.SetAnnotations(nil)
			}
			dhost := dra.Name
			directRA, directFRR = append(directRA, raKey(dhost)), append(directFRR, frrKey(dhost))
			directJobs = append(directJobs, timedCreate(r.seen, raKey(dhost), &directReqs, func(ctx context.Context) error {
				r.seen.start(frrKey(dhost))
				frrErr := make(chan error, 1)
				go func() {
					_, err := dyn.Resource(controller.FRRConfigurations).Namespace(stack.FRRNamespace).Create(ctx, dfrr, metav1.CreateOptions{})
					frrErr <- err
				}()
				_, err := ra.K8sV1().RouteAdvertisements().Create(ctx, dra, metav1.CreateOptions{})
				if ferr := <-frrErr; ferr != nil {
					return ferr
				}
				return err
			}))
		}
	}
	cpu := takeCPU(s)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for side, jobs := range [][]job{syncJobs, directJobs} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[side] = runJobs(ctx, z.workers, jobs)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	all := append(append(append(append([]string(nil), syncRA...), syncFRR...), directRA...), directFRR...)
	if err := r.seen.waitSeen(ctx, all, syncTimeout); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	cpuUse := cpu.since(s)
	both := func(name, what string, ras, frrs []string) []time.Duration {
		a, err := r.seen.latencies(ras)
		if err != nil {
			b.Fatal(err)
		}
		f, err := r.seen.latencies(frrs)
		if err != nil {
			b.Fatal(err)
		}
		for k := range a {
			a[k] = max(a[k], f[k])
		}
		b.ReportMetric(pctl(a, 50), name+"-p50-ms")
		b.ReportMetric(pctl(a, 99), name+"-p99-ms")
		r.rows = append(r.rows, row{what, len(a), pctl(a, 50), pctl(a, 99)})
		return a
	}
	synced := both("vrf-sync", fmt.Sprintf("VRFPeering -> RouteAdvertisements + FRRConfiguration (%d x %d)", z.tenants, z.perTenant), syncRA, syncFRR)
	r.requests("   VRFPeering create request (aggregated)", &syncReqs)
	directD := both("vrf-direct", fmt.Sprintf("FRRConfiguration + RouteAdvertisements created directly (%d)", len(directRA)), directRA, directFRR)
	r.requests("   direct create requests (both)", &directReqs)
	p50 := float64(percentile(synced, 50)) / float64(percentile(directD, 50))
	p99 := float64(percentile(synced, 99)) / float64(percentile(directD, 99))
	b.ReportMetric(p50, "sync/direct-p50")
	b.ReportMetric(p99, "sync/direct-p99")
	r.notef("burst: ratio sync / direct: p50 %.2f, p99 %.2f; last pair seen %s (synced) and %s (direct) after the start",
		p50, p99, r.seen.lastSeen(append(append([]string(nil), syncRA...), syncFRR...)).Sub(start).Round(time.Millisecond),
		r.seen.lastSeen(append(append([]string(nil), directRA...), directFRR...)).Sub(start).Round(time.Millisecond))
	r.notef("  %s", cpuUse)
	printTable(os.Stdout, fmt.Sprintf("BenchmarkVRFPeeringSync: create start -> both host objects first seen in a watch (%d tenants x %d peerings, %d workers per side)", z.tenants, z.perTenant, z.workers), r.rows)
	for _, line := range r.summary {
		fmt.Fprintf(os.Stdout, "  %s\n", line)
	}
	fmt.Fprintln(os.Stdout)
	// Outside the timing: every synced pair is as the syncer must make it.
	list, err := ra.K8sV1().RouteAdvertisements().List(ctx, metav1.ListOptions{LabelSelector: hostnames.VRFPeeringLabel})
	if err != nil {
		b.Fatal(err)
	}
	if len(list.Items) != len(syncRA) {
		b.Errorf("%d RouteAdvertisements labelled %s, want %d", len(list.Items), hostnames.VRFPeeringLabel, len(syncRA))
	}
	for _, item := range list.Items {
		if item.Spec.TargetVRF != "auto" || !strings.HasPrefix(item.Name, "vrfp-t") {
			b.Errorf("RouteAdvertisements %s: %+v", item.Name, item.Spec)
		}
	}
}

// watchVRFHostObjects records in f when each RouteAdvertisements and each
// FRRConfiguration (of frr-k8s' namespace), the syncer's or one created
// directly, is first seen, by name.
func watchVRFHostObjects(ctx context.Context, ra raclientset.Interface, dyn dynamic.Interface, f *firstSeen) (cache.InformerSynced, cache.InformerSynced) {
	run := func(lw *cache.ListWatch, obj runtime.Object, key func(interface{}) string) cache.InformerSynced {
		record := func(o interface{}) {
			now := time.Now()
			if k := key(o); k != "" {
				f.saw(k, now)
			}
		}
		_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
			ListerWatcher: lw, ObjectType: obj,
			Handler: cache.ResourceEventHandlerFuncs{AddFunc: record, UpdateFunc: func(_, o interface{}) { record(o) }},
		})
		go informer.RunWithContext(ctx)
		return informer.HasSynced
	}
	raSynced := run(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return ra.K8sV1().RouteAdvertisements().List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return ra.K8sV1().RouteAdvertisements().Watch(ctx, o)
		},
	}, &rav1.RouteAdvertisements{}, func(o interface{}) string {
		if r, ok := o.(*rav1.RouteAdvertisements); ok {
			return raKey(r.Name)
		}
		return ""
	})
	frrs := dyn.Resource(controller.FRRConfigurations).Namespace(stack.FRRNamespace)
	frrSynced := run(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return frrs.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return frrs.Watch(ctx, o)
		},
	}, &unstructured.Unstructured{}, func(o interface{}) string {
		if u, ok := o.(*unstructured.Unstructured); ok {
			return frrKey(u.GetName())
		}
		return ""
	})
	return raSynced, frrSynced
}
