// Package apiserver assembles the tenant.io API server: the generic server
// of k8s.io/apiserver with the storage of every tenant.io resource installed.
package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	restclient "k8s.io/client-go/rest"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	informers "tenant.io/tenant-apiserver/pkg/generated/informers/externalversions"
	"tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/ipam/upkeep"
	"tenant.io/tenant-apiserver/pkg/quota"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/addresspool"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/base"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/floatingip"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/loadbalancer"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/namespace"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/network"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/providerservice"
	tenantregistry "tenant.io/tenant-apiserver/pkg/registry/tenant/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/vrfpeering"
	"tenant.io/tenant-apiserver/pkg/syncer"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// ExtraConfig is the configuration of tenant.io beyond the generic server's.
type ExtraConfig struct {
	// Resolver maps callers to tenants. Default: a Membership index kept
	// current from the server's own Tenants.
	Resolver tenancy.Resolver
	// QuotaRecountPeriod is how often quota usage is recounted from the
	// stored objects; 0 turns the recount off.
	QuotaRecountPeriod time.Duration
	// Allocator hands out tenant blocks and public IPs; nil: Tenants are
	// stored without addresses (tests of storage alone). PoolSpace holds
	// the AddressPools' claims on their space (a keyspace of its own).
	// LocalSpace holds the claims of tenant objects on their tenant's
	// space (Networks' subnets and NAT addresses, FloatingIPs' and
	// LoadBalancers' public IPs; see base.LocalSpace); nil: they are
	// stored without them.
	Allocator, PoolSpace, LocalSpace *ipam.Allocator
	// IPAMPeriod is how often AddressPool status is refreshed and leaked
	// allocations swept; IPAMSweepMinAge how old an unrecorded allocation
	// must be to be reclaimed.
	IPAMPeriod, IPAMSweepMinAge time.Duration
	// HostPods reads the pods of host namespaces: a tenant Namespace or
	// Tenant is not deleted while pods run there. nil: pods are not
	// checked (tests of storage alone).
	HostPods host.Pods
	// Syncer, when set, runs the syncer on the leader replica.
	Syncer *syncer.Config
}

// Config is the configuration of a tenant.io API server.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
	ExtraConfig   ExtraConfig
}

// Server is a running tenant.io API server.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
	// Storage of every resource, by resource name, for the server's own controllers.
	Storage map[string]*base.Storage
}

type completedConfig struct {
	GenericConfig genericapiserver.CompletedConfig
	ExtraConfig   *ExtraConfig
}

// CompletedConfig is a Config with every default filled in.
type CompletedConfig struct {
	*completedConfig
}

// Complete fills in the defaults of cfg.
func (cfg *Config) Complete() CompletedConfig {
	return CompletedConfig{&completedConfig{
		GenericConfig: cfg.GenericConfig.Complete(),
		ExtraConfig:   &cfg.ExtraConfig,
	}}
}

// New builds the server and installs the tenant.io API group.
func (c completedConfig) New() (*Server, error) {
	genericServer, err := c.GenericConfig.New("tenant-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	s := &Server{GenericAPIServer: genericServer}

	resolver := c.ExtraConfig.Resolver
	var membership *tenancy.Membership
	if resolver == nil {
		membership = tenancy.NewMembership()
		resolver = membership
	}
	watches := tenancy.NewWatchRegistry(resolver)
	deps := base.Deps{
		Resolver:   resolver,
		Authorizer: c.GenericConfig.Authorization.Authorizer,
		Watches:    watches,
		HostPods:   c.ExtraConfig.HostPods,
	}
	s.Storage, err = NewStorage(c.GenericConfig.RESTOptionsGetter, deps)
	if err != nil {
		return nil, err
	}
	if a := c.ExtraConfig.Allocator; a != nil {
		ipamController := InstallIPAM(s.Storage, a, c.ExtraConfig.PoolSpace, c.ExtraConfig.LocalSpace, c.ExtraConfig.IPAMPeriod, c.ExtraConfig.IPAMSweepMinAge)
		s.GenericAPIServer.AddPostStartHookOrDie("tenant-ipam", func(ctx genericapiserver.PostStartHookContext) error {
			go ipamController.Run(ctx)
			return nil
		})
	}

	restStorage := map[string]rest.Storage{}
	for resource, st := range s.Storage {
		restStorage[resource] = st.Main
		restStorage[resource+"/status"] = st.Status
	}
	restStorage["tenants/offboarding"] = tenantregistry.NewOffboardingREST(s.Storage["tenants"].Main, NewOffboarding(s.Storage, deps.HostPods))
	apiGroupInfo := genericapiserver.NewDefaultAPIGroupInfo(tenant.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	apiGroupInfo.NegotiatedSerializer = jsonOnly{Codecs}
	apiGroupInfo.VersionedResourcesStorageMap[v1alpha1.SchemeGroupVersion.Version] = restStorage
	if err := s.GenericAPIServer.InstallAPIGroup(&apiGroupInfo); err != nil {
		return nil, err
	}

	if period := c.ExtraConfig.QuotaRecountPeriod; period > 0 {
		recounter := quota.NewRecounter(s.Storage["tenants"].StatusStore, map[string]*genericregistry.Store{
			quota.Namespaces:    s.Storage["namespaces"].Store,
			quota.Networks:      s.Storage["networks"].Store,
			quota.FloatingIPs:   s.Storage["floatingips"].Store,
			quota.LoadBalancers: s.Storage["loadbalancers"].Store,
		})
		recounter.Period = period
		s.GenericAPIServer.AddPostStartHookOrDie("tenant-quota-recount", func(ctx genericapiserver.PostStartHookContext) error {
			go recounter.Run(ctx)
			return nil
		})
	}

	if c.ExtraConfig.Syncer != nil {
		if err := s.installSyncer(*c.ExtraConfig.Syncer); err != nil {
			return nil, err
		}
	}

	if membership != nil {
		if err := s.startMembership(c.GenericConfig.LoopbackClientConfig, membership, watches); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// InstallIPAM wires IPAM into the storage of every resource (as NewStorage
// returns it): Tenants get their block and public IPs as they are created,
// changed and deleted, AddressPools are guarded, and, when localSpace is
// set, Networks get their subnets and NAT gateway addresses, and
// FloatingIPs and LoadBalancers their public IPs, from their tenant's
// space, in the tenant-local keyspace. It returns the controller
// of IPAM's periodic work (pool status, sweepers), for the caller to run.
func InstallIPAM(storage map[string]*base.Storage, a, poolSpace, localSpace *ipam.Allocator, period, sweepMinAge time.Duration) *upkeep.Controller {
	tenants, pools := storage["tenants"], storage["addresspools"]
	addresses := &tenantregistry.Addresses{Allocator: a, Tenants: tenants.Store, Pools: pools.Store, Local: localSpace,
		Users: stores(storage, "floatingips", "loadbalancers", "networks")}
	tenants.Store.BeginCreate = addresses.BeginCreate
	tenants.Store.BeginUpdate = addresses.BeginUpdate
	tenants.Store.AfterDelete = addresses.AfterDelete
	tenants.Main.AroundUpdate = addresses.AroundUpdate

	guard := &addresspool.Guard{Allocator: a, Space: poolSpace, Pools: pools.Store}
	pools.Store.BeginCreate = guard.BeginCreate
	pools.Store.BeginUpdate = guard.BeginUpdate
	pools.Store.AfterDelete = guard.AfterDelete
	pools.Main.AroundUpdate = guard.AroundUpdate
	pools.Main.BeforeDelete = guard.BeforeDelete

	c := &upkeep.Controller{
		Allocator: a, Pools: pools.Store, PoolStatus: pools.StatusStore,
		Keep: addresses.Keep(), Period: period, SweepMinAge: sweepMinAge,
	}
	if localSpace != nil {
		c.Local = localSpace
		c.LocalKeep, c.LocalReclaim = installLocalIPAM(storage, localSpace)
	}
	return c
}

// installLocalIPAM gives Networks their subnets and NAT gateway addresses,
// and FloatingIPs and LoadBalancers their public IPs, from their tenant's
// space, in the tenant-local keyspace, and returns the sweeper's rule for
// that keyspace and its repair of unheld claims.
func installLocalIPAM(storage map[string]*base.Storage, localSpace *ipam.Allocator) (func(ipam.Allocation) (bool, error), func(context.Context) (int, error)) {
	space := &base.LocalSpace{Allocator: localSpace, Tenants: storage["tenants"].Store,
		// They claim in the tenant-local keyspace, but those stored before
		// they did hold no claim until the next Reclaim: what they name
		// counts as taken too.
		Users: stores(storage, floatingip.Resource, loadbalancer.Resource),
	}
	networks := storage["networks"]
	networkIPAM := &network.IPAM{Space: space, Networks: networks.Store}
	networks.Store.BeginCreate = networkIPAM.BeginCreate
	networks.Store.BeginUpdate = networkIPAM.BeginUpdate
	networks.Store.AfterDelete = base.ChainAfterDelete(networks.Store.AfterDelete, networkIPAM.AfterDelete)
	networks.Main.AroundUpdate = networkIPAM.AroundUpdate
	fips, lbs := storage[floatingip.Resource], storage[loadbalancer.Resource]
	fipIPAM, lbIPAM := floatingip.NewIPAM(space, fips), loadbalancer.NewIPAM(space, lbs)
	fipIPAM.Install(fips)
	lbIPAM.Install(lbs)
	keep := space.Keep(map[string]base.LocalKind{
		network.Resource:      {Store: networks.Store, Records: network.Records},
		floatingip.Resource:   {Store: fips.Store, Records: floatingip.Records},
		loadbalancer.Resource: {Store: lbs.Store, Records: loadbalancer.Records},
		// A Tenant's holds on the public IPs an update of it gives up are
		// never recorded: the sweeper reclaims those a crash left.
		"tenants": {Store: storage["tenants"].Store, Records: func(runtime.Object, string, netip.Prefix) bool { return false }},
	})
	return keep, reclaimAll(networkIPAM.Reclaim, fipIPAM.Reclaim, lbIPAM.Reclaim)
}

// reclaimAll runs each repair of unheld tenant-local claims, and adds up
// what they claimed.
func reclaimAll(reclaims ...func(context.Context) (int, error)) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		total := 0
		var errs []error
		for _, reclaim := range reclaims {
			n, err := reclaim(ctx)
			total += n
			errs = append(errs, err)
		}
		return total, errors.Join(errs...)
	}
}

// startMembership keeps membership current from the server's own Tenants,
// read through its loopback client, and ends the watches of callers whose
// tenant changed. The server is not ready before the index is filled.
func (s *Server) startMembership(loopback *restclient.Config, membership *tenancy.Membership, watches *tenancy.WatchRegistry) error {
	client, err := clientset.NewForConfig(loopback)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	tenants := factory.Tenant().V1alpha1().Tenants().Informer()
	if _, err := tenants.AddEventHandler(membership.EventHandler()); err != nil {
		return err
	}
	membership.OnChange(watches.Revalidate)
	s.GenericAPIServer.AddPostStartHookOrDie("tenant-membership", func(ctx genericapiserver.PostStartHookContext) error {
		factory.Start(ctx.Done())
		return nil
	})
	return s.GenericAPIServer.AddReadyzChecks(healthz.NamedCheck("tenant-membership", func(*http.Request) error {
		if !tenants.HasSynced() {
			return fmt.Errorf("tenant membership not synced yet")
		}
		return nil
	}))
}

// NewStorage builds the storage of every tenant.io resource, by resource name. Tenants come
// first (quotas are charged on them), then Namespaces (namespaced kinds
// live in them). Deletes of Tenants and Namespaces check deps.HostPods for
// pods when it is set.
func NewStorage(optsGetter generic.RESTOptionsGetter, deps base.Deps) (map[string]*base.Storage, error) {
	type newStorage func(*runtime.Scheme, generic.RESTOptionsGetter, base.Deps) (*base.Storage, error)
	out := map[string]*base.Storage{}
	// In this order: each may need what the ones before it provide.
	for _, r := range []struct {
		resource string
		new      newStorage
		provides func(*base.Storage)
	}{
		{"tenants", tenantregistry.NewStorage, func(st *base.Storage) { deps.Quota = quota.NewTracker(st.StatusStore) }},
		{"addresspools", addresspool.NewStorage, nil},
		{"providerservices", providerservice.NewStorage, nil},
		{"vrfpeerings", vrfpeering.NewStorage, nil},
		{"namespaces", namespace.NewStorage, func(st *base.Storage) { deps.Namespaces = st.Store }},
		{"networks", network.NewStorage, nil},
		{"floatingips", floatingip.NewStorage, nil},
		{"loadbalancers", loadbalancer.NewStorage, nil},
	} {
		st, err := r.new(Scheme, optsGetter, deps)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.resource, err)
		}
		out[r.resource] = st
		if r.provides != nil {
			r.provides(st)
		}
	}
	out["tenants"].Main.BeforeDelete = NewOffboarding(out, deps.HostPods).BeforeDelete
	deletion := &namespace.Deletion{
		Contents:   stores(out, "floatingips", "loadbalancers"),
		Namespaces: out["namespaces"].Store,
		Tenants:    out["tenants"].Store,
		HostPods:   deps.HostPods,
	}
	out["namespaces"].Main.BeforeDelete = deletion.BeforeDelete
	// A Namespace names an existing Network; a Network is not deleted
	// while Namespaces name it.
	out["namespaces"].Store.BeginCreate = (&namespace.Attachment{Networks: out["networks"].Store}).BeginCreate
	out["networks"].Main.BeforeDelete = (&network.Deletion{Namespaces: out["namespaces"].Store}).BeforeDelete
	return out, nil
}

// NewOffboarding decides, over the storage of every resource, whether a
// Tenant may be deleted; DELETE tenants/<t> and GET tenants/<t>/offboarding
// ask it the same question.
func NewOffboarding(storage map[string]*base.Storage, hostPods host.Pods) *tenantregistry.Offboarding {
	return &tenantregistry.Offboarding{
		Tenants:  storage["tenants"].Store,
		Owned:    stores(storage, "namespaces", "networks", "floatingips", "loadbalancers"),
		HostPods: hostPods,
	}
}

// stores returns the unguarded stores of resources.
func stores(storage map[string]*base.Storage, resources ...string) map[string]*genericregistry.Store {
	m := map[string]*genericregistry.Store{}
	for _, r := range resources {
		m[r] = storage[r].Store
	}
	return m
}
