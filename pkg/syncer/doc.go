// Package syncer makes tenants real on the host. It runs inside
// tenant-apiserver; with several replicas, only the holder of a host Lease
// runs it. Each host concern has its own controller with a named work
// queue that serves tenants in turn (pkg/syncer/queue), so one tenant's
// burst does not hold up the others:
//
//   - onboarding: the Network and Namespace "default", the offboarding
//     finalizer, the MetalLB pool and advertisement of the tenant's public
//     IPs, the tenant's FlowSchema, the Tenant's phase and conditions, and
//     offboarding;
//   - namespace: one host namespace and members RoleBinding per tenant
//     Namespace, with its share of the tenant's quota;
//   - network: one ClusterUserDefinedNetwork per tenant Network, and the
//     EgressIP of its NAT gateway;
//   - loadbalancer: one Service of type LoadBalancer per tenant
//     LoadBalancer, whose address MetalLB assigns from the tenant's pool;
//   - floatingip: for a FloatingIP bound to a Pod or VirtualMachine, a
//     Service on its address for the inbound ports and an EgressIP for
//     the outbound traffic;
//   - vrfpeering: for each VRFPeering, the RouteAdvertisements that
//     advertises the peered Network's pod network into its VRF and the
//     FRRConfiguration peering that VRF with the provider's routers;
//   - providerservice: for each tenant offered a ProviderService, the
//     ClusterNetworkConnects of its networks with the provider's, and
//     the alias Services in its host namespaces;
//   - checker: the periodic removal of orphans and drift check.
//
// The controllers run on pkg/syncer/controller, the framework: the worker
// loop, the reconcile skeleton every controller's reconcile is, the
// status writer, and the informers they read. pkg/syncer/hostkinds is the
// catalogue of the kinds of host objects they make; pkg/syncer/quotausage
// reads what a tenant's host namespaces use. No controller imports
// another: what two of them share lives in one of these.
//
// A controller's package is named for the tenant kind it makes real on
// the host, as the registry's package that stores that kind is
// (pkg/registry/tenant/network beside pkg/syncer/network), the way
// Kubernetes keeps pkg/controller/namespace beside
// pkg/registry/core/namespace: each is found by the kind's name in its
// own tree, and no file imports both of a pair.
//
// Tenant objects are read from the server's own storage in process; host
// objects through informers of the objects carrying the tenant label.
// Ownership is by the marks of pkg/hostnames, checked before every update
// or delete, and deletes carry UID preconditions.
package syncer
