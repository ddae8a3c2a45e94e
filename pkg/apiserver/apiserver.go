// Package apiserver assembles the tenant.io API server: the generic server
// of k8s.io/apiserver with the storage of every tenant.io resource installed.
package apiserver

import (
	"fmt"
	corev1 "k8s.io/api/core/v1"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	restclient "k8s.io/client-go/rest"

	"tenant.io/tenant-apiserver/pkg/apis/admin"
	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	informers "tenant.io/tenant-apiserver/pkg/generated/informers/externalversions"
	"tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/hostbinding"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/ipam/upkeep"
	"tenant.io/tenant-apiserver/pkg/quota"
	adminregistry "tenant.io/tenant-apiserver/pkg/registry/admin"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/addresspool"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/connects"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/floatingip"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/hostclaim"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/hostclass"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/loadbalancer"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/namespace"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/network"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/providerservice"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/tenants"
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
	// IPAM are the keyspaces of address claims (see kindstore.IPAM); without
	// an allocator, objects are stored without addresses (tests of
	// storage alone).
	IPAM kindstore.IPAM
	// HostBindings records which server each HostClaim holds (see
	// pkg/hostbinding); nil: no server is bound.
	HostBindings *hostbinding.Ledger
	// IPAMPeriod is how often AddressPool status is refreshed and leaked
	// allocations swept; IPAMSweepMinAge how old an unrecorded allocation
	// must be to be reclaimed.
	IPAMPeriod, IPAMSweepMinAge time.Duration
	// HostWorkloads reads the workloads of host namespaces: a tenant
	// Namespace or Tenant is not deleted while pods or VMs run there or
	// disks hold data. nil: they are not checked (tests of storage alone).
	HostWorkloads host.Workloads
	// Syncer, when set, runs the syncer on the leader replica.
	Syncer *syncer.Config
	// DefaultObjectQuota are the object counts a Tenant created without
	// them gets (kindstore.Deps.DefaultObjectQuota).
	DefaultObjectQuota corev1.ResourceList
	// TenantDNSAddress is the provider's tenant DNS server
	// (kindstore.Deps.TenantDNSAddress); empty: none.
	TenantDNSAddress string
	// RouteDomain is the provider's route domain
	// (kindstore.Deps.RouteDomain); empty: none.
	RouteDomain string
}

// Config is the configuration of a tenant.io API server.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
	ExtraConfig   ExtraConfig
}

// Server is a running tenant.io API server.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
	// Storage of every resource, for the server's own controllers.
	Storage *kindstore.Storages
	// Connects hands out the connect subnets of tenants' connections with
	// provider networks; nil without IPAM.
	Connects *connects.Connects
	// HostBindings records which server each HostClaim holds; nil
	// without etcd (no server is bound).
	HostBindings *hostbinding.Ledger
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

// New builds the server and installs the tenant.io API group and the
// provider's views of it, admin.tenant.io.
func (c completedConfig) New() (*Server, error) {
	gate := installStartupGate(c.GenericConfig.Config)
	genericServer, err := c.GenericConfig.New("tenant-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	s := &Server{GenericAPIServer: genericServer, HostBindings: c.ExtraConfig.HostBindings}
	if err := s.startGate(gate); err != nil {
		return nil, err
	}

	resolver := c.ExtraConfig.Resolver
	var membership *tenancy.Membership
	if resolver == nil {
		membership = tenancy.NewMembership()
		resolver = membership
	}
	watches := tenancy.NewWatchRegistry(resolver)
	deps := kindstore.Deps{
		Resolver:           resolver,
		Authorizer:         c.GenericConfig.Authorization.Authorizer,
		Watches:            watches,
		HostWorkloads:      c.ExtraConfig.HostWorkloads,
		IPAM:               c.ExtraConfig.IPAM,
		DefaultObjectQuota: c.ExtraConfig.DefaultObjectQuota,
		TenantDNSAddress:   c.ExtraConfig.TenantDNSAddress,
		RouteDomain:        c.ExtraConfig.RouteDomain,
	}
	s.Storage, err = NewStorage(c.GenericConfig.RESTOptionsGetter, deps)
	if err != nil {
		return nil, err
	}
	if deps.IPAM.Allocator != nil {
		s.Connects = &connects.Connects{Allocator: deps.IPAM.Allocator, Storages: s.Storage}
		s.Storage.ProviderServices.Recorders = append(s.Storage.ProviderServices.Recorders, connects.Recorder{Connects: s.Connects})
		upkeep := NewIPAMUpkeep(s.Storage, deps.IPAM.Allocator, c.ExtraConfig.IPAMPeriod, c.ExtraConfig.IPAMSweepMinAge)
		s.GenericAPIServer.AddPostStartHookOrDie("tenant-ipam", func(ctx genericapiserver.PostStartHookContext) error {
			go upkeep.Run(ctx)
			return nil
		})
	}

	restStorage := map[string]rest.Storage{}
	for _, st := range s.Storage.List() {
		restStorage[st.Resource] = st.Main
		restStorage[st.Resource+"/status"] = st.Status
		for sub, r := range st.Subresources {
			restStorage[st.Resource+"/"+sub] = r
		}
	}
	apiGroupInfo := genericapiserver.NewDefaultAPIGroupInfo(tenant.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	apiGroupInfo.NegotiatedSerializer = jsonOnly{Codecs}
	apiGroupInfo.VersionedResourcesStorageMap[v1alpha1.SchemeGroupVersion.Version] = restStorage
	if err := s.GenericAPIServer.InstallAPIGroup(&apiGroupInfo); err != nil {
		return nil, err
	}
	adminGroupInfo := genericapiserver.NewDefaultAPIGroupInfo(admin.GroupName, AdminScheme, metav1.ParameterCodec, AdminCodecs)
	adminGroupInfo.NegotiatedSerializer = jsonOnly{AdminCodecs}
	adminGroupInfo.VersionedResourcesStorageMap[admin.SchemeGroupVersion.Version] = adminregistry.NewViews(s.Storage, resolver, watches)
	if err := s.GenericAPIServer.InstallAPIGroup(&adminGroupInfo); err != nil {
		return nil, err
	}

	if period := c.ExtraConfig.QuotaRecountPeriod; period > 0 {
		recounter := quota.NewRecounter(s.Storage.Tenants.StatusStore, map[string]*genericregistry.Store{
			quota.Namespaces:    s.Storage.Namespaces.Store,
			quota.Networks:      s.Storage.Networks.Store,
			quota.FloatingIPs:   s.Storage.FloatingIPs.Store,
			quota.LoadBalancers: s.Storage.LoadBalancers.Store,
			quota.HostClaims:    s.Storage.HostClaims.Store,
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
		if err := s.startMembership(c.GenericConfig.LoopbackClientConfig, membership, watches, gate); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// NewIPAMUpkeep returns the controller of IPAM's periodic work over
// storages: AddressPool status, the sweepers of every keyspace the
// storages' objects record claims in, and the repair of claims they record
// and nobody holds. The caller runs it.
func NewIPAMUpkeep(storages *kindstore.Storages, a *ipam.Allocator, period, sweepMinAge time.Duration) *upkeep.Controller {
	c := &upkeep.Controller{
		Allocator: a, Pools: storages.AddressPools.Store, PoolStatus: storages.AddressPools.StatusStore,
		Period: period, SweepMinAge: sweepMinAge,
	}
	for _, st := range storages.List() {
		c.Recorders = append(c.Recorders, st.Recorders...)
	}
	return c
}

// startMembership keeps membership current from the server's own Tenants,
// read through its loopback client, and ends the watches of callers whose
// tenant changed. The server is not ready before the index is filled.
func (s *Server) startMembership(loopback *restclient.Config, membership *tenancy.Membership, watches *tenancy.WatchRegistry, gate *startupGate) error {
	client, err := clientset.NewForConfig(loopback)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	tenants := factory.Tenant().V1alpha1().Tenants().Informer()
	if err := tenants.SetTransform(tenancy.MembersOnly); err != nil {
		return err
	}
	if _, err := tenants.AddEventHandler(membership.EventHandler()); err != nil {
		return err
	}
	membership.OnChange(watches.Revalidate)
	gate.require("the tenant membership index", tenants.HasSynced)
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

// NewStorage builds the storage of every tenant.io resource, each with
// its own hooks (see kindstore.Deps.Storages), in the order of kindstore.Storages:
// quotas are charged on Tenants, and namespaced kinds live in Namespaces.
func NewStorage(optsGetter generic.RESTOptionsGetter, deps kindstore.Deps) (*kindstore.Storages, error) {
	out := &kindstore.Storages{}
	deps.Storages = out
	type newStorage func(*runtime.Scheme, generic.RESTOptionsGetter, kindstore.Deps) (*kindstore.Storage, error)
	for _, r := range []struct {
		into **kindstore.Storage
		new  newStorage
	}{
		{&out.Tenants, tenants.NewStorage},
		{&out.AddressPools, addresspool.NewStorage},
		{&out.ProviderServices, providerservice.NewStorage},
		{&out.VRFPeerings, vrfpeering.NewStorage},
		{&out.Namespaces, namespace.NewStorage},
		{&out.Networks, network.NewStorage},
		{&out.FloatingIPs, floatingip.NewStorage},
		{&out.LoadBalancers, loadbalancer.NewStorage},
		{&out.HostClasses, hostclass.NewStorage},
		{&out.HostClaims, hostclaim.NewStorage},
	} {
		st, err := r.new(Scheme, optsGetter, deps)
		if err != nil {
			return nil, err
		}
		*r.into = st
		if st == out.Tenants && deps.Quota == nil {
			deps.Quota = quota.NewTracker(st.StatusStore)
		}
	}
	return out, nil
}
