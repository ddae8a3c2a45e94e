package loadbalancer

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/publicdns"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// TestReconcileLoadBalancer drives the LoadBalancer controller over fakes:
// it waits for its host namespace, makes the Service, reports the address
// once MetalLB (here, the test) assigns it with its public DNS name, drops
// both when MetalLB takes the address back, and removes the Service once
// the LoadBalancer is gone.
func TestReconcileLoadBalancer(t *testing.T) {
	src, fakes := controllertest.NewSources(t)
	c, err := New(src, hostkinds.New(src), "tenants.example.net")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"}}
	ns := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev", UID: "ns-uid"}}
	lb := &tenant.LoadBalancer{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "dev", UID: "lb-uid", Labels: map[string]string{hostnames.TenantLabel: "acme"}},
		Spec: tenant.LoadBalancerSpec{Address: "203.0.113.7", Selector: map[string]string{"app": "web"},
			Ports: []tenant.LoadBalancerPort{{Name: "http", Port: 80}}},
	}
	controllertest.Onboard(t, src, fakes, tn, ns)
	fakes.LoadBalancers.Put("acme", "dev", lb)
	controllertest.Cache(t, src.LoadBalancers, "acme", "dev", lb)
	key := queue.Key{Tenant: "acme", Namespace: "dev", Name: "web"}
	hostNS := hostnames.Namespace("acme", tn.UID, "dev")
	services := fakes.Kube.CoreV1().Services(hostNS)
	svcName := hostnames.LoadBalancerService("web")
	stored := func() *tenant.LoadBalancer {
		return fakes.LoadBalancers.Stored("acme", "dev", "web").(*tenant.LoadBalancer)
	}
	ready := func() *metav1.Condition {
		return meta.FindStatusCondition(stored().Status.Conditions, tenant.ConditionReady)
	}
	dnsNamed := func() *metav1.Condition {
		return meta.FindStatusCondition(stored().Status.Conditions, tenant.ConditionDNSNamed)
	}

	// No host namespace yet: waiting, no Service.
	var requeue *controller.RequeueError
	if err := c.Reconcile(ctx, key); !errors.As(err, &requeue) {
		t.Errorf("reconcile without a host namespace: %v, want a requeue", err)
	}
	if cond := meta.FindStatusCondition(stored().Status.Conditions, tenant.ConditionHostSynced); cond == nil || cond.Reason != controller.ReasonWaiting {
		t.Errorf("HostSynced %+v, want reason Waiting", cond)
	}

	controllertest.MakeHostNamespace(t, src, fakes, tn, ns)
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("reconcile with the host namespace: %v", err)
	}
	svc, err := services.Get(ctx, svcName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Service not made: %v", err)
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Annotations[hostkinds.MetalLBIPsAnnotation] != "203.0.113.7" || svc.Spec.Selector["app"] != "web" {
		t.Errorf("Service %+v", svc)
	}
	if cond := ready(); cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != ReasonAddressPending {
		t.Errorf("Ready %+v, want False, AddressPending", cond)
	}

	// MetalLB assigns the address.
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}}
	if _, err := services.UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informer has the assigned address", func() bool {
		obj, exists, _ := src.HostServices.GetStore().GetByKey(hostNS + "/" + svcName)
		return exists && hostkinds.AssignedAddress(obj.(*corev1.Service)) != ""
	})
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("reconcile with the address assigned: %v", err)
	}
	if cond := ready(); cond == nil || cond.Status != metav1.ConditionTrue || stored().Status.Address != "203.0.113.7" {
		t.Errorf("Ready %+v, address %q; want True and 203.0.113.7", cond, stored().Status.Address)
	}
	if got := stored().Status.DNSName; got != "web.dev.acme.tenants.example.net" {
		t.Errorf("dnsName %q, want web.dev.acme.tenants.example.net", got)
	}
	if cond := dnsNamed(); cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != publicdns.ReasonNamed {
		t.Errorf("DNSNamed %+v, want True, Named", cond)
	}

	// MetalLB takes the address back: no address, no name.
	svc, err = services.Get(ctx, svcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Status.LoadBalancer.Ingress = nil
	if _, err := services.UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informer has the address gone", func() bool {
		obj, exists, _ := src.HostServices.GetStore().GetByKey(hostNS + "/" + svcName)
		return exists && hostkinds.AssignedAddress(obj.(*corev1.Service)) == ""
	})
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("reconcile with the address released: %v", err)
	}
	if s := stored().Status; s.Address != "" || s.DNSName != "" || dnsNamed() != nil {
		t.Errorf("address %q, dnsName %q, DNSNamed %+v; want none of them once MetalLB released the address", s.Address, s.DNSName, dnsNamed())
	}

	// Gone.
	fakes.LoadBalancers.Remove("acme", "dev", "web")
	controllertest.Uncache(t, src.LoadBalancers, "acme", "dev", "web")
	if err := c.Reconcile(ctx, key); err != nil {
		t.Fatalf("reconcile of a deleted LoadBalancer: %v", err)
	}
	if _, err := services.Get(ctx, svcName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Service of a deleted LoadBalancer not removed: %v", err)
	}
}
