//go:build tools

// Package tools pins the binaries of the integration test stack (etcd,
// kube-apiserver, kube-controller-manager, kubectl) so that hack/build-tools.sh builds
// them at exactly the versions recorded in this module's go.mod and go.sum.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
