package syncer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	udnclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1/apis/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestProviderServiceConnectsProperty drives one provider network through
// random steps, seeded: offers to random sets of three tenants or to all,
// withdrawals, Networks created and deleted, and tenants deleted and
// onboarded again under the same name (another UID: not offered again until
// the provider names it again). After each step it waits until the host
// has exactly the connections the offers call for (one per tenant offered
// the service that has a Network, none else), then checks the invariant
// over every ClusterNetworkConnect: it never selects the networks of two
// tenants.
func TestProviderServiceConnectsProperty(t *testing.T) {
	const steps = 14
	seed := rand.Uint64()
	if s := os.Getenv("PROVIDER_SERVICE_PROPERTY_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (PROVIDER_SERVICE_PROPERTY_SEED=%d repeats this run)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	ctx := framework.Context(t, 3*steps*slowTimeout)
	admin := tenantClient(t, stack.AdminUser)
	host, dyn := hostClients(t)
	udn, err := udnclientset.NewForConfig(theStack().RESTConfig(stack.AdminUser))
	if err != nil {
		t.Fatal(err)
	}
	base := uniqueName(t)
	users := []string{propUser1, propUser2, propUser3}
	names := []string{base + "1", base + "2", base + "3"}
	members := map[string]clientset.Interface{}
	onboardOne := func(i int) {
		onboard(ctx, t, tenantSpec{name: names[i], users: []string{users[i]}, prefixLength: 22})
		members[names[i]] = tenantClient(t, users[i])
		waitNetwork(ctx, t, members[names[i]], "default", "synced", networkSynced)
	}
	for i := range names {
		onboardOne(i)
	}

	suffix := randomHex(t, 4)
	pn := providerNetwork(ctx, t, host, udn, suffix, "192.168.241.0/24")
	offerName := "prop-" + suffix
	if _, err := admin.TenantV1alpha1().ProviderServices().Create(ctx, &tenantv1alpha1.ProviderService{
		ObjectMeta: metav1.ObjectMeta{Name: offerName},
		Spec:       tenantv1alpha1.ProviderServiceSpec{Service: tenantv1alpha1.ServiceReference{Namespace: "infra-" + suffix, Name: "resolver"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.TenantV1alpha1().ProviderServices().Delete(context.Background(), offerName, metav1.DeleteOptions{})
	})

	setOffer := func(all bool, tenants []string) {
		t.Helper()
		eventually(ctx, t, slowTimeout, "offer updated", func(ctx context.Context) (bool, string) {
			ps, err := admin.TenantV1alpha1().ProviderServices().Get(ctx, offerName, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			ps.Spec.AllTenants, ps.Spec.Tenants = all, tenants
			_, err = admin.TenantV1alpha1().ProviderServices().Update(ctx, ps, metav1.UpdateOptions{})
			return err == nil, fmt.Sprint(err)
		})
	}
	extra := map[string]bool{} // tenants with a Network "extra"
	for step := 0; step < steps; step++ {
		var did string
		switch k := rng.IntN(10); {
		case k < 4: // a new offer
			if rng.IntN(3) == 0 {
				setOffer(true, nil)
				did = "offer to all tenants"
			} else {
				var chosen []string
				for _, n := range names {
					if rng.IntN(2) == 0 {
						chosen = append(chosen, n)
					}
				}
				setOffer(false, chosen)
				did = fmt.Sprintf("offer to %v", chosen)
			}
		case k < 7: // a Network more or less
			n := names[rng.IntN(len(names))]
			if extra[n] {
				if err := members[n].TenantV1alpha1().Networks().Delete(ctx, "extra", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				eventually(ctx, t, slowTimeout, "Network extra of "+n+" gone", func(ctx context.Context) (bool, string) {
					_, err := members[n].TenantV1alpha1().Networks().Get(ctx, "extra", metav1.GetOptions{})
					return apierrors.IsNotFound(err), fmt.Sprint(err)
				})
				did = "delete Network extra of " + n
			} else {
				if _, err := members[n].TenantV1alpha1().Networks().Create(ctx, &tenantv1alpha1.Network{
					ObjectMeta: metav1.ObjectMeta{Name: "extra"},
					Spec:       tenantv1alpha1.NetworkSpec{Topology: tenantv1alpha1.NetworkTopologyLayer2},
				}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				waitNetwork(ctx, t, members[n], "extra", "synced", networkSynced)
				did = "create Network extra of " + n
			}
			extra[n] = !extra[n]
		default: // a tenant deleted and onboarded again
			i := rng.IntN(len(names))
			ps, err := admin.TenantV1alpha1().ProviderServices().Get(ctx, offerName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if slices.Equal(ps.Spec.Tenants, []string{names[i]}) {
				setOffer(false, nil) // an offer to it alone blocks its offboarding
			}
			offboardAtEnd(t, names[i])
			onboardOne(i)
			delete(extra, names[i])
			did = "tenant " + names[i] + " deleted and onboarded again"
		}
		t.Logf("step %d: %s", step, did)
		eventually(ctx, t, slowTimeout, fmt.Sprintf("step %d (%s): the connections the offer calls for", step, did), func(ctx context.Context) (bool, string) {
			want, err := wantedConnects(ctx, admin, offerName, pn)
			if err != nil {
				return false, err.Error()
			}
			cncs, err := dyn.Resource(cncGVR).List(ctx, metav1.ListOptions{LabelSelector: hostnames.ConnectLabel + "=" + pn})
			if err != nil {
				return false, err.Error()
			}
			var have []string
			for _, u := range cncs.Items {
				if u.GetDeletionTimestamp() == nil {
					have = append(have, u.GetName())
				}
			}
			sort.Strings(have)
			return slices.Equal(have, want), fmt.Sprintf("have %v, want %v", have, want)
		})
		if p := connectInvariant(ctx, t, dyn, udn); len(p) > 0 {
			t.Fatalf("step %d (%s): %s", step, did, strings.Join(p, "; "))
		}
	}
}

// wantedConnects returns the names of the ClusterNetworkConnects that offer
// calls for on provider network pn: one per tenant it is offered to (by
// name and UID, or all) that has a Network on the host.
func wantedConnects(ctx context.Context, admin clientset.Interface, offer, pn string) ([]string, error) {
	ps, err := admin.TenantV1alpha1().ProviderServices().Get(ctx, offer, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	tenants, err := admin.TenantV1alpha1().Tenants().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var want []string
	for _, tn := range tenants.Items {
		if tn.DeletionTimestamp != nil {
			continue
		}
		offered := ps.Spec.AllTenants
		for _, o := range ps.Status.Offers {
			offered = offered || (o.Tenant == tn.Name && o.UID == tn.UID && slices.Contains(ps.Spec.Tenants, tn.Name))
		}
		if !offered {
			continue
		}
		cudns, err := hostCUDNsOf(ctx, tn.Name, tn.UID)
		if err != nil {
			return nil, err
		}
		if cudns > 0 {
			want = append(want, hostnames.ClusterNetworkConnect(tn.UID, pn))
		}
	}
	sort.Strings(want)
	return want, nil
}

// hostCUDNsOf counts the ClusterUserDefinedNetworks of tenant t (UID uid) on the host.
func hostCUDNsOf(ctx context.Context, t string, uid types.UID) (int, error) {
	udn, err := udnclientset.NewForConfig(theStack().RESTConfig(stack.AdminUser))
	if err != nil {
		return 0, err
	}
	list, err := udn.K8sV1().ClusterUserDefinedNetworks().List(ctx, metav1.ListOptions{LabelSelector: hostnames.TenantLabel + "=" + t})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range list.Items {
		if c.Annotations[hostnames.TenantUIDAnnotation] == string(uid) && c.DeletionTimestamp == nil {
			n++
		}
	}
	return n, nil
}

// providerNetwork makes a provider namespace infra-<suffix> on a provider
// network (a primary Layer2 CUDN of the provider's, subnet cidr) with a
// Service resolver, removed when the test ends; it returns the network's name.
func providerNetwork(ctx context.Context, t *testing.T, host kubernetes.Interface, udn udnclientset.Interface, suffix, cidr string) string {
	t.Helper()
	infra := "infra-" + suffix
	if _, err := host.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: infra, Labels: map[string]string{"provider-network": suffix, "k8s.ovn.org/primary-user-defined-network": ""}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.CoreV1().Namespaces().Delete(context.Background(), infra, metav1.DeleteOptions{}) })
	pn := "infra-net-" + suffix
	if _, err := udn.K8sV1().ClusterUserDefinedNetworks().Create(ctx, providerCUDN(pn, suffix, cidr), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = udn.K8sV1().ClusterUserDefinedNetworks().Delete(context.Background(), pn, metav1.DeleteOptions{})
	})
	if _, err := host.CoreV1().Services(infra).Create(ctx, resolverService(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return pn
}

// providerCUDN is a provider network: a primary Layer2 CUDN without
// tenant labels, selecting the namespaces labelled provider-network=suffix.
func providerCUDN(name, suffix, cidr string) *udnv1.ClusterUserDefinedNetwork {
	return &udnv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: udnv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"provider-network": suffix}},
			Network: udnv1.NetworkSpec{Topology: udnv1.NetworkTopologyLayer2, Layer2: &udnv1.Layer2Config{
				Role: udnv1.NetworkRolePrimary, Subnets: udnv1.DualStackCIDRs{udnv1.CIDR(cidr)}}},
		},
	}
}

// resolverService is the provider's Service offered in these tests.
func resolverService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "resolver"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(5353)}}},
	}
}
