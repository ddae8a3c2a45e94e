package syncer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	frrv1beta1 "github.com/metallb/frr-k8s/api/v1beta1"
	rav1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/routeadvertisements/v1"
	raclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/routeadvertisements/v1/apis/clientset/versioned"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

var (
	frrGVR      = schema.GroupVersionResource{Group: "frrk8s.metallb.io", Version: "v1beta1", Resource: "frrconfigurations"}
	sessionsGVR = schema.GroupVersionResource{Group: "frrk8s.metallb.io", Version: "v1beta1", Resource: "bgpsessionstates"}
)

func waitPeering(ctx context.Context, t *testing.T, cs clientset.Interface, name, what string, ok func(*tenantv1alpha1.VRFPeering) bool) *tenantv1alpha1.VRFPeering {
	t.Helper()
	var p *tenantv1alpha1.VRFPeering
	eventually(ctx, t, slowTimeout, "VRFPeering "+name+" "+what, func(ctx context.Context) (bool, string) {
		got, err := cs.TenantV1alpha1().VRFPeerings().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		p = got
		return ok(got), fmt.Sprintf("vrf %q neighbors %+v %s", got.Status.VRF, got.Status.Neighbors, describeConditions(got.Status.Conditions))
	})
	return p
}

// TestVRFPeering peers a tenant Network's VRF with provider routers: the
// host objects the real CRDs accept, OVN-Kubernetes' and frr-k8s' reports
// (written here as they would write them) reaching the peering's status,
// drift repair, the 409 on the Network, the offboarding report, the 422s,
// and the cleanup on delete.
func TestVRFPeering(t *testing.T) {
	ctx := framework.Context(t, 5*slowTimeout)
	name := uniqueName(t)
	tn := onboard(ctx, t, tenantSpec{name: name, users: []string{peeringUser}, publicIPs: 1})
	admin := tenantClient(t, stack.AdminUser)
	member := tenantClient(t, peeringUser)
	_, dyn := hostClients(t)
	ra, err := raclientset.NewForConfig(theStack().RESTConfig(stack.AdminUser))
	if err != nil {
		t.Fatal(err)
	}
	def := waitNetwork(ctx, t, member, "default", "synced", networkSynced)
	cudn := hostnames.ClusterUserDefinedNetwork(tn.UID, def.Name)
	hostName := hostnames.VRFPeering(name)

	peering := &tenantv1alpha1.VRFPeering{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: tenantv1alpha1.VRFPeeringSpec{
			Tenant: name, Network: "default", ASN: 64512,
			Neighbors: []tenantv1alpha1.BGPNeighbor{{
				Address: "192.0.2.1", ASN: 65000, Port: ptrTo[int32](1179), PasswordSecret: "router-1",
				HoldTime: &metav1.Duration{Duration: 9 * time.Second}, KeepaliveTime: &metav1.Duration{Duration: 3 * time.Second}, BFDProfile: "fast",
			}, {Address: "192.0.2.2", ASN: 65000}},
			Receive: &tenantv1alpha1.VRFPeeringReceive{Prefixes: []string{"172.16.0.0/12"}, DefaultRoute: true},
		},
	}

	t.Run("refused with 422", func(t *testing.T) {
		for _, c := range []struct {
			what  string
			edit  func(p *tenantv1alpha1.VRFPeering)
			field string
		}{
			{"missing tenant", func(p *tenantv1alpha1.VRFPeering) { p.Spec.Tenant = "no-such-tenant" }, "spec.tenant"},
			{"missing network", func(p *tenantv1alpha1.VRFPeering) { p.Spec.Network = "nope" }, "spec.network"},
			{"advertise outside the network", func(p *tenantv1alpha1.VRFPeering) { p.Spec.Advertise = []string{"10.255.255.0/24"} }, "spec.advertise[0]"},
			{"neighbor on the tenant's public IP", func(p *tenantv1alpha1.VRFPeering) { p.Spec.Neighbors[1].Address = tn.Status.PublicIPs[0] }, "spec.neighbors[1].address"},
			{"receive another tenant's block", func(p *tenantv1alpha1.VRFPeering) { p.Spec.Receive.Prefixes = []string{"10.0.0.0/8"} }, "spec.receive.prefixes[0]"},
			{"AS_TRANS", func(p *tenantv1alpha1.VRFPeering) { p.Spec.ASN = 23456 }, "spec.asn"},
		} {
			bad := peering.DeepCopy()
			bad.Name = name + "-bad"
			c.edit(bad)
			_, err := admin.TenantV1alpha1().VRFPeerings().Create(ctx, bad, metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) || !slices.Contains(causeFields(apiStatus(t, c.what, err)), c.field) {
				t.Errorf("%s: %v, want 422 on %s", c.what, err, c.field)
			}
		}
	})

	if _, err := admin.TenantV1alpha1().VRFPeerings().Create(ctx, peering, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.TenantV1alpha1().VRFPeerings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	var frr frrv1beta1.FRRConfiguration
	eventually(ctx, t, 30*time.Second, "the FRRConfiguration and RouteAdvertisements exist", func(ctx context.Context) (bool, string) {
		u, err := dyn.Resource(frrGVR).Namespace(stack.FRRNamespace).Get(ctx, hostName, metav1.GetOptions{})
		if err != nil {
			p, perr := admin.TenantV1alpha1().VRFPeerings().Get(ctx, name, metav1.GetOptions{})
			if perr != nil {
				return false, err.Error() + "; " + perr.Error()
			}
			return false, fmt.Sprintf("%v; peering bound to %q/%q: %s", err, p.Status.TenantUID, p.Status.NetworkUID, describeConditions(p.Status.Conditions))
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &frr); err != nil {
			return false, err.Error()
		}
		_, err = ra.K8sV1().RouteAdvertisements().Get(ctx, hostName, metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	r, err := ra.K8sV1().RouteAdvertisements().Get(ctx, hostName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Spec.TargetVRF != "auto" || !slices.Equal(r.Spec.Advertisements, []rav1.AdvertisementType{rav1.PodNetwork}) ||
		len(r.Spec.NetworkSelectors) != 1 || r.Spec.NetworkSelectors[0].ClusterUserDefinedNetworkSelector == nil ||
		r.Spec.NetworkSelectors[0].ClusterUserDefinedNetworkSelector.NetworkSelector.MatchLabels[hostnames.HostNetworkLabel] != cudn {
		t.Errorf("RouteAdvertisements spec %+v; want targetVRF auto, PodNetwork, CUDN %s", r.Spec, cudn)
	}
	// The selectors select exactly the peered network and this FRRConfiguration.
	udn, _ := ovnClients(t)
	cudnObj, err := udn.K8sV1().ClusterUserDefinedNetworks().Get(ctx, cudn, metav1.GetOptions{})
	if err != nil || cudnObj.Labels[hostnames.HostNetworkLabel] != cudn {
		t.Errorf("CUDN %s labels: %v %v", cudn, err, cudnObj)
	}
	for k, v := range r.Spec.FRRConfigurationSelector.MatchLabels {
		if frr.Labels[k] != v {
			t.Errorf("the RouteAdvertisements' FRRConfiguration selector %v does not select %v", r.Spec.FRRConfigurationSelector.MatchLabels, frr.Labels)
		}
	}
	routers := frr.Spec.BGP.Routers
	if len(routers) != 1 || routers[0].VRF != cudn || routers[0].ASN != 64512 || !slices.Equal(routers[0].Prefixes, def.Spec.Subnets) || len(routers[0].Neighbors) != 2 {
		t.Fatalf("FRRConfiguration routers %+v; want one in VRF %s, ASN 64512, prefixes %v, two neighbors", routers, cudn, def.Spec.Subnets)
	}
	nb := routers[0].Neighbors[0]
	if nb.Address != "192.0.2.1" || nb.ASN != 65000 || nb.Port == nil || *nb.Port != 1179 || nb.PasswordSecret.Name != "router-1" ||
		nb.PasswordSecret.Namespace != stack.FRRNamespace || nb.HoldTime.Duration != 9*time.Second || nb.KeepaliveTime.Duration != 3*time.Second ||
		nb.BFDProfile != "fast" || nb.ToAdvertise.Allowed.Mode != frrv1beta1.AllowRestricted || !slices.Equal(nb.ToAdvertise.Allowed.Prefixes, def.Spec.Subnets) ||
		nb.ToReceive.Allowed.Mode != frrv1beta1.AllowRestricted || len(nb.ToReceive.Allowed.Prefixes) != 2 {
		t.Errorf("FRRConfiguration neighbor %+v", nb)
	}
	for _, nb := range routers[0].Neighbors {
		if !nb.DisableMP {
			t.Errorf("FRRConfiguration neighbor %s uses multiprotocol BGP, which OVN-Kubernetes refuses", nb.Address)
		}
	}
	// OVN-Kubernetes' cluster-manager validates the RouteAdvertisements
	// against the network, the nodes and the FRRConfiguration, and accepts
	// it (it then generates a FRRConfiguration per node for frr-k8s).
	p := waitPeering(ctx, t, admin, name, "synced, accepted by OVN-Kubernetes, Ready", func(p *tenantv1alpha1.VRFPeering) bool {
		return p.Status.VRF == cudn && conditionIs(p.Status.Conditions, "HostSynced", metav1.ConditionTrue, "Synced") &&
			conditionIs(p.Status.Conditions, "Accepted", metav1.ConditionTrue, "Accepted") &&
			conditionIs(p.Status.Conditions, "Ready", metav1.ConditionTrue, "") &&
			conditionIs(p.Status.Conditions, "Orphaned", metav1.ConditionFalse, "Bound")
	})
	if p.Status.TenantUID != tn.UID || p.Status.NetworkUID != def.UID {
		t.Errorf("peering bound to %s/%s, want %s/%s", p.Status.TenantUID, p.Status.NetworkUID, tn.UID, def.UID)
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, "Accepted"); !strings.Contains(c.Message, "ovn-kubernetes cluster-manager validated") {
		t.Errorf("Accepted message %q is not OVN-Kubernetes'", c.Message)
	}
	generated, err := dyn.Resource(frrGVR).Namespace(stack.FRRNamespace).List(ctx, metav1.ListOptions{LabelSelector: "k8s.ovn.org/route-advertisements=" + hostName})
	if err != nil || len(generated.Items) != len(stack.SimulatedNodes) {
		t.Errorf("FRRConfigurations OVN-Kubernetes generated for %s: %v %v, want one per node (%d)", hostName, err, generated, len(stack.SimulatedNodes))
	}

	// setAccepted writes OVN-Kubernetes' verdict into the RouteAdvertisements
	// status: a stand-in for a refusal, which the syncer's host objects
	// never draw from the real cluster-manager (they select every node and
	// carry the network's VRF). cluster-manager writes the status only when
	// its verdict changes, so the injected one stands until it is put back.
	setAccepted := func(status metav1.ConditionStatus, reason, message string) {
		t.Helper()
		eventually(ctx, t, slowTimeout, "the RouteAdvertisements status written", func(ctx context.Context) (bool, string) {
			cur, err := ra.K8sV1().RouteAdvertisements().Get(ctx, hostName, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			meta.SetStatusCondition(&cur.Status.Conditions, metav1.Condition{Type: "Accepted", Status: status, Reason: reason, Message: message, ObservedGeneration: cur.Generation})
			_, err = ra.K8sV1().RouteAdvertisements().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
			return err == nil, fmt.Sprint(err)
		})
	}
	t.Run("OVN-Kubernetes' verdict reaches the peering", func(t *testing.T) {
		waitPeering(ctx, t, member, name, "accepted and Ready, as the tenant reads it", func(p *tenantv1alpha1.VRFPeering) bool {
			return conditionIs(p.Status.Conditions, "Accepted", metav1.ConditionTrue, "Accepted") && conditionIs(p.Status.Conditions, "Ready", metav1.ConditionTrue, "")
		})
		setAccepted(metav1.ConditionFalse, "ConfigurationError", "selected FRRConfigurations for node n1 don't match all selected networks")
		p := waitPeering(ctx, t, admin, name, "not accepted", func(p *tenantv1alpha1.VRFPeering) bool {
			return conditionIs(p.Status.Conditions, "Accepted", metav1.ConditionFalse, "ConfigurationError") && conditionIs(p.Status.Conditions, "Ready", metav1.ConditionFalse, "NotAccepted")
		})
		if c := meta.FindStatusCondition(p.Status.Conditions, "Ready"); !strings.Contains(c.Message, "don't match all selected networks") || !strings.Contains(c.Message, hostName) {
			t.Errorf("Ready message %q names neither the host object nor OVN-Kubernetes' reason", c.Message)
		}
		setAccepted(metav1.ConditionTrue, "Accepted", "ovn-kubernetes cluster-manager validated the resource")
	})

	t.Run("frr-k8s sessions reach the peering", func(t *testing.T) {
		sessions := dyn.Resource(sessionsGVR).Namespace(stack.FRRNamespace)
		for i, st := range []string{"Established", "Active"} {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("frrk8s.metallb.io/v1beta1")
			u.SetKind("BGPSessionState")
			u.SetName(fmt.Sprintf("%s-node%d", name, i))
			created, err := sessions.Create(ctx, u, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = sessions.Delete(context.Background(), created.GetName(), metav1.DeleteOptions{}) })
			created.Object["status"] = map[string]interface{}{"node": fmt.Sprintf("node%d", i), "peer": "192.0.2.1", "vrf": cudn, "bgpStatus": st, "bfdStatus": "Up"}
			if _, err := sessions.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		waitPeering(ctx, t, member, name, "reports the sessions", func(p *tenantv1alpha1.VRFPeering) bool {
			n := p.Status.Neighbors
			return len(n) == 2 && n[0].Address == "192.0.2.1" && n[0].Sessions == 2 && n[0].Established == 1 && n[0].State == "Active" &&
				n[1].State == "Unknown" && n[1].Sessions == 0
		})
		out := kubectl(ctx, t, peeringUser, "get", "vrfpeerings")
		if !strings.Contains(out, "1/2 Established") || !strings.Contains(out, cudn) {
			t.Errorf("kubectl get vrfpeerings as the tenant:\n%s\nwant the VRF and 1/2 Established", out)
		}
	})

	t.Run("drift repaired", func(t *testing.T) {
		// Onto the latest version: OVN-Kubernetes writes the status.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := ra.K8sV1().RouteAdvertisements().Get(ctx, hostName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Spec.FRRConfigurationSelector = metav1.LabelSelector{}
			_, err = ra.K8sV1().RouteAdvertisements().Update(ctx, cur, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if err := dyn.Resource(frrGVR).Namespace(stack.FRRNamespace).Delete(ctx, hostName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(ctx, t, slowTimeout, "both host objects repaired", func(ctx context.Context) (bool, string) {
			r, err := ra.K8sV1().RouteAdvertisements().Get(ctx, hostName, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			_, ferr := dyn.Resource(frrGVR).Namespace(stack.FRRNamespace).Get(ctx, hostName, metav1.GetOptions{})
			return len(r.Spec.FRRConfigurationSelector.MatchLabels) > 0 && ferr == nil, fmt.Sprintf("selector %v, frr %v", r.Spec.FRRConfigurationSelector, ferr)
		})
	})

	t.Run("peerings sharing the network's VRF", func(t *testing.T) {
		second := peering.DeepCopy()
		second.Name = name + "-2"
		second.Spec.ASN = 64600
		_, err := admin.TenantV1alpha1().VRFPeerings().Create(ctx, second, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !slices.Contains(causeFields(apiStatus(t, "another ASN", err)), "spec.asn") || !strings.Contains(err.Error(), "VRFPeering "+name) {
			t.Errorf("a second peering of the network with another ASN: %v, want 422 on spec.asn naming %s", err, name)
		}
		second.Spec.ASN = peering.Spec.ASN
		_, err = admin.TenantV1alpha1().VRFPeerings().Create(ctx, second, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !slices.Contains(causeFields(apiStatus(t, "same neighbor", err)), "spec.neighbors[0].address") {
			t.Errorf("a second peering of the network with the same neighbor: %v, want 422 on spec.neighbors[0].address", err)
		}
		// The same ASN and other neighbors: a router of its own in the same VRF, merged by frr-k8s.
		second.Spec.Neighbors = []tenantv1alpha1.BGPNeighbor{{Address: "192.0.2.3", ASN: 65001}}
		if _, err := admin.TenantV1alpha1().VRFPeerings().Create(ctx, second, metav1.CreateOptions{}); err != nil {
			t.Fatalf("a second peering of the network with the same ASN and another neighbor: %v", err)
		}
		waitPeering(ctx, t, admin, second.Name, "synced", func(p *tenantv1alpha1.VRFPeering) bool {
			return conditionIs(p.Status.Conditions, "HostSynced", metav1.ConditionTrue, "Synced") && p.Status.VRF == cudn
		})
		if err := admin.TenantV1alpha1().VRFPeerings().Delete(ctx, second.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("the peered network and the tenant cannot be deleted", func(t *testing.T) {
		err := member.TenantV1alpha1().Networks().Delete(ctx, "default", metav1.DeleteOptions{})
		if !apierrors.IsConflict(err) || !slices.Contains(causeFields(apiStatus(t, "delete network default", err)), "vrfpeerings "+name) {
			t.Errorf("member deletes the peered network: %v, want 409 naming vrfpeerings %s", err, name)
		}
		report := &tenantv1alpha1.OffboardingReport{}
		if err := admin.TenantV1alpha1().RESTClient().Get().Resource("tenants").Name(name).SubResource("offboarding").Do(ctx).Into(report); err != nil {
			t.Fatal(err)
		}
		if report.Ready || len(report.ProviderBlockers) != 1 || report.ProviderBlockers[0].Resource != "vrfpeerings" || report.ProviderBlockers[0].Name != name {
			t.Errorf("offboarding report %+v; want not ready, provider blocker vrfpeerings %s", report, name)
		}
	})

	t.Run("orphans removed", func(t *testing.T) {
		// Host objects with the full marks of a peering that does not exist.
		ghost := name + "-ghost"
		marks := hostnames.Marks{Tenant: name, TenantUID: tn.UID, KindLabel: hostnames.VRFPeeringLabel, Name: ghost, OwnerUID: randomUID(t)}
		ghostRA := r.DeepCopy()
		ghostRA.ObjectMeta = metav1.ObjectMeta{Name: hostnames.VRFPeering(ghost), Labels: marks.Labels(), Annotations: marks.Annotations()}
		if _, err := ra.K8sV1().RouteAdvertisements().Create(ctx, ghostRA, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ghostFRR := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "frrk8s.metallb.io/v1beta1", "kind": "FRRConfiguration",
			"spec": map[string]interface{}{"bgp": map[string]interface{}{"routers": []interface{}{map[string]interface{}{"asn": int64(64512), "vrf": cudn}}}},
		}}
		ghostFRR.SetName(hostnames.VRFPeering(ghost))
		ghostFRR.SetNamespace(stack.FRRNamespace)
		ghostFRR.SetLabels(marks.Labels())
		ghostFRR.SetAnnotations(marks.Annotations())
		if _, err := dyn.Resource(frrGVR).Namespace(stack.FRRNamespace).Create(ctx, ghostFRR, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(ctx, t, slowTimeout, "the orphaned RouteAdvertisements and FRRConfiguration deleted", func(ctx context.Context) (bool, string) {
			_, rerr := ra.K8sV1().RouteAdvertisements().Get(ctx, hostnames.VRFPeering(ghost), metav1.GetOptions{})
			_, ferr := dyn.Resource(frrGVR).Namespace(stack.FRRNamespace).Get(ctx, hostnames.VRFPeering(ghost), metav1.GetOptions{})
			return apierrors.IsNotFound(rerr) && apierrors.IsNotFound(ferr), fmt.Sprintf("%v; %v", rerr, ferr)
		})
		// The peering's own objects stay.
		if _, err := ra.K8sV1().RouteAdvertisements().Get(ctx, hostName, metav1.GetOptions{}); err != nil {
			t.Errorf("the peering's own RouteAdvertisements: %v", err)
		}
	})

	t.Run("delete removes the host objects", func(t *testing.T) {
		if err := admin.TenantV1alpha1().VRFPeerings().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(ctx, t, slowTimeout, "both host objects gone", func(ctx context.Context) (bool, string) {
			_, rerr := ra.K8sV1().RouteAdvertisements().Get(ctx, hostName, metav1.GetOptions{})
			_, ferr := dyn.Resource(frrGVR).Namespace(stack.FRRNamespace).Get(ctx, hostName, metav1.GetOptions{})
			return apierrors.IsNotFound(rerr) && apierrors.IsNotFound(ferr), fmt.Sprintf("%v; %v", rerr, ferr)
		})
	})
}

func ptrTo[T any](v T) *T { return &v }
