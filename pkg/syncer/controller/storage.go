package controller

import (
	"k8s.io/apimachinery/pkg/types"
	"tenant.io/tenant-apiserver/pkg/hostbinding"

	"context"
	"net/netip"

	"k8s.io/apiserver/pkg/registry/rest"
)

// Store is how the syncer reads and writes one kind of tenant object in
// the server's storage, in process, past the guards: every tenant's
// objects (a context with tenancy.WithAllTenants lists them all).
// pkg/apiserver hands it the registry's stores; tests may hand it fakes.
type Store interface {
	rest.Storage
	rest.Getter
	rest.Lister
	rest.Watcher
	rest.Updater
	rest.GracefulDeleter
}

// KindStorage is the storage of one kind of tenant object.
type KindStorage struct {
	// Resource is the resource name ("networks").
	Resource string
	// Store reads and writes the objects; Status writes their status.
	Store  Store
	Status rest.Updater
	// Create creates an object as its tenant would (guard, quota,
	// defaults and hooks): onboarding creates a tenant's defaults with it.
	Create rest.Creater
	// Created, when set, hands the syncer the objects the storage has just
	// created (HandOff).
	Created *HandOff
}

// Storage is the storage of the kinds the syncer reads and writes.
type Storage struct {
	Tenants, Namespaces, Networks, FloatingIPs, LoadBalancers, VRFPeerings, ProviderServices KindStorage
	HostClaims, HostClasses                                                                  KindStorage
	// HostBindings records which server each HostClaim holds; nil: no
	// server is bound.
	HostBindings HostBindings
	// ConnectSubnets hands out the subnets of ClusterNetworkConnects;
	// nil: no IPAM, no connection is made.
	ConnectSubnets ConnectSubnets
}

// ConnectSubnets claims and gives back the connect subnets of the
// connections of tenants (by UID) with provider networks, and of their
// service networks (the connection of a tenant's Shared Networks), through
// IPAM.
type ConnectSubnets interface {
	// Held returns the subnets the tenant of UID uid holds, by provider network.
	Held(ctx context.Context, uid string) (map[string]netip.Prefix, error)
	// Claim returns the subnet of tenant t for provider network pn (the one
	// it holds, or a new one), and the prefix length of each network's
	// slice of it.
	Claim(ctx context.Context, t, uid, pn string) (netip.Prefix, int, error)
	// Release gives back block, the subnet of t for pn.
	Release(ctx context.Context, t, uid, pn string, block netip.Prefix) error
	// HeldServiceNetwork returns the subnet of the service network of the
	// tenant of UID uid, and whether it holds one.
	HeldServiceNetwork(ctx context.Context, uid string) (netip.Prefix, bool, error)
	// ClaimServiceNetwork returns the subnet of tenant t's service network
	// (the one it holds, or a new one), and the prefix length of each
	// network's slice of it.
	ClaimServiceNetwork(ctx context.Context, t, uid string) (netip.Prefix, int, error)
	// ReleaseServiceNetwork gives back block, the subnet of t's service network.
	ReleaseServiceNetwork(ctx context.Context, t, uid string, block netip.Prefix) error
}

// HostBindings is the record of which server (BareMetalHost) each
// HostClaim holds, one server to one claim (hostbinding.Ledger).
type HostBindings interface {
	BindFirstFree(ctx context.Context, claim hostbinding.Claim, candidates []hostbinding.Host) (hostbinding.Binding, error)
	ByClaim(ctx context.Context, claimUID types.UID) (hostbinding.Binding, bool, error)
	ByHost(ctx context.Context, host hostbinding.Host) (hostbinding.Binding, bool, error)
	Release(ctx context.Context, b hostbinding.Binding) error
	Orphans(ctx context.Context, exists func(claimUID types.UID) bool) ([]hostbinding.Binding, error)
}
