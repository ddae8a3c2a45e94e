package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Options configure a Stack. The zero value starts the whole stack in a
// temporary directory with the binaries of <repo>/_output/bin.
type Options struct {
	// Setup, when set, runs once the stack is up and before RunMain runs the
	// tests, e.g. DemoTenants.
	Setup func(context.Context, *Stack) error

	// RepoRoot is the repository; default: found by RepoRoot().
	RepoRoot string
	// BinDir holds etcd, kube-apiserver, kube-controller-manager, kubectl and
	// metallb-controller (hack/build-tools.sh); the tenant-apiserver is built
	// into it.
	// Default: <RepoRoot>/_output/bin.
	BinDir string
	// WorkDir receives certificates, data, logs and kubeconfigs. Default: a
	// new temporary directory. A given WorkDir must be empty, missing, or a
	// former stack's work dir (which is wiped).
	WorkDir string
	// KeepWorkDir keeps WorkDir after Stop (its logs stay readable).
	KeepWorkDir bool
	// KubeconfigDir receives the users' kubeconfigs; default: <WorkDir>/kubeconfigs.
	KubeconfigDir string
	// ExtraUsers are added to DefaultUsers (one with the same name replaces it).
	ExtraUsers []User
	// Log receives progress messages; nil discards them.
	Log io.Writer
	// SkipMetalLB does not run the MetalLB controller.
	SkipMetalLB bool
	// SkipOVNKube does not run OVN-Kubernetes' cluster-manager (nor create
	// the simulated Nodes): ClusterUserDefinedNetworks then get no
	// NetworkAttachmentDefinitions and no status, and EgressIPs stay
	// unassigned.
	SkipOVNKube bool
	// SkipDataPath does not run the logical data path (OVN's databases,
	// ovn-northd and ovnkube-controller, see DataPath): no logical
	// topology is built, and DataPath returns nil. SkipOVNKube implies it.
	SkipDataPath bool
	// SkipControllerManager does not run kube-controller-manager: host
	// Namespaces then never finish terminating, nothing is garbage
	// collected, no ServiceAccount is created, and kube-apiserver runs
	// without the ServiceAccount admission plugin so that pods can still be
	// created.
	SkipControllerManager bool
	// SkipTenantAPIServer runs only the host side.
	SkipTenantAPIServer bool
	// SkipBuild uses <BinDir>/tenant-apiserver (and tenant-console) as they
	// are instead of running go build.
	SkipBuild bool
	// Console runs the web console (cmd/tenant-console) too, over HTTPS
	// on a loopback port, in front of the host kube-apiserver.
	Console bool
	// TenantDNS runs tenant-dns (cmd/tenant-dns) too, on a loopback port,
	// once the tenant-apiserver is registered.
	TenantDNS bool
	// Gateway runs the provider's gateway too: Traefik
	// (hack/build-tools.sh's traefik) with only its Gateway API provider,
	// serving the shared Gateway of artifacts/host-addons/gateway on a
	// loopback port (GatewayURL), with the endpoint stand-in for the pods
	// behind Services (EndpointStandIn).
	Gateway bool
	// DNSUpstream is where tenant-dns forwards the names that are not the
	// cluster's ("127.0.0.1:<port>"); empty: it forwards nothing.
	DNSUpstream string
	// DNSBaseline has the tenant-dns process serve, on a second port, the
	// cluster's names with CoreDNS's own kubernetes plugin, as a cluster
	// DNS does: the baseline the benchmarks compare the tenants' views with,
	// in the same process. Tenants' pods are never pointed at it.
	DNSBaseline bool
	// TenantEtcd gives the tenant-apiserver an etcd of its own, as
	// installations do (docs/deploy.md), instead of the host's: then an
	// outage of the one leaves the other up.
	TenantEtcd bool
	// BareMetalStandIn runs BareMetalOperatorStandIn, in the test process,
	// for the BareMetalHosts of every namespace: they register, get
	// inspected, provisioned and deprovisioned as with Metal3's
	// baremetal-operator (which cannot run here, see docs/baremetal.md).
	// Stack.BareMetalOperator returns it.
	BareMetalStandIn bool
	// BareMetalStandInStep is the stand-in's pause between two changes of
	// a host; default 200ms.
	BareMetalStandInStep time.Duration
	// HostCRDDir holds the host CRDs to install; default <RepoRoot>/artifacts/host-crds.
	HostCRDDir string
	// HostAddonDir holds what the host's add-ons install besides their
	// CRDs and no process here would (KubeVirt's aggregated roles);
	// default <RepoRoot>/artifacts/host-addons. Its files are installed in
	// every stack; its subdirectory gateway/ with Options.Gateway.
	HostAddonDir string
	// DeployDir holds the deploy manifests; default <RepoRoot>/artifacts/deploy/base.
	DeployDir string
	// KubeAPIServerArgs, ControllerManagerArgs and TenantAPIServerArgs are
	// appended to the flags the framework passes (a later flag wins).
	KubeAPIServerArgs     []string
	ControllerManagerArgs []string
	TenantAPIServerArgs   []string
	OVNKubeArgs           []string
	// TenantAPIServerEnv is added to the environment of tenant-apiserver
	// (e.g. "GOGC=50"): the others' environment is this process'.
	TenantAPIServerEnv []string
	// StartTimeout bounds each process' start; default 3 minutes.
	StartTimeout time.Duration
	// StopTimeout is how long Stop waits after SIGTERM before SIGKILL;
	// default 5s. (kube-apiserver with open watches takes longer to exit
	// gracefully; what it acknowledged is in etcd anyway.)
	StopTimeout time.Duration
}

// Stack is a running etcd, kube-apiserver (with aggregation),
// kube-controller-manager, MetalLB controller, OVN-Kubernetes cluster-manager
// (with simulated Nodes) and tenant-apiserver, all on
// loopback ports. Its methods are safe
// for concurrent use.
type Stack struct {
	opts       Options
	workDir    string
	removeWork bool
	pki        *pki
	users      []User

	etcdPort, etcdPeerPort int
	// tenantEtcdPort, tenantEtcdPeerPort: the tenant-apiserver's own etcd,
	// with Options.TenantEtcd.
	tenantEtcdPort, tenantEtcdPeerPort int
	kubePort                           int
	controllerManagerPort              int
	metallbPort                        int
	ovnkubePort                        int
	tenantPort                         int

	consolePort int

	dnsPort, dnsMetricsPort, dnsBaselinePort int

	// gatewayPort is Traefik's web entrypoint, the shared Gateway's
	// listener port (Options.Gateway).
	gatewayPort     int
	endpointStandIn *EndpointStandIn

	etcd, tenantEtcd, kubeAPIServer, controllerManager, metallb, ovnkube, tenantAPIServer, console, tenantDNS, gateway *process
	// The logical data path (ovn.go).
	ovnNB, ovnSB, ovnNorthd, ovnkubeController *process
	packets                                    *Packets
	dataPath                                   *DataPath
	// bareMetal is the baremetal-operator stand-in (Options.BareMetalStandIn),
	// which stopBareMetal stops.
	bareMetal     *BareMetalOperatorStandIn
	stopBareMetal context.CancelFunc
	// replicas are the tenant-apiserver replicas tests started, guarded by mu.
	replicas []*Replica

	// startDuration is how long Start took, binaries already built.
	startDuration time.Duration

	mu      sync.Mutex
	stopped bool
	keep    bool
}

// StartDuration is how long Start took to bring the stack up.
func (s *Stack) StartDuration() time.Duration { return s.startDuration }

// Start brings the whole stack up and returns once the tenant.io group is
// served through the host kube-apiserver. On failure it stops whatever it
// started; the error carries the tail of the failing process' log. ctx only
// bounds the start: the stack runs until Stop.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	begin := time.Now()
	s := &Stack{}
	if err := s.complete(opts); err != nil {
		return nil, err
	}
	if err := s.start(ctx); err != nil {
		if stopErr := s.Stop(); stopErr != nil {
			err = errors.Join(err, fmt.Errorf("stopping after the failed start: %w", stopErr))
		}
		return nil, err
	}
	s.startDuration = time.Since(begin)
	s.logf("stack up in %s (work dir %s)", s.startDuration.Round(100*time.Millisecond), s.workDir)
	return s, nil
}

// complete fills in defaults and prepares the work dir.
func (s *Stack) complete(opts Options) error {
	var err error
	if opts.RepoRoot == "" {
		if opts.RepoRoot, err = RepoRoot(); err != nil {
			return err
		}
	}
	if opts.BinDir == "" {
		opts.BinDir = filepath.Join(opts.RepoRoot, "_output", "bin")
	}
	if opts.HostCRDDir == "" {
		opts.HostCRDDir = filepath.Join(opts.RepoRoot, "artifacts", "host-crds")
	}
	if opts.HostAddonDir == "" {
		opts.HostAddonDir = filepath.Join(opts.RepoRoot, "artifacts", "host-addons")
	}
	if opts.DeployDir == "" {
		opts.DeployDir = filepath.Join(opts.RepoRoot, "artifacts", "deploy", "base")
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 3 * time.Minute
	}
	if opts.StopTimeout == 0 {
		opts.StopTimeout = 5 * time.Second
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.BareMetalStandInStep == 0 {
		opts.BareMetalStandInStep = 200 * time.Millisecond
	}
	if s.users, err = completeUsers(opts.ExtraUsers); err != nil {
		return err
	}
	for _, bin := range []string{"etcd", "kube-apiserver", "kubectl"} {
		if err := requireBinary(filepath.Join(opts.BinDir, bin)); err != nil {
			return err
		}
	}
	if !opts.SkipMetalLB {
		if err := requireBinary(filepath.Join(opts.BinDir, "metallb-controller")); err != nil {
			return err
		}
	}
	if !opts.SkipControllerManager {
		if err := requireBinary(filepath.Join(opts.BinDir, "kube-controller-manager")); err != nil {
			return err
		}
	}
	if opts.Gateway {
		if err := requireBinary(filepath.Join(opts.BinDir, "traefik")); err != nil {
			return err
		}
	}

	if opts.WorkDir == "" {
		if s.workDir, err = os.MkdirTemp("", "tenant-stack-"); err != nil {
			return err
		}
	} else {
		if s.workDir, err = filepath.Abs(opts.WorkDir); err != nil {
			return err
		}
		if err := resetWorkDir(s.workDir); err != nil {
			return err
		}
	}
	s.removeWork = !opts.KeepWorkDir
	if opts.KubeconfigDir == "" {
		opts.KubeconfigDir = filepath.Join(s.workDir, "kubeconfigs")
	}
	for _, dir := range []string{opts.KubeconfigDir, s.path("logs")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	s.opts = opts
	return nil
}

// workDirMarker marks a directory as a stack's work dir, safe to wipe.
const workDirMarker = ".tenant-stack"

// resetWorkDir empties dir if it is a former work dir, creates it if
// missing, and refuses any other non-empty directory.
func resetWorkDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	case len(entries) == 0:
	default:
		if _, err := os.Stat(filepath.Join(dir, workDirMarker)); err != nil {
			return fmt.Errorf("work dir %s is not empty and not a former stack's work dir (no %s): refusing to wipe it", dir, workDirMarker)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, workDirMarker), []byte("work dir of a tenant-apiserver test stack; wiped on the next start\n"), 0o644)
}

// buildResult is a binary built, or why not.
type buildResult struct {
	path string
	err  error
}

// buildAsync builds ./cmd/<name> into BinDir in the background (with
// SkipBuild: checks that BinDir has it) and delivers the result.
func (s *Stack) buildAsync(ctx context.Context, name string) chan buildResult {
	done := make(chan buildResult, 1)
	if s.opts.SkipBuild {
		path := s.bin(name)
		done <- buildResult{path, requireBinary(path)}
		return done
	}
	go func() {
		t := time.Now()
		path, err := buildBinary(ctx, s.opts.RepoRoot, s.opts.BinDir, name, "./cmd/"+name)
		if err == nil {
			s.logf("built %s in %s", path, time.Since(t).Round(100*time.Millisecond))
		}
		done <- buildResult{path, err}
	}()
	return done
}

func (s *Stack) start(ctx context.Context) error {
	// The tenant-apiserver's (and console's) build overlaps with the
	// host's start.
	var build, consoleBuild, dnsBuild chan buildResult
	if !s.opts.SkipTenantAPIServer {
		build = s.buildAsync(ctx, "tenant-apiserver")
		if s.opts.Console {
			consoleBuild = s.buildAsync(ctx, "tenant-console")
		}
		if s.opts.TenantDNS {
			dnsBuild = s.buildAsync(ctx, "tenant-dns")
		}
	}

	t := time.Now()
	var err error
	if s.pki, err = generatePKI(s.path("pki")); err != nil {
		return fmt.Errorf("generating certificates: %w", err)
	}
	if err := writeTokenFile(s.path("pki", "tokens.csv"), s.users); err != nil {
		return err
	}
	s.logf("certificates and tokens in %s (%s)", s.path("pki"), time.Since(t).Round(time.Millisecond))

	if err := s.retryOnPortClash(ctx, s.startEtcd); err != nil {
		return err
	}
	if s.opts.TenantEtcd {
		if err := s.retryOnPortClash(ctx, s.startTenantEtcd); err != nil {
			return err
		}
	}
	if err := s.retryOnPortClash(ctx, s.startKubeAPIServer); err != nil {
		return err
	}
	// kube-controller-manager starts while the host manifests install and
	// MetalLB starts; it must be ready before the tenant-apiserver starts.
	// Whatever happens, start returns only once its start is over (cut short
	// when start fails elsewhere), so that Stop sees the process.
	controllerManagerReady := make(chan error, 1)
	controllerManagerCtx, cancelControllerManager := context.WithCancel(ctx)
	if s.opts.SkipControllerManager {
		controllerManagerReady <- nil
	} else {
		go func() { controllerManagerReady <- s.retryOnPortClash(controllerManagerCtx, s.startControllerManager) }()
	}
	waitControllerManager := func() error {
		err := <-controllerManagerReady
		controllerManagerReady <- nil // later waits return at once
		return err
	}
	defer func() {
		cancelControllerManager()
		_ = waitControllerManager()
	}()
	if err := s.installHostManifests(ctx); err != nil {
		return err
	}
	if s.opts.BareMetalStandIn {
		if err := s.startBareMetalStandIn(ctx); err != nil {
			return err
		}
	}
	if s.opts.Gateway {
		if err := s.retryOnPortClash(ctx, s.startGateway); err != nil {
			return err
		}
	}
	if !s.opts.SkipMetalLB {
		if err := s.retryOnPortClash(ctx, s.startMetalLB); err != nil {
			return err
		}
	}
	if !s.opts.SkipOVNKube {
		if err := s.retryOnPortClash(ctx, s.startOVNKube); err != nil {
			return err
		}
		if !s.opts.SkipDataPath {
			if err := s.retryOnPortClash(ctx, s.startDataPath); err != nil {
				return err
			}
		}
	}
	if err := waitControllerManager(); err != nil {
		return err
	}
	if s.opts.SkipTenantAPIServer {
		return nil
	}
	var res buildResult
	select {
	case res = <-build:
	case <-ctx.Done():
		return ctx.Err()
	}
	if res.err != nil {
		return res.err
	}
	s.tenantAPIServer = &process{name: "tenant-apiserver", path: res.path, env: s.opts.TenantAPIServerEnv, logPath: s.path("logs", "tenant-apiserver.log")}
	if err := s.retryOnPortClash(ctx, s.startTenantAPIServer); err != nil {
		return err
	}
	if err := s.registerTenantAPIServer(ctx); err != nil {
		return err
	}
	if s.opts.TenantDNS {
		select {
		case res = <-dnsBuild:
		case <-ctx.Done():
			return ctx.Err()
		}
		if res.err != nil {
			return res.err
		}
		s.tenantDNS = &process{name: "tenant-dns", path: res.path, logPath: s.path("logs", "tenant-dns.log")}
		if err := s.retryOnPortClash(ctx, s.startTenantDNS); err != nil {
			return err
		}
	}
	if !s.opts.Console {
		return nil
	}
	select {
	case res = <-consoleBuild:
	case <-ctx.Done():
		return ctx.Err()
	}
	if res.err != nil {
		return res.err
	}
	s.console = &process{name: "tenant-console", path: res.path, logPath: s.path("logs", "tenant-console.log")}
	return s.retryOnPortClash(ctx, s.startConsole)
}

// retryOnPortClash runs a component's start again, on new ports, when the
// port picked turned out to be taken by someone else in the meantime.
func (s *Stack) retryOnPortClash(ctx context.Context, start func(context.Context) (*process, error)) error {
	for attempt := 1; ; attempt++ {
		p, err := start(ctx)
		if err == nil || attempt == 3 || p == nil || !strings.Contains(p.tail(logTailLines), "address already in use") {
			return err
		}
		s.logf("%s: port clash, retrying on other ports", p.name)
		if err := p.stop(s.opts.StopTimeout); err != nil {
			return err
		}
	}
}

// Stop stops every process (SIGTERM, then SIGKILL to its process group after
// Options.StopTimeout) in the reverse order of start, and removes the work
// dir unless asked to keep it. It is idempotent.
func (s *Stack) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	s.stopped = true
	var errs []error
	if s.stopBareMetal != nil {
		s.stopBareMetal()
		select {
		case <-s.bareMetal.Done():
		case <-time.After(s.opts.StopTimeout):
			errs = append(errs, errors.New("the baremetal-operator stand-in did not stop"))
		}
	}
	if s.packets != nil {
		errs = append(errs, s.packets.stop(s.opts.StopTimeout))
	}
	var procs []*process
	for _, r := range s.replicas {
		procs = append(procs, r.proc)
	}
	for _, p := range append(procs, s.tenantDNS, s.console, s.tenantAPIServer, s.ovnkubeController, s.ovnNorthd, s.ovnSB, s.ovnNB, s.ovnkube, s.metallb, s.gateway, s.controllerManager, s.kubeAPIServer, s.tenantEtcd, s.etcd) {
		if p == nil {
			continue
		}
		if err := p.stop(s.opts.StopTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	if s.endpointStandIn != nil {
		errs = append(errs, s.endpointStandIn.stop(s.opts.StopTimeout))
	}
	if s.removeWork && !s.keep && s.workDir != "" {
		if err := os.RemoveAll(s.workDir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// startBareMetalStandIn starts the baremetal-operator stand-in as the
// admin; it runs until Stop.
func (s *Stack) startBareMetalStandIn(ctx context.Context) error {
	runCtx, cancel := context.WithCancel(context.Background())
	stopOnReturn := context.AfterFunc(ctx, cancel) // the start cut short
	defer stopOnReturn()
	b, err := StartBareMetalOperatorStandIn(runCtx, s.RESTConfig(AdminUser), s.opts.BareMetalStandInStep)
	if err != nil {
		cancel()
		return err
	}
	s.bareMetal, s.stopBareMetal = b, cancel
	s.logf("baremetal-operator stand-in running (step %s)", s.opts.BareMetalStandInStep)
	return nil
}

// BareMetalOperator is the baremetal-operator stand-in of
// Options.BareMetalStandIn; nil without it.
func (s *Stack) BareMetalOperator() *BareMetalOperatorStandIn { return s.bareMetal }

// KeepWorkDir makes Stop leave the work dir in place, e.g. to read the logs
// of a failed test.
func (s *Stack) KeepWorkDir() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep = true
}

// WorkDir is the directory with the stack's certificates, data and logs
// (logs/<process>.log).
func (s *Stack) WorkDir() string { return s.workDir }

// LogPath is the log file of a process: etcd, kube-apiserver,
// kube-controller-manager, metallb-controller, traefik, tenant-apiserver or a
// tenant-apiserver replica by its name.
func (s *Stack) LogPath(process string) string { return s.path("logs", process+".log") }

// KubeconfigPath is the kubeconfig of a user (see User); it embeds the host
// CA and the user's token.
func (s *Stack) KubeconfigPath(user string) string {
	return filepath.Join(s.opts.KubeconfigDir, kubeconfigFileName(user))
}

// Users returns the stack's users with their tokens.
func (s *Stack) Users() []User { return append([]User(nil), s.users...) }

// RESTConfig is a client configuration for the host kube-apiserver as user.
// It panics for an unknown user: that is a bug in the test.
func (s *Stack) RESTConfig(user string) *rest.Config {
	for _, u := range s.users {
		if u.Name == user {
			return restConfig(s.KubeAPIServerURL(), s.pki.serverCAPEM, u)
		}
	}
	panic(fmt.Sprintf("framework: unknown user %q", user))
}

// Kubectl runs the stack's kubectl as user. The error includes stderr.
func (s *Stack) Kubectl(ctx context.Context, user string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.CommandContext(ctx, s.bin("kubectl"), append([]string{"--kubeconfig=" + s.KubeconfigPath(user)}, args...)...)
	// A cache of its own: another stack may have served other APIs on the same port.
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+s.path("kubectl-cache"))
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), errOut.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), errOut.String(), nil
}

// WaitEstablished waits up to timeout for the CustomResourceDefinitions
// that kubectl args name ("crd/<name>", or "customresourcedefinitions
// --all") to be Established. kubectl wait fails at once, instead of
// waiting, on a definition just created whose status has no conditions
// yet ("accessor error"): that is asked again.
func (s *Stack) WaitEstablished(ctx context.Context, timeout time.Duration, args ...string) error {
	deadline := time.Now().Add(timeout)
	for {
		left := max(time.Until(deadline), time.Second).Round(time.Second)
		_, _, err := s.Kubectl(ctx, AdminUser, append([]string{"wait", "--for=condition=Established", "--timeout=" + left.String()}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "accessor error") || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// KubectlPath is the kubectl binary the stack uses.
func (s *Stack) KubectlPath() string { return s.bin("kubectl") }

// KubeAPIServerURL is the host kube-apiserver, https://127.0.0.1:<port>.
func (s *Stack) KubeAPIServerURL() string { return fmt.Sprintf("https://127.0.0.1:%d", s.kubePort) }

// TenantAPIServerURL is the tenant-apiserver itself, https://127.0.0.1:<port>,
// bypassing the aggregator.
func (s *Stack) TenantAPIServerURL() string { return fmt.Sprintf("https://127.0.0.1:%d", s.tenantPort) }

// EtcdURL is the host's etcd, which the tenant-apiserver stores into too
// unless Options.TenantEtcd gives it one of its own.
func (s *Stack) EtcdURL() string { return fmt.Sprintf("http://127.0.0.1:%d", s.etcdPort) }

// TenantEtcdURL is the etcd the tenant-apiserver stores into, under the
// prefix /tenant.io: its own (Options.TenantEtcd) or the host's.
func (s *Stack) TenantEtcdURL() string {
	if s.opts.TenantEtcd {
		return fmt.Sprintf("http://127.0.0.1:%d", s.tenantEtcdPort)
	}
	return s.EtcdURL()
}

// HostCAPEM is the CA of the kube-apiserver serving certificate.
func (s *Stack) HostCAPEM() []byte { return append([]byte(nil), s.pki.serverCAPEM...) }

// TenantCAPEM is the CA of the tenant-apiserver serving certificate (the
// APIService caBundle).
func (s *Stack) TenantCAPEM() []byte { return append([]byte(nil), s.pki.tenantCAPEM...) }

// Clients returns a typed and a dynamic client for user.
func (s *Stack) Clients(user string) (kubernetes.Interface, dynamic.Interface, error) {
	cfg := s.RESTConfig(user)
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return client, dyn, nil
}

func (s *Stack) bin(name string) string { return filepath.Join(s.opts.BinDir, name) }

// LogDir is where the stack's processes write their logs.
func (s *Stack) LogDir() string { return s.path("logs") }

func (s *Stack) path(elem ...string) string {
	return filepath.Join(append([]string{s.workDir}, elem...)...)
}

func (s *Stack) logf(format string, args ...interface{}) {
	fmt.Fprintf(s.opts.Log, "[stack %s] %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}
