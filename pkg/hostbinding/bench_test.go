package hostbinding_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"tenant.io/tenant-apiserver/pkg/hostbinding"
)

// BenchmarkClaimBurst has 200 tenants claim a server at the same instant
// from a pool of 100, through 3 replicas (each its own etcd client), each
// claim with BindFirstFree over the whole pool in the same order. Per burst
// it reports how many claims were bound (must be 100), refused with
// ErrNoHost (100), servers handed out twice (0), the time from the start to
// the last successful bind, and the lost races per claim.
func BenchmarkClaimBurst(b *testing.B) {
	const (
		burstReplicas = 3
		claimers      = 200
		servers       = 100
	)
	url := startEtcd(b)
	clients := make([]*clientv3.Client, burstReplicas)
	for i := range clients {
		clients[i] = newClient(b, url)
	}
	checker := newClient(b, url)
	pool := hosts(servers)
	ctx := context.Background()
	var bound, refused, double, lost int
	var allBound time.Duration
	b.ResetTimer()
	for n := range b.N {
		prefix := freshPrefix()
		ledgers := make([]*hostbinding.Ledger, burstReplicas)
		for i, c := range clients {
			ledgers[i] = hostbinding.New(c, prefix)
		}
		type result struct {
			b   hostbinding.Binding
			err error
			at  time.Duration
		}
		results := make([]result, claimers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		var began time.Time
		for i := range claimers {
			l := ledgers[i%burstReplicas]
			c := claim(i, fmt.Sprintf("%d-%d", n, i))
			wg.Go(func() {
				<-start
				bd, err := l.BindFirstFree(ctx, c, pool)
				results[i] = result{bd, err, time.Since(began)}
			})
		}
		began = time.Now()
		close(start)
		wg.Wait()

		b.StopTimer()
		holder := map[hostbinding.Host]int{}
		var last time.Duration
		for i, r := range results {
			switch {
			case r.err == nil:
				bound++
				if _, dup := holder[r.b.Host]; dup {
					double++
				}
				holder[r.b.Host] = i
				last = max(last, r.at)
			case errors.Is(r.err, hostbinding.ErrNoHost):
				refused++
			default:
				b.Fatalf("claimer %d: %v", i, r.err)
			}
		}
		allBound += last
		if stored := checkStore(b, checker, prefix); len(stored) != len(holder) {
			b.Errorf("etcd holds %d bindings, %d servers were handed out", len(stored), len(holder))
		}
		for _, l := range ledgers {
			lost += int(hostbinding.LostRaces(l))
		}
		b.StartTimer()
	}
	per := float64(b.N)
	b.ReportMetric(float64(bound)/per, "bound")
	b.ReportMetric(float64(refused)/per, "refused")
	b.ReportMetric(float64(double)/per, "double")
	b.ReportMetric(float64(allBound.Milliseconds())/per, "ms-to-all-bound")
	b.ReportMetric(float64(lost)/per/claimers, "lost-races/claim")
}
