//go:build tools

// Package ovnkube pins the OVN-Kubernetes ovnkube binary whose cluster-manager
// the test stack runs (see hack/tools/README.md for why this go-controller
// version and not the one the host CRDs are generated from).
package ovnkube

import (
	_ "github.com/ovn-org/ovn-kubernetes/go-controller/cmd/ovnkube"
)
