//go:build tools

// Package openshift pins github.com/openshift/api, whose ClusterResourceQuota
// CRD hack/update-host-crds.sh copies into artifacts/host-crds: the schema a
// tenant's ClusterResourceQuota is checked against (on OpenShift the
// compute quota of a tenant is one). A module of its own, so that the
// OpenShift API's dependency graph moves no version of the other tools.
package openshift

import (
	_ "github.com/openshift/api/quota/v1"
)
