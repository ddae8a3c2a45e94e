package network

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	cncv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/clusternetworkconnect/v1"
	ovntypes "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/types"
	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
)

func TestHostSubnetLength(t *testing.T) {
	for _, c := range []struct {
		subnets []string
		want    int32
	}{
		{[]string{"10.0.0.0/8"}, 24},
		{[]string{"10.42.0.0/16", "10.43.0.0/20"}, 24},
		{[]string{"10.42.0.0/23"}, 24},
		{[]string{"10.42.0.0/24"}, 25},
		{[]string{"10.42.0.0/16", "10.43.0.0/26"}, 27},
		{[]string{"10.42.0.0/30"}, 31},
		{[]string{"not-a-cidr", "10.42.0.0/28"}, 29},
	} {
		if got := HostSubnetLength(c.subnets); got != c.want {
			t.Errorf("HostSubnetLength(%v) = %d, want %d", c.subnets, got, c.want)
		}
	}
}

func testObjects(topology tenant.NetworkTopology, subnets ...string) (*tenant.Tenant, *tenant.Network) {
	t := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"}}
	n := &tenant.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "blue", UID: "network-uid"},
		Spec:       tenant.NetworkSpec{Topology: topology, Subnets: subnets},
	}
	return t, n
}

func TestClusterUserDefinedNetwork(t *testing.T) {
	tn, n := testObjects(tenant.NetworkTopologyLayer2, "10.42.0.0/24")
	cudn := ClusterUserDefinedNetwork(tn, n)
	if cudn.Name != hostnames.ClusterUserDefinedNetwork("tenant-uid", "blue") || len(cudn.Name) > 15 {
		t.Errorf("name %q", cudn.Name)
	}
	if !Marks(tn, n).On(cudn) || cudn.Labels[hostnames.NetworkLabel] != "blue" {
		t.Errorf("marks: labels %v annotations %v", cudn.Labels, cudn.Annotations)
	}
	sel := cudn.Spec.NamespaceSelector
	if len(sel.MatchExpressions) != 0 || len(sel.MatchLabels) != 2 ||
		sel.MatchLabels[hostnames.TenantLabel] != "acme" || sel.MatchLabels[hostnames.HostNetworkLabel] != cudn.Name {
		t.Errorf("selector %v", sel)
	}
	l2 := cudn.Spec.Network.Layer2
	if cudn.Spec.Network.Topology != udnv1.NetworkTopologyLayer2 || l2 == nil || cudn.Spec.Network.Layer3 != nil ||
		l2.Role != udnv1.NetworkRolePrimary || len(l2.Subnets) != 1 || l2.Subnets[0] != "10.42.0.0/24" || l2.MTU != 0 {
		t.Errorf("layer2 network %+v", cudn.Spec.Network)
	}

	tn, n = testObjects(tenant.NetworkTopologyLayer3, "10.42.0.0/20", "10.42.64.0/26")
	mtu := int32(9000)
	n.Spec.MTU = &mtu
	l3 := ClusterUserDefinedNetwork(tn, n).Spec.Network.Layer3
	if l3 == nil || l3.Role != udnv1.NetworkRolePrimary || l3.MTU != 9000 || len(l3.Subnets) != 2 {
		t.Fatalf("layer3 %+v", l3)
	}
	for _, s := range l3.Subnets {
		if s.HostSubnet != 27 {
			t.Errorf("subnet %s hostSubnet %d, want 27 for all", s.CIDR, s.HostSubnet)
		}
	}
}

// TestServiceNetworkLabel: only a Shared network carries its tenant's
// service network label, valued with the name of the tenant's connection,
// which selects it (and never a network of another tenant, or of a former
// tenant of the same name).
func TestServiceNetworkLabel(t *testing.T) {
	tn, n := testObjects(tenant.NetworkTopologyLayer2, "10.42.0.0/24")
	for _, mode := range []tenant.ServiceNetworkMode{"", tenant.ServiceNetworkPrivate} {
		n.Spec.ServiceNetwork = mode
		if v, ok := ClusterUserDefinedNetwork(tn, n).Labels[hostnames.ServiceNetworkLabel]; ok {
			t.Errorf("serviceNetwork %q: the host network carries %s=%s", mode, hostnames.ServiceNetworkLabel, v)
		}
	}
	n.Spec.ServiceNetwork = tenant.ServiceNetworkShared
	cudn := ClusterUserDefinedNetwork(tn, n)
	if got := cudn.Labels[hostnames.ServiceNetworkLabel]; got != hostnames.ServiceNetworkConnect(tn.UID) {
		t.Fatalf("service network label %q, want %q", got, hostnames.ServiceNetworkConnect(tn.UID))
	}
	spec := ServiceNetworkConnectSpec(tn, netip.MustParsePrefix("100.72.3.0/24"), 28)
	if len(spec.NetworkSelectors) != 1 || spec.NetworkSelectors[0].NetworkSelectionType != ovntypes.ClusterUserDefinedNetworks ||
		spec.NetworkSelectors[0].ClusterUserDefinedNetworkSelector == nil {
		t.Fatalf("selectors %+v", spec.NetworkSelectors)
	}
	if len(spec.Connectivity) != 1 || spec.Connectivity[0] != cncv1.ServiceNetwork ||
		len(spec.ConnectSubnets) != 1 || spec.ConnectSubnets[0].CIDR != "100.72.3.0/24" || spec.ConnectSubnets[0].NetworkPrefix != 28 {
		t.Fatalf("connectivity %v, connect subnets %+v", spec.Connectivity, spec.ConnectSubnets)
	}
	sel, err := metav1.LabelSelectorAsSelector(&spec.NetworkSelectors[0].ClusterUserDefinedNetworkSelector.NetworkSelector)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(cudn.Labels)) {
		t.Errorf("the connection does not select the tenant's Shared network %v", cudn.Labels)
	}
	n.Spec.ServiceNetwork = tenant.ServiceNetworkPrivate
	if sel.Matches(labels.Set(ClusterUserDefinedNetwork(tn, n).Labels)) {
		t.Error("the connection selects a Private network")
	}
	n.Spec.ServiceNetwork = tenant.ServiceNetworkShared
	for _, other := range []*tenant.Tenant{
		{ObjectMeta: metav1.ObjectMeta{Name: "globex", UID: "globex-uid"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "a-new-acme"}},
	} {
		if theirs := ClusterUserDefinedNetwork(other, n); sel.Matches(labels.Set(theirs.Labels)) {
			t.Errorf("acme's connection selects the Shared network of tenant %s (UID %s): %v", other.Name, other.UID, theirs.Labels)
		}
	}
}

func TestNATGatewayEgressIP(t *testing.T) {
	tn, n := testObjects(tenant.NetworkTopologyLayer2, "10.42.0.0/24")
	e := NATGatewayEgressIP(tn, n, "203.0.113.10")
	cudn := hostnames.ClusterUserDefinedNetwork(tn.UID, n.Name)
	if e.Name != cudn+"-nat" || len(e.Spec.EgressIPs) != 1 || e.Spec.EgressIPs[0] != "203.0.113.10" {
		t.Errorf("EgressIP %s %v", e.Name, e.Spec.EgressIPs)
	}
	if e.Spec.NamespaceSelector.MatchLabels[hostnames.HostNetworkLabel] != cudn || !Marks(tn, n).On(e) {
		t.Errorf("EgressIP selector %v labels %v", e.Spec.NamespaceSelector, e.Labels)
	}
}

func TestMirrorConditions(t *testing.T) {
	cudn := &udnv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: "tn0123456789abc"}}
	var conds []metav1.Condition
	if !mirrorConditions(&conds, 3, cudn, 0) || !conditionIs(conds, tenant.ConditionNetworkCreated, metav1.ConditionUnknown, ReasonNetworkPending) {
		t.Fatalf("nothing reported: %v", conds)
	}
	cudn.Status.Conditions = []metav1.Condition{
		{Type: "NetworkCreated", Status: metav1.ConditionTrue, Reason: "NetworkAttachmentDefinitionCreated", Message: "ok"},
		{Type: "Ready", Status: metav1.ConditionFalse, Reason: "NotOurs"},                     // the syncer's own type: not mirrored
		{Type: "Bad Type", Status: metav1.ConditionTrue, Reason: "X"},                         // invalid type: dropped
		{Type: "Other", Status: metav1.ConditionFalse, Reason: "not valid!", Message: "kept"}, // invalid reason: replaced
		{Type: "Long", Status: metav1.ConditionTrue, Reason: "L", Message: strings.Repeat("m", maxMessage+10)},
	}
	mirrorConditions(&conds, 3, cudn, 0)
	if !conditionIs(conds, tenant.ConditionNetworkCreated, metav1.ConditionTrue, "NetworkAttachmentDefinitionCreated") ||
		!conditionIs(conds, "Other", metav1.ConditionFalse, "Reported") {
		t.Errorf("mirrored %v", conds)
	}
	if meta.FindStatusCondition(conds, "Ready") != nil || meta.FindStatusCondition(conds, "Bad Type") != nil {
		t.Errorf("mirrored what it must not: %v", conds)
	}
	if c := meta.FindStatusCondition(conds, "Long"); c == nil || len(c.Message) != maxMessage || c.ObservedGeneration != 3 {
		t.Errorf("long message not cut: %v", c)
	}
	if mirrorConditions(&conds, 3, cudn, 0) {
		t.Error("mirroring the same conditions again reported a change")
	}
}

func conditionIs(conds []metav1.Condition, typ string, status metav1.ConditionStatus, reason string) bool {
	c := meta.FindStatusCondition(conds, typ)
	return c != nil && c.Status == status && c.Reason == reason
}

// clusterManagerReport is cluster-manager's NetworkCreated message for a
// network rendered into hostNamespaces, as it writes it.
func clusterManagerReport(hostNamespaces []string) string {
	return createdReport + strings.Join(hostNamespaces, ", ") + "]"
}

// TestUnreportable: a network is unreportable exactly when cluster-manager's
// report naming its host namespaces is longer than a condition's message
// may be; every count of names up to reportable fits, whatever their
// length.
func TestUnreportable(t *testing.T) {
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "0b6f3c1e-8a41-4d0c-9d52-7c1f0a3e5b21"}}
	names := func(count, length int) (namespaces, hosts []string) {
		for i := 0; i < count; i++ {
			ns := fmt.Sprintf("n%0*d", length-1, i)
			namespaces = append(namespaces, ns)
			hosts = append(hosts, hostnames.Namespace(tn.Name, tn.UID, ns))
		}
		return namespaces, hosts
	}
	if _, hosts := names(1, 63); len(hosts[0]) != 63 {
		t.Fatalf("the longest host namespace name is %d characters, want 63", len(hosts[0]))
	}
	for _, c := range []struct{ count, length int }{
		{1, 10}, {reportable, 63}, {reportable + 1, 63}, {reportable + 5, 63},
		{reportable + 1, 40}, {1000, 12}, {1400, 12}, {2000, 12},
	} {
		namespaces, hosts := names(c.count, c.length)
		fits := len(clusterManagerReport(hosts)) <= maxMessage
		got := unreportable(tn, namespaces)
		if fits && got != 0 || !fits && got != c.count {
			t.Errorf("%d namespaces of %d characters (report %d bytes): unreportable %d", c.count, c.length, len(clusterManagerReport(hosts)), got)
		}
	}
	// The bound is tight: one more of the longest names does not fit.
	_, hosts := names(reportable+1, 63)
	if len(clusterManagerReport(hosts[:reportable])) > maxMessage || len(clusterManagerReport(hosts)) <= maxMessage {
		t.Errorf("reportable %d: reports of %d and %d bytes", reportable, len(clusterManagerReport(hosts[:reportable])), len(clusterManagerReport(hosts)))
	}
}

// TestMirrorUnreportable: past what cluster-manager can report, the
// Network's NetworkCreated keeps the last status and reason reported and
// says why nothing more comes; before any report it stays Unknown, saying
// the same.
func TestMirrorUnreportable(t *testing.T) {
	cudn := &udnv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: "tn0123456789abc"}}
	var conds []metav1.Condition
	mirrorConditions(&conds, 2, cudn, 600)
	if c := meta.FindStatusCondition(conds, tenant.ConditionNetworkCreated); c == nil || c.Status != metav1.ConditionUnknown ||
		!strings.Contains(c.Message, "cannot report on ClusterUserDefinedNetwork tn0123456789abc") {
		t.Errorf("unreported and unreportable: %+v", c)
	}
	cudn.Status.Conditions = []metav1.Condition{{Type: "NetworkCreated", Status: metav1.ConditionTrue, Reason: "NetworkAttachmentDefinitionCreated",
		Message: clusterManagerReport([]string{"acme-5a1b2c-a", "acme-5a1b2c-b"})}}
	if !mirrorConditions(&conds, 2, cudn, 600) {
		t.Fatal("the report changed nothing")
	}
	c := meta.FindStatusCondition(conds, tenant.ConditionNetworkCreated)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != "NetworkAttachmentDefinitionCreated" {
		t.Fatalf("NetworkCreated %+v, want the reported True", c)
	}
	for _, want := range []string{"these 600 do not fit in the 32768 bytes", "NetworkAttached", "Its last report stands (True, NetworkAttachmentDefinitionCreated)"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("NetworkCreated message %q, want %q in it", c.Message, want)
		}
	}
	if mirrorConditions(&conds, 2, cudn, 600) {
		t.Error("mirroring the same report again reported a change")
	}
	if !mirrorConditions(&conds, 2, cudn, 0) || meta.FindStatusCondition(conds, tenant.ConditionNetworkCreated).Message != cudn.Status.Conditions[0].Message {
		t.Errorf("back within the report: %+v", conds)
	}
}
