// Package bench is the load harness behind `make bench`: benchmarks that run
// against a real stack and report their figures with b.ReportMetric, so that
// docs/perf/api.md can quote ratios measured side by side in one run.
package bench

import (
	"context"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestMain starts the stack of the benchmarks. BENCH_TENANT_APISERVER_ARGS
// (space separated) adds flags to tenant-apiserver, to compare settings.
func TestMain(m *testing.M) {
	// The shared stack serves BenchmarkGetThroughAggregator, with the
	// syncer off; the scale and sync benchmarks start stacks of their own.
	opts := stack.Options{Setup: stack.DemoTenants, TenantAPIServerArgs: []string{"--syncer=false"}}
	if args := os.Getenv("BENCH_TENANT_APISERVER_ARGS"); args != "" {
		opts.TenantAPIServerArgs = append(opts.TenantAPIServerArgs, strings.Fields(args)...)
	}
	code := framework.RunMain(m, opts)
	stopScaleStacks()
	os.Exit(code)
}

// requestsPerSide is the number of GETs measured on each side.
const requestsPerSide = 200

// BenchmarkGetThroughAggregator compares the latency of GET of a tenant.io
// Network (kube-apiserver -> aggregator -> tenant-apiserver -> etcd) with
// GET of a core ConfigMap served by the same kube-apiserver. Requests
// alternate between the two so that machine noise hits both alike.
func BenchmarkGetThroughAggregator(b *testing.B) {
	ctx := context.Background()
	s := framework.Current()
	tenantClient, err := clientset.NewForConfig(s.RESTConfig("alice"))
	if err != nil {
		b.Fatal(err)
	}
	kube, _, err := s.Clients(stack.AdminUser)
	if err != nil {
		b.Fatal(err)
	}
	// Same user on both sides would be fairer for authn caches; alice may not
	// read ConfigMaps, so the admin reads them and alice reads her Network.
	nets := tenantClient.TenantV1alpha1().Networks()
	if _, err := nets.Create(ctx, &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	cms := kube.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bench"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}

	for i := 0; i < b.N; i++ {
		tenant := make([]time.Duration, 0, requestsPerSide)
		core := make([]time.Duration, 0, requestsPerSide)
		// Warm up connections and caches on both sides.
		for j := 0; j < 20; j++ {
			if _, err := nets.Get(ctx, "bench", metav1.GetOptions{}); err != nil {
				b.Fatal(err)
			}
			if _, err := cms.Get(ctx, "bench", metav1.GetOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		for j := 0; j < requestsPerSide; j++ {
			t0 := time.Now()
			if _, err := nets.Get(ctx, "bench", metav1.GetOptions{}); err != nil {
				b.Fatal(err)
			}
			tenant = append(tenant, time.Since(t0))
			t0 = time.Now()
			if _, err := cms.Get(ctx, "bench", metav1.GetOptions{}); err != nil {
				b.Fatal(err)
			}
			core = append(core, time.Since(t0))
		}
		tp50, cp50 := percentile(tenant, 50), percentile(core, 50)
		b.ReportMetric(float64(tp50.Microseconds()), "tenant-get-p50-µs")
		b.ReportMetric(float64(percentile(tenant, 99).Microseconds()), "tenant-get-p99-µs")
		b.ReportMetric(float64(cp50.Microseconds()), "configmap-get-p50-µs")
		b.ReportMetric(float64(percentile(core, 99).Microseconds()), "configmap-get-p99-µs")
		b.ReportMetric(float64(tp50)/float64(cp50), "p50-ratio")
	}
	// The stack of this package started with the binaries already built.
	b.ReportMetric(s.StartDuration().Seconds(), "cached-stack-start-s")
}

// percentile returns the p-th percentile of d (0 without samples).
func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	idx := (len(s)*p + 99) / 100
	if idx > 0 {
		idx--
	}
	return s[idx]
}
