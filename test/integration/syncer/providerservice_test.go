package syncer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	cncv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/clusternetworkconnect/v1"
	udnclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1/apis/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

var cncGVR = schema.GroupVersionResource{Group: "k8s.ovn.org", Version: "v1", Resource: "clusternetworkconnects"}

func waitOffer(ctx context.Context, t *testing.T, cs clientset.Interface, name, what string, ok func(*tenantv1alpha1.ProviderService) bool) *tenantv1alpha1.ProviderService {
	t.Helper()
	var ps *tenantv1alpha1.ProviderService
	eventually(ctx, t, slowTimeout, "ProviderService "+name+" "+what, func(ctx context.Context) (bool, string) {
		got, err := cs.TenantV1alpha1().ProviderServices().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ps = got
		return ok(got), fmt.Sprintf("network %q tenants %+v %s", got.Status.ProviderNetwork, got.Status.Tenants, describeConditions(got.Status.Conditions))
	})
	return ps
}

func offerEntry(ps *tenantv1alpha1.ProviderService, t string) (tenantv1alpha1.ProviderServiceTenant, bool) {
	for _, e := range ps.Status.Tenants {
		if e.Name == t {
			return e, true
		}
	}
	return tenantv1alpha1.ProviderServiceTenant{}, false
}

func served(t string) func(*tenantv1alpha1.ProviderService) bool {
	return func(ps *tenantv1alpha1.ProviderService) bool {
		e, ok := offerEntry(ps, t)
		return ok && e.Connected && e.Aliases > 0 && e.Reason == "" && e.ConnectSubnet != ""
	}
}

// connectInvariant checks every ClusterNetworkConnect on the host: the
// CUDNs its selectors select, evaluated against the host's CUDNs, belong to
// one tenant at most. It returns the problems.
func connectInvariant(ctx context.Context, t *testing.T, dyn dynamic.Interface, udn udnclientset.Interface) []string {
	t.Helper()
	cncs, err := dyn.Resource(cncGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cudns, err := udn.K8sV1().ClusterUserDefinedNetworks().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for _, u := range cncs.Items {
		var cnc cncv1.ClusterNetworkConnect
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cnc); err != nil {
			t.Fatal(err)
		}
		tenants := map[string]bool{}
		for _, sel := range cnc.Spec.NetworkSelectors {
			if sel.ClusterUserDefinedNetworkSelector == nil {
				continue
			}
			s, err := metav1.LabelSelectorAsSelector(&sel.ClusterUserDefinedNetworkSelector.NetworkSelector)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", cnc.Name, err))
				continue
			}
			for _, n := range cudns.Items {
				if s.Matches(labels.Set(n.Labels)) {
					if tn := n.Labels[hostnames.TenantLabel]; tn != "" {
						tenants[tn] = true
					}
				}
			}
		}
		if len(tenants) > 1 {
			problems = append(problems, fmt.Sprintf("ClusterNetworkConnect %s selects the CUDNs of tenants %v", cnc.Name, tenants))
		}
	}
	return problems
}

// TestProviderServices offers a provider Service on a provider network to
// one tenant, then to all: each tenant offered it gets a
// ClusterNetworkConnect (accepted by the real CRD) selecting the provider
// network and its own networks only, and an ExternalName alias in its host
// namespaces; a tenant reads its own entry only; the alias follows the
// Service's ports; a tenant's own Service of the alias name is left alone
// and reported; withdrawal removes the tenant's objects and gives its
// connect subnet back; a Service that does not exist writes nothing.
func TestProviderServices(t *testing.T) {
	ctx := framework.Context(t, 8*slowTimeout)
	nameA, nameB := uniqueName(t)+"a", uniqueName(t)+"b"
	tnA := onboard(ctx, t, tenantSpec{name: nameA, users: []string{offerUserA}})
	tnB := onboard(ctx, t, tenantSpec{name: nameB, users: []string{offerUserB}})
	admin := tenantClient(t, stack.AdminUser)
	memberA, memberB := tenantClient(t, offerUserA), tenantClient(t, offerUserB)
	host, dyn := hostClients(t)
	udn, err := udnclientset.NewForConfig(theStack().RESTConfig(stack.AdminUser))
	if err != nil {
		t.Fatal(err)
	}
	waitNetwork(ctx, t, memberA, "default", "synced", networkSynced)
	waitNetwork(ctx, t, memberB, "default", "synced", networkSynced)
	hostNSA := waitNamespaceSynced(ctx, t, memberA, "default").Status.HostNamespace
	hostNSB := waitNamespaceSynced(ctx, t, memberB, "default").Status.HostNamespace

	// The provider's namespace, network and Service.
	suffix := randomHex(t, 4)
	infra := "infra-" + suffix
	pn := providerNetwork(ctx, t, host, udn, suffix, "192.168.240.0/24")
	svc, err := host.CoreV1().Services(infra).Get(ctx, "resolver", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	offerName := "dns-" + suffix
	offer := &tenantv1alpha1.ProviderService{
		ObjectMeta: metav1.ObjectMeta{Name: offerName},
		Spec: tenantv1alpha1.ProviderServiceSpec{
			Service: tenantv1alpha1.ServiceReference{Namespace: infra, Name: "resolver"},
			Alias:   "resolver", Tenants: []string{nameA},
		},
	}
	t.Cleanup(func() {
		for _, n := range []string{offerName, "ntp-" + suffix} {
			_ = admin.TenantV1alpha1().ProviderServices().Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})
	checkInvariant := func(t *testing.T) {
		t.Helper()
		if p := connectInvariant(ctx, t, dyn, udn); len(p) > 0 {
			t.Fatalf("never two tenants in one connection: %v", p)
		}
	}

	t.Run("a tenant that does not exist is a 422", func(t *testing.T) {
		bad := offer.DeepCopy()
		bad.Spec.Tenants = []string{nameA, "no-such-" + suffix}
		_, err := admin.TenantV1alpha1().ProviderServices().Create(ctx, bad, metav1.CreateOptions{})
		st := apiStatus(t, "offer to a missing tenant", err)
		if st.Code != 422 || !slices.Contains(causeFields(st), "spec.tenants[1]") {
			t.Fatalf("got %d %v, want 422 on spec.tenants[1]", st.Code, causeFields(st))
		}
		if _, err := admin.TenantV1alpha1().ProviderServices().Get(ctx, offerName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("the refused offer was stored: %v", err)
		}
	})

	var subnetA string
	t.Run("offered to one tenant", func(t *testing.T) {
		if _, err := admin.TenantV1alpha1().ProviderServices().Create(ctx, offer, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ps := waitOffer(ctx, t, admin, offerName, "serving tenant A", served(nameA))
		if ps.Status.ProviderNetwork != pn || !conditionTrue(ps.Status.Conditions, "Ready") {
			t.Fatalf("provider network %q, conditions %s", ps.Status.ProviderNetwork, describeConditions(ps.Status.Conditions))
		}
		if len(ps.Status.Offers) != 1 || ps.Status.Offers[0].UID != tnA.UID {
			t.Fatalf("offers %+v, want tenant A's UID %s", ps.Status.Offers, tnA.UID)
		}
		e, _ := offerEntry(ps, nameA)
		subnetA = e.ConnectSubnet
		if _, ok := offerEntry(ps, nameB); ok {
			t.Fatalf("tenant B has an entry: %+v", ps.Status.Tenants)
		}
		// The connection, as the real CRD accepted it.
		u, err := dyn.Resource(cncGVR).Get(ctx, hostnames.ClusterNetworkConnect(tnA.UID, pn), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var cnc cncv1.ClusterNetworkConnect
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cnc); err != nil {
			t.Fatal(err)
		}
		if len(cnc.Spec.ConnectSubnets) != 1 || string(cnc.Spec.ConnectSubnets[0].CIDR) != subnetA || cnc.Spec.ConnectSubnets[0].NetworkPrefix != 28 {
			t.Fatalf("connectSubnets %+v, want %s with /28 slices", cnc.Spec.ConnectSubnets, subnetA)
		}
		if !slices.Equal(cnc.Spec.Connectivity, []cncv1.ConnectivityType{cncv1.ServiceNetwork}) {
			t.Fatalf("connectivity %v, want ServiceNetwork only", cnc.Spec.Connectivity)
		}
		if !strings.HasPrefix(subnetA, "100.7") {
			t.Fatalf("connect subnet %s is not from the ConnectSubnets pool", subnetA)
		}
		cudn, err := udn.K8sV1().ClusterUserDefinedNetworks().Get(ctx, pn, metav1.GetOptions{})
		if err != nil || cudn.Labels[hostnames.ConnectGroupLabel] != hostnames.ProviderConnectGroup(pn) {
			t.Fatalf("provider network labels %v (%v)", cudn.Labels, err)
		}
		// The alias in A's namespace; none in B's.
		alias, err := host.CoreV1().Services(hostNSA).Get(ctx, "resolver", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("resolver.%s.svc.cluster.local", infra)
		if alias.Spec.Type != corev1.ServiceTypeExternalName || alias.Spec.ExternalName != want || len(alias.Spec.Ports) != 1 || alias.Spec.Ports[0].Port != 53 {
			t.Fatalf("alias %s %q ports %+v, want ExternalName %s port 53", alias.Spec.Type, alias.Spec.ExternalName, alias.Spec.Ports, want)
		}
		if _, err := host.CoreV1().Services(hostNSB).Get(ctx, "resolver", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("tenant B got an alias: %v", err)
		}
		if _, err := dyn.Resource(cncGVR).Get(ctx, hostnames.ClusterNetworkConnect(tnB.UID, pn), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("tenant B got a connection: %v", err)
		}
		checkInvariant(t)
	})

	t.Run("a tenant reads its own entry only", func(t *testing.T) {
		got, err := memberA.TenantV1alpha1().ProviderServices().Get(ctx, offerName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Spec.Tenants, []string{nameA}) || len(got.Status.Tenants) != 1 || got.Status.Tenants[0].Name != nameA || len(got.ManagedFields) > 0 {
			t.Fatalf("tenant A reads tenants %v, entries %+v, %d managed fields", got.Spec.Tenants, got.Status.Tenants, len(got.ManagedFields))
		}
		if _, err := memberB.TenantV1alpha1().ProviderServices().Get(ctx, offerName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("tenant B reads an offer it was not made: %v", err)
		}
	})

	t.Run("offered to all tenants", func(t *testing.T) {
		ps, err := admin.TenantV1alpha1().ProviderServices().Get(ctx, offerName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ps.Spec.Tenants, ps.Spec.AllTenants = nil, true
		if _, err := admin.TenantV1alpha1().ProviderServices().Update(ctx, ps, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitOffer(ctx, t, admin, offerName, "serving A and B", func(ps *tenantv1alpha1.ProviderService) bool {
			return served(nameA)(ps) && served(nameB)(ps)
		})
		got, err := memberB.TenantV1alpha1().ProviderServices().Get(ctx, offerName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Spec.Tenants) != 0 || len(got.Status.Tenants) != 1 || got.Status.Tenants[0].Name != nameB {
			t.Fatalf("tenant B reads tenants %v, entries %+v", got.Spec.Tenants, got.Status.Tenants)
		}
		a, _ := offerEntry(waitOffer(ctx, t, admin, offerName, "A", served(nameA)), nameA)
		b, _ := offerEntry(waitOffer(ctx, t, admin, offerName, "B", served(nameB)), nameB)
		if a.ConnectSubnet == b.ConnectSubnet {
			t.Fatalf("tenants A and B share connect subnet %s", a.ConnectSubnet)
		}
		checkInvariant(t)
	})

	t.Run("OVN-Kubernetes' report on the connection", func(t *testing.T) {
		// A network someone else put in B's connection group, whose
		// subnet overlaps B's own network: cluster-manager refuses B's
		// ClusterNetworkConnect (Accepted=False: networks it connects may
		// not overlap), and B's entry says why; once it is gone, the
		// connection is accepted again.
		netB := waitNetwork(ctx, t, memberB, "default", "synced", networkSynced)
		if len(netB.Status.Subnets) == 0 {
			t.Fatalf("tenant B's Network default reports no subnet: %+v", netB.Status)
		}
		rogue := "rogue-" + suffix
		if _, err := host.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: rogue, Labels: map[string]string{"provider-network": rogue, "k8s.ovn.org/primary-user-defined-network": ""}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = host.CoreV1().Namespaces().Delete(context.Background(), rogue, metav1.DeleteOptions{}) })
		cudn := providerCUDN(rogue, rogue, netB.Status.Subnets[0])
		cudn.Labels = map[string]string{hostnames.ConnectGroupLabel: "tenant." + nameB}
		if _, err := udn.K8sV1().ClusterUserDefinedNetworks().Create(ctx, cudn, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = udn.K8sV1().ClusterUserDefinedNetworks().Delete(context.Background(), rogue, metav1.DeleteOptions{})
		})
		waitOffer(ctx, t, admin, offerName, "reporting B's connection failed", func(ps *tenantv1alpha1.ProviderService) bool {
			e, ok := offerEntry(ps, nameB)
			return ok && !e.Connected && e.Reason == "ConnectFailed" && strings.Contains(e.Message, "overlap")
		})
		a, _ := offerEntry(waitOffer(ctx, t, admin, offerName, "A", served(nameA)), nameA)
		if !a.Connected {
			t.Fatalf("tenant A's connection reported failed with B's: %+v", a)
		}
		if err := udn.K8sV1().ClusterUserDefinedNetworks().Delete(ctx, rogue, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := host.CoreV1().Namespaces().Delete(ctx, rogue, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitOffer(ctx, t, admin, offerName, "serving B again", served(nameB))
	})

	t.Run("the alias follows the Service's ports", func(t *testing.T) {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(5353)})
		if _, err := host.CoreV1().Services(infra).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(ctx, t, slowTimeout, "alias with two ports", func(ctx context.Context) (bool, string) {
			alias, err := host.CoreV1().Services(hostNSB).Get(ctx, "resolver", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return len(alias.Spec.Ports) == 2, fmt.Sprintf("ports %+v", alias.Spec.Ports)
		})
	})

	t.Run("a tenant's own Service of the alias name is left alone", func(t *testing.T) {
		hostB, _ := hostClientsAs(t, offerUserB)
		own := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ntp", Namespace: hostNSB},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 123, Protocol: corev1.ProtocolUDP}}}}
		if _, err := hostB.CoreV1().Services(hostNSB).Create(ctx, own, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ntp := &tenantv1alpha1.ProviderService{
			ObjectMeta: metav1.ObjectMeta{Name: "ntp-" + suffix},
			Spec: tenantv1alpha1.ProviderServiceSpec{
				Service: tenantv1alpha1.ServiceReference{Namespace: infra, Name: "resolver"}, Alias: "ntp", AllTenants: true,
			},
		}
		if _, err := admin.TenantV1alpha1().ProviderServices().Create(ctx, ntp, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ps := waitOffer(ctx, t, admin, ntp.Name, "reporting B's clash", func(ps *tenantv1alpha1.ProviderService) bool {
			e, ok := offerEntry(ps, nameB)
			return ok && e.Reason == "AliasTaken" && served(nameA)(ps)
		})
		e, _ := offerEntry(ps, nameB)
		if !strings.Contains(e.Message, "default") {
			t.Fatalf("the clash does not name the namespace: %q", e.Message)
		}
		got, err := host.CoreV1().Services(hostNSB).Get(ctx, "ntp", metav1.GetOptions{})
		if err != nil || got.Spec.Type == corev1.ServiceTypeExternalName || got.Labels[hostnames.ProviderServiceLabel] != "" {
			t.Fatalf("tenant B's own Service was changed: %+v (%v)", got, err)
		}
		// Each tenant's Namespace says what its aliases are.
		for _, c := range []struct {
			member clientset.Interface
			ok     bool
			words  string
		}{{memberA, true, "ntp"}, {memberB, false, "ntp (ProviderService ntp-" + suffix}} {
			eventually(ctx, t, slowTimeout, "the ProviderServices condition of Namespace default", func(ctx context.Context) (bool, string) {
				ns, err := c.member.TenantV1alpha1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
				if err != nil {
					return false, err.Error()
				}
				for _, cond := range ns.Status.Conditions {
					if cond.Type == "ProviderServices" {
						return (cond.Status == metav1.ConditionTrue) == c.ok && strings.Contains(cond.Message, c.words), cond.Reason + ": " + cond.Message
					}
				}
				return false, describeConditions(ns.Status.Conditions)
			})
		}
	})

	t.Run("withdrawn from a tenant", func(t *testing.T) {
		ps, err := admin.TenantV1alpha1().ProviderServices().Get(ctx, offerName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ps.Spec.AllTenants, ps.Spec.Tenants = false, []string{nameB}
		if _, err := admin.TenantV1alpha1().ProviderServices().Update(ctx, ps, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitOffer(ctx, t, admin, offerName, "serving B only", func(ps *tenantv1alpha1.ProviderService) bool {
			_, a := offerEntry(ps, nameA)
			return !a && served(nameB)(ps)
		})
		eventually(ctx, t, slowTimeout, "tenant A's alias gone", func(ctx context.Context) (bool, string) {
			_, err := host.CoreV1().Services(hostNSA).Get(ctx, "resolver", metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		// A still holds the ntp offer's connection with the same network.
		if _, err := dyn.Resource(cncGVR).Get(ctx, hostnames.ClusterNetworkConnect(tnA.UID, pn), metav1.GetOptions{}); err != nil {
			t.Fatalf("tenant A's connection for the other offer: %v", err)
		}
		if _, err := memberA.TenantV1alpha1().ProviderServices().Get(ctx, offerName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("tenant A still reads the withdrawn offer: %v", err)
		}
		checkInvariant(t)
	})

	t.Run("a new namespace gets the alias, the last network gone takes the connection", func(t *testing.T) {
		if _, err := memberA.TenantV1alpha1().Namespaces().Create(ctx, namespaceObject("extra"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		extra := waitNamespaceSynced(ctx, t, memberA, "extra").Status.HostNamespace
		eventually(ctx, t, slowTimeout, "the ntp alias in the new namespace", func(ctx context.Context) (bool, string) {
			_, err := host.CoreV1().Services(extra).Get(ctx, "ntp", metav1.GetOptions{})
			return err == nil, fmt.Sprint(err)
		})
		// Tenant A gives up its namespaces and its only Network.
		for _, ns := range []string{"extra", "default"} {
			if err := memberA.TenantV1alpha1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		eventually(ctx, t, slowTimeout, "tenant A's Network default deleted", func(ctx context.Context) (bool, string) {
			err := memberA.TenantV1alpha1().Networks().Delete(ctx, "default", metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return true, ""
			}
			return false, fmt.Sprint(err)
		})
		waitOffer(ctx, t, admin, "ntp-"+suffix, "reporting A without a network", func(ps *tenantv1alpha1.ProviderService) bool {
			e, ok := offerEntry(ps, nameA)
			return ok && !e.Connected && e.Reason == "NoNetwork"
		})
		eventually(ctx, t, slowTimeout, "tenant A's connection gone", func(ctx context.Context) (bool, string) {
			_, err := dyn.Resource(cncGVR).Get(ctx, hostnames.ClusterNetworkConnect(tnA.UID, pn), metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		checkInvariant(t)
	})

	t.Run("a namespace on no provider network writes nothing", func(t *testing.T) {
		plain := "plain-" + suffix
		if _, err := host.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: plain}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = host.CoreV1().Namespaces().Delete(context.Background(), plain, metav1.DeleteOptions{}) })
		if _, err := host.CoreV1().Services(plain).Create(ctx, resolverService(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		off := &tenantv1alpha1.ProviderService{
			ObjectMeta: metav1.ObjectMeta{Name: "plain-" + suffix},
			Spec:       tenantv1alpha1.ProviderServiceSpec{Service: tenantv1alpha1.ServiceReference{Namespace: plain, Name: "resolver"}, Alias: "plain", AllTenants: true},
		}
		if _, err := admin.TenantV1alpha1().ProviderServices().Create(ctx, off, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = admin.TenantV1alpha1().ProviderServices().Delete(context.Background(), off.Name, metav1.DeleteOptions{})
		})
		waitOffer(ctx, t, admin, off.Name, "NoProviderNetwork", func(ps *tenantv1alpha1.ProviderService) bool {
			c := meta.FindStatusCondition(ps.Status.Conditions, "Ready")
			return c != nil && c.Reason == "NoProviderNetwork" && strings.Contains(c.Message, "default network") && ps.Status.ObservedGeneration == ps.Generation
		})
		if _, err := host.CoreV1().Services(hostNSB).Get(ctx, "plain", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("an alias was written for a Service on no provider network: %v", err)
		}
	})

	t.Run("deleted", func(t *testing.T) {
		for _, n := range []string{offerName, "ntp-" + suffix} {
			if err := admin.TenantV1alpha1().ProviderServices().Delete(ctx, n, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct {
			client kubernetes.Interface
			ns     string
			uid    string
		}{{host, hostNSA, string(tnA.UID)}, {host, hostNSB, string(tnB.UID)}} {
			eventually(ctx, t, slowTimeout, "connection and alias gone in "+c.ns, func(ctx context.Context) (bool, string) {
				_, errS := c.client.CoreV1().Services(c.ns).Get(ctx, "resolver", metav1.GetOptions{})
				_, errC := dyn.Resource(cncGVR).Get(ctx, hostnames.ClusterNetworkConnect(types.UID(c.uid), pn), metav1.GetOptions{})
				return apierrors.IsNotFound(errS) && apierrors.IsNotFound(errC), fmt.Sprint(errS, errC)
			})
		}
		// The provider network leaves the connection group with its last offer.
		eventually(ctx, t, slowTimeout, "provider network "+pn+" out of the connection group", func(ctx context.Context) (bool, string) {
			cudn, err := udn.K8sV1().ClusterUserDefinedNetworks().Get(ctx, pn, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			_, labelled := cudn.Labels[hostnames.ConnectGroupLabel]
			return !labelled, fmt.Sprint(cudn.Labels)
		})
		// Every connect subnet is given back.
		eventually(ctx, t, slowTimeout, "connect subnets given back", func(ctx context.Context) (bool, string) {
			p, err := admin.TenantV1alpha1().AddressPools().Get(ctx, "connects", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			// Nothing else holds one: no other test offers services, and
			// the tenants of TestServiceNetworks, whose service networks
			// hold one, give theirs back when they are offboarded.
			return p.Status.Allocated == 0 && p.Status.Capacity > 0, fmt.Sprintf("allocated %d of %d", p.Status.Allocated, p.Status.Capacity)
		})
		// The tenant's own Service outlives the offer.
		if _, err := host.CoreV1().Services(hostNSB).Get(ctx, "ntp", metav1.GetOptions{}); err != nil {
			t.Fatalf("tenant B's own Service: %v", err)
		}
	})

	t.Run("a Service that does not exist writes nothing", func(t *testing.T) {
		ghost := &tenantv1alpha1.ProviderService{
			ObjectMeta: metav1.ObjectMeta{Name: "ghost-" + suffix},
			Spec: tenantv1alpha1.ProviderServiceSpec{
				Service: tenantv1alpha1.ServiceReference{Namespace: infra, Name: "nothing"}, AllTenants: true,
			},
		}
		if _, err := admin.TenantV1alpha1().ProviderServices().Create(ctx, ghost, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = admin.TenantV1alpha1().ProviderServices().Delete(context.Background(), ghost.Name, metav1.DeleteOptions{})
		})
		waitOffer(ctx, t, admin, ghost.Name, "ServiceNotFound", func(ps *tenantv1alpha1.ProviderService) bool {
			for _, c := range ps.Status.Conditions {
				if c.Type == "Ready" && c.Reason == "ServiceNotFound" && ps.Status.ObservedGeneration == ps.Generation {
					return true
				}
			}
			return false
		})
		if _, err := host.CoreV1().Services(hostNSA).Get(ctx, ghost.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("an alias was written for a missing Service: %v", err)
		}
	})
}
