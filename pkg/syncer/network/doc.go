// Package network makes every tenant Network real on the host: a primary
// OVN-Kubernetes ClusterUserDefinedNetwork over its subnets that selects the
// host namespaces of the tenant Namespaces attached to it, and, while its NAT
// gateway is enabled, an EgressIP that sends their outbound traffic through
// one of the tenant's public IPs. It mirrors the network's conditions, as
// OVN-Kubernetes reports them on the ClusterUserDefinedNetwork, into the
// Network's status.
package network
