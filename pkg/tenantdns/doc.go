// Package tenantdns is the CoreDNS plugin "tenantdns": the provider's DNS
// server for tenants, which answers each query with the names its sender
// may know.
//
// The server tells who asks by the address a query comes from, as the
// pod sent it: an address of one of a tenant's networks (the subnets of
// its ClusterUserDefinedNetworks, carved from the tenant's block: IPAM
// never lets two tenants' blocks overlap, and OVN-Kubernetes' port
// security drops a pod's packet whose source is not the pod's own
// address), or an address of a pod of a tenant's host namespace, as
// kubelet reports it or OVN-Kubernetes annotates it. A query from anywhere
// else is the host's. A tenant is Hard when the syncer says so on its host
// namespaces (label tenant.io/isolation).
//
// A Hard tenant's query sees the tenant view: the tenant's Services by the
// namespace names the tenant sees (web.dev.svc.<domain>) and by their host
// names, the provider services offered to it (their aliases are CNAMEs to
// the provider's Service), its own pods, and reverse names of its own
// addresses. Every other query sees the host view: every Service and pod
// by host names, except those of Hard tenants. Whatever a view does not
// hold gets exactly what a name that does not exist gets: NXDOMAIN with
// the zone's SOA, whose serial never changes while the server runs, so no
// answer depends on another tenant's objects.
//
// The plugin also serves the provider's public zone authoritatively, to
// anyone: a name for every FloatingIP and LoadBalancer address, as the
// objects' status.dnsName reports it.
//
// Zone transfers are refused. Queries outside the plugin's zones, and
// reverse names of addresses the view does not hold, go to the next
// plugin (forward); the answers of the next plugins must not depend on
// the cluster's objects (never put kubernetes after tenantdns for the
// same zones), or they would answer what the views hide.
package tenantdns
