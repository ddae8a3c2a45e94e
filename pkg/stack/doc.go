// Package stack runs the whole product on loopback: etcd, kube-apiserver
// with aggregation, kube-controller-manager, the MetalLB controller, the
// host CRDs and guard policies, and tenant-apiserver registered through an
// APIService, with users and kubeconfigs; on request the web console,
// tenant-dns and the provider's gateway (Traefik, gateway.go). `make run`
// (hack/localup) runs it with the demo tenants; the integration tests
// start one per test package.
package stack
