// Package server holds the command line options of tenant-apiserver and
// turns them into a running server: New -> Complete -> Validate -> Config -> Run.
package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/features"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	cliflag "k8s.io/component-base/cli/flag"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"

	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/apiserver"
	"tenant.io/tenant-apiserver/pkg/authzcache"
	generatedopenapi "tenant.io/tenant-apiserver/pkg/generated/openapi"
	"tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/hostbinding"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// DefaultEtcdPathPrefix is where tenant.io objects live in etcd.
const DefaultEtcdPathPrefix = "/registry/tenant.io"

// Options are the command line options of tenant-apiserver.
type Options struct {
	RecommendedOptions *genericoptions.RecommendedOptions
	// EmbeddedEtcd runs etcd inside the process when no --etcd-servers are given.
	EmbeddedEtcd *EmbeddedEtcdOptions
	// QuotaRecountPeriod is how often Tenant quota usage is recounted.
	QuotaRecountPeriod time.Duration
	// IPAMPeriod and IPAMSweepMinAge pace the IPAM loop (pool status, sweeper).
	IPAMPeriod, IPAMSweepMinAge time.Duration
	// DefaultObjectQuota are the object counts a Tenant created without
	// them gets in spec.quota.objects, in ResourceQuota's terms.
	DefaultObjectQuota map[string]string
	// Syncer configures the syncer, which makes tenants real on the host.
	Syncer *SyncerOptions
	// MemoryLimitRatio is the share of the container's memory limit given
	// to the Go runtime as its soft memory limit; 0: none.
	MemoryLimitRatio float64

	StdOut io.Writer
	StdErr io.Writer
}

// NewOptions returns the default options.
func NewOptions(out, errOut io.Writer) *Options {
	o := &Options{
		RecommendedOptions: genericoptions.NewRecommendedOptions(
			DefaultEtcdPathPrefix,
			apiserver.StorageCodec(),
		),
		EmbeddedEtcd:       NewEmbeddedEtcdOptions(),
		QuotaRecountPeriod: time.Minute,
		IPAMPeriod:         10 * time.Second,
		IPAMSweepMinAge:    ipam.DefaultSweepMinAge,
		Syncer:             NewSyncerOptions(),
		MemoryLimitRatio:   DefaultMemoryLimitRatio,
		StdOut:             out,
		StdErr:             errOut,
	}
	o.RecommendedOptions.Etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(
		v1alpha1.SchemeGroupVersion, schema.GroupKind{Group: v1alpha1.GroupName})
	// Our namespaced resources live in tenants' virtual namespaces, not in
	// host namespaces: the host namespace lifecycle does not apply to them.
	o.RecommendedOptions.Admission.DisablePlugins = []string{lifecycle.PluginName}
	o.RecommendedOptions.FeatureGate = utilfeature.DefaultFeatureGate
	// The watch cache's list snapshots keep copies of its B-tree for every
	// write of the last 75 s: under a burst of tenant writes they cost more
	// memory than anything else in the server (see docs/perf/memory.md),
	// and tenant lists are small enough to read from etcd when paged.
	// --feature-gates=ListFromCacheSnapshot=true turns them back on.
	utilruntime.Must(utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{
		string(features.ListFromCacheSnapshot): false,
	}))
	return o
}

// Flags returns the option flags, grouped for --help.
func (o *Options) Flags() cliflag.NamedFlagSets {
	fss := cliflag.NamedFlagSets{}
	o.RecommendedOptions.AddFlags(fss.FlagSet("generic"))
	o.EmbeddedEtcd.AddFlags(fss.FlagSet("embedded etcd"))
	fss.FlagSet("tenancy").DurationVar(&o.QuotaRecountPeriod, "quota-recount-period", o.QuotaRecountPeriod,
		"How often Tenant quota usage is recounted from the stored objects, repairing what a crash left behind; 0 disables.")
	fss.FlagSet("tenancy").DurationVar(&o.IPAMPeriod, "ipam-period", o.IPAMPeriod,
		"How often AddressPool status is refreshed and allocations no live object records are swept; "+
			"less often where a pass takes long, so that passes take at most a tenth of the time (tenant_ipam_upkeep_pass_duration_seconds).")
	fss.FlagSet("tenancy").DurationVar(&o.IPAMSweepMinAge, "ipam-sweep-min-age", o.IPAMSweepMinAge,
		"How old an allocation no live Tenant records must be before the sweeper reclaims it (longer than any create takes).")
	fss.FlagSet("tenancy").StringToStringVar(&o.DefaultObjectQuota, "default-object-quota", o.DefaultObjectQuota,
		"The object counts a Tenant created without them gets in spec.quota.objects, limiting the objects it makes in all its host "+
			"namespaces together: services, secrets, configmaps, persistentvolumeclaims, count/<resource>[.<group>] "+
			"(e.g. services=100,secrets=200,configmaps=200,persistentvolumeclaims=50). Empty: none.")
	o.Syncer.AddFlags(fss.FlagSet("syncer"))
	fss.FlagSet("generic").Float64Var(&o.MemoryLimitRatio, "memory-limit-ratio", o.MemoryLimitRatio,
		"The share of the container's memory limit (its cgroup's memory.max) set as the Go runtime's soft memory limit, "+
			"so that the garbage collector works harder near the limit instead of the process being killed; "+
			"0 sets none. GOMEMLIMIT in the environment, when set, wins.")
	if f := fss.FlagSet("generic").Lookup("storage-media-type"); f != nil {
		f.Usage = "The media type tenant.io objects are stored in: " + runtime.ContentTypeJSON + ", the only one."
	}
	if f := fss.FlagSet("generic").Lookup("authorization-webhook-cache-authorized-ttl"); f != nil {
		f.Usage = "How long an allowed answer of the host to a SubjectAccessReview is used. Once it is three quarters as old, " +
			"the next request that uses it has the host asked again in the background, so that a permission in steady use " +
			"is not asked for on the request's path; concurrent requests asking the same share one review. 0 asks for every request."
	}
	compatibility.DefaultComponentGlobalsRegistry.AddFlags(fss.FlagSet("generic"))
	return fss
}

// NewCommand returns the tenant-apiserver command.
func NewCommand(ctx context.Context, o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tenant-apiserver",
		Short: "Serve the tenant.io API: tenant-private views of a shared cluster",
		Long: `tenant-apiserver is an aggregated API server for the tenant.io group. Registered
through an APIService, it gives every tenant a private view of Tenants,
Namespaces, Networks, FloatingIPs and LoadBalancers. With no --etcd-servers it
runs an embedded etcd in --data-dir.`,
		SilenceUsage: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return compatibility.DefaultComponentGlobalsRegistry.Set()
		},
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Complete(c.Context()); err != nil {
				return err
			}
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	cmd.SetContext(ctx)
	fss := o.Flags()
	fs := cmd.Flags()
	for _, f := range fss.FlagSets {
		fs.AddFlagSet(f)
	}
	cliflag.SetUsageAndHelpFunc(cmd, fss, 100)
	return cmd
}

// Complete fills in what the flags left open. Without --etcd-servers it
// starts the embedded etcd, which lives until ctx ends.
func (o *Options) Complete(ctx context.Context) error {
	if len(o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList) == 0 {
		url, err := o.EmbeddedEtcd.Start(ctx)
		if err != nil {
			return fmt.Errorf("starting embedded etcd: %w", err)
		}
		o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList = []string{url}
	}
	return nil
}

// Validate checks the options.
func (o *Options) Validate(args []string) error {
	var errs []error
	if len(args) != 0 {
		errs = append(errs, fmt.Errorf("no arguments are accepted, got %q", args))
	}
	errs = append(errs, o.RecommendedOptions.Validate()...)
	if etcd := o.RecommendedOptions.Etcd; etcd != nil && etcd.DefaultStorageMediaType != runtime.ContentTypeJSON {
		// The generic options accept the media types of built-in kinds;
		// tenant.io objects have no protobuf form, and are stored as JSON.
		errs = append(errs, fmt.Errorf("--storage-media-type %q: tenant.io objects are stored as %s only",
			etcd.DefaultStorageMediaType, runtime.ContentTypeJSON))
	}
	errs = append(errs, o.Syncer.Validate()...)
	if _, err := o.defaultObjectQuota(); err != nil {
		errs = append(errs, err)
	}
	if err := validateMemoryLimitRatio(o.MemoryLimitRatio); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, compatibility.DefaultComponentGlobalsRegistry.Validate()...)
	return utilerrors.NewAggregate(errs)
}

// Config turns the options into a server configuration.
func (o *Options) Config() (*apiserver.Config, error) {
	if err := o.RecommendedOptions.SecureServing.MaybeDefaultWithSelfSignedCerts(
		"localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("creating self-signed certificates: %w", err)
	}

	serverConfig := genericapiserver.NewRecommendedConfig(apiserver.Codecs)
	namer := openapi.NewDefinitionNamer(apiserver.Scheme, apiserver.AdminScheme)
	serverConfig.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(generatedopenapi.GetOpenAPIDefinitions, namer)
	serverConfig.OpenAPIConfig.Info.Title = "tenant.io"
	serverConfig.OpenAPIConfig.Info.Version = v1alpha1.SchemeGroupVersion.Version
	serverConfig.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	serverConfig.OpenAPIV3Config.Info.Title = "tenant.io"
	serverConfig.OpenAPIV3Config.Info.Version = v1alpha1.SchemeGroupVersion.Version
	serverConfig.FeatureGate = compatibility.DefaultComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	serverConfig.EffectiveVersion = compatibility.DefaultComponentGlobalsRegistry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent)

	// The host's allowed answers to SubjectAccessReviews are kept by
	// authzcache, which asks again before they expire; the generic
	// webhook authorizer keeps none of them (its denials it still keeps).
	var allowTTL time.Duration
	if a := o.RecommendedOptions.Authorization; a != nil {
		allowTTL, a.AllowCacheTTL = a.AllowCacheTTL, 0
		defer func() { a.AllowCacheTTL = allowTTL }()
	}
	if err := o.applyRecommended(serverConfig); err != nil {
		return nil, err
	}
	if a := serverConfig.Authorization.Authorizer; a != nil && o.RecommendedOptions.Authorization != nil {
		serverConfig.Authorization.Authorizer = authzcache.New(a, allowTTL, authzcache.DefaultSize)
	}
	// The admission webhooks and policies match namespace selectors
	// against an informer of host namespaces (admissionNamespaces), and
	// API Priority and Fairness reads every FlowSchema: neither keeps
	// managed fields, which nothing here reads.
	if f := serverConfig.SharedInformerFactory; f != nil {
		for _, inf := range []cache.SharedIndexInformer{f.Core().V1().Namespaces().Informer(), f.Flowcontrol().V1().FlowSchemas().Informer()} {
			if err := inf.SetTransform(host.Compact); err != nil {
				return nil, err
			}
		}
	}
	allocator, poolSpace, tenantSpace, bindings, err := o.newAllocators()
	if err != nil {
		return nil, err
	}
	syncerConfig, err := o.Syncer.ApplyTo(serverConfig.ClientConfig)
	if err != nil {
		return nil, err
	}
	// API Priority and Fairness' informer of FlowSchemas serves the
	// syncer, whose tenant FlowSchemas name a service account of every
	// host namespace.
	if f := serverConfig.SharedInformerFactory; f != nil && syncerConfig != nil {
		flowSchemas := f.Flowcontrol().V1().FlowSchemas().Informer()
		if err := controller.Shared(flowSchemas); err != nil {
			return nil, err
		}
		syncerConfig.HostFlowSchemas = flowSchemas
	}
	// Deletes of Tenants and tenant Namespaces ask the host for workloads,
	// six reads per host namespace: at client-go's default 5 requests/s a
	// burst of deletes waits on the client's own rate limiter until the
	// requests time out, so these reads get the syncer's host limits.
	var hostWorkloads host.Workloads
	if serverConfig.ClientConfig != nil {
		cfg := rest.CopyConfig(serverConfig.ClientConfig)
		cfg.QPS, cfg.Burst = o.Syncer.HostQPS, o.Syncer.HostBurst
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		md, err := metadata.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		hostWorkloads = host.NewWorkloads(client, md)
	}
	objectQuota, err := o.defaultObjectQuota()
	if err != nil {
		return nil, err
	}
	return &apiserver.Config{
		GenericConfig: serverConfig,
		ExtraConfig: apiserver.ExtraConfig{
			DefaultObjectQuota: objectQuota,
			TenantDNSAddress:   o.Syncer.Config.TenantDNSAddress,
			RouteDomain:        hostnames.CanonicalDNSName(o.Syncer.RouteDomain),
			QuotaRecountPeriod: o.QuotaRecountPeriod,
			IPAM:               kindstore.IPAM{Allocator: allocator, PoolSpace: poolSpace, TenantSpace: tenantSpace},
			HostBindings:       bindings,
			IPAMPeriod:         o.IPAMPeriod,
			IPAMSweepMinAge:    o.IPAMSweepMinAge,
			Syncer:             syncerConfig,
			HostWorkloads:      hostWorkloads,
		},
	}, nil
}

// applyRecommended applies the recommended options, with the host's
// informers of built-in kinds (the namespaces the admission plugins match
// selectors against, APF's configuration) listing and watching protobuf,
// uncompressed: at 100,000 host namespaces a JSON list of them costs the
// host and this process several times the CPU, and a gzipped one more
// again (host.Uncompressed). The host client configuration itself
// (config.ClientConfig, which the syncer's clients of custom resources
// start from) stays on JSON.
func (o *Options) applyRecommended(config *genericapiserver.RecommendedConfig) error {
	ro := o.RecommendedOptions
	if ro.CoreAPI == nil {
		return ro.ApplyTo(config)
	}
	// The core API options come after the tracing options (they trace the
	// host client): apply those three first, and the rest without them.
	if err := ro.EgressSelector.ApplyTo(&config.Config); err != nil {
		return err
	}
	if err := ro.Traces.ApplyTo(config.EgressSelector, &config.Config); err != nil {
		return err
	}
	if err := ro.CoreAPI.ApplyTo(config); err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(host.Protobuf(config.ClientConfig))
	if err != nil {
		return err
	}
	config.SharedInformerFactory = informers.NewSharedInformerFactory(client, hostInformerResync)
	config.SharedInformerFactory.InformerFor(&corev1.Namespace{}, admissionNamespaces)
	core, egress, traces := ro.CoreAPI, ro.EgressSelector, ro.Traces
	ro.CoreAPI, ro.EgressSelector, ro.Traces = nil, nil, nil
	defer func() { ro.CoreAPI, ro.EgressSelector, ro.Traces = core, egress, traces }()
	return ro.ApplyTo(config)
}

// admissionNamespaces is the informer of host namespaces the admission
// plugins match webhooks' and policies' namespace selectors against: every
// host namespace but those the syncer makes (which carry the tenant
// label). The namespace of a tenant.io request is a tenant's own
// namespace, never a host namespace of the syncer's; the syncer keeps its
// namespaces in an informer of its own, holding only what it compares of
// each, and at 100,000 tenant Namespaces a second whole copy of them here
// would be the largest part of this process' heap. A lookup of a name the
// informer does not hold is asked of the host, as for any namespace not
// cached yet.
func admissionNamespaces(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
	return coreinformers.NewFilteredNamespaceInformer(client, resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		func(o *metav1.ListOptions) { o.LabelSelector = "!" + hostnames.TenantLabel })
}

// hostInformerResync is the resync period of the host informers of the
// admission plugins and APF: the core API options'.
const hostInformerResync = 10 * time.Minute

// Run serves until ctx ends.
func (o *Options) Run(ctx context.Context) error {
	// A limit that cannot be read leaves the runtime's default: the
	// server serves without one rather than not at all.
	switch limit, err := applyMemoryLimit(o.MemoryLimitRatio, ownCgroupMemoryLimitFiles(), os.Getenv); {
	case err != nil:
		klog.FromContext(ctx).Error(err, "No Go soft memory limit: the cgroup's memory limit cannot be read")
	case limit.Bytes > 0:
		klog.FromContext(ctx).Info("Go soft memory limit", "bytes", limit.Bytes, "from", limit.Reason)
	default:
		klog.FromContext(ctx).Info("No Go soft memory limit", "because", limit.Reason)
	}
	config, err := o.Config()
	if err != nil {
		return err
	}
	server, err := config.Complete().New()
	if err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Serving tenant.io", "etcd", o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList)
	return server.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}

// newAllocators connects IPAM to the server's etcd: the allocator of
// addresses with its keys under <etcd-prefix>/ipam, the one of the pools'
// claims on their space under <etcd-prefix>/ipam-pools, and the tenant
// space, of tenant objects' claims on their tenant's block and public IPs,
// under <etcd-prefix>/ipam-local; and, on the same client, the record of
// the servers HostClaims hold, under <etcd-prefix>/hostbindings.
func (o *Options) newAllocators() (allocator, poolSpace, tenantSpace *ipam.Allocator, bindings *hostbinding.Ledger, err error) {
	tr := o.RecommendedOptions.Etcd.StorageConfig.Transport
	var tlsConfig *tls.Config
	if tr.CertFile != "" || tr.KeyFile != "" || tr.TrustedCAFile != "" {
		info := transport.TLSInfo{CertFile: tr.CertFile, KeyFile: tr.KeyFile, TrustedCAFile: tr.TrustedCAFile}
		if tlsConfig, err = info.ClientConfig(); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("etcd TLS for IPAM: %w", err)
		}
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   tr.ServerList,
		TLS:         tlsConfig,
		DialTimeout: 20 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("etcd client for IPAM: %w", err)
	}
	prefix := strings.TrimSuffix(o.RecommendedOptions.Etcd.StorageConfig.Prefix, "/")
	return ipam.New(client, prefix+"/ipam"), ipam.New(client, prefix+"/ipam-pools"), ipam.New(client, prefix+"/ipam-local", ipam.WithStrictFirstFit()),
		hostbinding.New(client, prefix+"/hostbindings"), nil
}

// defaultObjectQuota parses --default-object-quota, and checks it as
// Tenant.spec.quota.objects is checked.
func (o *Options) defaultObjectQuota() (corev1.ResourceList, error) {
	if len(o.DefaultObjectQuota) == 0 {
		return nil, nil
	}
	out := corev1.ResourceList{}
	for k, v := range o.DefaultObjectQuota {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("--default-object-quota %s=%s: %w", k, v, err)
		}
		out[corev1.ResourceName(k)] = q
	}
	if errs := validation.ValidateObjectQuota(out, nil, field.NewPath("--default-object-quota")); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return out, nil
}
