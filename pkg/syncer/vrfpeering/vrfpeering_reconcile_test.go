package vrfpeering

import (
	"context"
	"testing"

	frrv1beta1 "github.com/metallb/frr-k8s/api/v1beta1"
	rav1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/routeadvertisements/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// TestReconcileVRFPeering drives the controller over fakes: the two host
// objects are made, OVN-Kubernetes' verdict and frr-k8s' sessions reach
// the status, a Network created again under the peered one's name leaves
// the peering Orphaned with its host objects removed, and a deleted
// peering's host objects go.
func TestReconcileVRFPeering(t *testing.T) {
	src, fakes := controllertest.NewSources(t)
	c, err := New(src, hostkinds.New(src))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"}}
	controllertest.Onboard(t, src, fakes, tn, &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "ns-uid"}})
	net := &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "net-uid", Labels: map[string]string{hostnames.TenantLabel: "acme"}},
		Spec: tenant.NetworkSpec{Subnets: []string{"10.0.0.0/24"}}}
	controllertest.Cache(t, src.Networks, "acme", "", net)
	p := &tenant.VRFPeering{
		ObjectMeta: metav1.ObjectMeta{Name: "peer", UID: "peer-uid", Generation: 1},
		Spec: tenant.VRFPeeringSpec{Tenant: "acme", Network: "default", ASN: 64512,
			Neighbors: []tenant.BGPNeighbor{{Address: "192.0.2.1", ASN: 65000}}},
		Status: tenant.VRFPeeringStatus{TenantUID: tn.UID, NetworkUID: net.UID},
	}
	fakes.VRFPeerings.Put("acme", "", p)
	controllertest.Cache(t, src.VRFPeerings, "acme", "", p)
	key := queue.Key{Tenant: "acme", Name: "peer"}
	name, cudn := HostName("peer"), hostnames.ClusterUserDefinedNetwork(tn.UID, "default")
	stored := func() *tenant.VRFPeering { return fakes.VRFPeerings.Stored("acme", "", "peer").(*tenant.VRFPeering) }
	condition := func(typ string) *metav1.Condition { return meta.FindStatusCondition(stored().Status.Conditions, typ) }
	reconcile := func() {
		t.Helper()
		if err := c.reconcile(ctx, key); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
	}
	cached := func(inf interface {
		GetByKey(string) (interface{}, bool, error)
	}, key string) bool {
		_, exists, _ := inf.GetByKey(key)
		return exists
	}
	frrKey := src.FRRNamespace + "/" + name

	reconcile()
	if _, err := fakes.RA.K8sV1().RouteAdvertisements().Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Fatalf("RouteAdvertisements: %v", err)
	}
	if _, err := fakes.Dynamic.Resource(controller.FRRConfigurations).Namespace(src.FRRNamespace).Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Fatalf("FRRConfiguration: %v", err)
	}
	if c := condition(tenant.ConditionHostSynced); c == nil || c.Status != metav1.ConditionTrue || stored().Status.VRF != cudn {
		t.Fatalf("after the first sync: vrf %q HostSynced %+v", stored().Status.VRF, c)
	}
	if c := condition(tenant.ConditionReady); c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonNotAccepted {
		t.Errorf("Ready before OVN-Kubernetes reported: %+v", c)
	}

	// OVN-Kubernetes accepts the RouteAdvertisements.
	controllertest.Eventually(t, "the RouteAdvertisements cached", func() bool { return cached(src.HostRouteAdvertisements.GetStore(), name) })
	ra, _ := fakes.RA.K8sV1().RouteAdvertisements().Get(ctx, name, metav1.GetOptions{})
	ra.Status.Conditions = []metav1.Condition{{Type: rav1.RouteAdvertisementsAccepted, Status: metav1.ConditionTrue, Reason: "Accepted", Message: "validated", LastTransitionTime: metav1.Now()}}
	if _, err := fakes.RA.K8sV1().RouteAdvertisements().UpdateStatus(ctx, ra, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the accepted RouteAdvertisements cached", func() bool {
		obj, _, _ := src.HostRouteAdvertisements.GetStore().GetByKey(name)
		return obj != nil && len(obj.(*rav1.RouteAdvertisements).Status.Conditions) == 1
	})
	// frr-k8s reports the session on one node.
	session := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "frrk8s.metallb.io/v1beta1", "kind": "BGPSessionState",
		"metadata": map[string]interface{}{"name": "node1-peer", "namespace": src.FRRNamespace},
		"status":   map[string]interface{}{"node": "node1", "peer": "192.0.2.1", "vrf": cudn, "bgpStatus": "Established"},
	}}
	if _, err := fakes.Dynamic.Resource(controller.BGPSessionStates).Namespace(src.FRRNamespace).Create(ctx, session, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the session cached", func() bool {
		return cached(src.HostBGPSessionStates.GetStore(), src.FRRNamespace+"/node1-peer")
	})
	reconcile()
	if c := condition(tenant.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Ready once accepted: %+v", c)
	}
	if n := stored().Status.Neighbors; len(n) != 1 || n[0].State != "Established" || n[0].Sessions != 1 || n[0].Established != 1 {
		t.Errorf("neighbors %+v, want one Established session", n)
	}

	// A second peering of the Network with another ASN (two creates
	// racing past the registry's check) is not realised while the first
	// exists.
	younger := p.DeepCopy()
	younger.Name, younger.UID, younger.CreationTimestamp = "peer2", "peer2-uid", metav1.Now()
	younger.Spec.ASN, younger.Spec.Neighbors[0].Address = 64600, "192.0.2.7"
	fakes.VRFPeerings.Put("acme", "", younger)
	controllertest.Cache(t, src.VRFPeerings, "acme", "", younger)
	if err := c.reconcile(ctx, queue.Key{Tenant: "acme", Name: "peer2"}); err != nil {
		t.Fatal(err)
	}
	st := fakes.VRFPeerings.Stored("acme", "", "peer2").(*tenant.VRFPeering)
	if c := meta.FindStatusCondition(st.Status.Conditions, tenant.ConditionHostSynced); c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonConflict {
		t.Errorf("HostSynced of a second peering of the network: %+v", c)
	}
	if _, err := fakes.RA.K8sV1().RouteAdvertisements().Get(ctx, HostName("peer2"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("RouteAdvertisements of the second peering: %v, want NotFound", err)
	}
	if err := src.VRFPeerings.GetStore().Delete(younger); err != nil {
		t.Fatal(err)
	}

	// A Network of that name created again is another one.
	controllertest.Eventually(t, "the FRRConfiguration cached", func() bool { return cached(src.HostFRRConfigurations.GetStore(), frrKey) })
	renewed := net.DeepCopy()
	renewed.UID = "net-uid-2"
	controllertest.Cache(t, src.Networks, "acme", "", renewed)
	reconcile()
	if c := condition(tenant.ConditionOrphaned); c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonNetworkGone {
		t.Errorf("Orphaned after the Network was created again: %+v", c)
	}
	if c := condition(tenant.ConditionReady); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Ready of an orphaned peering: %+v", c)
	}
	if _, err := fakes.RA.K8sV1().RouteAdvertisements().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("RouteAdvertisements of an orphaned peering: %v, want NotFound", err)
	}
	if _, err := fakes.Dynamic.Resource(controller.FRRConfigurations).Namespace(src.FRRNamespace).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("FRRConfiguration of an orphaned peering: %v, want NotFound", err)
	}

	// Bound again (the original Network back), then the peering deleted.
	controllertest.Cache(t, src.Networks, "acme", "", net)
	controllertest.Eventually(t, "the removals seen", func() bool {
		return !cached(src.HostRouteAdvertisements.GetStore(), name) && !cached(src.HostFRRConfigurations.GetStore(), frrKey)
	})
	reconcile()
	controllertest.Eventually(t, "the host objects made again and cached", func() bool {
		return cached(src.HostRouteAdvertisements.GetStore(), name) && cached(src.HostFRRConfigurations.GetStore(), frrKey)
	})
	if err := src.VRFPeerings.GetStore().Delete(p); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if _, err := fakes.RA.K8sV1().RouteAdvertisements().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("RouteAdvertisements of a deleted peering: %v, want NotFound", err)
	}
	if _, err := fakes.Dynamic.Resource(controller.FRRConfigurations).Namespace(src.FRRNamespace).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("FRRConfiguration of a deleted peering: %v, want NotFound", err)
	}
}

// TestSessions checks the summary of a neighbor's sessions: per node,
// matched by VRF and peer address.
func TestSessions(t *testing.T) {
	state := func(vrf, peer, bgp string) frrv1beta1.BGPSessionState {
		return frrv1beta1.BGPSessionState{Status: frrv1beta1.BGPSessionStateStatus{VRF: vrf, Peer: peer, BGPStatus: bgp}}
	}
	for _, c := range []struct {
		name  string
		have  []frrv1beta1.BGPSessionState
		state string
		n, up int32
	}{
		{"none reported", nil, "Unknown", 0, 0},
		{"all established", []frrv1beta1.BGPSessionState{state("v", "192.0.2.1", "Established"), state("v", "192.0.2.1", "Established")}, "Established", 2, 2},
		{"one down", []frrv1beta1.BGPSessionState{state("v", "192.0.2.1", "Established"), state("v", "192.0.2.1", "Active")}, "Active", 2, 1},
		{"other VRF and peer ignored", []frrv1beta1.BGPSessionState{state("w", "192.0.2.1", "Idle"), state("v", "192.0.2.9", "Idle")}, "Unknown", 0, 0},
	} {
		got := Sessions(c.have, "v", "192.0.2.1")
		if got.State != c.state || got.Sessions != c.n || got.Established != c.up {
			t.Errorf("%s: %+v, want %s %d/%d", c.name, got, c.state, c.up, c.n)
		}
	}
}
