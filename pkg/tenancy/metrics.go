package tenancy

import (
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

var (
	// membershipEntries is the size of the membership index: the tenants
	// and the distinct users and groups named as members.
	membershipEntries = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      "tenant_membership",
		Name:           "index_entries",
		Help:           "Entries of the in-memory membership index, by kind: tenant (Tenants known), user and group (distinct users and groups named as members).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"kind"})

	// openWatches counts the open watches of tenant callers by resource.
	openWatches = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Name:           "tenant_watches",
		Help:           "Open watches of tenant.io resources, by resource.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"resource"})
)

func init() {
	legacyregistry.MustRegister(membershipEntries, openWatches)
}
