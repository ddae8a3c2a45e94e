package controller

import (
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	// The syncer's work queues report depth, latency and retries on
	// /metrics (workqueue_*{name=<controller>}).
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
)

// The syncer's metrics. Their labels take values from fixed sets only
// (controller, tenant kind, host kind, result): never a tenant, user,
// namespace or object name, so that their series do not grow with the
// number of tenants.
var (
	reconciles = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "tenant_syncer",
		Name:           "reconciles_total",
		Help:           "Reconciles of the syncer's controllers, by controller and result: success, requeue (waiting for the host, nothing failed) or error (retried with backoff).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"controller", "result"})

	hostWriteErrors = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "tenant_syncer",
		Name:           "host_write_errors_total",
		Help:           "Creates, updates and deletes of host objects that the host refused or did not answer, by host kind.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"kind"})

	writeToHost = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem: "tenant_syncer",
		Name:      "write_to_host_seconds",
		Help: "Seconds from a write of a tenant object's spec (its tenant.io/changed-at annotation) until the syncer found " +
			"the host objects matching that generation, by tenant kind. Counted once per generation that becomes synced.",
		// 10 ms to about 10 minutes: a quiet host answers in tens of
		// milliseconds, a host outage holds writes for minutes.
		Buckets:        metrics.ExponentialBuckets(0.01, 2, 16),
		StabilityLevel: metrics.ALPHA,
	}, []string{"kind"})
)

func init() {
	legacyregistry.MustRegister(reconciles, hostWriteErrors, writeToHost)
}

// Results of a reconcile, the values of reconciles_total's result label.
const (
	resultSuccess = "success"
	resultRequeue = "requeue"
	resultError   = "error"
)

// CountHostWriteError counts err, if any, as a failed write of a host
// object of kind.
func CountHostWriteError(kind string, err error) {
	if err != nil {
		hostWriteErrors.WithLabelValues(kind).Inc()
	}
}

// ObserveWriteToHost records that the spec an object of kind had written
// at changedAt (RFC 3339, the tenant.io/changed-at annotation) is now on
// the host. Objects without the annotation, or with a time in the future
// of this clock, are not counted.
func ObserveWriteToHost(kind, changedAt string, now time.Time) {
	at, err := time.Parse(time.RFC3339Nano, changedAt)
	if err != nil || at.After(now) {
		return
	}
	writeToHost.WithLabelValues(kind).Observe(now.Sub(at).Seconds())
}
