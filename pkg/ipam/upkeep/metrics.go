package upkeep

import (
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// The fill of each AddressPool, as its status reports it. Pools are the
// provider's, a handful: one series each.
var (
	poolCapacity = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      "tenant_ipam",
		Name:           "pool_capacity_addresses",
		Help:           "Addresses an AddressPool hands out (its space minus what it excludes), by pool.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"pool"})
	poolAllocated = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      "tenant_ipam",
		Name:           "pool_allocated_addresses",
		Help:           "Addresses of an AddressPool allocated to tenants, by pool.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"pool"})
	poolFree = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      "tenant_ipam",
		Name:           "pool_free_addresses",
		Help:           "Addresses of an AddressPool not allocated, by pool.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"pool"})
	// passSeconds is how long the upkeep's passes take: what paces them
	// (Pace), and what the IPAM costs at a provider's scale.
	passSeconds = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      "tenant_ipam",
		Name:           "upkeep_pass_duration_seconds",
		Help:           "Time of one pass of the IPAM upkeep: every keyspace swept and reclaimed, AddressPool status written.",
		Buckets:        []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		StabilityLevel: metrics.ALPHA,
	})
)

func init() {
	legacyregistry.MustRegister(poolCapacity, poolAllocated, poolFree, passSeconds)
}

// recordPools sets the pool gauges to fill (capacity, allocated, free by
// pool name; nil: unknown this time, the series keep their values) and
// drops the series of pools in known but not in fill. It returns the pools
// of fill, the known of the next call.
func recordPools(known map[string]bool, fill map[string]*[3]int64) map[string]bool {
	now := make(map[string]bool, len(fill))
	for name, f := range fill {
		now[name] = true
		if f == nil {
			continue
		}
		poolCapacity.WithLabelValues(name).Set(float64(f[0]))
		poolAllocated.WithLabelValues(name).Set(float64(f[1]))
		poolFree.WithLabelValues(name).Set(float64(f[2]))
	}
	for name := range known {
		if !now[name] {
			poolCapacity.DeleteLabelValues(name)
			poolAllocated.DeleteLabelValues(name)
			poolFree.DeleteLabelValues(name)
		}
	}
	return now
}
