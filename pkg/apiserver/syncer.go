package apiserver

import (
	genericapiserver "k8s.io/apiserver/pkg/server"

	"tenant.io/tenant-apiserver/pkg/syncer"
)

// installSyncer runs the syncer once the server serves: it campaigns for
// the host Lease, and syncs while it leads.
func (s *Server) installSyncer(config syncer.Config) error {
	sy, err := syncer.New(config, s.Storage)
	if err != nil {
		return err
	}
	s.GenericAPIServer.AddPostStartHookOrDie("tenant-syncer", func(ctx genericapiserver.PostStartHookContext) error {
		go sy.Run(ctx)
		return nil
	})
	return nil
}
