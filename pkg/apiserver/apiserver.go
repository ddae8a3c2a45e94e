// Package apiserver assembles the tenant.io API server: the generic server
// of k8s.io/apiserver with the storage of every tenant.io resource installed.
package apiserver

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/addresspool"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/base"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/floatingip"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/loadbalancer"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/namespace"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/network"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/providerservice"
	tenantregistry "tenant.io/tenant-apiserver/pkg/registry/tenant/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/vrfpeering"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// ExtraConfig is the configuration of tenant.io beyond the generic server's.
type ExtraConfig struct {
	// Resolver maps callers to tenants.
	Resolver tenancy.Resolver
}

// Config is the configuration of a tenant.io API server.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
	ExtraConfig   ExtraConfig
}

// Server is a running tenant.io API server.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
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
	if cfg.ExtraConfig.Resolver == nil {
		cfg.ExtraConfig.Resolver = tenancy.GroupResolver{}
	}
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

	storage, err := c.storage(c.GenericConfig.RESTOptionsGetter)
	if err != nil {
		return nil, err
	}
	apiGroupInfo := genericapiserver.NewDefaultAPIGroupInfo(tenant.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	apiGroupInfo.VersionedResourcesStorageMap[v1alpha1.SchemeGroupVersion.Version] = storage
	if err := s.GenericAPIServer.InstallAPIGroup(&apiGroupInfo); err != nil {
		return nil, err
	}
	return s, nil
}

// storage returns the REST storage of every tenant.io resource, by path.
func (c completedConfig) storage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	type newStorage func(*runtime.Scheme, generic.RESTOptionsGetter, tenancy.Resolver) (*base.Storage, error)
	resources := map[string]newStorage{
		"tenants":          tenantregistry.NewStorage,
		"addresspools":     addresspool.NewStorage,
		"providerservices": providerservice.NewStorage,
		"vrfpeerings":      vrfpeering.NewStorage,
		"namespaces":       namespace.NewStorage,
		"networks":         network.NewStorage,
		"floatingips":      floatingip.NewStorage,
		"loadbalancers":    loadbalancer.NewStorage,
	}
	out := map[string]rest.Storage{}
	for resource, newStorage := range resources {
		s, err := newStorage(Scheme, optsGetter, c.ExtraConfig.Resolver)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", resource, err)
		}
		out[resource] = s.Main
		out[resource+"/status"] = s.Status
	}
	return out, nil
}
