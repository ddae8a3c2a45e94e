package bench

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// Scale of BenchmarkPrivateList; BENCH_TENANTS overrides the large store
// size (10,000 by default) for a quick run.
const (
	smallTenants     = 10
	objectsPerTenant = 5 // Namespaces, and as many Networks
	ownNetworks      = 50
	listRequests     = 200
	populateWorkers  = 24
)

func largeTenants() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_TENANTS")); err == nil && v > smallTenants {
		return v
	}
	return 10000
}

// asTenant returns a client acting, by impersonation, as a member of tenant t.
func asTenant(s *stack.Stack, t string) (clientset.Interface, error) {
	cfg := framework.Unthrottled(s.RESTConfig(stack.AdminUser))
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "member-of-" + t, Groups: []string{"tenant.io:" + t}}
	return clientset.NewForConfig(cfg)
}

// populate creates tenants [from, to): each a Tenant, objectsPerTenant
// Namespaces and Networks, and, on the host, objectsPerTenant core
// namespaces labelled with the tenant (what a filtering proxy in front of
// core namespaces would list from).
func populate(ctx context.Context, b *testing.B, s *stack.Stack, from, to int) {
	admin, err := clientset.NewForConfig(framework.Unthrottled(s.RESTConfig(stack.AdminUser)))
	if err != nil {
		b.Fatal(err)
	}
	host, err := kubernetes.NewForConfig(framework.Unthrottled(s.RESTConfig(stack.AdminUser)))
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
				if err := populateTenant(ctx, s, admin, host, fmt.Sprintf("t%d", i)); err != nil {
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

func populateTenant(ctx context.Context, s *stack.Stack, admin clientset.Interface, host kubernetes.Interface, name string) error {
	if err := createScaleTenant(ctx, admin, name, objectsPerTenant); err != nil {
		return err
	}
	c, err := asTenant(s, name)
	if err != nil {
		return err
	}
	// The membership index follows Tenants through an informer: wait for it.
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := c.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{}); err == nil {
			break
		} else if time.Now().After(deadline) {
			return fmt.Errorf("tenant %s never visible to its member: %w", name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The Networks first, a /27 each of the block's first /24 (a /24 has
	// room for one default /24 only), then the Namespaces, attached to
	// net0: a Namespace names an existing Network.
	block := netip.MustParsePrefix(tenantCIDR(name)).Addr().As4()
	for j := 0; j < objectsPerTenant; j++ {
		subnet := netip.PrefixFrom(netip.AddrFrom4([4]byte{block[0], block[1], block[2], byte(32 * j)}), 27)
		net := &tenantv1alpha1.Network{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("net%d", j)},
			Spec:       tenantv1alpha1.NetworkSpec{Subnets: []string{subnet.String()}},
		}
		if _, err := c.TenantV1alpha1().Networks().Create(ctx, net, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return err
		}
	}
	for j := 0; j < objectsPerTenant; j++ {
		n := fmt.Sprintf("ns%d", j)
		ns := &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: tenantv1alpha1.NamespaceSpec{Network: "net0"}}
		if _, err := c.TenantV1alpha1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return err
		}
		core := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name:   name + "-" + n,
			Labels: map[string]string{"tenant.io/tenant": name},
		}}
		if _, err := host.CoreV1().Namespaces().Create(ctx, core, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return err
		}
	}
	return nil
}

// tenantCIDR gives every bench tenant a block of its own: t<i> gets
// 10.<i/256>.<i%256>.0/24, the measured tenant 10.200.0.0/16.
func tenantCIDR(name string) string {
	i, err := strconv.Atoi(strings.TrimPrefix(name, "t"))
	if err != nil {
		return "10.200.0.0/16"
	}
	return fmt.Sprintf("10.%d.%d.0/24", i/256, i%256)
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

// BenchmarkPrivateList measures what a tenant's private view costs as the
// store grows. Two stacks run side by side: one holds 10 tenants, the
// other 10,000 (each tenant with 5 Namespaces and 5 Networks; the host of
// the large one also has 5 labelled core namespaces per tenant). In both,
// tenant "measured" owns 50 Networks and 5 Namespaces. The benchmark
// alternates a LIST of the measured tenant's Networks on the small and on
// the large stack, then, on the large one, alternates a LIST of its own 5
// Namespaces through the aggregator with the host kube-apiserver listing
// core namespaces by label among 50,000 (the floor of any proxy that
// filters core namespaces). It also reports the large tenant-apiserver's RSS.
func BenchmarkPrivateList(b *testing.B) {
	ctx := context.Background()
	large := framework.Current()
	small, err := stack.Start(ctx, stack.Options{Log: io.Discard, TenantAPIServerArgs: []string{"--syncer=false"}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = small.Stop() }()

	if err := stack.DemoPools(ctx, small); err != nil {
		b.Fatal(err)
	}
	prepare := func(s *stack.Stack, tenants int) clientset.Interface {
		admin, err := clientset.NewForConfig(framework.Unthrottled(s.RESTConfig(stack.AdminUser)))
		if err != nil {
			b.Fatal(err)
		}
		if err := createScaleTenant(ctx, admin, "measured", ownNetworks); err != nil {
			b.Fatal(err)
		}
		if err := populateTenant(ctx, s, admin, mustHost(b, s), "measured"); err != nil {
			b.Fatal(err)
		}
		measured, err := asTenant(s, "measured")
		if err != nil {
			b.Fatal(err)
		}
		for j := objectsPerTenant; j < ownNetworks; j++ {
			net := &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("net%d", j)}}
			if _, err := measured.TenantV1alpha1().Networks().Create(ctx, net, metav1.CreateOptions{}); ignoreExists(err) != nil {
				b.Fatal(err)
			}
		}
		populate(ctx, b, s, 0, tenants)
		return measured
	}
	smallClient := prepare(small, smallTenants)
	largeClient := prepare(large, largeTenants())
	// Let the burst settle (garbage collection, etcd compaction) before measuring.
	time.Sleep(10 * time.Second)

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
		l, err := host.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: "tenant.io/tenant=measured"})
		if err != nil {
			return 0, err
		}
		return len(l.Items), nil
	}

	for i := 0; i < b.N; i++ {
		smallD, largeD := alternate(b, listNetworks(smallClient), listNetworks(largeClient), ownNetworks, ownNetworks)
		ours, theirs := alternate(b, listNamespaces, listHost, objectsPerTenant, objectsPerTenant)
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
		oursP50 := report(ours, 50, "tenant-ns-list-p50-µs")
		theirsP50 := report(theirs, 50, "host-ns-labellist-p50-µs")
		b.ReportMetric(float64(theirsP50)/float64(oursP50), "host/tenant-ns-p50")
		b.ReportMetric(float64(largeTenants()), "tenants")
		b.ReportMetric(rssMiB(large.PID("tenant-apiserver")), "tenant-apiserver-RSS-MiB")
		b.ReportMetric(rssMiB(small.PID("tenant-apiserver")), "small-tenant-apiserver-RSS-MiB")
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
