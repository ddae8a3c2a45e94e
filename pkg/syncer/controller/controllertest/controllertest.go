// Package controllertest gives the syncer's unit tests its sources over
// fakes: an in-memory Store of tenant objects, and fake host clients whose
// informers run.
package controllertest

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	egressipfake "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1/apis/clientset/versioned/fake"
	rafake "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/routeadvertisements/v1/apis/clientset/versioned/fake"
	udnfake "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1/apis/clientset/versioned/fake"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Store is an in-memory controller.Store of one kind of tenant object,
// keyed by tenant, namespace and name as the request context says. It
// lists nothing and watches nothing: tests put the objects the controller
// reads into the informers themselves (Sources.Cache).
type Store struct {
	newObj, newList func() runtime.Object

	mu      sync.Mutex
	objects map[string]runtime.Object
	// Updates counts the updates made through the store.
	Updates int
}

var _ controller.Store = &Store{}

// NewStore returns an empty Store of the kind newObj and newList make.
func NewStore(newObj, newList func() runtime.Object) *Store {
	return &Store{newObj: newObj, newList: newList, objects: map[string]runtime.Object{}}
}

func key(ctx context.Context, name string) string {
	t, _ := tenancy.TenantFrom(ctx)
	return t + "/" + genericapirequest.NamespaceValue(ctx) + "/" + name
}

// Put stores obj for tenant t, in tenant Namespace ns ("" for none).
func (s *Store) Put(t, ns string, obj runtime.Object) {
	m, _ := meta.Accessor(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[t+"/"+ns+"/"+m.GetName()] = obj.DeepCopyObject()
}

// Remove deletes the object of tenant t named ns/name.
func (s *Store) Remove(t, ns, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objects, t+"/"+ns+"/"+name)
}

// Stored returns the object of tenant t named ns/name, or nil.
func (s *Store) Stored(t, ns, name string) runtime.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o, ok := s.objects[t+"/"+ns+"/"+name]; ok {
		return o.DeepCopyObject()
	}
	return nil
}

func (s *Store) New() runtime.Object     { return s.newObj() }
func (s *Store) NewList() runtime.Object { return s.newList() }
func (s *Store) Destroy()                {}

func (s *Store) notFound(name string) error {
	return apierrors.NewNotFound(tenant.Resource("objects"), name)
}

func (s *Store) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o, ok := s.objects[key(ctx, name)]; ok {
		return o.DeepCopyObject(), nil
	}
	return nil, s.notFound(name)
}

func (s *Store) List(context.Context, *metainternalversion.ListOptions) (runtime.Object, error) {
	return s.newList(), nil
}

func (s *Store) ConvertToTable(context.Context, runtime.Object, runtime.Object) (*metav1.Table, error) {
	return &metav1.Table{}, nil
}

func (s *Store) Watch(context.Context, *metainternalversion.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

func (s *Store) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, _ rest.ValidateObjectFunc, _ rest.ValidateObjectUpdateFunc, _ bool, _ *metav1.UpdateOptions) (runtime.Object, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.objects[key(ctx, name)]
	if !ok {
		return nil, false, s.notFound(name)
	}
	obj, err := objInfo.UpdatedObject(ctx, old.DeepCopyObject())
	if err != nil {
		return nil, false, err
	}
	// An object stored with a resourceVersion gets the next one, as etcd
	// would give it.
	if m, err := meta.Accessor(obj); err == nil {
		if rv, err := strconv.ParseUint(m.GetResourceVersion(), 10, 64); err == nil {
			m.SetResourceVersion(strconv.FormatUint(rv+1, 10))
		}
	}
	s.objects[key(ctx, name)] = obj
	s.Updates++
	return obj.DeepCopyObject(), false, nil
}

func (s *Store) Delete(ctx context.Context, name string, _ rest.ValidateObjectFunc, _ *metav1.DeleteOptions) (runtime.Object, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[key(ctx, name)]
	if !ok {
		return nil, false, s.notFound(name)
	}
	delete(s.objects, key(ctx, name))
	return o, true, nil
}

// Fakes are the fake storage and host of a Sources.
type Fakes struct {
	Tenants, Namespaces, Networks, FloatingIPs, LoadBalancers, VRFPeerings, ProviderServices, HostClaims, HostClasses *Store
	Kube                                                                                                              *kubefake.Clientset
	UDN                                                                                                               *udnfake.Clientset
	EgressIP                                                                                                          *egressipfake.Clientset
	RA                                                                                                                *rafake.Clientset
	// Dynamic serves the MetalLB and frr-k8s kinds.
	Dynamic *dynamicfake.FakeDynamicClient
	// Metadata serves the rendered network attachments.
	Metadata *metadatafake.FakeMetadataClient
}

// NewSources returns Sources over fakes, with the host informers running
// until the test ends. The storage informers do not run: Cache puts the
// objects the controllers read into them. Each of with may change the
// host clients first (give them the process' shared informers, running
// over f.Kube).
func NewSources(t testing.TB, with ...func(host *controller.HostClients, f *Fakes)) (*controller.Sources, *Fakes) {
	t.Helper()
	f := &Fakes{
		Tenants:          NewStore(func() runtime.Object { return &tenant.Tenant{} }, func() runtime.Object { return &tenant.TenantList{} }),
		Namespaces:       NewStore(func() runtime.Object { return &tenant.Namespace{} }, func() runtime.Object { return &tenant.NamespaceList{} }),
		Networks:         NewStore(func() runtime.Object { return &tenant.Network{} }, func() runtime.Object { return &tenant.NetworkList{} }),
		FloatingIPs:      NewStore(func() runtime.Object { return &tenant.FloatingIP{} }, func() runtime.Object { return &tenant.FloatingIPList{} }),
		LoadBalancers:    NewStore(func() runtime.Object { return &tenant.LoadBalancer{} }, func() runtime.Object { return &tenant.LoadBalancerList{} }),
		VRFPeerings:      NewStore(func() runtime.Object { return &tenant.VRFPeering{} }, func() runtime.Object { return &tenant.VRFPeeringList{} }),
		ProviderServices: NewStore(func() runtime.Object { return &tenant.ProviderService{} }, func() runtime.Object { return &tenant.ProviderServiceList{} }),
		HostClaims:       NewStore(func() runtime.Object { return &tenant.HostClaim{} }, func() runtime.Object { return &tenant.HostClaimList{} }),
		HostClasses:      NewStore(func() runtime.Object { return &tenant.HostClass{} }, func() runtime.Object { return &tenant.HostClassList{} }),
		Kube:             kubefake.NewClientset(),
		// NewClientset tracks managed fields, for which these generated
		// clientsets carry no schema of their types.
		UDN:      udnfake.NewSimpleClientset(),      //nolint:staticcheck // see above
		EgressIP: egressipfake.NewSimpleClientset(), //nolint:staticcheck // see above
		RA:       rafake.NewSimpleClientset(),       //nolint:staticcheck // see above
	}
	listKinds := map[schema.GroupVersionResource]string{
		controller.FRRConfigurations:      "FRRConfigurationList",
		controller.BGPSessionStates:       "BGPSessionStateList",
		controller.ClusterNetworkConnects: "ClusterNetworkConnectList",
		controller.VirtualMachines:        "VirtualMachineList",
		controller.BareMetalHosts:         "BareMetalHostList",
		controller.Groups:                 "GroupList",
	}
	for _, gvr := range controller.MetalLBResources {
		listKinds[gvr] = map[string]string{"ipaddresspools": "IPAddressPoolList", "l2advertisements": "L2AdvertisementList", "bgpadvertisements": "BGPAdvertisementList"}[gvr.Resource]
	}
	f.Dynamic = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
	f.Kube.PrependReactor("patch", "pods", jsonPatchTestFailures(f.Kube))
	kind := func(resource string, s *Store) controller.KindStorage {
		return controller.KindStorage{Resource: resource, Store: s, Status: s}
	}
	storage := controller.Storage{
		Tenants: kind("tenants", f.Tenants), Namespaces: kind("namespaces", f.Namespaces), Networks: kind("networks", f.Networks),
		FloatingIPs: kind("floatingips", f.FloatingIPs), LoadBalancers: kind("loadbalancers", f.LoadBalancers),
		VRFPeerings: kind("vrfpeerings", f.VRFPeerings), ProviderServices: kind("providerservices", f.ProviderServices),
		HostClaims: kind("hostclaims", f.HostClaims), HostClasses: kind("hostclasses", f.HostClasses),
	}
	f.Metadata = metadatafake.NewSimpleMetadataClient(metadatafake.NewTestScheme())
	host := controller.HostClients{Kube: f.Kube, Dynamic: f.Dynamic, UDN: f.UDN, EgressIP: f.EgressIP, RA: f.RA, Metadata: f.Metadata}
	for _, w := range with {
		w(&host, f)
	}
	src := controller.NewSources(storage, host, controller.Namespaces{MetalLB: "metallb-system", FRR: "frr-k8s-system"})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	hostInformers := []cache.SharedIndexInformer{src.HostNamespaces, src.HostRoleBindings, src.HostServices, src.HostCUDNs, src.HostEgressIPs,
		src.HostRouteAdvertisements, src.HostFRRConfigurations, src.HostBGPSessionStates, src.HostClusterNetworkConnects, src.HostTargetPods, src.HostLauncherPods,
		src.HostResourceQuotas, src.HostLimitRanges, src.HostNetworkAttachments, src.HostPriorityClasses, src.HostFlowSchemas}
	for _, inf := range hostInformers {
		go inf.RunWithContext(ctx)
	}
	for _, inf := range hostInformers {
		if !cache.WaitFor(ctx, "", inf.HasSyncedChecker()) {
			t.Fatal("host informers did not sync")
		}
	}
	return src, f
}

// jsonPatchTestFailures answers a JSON patch of a pod whose "test"
// operation fails as kube-apiserver does, 422 Unprocessable Entity (the
// fake's own answer is a plain error); other patches go to the fake.
func jsonPatchTestFailures(client *kubefake.Clientset) clienttesting.ReactionFunc {
	return func(a clienttesting.Action) (bool, runtime.Object, error) {
		p, ok := a.(clienttesting.PatchAction)
		if !ok || p.GetPatchType() != types.JSONPatchType {
			return false, nil, nil
		}
		obj, err := client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), p.GetNamespace(), p.GetName())
		if err != nil {
			return true, nil, err
		}
		current, err := json.Marshal(obj)
		if err != nil {
			return true, nil, err
		}
		patch, err := jsonpatch.DecodePatch(p.GetPatch())
		if err != nil {
			return true, nil, apierrors.NewBadRequest(err.Error())
		}
		if _, err := patch.Apply(current); err != nil {
			return true, nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "patch", schema.GroupResource{Resource: "pods"}, p.GetName(), err.Error(), 0, false)
		}
		return false, nil, nil
	}
}

// Cache puts obj, a tenant object of tenant t in tenant Namespace ns,
// into informer as the storage informers hold it (provider kinds, a
// Tenant or a VRFPeering, as they are).
func Cache(t testing.TB, informer cache.SharedIndexInformer, tn, ns string, obj runtime.Object) {
	t.Helper()
	o := obj.DeepCopyObject()
	m, _ := meta.Accessor(o)
	switch o.(type) {
	case *tenant.Tenant, *tenant.VRFPeering, *tenant.ProviderService:
	default:
		m.SetNamespace(controller.CacheNamespace(tn, ns))
	}
	if err := informer.GetStore().Add(o); err != nil {
		t.Fatal(err)
	}
}

// Uncache removes the object of tenant t named ns/name from informer.
func Uncache(t *testing.T, informer cache.SharedIndexInformer, tn, ns, name string) {
	t.Helper()
	obj, exists, err := informer.GetStore().GetByKey(controller.ObjectKey(tn, ns, name))
	if err != nil || !exists {
		t.Fatalf("%s is not cached: %v", controller.ObjectKey(tn, ns, name), err)
	}
	if err := informer.GetStore().Delete(obj); err != nil {
		t.Fatal(err)
	}
}

// Eventually polls cond for a few seconds (informers catching up with
// fake clients), and fails with what if it never holds.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Onboard stores Tenant tn and caches it with its tenant Namespace ns, as
// the storage informers would hold them.
func Onboard(t *testing.T, src *controller.Sources, f *Fakes, tn *tenant.Tenant, ns *tenant.Namespace) {
	t.Helper()
	f.Tenants.Put("", "", tn)
	Cache(t, src.Tenants, tn.Name, "", tn)
	Cache(t, src.Namespaces, tn.Name, "", ns)
}

// MakeHostNamespace makes the host namespace of tenant Namespace ns of tn,
// owned as the syncer makes it, waits until the informer has it, and
// returns its name.
func MakeHostNamespace(t testing.TB, src *controller.Sources, f *Fakes, tn *tenant.Tenant, ns *tenant.Namespace) string {
	t.Helper()
	name := hostnames.Namespace(tn.Name, tn.UID, ns.Name)
	marks := hostnames.Marks{Tenant: tn.Name, TenantUID: tn.UID, KindLabel: hostnames.NamespaceLabel, Name: ns.Name, OwnerUID: ns.UID}
	host := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: marks.Labels(), Annotations: marks.Annotations()}}
	if _, err := f.Kube.CoreV1().Namespaces().Create(context.Background(), host, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, "the informer has the host namespace", func() bool {
		_, exists, _ := src.HostNamespaces.GetStore().GetByKey(name)
		return exists
	})
	return name
}

// Render has OVN-Kubernetes' rendering of host network cudn into host
// namespace hostNS appear, as the attachments' informer sees it.
func Render(t testing.TB, f *Fakes, hostNS, cudn string) {
	t.Helper()
	nad := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "k8s.cni.cncf.io/v1", Kind: "NetworkAttachmentDefinition"},
		ObjectMeta: metav1.ObjectMeta{Namespace: hostNS, Name: cudn, Labels: map[string]string{hostnames.UDNRenderedLabel: ""}},
	}
	nads := f.Metadata.Resource(controller.NetworkAttachmentDefinitions).Namespace(hostNS).(metadatafake.MetadataClient)
	if _, err := nads.CreateFake(nad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
