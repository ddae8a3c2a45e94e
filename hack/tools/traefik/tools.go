//go:build tools

// Package traefik pins Traefik (github.com/traefik/traefik/v3), the
// Gateway API implementation the test stack runs as the provider's
// gateway (hack/build-tools.sh builds cmd/traefik into
// _output/bin/traefik). A module of its own: Traefik's dependency graph
// (client-go v0.32, gateway-api v1.3, hundreds of DNS-provider SDKs) must
// move no version of the other tools, and it keeps Traefik's own replace
// and exclude directives, which a requiring module does not inherit.
package traefik

import (
	_ "github.com/traefik/traefik/v3/cmd/traefik"
)
