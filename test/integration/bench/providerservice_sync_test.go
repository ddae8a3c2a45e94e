package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	udnclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1/apis/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// BenchmarkProviderServiceOffer offers one ProviderService to every tenant
// (allTenants) of a stack of its own with 1,000 Ready tenants (each with
// its Network and Namespace "default"; BENCH_OFFER_TENANTS), and measures
// from the offer's create until every tenant's ClusterNetworkConnect and
// alias Service have been seen in watches of the host: the time to
// converge, per-tenant latencies, and the host writes per tenant (the
// host's own request counters of the kinds the syncer writes for offers).
func BenchmarkProviderServiceOffer(b *testing.B) {
	if b.N > 1 {
		b.Fatal("BenchmarkProviderServiceOffer fills its stack: run it once (-benchtime 1x)")
	}
	tenants, workers := 1000, 50
	if s := os.Getenv("BENCH_OFFER_TENANTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			b.Fatalf("BENCH_OFFER_TENANTS=%q: want 1 to 1000", s)
		}
		tenants = n
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, stop := benchStack(ctx, b, "", 0, nil)
	defer stop()
	cfg := framework.Unthrottled(s.RESTConfig(stack.AdminUser))
	admin, err := clientset.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	host, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	udn, err := udnclientset.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	seen := newFirstSeen()

	// The tenants, Ready.
	_, tenantsSynced := watchTenantsReady(ctx, admin, seen)
	if !cache.WaitForCacheSync(ctx.Done(), tenantsSynced) {
		b.Fatal("the Tenant watch never synced")
	}
	prefix := int32(24)
	var readyKeys []string
	var jobs []job
	var reqs durations
	for i := 0; i < tenants; i++ {
		name := syncTenantName(i)
		readyKeys = append(readyKeys, tenantReadyKey(name))
		t := &tenantv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: tenantv1alpha1.TenantSpec{Network: tenantv1alpha1.TenantNetwork{PrefixLength: &prefix}}}
		jobs = append(jobs, timedCreate(seen, tenantReadyKey(name), &reqs, func(ctx context.Context) error {
			_, err := admin.TenantV1alpha1().Tenants().Create(ctx, t, metav1.CreateOptions{})
			return err
		}))
	}
	onboarded := time.Now()
	if err := runJobs(ctx, workers, jobs); err != nil {
		b.Fatal(err)
	}
	if err := seen.waitSeen(ctx, readyKeys, 20*time.Minute); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d tenants Ready in %s", tenants, time.Since(onboarded).Round(time.Second))

	// The provider's Service on its network.
	if _, err := host.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: "infra", Labels: map[string]string{"provider-network": "infra"}}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := udn.K8sV1().ClusterUserDefinedNetworks().Create(ctx, &udnv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: "infra"},
		Spec: udnv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"provider-network": "infra"}},
			Network: udnv1.NetworkSpec{Topology: udnv1.NetworkTopologyLayer2, Layer2: &udnv1.Layer2Config{
				Role: udnv1.NetworkRolePrimary, Subnets: udnv1.DualStackCIDRs{"192.168.250.0/24"}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := host.CoreV1().Services("infra").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "resolver"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(5353)}}},
	}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}

	// Watches of what the offer makes, keyed by tenant.
	tweak := func(o *metav1.ListOptions) { o.LabelSelector = hostnames.TenantLabel }
	dynFactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, metav1.NamespaceAll, tweak)
	cncs := dynFactory.ForResource(controller.ClusterNetworkConnects).Informer()
	kubeFactory := informers.NewSharedInformerFactoryWithOptions(host, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = hostnames.ProviderServiceLabel
	}))
	aliases := kubeFactory.Core().V1().Services().Informer()
	mark := func(prefix string) cache.ResourceEventHandlerFuncs {
		see := func(obj interface{}) {
			if t := controller.LabelsOf(obj)[hostnames.TenantLabel]; t != "" {
				seen.saw(prefix+t, time.Now())
			}
		}
		return cache.ResourceEventHandlerFuncs{AddFunc: see, UpdateFunc: func(_, obj interface{}) { see(obj) }}
	}
	if _, err := cncs.AddEventHandler(mark("connect/")); err != nil {
		b.Fatal(err)
	}
	if _, err := aliases.AddEventHandler(mark("alias/")); err != nil {
		b.Fatal(err)
	}
	dynFactory.Start(ctx.Done())
	kubeFactory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), cncs.HasSynced, aliases.HasSynced) {
		b.Fatal("the host watches never synced")
	}
	var connectKeys, aliasKeys []string
	for i := 0; i < tenants; i++ {
		connectKeys = append(connectKeys, "connect/"+syncTenantName(i))
		aliasKeys = append(aliasKeys, "alias/"+syncTenantName(i))
	}
	before, err := hostWrites(ctx, host)
	if err != nil {
		b.Fatal(err)
	}
	cpu := takeCPU(s)

	b.ResetTimer()
	t0 := time.Now()
	for _, k := range append(append([]string{}, connectKeys...), aliasKeys...) {
		seen.start(k)
	}
	if _, err := admin.TenantV1alpha1().ProviderServices().Create(ctx, &tenantv1alpha1.ProviderService{
		ObjectMeta: metav1.ObjectMeta{Name: "dns"},
		Spec: tenantv1alpha1.ProviderServiceSpec{Service: tenantv1alpha1.ServiceReference{Namespace: "infra", Name: "resolver"},
			Alias: "resolver", AllTenants: true},
	}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if err := seen.waitSeen(ctx, append(append([]string{}, connectKeys...), aliasKeys...), 10*time.Minute); err != nil {
		b.Fatal(err)
	}
	converged := time.Since(t0)
	// The status: every tenant connected.
	var status time.Duration
	for {
		ps, err := admin.TenantV1alpha1().ProviderServices().Get(ctx, "dns", metav1.GetOptions{})
		if err != nil {
			b.Fatal(err)
		}
		connected := 0
		for _, e := range ps.Status.Tenants {
			if e.Connected && e.Reason == "" {
				connected++
			}
		}
		if connected == tenants {
			status = time.Since(t0)
			break
		}
		if time.Since(t0) > 10*time.Minute {
			b.Fatalf("status: %d of %d tenants connected", connected, tenants)
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.StopTimer()
	after, err := hostWrites(ctx, host)
	if err != nil {
		b.Fatal(err)
	}
	connectLat, err := seen.latencies(connectKeys)
	if err != nil {
		b.Fatal(err)
	}
	aliasLat, err := seen.latencies(aliasKeys)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(converged.Seconds(), "converge-s")
	b.ReportMetric(status.Seconds(), "status-s")
	b.ReportMetric(pctl(connectLat, 50), "connect-p50-ms")
	b.ReportMetric(pctl(connectLat, 99), "connect-p99-ms")
	b.ReportMetric(pctl(aliasLat, 99), "alias-p99-ms")
	var lines []string
	for _, k := range []string{"clusternetworkconnects", "services", "clusteruserdefinednetworks", "clusternetworkconnects/409", "services/409"} {
		n := after[k] - before[k]
		lines = append(lines, fmt.Sprintf("%s %d (%.2f per tenant)", k, n, float64(n)/float64(tenants)))
		b.ReportMetric(float64(n)/float64(tenants), strings.ReplaceAll(k, "/", "-")+"-writes/tenant")
	}
	b.Logf("offer to %d tenants: every connect and alias on the host %s after the create, every tenant connected in the status after %s; connect p50 %.0f ms p99 %.0f ms, alias p99 %.0f ms; host writes: %s; %s",
		tenants, converged.Round(time.Millisecond), status.Round(time.Millisecond), pctl(connectLat, 50), pctl(connectLat, 99), pctl(aliasLat, 99),
		strings.Join(lines, ", "), cpu.since(s))
}

// hostWrites reads the host kube-apiserver's count of successful write
// requests (create, update, patch, delete) by resource, and of those
// refused with 409 under "<resource>/409".
func hostWrites(ctx context.Context, host kubernetes.Interface) (map[string]int64, error) {
	counts, err := requestTotals(ctx, host, func(line string) string {
		verb, resource := label(line, "verb"), label(line, "resource")
		if verb != "POST" && verb != "PUT" && verb != "PATCH" && verb != "DELETE" {
			return ""
		}
		if label(line, "subresource") != "" {
			return ""
		}
		switch code := label(line, "code"); {
		case strings.HasPrefix(code, "2"):
			return resource
		case code == "409":
			return resource + "/409" // an object made meanwhile: the request wrote nothing
		}
		return ""
	})
	out := map[string]int64{}
	for k, v := range counts {
		out[k] = int64(v)
	}
	return out, err
}

// requestTotals sums the host kube-apiserver's apiserver_request_total
// lines by the key keyOf gives each line ("": not counted).
func requestTotals(ctx context.Context, host kubernetes.Interface, keyOf func(line string) string) (map[string]float64, error) {
	raw, err := host.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		key := keyOf(line)
		if key == "" {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			out[key] += v
		}
	}
	return out, sc.Err()
}

// label returns the value of label name in a Prometheus text line.
func label(line, name string) string {
	i := strings.Index(line, ","+name+`="`)
	if i < 0 {
		if i = strings.Index(line, "{"+name+`="`); i < 0 {
			return ""
		}
	}
	rest := line[i+len(name)+3:]
	j := strings.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return rest[:j]
}

// hostRequests counts the requests the host kube-apiserver has served, by
// verb, resource and subresource ("POST flowschemas", "PUT
// flowschemas/status"), whatever their answer.
func hostRequests(ctx context.Context, host kubernetes.Interface) (map[string]float64, error) {
	return requestTotals(ctx, host, func(line string) string {
		key := label(line, "verb") + " " + label(line, "resource")
		if sub := label(line, "subresource"); sub != "" {
			key += "/" + sub
		}
		return key
	})
}

// perObject describes the requests counted between before and after,
// divided by n: the most frequent first, those under 0.05 each left out.
func perObject(before, after map[string]float64, n int) string {
	type count struct {
		key string
		v   float64
	}
	var counts []count
	total := 0.0
	for k, v := range after {
		d := (v - before[k]) / float64(n)
		total += d
		if d >= 0.05 {
			counts = append(counts, count{k, d})
		}
	}
	sort.Slice(counts, func(i, j int) bool { return counts[i].v > counts[j].v })
	parts := []string{fmt.Sprintf("%.1f in all", total)}
	for _, c := range counts {
		parts = append(parts, fmt.Sprintf("%s %.2f", c.key, c.v))
	}
	return strings.Join(parts, ", ")
}
