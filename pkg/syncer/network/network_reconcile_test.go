package network

import (
	"context"
	"errors"
	"testing"

	egressipv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// TestReconcileNetwork drives the Network controller over fakes through
// the life of a host network: made, repaired after an edit, replaced after
// an edit of its immutable spec, left alone when someone else holds its
// name, and removed once the Network is gone.
func TestReconcileNetwork(t *testing.T) {
	tn, n := testObjects(tenant.NetworkTopologyLayer2, "10.42.0.0/24")
	src, fakes, c, key := newReconcileTest(t, tn, n)
	ctx := context.Background()
	cudns := fakes.UDN.K8sV1().ClusterUserDefinedNetworks()
	name := hostnames.ClusterUserDefinedNetwork(tn.UID, n.Name)

	hostSynced := func() *metav1.Condition {
		t.Helper()
		stored := fakes.Networks.Stored(tn.Name, "", n.Name).(*tenant.Network)
		return meta.FindStatusCondition(stored.Status.Conditions, tenant.ConditionHostSynced)
	}
	cached := func(check func(*udnv1.ClusterUserDefinedNetwork) bool) func() bool {
		return func() bool {
			obj, exists, _ := src.HostCUDNs.GetStore().GetByKey(name)
			if !exists {
				return check(nil)
			}
			return check(obj.(*udnv1.ClusterUserDefinedNetwork))
		}
	}

	// Made.
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("first reconcile: %v", err)
	}
	have, err := cudns.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("host network not made: %v", err)
	}
	if !Marks(tn, n).On(have) || have.Spec.Network.Layer2 == nil || have.Spec.Network.Layer2.Subnets[0] != "10.42.0.0/24" {
		t.Errorf("host network %+v", have)
	}
	if cond := hostSynced(); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("HostSynced %+v, want True", cond)
	}
	if status := fakes.Networks.Stored(tn.Name, "", n.Name).(*tenant.Network).Status; status.HostNetwork != name {
		t.Errorf("status.hostNetwork %q, want %q", status.HostNetwork, name)
	}

	// Repaired: a namespace selector edited on the host.
	controllertest.Eventually(t, "the informer has the host network", cached(func(c *udnv1.ClusterUserDefinedNetwork) bool { return c != nil }))
	edited := have.DeepCopy()
	edited.Spec.NamespaceSelector.MatchLabels = map[string]string{"victim": "yes"}
	if _, err := cudns.Update(ctx, edited, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informer has the edit", cached(func(c *udnv1.ClusterUserDefinedNetwork) bool {
		return c != nil && c.Spec.NamespaceSelector.MatchLabels["victim"] == "yes"
	}))
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("reconcile after an edit: %v", err)
	}
	if have, _ = cudns.Get(ctx, name, metav1.GetOptions{}); have.Spec.NamespaceSelector.MatchLabels["victim"] != "" ||
		have.Spec.NamespaceSelector.MatchLabels[hostnames.TenantLabel] != tn.Name {
		t.Errorf("selector not repaired: %v", have.Spec.NamespaceSelector)
	}

	// Replaced: the network spec, immutable on the host, edited there.
	controllertest.Eventually(t, "the informer has the repair", cached(func(c *udnv1.ClusterUserDefinedNetwork) bool {
		return c != nil && c.Spec.NamespaceSelector.MatchLabels["victim"] == ""
	}))
	edited = have.DeepCopy()
	edited.Spec.Network.Layer2.Subnets = []udnv1.CIDR{"10.99.0.0/24"}
	if _, err := cudns.Update(ctx, edited, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informer has the spec edit", cached(func(c *udnv1.ClusterUserDefinedNetwork) bool {
		return c != nil && c.Spec.Network.Layer2.Subnets[0] == "10.99.0.0/24"
	}))
	var requeue *controller.RequeueError
	if err := c.Reconcile(ctx, key); !errors.As(err, &requeue) {
		t.Errorf("reconcile after a spec edit: %v, want a requeue while the network is replaced", err)
	}
	if _, err := cudns.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("edited host network not deleted: %v", err)
	}
	if cond := hostSynced(); cond == nil || cond.Reason != controller.ReasonWaiting {
		t.Errorf("HostSynced %+v, want reason Waiting", cond)
	}

	// Left alone: someone else's network under the name.
	controllertest.Eventually(t, "the informer saw the delete", cached(func(c *udnv1.ClusterUserDefinedNetwork) bool { return c == nil }))
	foreign := &udnv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cudns.Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Until the informer has it, a later wait for the network the syncer
	// makes again could be met by this one's late event.
	controllertest.Eventually(t, "the informer has someone else's network", cached(func(c *udnv1.ClusterUserDefinedNetwork) bool {
		return c != nil && !Marks(tn, n).On(c)
	}))
	if err := c.Reconcile(ctx, key); !errors.As(err, &requeue) {
		t.Errorf("reconcile with the name taken: %v, want a requeue", err)
	}
	if cond := hostSynced(); cond == nil || cond.Reason != controller.ReasonHostNameTaken {
		t.Errorf("HostSynced %+v, want reason HostNameTaken", cond)
	}
	if have, _ = cudns.Get(ctx, name, metav1.GetOptions{}); len(have.Labels) != 0 {
		t.Errorf("someone else's network was changed: %+v", have)
	}

	// Removed: the Network is gone, from storage and the informer.
	if err := cudns.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informer saw the delete", cached(func(c *udnv1.ClusterUserDefinedNetwork) bool { return c == nil }))
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("reconcile to make the network again: %v", err)
	}
	controllertest.Eventually(t, "the informer has the network again", cached(func(c *udnv1.ClusterUserDefinedNetwork) bool { return c != nil && Marks(tn, n).On(c) }))
	fakes.Networks.Remove(tn.Name, "", n.Name)
	controllertest.Uncache(t, src.Networks, tn.Name, "", n.Name)
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("reconcile of a deleted Network: %v", err)
	}
	if _, err := cudns.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("host network of a deleted Network not removed: %v", err)
	}
}

// TestReconcileNATGatewayAssignment follows a NAT gateway's EgressIP
// through OVN-Kubernetes' assignment: not Ready while no node holds the
// address; once it does, Ready, even though OVN-Kubernetes replaced the
// EgressIP's annotations as it marked it (the syncer still knows it as its
// own by its labels, and puts its annotations back).
func TestReconcileNATGatewayAssignment(t *testing.T) {
	tn, n := testObjects(tenant.NetworkTopologyLayer2, "10.42.0.0/24")
	n.Spec.NATGateway = &tenant.NATGateway{Enabled: true}
	n.Status.NATGatewayIP = "203.0.113.7"
	src, fakes, c, key := newReconcileTest(t, tn, n)
	ctx := context.Background()
	cudnName := hostnames.ClusterUserDefinedNetwork(tn.UID, n.Name)
	eipName := hostnames.NATGatewayEgressIP(cudnName)
	egressIPs := fakes.EgressIP.K8sV1().EgressIPs()
	condition := func(typ string) *metav1.Condition {
		t.Helper()
		stored := fakes.Networks.Stored(tn.Name, "", n.Name).(*tenant.Network)
		return meta.FindStatusCondition(stored.Status.Conditions, typ)
	}

	// The host network, created by OVN-Kubernetes.
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("first reconcile: %v", err)
	}
	cudn, err := fakes.UDN.K8sV1().ClusterUserDefinedNetworks().Get(ctx, cudnName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cudn.Status.Conditions = []metav1.Condition{{Type: tenant.ConditionNetworkCreated, Status: metav1.ConditionTrue,
		Reason: "NetworkAttachmentDefinitionCreated", Message: "created", LastTransitionTime: metav1.Now()}}
	if _, err := fakes.UDN.K8sV1().ClusterUserDefinedNetworks().UpdateStatus(ctx, cudn, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informers have the network created and the EgressIP", func() bool {
		obj, exists, _ := src.HostCUDNs.GetStore().GetByKey(cudnName)
		_, eipExists, _ := src.HostEgressIPs.GetStore().GetByKey(eipName)
		return exists && len(obj.(*udnv1.ClusterUserDefinedNetwork).Status.Conditions) == 1 && eipExists
	})
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("reconcile with the network created: %v", err)
	}
	if cond := condition(tenant.ConditionEgressAssigned); cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != hostkinds.ReasonEgressNotAssigned {
		t.Errorf("EgressAssigned %+v, want False, NotAssigned", cond)
	}
	if cond := condition(tenant.ConditionReady); cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != ReasonNATGatewayNotAssigned {
		t.Errorf("Ready %+v, want False, NATGatewayNotAssigned", cond)
	}

	// OVN-Kubernetes assigns the address, replacing the annotations.
	eip, err := egressIPs.Get(ctx, eipName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eip.Annotations = map[string]string{"k8s.ovn.org/egressip-mark": "50000"}
	eip.Status.Items = []egressipv1.EgressIPStatusItem{{Node: "worker-0", EgressIP: "203.0.113.7"}}
	if _, err := egressIPs.Update(ctx, eip, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informer has the assignment", func() bool {
		obj, exists, _ := src.HostEgressIPs.GetStore().GetByKey(eipName)
		return exists && len(obj.(*egressipv1.EgressIP).Status.Items) == 1
	})
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("reconcile with the address assigned: %v", err)
	}
	if cond := condition(tenant.ConditionEgressAssigned); cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != hostkinds.ReasonEgressAssigned {
		t.Errorf("EgressAssigned %+v, want True, Assigned", cond)
	}
	if cond := condition(tenant.ConditionReady); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("Ready %+v, want True", cond)
	}
	eip, _ = egressIPs.Get(ctx, eipName, metav1.GetOptions{})
	if !Marks(tn, n).On(eip) || eip.Annotations["k8s.ovn.org/egressip-mark"] != "50000" || len(eip.Status.Items) != 1 {
		t.Errorf("EgressIP after the repair: annotations %v status %+v; want the syncer's marks back beside OVN-Kubernetes' mark, the status kept", eip.Annotations, eip.Status)
	}
}

// newReconcileTest stores and caches Tenant tn and its Network n (given
// the tenant label) in fakes, and returns the controller over them and n's
// key.
func newReconcileTest(t *testing.T, tn *tenant.Tenant, n *tenant.Network) (*controller.Sources, *controllertest.Fakes, *Controller, queue.Key) {
	t.Helper()
	src, fakes := controllertest.NewSources(t)
	c, err := New(src, hostkinds.New(src))
	if err != nil {
		t.Fatal(err)
	}
	n.Labels = map[string]string{hostnames.TenantLabel: tn.Name}
	fakes.Tenants.Put("", "", tn)
	controllertest.Cache(t, src.Tenants, tn.Name, "", tn)
	fakes.Networks.Put(tn.Name, "", n)
	controllertest.Cache(t, src.Networks, tn.Name, "", n)
	return src, fakes, c, queue.Key{Tenant: tn.Name, Name: n.Name}
}
