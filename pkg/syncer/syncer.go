package syncer

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	egressipclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1/apis/clientset/versioned"
	raclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/routeadvertisements/v1/apis/clientset/versioned"
	udnclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1/apis/clientset/versioned"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	hostapi "tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/syncer/checker"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/floatingip"
	"tenant.io/tenant-apiserver/pkg/syncer/hostclaim"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/loadbalancer"
	"tenant.io/tenant-apiserver/pkg/syncer/namespace"
	"tenant.io/tenant-apiserver/pkg/syncer/network"
	"tenant.io/tenant-apiserver/pkg/syncer/onboarding"
	"tenant.io/tenant-apiserver/pkg/syncer/providerservice"
	"tenant.io/tenant-apiserver/pkg/syncer/vrfpeering"
)

// Config configures the syncer.
type Config struct {
	// Host is the host API the syncer writes to and elects its leader on.
	Host *rest.Config
	// LeaseNamespace and LeaseName name the host Lease of the leader.
	LeaseNamespace, LeaseName string
	// Identity names this replica in the Lease; default <hostname>_<pid>_<random>.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod pace the election: a
	// leader that dies is replaced within LeaseDuration.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Workers per controller.
	Workers int
	// CheckPeriod is how often orphans are removed and every object checked.
	CheckPeriod time.Duration
	// CheckRate is how many keys a second, at most, each controller's
	// pass of the periodic check queues.
	CheckRate float64
	// MetalLBNamespace holds the tenants' MetalLB pools and advertisements.
	MetalLBNamespace string
	// FRRNamespace is frr-k8s': it holds the VRF peerings' FRRConfigurations
	// and the Secrets of their BGP passwords.
	FRRNamespace string
	// ClusterDomain is the cluster's DNS domain, which the alias Services
	// of provider services name; default cluster.local.
	ClusterDomain string
	// TenantDNSAddress is the IPv4 address of the provider's tenant DNS
	// server as tenants' pods reach it: the nameserver of every host
	// namespace of a tenant of Hard isolation. Empty: there is none, and
	// the host namespaces of a Hard tenant (stored before the server was
	// started without it) are reported not synced.
	TenantDNSAddress string
	// PublicDNSZone is the provider's public DNS zone, in which the public
	// addresses of FloatingIPs and LoadBalancers are named
	// (hostnames.PublicDNSName); empty: none are.
	PublicDNSZone string
	// Advertise is how MetalLB announces tenants' public IPs.
	Advertise onboarding.Advertisement
	// NoFlowSchemas stops the syncer giving each tenant a FlowSchema on the
	// host (its requests there one flow of the tenants' priority level),
	// and makes it remove the ones it made.
	NoFlowSchemas bool
	// HostFlowSchemas, when set, is the process' informer of every
	// FlowSchema (API Priority and Fairness'), prepared with
	// controller.Shared: the syncer's terms read the tenants' FlowSchemas
	// from it.
	HostFlowSchemas cache.SharedIndexInformer
}

// Syncer is a configured syncer, ready to Run.
type Syncer struct {
	config  Config
	storage controller.Storage
	host    controller.HostClients
}

// New returns a syncer of the server's storage.
func New(config Config, storage controller.Storage) (*Syncer, error) {
	if config.Identity == "" {
		hostname, err := os.Hostname()
		if err != nil {
			return nil, err
		}
		// The PID tells replicas on one machine apart; the UUID, restarts.
		config.Identity = fmt.Sprintf("%s_%d_%s", hostname, os.Getpid(), string(uuid.NewUUID())[:8])
	}
	var host controller.HostClients
	var err error
	// Built-in kinds travel as protobuf: the host encodes and the syncer
	// decodes its lists of namespaces and RoleBindings (one of each per
	// tenant Namespace) several times faster than as JSON. The clients of
	// custom resources stay on JSON, the only form those are served in.
	// None asks for compressed answers (hostapi.Uncompressed).
	if host.Kube, err = kubernetes.NewForConfig(hostapi.Protobuf(config.Host)); err != nil {
		return nil, err
	}
	custom := hostapi.Uncompressed(config.Host)
	if host.Dynamic, err = dynamic.NewForConfig(custom); err != nil {
		return nil, err
	}
	if host.UDN, err = udnclientset.NewForConfig(custom); err != nil {
		return nil, err
	}
	if host.EgressIP, err = egressipclientset.NewForConfig(custom); err != nil {
		return nil, err
	}
	if host.RA, err = raclientset.NewForConfig(custom); err != nil {
		return nil, err
	}
	if host.Metadata, err = metadata.NewForConfig(custom); err != nil {
		return nil, err
	}
	host.FlowSchemas = config.HostFlowSchemas
	return &Syncer{config: config, storage: storage, host: host}, nil
}

// Identity is the replica's name in the Lease.
func (s *Syncer) Identity() string { return s.config.Identity }

// Run campaigns for the Lease until ctx ends, and syncs while it leads. A
// replica that loses the Lease stops syncing and campaigns again.
func (s *Syncer) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("identity", s.config.Identity)
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: s.config.LeaseNamespace, Name: s.config.LeaseName},
		Client:     s.host.Kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: s.config.Identity},
	}
	for ctx.Err() == nil {
		elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   s.config.LeaseDuration,
			RenewDeadline:   s.config.RenewDeadline,
			RetryPeriod:     s.config.RetryPeriod,
			ReleaseOnCancel: true,
			Name:            s.config.LeaseName,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					logger.Info("Leading: starting the syncer")
					s.lead(klog.NewContext(ctx, logger))
				},
				OnStoppedLeading: func() { logger.Info("Not leading: the syncer stopped") },
				OnNewLeader: func(identity string) {
					if identity != s.config.Identity {
						logger.Info("Another replica leads the syncer", "leader", identity)
					}
				},
			},
		})
		if err != nil {
			logger.Error(err, "Invalid leader election configuration")
			return
		}
		elector.Run(ctx)
	}
}

// lead runs the controllers until ctx ends (the Lease is lost or the
// server stops), on informers of its own (but FlowSchemas, which it reads
// from API Priority and Fairness' informer when Config.HostFlowSchemas is
// set): a new term starts from a fresh view of the host.
func (s *Syncer) lead(ctx context.Context) {
	src := controller.NewSources(s.storage, s.host, controller.Namespaces{MetalLB: s.config.MetalLBNamespace, FRR: s.config.FRRNamespace})
	kinds := hostkinds.New(src)
	namespaces, err := namespace.New(src, kinds, namespace.TenantDNS{Address: s.config.TenantDNSAddress, ClusterDomain: s.config.ClusterDomain})
	if err != nil {
		klog.FromContext(ctx).Error(err, "Starting the namespace controller")
		return
	}
	if h := s.storage.Namespaces.Created; h != nil {
		h.Take(namespaces.HandOff)
		defer h.Release()
	}
	networks, err := network.New(src, kinds)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Starting the network controller")
		return
	}
	loadBalancers, err := loadbalancer.New(src, kinds, s.config.PublicDNSZone)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Starting the load balancer controller")
		return
	}
	floatingIPs, err := floatingip.New(src, kinds, s.config.PublicDNSZone)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Starting the floating IP controller")
		return
	}
	peerings, err := vrfpeering.New(src, kinds)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Starting the VRF peering controller")
		return
	}
	services, err := providerservice.New(src, kinds, s.config.ClusterDomain)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Starting the provider service controller")
		return
	}
	tenants, err := onboarding.New(src, kinds, s.config.Advertise)
	if err == nil {
		tenants.FlowSchemas = !s.config.NoFlowSchemas
	}
	if err != nil {
		klog.FromContext(ctx).Error(err, "Starting the tenant controller")
		return
	}
	hostClaims, err := hostclaim.New(src)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Starting the host claim controller")
		return
	}
	hostClasses, err := hostclaim.NewClasses(src)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Starting the host class controller")
		return
	}
	check := checker.New(src, s.config.CheckPeriod, s.config.CheckRate,
		checker.Resync{Queue: hostClaims.Queue, Keys: hostClaims.AllKeys}, checker.Resync{Queue: hostClasses.Queue, Keys: hostClasses.AllKeys},
		checker.Resync{Queue: namespaces.Queue, Keys: namespaces.AllKeys}, checker.Resync{Queue: networks.Queue, Keys: networks.AllKeys},
		checker.Resync{Queue: loadBalancers.Queue, Keys: loadBalancers.AllKeys}, checker.Resync{Queue: floatingIPs.Queue, Keys: floatingIPs.AllKeys},
		checker.Resync{Queue: peerings.Queue, Keys: peerings.AllKeys}, checker.Resync{Queue: services.Queue, Keys: services.AllKeys},
		checker.Resync{Queue: tenants.Queue, Keys: tenants.AllKeys})
	started := time.Now()
	src.Start(ctx)
	// Each controller's workers start once every informer has synced.
	synced := src.Synced()
	go namespaces.Run(ctx, s.config.Workers, synced...)
	go networks.Run(ctx, max(1, s.config.Workers/2), synced...)
	go loadBalancers.Run(ctx, max(1, s.config.Workers/2), synced...)
	go floatingIPs.Run(ctx, max(1, s.config.Workers/2), synced...)
	go peerings.Run(ctx, max(1, s.config.Workers/8), synced...)
	go services.Run(ctx, max(1, s.config.Workers/2), synced...)
	go tenants.Run(ctx, max(1, s.config.Workers/2), synced...)
	go hostClaims.Run(ctx, max(1, s.config.Workers/4), synced...)
	go hostClasses.Run(ctx, 1, synced...)
	go hostClaims.RunOrphans(ctx)
	initialSync := make(chan struct{})
	go reportInitialSync(ctx, initialSync, started, src, namespaces.Worker, networks.Worker, loadBalancers.Worker, floatingIPs.Worker, peerings.Worker, services.Worker, tenants.Worker, hostClaims.Worker, hostClasses.Worker)
	check.Run(ctx, initialSync)
}

// reportInitialSync records how long a new term took to look at every
// tenant object once: from taking the lead, through filling the caches,
// until the queues first ran dry; then it closes done.
func reportInitialSync(ctx context.Context, done chan<- struct{}, started time.Time, src *controller.Sources, workers ...*controller.Worker) {
	slowest, ok := waitFilled(ctx, started, src.NamedSynced())
	if !ok {
		return
	}
	klog.FromContext(ctx).Info("Syncer caches filled", "duration", time.Since(started), "slowest", slowest)
	var synced []cache.DoneChecker
	for _, w := range workers {
		synced = append(synced, w.HandlersSynced...)
	}
	if !cache.WaitFor(ctx, "", synced...) {
		return
	}
	err := wait.PollUntilContextCancel(ctx, idlePoll, false, func(context.Context) (bool, error) {
		for _, w := range workers {
			if !w.Idle() {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return
	}
	elapsed := time.Since(started)
	close(done)
	initialSyncSeconds.Set(elapsed.Seconds())
	klog.FromContext(ctx).Info("Initial sync done: every tenant object was reconciled", "duration", elapsed,
		"tenants", len(src.Tenants.GetStore().ListKeys()), "namespaces", len(src.Namespaces.GetStore().ListKeys()),
		"networks", len(src.Networks.GetStore().ListKeys()), "loadBalancers", len(src.LoadBalancers.GetStore().ListKeys()),
		"floatingIPs", len(src.FloatingIPs.GetStore().ListKeys()))
}

// idlePoll is how often the initial sync's report looks whether the
// queues have run dry (a look costs a lock of each queue).
const idlePoll = 10 * time.Millisecond

// waitFilled waits until every informer has synced, and names the three
// that took longest, with the time each took from started.
func waitFilled(ctx context.Context, started time.Time, informers []controller.NamedSynced) (string, bool) {
	var mu sync.Mutex
	took := make(map[string]time.Duration, len(informers))
	var wg sync.WaitGroup
	for _, inf := range informers {
		wg.Go(func() {
			select {
			case <-inf.Synced.Done():
				mu.Lock()
				took[inf.Name] = time.Since(started)
				mu.Unlock()
			case <-ctx.Done():
			}
		})
	}
	wg.Wait()
	if len(took) < len(informers) {
		return "", false
	}
	names := make([]string, 0, len(took))
	for name := range took {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return took[names[i]] > took[names[j]] })
	var parts []string
	for _, name := range names[:min(3, len(names))] {
		parts = append(parts, fmt.Sprintf("%s %s", name, took[name].Round(time.Millisecond)))
	}
	return strings.Join(parts, ", "), true
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.LeaseDuration <= c.RenewDeadline:
		return fmt.Errorf("--syncer-lease-duration (%s) must be longer than --syncer-renew-deadline (%s)", c.LeaseDuration, c.RenewDeadline)
	case c.Workers < 1:
		return fmt.Errorf("--syncer-workers must be at least 1")
	case c.CheckPeriod <= 0:
		return fmt.Errorf("--syncer-check-period must be positive")
	case c.CheckRate <= 0:
		return fmt.Errorf("--syncer-check-rate must be positive")
	case c.Advertise != onboarding.AdvertiseL2 && c.Advertise != onboarding.AdvertiseBGP:
		return fmt.Errorf("--metallb-advertisement must be L2 or BGP, not %q", c.Advertise)
	}
	return nil
}
