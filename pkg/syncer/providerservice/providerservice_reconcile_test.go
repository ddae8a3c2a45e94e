package providerservice

import (
	"context"
	"errors"
	"testing"
	"time"

	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// TestReconcileProviderService drives the controller over fakes: the
// offer is resolved to its provider network (which gets its connection
// group), the tenant's reconcile makes its ClusterNetworkConnect and
// alias, the status reports it connected, and a withdrawal removes both
// and gives the subnet back.
func TestReconcileProviderService(t *testing.T) {
	src, fakes := controllertest.NewSources(t)
	subnets := controllertest.NewSubnets()
	src.Storage.ConnectSubnets = subnets
	c, err := New(src, hostkinds.New(src), "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"}}
	ns := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "ns-uid", Labels: map[string]string{hostnames.TenantLabel: "acme"}}}
	controllertest.Onboard(t, src, fakes, tn, ns)
	hostNS := controllertest.MakeHostNamespace(t, src, fakes, tn, ns)
	ns.Status.HostNamespace = hostNS
	controllertest.Cache(t, src.Namespaces, "acme", "", ns)
	fakes.Namespaces.Put("acme", "", ns)
	controllertest.Cache(t, src.Networks, "acme", "", &tenant.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "net-uid", Labels: map[string]string{hostnames.TenantLabel: "acme"}},
		Status:     tenant.NetworkStatus{HostNetwork: hostnames.ClusterUserDefinedNetwork(tn.UID, "default")},
	})

	// The provider's Service on its network.
	if _, err := fakes.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: "infra", Labels: map[string]string{"net": "infra"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fakes.Kube.CoreV1().Services("infra").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "resolver", Namespace: "infra"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fakes.UDN.K8sV1().ClusterUserDefinedNetworks().Create(ctx, &udnv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: "infra"},
		Spec: udnv1.ClusterUserDefinedNetworkSpec{NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"net": "infra"}},
			Network: udnv1.NetworkSpec{Topology: udnv1.NetworkTopologyLayer2, Layer2: &udnv1.Layer2Config{Role: udnv1.NetworkRolePrimary}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	ps := &tenant.ProviderService{
		ObjectMeta: metav1.ObjectMeta{Name: "dns", UID: "ps-uid", Generation: 1},
		Spec:       tenant.ProviderServiceSpec{Service: tenant.ServiceReference{Namespace: "infra", Name: "resolver"}, Alias: "resolver", Tenants: []string{"acme"}},
		Status:     tenant.ProviderServiceStatus{Offers: []tenant.ProviderServiceOffer{{Tenant: "acme", UID: tn.UID}}},
	}
	fakes.ProviderServices.Put("", "", ps)
	controllertest.Cache(t, src.ProviderServices, "", "", ps)
	reconcile := func(key queue.Key) {
		t.Helper()
		var requeue *controller.RequeueError
		if err := c.reconcile(ctx, key); err != nil && !errors.As(err, &requeue) {
			t.Fatalf("reconcile %s: %v", key, err)
		}
	}
	stored := func() *tenant.ProviderService {
		return fakes.ProviderServices.Stored("", "", "dns").(*tenant.ProviderService)
	}

	reconcile(queue.Key{Name: "dns"})
	if got := stored(); got.Status.ProviderNetwork != "infra" {
		t.Fatalf("provider network %q, conditions %+v", got.Status.ProviderNetwork, got.Status.Conditions)
	}
	cudn, _ := fakes.UDN.K8sV1().ClusterUserDefinedNetworks().Get(ctx, "infra", metav1.GetOptions{})
	if cudn.Labels[hostnames.ConnectGroupLabel] != hostnames.ProviderConnectGroup("infra") {
		t.Fatalf("provider network labels %v", cudn.Labels)
	}

	reconcile(queue.Key{Tenant: "acme"})
	name := hostnames.ClusterNetworkConnect(tn.UID, "infra")
	u, err := fakes.Dynamic.Resource(controller.ClusterNetworkConnects).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ClusterNetworkConnect: %v", err)
	}
	values, _, _ := unstructured.NestedSlice(u.Object, "spec", "networkSelectors")
	if len(values) != 1 {
		t.Fatalf("networkSelectors %v", values)
	}
	subnet, _, _ := unstructured.NestedSlice(u.Object, "spec", "connectSubnets")
	if cidr, _ := subnet[0].(map[string]interface{})["cidr"].(string); cidr != "100.72.0.0/24" {
		t.Fatalf("connectSubnets %v", subnet)
	}
	alias, err := fakes.Kube.CoreV1().Services(hostNS).Get(ctx, "resolver", metav1.GetOptions{})
	if err != nil || alias.Spec.ExternalName != "resolver.infra.svc.cluster.local" {
		t.Fatalf("alias %+v (%v)", alias, err)
	}
	controllertest.Eventually(t, "the connect and alias cached", func() bool {
		_, a, _ := src.HostClusterNetworkConnects.GetStore().GetByKey(name)
		_, b, _ := src.HostServices.GetStore().GetByKey(hostNS + "/resolver")
		return a && b
	})
	reconcile(queue.Key{Tenant: "acme"})
	reconcile(queue.Key{Name: "dns"})
	if got := stored(); len(got.Status.Tenants) != 1 || !got.Status.Tenants[0].Connected || got.Status.Tenants[0].Aliases != 1 || got.Status.Tenants[0].Reason != "" {
		t.Fatalf("status.tenants %+v", got.Status.Tenants)
	}

	// Withdrawn.
	ps = stored().DeepCopy()
	ps.Spec.Tenants, ps.Status.Offers, ps.Generation = nil, nil, 2
	fakes.ProviderServices.Put("", "", ps)
	controllertest.Cache(t, src.ProviderServices, "", "", ps)
	reconcile(queue.Key{Name: "dns"})
	reconcile(queue.Key{Tenant: "acme"})
	if _, err := fakes.Dynamic.Resource(controller.ClusterNetworkConnects).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the connect outlived the withdrawal: %v", err)
	}
	if _, err := fakes.Kube.CoreV1().Services(hostNS).Get(ctx, "resolver", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the alias outlived the withdrawal: %v", err)
	}
	controllertest.Eventually(t, "the connect gone from the cache", func() bool {
		_, a, _ := src.HostClusterNetworkConnects.GetStore().GetByKey(name)
		return !a
	})
	reconcile(queue.Key{Tenant: "acme"})
	if n := subnets.Holds(string(tn.UID)); n != 0 {
		t.Fatalf("the connect subnet was not given back: the tenant holds %d", n)
	}
	reconcile(queue.Key{Name: "dns"})
	if got := stored(); len(got.Status.Tenants) != 0 {
		t.Fatalf("status.tenants after the withdrawal: %+v", got.Status.Tenants)
	}
	// Offered to nobody: the provider network leaves the connection group.
	cudn, _ = fakes.UDN.K8sV1().ClusterUserDefinedNetworks().Get(ctx, "infra", metav1.GetOptions{})
	if _, ok := cudn.Labels[hostnames.ConnectGroupLabel]; ok {
		t.Errorf("provider network labels after the last offer was withdrawn: %v", cudn.Labels)
	}
	// The ProviderService goes: so does the watch of its Service.
	if n := c.provider.watchedServices(); n != 1 {
		t.Errorf("%d Services watched, want the offered one", n)
	}
	last := stored()
	fakes.ProviderServices.Remove("", "", "dns")
	if err := src.ProviderServices.GetStore().Delete(last); err != nil {
		t.Fatal(err)
	}
	reconcile(queue.Key{Name: "dns"})
	if n := c.provider.watchedServices(); n != 0 {
		t.Errorf("%d Services watched after the ProviderService was deleted, want none", n)
	}
}

// TestProviderServiceFollowsItsService: a ProviderService is resolved
// again when its Service or a provider network changes (watched), not on a
// timer; the timer is a slow backstop for the namespace's labels.
func TestProviderServiceFollowsItsService(t *testing.T) {
	src, fakes := controllertest.NewSources(t)
	c, err := New(src, hostkinds.New(src), "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := fakes.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "infra"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ps := &tenant.ProviderService{
		ObjectMeta: metav1.ObjectMeta{Name: "dns", UID: "ps-uid", Generation: 1},
		Spec:       tenant.ProviderServiceSpec{Service: tenant.ServiceReference{Namespace: "infra", Name: "resolver"}, Tenants: []string{"acme"}},
	}
	fakes.ProviderServices.Put("", "", ps)
	controllertest.Cache(t, src.ProviderServices, "", "", ps)
	err = c.reconcile(ctx, queue.Key{Name: "dns"})
	var requeue *controller.RequeueError
	if !errors.As(err, &requeue) || requeue.After != Resync || Resync < time.Minute {
		t.Fatalf("reconcile: %v, want a requeue after the backstop %s (at least a minute)", err, Resync)
	}
	if got := fakes.ProviderServices.Stored("", "", "dns").(*tenant.ProviderService); !hasReason(got.Status.Conditions, ReasonServiceNotFound) {
		t.Fatalf("conditions %+v, want %s", got.Status.Conditions, ReasonServiceNotFound)
	}
	c.Queue.Release()
	drain := func() {
		for c.Queue.Len() > 0 {
			k, _ := c.Queue.Get()
			c.Queue.Done(k)
		}
	}
	drain()
	// The provider creates the Service: the ProviderService is queued.
	if _, err := fakes.Kube.CoreV1().Services("infra").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "resolver", Namespace: "infra"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the ProviderService queued by its Service's creation", func() bool { return c.Queue.Len() > 0 })
	if k, _ := c.Queue.Get(); k != (queue.Key{Name: "dns"}) {
		t.Errorf("queued %v, want the ProviderService", k)
	}
}

func hasReason(conds []metav1.Condition, reason string) bool {
	for _, c := range conds {
		if c.Reason == reason {
			return true
		}
	}
	return false
}
