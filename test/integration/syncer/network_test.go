package syncer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	egressipv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	egressipclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1/apis/clientset/versioned"
	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	udnclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1/apis/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// nadGVR is Multus' NetworkAttachmentDefinition, which OVN-Kubernetes
// renders each user-defined network into.
var nadGVR = schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}

// ovnClients are typed clients of the host's OVN-Kubernetes kinds, as the
// provider admin.
func ovnClients(t *testing.T) (udnclientset.Interface, egressipclientset.Interface) {
	t.Helper()
	cfg := theStack().RESTConfig(stack.AdminUser)
	udn, err := udnclientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eip, err := egressipclientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return udn, eip
}

func describeNetwork(n *tenantv1alpha1.Network) string {
	return fmt.Sprintf("gen %d, subnets %v, status{hostNetwork %q, subnets %v, namespaces %v, natGatewayIP %q, observedGeneration %d, conditions %s}",
		n.Generation, n.Spec.Subnets, n.Status.HostNetwork, n.Status.Subnets, n.Status.Namespaces, n.Status.NATGatewayIP,
		n.Status.ObservedGeneration, describeConditions(n.Status.Conditions))
}

// waitNetwork waits until the tenant's Network name satisfies ok, and returns it.
func waitNetwork(ctx context.Context, t *testing.T, cs clientset.Interface, name, what string, ok func(*tenantv1alpha1.Network) bool) *tenantv1alpha1.Network {
	t.Helper()
	var n *tenantv1alpha1.Network
	eventually(ctx, t, syncTimeout, "Network "+name+": "+what, func(ctx context.Context) (bool, string) {
		got, err := cs.TenantV1alpha1().Networks().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		n = got
		return ok(got), describeNetwork(got)
	})
	return n
}

// networkSynced says whether n's status describes its spec and says HostSynced.
func networkSynced(n *tenantv1alpha1.Network) bool {
	c := meta.FindStatusCondition(n.Status.Conditions, tenantv1alpha1.ConditionHostSynced)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == n.Generation && n.Status.ObservedGeneration == n.Generation
}

func conditionIs(conds []metav1.Condition, typ string, status metav1.ConditionStatus, reason string) bool {
	c := meta.FindStatusCondition(conds, typ)
	return c != nil && c.Status == status && (reason == "" || c.Reason == reason)
}

// cudnProblems lists how the host network of Network n of tenant tn
// differs from what the syncer must make of it.
func cudnProblems(cudn *udnv1.ClusterUserDefinedNetwork, tn *tenantv1alpha1.Tenant, n *tenantv1alpha1.Network, mtu int32, hostSubnet int32) []string {
	var p []string
	if want := hostnames.ClusterUserDefinedNetwork(tn.UID, n.Name); cudn.Name != want || len(cudn.Name) > 15 {
		p = append(p, fmt.Sprintf("name %q, want %q (at most 15 characters)", cudn.Name, want))
	}
	wantLabels := map[string]string{hostnames.TenantLabel: tn.Name, hostnames.NetworkLabel: n.Name}
	for k, v := range wantLabels {
		if cudn.Labels[k] != v {
			p = append(p, fmt.Sprintf("label %s=%q, want %q", k, cudn.Labels[k], v))
		}
	}
	if cudn.Annotations[hostnames.OwnerUIDAnnotation] != string(n.UID) || cudn.Annotations[hostnames.TenantUIDAnnotation] != string(tn.UID) {
		p = append(p, fmt.Sprintf("annotations %v", cudn.Annotations))
	}
	wantSelector := metav1.LabelSelector{MatchLabels: map[string]string{
		hostnames.TenantLabel: tn.Name, hostnames.HostNetworkLabel: cudn.Name,
	}}
	if !apiequality.Semantic.DeepEqual(cudn.Spec.NamespaceSelector, wantSelector) {
		p = append(p, fmt.Sprintf("namespaceSelector %v", cudn.Spec.NamespaceSelector))
	}
	net := cudn.Spec.Network
	if string(net.Topology) != string(n.Spec.Topology) {
		p = append(p, fmt.Sprintf("topology %q", net.Topology))
	}
	switch n.Spec.Topology {
	case tenantv1alpha1.NetworkTopologyLayer2:
		var subnets []string
		if net.Layer2 == nil || net.Layer3 != nil {
			return append(p, "no layer2 config, or a layer3 one")
		}
		for _, s := range net.Layer2.Subnets {
			subnets = append(subnets, string(s))
		}
		if net.Layer2.Role != udnv1.NetworkRolePrimary || !slices.Equal(subnets, n.Spec.Subnets) || net.Layer2.MTU != mtu {
			p = append(p, fmt.Sprintf("layer2 %+v", *net.Layer2))
		}
	case tenantv1alpha1.NetworkTopologyLayer3:
		if net.Layer3 == nil || net.Layer2 != nil {
			return append(p, "no layer3 config, or a layer2 one")
		}
		var subnets []string
		for _, s := range net.Layer3.Subnets {
			subnets = append(subnets, string(s.CIDR))
			if s.HostSubnet != hostSubnet {
				p = append(p, fmt.Sprintf("subnet %s hostSubnet %d, want %d", s.CIDR, s.HostSubnet, hostSubnet))
			}
		}
		if net.Layer3.Role != udnv1.NetworkRolePrimary || !slices.Equal(subnets, n.Spec.Subnets) || net.Layer3.MTU != mtu {
			p = append(p, fmt.Sprintf("layer3 role %q subnets %v mtu %d", net.Layer3.Role, subnets, net.Layer3.MTU))
		}
	}
	return p
}

// waitCUDN waits until the host network of n matches and returns it.
func waitCUDN(ctx context.Context, t *testing.T, udn udnclientset.Interface, tn *tenantv1alpha1.Tenant, n *tenantv1alpha1.Network, mtu, hostSubnet int32) *udnv1.ClusterUserDefinedNetwork {
	t.Helper()
	name := hostnames.ClusterUserDefinedNetwork(tn.UID, n.Name)
	var cudn *udnv1.ClusterUserDefinedNetwork
	eventually(ctx, t, syncTimeout, "ClusterUserDefinedNetwork "+name+" of Network "+n.Name, func(ctx context.Context) (bool, string) {
		got, err := udn.K8sV1().ClusterUserDefinedNetworks().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		cudn = got
		p := cudnProblems(got, tn, n, mtu, hostSubnet)
		return len(p) == 0 && got.DeletionTimestamp == nil, strings.Join(p, "; ")
	})
	return cudn
}

// selected returns, sorted, the host namespaces a label selector selects.
func selected(ctx context.Context, t *testing.T, host corev1Lister, sel metav1.LabelSelector) []string {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(&sel)
	if err != nil {
		t.Fatal(err)
	}
	list, err := host.List(ctx, metav1.ListOptions{LabelSelector: s.String()})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ns := range list.Items {
		if ns.DeletionTimestamp == nil {
			out = append(out, ns.Name)
		}
	}
	slices.Sort(out)
	return out
}

type corev1Lister interface {
	List(ctx context.Context, opts metav1.ListOptions) (*corev1.NamespaceList, error)
}

// TestNetworks follows tenant Networks onto the host: the default Network
// of onboarding, a Layer3 Network with an MTU, the Namespaces attached to
// each (and only those) selected by their ClusterUserDefinedNetworks, the
// network conditions OVN-Kubernetes' cluster-manager reports reaching the
// tenant (created, and refused), the NAT gateway's EgressIP and its
// assignment to a node, drift repair, a host name taken by someone else,
// and the removal of a deleted Network's host objects.
func TestNetworks(t *testing.T) {
	ctx := framework.Context(t, 6*slowTimeout)
	name := uniqueName(t)
	tn := onboard(ctx, t, tenantSpec{name: name, users: []string{networkUser}, publicIPs: 2, prefixLength: 16})
	block := tn.Status.Network.CIDR
	nina := tenantClient(t, networkUser)
	admin := tenantClient(t, stack.AdminUser)
	host, _ := hostClients(t)
	udn, eip := ovnClients(t)
	prefix := strings.TrimSuffix(block, ".0.0/16") // "10.x"

	// Onboarding: Network "default" over the block's first /24, Namespace
	// "default" attached to it, both on the host.
	def := waitNetwork(ctx, t, nina, "default", "synced", networkSynced)
	if want := []string{prefix + ".0.0/24"}; !slices.Equal(def.Spec.Subnets, want) || def.Spec.Topology != tenantv1alpha1.NetworkTopologyLayer2 {
		t.Fatalf("default Network: topology %q subnets %v, want Layer2 %v", def.Spec.Topology, def.Spec.Subnets, want)
	}
	defCUDN := waitCUDN(ctx, t, udn, tn, def, 0, 0)
	def = waitNetwork(ctx, t, nina, "default", "lists Namespace default", func(n *tenantv1alpha1.Network) bool {
		return slices.Equal(n.Status.Namespaces, []string{defaultNamespace}) && n.Status.HostNetwork == defCUDN.Name &&
			slices.Equal(n.Status.Subnets, n.Spec.Subnets)
	})
	defaultHostNS := hostnames.Namespace(tn.Name, tn.UID, defaultNamespace)
	if got := selected(ctx, t, host.CoreV1().Namespaces(), defCUDN.Spec.NamespaceSelector); !slices.Equal(got, []string{defaultHostNS}) {
		t.Fatalf("the default network selects host namespaces %v, want [%s]", got, defaultHostNS)
	}
	t.Logf("default Network: %s on the host, subnets %v", defCUDN.Name, def.Spec.Subnets)

	t.Run("OVN-Kubernetes creates the network", func(t *testing.T) {
		// cluster-manager renders the network into a
		// NetworkAttachmentDefinition in each namespace it selects and
		// reports NetworkCreated; the tenant sees it, and Ready.
		n := waitNetwork(ctx, t, nina, "default", "NetworkCreated by OVN-Kubernetes, Ready", func(n *tenantv1alpha1.Network) bool {
			return conditionIs(n.Status.Conditions, tenantv1alpha1.ConditionNetworkCreated, metav1.ConditionTrue, "NetworkAttachmentDefinitionCreated") &&
				conditionIs(n.Status.Conditions, tenantv1alpha1.ConditionReady, metav1.ConditionTrue, "")
		})
		if c := meta.FindStatusCondition(n.Status.Conditions, tenantv1alpha1.ConditionNetworkCreated); !strings.Contains(c.Message, defaultHostNS) {
			t.Errorf("NetworkCreated message %q does not carry OVN-Kubernetes' message", c.Message)
		}
		_, dyn := hostClients(t)
		nad, err := dyn.Resource(nadGVR).Namespace(defaultHostNS).Get(ctx, defCUDN.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("OVN-Kubernetes' NetworkAttachmentDefinition for the network: %v", err)
		}
		config, _, _ := unstructured.NestedString(nad.Object, "spec", "config")
		for _, want := range []string{`"role":"primary"`, `"topology":"layer2"`, prefix + ".0.0/24"} {
			if !strings.Contains(config, want) {
				t.Errorf("NetworkAttachmentDefinition %s/%s config lacks %s: %s", defaultHostNS, defCUDN.Name, want, config)
			}
		}
		waitTenantReady(ctx, t, admin, tn.Name)
	})

	t.Run("OVN-Kubernetes refuses a network", func(t *testing.T) {
		// A provider pool over OVN-Kubernetes' own service network (a
		// provider's mistake the tenant API cannot see): the tenant's
		// network is written to the host, and OVN-Kubernetes refuses it.
		pool := &tenantv1alpha1.AddressPool{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-svcnet"},
			Spec:       tenantv1alpha1.AddressPoolSpec{Purpose: tenantv1alpha1.AddressPoolPurposeTenantNetworks, CIDRs: []string{stack.ServiceNetworkCIDR}},
		}
		if _, err := admin.TenantV1alpha1().AddressPools().Create(ctx, pool, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = admin.TenantV1alpha1().AddressPools().Delete(context.Background(), pool.Name, metav1.DeleteOptions{})
		})
		refused := onboard(ctx, t, tenantSpec{name: name + "-refused", users: []string{refusedUser}, cidr: stack.ServiceNetworkCIDR})
		n := waitNetwork(ctx, t, tenantClient(t, refusedUser), "default", "refused by OVN-Kubernetes, not Ready", func(n *tenantv1alpha1.Network) bool {
			return conditionIs(n.Status.Conditions, tenantv1alpha1.ConditionNetworkCreated, metav1.ConditionFalse, "") &&
				conditionIs(n.Status.Conditions, tenantv1alpha1.ConditionReady, metav1.ConditionFalse, "NetworkNotCreated")
		})
		created := meta.FindStatusCondition(n.Status.Conditions, tenantv1alpha1.ConditionNetworkCreated)
		if !strings.Contains(created.Message, "overlaps") {
			t.Errorf("NetworkCreated %s: %q, want OVN-Kubernetes' reason (a subnet overlap)", created.Reason, created.Message)
		}
		if ready := meta.FindStatusCondition(n.Status.Conditions, tenantv1alpha1.ConditionReady); !strings.Contains(ready.Message, created.Message) {
			t.Errorf("Ready %q does not carry OVN-Kubernetes' message %q", ready.Message, created.Message)
		}
		t.Logf("tenant %s, Network default %v: NetworkCreated=False %s: %s", refused.Name, n.Spec.Subnets, created.Reason, created.Message)
	})

	var blue *tenantv1alpha1.Network
	blueNS := hostnames.Namespace(tn.Name, tn.UID, "web")
	t.Run("Layer3 network with Namespaces attached", func(t *testing.T) {
		obj := map[string]interface{}{
			"apiVersion": "tenant.io/v1alpha1", "kind": "Network", "metadata": map[string]interface{}{"name": "blue"},
			"spec": map[string]interface{}{"topology": "Layer3", "subnets": []string{prefix + ".16.0/20", prefix + ".64.0/26"}, "mtu": 1400},
		}
		kubectl(ctx, t, networkUser, "apply", "--server-side", "-f", writeJSON(t, obj))
		blue = waitNetwork(ctx, t, nina, "blue", "synced", networkSynced)
		// One per-node length for both subnets, longer than the longest (/26).
		cudn := waitCUDN(ctx, t, udn, tn, blue, 1400, 27)
		for _, ns := range []string{"web", "api"} {
			o := namespaceObject(ns)
			o.Spec.Network = "blue"
			if _, err := nina.TenantV1alpha1().Namespaces().Create(ctx, o, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			waitNamespaceSynced(ctx, t, nina, ns)
		}
		apiNS := hostnames.Namespace(tn.Name, tn.UID, "api")
		want := []string{apiNS, blueNS}
		slices.Sort(want)
		if got := selected(ctx, t, host.CoreV1().Namespaces(), cudn.Spec.NamespaceSelector); !slices.Equal(got, want) {
			t.Fatalf("blue selects host namespaces %v, want %v", got, want)
		}
		if got := selected(ctx, t, host.CoreV1().Namespaces(), defCUDN.Spec.NamespaceSelector); !slices.Equal(got, []string{defaultHostNS}) {
			t.Fatalf("default now selects %v, want only [%s]", got, defaultHostNS)
		}
		waitNetwork(ctx, t, nina, "blue", "lists api and web", func(n *tenantv1alpha1.Network) bool {
			return slices.Equal(n.Status.Namespaces, []string{"api", "web"})
		})
		out := kubectl(ctx, t, networkUser, "get", "networks", "-o", "wide")
		for _, s := range []string{"blue", "Layer3", prefix + ".16.0/20", "api,web"} {
			if !strings.Contains(out, s) {
				t.Errorf("kubectl get networks -o wide lacks %q:\n%s", s, out)
			}
		}
		// Deleting the Namespace takes it off the network.
		if err := nina.TenantV1alpha1().Namespaces().Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitNetwork(ctx, t, nina, "blue", "lists web only", func(n *tenantv1alpha1.Network) bool {
			return slices.Equal(n.Status.Namespaces, []string{"web"})
		})
	})
	if blue == nil {
		t.FailNow()
	}
	blueCUDN := hostnames.ClusterUserDefinedNetwork(tn.UID, "blue")
	natName := hostnames.NATGatewayEgressIP(blueCUDN)

	t.Run("NAT gateway", func(t *testing.T) {
		kubectl(ctx, t, networkUser, "patch", "network", "blue", "--type=merge", "-p", `{"spec":{"natGateway":{"enabled":true}}}`)
		n := waitNetwork(ctx, t, nina, "blue", "NAT gateway address and synced", func(n *tenantv1alpha1.Network) bool {
			return n.Status.NATGatewayIP != "" && networkSynced(n)
		})
		if !slices.Contains(tn.Status.PublicIPs, n.Status.NATGatewayIP) {
			t.Fatalf("natGatewayIP %s is not one of the tenant's public IPs %v", n.Status.NATGatewayIP, tn.Status.PublicIPs)
		}
		// The tenant holds no FloatingIP or LoadBalancer: the NAT gateway's
		// is its one public address in use.
		waitPublicIPsInUse(ctx, t, nina, tn.Name, 1)
		var egress *egressipv1.EgressIP
		eventually(ctx, t, syncTimeout, "EgressIP "+natName, func(ctx context.Context) (bool, string) {
			got, err := eip.K8sV1().EgressIPs().Get(ctx, natName, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			egress = got
			return slices.Equal(got.Spec.EgressIPs, []string{n.Status.NATGatewayIP}), fmt.Sprintf("%+v", got.Spec)
		})
		if got := selected(ctx, t, host.CoreV1().Namespaces(), egress.Spec.NamespaceSelector); !slices.Equal(got, []string{blueNS}) {
			t.Fatalf("the NAT gateway's EgressIP selects %v, want [%s]", got, blueNS)
		}
		// Every pod but those a FloatingIP binds (which leave through its
		// own EgressIP).
		natPods := metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: hostnames.FloatingIPTargetLabel, Operator: metav1.LabelSelectorOpDoesNotExist}}}
		if !apiequality.Semantic.DeepEqual(egress.Spec.PodSelector, natPods) ||
			egress.Labels[hostnames.TenantLabel] != tn.Name || !hostnames.OwnedBy(egress, n.UID) {
			t.Fatalf("EgressIP %s: labels %v annotations %v podSelector %v", natName, egress.Labels, egress.Annotations, egress.Spec.PodSelector)
		}
		// OVN-Kubernetes assigns the address to one of the egress-assignable
		// nodes (it replaces the EgressIP's annotations as it does: the
		// syncer still knows it as its own and puts them back); the
		// tenant sees that it is assigned, not where.
		eventually(ctx, t, syncTimeout, "EgressIP "+natName+" assigned to a node, marks in place", func(ctx context.Context) (bool, string) {
			got, err := eip.K8sV1().EgressIPs().Get(ctx, natName, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			nodes := map[string]bool{}
			for _, sn := range stack.SimulatedNodes {
				nodes[sn.Name] = true
			}
			ok := len(got.Status.Items) == 1 && got.Status.Items[0].EgressIP == n.Status.NATGatewayIP && nodes[got.Status.Items[0].Node] &&
				got.Annotations[hostnames.OwnerUIDAnnotation] == string(n.UID) && got.Annotations["k8s.ovn.org/egressip-mark"] != ""
			return ok, fmt.Sprintf("status %+v annotations %v", got.Status, got.Annotations)
		})
		assigned := waitNetwork(ctx, t, nina, "blue", "EgressAssigned, Ready", func(n *tenantv1alpha1.Network) bool {
			return conditionIs(n.Status.Conditions, tenantv1alpha1.ConditionEgressAssigned, metav1.ConditionTrue, "Assigned") &&
				conditionIs(n.Status.Conditions, tenantv1alpha1.ConditionReady, metav1.ConditionTrue, "")
		})
		if c := meta.FindStatusCondition(assigned.Status.Conditions, tenantv1alpha1.ConditionEgressAssigned); !strings.Contains(c.Message, n.Status.NATGatewayIP) ||
			strings.Contains(c.Message, "worker-") {
			t.Errorf("EgressAssigned message %q: want the address, and no node name", c.Message)
		}
		// Drift: the address changed on the host is put back.
		// (OVN-Kubernetes writes the EgressIP too: onto its latest version.)
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := eip.K8sV1().EgressIPs().Get(ctx, natName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Spec.EgressIPs = []string{"198.51.100.77"}
			_, err = eip.K8sV1().EgressIPs().Update(ctx, cur, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		eventually(ctx, t, syncTimeout, "EgressIP address repaired", func(ctx context.Context) (bool, string) {
			got, err := eip.K8sV1().EgressIPs().Get(ctx, natName, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return slices.Equal(got.Spec.EgressIPs, []string{n.Status.NATGatewayIP}), fmt.Sprint(got.Spec.EgressIPs)
		})
		// Disabled: the EgressIP goes, the address returns to the tenant.
		kubectl(ctx, t, networkUser, "patch", "network", "blue", "--type=merge", "-p", `{"spec":{"natGateway":{"enabled":false}}}`)
		waitNetwork(ctx, t, nina, "blue", "no NAT gateway address, no EgressAssigned", func(n *tenantv1alpha1.Network) bool {
			return n.Status.NATGatewayIP == "" && networkSynced(n) && meta.FindStatusCondition(n.Status.Conditions, tenantv1alpha1.ConditionEgressAssigned) == nil
		})
		waitPublicIPsInUse(ctx, t, nina, tn.Name, 0)
		eventually(ctx, t, syncTimeout, "EgressIP "+natName+" gone", func(ctx context.Context) (bool, string) {
			_, err := eip.K8sV1().EgressIPs().Get(ctx, natName, metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
	})

	t.Run("drift of the host network is repaired", func(t *testing.T) {
		cudn, err := udn.K8sV1().ClusterUserDefinedNetworks().Get(ctx, blueCUDN, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// A selector widened on the host to every namespace of the tenant
		// (onto the latest version: OVN-Kubernetes writes the CUDN too).
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := udn.K8sV1().ClusterUserDefinedNetworks().Get(ctx, blueCUDN, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Spec.NamespaceSelector = metav1.LabelSelector{MatchLabels: map[string]string{hostnames.TenantLabel: tn.Name}}
			_, err = udn.K8sV1().ClusterUserDefinedNetworks().Update(ctx, cur, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		fixed := waitCUDN(ctx, t, udn, tn, blue, 1400, 27)
		if fixed.UID != cudn.UID {
			t.Errorf("the selector was repaired by replacing the network (UID %s -> %s); an update does", cudn.UID, fixed.UID)
		}
		// Deleted on the host: made again.
		uid := cudn.UID
		if err := udn.K8sV1().ClusterUserDefinedNetworks().Delete(ctx, blueCUDN, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil {
			t.Fatal(err)
		}
		again := waitCUDN(ctx, t, udn, tn, blue, 1400, 27)
		if again.UID == uid {
			t.Fatal("the deleted network is still there")
		}
	})

	t.Run("host name taken by someone else", func(t *testing.T) {
		takenName := hostnames.ClusterUserDefinedNetwork(tn.UID, "taken")
		foreign := &udnv1.ClusterUserDefinedNetwork{
			ObjectMeta: metav1.ObjectMeta{Name: takenName, Labels: map[string]string{"owner": "provider"}},
			Spec: udnv1.ClusterUserDefinedNetworkSpec{
				NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"provider": "only"}},
				Network: udnv1.NetworkSpec{Topology: udnv1.NetworkTopologyLayer2,
					Layer2: &udnv1.Layer2Config{Role: udnv1.NetworkRolePrimary, Subnets: udnv1.DualStackCIDRs{"192.168.250.0/24"}}},
			},
		}
		created, err := udn.K8sV1().ClusterUserDefinedNetworks().Create(ctx, foreign, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = udn.K8sV1().ClusterUserDefinedNetworks().Delete(context.Background(), takenName, metav1.DeleteOptions{})
		})
		n := &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: "taken"},
			Spec: tenantv1alpha1.NetworkSpec{Topology: tenantv1alpha1.NetworkTopologyLayer2, Subnets: []string{prefix + ".200.0/24"}}}
		if _, err := nina.TenantV1alpha1().Networks().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitNetwork(ctx, t, nina, "taken", "HostNameTaken", func(n *tenantv1alpha1.Network) bool {
			return conditionIs(n.Status.Conditions, tenantv1alpha1.ConditionHostSynced, metav1.ConditionFalse, "HostNameTaken")
		})
		eventually(ctx, t, syncTimeout, "Tenant not Ready because of Network taken", func(ctx context.Context) (bool, string) {
			got, err := admin.TenantV1alpha1().Tenants().Get(ctx, tn.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			c := meta.FindStatusCondition(got.Status.Conditions, tenantv1alpha1.ConditionHostSynced)
			return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "Network taken"), describeTenant(got)
		})
		still, err := udn.K8sV1().ClusterUserDefinedNetworks().Get(ctx, takenName, metav1.GetOptions{})
		if err != nil || still.UID != created.UID || !apiequality.Semantic.DeepEqual(still.Spec, created.Spec) || still.Labels[hostnames.TenantLabel] != "" {
			t.Fatalf("the foreign network was touched: %v %+v", err, still)
		}
		// Once the provider removes it, the Network gets its name.
		if err := udn.K8sV1().ClusterUserDefinedNetworks().Delete(ctx, takenName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		taken := waitNetwork(ctx, t, nina, "taken", "synced", networkSynced)
		waitCUDN(ctx, t, udn, tn, taken, 0, 0)
		waitTenantReady(ctx, t, admin, tn.Name)
	})

	t.Run("deleting a Network", func(t *testing.T) {
		// In use by Namespace web: refused, naming it.
		err := nina.TenantV1alpha1().Networks().Delete(ctx, "blue", metav1.DeleteOptions{})
		if st := apiStatus(t, "delete of a Network in use", err); st.Code != 409 || !slices.Contains(causeFields(st), "namespaces web") {
			t.Fatalf("delete of Network blue in use: %d %q causes %v, want 409 naming namespaces web", st.Code, st.Message, causeFields(st))
		}
		if err := nina.TenantV1alpha1().Namespaces().Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(ctx, t, syncTimeout, "Namespace web gone", func(ctx context.Context) (bool, string) {
			_, err := nina.TenantV1alpha1().Namespaces().Get(ctx, "web", metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		kubectl(ctx, t, networkUser, "patch", "network", "blue", "--type=merge", "-p", `{"spec":{"natGateway":{"enabled":true}}}`)
		waitNetwork(ctx, t, nina, "blue", "NAT gateway on", func(n *tenantv1alpha1.Network) bool {
			return n.Status.NATGatewayIP != "" && networkSynced(n)
		})
		eventually(ctx, t, syncTimeout, "EgressIP "+natName, func(ctx context.Context) (bool, string) {
			_, err := eip.K8sV1().EgressIPs().Get(ctx, natName, metav1.GetOptions{})
			return err == nil, fmt.Sprint(err)
		})
		kubectl(ctx, t, networkUser, "delete", "network", "blue")
		eventually(ctx, t, syncTimeout, "host objects of Network blue gone", func(ctx context.Context) (bool, string) {
			_, err1 := udn.K8sV1().ClusterUserDefinedNetworks().Get(ctx, blueCUDN, metav1.GetOptions{})
			_, err2 := eip.K8sV1().EgressIPs().Get(ctx, natName, metav1.GetOptions{})
			return apierrors.IsNotFound(err1) && apierrors.IsNotFound(err2), fmt.Sprintf("cudn: %v; egressIP: %v", err1, err2)
		})
		// Whatever is left of the tenant on the host belongs to a live object.
		sel := labels.SelectorFromSet(labels.Set{hostnames.TenantLabel: tn.Name}).String()
		cudns, err := udn.K8sV1().ClusterUserDefinedNetworks().List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range cudns.Items {
			names = append(names, c.Labels[hostnames.NetworkLabel])
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"default", "taken"}) {
			t.Fatalf("the tenant's host networks are of Networks %v, want [default taken]", names)
		}
	})
}

// waitPublicIPsInUse waits for the Tenant's status.usage.publicIPs, as
// its member reads it, to be want.
func waitPublicIPsInUse(ctx context.Context, t *testing.T, member clientset.Interface, name string, want int32) {
	t.Helper()
	eventually(ctx, t, syncTimeout, fmt.Sprintf("tenant %s's status.usage.publicIPs %d", name, want), func(ctx context.Context) (bool, string) {
		got, err := member.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return got.Status.Usage.PublicIPs == want, fmt.Sprint(got.Status.Usage.PublicIPs)
	})
}
