package network

import (
	"strings"
	"testing"

	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	if !mirrorConditions(&conds, 3, cudn) || !conditionIs(conds, tenant.ConditionNetworkCreated, metav1.ConditionUnknown, ReasonNetworkPending) {
		t.Fatalf("nothing reported: %v", conds)
	}
	cudn.Status.Conditions = []metav1.Condition{
		{Type: "NetworkCreated", Status: metav1.ConditionTrue, Reason: "NetworkAttachmentDefinitionCreated", Message: "ok"},
		{Type: "Ready", Status: metav1.ConditionFalse, Reason: "NotOurs"},                     // the syncer's own type: not mirrored
		{Type: "Bad Type", Status: metav1.ConditionTrue, Reason: "X"},                         // invalid type: dropped
		{Type: "Other", Status: metav1.ConditionFalse, Reason: "not valid!", Message: "kept"}, // invalid reason: replaced
		{Type: "Long", Status: metav1.ConditionTrue, Reason: "L", Message: strings.Repeat("m", maxMessage+10)},
	}
	mirrorConditions(&conds, 3, cudn)
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
	if mirrorConditions(&conds, 3, cudn) {
		t.Error("mirroring the same conditions again reported a change")
	}
}

func conditionIs(conds []metav1.Condition, typ string, status metav1.ConditionStatus, reason string) bool {
	c := meta.FindStatusCondition(conds, typ)
	return c != nil && c.Status == status && c.Reason == reason
}
