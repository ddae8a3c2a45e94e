package syncer

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	cncv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/clusternetworkconnect/v1"
	udnclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1/apis/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// servicesShared says whether n's ServicesShared condition has status and
// reason (any reason when reason is empty) for n's generation.
func servicesShared(status metav1.ConditionStatus, reason string) func(*tenantv1alpha1.Network) bool {
	return func(n *tenantv1alpha1.Network) bool {
		c := meta.FindStatusCondition(n.Status.Conditions, tenantv1alpha1.ConditionServicesShared)
		return c != nil && c.Status == status && (reason == "" || c.Reason == reason) && c.ObservedGeneration == n.Generation
	}
}

// noServicesShared says whether n, synced, has no ServicesShared condition.
func noServicesShared(n *tenantv1alpha1.Network) bool {
	return networkSynced(n) && meta.FindStatusCondition(n.Status.Conditions, tenantv1alpha1.ConditionServicesShared) == nil
}

// serviceNetworkConnect returns the ClusterNetworkConnect of the service
// network of the tenant of UID uid, or nil when there is none.
func serviceNetworkConnect(ctx context.Context, t *testing.T, dyn dynamic.Interface, uid types.UID) *cncv1.ClusterNetworkConnect {
	t.Helper()
	u, err := dyn.Resource(cncGVR).Get(ctx, hostnames.ServiceNetworkConnect(uid), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var cnc cncv1.ClusterNetworkConnect
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cnc); err != nil {
		t.Fatal(err)
	}
	return &cnc
}

// selectedCUDNs returns, sorted, the host's ClusterUserDefinedNetworks
// that cnc's selectors select.
func selectedCUDNs(ctx context.Context, t *testing.T, udn udnclientset.Interface, cnc *cncv1.ClusterNetworkConnect) []string {
	t.Helper()
	cudns, err := udn.K8sV1().ClusterUserDefinedNetworks().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, sel := range cnc.Spec.NetworkSelectors {
		if sel.ClusterUserDefinedNetworkSelector == nil {
			t.Fatalf("ClusterNetworkConnect %s selects %s networks", cnc.Name, sel.NetworkSelectionType)
		}
		s, err := metav1.LabelSelectorAsSelector(&sel.ClusterUserDefinedNetworkSelector.NetworkSelector)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range cudns.Items {
			if s.Matches(labels.Set(n.Labels)) {
				out = append(out, n.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

func hostNetworksOf(tn *tenantv1alpha1.Tenant, networks ...string) []string {
	var out []string
	for _, n := range networks {
		out = append(out, hostnames.ClusterUserDefinedNetwork(tn.UID, n))
	}
	sort.Strings(out)
	return out
}

// connectsAllocated is how many connect subnets the ConnectSubnets pool
// of the stack has handed out, as its status says.
// settledConnectsAllocated returns the ConnectSubnets pool's allocated
// count once it has held still for three IPAM periods. The count is the
// IPAM upkeep's, written once per period: read just after an allocation or
// release it may not show it yet, and an exact comparison against it would
// wait for a number that never comes.
func settledConnectsAllocated(ctx context.Context, t *testing.T, admin clientset.Interface) int64 {
	t.Helper()
	var last int64 = -1
	var since time.Time
	eventually(ctx, t, slowTimeout, "the connects pool's allocated count settles", func(ctx context.Context) (bool, string) {
		n, err := connectsAllocated(ctx, admin)
		if err != nil {
			return false, err.Error()
		}
		if n != last {
			last, since = n, time.Now()
		}
		return time.Since(since) >= 3*framework.IPAMPeriod, fmt.Sprintf("allocated %d since %s", n, since.Format(time.StampMilli))
	})
	return last
}

func connectsAllocated(ctx context.Context, admin clientset.Interface) (int64, error) {
	p, err := admin.TenantV1alpha1().AddressPools().Get(ctx, "connects", metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	return p.Status.Allocated, nil
}

// TestServiceNetworks has two tenants share their Networks' Services
// through the real stack: a tenant's one Shared network connects nothing;
// two make one ClusterNetworkConnect (accepted by the real CRD and by
// OVN-Kubernetes' cluster-manager) with ServiceNetwork connectivity only,
// a connect subnet of the ConnectSubnets pool, selecting exactly the
// tenant's two Shared networks, and never the other tenant's, which
// shares too; a network on no Namespace is not reported connected until
// it has one (cluster-manager finds networks through their renderings);
// cluster-manager's refusal reaches the Networks; a network set back to
// Private takes the connection down and its subnet back; the Tenant's
// delete removes its connection; invalid modes are 422. Cluster-manager
// runs in the stack: every report on the connection is its own.
func TestServiceNetworks(t *testing.T) {
	ctx := framework.Context(t, 8*slowTimeout)
	nameA, nameB := uniqueName(t)+"a", uniqueName(t)+"b"
	tnA := onboard(ctx, t, tenantSpec{name: nameA, users: []string{shareUserA}, prefixLength: 22})
	tnB := onboard(ctx, t, tenantSpec{name: nameB, users: []string{shareUserB}, prefixLength: 22})
	admin := tenantClient(t, stack.AdminUser)
	memberA, memberB := tenantClient(t, shareUserA), tenantClient(t, shareUserB)
	host, dyn := hostClients(t)
	udn, err := udnclientset.NewForConfig(theStack().RESTConfig(stack.AdminUser))
	if err != nil {
		t.Fatal(err)
	}
	waitNetwork(ctx, t, memberA, "default", "synced", networkSynced)
	waitNetwork(ctx, t, memberB, "default", "synced", networkSynced)
	checkInvariant := func(t *testing.T) {
		t.Helper()
		if p := connectInvariant(ctx, t, dyn, udn); len(p) > 0 {
			t.Fatalf("never two tenants in one connection: %v", p)
		}
	}
	share := func(user, network string, mode tenantv1alpha1.ServiceNetworkMode) {
		t.Helper()
		kubectl(ctx, t, user, "patch", "networks.tenant.io", network, "--type=merge", "-p", fmt.Sprintf(`{"spec":{"serviceNetwork":%q}}`, mode))
	}
	createShared := func(cs clientset.Interface, name string) {
		t.Helper()
		if _, err := cs.TenantV1alpha1().Networks().Create(ctx, &tenantv1alpha1.Network{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       tenantv1alpha1.NetworkSpec{ServiceNetwork: tenantv1alpha1.ServiceNetworkShared},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// attach puts a tenant Namespace on network: OVN-Kubernetes finds
	// (and connects) a network through its renderings into namespaces.
	attach := func(cs clientset.Interface, ns, network string) {
		t.Helper()
		obj := namespaceObject(ns)
		obj.Spec.Network = network
		if _, err := cs.TenantV1alpha1().Namespaces().Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitNamespace(ctx, t, cs, ns, syncTimeout, "Ready", func(n *tenantv1alpha1.Namespace) bool {
			return conditionTrue(n.Status.Conditions, tenantv1alpha1.ConditionReady)
		})
	}
	// blockSize is how many addresses connect subnet cidr holds.
	blockSize := func(cidr string) int64 {
		t.Helper()
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			t.Fatal(err)
		}
		return 1 << (32 - p.Bits())
	}
	waitConnectGone := func(uid types.UID) {
		t.Helper()
		eventually(ctx, t, syncTimeout, "ClusterNetworkConnect "+hostnames.ServiceNetworkConnect(uid)+" gone", func(ctx context.Context) (bool, string) {
			cnc := serviceNetworkConnect(ctx, t, dyn, uid)
			return cnc == nil, fmt.Sprintf("%+v", cnc)
		})
	}

	t.Run("an invalid mode is a 422", func(t *testing.T) {
		_, err := memberA.TenantV1alpha1().Networks().Create(ctx, &tenantv1alpha1.Network{
			ObjectMeta: metav1.ObjectMeta{Name: "bad"},
			Spec:       tenantv1alpha1.NetworkSpec{ServiceNetwork: "Public"},
		}, metav1.CreateOptions{})
		st := apiStatus(t, "a Network with serviceNetwork Public", err)
		if st.Code != 422 || !slices.Contains(causeFields(st), "spec.serviceNetwork") || !strings.Contains(st.Message, `"Shared"`) {
			t.Fatalf("got %d %v %q, want 422 on spec.serviceNetwork naming the supported values", st.Code, causeFields(st), st.Message)
		}
		if _, err := memberA.TenantV1alpha1().Networks().Get(ctx, "bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("the refused Network was stored: %v", err)
		}
		_, stderr, err := theStack().Kubectl(ctx, shareUserA, "patch", "networks.tenant.io", "default", "--type=merge", "-p", `{"spec":{"serviceNetwork":"shared"}}`)
		if err == nil || !strings.Contains(stderr, "spec.serviceNetwork") || !strings.Contains(stderr, "Unsupported value") {
			t.Fatalf("patching serviceNetwork to \"shared\": %v %s, want a 422 on spec.serviceNetwork", err, stderr)
		}
		out := kubectl(ctx, t, shareUserA, "explain", "networks.tenant.io.spec.serviceNetwork")
		if !strings.Contains(out, "Shared") || !strings.Contains(out, "Private") {
			t.Fatalf("kubectl explain does not describe serviceNetwork:\n%s", out)
		}
	})

	t.Run("one Shared network connects nothing", func(t *testing.T) {
		createShared(memberA, "blue")
		blue := waitNetwork(ctx, t, memberA, "blue", "ServicesShared False, NoOtherSharedNetwork", servicesShared(metav1.ConditionFalse, "NoOtherSharedNetwork"))
		if blue.Spec.ServiceNetwork != tenantv1alpha1.ServiceNetworkShared {
			t.Fatalf("spec.serviceNetwork %q", blue.Spec.ServiceNetwork)
		}
		def := waitNetwork(ctx, t, memberA, "default", "synced, without ServicesShared", noServicesShared)
		if def.Spec.ServiceNetwork != tenantv1alpha1.ServiceNetworkPrivate {
			t.Fatalf("the default Network's serviceNetwork is %q, want Private by default", def.Spec.ServiceNetwork)
		}
		if cnc := serviceNetworkConnect(ctx, t, dyn, tnA.UID); cnc != nil {
			t.Fatalf("a connection for one Shared network: %+v", cnc)
		}
	})

	var subnetA string
	t.Run("two Shared networks share one service network", func(t *testing.T) {
		share(shareUserA, "default", tenantv1alpha1.ServiceNetworkShared)
		// Blue is on no namespace: OVN-Kubernetes cannot connect it yet,
		// so neither network has another to share Services with.
		waitNetwork(ctx, t, memberA, "blue", "ServicesShared False, NoNamespaces", servicesShared(metav1.ConditionFalse, "NoNamespaces"))
		waitNetwork(ctx, t, memberA, "default", "ServicesShared False, NoOtherSharedNetwork", servicesShared(metav1.ConditionFalse, "NoOtherSharedNetwork"))
		if serviceNetworkConnect(ctx, t, dyn, tnA.UID) == nil {
			t.Fatal("no ClusterNetworkConnect for two Shared networks")
		}
		attach(memberA, "dev", "blue")
		for _, n := range []string{"default", "blue"} {
			got := waitNetwork(ctx, t, memberA, n, "ServicesShared True", servicesShared(metav1.ConditionTrue, "Connected"))
			c := meta.FindStatusCondition(got.Status.Conditions, tenantv1alpha1.ConditionServicesShared)
			if !strings.Contains(c.Message, hostnames.ServiceNetworkConnect(tnA.UID)) || !strings.Contains(c.Message, "accepted by OVN-Kubernetes") {
				t.Fatalf("%s: ServicesShared message %q", n, c.Message)
			}
		}
		cnc := serviceNetworkConnect(ctx, t, dyn, tnA.UID)
		if cnc == nil {
			t.Fatal("no ClusterNetworkConnect")
		}
		if got, want := selectedCUDNs(ctx, t, udn, cnc), hostNetworksOf(tnA, "default", "blue"); !slices.Equal(got, want) {
			t.Fatalf("the connection selects %v, want exactly the tenant's Shared networks %v", got, want)
		}
		if !slices.Equal(cnc.Spec.Connectivity, []cncv1.ConnectivityType{cncv1.ServiceNetwork}) {
			t.Fatalf("connectivity %v, want ServiceNetwork only", cnc.Spec.Connectivity)
		}
		if len(cnc.Spec.ConnectSubnets) != 1 || !strings.HasPrefix(string(cnc.Spec.ConnectSubnets[0].CIDR), "100.7") || cnc.Spec.ConnectSubnets[0].NetworkPrefix != 28 {
			t.Fatalf("connectSubnets %+v, want one /24 of the ConnectSubnets pool with /28 slices", cnc.Spec.ConnectSubnets)
		}
		subnetA = string(cnc.Spec.ConnectSubnets[0].CIDR)
		if cnc.Labels[hostnames.TenantLabel] != nameA || cnc.Annotations[hostnames.OwnerUIDAnnotation] != string(tnA.UID) ||
			cnc.Annotations[hostnames.TenantUIDAnnotation] != string(tnA.UID) || cnc.Labels[hostnames.ConnectLabel] != "" {
			t.Fatalf("marks: labels %v annotations %v", cnc.Labels, cnc.Annotations)
		}
		if c := meta.FindStatusCondition(cnc.Status.Conditions, "Accepted"); c == nil || c.Status != metav1.ConditionTrue {
			t.Fatalf("cluster-manager's report: %s", describeConditions(cnc.Status.Conditions))
		}
		// The tenant sees the mode in the wide table and selects by it.
		out := kubectl(ctx, t, shareUserA, "get", "networks.tenant.io", "-o", "wide")
		if !strings.Contains(out, "SERVICES") || strings.Count(out, "Shared") != 2 {
			t.Fatalf("kubectl get networks -o wide:\n%s", out)
		}
		out = kubectl(ctx, t, shareUserA, "get", "networks.tenant.io", "--field-selector", "spec.serviceNetwork=Shared", "-o", "name")
		if got := strings.Fields(out); !slices.Equal(got, []string{"network.tenant.io/blue", "network.tenant.io/default"}) {
			t.Fatalf("Shared networks by field selector: %v", got)
		}
		checkInvariant(t)
	})

	t.Run("another tenant's Shared networks are never selected", func(t *testing.T) {
		share(shareUserB, "default", tenantv1alpha1.ServiceNetworkShared)
		createShared(memberB, "blue")
		attach(memberB, "dev", "blue")
		for _, n := range []string{"default", "blue"} {
			waitNetwork(ctx, t, memberB, n, "ServicesShared True", servicesShared(metav1.ConditionTrue, "Connected"))
		}
		b := serviceNetworkConnect(ctx, t, dyn, tnB.UID)
		a := serviceNetworkConnect(ctx, t, dyn, tnA.UID)
		if a == nil || b == nil || a.Name == b.Name {
			t.Fatalf("connections %+v and %+v", a, b)
		}
		if got, want := selectedCUDNs(ctx, t, udn, b), hostNetworksOf(tnB, "default", "blue"); !slices.Equal(got, want) {
			t.Fatalf("B's connection selects %v, want %v", got, want)
		}
		if got, want := selectedCUDNs(ctx, t, udn, a), hostNetworksOf(tnA, "default", "blue"); !slices.Equal(got, want) {
			t.Fatalf("with B sharing, A's connection selects %v, want %v", got, want)
		}
		if a.Spec.ConnectSubnets[0].CIDR == b.Spec.ConnectSubnets[0].CIDR {
			t.Fatalf("A and B share connect subnet %s", a.Spec.ConnectSubnets[0].CIDR)
		}
		checkInvariant(t)
	})

	t.Run("OVN-Kubernetes' refusal reaches the Networks", func(t *testing.T) {
		// The provider (not a tenant: the guard policies refuse tenants
		// any ClusterUserDefinedNetwork) puts a network of its own in A's
		// service network, over the subnet of A's network default:
		// cluster-manager refuses the connection (the networks it connects
		// may not overlap), and A's networks say why; once it is gone,
		// the connection is accepted again.
		def := waitNetwork(ctx, t, memberA, "default", "synced", networkSynced)
		rogue := "rogue-" + randomHex(t, 4)
		if _, err := host.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: rogue, Labels: map[string]string{"provider-network": rogue, hostnames.PrimaryUDNLabel: ""}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = host.CoreV1().Namespaces().Delete(context.Background(), rogue, metav1.DeleteOptions{}) })
		cudn := providerCUDN(rogue, rogue, def.Status.Subnets[0])
		cudn.Labels = map[string]string{hostnames.TenantLabel: nameA, hostnames.ServiceNetworkLabel: hostnames.ServiceNetworkConnect(tnA.UID)}
		if _, err := udn.K8sV1().ClusterUserDefinedNetworks().Create(ctx, cudn, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = udn.K8sV1().ClusterUserDefinedNetworks().Delete(context.Background(), rogue, metav1.DeleteOptions{})
		})
		got := waitNetwork(ctx, t, memberA, "default", "ServicesShared False, ConnectFailed", servicesShared(metav1.ConditionFalse, "ConnectFailed"))
		if c := meta.FindStatusCondition(got.Status.Conditions, tenantv1alpha1.ConditionServicesShared); !strings.Contains(c.Message, "overlap") {
			t.Fatalf("ServicesShared message %q does not say why", c.Message)
		}
		waitNetwork(ctx, t, memberB, "default", "still connected", servicesShared(metav1.ConditionTrue, "Connected"))
		if err := udn.K8sV1().ClusterUserDefinedNetworks().Delete(ctx, rogue, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := host.CoreV1().Namespaces().Delete(ctx, rogue, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"default", "blue"} {
			waitNetwork(ctx, t, memberA, n, "connected again", servicesShared(metav1.ConditionTrue, "Connected"))
		}
	})

	t.Run("back to Private removes the connection", func(t *testing.T) {
		before := settledConnectsAllocated(ctx, t, admin)
		share(shareUserA, "blue", tenantv1alpha1.ServiceNetworkPrivate)
		waitConnectGone(tnA.UID)
		waitNetwork(ctx, t, memberA, "default", "ServicesShared False, NoOtherSharedNetwork", servicesShared(metav1.ConditionFalse, "NoOtherSharedNetwork"))
		waitNetwork(ctx, t, memberA, "blue", "synced, without ServicesShared", noServicesShared)
		cudn, err := udn.K8sV1().ClusterUserDefinedNetworks().Get(ctx, hostnames.ClusterUserDefinedNetwork(tnA.UID, "blue"), metav1.GetOptions{})
		if err != nil || cudn.Labels[hostnames.ServiceNetworkLabel] != "" {
			t.Fatalf("the Private network's host network: labels %v (%v)", cudn.Labels, err)
		}
		// A's connect subnet is given back; B keeps its own.
		eventually(ctx, t, slowTimeout, "A's connect subnet "+subnetA+" given back", func(ctx context.Context) (bool, string) {
			n, err := connectsAllocated(ctx, admin)
			if err != nil {
				return false, err.Error()
			}
			return n == before-blockSize(subnetA), fmt.Sprintf("allocated %d, was %d", n, before)
		})
		if b := serviceNetworkConnect(ctx, t, dyn, tnB.UID); b == nil {
			t.Fatal("B's connection went with A's")
		}
		checkInvariant(t)
	})

	t.Run("the Tenant's delete removes its connection", func(t *testing.T) {
		before := settledConnectsAllocated(ctx, t, admin)
		b := serviceNetworkConnect(ctx, t, dyn, tnB.UID)
		if b == nil {
			t.Fatal("tenant B has no connection to remove")
		}
		subnetB := string(b.Spec.ConnectSubnets[0].CIDR)
		offboardAtEnd(t, nameB)
		if _, err := admin.TenantV1alpha1().Tenants().Get(ctx, nameB, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("tenant B is not gone: %v", err)
		}
		// Offboarding waits for every host object of the Tenant: the
		// connection is gone by the time the Tenant is.
		if cnc := serviceNetworkConnect(ctx, t, dyn, tnB.UID); cnc != nil && cnc.DeletionTimestamp == nil {
			t.Fatalf("tenant B is gone, its connection is not: %+v", cnc.ObjectMeta)
		}
		waitConnectGone(tnB.UID)
		eventually(ctx, t, slowTimeout, "B's connect subnet given back", func(ctx context.Context) (bool, string) {
			n, err := connectsAllocated(ctx, admin)
			if err != nil {
				return false, err.Error()
			}
			return n == before-blockSize(subnetB), fmt.Sprintf("allocated %d, was %d", n, before)
		})
		checkInvariant(t)
	})
}
