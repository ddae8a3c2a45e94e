package console

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/tenantview"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// benchNetworks is how many Networks the list page shows.
const benchNetworks = 500

// pageTiming is what the browser measured of one page load, in
// milliseconds from the start of the navigation (Navigation Timing and
// Paint Timing): the HTML received, first contentful paint,
// DOMContentLoaded, load, the live table's first rows; and the HTML's size.
type pageTiming struct {
	FCP       float64 `json:"fcp"`
	DCL       float64 `json:"dcl"`
	Load      float64 `json:"load"`
	Live      float64 `json:"live"`
	HTML      float64 `json:"htmlDone"`
	HTMLBytes float64 `json:"html"`
}

const timingJS = `(function(){
var n = performance.getEntriesByType("navigation")[0];
var p = performance.getEntriesByName("first-contentful-paint")[0];
var l = performance.getEntriesByName("tenant-console:live")[0];
return {fcp: p ? p.startTime : -1, htmlDone: n.responseEnd, dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd, live: l ? l.startTime : -1, html: n.decodedBodySize};
})()`

// BenchmarkConsoleFirstRender measures in the browser how long the
// Overview and a Networks page of 500 Networks take to show (first
// contentful paint, DOMContentLoaded, load) and, for the live table, until
// the event stream's first rows replaced the server-rendered ones; beside
// them the API's own list of the same 500 Networks.
// setUpBench creates, once per process, a tenant "bench" of ida's with
// benchNetworks Networks, and waits until they are Ready.
func setUpBench(b *testing.B) {
	benchOnce.Do(func() { benchErr = createBenchNetworks(b) })
	if benchErr != nil {
		b.Fatal(benchErr)
	}
}

var (
	benchOnce sync.Once
	benchErr  error
)

func createBenchNetworks(b *testing.B) error {
	ctx := context.Background()
	s := framework.Current()
	admin, err := s.TenantClient("admin")
	if err != nil {
		return err
	}
	member, err := s.TenantClient(newcomer)
	if err != nil {
		return err
	}
	tn := &tenantv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "bench"}, Spec: tenantv1alpha1.TenantSpec{
		Members: tenantv1alpha1.TenantMembers{Users: []string{newcomer}},
		Network: tenantv1alpha1.TenantNetwork{CIDR: "10.64.0.0/14"},
		Quota:   tenantv1alpha1.TenantQuota{Networks: ptr.To[int32](benchNetworks)},
	}}
	if _, err := admin.TenantV1alpha1().Tenants().Create(ctx, tn, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := s.WaitTenantReady(ctx, "bench", 2*time.Minute); err != nil {
		return err
	}
	if err := s.WaitTenantVisible(ctx, newcomer, "bench"); err != nil {
		return err
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, benchNetworks)
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				n := &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("net-%03d", i)}}
				if _, err := member.TenantV1alpha1().Networks().Create(ctx, n, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range benchNetworks - 1 { // and the tenant's "default"
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil { // the first error, if any
		return err
	}
	// Let the syncer and OVN-Kubernetes settle, so that the pages are
	// measured on a quiet stack.
	deadline := time.Now().Add(5 * time.Minute)
	ready := 0
	for time.Now().Before(deadline) {
		list, err := member.TenantV1alpha1().Networks().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		ready = 0
		for i := range list.Items {
			if tenantview.Ready(list.Items[i].Status.Conditions) == "True" {
				ready++
			}
		}
		if ready == benchNetworks {
			break
		}
		time.Sleep(2 * time.Second)
	}
	b.Logf("%d networks created, %d Ready after %s", benchNetworks, ready, time.Since(start).Round(time.Second))
	return nil
}

func BenchmarkConsoleFirstRender(b *testing.B) {
	ctx := context.Background()
	setUpBench(b)
	member, err := framework.Current().TenantClient(newcomer)
	if err != nil {
		b.Fatal(err)
	}
	w := openWindow(b, newcomer)
	measure := func(path string) pageTiming {
		var pt pageTiming
		if err := w.tryRun(time.Minute, chromedp.Navigate(w.base+path), chromedp.WaitVisible("main h1", chromedp.ByQuery)); err != nil {
			b.Fatal(err)
		}
		// Paint and the live table's first rows are reported a moment
		// after the page is visible.
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if err := w.tryRun(10*time.Second, chromedp.Evaluate(timingJS, &pt)); err != nil {
				b.Fatal(err)
			}
			if pt.FCP > 0 && pt.Load > 0 && (path != "/networks" || pt.Live > 0) {
				return pt
			}
			time.Sleep(50 * time.Millisecond)
		}
		b.Fatalf("%s: no paint or live timing after a minute: %+v", path, pt)
		return pt
	}
	measure("/overview") // warm the connections and caches
	measure("/networks")

	var overview, networks pageTiming
	var apiList time.Duration
	b.ResetTimer()
	for range b.N {
		o, n := measure("/overview"), measure("/networks")
		t := time.Now()
		list, err := member.TenantV1alpha1().Networks().List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != benchNetworks {
			b.Fatalf("listing the networks: %d, %v", len(list.Items), err)
		}
		apiList += time.Since(t)
		overview.add(o)
		networks.add(n)
	}
	b.StopTimer()
	var rows int
	if err := w.tryRun(10*time.Second, chromedp.Evaluate(`document.querySelectorAll("#networks-table tbody tr[data-key]").length`, &rows)); err != nil || rows != benchNetworks {
		b.Fatalf("the networks page shows %d rows (%v), want %d", rows, err, benchNetworks)
	}
	n := float64(b.N)
	b.ReportMetric(overview.HTML/n, "overview-html-ms")
	b.ReportMetric(overview.FCP/n, "overview-fcp-ms")
	b.ReportMetric(overview.Load/n, "overview-load-ms")
	b.ReportMetric(overview.HTMLBytes/n, "overview-html-bytes")
	b.ReportMetric(networks.HTML/n, "networks500-html-ms")
	b.ReportMetric(networks.FCP/n, "networks500-fcp-ms")
	b.ReportMetric(networks.Load/n, "networks500-load-ms")
	b.ReportMetric(networks.Live/n, "networks500-live-ms")
	b.ReportMetric(networks.HTMLBytes/n, "networks500-html-bytes")
	b.ReportMetric(float64(apiList.Milliseconds())/n, "api-list500-ms")
}

func (p *pageTiming) add(o pageTiming) {
	p.FCP += o.FCP
	p.DCL += o.DCL
	p.Load += o.Load
	p.Live += o.Live
	p.HTML += o.HTML
	p.HTMLBytes += o.HTMLBytes
}
