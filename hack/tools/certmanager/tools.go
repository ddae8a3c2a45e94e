//go:build tools

// Package certmanager pins github.com/cert-manager/cert-manager, whose
// Certificate and Issuer CRDs hack/update-host-crds.sh copies into
// artifacts/host-crds/cert-manager: the schema the kubernetes overlay of
// artifacts/deploy (a cert-manager Issuer and Certificate for the serving
// certificate) is checked against with a server-side dry run. A module of
// its own, so that cert-manager's dependency graph moves no version of the
// other tools.
package certmanager

import (
	_ "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
)
