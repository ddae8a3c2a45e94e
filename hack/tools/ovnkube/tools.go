//go:build tools

// Package ovnkube pins the OVN-Kubernetes ovnkube binary the test stack runs
// as cluster-manager and as the data path node's ovnkube-controller: the
// go-controller version the host CRDs are generated from.
package ovnkube

import (
	_ "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/cmd/ovnkube"
)
