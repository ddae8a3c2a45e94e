//go:build tools

// Package gatewayapi pins sigs.k8s.io/gateway-api, whose standard-channel
// CRDs (config/crd/standard) hack/update-host-crds.sh copies into
// artifacts/host-crds: the Gateway API the provider's gateway implements
// and tenants publish HTTP services with. A module of its own, so that the
// Gateway API's dependency graph moves no version of the other tools (and
// not the older Gateway API Traefik is built against, hack/tools/traefik).
package gatewayapi

import (
	_ "sigs.k8s.io/gateway-api/apis/v1"
)
