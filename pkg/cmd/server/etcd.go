package server

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/klog/v2"
)

// EmbeddedEtcdOptions configure the etcd that runs inside tenant-apiserver
// when no --etcd-servers are given: one command then runs the whole server.
type EmbeddedEtcdOptions struct {
	// DataDir is where the embedded etcd keeps its data.
	DataDir string
}

// NewEmbeddedEtcdOptions returns the defaults.
func NewEmbeddedEtcdOptions() *EmbeddedEtcdOptions {
	return &EmbeddedEtcdOptions{DataDir: "tenant-apiserver.etcd"}
}

// AddFlags adds the flags of the embedded etcd.
func (o *EmbeddedEtcdOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir,
		"Directory of the embedded etcd, used when --etcd-servers is empty.")
}

// Start runs etcd on free loopback ports and returns its client URL. It
// stops when ctx ends.
func (o *EmbeddedEtcdOptions) Start(ctx context.Context) (string, error) {
	clientURL, err := freeLoopbackURL()
	if err != nil {
		return "", err
	}
	peerURL, err := freeLoopbackURL()
	if err != nil {
		return "", err
	}
	cfg := embed.NewConfig()
	cfg.Name = "tenant-apiserver"
	cfg.Dir = o.DataDir
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ListenPeerUrls = []url.URL{*peerURL}
	cfg.AdvertisePeerUrls = []url.URL{*peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "warn"

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return "", err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		return "", fmt.Errorf("embedded etcd in %s did not become ready within 60s", o.DataDir)
	}
	go func() {
		<-ctx.Done()
		e.Close()
	}()
	klog.FromContext(ctx).Info("Started embedded etcd", "dataDir", o.DataDir, "url", clientURL.String())
	return clientURL.String(), nil
}

func freeLoopbackURL() (*url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer func() { _ = l.Close() }()
	return &url.URL{Scheme: "http", Host: l.Addr().String()}, nil
}
