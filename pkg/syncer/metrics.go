package syncer

import (
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// initialSyncSeconds is served on /metrics: the restart resync benchmark
// reads it.
var initialSyncSeconds = metrics.NewGauge(&metrics.GaugeOpts{
	Subsystem:      "tenant_syncer",
	Name:           "initial_sync_duration_seconds",
	Help:           "Seconds from taking the syncer lead until every tenant object was reconciled once, for the current term.",
	StabilityLevel: metrics.ALPHA,
})

func init() {
	legacyregistry.MustRegister(initialSyncSeconds)
}
