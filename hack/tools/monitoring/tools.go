//go:build tools

// Package monitoring pins the prometheus-operator monitoring API, whose
// ServiceMonitor CRD hack/update-host-crds.sh generates with controller-gen
// into artifacts/host-crds/monitoring: the schema the ServiceMonitor of the
// artifacts/deploy overlays is checked against with a server-side dry run.
// A module of its own, so that the operator's dependency graph moves no
// version of the other tools.
package monitoring

import (
	_ "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
)
