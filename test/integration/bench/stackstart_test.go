package bench

import (
	"context"
	"testing"
	"time"

	"tenant.io/tenant-apiserver/pkg/stack"
)

// BenchmarkStackStart starts the test stack with its data path (OVN's
// databases, ovn-northd, ovnkube-controller) and without it
// (Options.SkipDataPath), alternating, b.N times each, and on the stacks
// with it the real-packet tier (Open vSwitch and ovn-controller). It
// reports the medians and the data path processes' resident memory.
//
//	go test -run '^$' -bench '^BenchmarkStackStart$' -benchtime 3x ./test/integration/bench/
func BenchmarkStackStart(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(b.N)*5*time.Minute)
	defer cancel()
	var with, without, packets []time.Duration
	rss := map[string]float64{}
	for i := 0; i < b.N; i++ {
		for _, skip := range []bool{false, true} {
			start := time.Now()
			s, stop := benchStack(ctx, b, "", 0, func(o *stack.Options) { o.SkipDataPath = skip })
			took := time.Since(start)
			if skip {
				without = append(without, took)
				stop()
				continue
			}
			with = append(with, took)
			if stack.PacketsUnavailable() == "" {
				start = time.Now()
				if _, err := s.StartPackets(ctx); err != nil {
					stop()
					b.Fatal(err)
				}
				packets = append(packets, time.Since(start))
			}
			for _, name := range []string{"ovsdb-server-nb", "ovsdb-server-sb", "ovn-northd", "ovnkube-controller", "ovsdb-server-ovs", "ovs-vswitchd", "ovn-controller"} {
				if mib := rssMiB(s.PID(name)); mib > rss[name] {
					rss[name] = mib
				}
			}
			stop()
		}
	}
	w, wo := percentile(with, 50), percentile(without, 50)
	b.ReportMetric(w.Seconds(), "with-data-path-s")
	b.ReportMetric(wo.Seconds(), "without-data-path-s")
	b.ReportMetric(w.Seconds()/wo.Seconds(), "with/without")
	if len(packets) > 0 {
		b.ReportMetric(percentile(packets, 50).Seconds(), "packets-tier-s")
	}
	for name, mib := range rss {
		b.ReportMetric(mib, name+"-rss-MiB")
	}
	b.Logf("start with the data path %v, without %v; the real-packet tier %v", with, without, packets)
}
