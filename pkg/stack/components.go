package stack

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// startEtcd starts the host's etcd, which the tenant-apiserver stores into
// too unless Options.TenantEtcd gives it one of its own.
func (s *Stack) startEtcd(ctx context.Context) (*process, error) {
	var err error
	s.etcd, err = s.startEtcdMember(ctx, "etcd", &s.etcdPort, &s.etcdPeerPort)
	return s.etcd, err
}

// startTenantEtcd starts the tenant-apiserver's own etcd (Options.TenantEtcd).
func (s *Stack) startTenantEtcd(ctx context.Context) (*process, error) {
	var err error
	s.tenantEtcd, err = s.startEtcdMember(ctx, "tenant-etcd", &s.tenantEtcdPort, &s.tenantEtcdPeerPort)
	return s.tenantEtcd, err
}

// startEtcdMember starts a single-member etcd named name on new loopback
// ports, which it writes to *port and *peerPort, with its data in the
// stack's directory of that name.
func (s *Stack) startEtcdMember(ctx context.Context, name string, port, peerPort *int) (*process, error) {
	var err error
	if *port, err = freePort(); err != nil {
		return nil, err
	}
	if *peerPort, err = freePort(); err != nil {
		return nil, err
	}
	dataDir := s.path(name)
	if err := os.RemoveAll(dataDir); err != nil { // a clashed attempt may have left one
		return nil, err
	}
	client := fmt.Sprintf("http://127.0.0.1:%d", *port)
	peer := fmt.Sprintf("http://127.0.0.1:%d", *peerPort)
	p := &process{
		name: name,
		path: s.bin("etcd"),
		args: []string{
			"--name=tenant-stack",
			"--data-dir=" + dataDir,
			"--listen-client-urls=" + client,
			"--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=tenant-stack=" + peer,
			"--quota-backend-bytes=" + strconv.Itoa(8<<30),
			"--unsafe-no-fsync",
			"--log-level=warn",
		},
		logPath: s.LogPath(name),
	}
	t := time.Now()
	if err := p.start(); err != nil {
		return p, err
	}
	err = p.waitReady(ctx, s.opts.StartTimeout, func(ctx context.Context) error {
		return etcdHealthy(ctx, client)
	})
	if err == nil {
		s.logf("%s ready on %s (%s)", name, client, time.Since(t).Round(100*time.Millisecond))
	}
	return p, err
}

// startKubeAPIServer starts the host kube-apiserver with aggregation, RBAC and
// the stack's token users, and writes the users' kubeconfigs.
func (s *Stack) startKubeAPIServer(ctx context.Context) (*process, error) {
	var err error
	if s.kubePort, err = freePort(); err != nil {
		return nil, err
	}
	if err := writeKubeconfigs(s.opts.KubeconfigDir, s.KubeAPIServerURL(), s.pki.serverCAPEM, s.users); err != nil {
		return nil, err
	}
	p := s.pki
	args := []string{
		"--etcd-servers=" + s.EtcdURL(),
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(s.kubePort),
		// Nothing may be advertised off loopback, and the endpoints of the
		// kubernetes Service cannot be a loopback address: publish none.
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + s.path("kube-apiserver"),
		"--tls-cert-file=" + p.ServerCert,
		"--tls-private-key-file=" + p.ServerKey,
		"--client-ca-file=" + p.ClientCA,
		"--token-auth-file=" + s.path("pki", "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=" + ServiceNetworkCIDR,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + p.ServiceAccountPub,
		"--service-account-signing-key-file=" + p.ServiceAccountKey,
		"--allow-privileged=true",
		"--requestheader-client-ca-file=" + p.FrontProxyCA,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-username-headers=X-Remote-User",
		"--proxy-client-cert-file=" + p.FrontProxyClientCert,
		"--proxy-client-key-file=" + p.FrontProxyClientKey,
		"--enable-aggregator-routing=false",
		"--profiling=false",
	}
	if s.opts.SkipControllerManager {
		// Without kube-controller-manager nobody creates the default
		// ServiceAccount of a namespace, which that plugin demands of pods.
		args = append(args, "--disable-admission-plugins=ServiceAccount")
	}
	s.kubeAPIServer = &process{
		name:    "kube-apiserver",
		path:    s.bin("kube-apiserver"),
		args:    append(args, s.opts.KubeAPIServerArgs...),
		logPath: s.LogPath("kube-apiserver"),
	}
	t := time.Now()
	if err := s.kubeAPIServer.start(); err != nil {
		return s.kubeAPIServer, err
	}
	if err := s.waitHostReady(ctx); err != nil {
		return s.kubeAPIServer, err
	}
	s.logf("kube-apiserver ready on %s (%s)", s.KubeAPIServerURL(), time.Since(t).Round(100*time.Millisecond))
	return s.kubeAPIServer, nil
}

// waitHostReady waits for the kube-apiserver's /readyz.
func (s *Stack) waitHostReady(ctx context.Context) error {
	httpClient, err := tlsClient(s.pki.serverCAPEM)
	if err != nil {
		return err
	}
	token := s.user(AdminUser).Token
	return s.kubeAPIServer.waitReady(ctx, s.opts.StartTimeout, func(ctx context.Context) error {
		_, err := httpGet(ctx, httpClient, s.KubeAPIServerURL()+"/readyz", token)
		return err
	})
}

// installHostManifests installs the host CRDs, the host add-ons' other
// manifests and the deploy manifests the framework does not own (see
// ownedByFramework) with kubectl, as an operator would, and waits for
// every CRD to be established.
func (s *Stack) installHostManifests(ctx context.Context) error {
	t := time.Now()
	// The CRDs first: the add-ons' roles name their resources.
	counts := map[string]int{}
	for _, d := range []struct{ what, dir string }{{"host CRDs", s.opts.HostCRDDir}, {"host add-on manifests", s.opts.HostAddonDir}} {
		files, err := yamlFiles(d.dir)
		if err != nil {
			return err
		}
		counts[d.what] = len(files)
		if len(files) == 0 {
			s.logf("no %s in %s", d.what, d.dir)
			continue
		}
		if err := s.applyFiles(ctx, files); err != nil {
			return fmt.Errorf("installing %s: %w", d.what, err)
		}
	}
	bundle, skipped, err := writeDeployBundle(s.opts.DeployDir, s.path("deploy.yaml"))
	if err != nil {
		return fmt.Errorf("reading deploy manifests: %w", err)
	}
	for _, m := range skipped {
		s.logf("deploy: skipping %s: the framework runs or registers it itself", m)
	}
	if bundle != "" {
		if err := s.applyFiles(ctx, []string{bundle}); err != nil {
			return fmt.Errorf("applying deploy manifests (%s): %w", bundle, err)
		}
	}
	if err := s.WaitEstablished(ctx, s.opts.StartTimeout, "customresourcedefinitions", "--all"); err != nil &&
		!strings.Contains(err.Error(), "no matching resources found") {
		return fmt.Errorf("waiting for CRDs: %w", err)
	}
	// frr-k8s' namespace, where the syncer writes VRF peerings'
	// FRRConfigurations (no frr-k8s daemon runs here).
	client, _, err := s.Clients(AdminUser)
	if err != nil {
		return err
	}
	if err := applyNamespace(ctx, client, FRRNamespace); err != nil {
		return fmt.Errorf("creating namespace %s: %w", FRRNamespace, err)
	}
	s.logf("host manifests installed: %d CRD files, %d add-on files, deploy bundle %q (%s)", counts["host CRDs"], counts["host add-on manifests"], bundle, time.Since(t).Round(100*time.Millisecond))
	return nil
}

// applyFiles applies the manifests of files server-side as the admin.
func (s *Stack) applyFiles(ctx context.Context, files []string) error {
	args := []string{"apply", "--server-side", "--force-conflicts", "--field-manager=" + fieldManager}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	_, _, err := s.Kubectl(ctx, AdminUser, args...)
	return err
}

// FRRNamespace is frr-k8s' namespace, the syncer's default.
const FRRNamespace = "frr-k8s-system"

// MetalLBNamespace is where the MetalLB controller reads its configuration
// (IPAddressPools).
const MetalLBNamespace = "metallb-system"

// startMetalLB runs the MetalLB controller, which assigns LoadBalancer
// addresses from IPAddressPools, against the host as the admin.
func (s *Stack) startMetalLB(ctx context.Context) (*process, error) {
	client, _, err := s.Clients(AdminUser)
	if err != nil {
		return nil, err
	}
	if err := applyNamespace(ctx, client, MetalLBNamespace); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", MetalLBNamespace, err)
	}
	if s.metallbPort, err = freePort(); err != nil {
		return nil, err
	}
	s.metallb = &process{
		name: "metallb-controller",
		path: s.bin("metallb-controller"),
		args: []string{
			"--kubeconfig=" + s.KubeconfigPath(AdminUser),
			"--namespace=" + MetalLBNamespace,
			"--webhook-mode=disabled",
			"--disable-cert-rotation",
			// Metrics; the controller listens on all interfaces, there is no flag for the host.
			"--port=" + strconv.Itoa(s.metallbPort),
			"--cert-dir=" + s.path("metallb-certs"),
			"--log-level=info",
		},
		logPath: s.LogPath("metallb-controller"),
		restart: true,
	}
	t := time.Now()
	if err := s.metallb.start(); err != nil {
		return s.metallb, err
	}
	httpClient := &http.Client{Timeout: 5 * time.Second}
	err = s.metallb.waitReady(ctx, s.opts.StartTimeout, func(ctx context.Context) error {
		if _, err := httpGet(ctx, httpClient, fmt.Sprintf("http://127.0.0.1:%d/metrics", s.metallbPort), ""); err != nil {
			return err
		}
		// Metrics are served before the informers sync; the service
		// controller's workers start only after.
		if !fileContains(s.metallb.logPath, `"msg":"Starting workers","controller":"service"`) {
			return fmt.Errorf("the service controller's workers have not started yet")
		}
		return nil
	})
	if err == nil {
		s.logf("metallb-controller ready, metrics on 127.0.0.1:%d (%s)", s.metallbPort, time.Since(t).Round(100*time.Millisecond))
	}
	return s.metallb, err
}

// startTenantAPIServer runs the tenant-apiserver as its service account,
// storing into the stack's etcd under /tenant.io.
func (s *Stack) startTenantAPIServer(ctx context.Context) (*process, error) {
	var err error
	if s.tenantPort, err = freePort(); err != nil {
		return nil, err
	}
	s.tenantAPIServer.args = s.tenantAPIServerArgs(s.tenantPort)
	t := time.Now()
	if err := s.tenantAPIServer.start(); err != nil {
		return s.tenantAPIServer, err
	}
	if err := s.waitTenantReady(ctx, s.tenantAPIServer, s.TenantAPIServerURL()); err != nil {
		return s.tenantAPIServer, err
	}
	s.logf("tenant-apiserver ready on %s (%s)", s.TenantAPIServerURL(), time.Since(t).Round(100*time.Millisecond))
	return s.tenantAPIServer, nil
}

// PublicDNSZone is the public DNS zone of the stack's tenant-apiserver
// (--public-dns-zone): the public addresses of FloatingIPs and
// LoadBalancers are named in it. example.net is reserved for examples
// (RFC 2606), so no real zone is ever named.
const PublicDNSZone = "tenants.example.net"

// RouteDomain is the provider's route domain of the stack's
// tenant-apiserver (--route-domain): tenant acme's HTTP routes on the
// stack's gateway may name acme.apps.example.net and the names below it.
const RouteDomain = "apps.example.net"

// tenantAPIServerArgs are the flags of a tenant-apiserver process of the
// stack listening on port: every replica serves the same certificate, acts
// on the host as TenantAPIServerUser, stores into the same etcd prefix and
// names public addresses in PublicDNSZone and routes in RouteDomain. Options.TenantAPIServerArgs,
// then extra, follow (a later flag wins).
func (s *Stack) tenantAPIServerArgs(port int, extra ...string) []string {
	kubeconfig := s.KubeconfigPath(TenantAPIServerUser)
	args := []string{
		"--secure-port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1",
		"--tls-cert-file=" + s.pki.TenantCert,
		"--tls-private-key-file=" + s.pki.TenantKey,
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--etcd-servers=" + s.TenantEtcdURL(),
		"--etcd-prefix=/tenant.io",
		"--public-dns-zone=" + PublicDNSZone,
		"--route-domain=" + RouteDomain,
		// The audit policy the deployment ships; each process its own log.
		"--audit-policy-file=" + filepath.Join(s.opts.DeployDir, "audit", "policy.yaml"),
		"--audit-log-path=" + s.AuditLogPath(port),
		// Tenants of Hard isolation name it in their host namespaces.
		"--tenant-dns-address=" + TenantDNSAddress,
	}
	args = append(args, s.opts.TenantAPIServerArgs...)
	return append(args, extra...)
}

// AuditLogPath is the audit log (JSON lines) of the tenant-apiserver
// process of the stack, or of a replica, serving on port.
func (s *Stack) AuditLogPath(port int) string {
	return s.path("logs", fmt.Sprintf("tenant-apiserver-audit-%d.log", port))
}

// TenantAPIServerAuditLogPath is the audit log of the stack's tenant-apiserver.
func (s *Stack) TenantAPIServerAuditLogPath() string { return s.AuditLogPath(s.tenantPort) }

// TenantAPIServerArgs returns the flags the stack's tenant-apiserver was
// started with, or nil when it runs none.
func (s *Stack) TenantAPIServerArgs() []string {
	if s.tenantAPIServer == nil {
		return nil
	}
	return append([]string(nil), s.tenantAPIServer.args...)
}

// waitTenantReady waits for the /readyz of the tenant-apiserver process p
// serving at url, bypassing the aggregator, and then until it authenticates
// the front-proxy client certificate: /readyz passes before the
// request-header CA is loaded from the host, and until then every request
// the aggregator (or DirectTenantConfig) sends is anonymous.
func (s *Stack) waitTenantReady(ctx context.Context, p *process, url string) error {
	httpClient, err := tlsClient(s.pki.tenantCAPEM)
	if err != nil {
		return err
	}
	proxyClient, err := rest.HTTPClientFor(s.directTenantConfig(url, AdminUser, nil))
	if err != nil {
		return err
	}
	return p.waitReady(ctx, s.opts.StartTimeout, func(ctx context.Context) error {
		if _, err := httpGet(ctx, httpClient, url+"/readyz", ""); err != nil {
			return err
		}
		// Any answer but an anonymous one will do: authorization may fail
		// while the host is down.
		body, err := httpGet(ctx, proxyClient, url+"/apis/tenant.io/v1alpha1", "")
		if err != nil && (strings.Contains(body, "system:anonymous") || strings.Contains(err.Error(), "401 Unauthorized")) {
			return fmt.Errorf("the front-proxy client certificate is not recognized yet: %w", err)
		}
		return nil
	})
}

// registerTenantAPIServer creates the Service and APIService and waits until
// the aggregator serves tenant.io/v1alpha1.
func (s *Stack) registerTenantAPIServer(ctx context.Context) error {
	t := time.Now()
	client, dyn, err := s.Clients(AdminUser)
	if err != nil {
		return err
	}
	if err := registerTenantAPIServer(ctx, client, dyn, s.tenantPort, s.pki.tenantCAPEM); err != nil {
		return err
	}
	if err := s.waitAggregated(ctx); err != nil {
		return err
	}
	s.logf("APIServices %s and %s available, tenant.io/v1alpha1 and admin.tenant.io/v1alpha1 served through kube-apiserver (%s)",
		TenantAPIServiceName, AdminAPIServiceName, time.Since(t).Round(100*time.Millisecond))
	return nil
}

// waitAggregated waits until the APIServices are Available and discovery of
// their groups through the host kube-apiserver answers.
func (s *Stack) waitAggregated(ctx context.Context) error {
	client, dyn, err := s.Clients(AdminUser)
	if err != nil {
		return err
	}
	return s.tenantAPIServer.waitReady(ctx, s.opts.StartTimeout, func(ctx context.Context) error {
		for _, as := range apiServices {
			if err := apiServiceAvailable(ctx, dyn, as.name); err != nil {
				return err
			}
			if _, err := client.Discovery().ServerResourcesForGroupVersion(as.group + "/v1alpha1"); err != nil {
				return err
			}
		}
		return nil
	})
}

// StopTenantAPIServer stops the tenant-apiserver gracefully (SIGTERM). The
// APIService stays registered and turns unavailable.
func (s *Stack) StopTenantAPIServer() error {
	if s.tenantAPIServer == nil {
		return nil
	}
	return s.tenantAPIServer.stop(s.opts.StopTimeout)
}

// KillTenantAPIServer SIGKILLs the tenant-apiserver, as a crash would.
func (s *Stack) KillTenantAPIServer() error {
	if s.tenantAPIServer == nil {
		return nil
	}
	return s.tenantAPIServer.kill()
}

// TenantAPIServerBinary is the executable the tenant-apiserver runs from.
func (s *Stack) TenantAPIServerBinary() string {
	if s.tenantAPIServer == nil {
		return ""
	}
	return s.tenantAPIServer.path
}

// SetTenantAPIServerBinary makes the next StartTenantAPIServer run the
// executable at path instead of the stack's build: benchmarks compare two
// builds on the same stored data.
func (s *Stack) SetTenantAPIServerBinary(path string) error {
	if s.tenantAPIServer == nil {
		return fmt.Errorf("the stack runs no tenant-apiserver")
	}
	if err := requireBinary(path); err != nil {
		return err
	}
	s.tenantAPIServer.path = path
	return nil
}

// StartTenantAPIServer starts a stopped tenant-apiserver again with the same
// flags and port, and waits until the aggregator serves it again.
func (s *Stack) StartTenantAPIServer(ctx context.Context) error {
	if s.tenantAPIServer == nil {
		return fmt.Errorf("the stack runs no tenant-apiserver")
	}
	if err := s.tenantAPIServer.start(); err != nil {
		return err
	}
	if err := s.waitTenantReady(ctx, s.tenantAPIServer, s.TenantAPIServerURL()); err != nil {
		return err
	}
	return s.waitAggregated(ctx)
}

// StopHost stops the host kube-apiserver gracefully (etcd keeps running).
func (s *Stack) StopHost() error {
	return s.kubeAPIServer.stop(s.opts.StopTimeout)
}

// KillHost SIGKILLs the host kube-apiserver.
func (s *Stack) KillHost() error {
	return s.kubeAPIServer.kill()
}

// StartHost starts a stopped host kube-apiserver again on the same port and
// waits for its /readyz.
func (s *Stack) StartHost(ctx context.Context) error {
	if err := s.kubeAPIServer.start(); err != nil {
		return err
	}
	return s.waitHostReady(ctx)
}

// PID is the process id of a running process of the stack (etcd,
// tenant-etcd, kube-apiserver, kube-controller-manager, metallb-controller,
// ovnkube-cluster-manager, ovsdb-server-nb, ovsdb-server-sb, ovn-northd,
// ovnkube-controller, tenant-apiserver, a replica by its name, or the
// real-packet tier's ovsdb-server-ovs, ovs-vswitchd and ovn-controller), or 0.
func (s *Stack) PID(name string) int {
	for _, p := range append([]*process{s.etcd, s.tenantEtcd, s.kubeAPIServer, s.controllerManager, s.metallb, s.ovnkube,
		s.ovnNB, s.ovnSB, s.ovnNorthd, s.ovnkubeController, s.tenantAPIServer}, append(s.replicaProcesses(), s.packetProcesses()...)...) {
		if p != nil && p.name == name {
			return p.pid()
		}
	}
	return 0
}

// Restarts is how many times the stack restarted a process of its own
// after it exited: kube-controller-manager, metallb-controller and
// ovnkube-cluster-manager are restarted, as a kubelet restarts the
// containers of a controller that crashed.
func (s *Stack) Restarts(name string) int {
	for _, p := range []*process{s.controllerManager, s.metallb, s.ovnkube} {
		if p != nil && p.name == name {
			return p.restartCount()
		}
	}
	return 0
}

// LogContains reports whether the log of a process of the stack (a name as
// for LogPath, replicas included) contains substr, e.g. which replica
// logged that it acquired a lease.
func (s *Stack) LogContains(process, substr string) bool {
	return fileContains(s.LogPath(process), substr)
}

// fileContains reports whether the file at path contains substr.
func fileContains(path, substr string) bool {
	data, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(data), substr)
}

func (s *Stack) user(name string) User {
	for _, u := range s.users {
		if u.Name == name {
			return u
		}
	}
	return User{}
}

// tlsClient is an HTTP client trusting only caPEM.
func tlsClient(caPEM []byte) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("no certificate in CA bundle")
	}
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}, nil
}

// httpGet returns the body of a 200 answer, else an error.
func httpGet(ctx context.Context, client *http.Client, url, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return string(body), fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return string(body), nil
}
