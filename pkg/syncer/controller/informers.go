package controller

import (
	"context"
	"time"

	egressipclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1/apis/clientset/versioned"
	egressipinformers "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1/apis/informers/externalversions"
	raclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/routeadvertisements/v1/apis/clientset/versioned"
	rainformers "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/routeadvertisements/v1/apis/informers/externalversions"
	udnclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1/apis/clientset/versioned"
	udninformers "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1/apis/informers/externalversions"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/informers/internalinterfaces"
	rbacinformers "k8s.io/client-go/informers/rbac/v1"
	schedulinginformers "k8s.io/client-go/informers/scheduling/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	hostapi "tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// MetalLB resources the syncer makes.
var (
	IPAddressPools    = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "ipaddresspools"}
	L2Advertisements  = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "l2advertisements"}
	BGPAdvertisements = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "bgpadvertisements"}
	// MetalLBResources are all of them.
	MetalLBResources = []schema.GroupVersionResource{IPAddressPools, L2Advertisements, BGPAdvertisements}
	// FRRConfigurations are the frr-k8s objects the syncer makes, and
	// BGPSessionStates those frr-k8s reports sessions in.
	FRRConfigurations = schema.GroupVersionResource{Group: "frrk8s.metallb.io", Version: "v1beta1", Resource: "frrconfigurations"}
	BGPSessionStates  = schema.GroupVersionResource{Group: "frrk8s.metallb.io", Version: "v1beta1", Resource: "bgpsessionstates"}
	// ClusterNetworkConnects connect tenants' networks with provider networks.
	ClusterNetworkConnects = schema.GroupVersionResource{Group: "k8s.ovn.org", Version: "v1", Resource: "clusternetworkconnects"}
	hostObjectSelector     = hostnames.TenantLabel // every host object the syncer makes carries it
	// VirtualMachines are KubeVirt's, which FloatingIPs and LoadBalancers
	// bind to by name.
	VirtualMachines = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachines"}
	// NetworkAttachmentDefinitions are Multus' kind that OVN-Kubernetes'
	// cluster-manager renders a ClusterUserDefinedNetwork into, one in
	// each namespace the network selects, named as the network and
	// labelled hostnames.UDNRenderedLabel.
	NetworkAttachmentDefinitions = schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}
	// BareMetalHosts are Metal3's servers, which HostClaims bind.
	BareMetalHosts = schema.GroupVersionResource{Group: "metal3.io", Version: "v1alpha1", Resource: "baremetalhosts"}
	// Groups are OpenShift's groups of users (openshift-apiserver serves
	// them; plain Kubernetes has none): each tenant is one in the
	// platform's identity layer.
	Groups = schema.GroupVersionResource{Group: "user.openshift.io", Version: "v1", Resource: "groups"}
)

// servedRecheck is how often the syncer asks the host whether it serves
// VirtualMachines yet, while it does not (KubeVirt installed later).
const servedRecheck = 30 * time.Second

// Sources are the clients and informers the controllers share.
type Sources struct {
	// Storage is the server's storage of tenant objects, read and written
	// in process.
	Storage     Storage
	Host        kubernetes.Interface
	HostDynamic dynamic.Interface
	// HostUDN and HostEgressIP are the typed clients of the OVN-Kubernetes
	// kinds the syncer makes.
	HostUDN      udnclientset.Interface
	HostEgressIP egressipclientset.Interface
	HostRA       raclientset.Interface
	// MetalLBNamespace is where MetalLB pools and advertisements live;
	// FRRNamespace, where frr-k8s reads FRRConfigurations and reports
	// BGPSessionStates.
	MetalLBNamespace, FRRNamespace string

	// Tenants, Namespaces, Networks, LoadBalancers and FloatingIPs hold
	// every tenant's objects (see ObjectKey); VRFPeerings, the provider's
	// (indexed ByTenant by spec.tenant).
	Tenants, Namespaces, Networks, LoadBalancers, FloatingIPs, VRFPeerings cache.SharedIndexInformer
	// ProviderServices are the provider's offers.
	ProviderServices cache.SharedIndexInformer
	// HostClaims are every tenant's claims on servers (see ObjectKey),
	// and HostClasses the provider's classes of servers.
	HostClaims, HostClasses cache.SharedIndexInformer
	// HostBareMetalHosts are every Metal3 BareMetalHost of the host,
	// indexed by namespace and ByConsumer. It runs once the host serves
	// them, and is left out of Synced, like HostVirtualMachines.
	HostBareMetalHosts cache.SharedIndexInformer
	// HostGroups are the OpenShift Groups carrying the tenant label,
	// indexed ByTenant. It runs once the host serves them, and is left
	// out of Synced, like HostVirtualMachines: see GroupsKnown.
	HostGroups cache.SharedIndexInformer
	// Host objects carrying the tenant label, and only those. The host
	// namespaces and the RoleBindings are held (host.HeldNamespace,
	// host.HeldRoleBinding): only what the syncer compares of each.
	HostNamespaces, HostRoleBindings, HostServices cache.SharedIndexInformer
	// HostCUDNs and HostEgressIPs are the OVN-Kubernetes objects carrying
	// the tenant label: ClusterUserDefinedNetworks and EgressIPs.
	HostCUDNs, HostEgressIPs cache.SharedIndexInformer
	// MetalLB objects carrying the tenant label, by resource.
	HostMetalLB map[schema.GroupVersionResource]cache.SharedIndexInformer
	// HostRouteAdvertisements and HostFRRConfigurations carry the tenant
	// label; HostBGPSessionStates are every session frr-k8s reports.
	HostRouteAdvertisements, HostFRRConfigurations, HostBGPSessionStates cache.SharedIndexInformer
	// HostClusterNetworkConnects carry the tenant label.
	HostClusterNetworkConnects cache.SharedIndexInformer
	// HostResourceQuotas and HostLimitRanges are the compute quota objects
	// of the host namespaces, carrying the tenant label.
	HostResourceQuotas, HostLimitRanges cache.SharedIndexInformer
	// HostTargetPods are the pods FloatingIPs bind (labelled
	// hostnames.FloatingIPTargetLabel by the syncer), and
	// HostLauncherPods the pods of VirtualMachines (labelled
	// hostnames.VirtualMachineLabel by KubeVirt), metadata only, indexed
	// by namespace.
	HostTargetPods, HostLauncherPods cache.SharedIndexInformer
	// HostVirtualMachines are every VirtualMachine of the host, metadata
	// only. It runs once the host serves VirtualMachines, and is left out
	// of Synced: a host without KubeVirt holds no other controller up. See
	// VirtualMachinesKnown.
	HostVirtualMachines cache.SharedIndexInformer
	// HostPriorityClasses are every PriorityClass of the host: which one
	// is the default (PriorityClassesAllowed).
	HostPriorityClasses cache.SharedIndexInformer
	// HostFlowSchemas are the FlowSchemas carrying the tenant label: each
	// tenant's requests to the host, one flow of the tenants' level. Read
	// from API Priority and Fairness' informer when HostClients.FlowSchemas
	// is set (its store holds every FlowSchema; its handlers see only
	// those with the tenant label).
	HostFlowSchemas cache.SharedIndexInformer
	// HostNetworkAttachments are the NetworkAttachmentDefinitions
	// OVN-Kubernetes rendered from user-defined networks, in every host
	// namespace; only their names are kept (see Attached).
	HostNetworkAttachments cache.SharedIndexInformer

	Health *HostHealth
	// Orphans is what the periodic check looks at; the controllers
	// register their host kinds in it.
	Orphans *Orphans

	// written are the host objects the syncer wrote, and the tenant
	// objects whose status it wrote, that the informers do not show yet,
	// by informer (see Written).
	written map[cache.SharedIndexInformer]*Written

	kube     informers.SharedInformerFactory
	dynamic  dynamicinformer.DynamicSharedInformerFactory
	udn      udninformers.SharedInformerFactory
	egressIP egressipinformers.SharedInformerFactory
	ra       rainformers.SharedInformerFactory
	frr      dynamicinformer.DynamicSharedInformerFactory
	frrAll   dynamicinformer.DynamicSharedInformerFactory
	cluster  dynamicinformer.DynamicSharedInformerFactory
}

// WrittenOf returns what the syncer wrote of the objects inf holds that
// inf does not show yet (nil for an informer whose objects the syncer
// does not write, or does not read back).
func (s *Sources) WrittenOf(inf cache.SharedIndexInformer) *Written { return s.written[inf] }

// HostClients are the clients of the host API the syncer uses.
type HostClients struct {
	Kube     kubernetes.Interface
	Dynamic  dynamic.Interface
	UDN      udnclientset.Interface
	EgressIP egressipclientset.Interface
	RA       raclientset.Interface
	// Metadata reads objects' metadata alone (the rendered network
	// attachments).
	Metadata metadata.Interface
	// FlowSchemas, when set, is the process' running informer of every
	// FlowSchema (API Priority and Fairness'), indexed ByTenant: the
	// syncer reads the tenants' FlowSchemas from it. See Shared.
	FlowSchemas cache.SharedIndexInformer
}

// Namespaces are the host namespaces of the networking stack the syncer
// writes into.
type Namespaces struct {
	// MetalLB holds MetalLB's pools and advertisements.
	MetalLB string
	// FRR is where frr-k8s reads FRRConfigurations and the Secrets of BGP
	// passwords, and reports BGPSessionStates.
	FRR string
}

// NewSources builds the informers; Start runs them.
func NewSources(storage Storage, host HostClients, ns Namespaces) *Sources {
	byTenant := cache.Indexers{ByTenant: indexByTenant}
	selected := func(o *metav1.ListOptions) { o.LabelSelector = hostObjectSelector }
	s := &Sources{
		Storage: storage, Host: host.Kube, HostDynamic: host.Dynamic, HostUDN: host.UDN, HostEgressIP: host.EgressIP, HostRA: host.RA,
		MetalLBNamespace: ns.MetalLB, FRRNamespace: ns.FRR,
		Tenants:          newStoreInformer(storage.Tenants, nil, false),
		Namespaces:       newStoreInformer(storage.Namespaces, byTenant, true),
		Networks:         newStoreInformer(storage.Networks, byTenant, true),
		LoadBalancers:    newStoreInformer(storage.LoadBalancers, byTenant, true),
		FloatingIPs:      newStoreInformer(storage.FloatingIPs, byTenant, true),
		VRFPeerings:      newStoreInformer(storage.VRFPeerings, cache.Indexers{ByTenant: indexBySpecTenant}, false),
		ProviderServices: newStoreInformer(storage.ProviderServices, nil, false),
		HostClaims:       newStoreInformer(storage.HostClaims, byTenant, true),
		HostClasses:      newStoreInformer(storage.HostClasses, nil, false),
		HostMetalLB:      map[schema.GroupVersionResource]cache.SharedIndexInformer{},
		Health:           &HostHealth{client: host.Kube},
		Orphans:          &Orphans{},
		kube:             informers.NewSharedInformerFactoryWithOptions(host.Kube, 0, informers.WithTweakListOptions(selected)),
		dynamic:          dynamicinformer.NewFilteredDynamicSharedInformerFactory(host.Dynamic, 0, ns.MetalLB, selected),
		frr:              dynamicinformer.NewFilteredDynamicSharedInformerFactory(host.Dynamic, 0, ns.FRR, selected),
		frrAll:           dynamicinformer.NewFilteredDynamicSharedInformerFactory(host.Dynamic, 0, ns.FRR, nil),
		cluster:          dynamicinformer.NewFilteredDynamicSharedInformerFactory(host.Dynamic, 0, metav1.NamespaceAll, selected),
		ra:               rainformers.NewSharedInformerFactoryWithOptions(host.RA, 0, rainformers.WithTweakListOptions(selected)),
		udn:              udninformers.NewSharedInformerFactoryWithOptions(host.UDN, 0, udninformers.WithTweakListOptions(selected)),
		egressIP:         egressipinformers.NewSharedInformerFactoryWithOptions(host.EgressIP, 0, egressipinformers.WithTweakListOptions(selected)),
	}
	own := []cache.SharedIndexInformer{}
	s.HostNamespaces = s.kube.InformerFor(&corev1.Namespace{}, func(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return coreinformers.NewFilteredNamespaceInformer(client, resync, cache.Indexers{}, selected)
	})
	s.HostRoleBindings = s.tenantIndexed(&rbacv1.RoleBinding{}, rbacinformers.NewFilteredRoleBindingInformer, selected)
	s.HostServices = s.tenantIndexed(&corev1.Service{}, coreinformers.NewFilteredServiceInformer, selected)
	s.HostCUDNs = s.udn.K8s().V1().ClusterUserDefinedNetworks().Informer()
	s.HostEgressIPs = s.egressIP.K8s().V1().EgressIPs().Informer()
	s.HostRouteAdvertisements = s.ra.K8s().V1().RouteAdvertisements().Informer()
	s.HostFRRConfigurations = s.frr.ForResource(FRRConfigurations).Informer()
	s.HostBGPSessionStates = s.frrAll.ForResource(BGPSessionStates).Informer()
	s.HostClusterNetworkConnects = s.cluster.ForResource(ClusterNetworkConnects).Informer()
	s.HostResourceQuotas = s.tenantIndexed(&corev1.ResourceQuota{}, coreinformers.NewFilteredResourceQuotaInformer, selected)
	s.HostLimitRanges = s.tenantIndexed(&corev1.LimitRange{}, coreinformers.NewFilteredLimitRangeInformer, selected)
	if host.FlowSchemas != nil {
		s.HostFlowSchemas = &termInformer{SharedIndexInformer: host.FlowSchemas}
	} else {
		s.HostFlowSchemas = s.kube.Flowcontrol().V1().FlowSchemas().Informer()
		own = append(own, s.HostFlowSchemas)
	}
	s.HostTargetPods = podsLabelled(host.Kube, hostnames.FloatingIPTargetLabel)
	s.HostLauncherPods = podsLabelled(host.Kube, hostnames.VirtualMachineLabel)
	s.HostVirtualMachines = dynamicinformer.NewFilteredDynamicInformer(host.Dynamic, VirtualMachines, metav1.NamespaceAll, 0,
		cache.Indexers{}, nil).Informer()
	if err := s.HostVirtualMachines.SetTransform(metadataOnly); err != nil {
		panic(err) // only fails once started
	}
	s.HostBareMetalHosts = dynamicinformer.NewFilteredDynamicInformer(host.Dynamic, BareMetalHosts, metav1.NamespaceAll, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, ByConsumer: indexByConsumer}, nil).Informer()
	s.HostGroups = dynamicinformer.NewFilteredDynamicInformer(host.Dynamic, Groups, metav1.NamespaceAll, 0,
		cache.Indexers{ByTenant: indexByTenant}, selected).Informer()
	if err := s.HostGroups.SetTransform(hostapi.Compact); err != nil {
		panic(err) // only fails once started
	}
	s.HostPriorityClasses = schedulinginformers.NewPriorityClassInformer(host.Kube, 0, cache.Indexers{})
	s.HostNetworkAttachments = metadatainformer.NewFilteredMetadataInformer(host.Metadata, NetworkAttachmentDefinitions, metav1.NamespaceAll, 0,
		cache.Indexers{}, func(o *metav1.ListOptions) { o.LabelSelector = hostnames.UDNRenderedLabel }).Informer()
	if err := s.HostNetworkAttachments.SetTransform(nameOnly); err != nil {
		panic(err)
	}
	if err := s.HostBGPSessionStates.AddIndexers(cache.Indexers{ByVRF: indexByVRF}); err != nil {
		panic(err)
	}
	for _, inf := range append(own, s.HostNamespaces, s.HostRoleBindings, s.HostServices, s.HostCUDNs, s.HostEgressIPs,
		s.HostRouteAdvertisements, s.HostFRRConfigurations, s.HostClusterNetworkConnects, s.HostResourceQuotas, s.HostLimitRanges) {
		if err := inf.AddIndexers(byTenant); err != nil {
			panic(err) // only fails once started
		}
		// The syncer's host namespaces and their members RoleBindings,
		// one of each for every tenant Namespace: only what the syncer
		// compares is kept (hostkinds' HostNamespaces and RoleBindings).
		transform := hostapi.Compact
		switch inf {
		case s.HostNamespaces:
			transform = hostapi.HoldNamespace
		case s.HostRoleBindings:
			transform = hostapi.HoldRoleBinding
		}
		if err := inf.SetTransform(transform); err != nil {
			panic(err)
		}
	}
	if err := s.HostBGPSessionStates.SetTransform(hostapi.Compact); err != nil {
		panic(err)
	}
	s.written = map[cache.SharedIndexInformer]*Written{}
	for _, inf := range []cache.SharedIndexInformer{s.HostNamespaces, s.HostRoleBindings, s.HostServices, s.HostCUDNs, s.HostEgressIPs, s.HostRouteAdvertisements, s.HostGroups, s.HostFlowSchemas,
		s.HostResourceQuotas, s.HostLimitRanges, s.HostFRRConfigurations, s.HostClusterNetworkConnects} {
		w, err := NewWritten(inf)
		if err != nil {
			panic(err) // only fails once stopped
		}
		s.written[inf] = w
	}
	// The tenant kinds whose controllers read back what they wrote; the
	// VRF peering and provider service controllers write status from what
	// the host shows and read none of it back, so they keep none.
	for inf, partitioned := range map[cache.SharedIndexInformer]bool{s.Tenants: false, s.Namespaces: true, s.Networks: true,
		s.LoadBalancers: true, s.FloatingIPs: true, s.HostClaims: true} {
		w, err := NewWritten(inf)
		if err != nil {
			panic(err) // only fails once stopped
		}
		if partitioned {
			w.cached = setCacheNamespace
		}
		s.written[inf] = w
	}
	for _, gvr := range MetalLBResources {
		inf := s.dynamic.ForResource(gvr).Informer()
		if err := inf.AddIndexers(byTenant); err != nil {
			panic(err)
		}
		if err := inf.SetTransform(hostapi.Compact); err != nil {
			panic(err)
		}
		w, err := NewWritten(inf)
		if err != nil {
			panic(err) // only fails once stopped
		}
		s.written[inf] = w
		s.HostMetalLB[gvr] = inf
	}
	return s
}

// Start runs every informer and the host health probe until ctx ends.
func (s *Sources) Start(ctx context.Context) {
	go s.Tenants.RunWithContext(ctx)
	go s.Namespaces.RunWithContext(ctx)
	go s.Networks.RunWithContext(ctx)
	go s.LoadBalancers.RunWithContext(ctx)
	go s.FloatingIPs.RunWithContext(ctx)
	go s.VRFPeerings.RunWithContext(ctx)
	go s.ProviderServices.RunWithContext(ctx)
	go s.HostClaims.RunWithContext(ctx)
	go s.HostClasses.RunWithContext(ctx)
	s.kube.Start(ctx.Done())
	s.ra.Start(ctx.Done())
	s.frr.Start(ctx.Done())
	s.frrAll.Start(ctx.Done())
	s.cluster.Start(ctx.Done())
	s.dynamic.Start(ctx.Done())
	s.udn.Start(ctx.Done())
	s.egressIP.Start(ctx.Done())
	go s.HostTargetPods.RunWithContext(ctx)
	go s.HostLauncherPods.RunWithContext(ctx)
	go s.HostNetworkAttachments.RunWithContext(ctx)
	go s.HostPriorityClasses.RunWithContext(ctx)
	go s.runWhenServed(ctx, VirtualMachines, s.HostVirtualMachines)
	go s.runWhenServed(ctx, BareMetalHosts, s.HostBareMetalHosts)
	go s.runWhenServed(ctx, Groups, s.HostGroups)
	go s.Health.Run(ctx, time.Second)
	if t, ok := s.HostFlowSchemas.(*termInformer); ok {
		go func() {
			<-ctx.Done()
			t.end()
		}()
	}
}

// tenantIndexed returns the informer of s.kube for obj's kind, made by
// newInformer for every namespace with no index of its own (the loop in
// NewSources adds ByTenant) instead of the factory's, which indexes
// namespaced kinds by namespace. The syncer reads these kinds by key and
// by tenant, never by namespace, and the syncer makes one RoleBinding in
// each of its host namespaces: a namespace index would keep a set of one
// key for each.
func (s *Sources) tenantIndexed(obj runtime.Object,
	newInformer func(kubernetes.Interface, string, time.Duration, cache.Indexers, internalinterfaces.TweakListOptionsFunc) cache.SharedIndexInformer,
	tweak internalinterfaces.TweakListOptionsFunc) cache.SharedIndexInformer {
	return s.kube.InformerFor(obj, func(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return newInformer(client, metav1.NamespaceAll, resync, cache.Indexers{}, tweak)
	})
}

// runWhenServed runs inf, an informer of gvr, once the host serves gvr,
// asking every servedRecheck until it does or ctx ends.
func (s *Sources) runWhenServed(ctx context.Context, gvr schema.GroupVersionResource, inf cache.SharedIndexInformer) {
	logged := false
	for {
		resources, err := s.Host.Discovery().ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		if err == nil {
			for _, r := range resources.APIResources {
				if r.Name == gvr.Resource {
					inf.RunWithContext(ctx)
					return
				}
			}
		}
		if !logged {
			klog.FromContext(ctx).Info("The host does not serve this resource (yet): objects bound to one wait", "resource", gvr.String(), "err", err)
			logged = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(servedRecheck):
		}
	}
}

// podsLabelled is an informer of the host's pods that carry label key,
// metadata only, indexed by namespace.
func podsLabelled(client kubernetes.Interface, key string) cache.SharedIndexInformer {
	inf := coreinformers.NewFilteredPodInformer(client, metav1.NamespaceAll, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		func(o *metav1.ListOptions) { o.LabelSelector = key })
	if err := inf.SetTransform(metadataOnly); err != nil {
		panic(err) // only fails once started
	}
	return inf
}

// Synced are the sync checkers of every informer: each one's channel
// closes once the informer has listed (waiting on them reacts at once,
// where cache.WaitForCacheSync polls every 100 ms).
func (s *Sources) Synced() []cache.DoneChecker {
	named := s.NamedSynced()
	out := make([]cache.DoneChecker, 0, len(named))
	for _, n := range named {
		out = append(out, n.Synced)
	}
	return out
}

// NamedSynced is an informer's sync checker with the name of what it holds.
type NamedSynced struct {
	Name   string
	Synced cache.DoneChecker
}

// NamedSynced are the sync checkers of every informer, named.
func (s *Sources) NamedSynced() []NamedSynced {
	named := []struct {
		name string
		inf  cache.SharedIndexInformer
	}{
		{"tenants", s.Tenants}, {"namespaces", s.Namespaces}, {"networks", s.Networks},
		{"loadbalancers", s.LoadBalancers}, {"floatingips", s.FloatingIPs},
		{"vrfpeerings", s.VRFPeerings}, {"providerservices", s.ProviderServices},
		{"hostclaims", s.HostClaims}, {"hostclasses", s.HostClasses},
		{"host namespaces", s.HostNamespaces}, {"host rolebindings", s.HostRoleBindings},
		{"host services", s.HostServices}, {"host clusteruserdefinednetworks", s.HostCUDNs},
		{"host egressips", s.HostEgressIPs}, {"host routeadvertisements", s.HostRouteAdvertisements},
		{"host frrconfigurations", s.HostFRRConfigurations}, {"host bgpsessionstates", s.HostBGPSessionStates},
		{"host clusternetworkconnects", s.HostClusterNetworkConnects}, {"host floating IP target pods", s.HostTargetPods},
		{"host virtual machine launcher pods", s.HostLauncherPods},
		{"host network attachment definitions", s.HostNetworkAttachments},
		{"host priorityclasses", s.HostPriorityClasses},
		{"host resourcequotas", s.HostResourceQuotas}, {"host limitranges", s.HostLimitRanges},
		{"host flowschemas", s.HostFlowSchemas},
	}
	out := make([]NamedSynced, 0, len(named)+len(s.HostMetalLB))
	for _, n := range named {
		out = append(out, NamedSynced{n.name, n.inf.HasSyncedChecker()})
	}
	for gvr, inf := range s.HostMetalLB {
		out = append(out, NamedSynced{"host " + gvr.Resource, inf.HasSyncedChecker()})
	}
	return out
}
