package floatingip

import (
	"context"
	"errors"
	"strings"
	"testing"

	egressipv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	corev1 "k8s.io/api/core/v1"
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

// TestReconcileFloatingIP drives the FloatingIP controller over fakes: a
// Pod target that does not exist is TargetNotFound and looked for again;
// once it exists it is labelled, the EgressIP and the Service are made,
// and the FloatingIP is Associated when MetalLB (here, the test) assigns
// its address; without its target the host objects go, and so they do when
// the FloatingIP is gone. The address it holds is named in the public DNS
// zone throughout, and no longer once the zone is gone.
func TestReconcileFloatingIP(t *testing.T) {
	src, fakes := controllertest.NewSources(t)
	c, err := New(src, hostkinds.New(src), "tenants.example.net")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"}}
	ns := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev", UID: "ns-uid"}}
	fip := &tenant.FloatingIP{
		ObjectMeta: metav1.ObjectMeta{Name: "ssh", Namespace: "dev", UID: "fip-uid", Labels: map[string]string{hostnames.TenantLabel: "acme"}},
		Spec: tenant.FloatingIPSpec{Target: &tenant.FloatingIPTarget{Kind: tenant.FloatingIPTargetPod, Name: "web"},
			Ports: []tenant.FloatingIPPort{{Port: 22, Protocol: "TCP"}}},
		Status: tenant.FloatingIPStatus{Address: "203.0.113.9"},
	}
	controllertest.Onboard(t, src, fakes, tn, ns)
	hostNS := controllertest.MakeHostNamespace(t, src, fakes, tn, ns)
	fakes.FloatingIPs.Put("acme", "dev", fip)
	controllertest.Cache(t, src.FloatingIPs, "acme", "dev", fip)
	key := queue.Key{Tenant: "acme", Namespace: "dev", Name: "ssh"}
	pods, services := fakes.Kube.CoreV1().Pods(hostNS), fakes.Kube.CoreV1().Services(hostNS)
	egressIPs := fakes.EgressIP.K8sV1().EgressIPs()
	svcName, eipName := hostnames.FloatingIPService("ssh"), hostnames.FloatingIPEgressIP(tn.UID, "dev", "ssh")
	stored := func() *tenant.FloatingIP { return fakes.FloatingIPs.Stored("acme", "dev", "ssh").(*tenant.FloatingIP) }
	ready := func() *metav1.Condition {
		return meta.FindStatusCondition(stored().Status.Conditions, tenant.ConditionReady)
	}
	cachedService := func(check func(*corev1.Service) bool) func() bool {
		return func() bool {
			obj, exists, _ := src.HostServices.GetStore().GetByKey(hostNS + "/" + svcName)
			if !exists {
				return check(nil)
			}
			return check(obj.(*corev1.Service))
		}
	}

	// The target Pod does not exist: looked for again later.
	var requeue *controller.RequeueError
	if err := c.Reconcile(ctx, key); !errors.As(err, &requeue) || requeue.After != targetRecheck {
		t.Errorf("reconcile without the target: %v, want a requeue after %s", err, targetRecheck)
	}
	if cond := ready(); cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != ReasonTargetNotFound {
		t.Errorf("Ready %+v, want False, TargetNotFound", cond)
	}
	// The address is held whatever the target does: named.
	if got := stored().Status.DNSName; got != "ssh.dev.acme.tenants.example.net" {
		t.Errorf("dnsName %q, want ssh.dev.acme.tenants.example.net", got)
	}
	if cond := meta.FindStatusCondition(stored().Status.Conditions, tenant.ConditionDNSNamed); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("DNSNamed %+v, want True", cond)
	}

	// The Pod appears: labelled, and the Service and EgressIP select it.
	if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: hostNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informer has the Service", cachedService(func(s *corev1.Service) bool { return s != nil }))
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("reconcile with the target: %v", err)
	}
	if pod, _ := pods.Get(ctx, "web", metav1.GetOptions{}); pod.Labels[hostnames.PodLabel] != "web" || pod.Labels[hostnames.FloatingIPTargetLabel] != "fip-uid" {
		t.Errorf("target pod labels %v, want %s=web and %s=fip-uid", pod.Labels, hostnames.PodLabel, hostnames.FloatingIPTargetLabel)
	}
	svc, err := services.Get(ctx, svcName, metav1.GetOptions{})
	if err != nil || svc.Spec.Selector[hostnames.PodLabel] != "web" || svc.Annotations[hostkinds.MetalLBIPsAnnotation] != "203.0.113.9" {
		t.Fatalf("Service %+v, %v", svc, err)
	}
	eip, err := egressIPs.Get(ctx, eipName, metav1.GetOptions{})
	if err != nil || len(eip.Spec.EgressIPs) != 1 || eip.Spec.EgressIPs[0] != "203.0.113.9" || eip.Spec.PodSelector.MatchLabels[hostnames.FloatingIPTargetLabel] != "fip-uid" {
		t.Fatalf("EgressIP %+v, %v", eip, err)
	}
	if cond := ready(); cond == nil || cond.Reason != ReasonAddressPending {
		t.Errorf("Ready %+v, want AddressPending until MetalLB assigns the address", cond)
	}

	// MetalLB assigns the address: Associated.
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.9"}}
	if _, err := services.UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informer has the assigned address", cachedService(func(s *corev1.Service) bool {
		return s != nil && len(s.Status.LoadBalancer.Ingress) > 0
	}))
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("reconcile with the address assigned: %v", err)
	}
	if cond := ready(); cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != ReasonEgressNotAssigned || stored().Status.Phase != tenant.FloatingIPPhaseAllocated {
		t.Errorf("Ready %+v, phase %q; want False, EgressNotAssigned, Allocated until OVN-Kubernetes assigns the EgressIP", cond, stored().Status.Phase)
	}
	if cond := meta.FindStatusCondition(stored().Status.Conditions, tenant.ConditionEgressAssigned); cond == nil || cond.Status != metav1.ConditionFalse {
		t.Errorf("EgressAssigned %+v, want False", cond)
	}

	// OVN-Kubernetes assigns the EgressIP to a node: Associated.
	eip.Status.Items = []egressipv1.EgressIPStatusItem{{Node: "worker-1", EgressIP: "203.0.113.9"}}
	if _, err := egressIPs.Update(ctx, eip, metav1.UpdateOptions{}); err != nil { // the CRD has no status subresource
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informer has the EgressIP's assignment", func() bool {
		obj, exists, _ := src.HostEgressIPs.GetStore().GetByKey(eipName)
		return exists && len(obj.(*egressipv1.EgressIP).Status.Items) == 1
	})
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("reconcile with the EgressIP assigned: %v", err)
	}
	if cond := ready(); cond == nil || cond.Status != metav1.ConditionTrue || stored().Status.Phase != tenant.FloatingIPPhaseAssociated {
		t.Errorf("Ready %+v, phase %q; want True, Associated", cond, stored().Status.Phase)
	}
	if cond := meta.FindStatusCondition(stored().Status.Conditions, tenant.ConditionEgressAssigned); cond == nil || cond.Status != metav1.ConditionTrue || strings.Contains(cond.Message, "worker-1") {
		t.Errorf("EgressAssigned %+v, want True, naming no node", cond)
	}

	// No target any more: the host objects go, and the pod is released.
	controllertest.Eventually(t, "the informers have the EgressIP and the bound pod", func() bool {
		_, exists, _ := src.HostEgressIPs.GetStore().GetByKey(eipName)
		_, bound, _ := src.HostTargetPods.GetStore().GetByKey(hostNS + "/web")
		return exists && bound
	})
	fip.Spec.Target, fip.Spec.Ports = nil, nil
	fakes.FloatingIPs.Put("acme", "dev", fip)
	controllertest.Cache(t, src.FloatingIPs, "acme", "dev", fip)
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("reconcile without a target: %v", err)
	}
	if _, err := services.Get(ctx, svcName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Service of a FloatingIP without a target not removed: %v", err)
	}
	if _, err := egressIPs.Get(ctx, eipName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("EgressIP of a FloatingIP without a target not removed: %v", err)
	}
	if cond := ready(); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("Ready %+v, want True: a FloatingIP without a target only holds its address", cond)
	}
	// The pod goes back to the NAT gateway.
	if pod, _ := pods.Get(ctx, "web", metav1.GetOptions{}); pod.Labels[hostnames.FloatingIPTargetLabel] != "" {
		t.Errorf("pod of a FloatingIP without a target still bound: %v", pod.Labels)
	}
	if got := stored().Status.DNSName; got != "ssh.dev.acme.tenants.example.net" {
		t.Errorf("dnsName %q without a target, want the name of the address it still holds", got)
	}

	// A syncer without a public DNS zone (the provider removed it) takes
	// the name away.
	controllertest.Cache(t, src.FloatingIPs, "acme", "dev", stored())
	c.names.Zone = ""
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("reconcile without a zone: %v", err)
	}
	if s := stored().Status; s.DNSName != "" || meta.FindStatusCondition(s.Conditions, tenant.ConditionDNSNamed) != nil {
		t.Errorf("without a zone: dnsName %q, conditions %+v; want no name and no DNSNamed", s.DNSName, s.Conditions)
	}
	c.names.Zone = "tenants.example.net"

	// The FloatingIP is gone, with a target again on the host side.
	fip.Spec.Target = &tenant.FloatingIPTarget{Kind: tenant.FloatingIPTargetPod, Name: "web"}
	fakes.FloatingIPs.Put("acme", "dev", fip)
	controllertest.Cache(t, src.FloatingIPs, "acme", "dev", fip)
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("reconcile with the target back: %v", err)
	}
	controllertest.Eventually(t, "the informer has the EgressIP again", func() bool {
		_, exists, _ := src.HostEgressIPs.GetStore().GetByKey(eipName)
		return exists
	})
	fakes.FloatingIPs.Remove("acme", "dev", "ssh")
	controllertest.Uncache(t, src.FloatingIPs, "acme", "dev", "ssh")
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("reconcile of a deleted FloatingIP: %v", err)
	}
	if _, err := egressIPs.Get(ctx, eipName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("EgressIP of a deleted FloatingIP not removed: %v", err)
	}
}
