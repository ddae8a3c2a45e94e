package tenantdns

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/coredns/coredns/plugin/pkg/upstream"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"tenant.io/tenant-apiserver/pkg/apis/admin"
	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// PluginName is the plugin's directive in a Corefile.
const PluginName = "tenantdns"

var log = clog.NewWithPlugin(PluginName)

var requests = promauto.NewCounterVec(prometheus.CounterOpts{
	Namespace: plugin.Namespace,
	Subsystem: PluginName,
	Name:      "requests_total",
	Help:      "Queries the tenantdns plugin answered or passed on, by the view that answered (tenant, host, public, or next for the next plugin) and rcode.",
}, []string{"server", "view", "rcode"})

func init() { plugin.Register(PluginName, setup) }

// Plugin is the CoreDNS handler.
type Plugin struct {
	Next     plugin.Handler
	Resolver *Resolver
	synced   []cache.InformerSynced
	upstream *upstream.Upstream
}

// Name is the plugin's name.
func (p *Plugin) Name() string { return PluginName }

// Ready says whether every informer has synced: until then the plugin
// would answer NXDOMAIN for names that exist (the ready plugin asks).
func (p *Plugin) Ready() bool {
	for _, s := range p.synced {
		if !s() {
			return false
		}
	}
	return len(p.synced) > 0
}

// ServeDNS answers a query, or passes it to the next plugin.
func (p *Plugin) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	state := request.Request{W: w, Req: r}
	src, err := netip.ParseAddr(state.IP())
	if err != nil {
		return plugin.NextOrFailure(p.Name(), p.Next, ctx, w, r)
	}
	m, outcome, view := p.Resolver.resolve(src, r)
	server := metrics.WithServer(ctx)
	if outcome == Next {
		requests.WithLabelValues(server, "next", "").Inc()
		return plugin.NextOrFailure(p.Name(), p.Next, ctx, w, r)
	}
	if outcome == Chase {
		cname := m.Answer[len(m.Answer)-1].(*dns.CNAME)
		if up, err := p.upstream.Lookup(ctx, state, cname.Target, state.QType()); err == nil && up != nil {
			m.Answer = append(m.Answer, up.Answer...)
		}
	}
	requests.WithLabelValues(server, view, dns.RcodeToString[m.Rcode]).Inc()
	state.SizeAndDo(m)
	if err := w.WriteMsg(m); err != nil {
		return dns.RcodeServerFailure, err
	}
	return dns.RcodeSuccess, nil
}

// config is the plugin's Corefile stanza:
//
//	tenantdns CLUSTER-DOMAIN [REVERSE-ZONES...] {
//	    kubeconfig PATH
//	    public ZONE [NAME-SERVERS...]
//	    ttl SECONDS
//	}
type config struct {
	domain     string
	reverse    []string
	kubeconfig string
	public     string
	publicNS   []string
	ttl        uint32
}

func parse(c *caddy.Controller) (*config, error) {
	cfg := &config{ttl: 5}
	seen := false
	for c.Next() {
		if seen {
			return nil, plugin.ErrOnce
		}
		seen = true
		args := c.RemainingArgs()
		if len(args) == 0 {
			return nil, c.Errf("%s needs the cluster domain", PluginName)
		}
		cfg.domain = canonical(args[0])
		for _, z := range args[1:] {
			z = canonical(z)
			if !dns.IsSubDomain("arpa.", z) {
				return nil, c.Errf("%s: %q is not a reverse zone (in-addr.arpa or ip6.arpa)", PluginName, z)
			}
			cfg.reverse = append(cfg.reverse, z)
		}
		for c.NextBlock() {
			switch c.Val() {
			case "kubeconfig":
				if !c.NextArg() {
					return nil, c.ArgErr()
				}
				cfg.kubeconfig = c.Val()
			case "public":
				a := c.RemainingArgs()
				if len(a) == 0 {
					return nil, c.ArgErr()
				}
				cfg.public = canonical(a[0])
				for _, ns := range a[1:] {
					cfg.publicNS = append(cfg.publicNS, canonical(ns))
				}
				if len(cfg.publicNS) == 0 {
					cfg.publicNS = []string{"ns.dns." + cfg.public}
				}
			case "ttl":
				if !c.NextArg() {
					return nil, c.ArgErr()
				}
				v, err := strconv.ParseUint(c.Val(), 10, 32)
				if err != nil || v > 3600 {
					return nil, c.Errf("%s: ttl must be 0 to 3600 seconds, not %q", PluginName, c.Val())
				}
				cfg.ttl = uint32(v)
			default:
				return nil, c.Errf("%s: unknown property %q", PluginName, c.Val())
			}
		}
	}
	if cfg.public != "" && (dns.IsSubDomain(cfg.domain, cfg.public) || dns.IsSubDomain(cfg.public, cfg.domain)) {
		return nil, fmt.Errorf("%s: the public zone %s and the cluster domain %s overlap", PluginName, cfg.public, cfg.domain)
	}
	return cfg, nil
}

func setup(c *caddy.Controller) error {
	cfg, err := parse(c)
	if err != nil {
		return plugin.Error(PluginName, err)
	}
	rc, err := restConfig(cfg.kubeconfig)
	if err != nil {
		return plugin.Error(PluginName, err)
	}
	store, informers, err := Informers(rc)
	if err != nil {
		return plugin.Error(PluginName, err)
	}
	p := &Plugin{
		Resolver: &Resolver{
			Store: store, Domain: cfg.domain, Reverse: cfg.reverse,
			Public: cfg.public, PublicNS: cfg.publicNS,
			TTL: cfg.ttl, Serial: uint32(time.Now().Unix()),
		},
		upstream: upstream.New(),
	}
	for _, inf := range informers {
		p.synced = append(p.synced, inf.HasSynced)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.OnStartup(func() error {
		for _, inf := range informers {
			go inf.Run(ctx.Done())
		}
		log.Infof("watching tenant networks, namespaces, services, pods, endpoint slices, floating IPs and load balancers")
		return nil
	})
	c.OnShutdown(func() error {
		cancel()
		return nil
	})
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		p.Next = next
		return p
	})
	return nil
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return rest.InClusterConfig()
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}

// Informers makes the Store's informers: the host's Namespaces, Services,
// Pods and EndpointSlices, the tenants' ClusterUserDefinedNetworks, and
// the provider's views of FloatingIPs and LoadBalancers (admin.tenant.io),
// each with its transform and indexes. The Store reads their caches;
// nothing is copied. Everything but the public names is the host's: the
// syncer writes each tenant's isolation on its host namespaces, and its
// networks' subnets are the ClusterUserDefinedNetworks'.
func Informers(rc *rest.Config) (*Store, []cache.SharedIndexInformer, error) {
	rc = rest.CopyConfig(rc)
	rc.UserAgent = "tenant-dns"
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, nil, err
	}
	core := kube.CoreV1().RESTClient()
	store := &Store{}
	mk := func(k Kind, lw cache.ListerWatcher, obj runtime.Object) cache.SharedIndexInformer {
		inf := cache.NewSharedIndexInformer(lw, obj, 0, store.Indexers(k))
		_ = inf.SetTransform(Transform(k))
		return inf
	}
	cudn := schema.GroupVersionResource{Group: "k8s.ovn.org", Version: "v1", Resource: "clusteruserdefinednetworks"}
	netInf := mk(KindNetworks, dynamicListWatch(dyn, cudn, hostnames.TenantLabel), &unstructured.Unstructured{})
	nsInf := mk(KindNamespaces, cache.NewListWatchFromClient(core, "namespaces", metav1.NamespaceAll, fields.Everything()), &corev1.Namespace{})
	svcInf := mk(KindServices, cache.NewListWatchFromClient(core, "services", metav1.NamespaceAll, fields.Everything()), &corev1.Service{})
	podInf := mk(KindPods, cache.NewListWatchFromClient(core, "pods", metav1.NamespaceAll, fields.Everything()), &corev1.Pod{})
	sliceInf := mk(KindSlices, cache.NewListWatchFromClient(kube.DiscoveryV1().RESTClient(), "endpointslices", metav1.NamespaceAll, fields.Everything()), &discoveryv1.EndpointSlice{})
	store.Networks, store.Namespaces, store.Services = netInf.GetIndexer(), nsInf.GetIndexer(), svcInf.GetIndexer()
	store.Pods, store.Slices = podInf.GetIndexer(), sliceInf.GetIndexer()
	infs := []cache.SharedIndexInformer{netInf, nsInf, svcInf, podInf, sliceInf}
	for _, res := range []string{"floatingips", "loadbalancers"} {
		gvr := schema.GroupVersionResource{Group: admin.GroupName, Version: "v1alpha1", Resource: res}
		lw := dynamicListWatch(dyn, gvr, "")
		inf := mk(KindPublic, lw, &unstructured.Unstructured{})
		store.Public = append(store.Public, inf.GetIndexer())
		infs = append(infs, inf)
	}
	return store, infs, nil
}

// dynamicListWatch lists and watches resource gvr, the objects with label
// key when it is set.
func dynamicListWatch(dyn dynamic.Interface, gvr schema.GroupVersionResource, key string) cache.ListerWatcher {
	narrow := func(o *metav1.ListOptions) {
		if key != "" {
			o.LabelSelector = key
		}
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			narrow(&o)
			return dyn.Resource(gvr).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			narrow(&o)
			return dyn.Resource(gvr).Watch(ctx, o)
		},
	}
}
