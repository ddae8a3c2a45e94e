// Package registrytest runs tenant.io storage on a real, embedded etcd for
// tests of the registry, quota and tenancy packages.
package registrytest

import (
	"errors"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/apiserver/pkg/registry/generic"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/apiserver"
)

// StartEtcd runs an embedded etcd on loopback for the test and returns its
// client URL. (k8s.io/apiserver/pkg/storage/etcd3/testing does the same but
// imports testify, which this module does not require.)
//
// Its ports are found free and then bound by etcd: test packages run in
// parallel, and another may take a port in between, so a start that finds
// its port taken is tried again on new ones.
func StartEtcd(t testing.TB) string {
	t.Helper()
	var (
		e         *embed.Etcd
		clientURL url.URL
		err       error
	)
	for attempt := 1; ; attempt++ {
		var peerURL url.URL
		clientURL, peerURL = freeLoopbackURL(t), freeLoopbackURL(t)
		cfg := embed.NewConfig()
		cfg.Dir = t.TempDir()
		cfg.UnsafeNoFsync = true
		cfg.LogLevel = "error"
		cfg.ListenClientUrls = []url.URL{clientURL}
		cfg.AdvertiseClientUrls = []url.URL{clientURL}
		cfg.ListenPeerUrls = []url.URL{peerURL}
		cfg.AdvertisePeerUrls = []url.URL{peerURL}
		cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
		e, err = embed.StartEtcd(cfg)
		if err == nil {
			break
		}
		if attempt == 5 || !errors.Is(err, syscall.EADDRINUSE) {
			t.Fatalf("starting etcd: %v", err)
		}
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		t.Fatal("etcd did not become ready")
	}
	return clientURL.String()
}

func freeLoopbackURL(t testing.TB) url.URL {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return url.URL{Scheme: "http", Host: l.Addr().String()}
}

// RESTOptionsGetter hands out storage on the etcd at url from the server's
// own storage factory: one key prefix per group and resource, through the
// watch cache when cached is true.
func RESTOptionsGetter(url string, cached bool) generic.RESTOptionsGetter {
	config := storagebackend.NewDefaultConfig("/registry", apiserver.Codecs.LegacyCodec(v1alpha1.SchemeGroupVersion))
	config.Transport.ServerList = []string{url}
	opts := genericoptions.NewEtcdOptions(config)
	opts.EnableWatchCache = cached
	return &genericoptions.StorageFactoryRestOptionsFactory{Options: *opts, StorageFactory: &genericoptions.SimpleStorageFactory{StorageConfig: *config}}
}
