package apiserver

import (
	genericapiserver "k8s.io/apiserver/pkg/server"

	"tenant.io/tenant-apiserver/pkg/registry/tenant/connects"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/syncer"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// installSyncer runs the syncer once the server serves: it campaigns for
// the host Lease, and syncs while it leads.
func (s *Server) installSyncer(config syncer.Config) error {
	var bindings controller.HostBindings
	if s.HostBindings != nil {
		bindings = s.HostBindings
	}
	storage := syncerStorage(s.Storage, s.Connects, bindings)
	// Namespaces this process creates go to its syncer at once.
	storage.Namespaces.Created = &controller.HandOff{}
	s.Storage.Namespaces.Install(kindstore.Hooks{AfterCreate: storage.Namespaces.Created.AfterCreate})
	sy, err := syncer.New(config, storage)
	if err != nil {
		return err
	}
	s.GenericAPIServer.AddPostStartHookOrDie("tenant-syncer", func(ctx genericapiserver.PostStartHookContext) error {
		go sy.Run(ctx)
		return nil
	})
	return nil
}

// syncerStorage is the server's storage as the syncer reads and writes it:
// the registry's stores, past the guards.
func syncerStorage(s *kindstore.Storages, c *connects.Connects, bindings controller.HostBindings) controller.Storage {
	kind := func(st *kindstore.Storage) controller.KindStorage {
		return controller.KindStorage{Resource: st.Resource, Store: st.Store, Status: st.StatusStore, Create: st.Main}
	}
	var subnets controller.ConnectSubnets
	if c != nil {
		subnets = c
	}
	return controller.Storage{
		ConnectSubnets: subnets,
		Tenants:        kind(s.Tenants), Namespaces: kind(s.Namespaces), Networks: kind(s.Networks),
		FloatingIPs: kind(s.FloatingIPs), LoadBalancers: kind(s.LoadBalancers), VRFPeerings: kind(s.VRFPeerings),
		ProviderServices: kind(s.ProviderServices),
		HostClaims:       kind(s.HostClaims), HostClasses: kind(s.HostClasses),
		HostBindings: bindings,
	}
}
