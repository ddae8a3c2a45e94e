package quota_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"tenant.io/tenant-apiserver/pkg/quota"
)

// BenchmarkReserve charges and releases a unit of one tenant's quota
// through the Tenant's storage on a real etcd: one caller at a time, and
// several at once (a tenant creating objects in parallel). Reports the
// time per charge and its p99 across callers.
func BenchmarkReserve(b *testing.B) {
	for _, callers := range []int{1, 4, 16} {
		b.Run(map[int]string{1: "one-caller", 4: "4-callers", 16: "16-callers"}[callers], func(b *testing.B) {
			storage := setup(b, 10000)
			q := quota.NewTracker(storage.Tenants.StatusStore)
			var mu sync.Mutex
			var took []time.Duration
			var wg sync.WaitGroup
			per := b.N/callers + 1
			b.ResetTimer()
			for range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					mine := make([]time.Duration, 0, per)
					for range per {
						start := time.Now()
						if err := q.Reserve(asAlice(), "acme", quota.Namespaces, false); err != nil {
							b.Error(err)
							return
						}
						mine = append(mine, time.Since(start))
						q.Release(asAlice(), "acme", quota.Namespaces)
					}
					mu.Lock()
					took = append(took, mine...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			b.StopTimer()
			slices.Sort(took)
			if len(took) > 0 {
				b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
			}
		})
	}
}
