package syncer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	egressipv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

const (
	addressPoolAnnotation = "metallb.io/address-pool"
	lbIPsAnnotation       = "metallb.io/loadBalancerIPs"
)

func describeLB(lb *tenantv1alpha1.LoadBalancer) string {
	return fmt.Sprintf("spec.address %q, status{address %q, dnsName %q, observedGeneration %d/%d, conditions %s}",
		lb.Spec.Address, lb.Status.Address, lb.Status.DNSName, lb.Status.ObservedGeneration, lb.Generation, describeConditions(lb.Status.Conditions))
}

func describeFIP(f *tenantv1alpha1.FloatingIP) string {
	return fmt.Sprintf("spec{address %q, target %+v}, status{address %q, dnsName %q, phase %q, observedGeneration %d/%d, conditions %s}",
		f.Spec.Address, f.Spec.Target, f.Status.Address, f.Status.DNSName, f.Status.Phase, f.Status.ObservedGeneration, f.Generation, describeConditions(f.Status.Conditions))
}

// waitLB waits until LoadBalancer ns/name satisfies ok and returns it.
func waitLB(ctx context.Context, t *testing.T, cs clientset.Interface, ns, name, what string, ok func(*tenantv1alpha1.LoadBalancer) bool) *tenantv1alpha1.LoadBalancer {
	t.Helper()
	var lb *tenantv1alpha1.LoadBalancer
	eventually(ctx, t, syncTimeout, "LoadBalancer "+ns+"/"+name+": "+what, func(ctx context.Context) (bool, string) {
		got, err := cs.TenantV1alpha1().LoadBalancers(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		lb = got
		return ok(got), describeLB(got)
	})
	return lb
}

// waitFIP waits until FloatingIP ns/name satisfies ok and returns it.
func waitFIP(ctx context.Context, t *testing.T, cs clientset.Interface, ns, name, what string, ok func(*tenantv1alpha1.FloatingIP) bool) *tenantv1alpha1.FloatingIP {
	t.Helper()
	var f *tenantv1alpha1.FloatingIP
	eventually(ctx, t, syncTimeout, "FloatingIP "+ns+"/"+name+": "+what, func(ctx context.Context) (bool, string) {
		got, err := cs.TenantV1alpha1().FloatingIPs(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		f = got
		return ok(got), describeFIP(got)
	})
	return f
}

// lbAssigned says whether MetalLB's address reached the LoadBalancer and it is Ready.
func lbAssigned(lb *tenantv1alpha1.LoadBalancer) bool {
	return lb.Status.Address != "" && lb.Status.Address == lb.Spec.Address && lb.Status.ObservedGeneration == lb.Generation &&
		conditionIs(lb.Status.Conditions, tenantv1alpha1.ConditionReady, metav1.ConditionTrue, "AddressAssigned")
}

// waitService waits until the host Service ns/name satisfies ok and returns it.
func waitService(ctx context.Context, t *testing.T, host kubernetes.Interface, ns, name, what string, ok func(*corev1.Service) (bool, string)) *corev1.Service {
	t.Helper()
	var svc *corev1.Service
	eventually(ctx, t, syncTimeout, "Service "+ns+"/"+name+": "+what, func(ctx context.Context) (bool, string) {
		got, err := host.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		svc = got
		return ok(got)
	})
	return svc
}

func waitGone(ctx context.Context, t *testing.T, what string, get func(ctx context.Context) error) {
	t.Helper()
	eventually(ctx, t, syncTimeout, what+" gone", func(ctx context.Context) (bool, string) {
		err := get(ctx)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

func ingressIP(svc *corev1.Service) string {
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			return in.IP
		}
	}
	return ""
}

// wantStatus checks that err is an API error with code and a message
// containing each of parts.
func wantStatus(t *testing.T, what string, err error, code int32, parts ...string) {
	t.Helper()
	st := apiStatus(t, what, err)
	if st.Code != code {
		t.Errorf("%s: %d %q, want %d", what, st.Code, st.Message, code)
		return
	}
	for _, p := range parts {
		if !strings.Contains(st.Message, p) && !slices.Contains(causeFields(st), p) {
			t.Errorf("%s: %q (causes %v) does not mention %q", what, st.Message, causeFields(st), p)
		}
	}
}

func lbObject(name, address string) *tenantv1alpha1.LoadBalancer {
	return &tenantv1alpha1.LoadBalancer{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: tenantv1alpha1.LoadBalancerSpec{
			Address:  address,
			Selector: map[string]string{"app": name},
			Ports:    []tenantv1alpha1.LoadBalancerPort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: tenantv1alpha1.ProtocolTCP}},
		},
	}
}

// TestLoadBalancers follows tenant LoadBalancers to host Services that the
// real MetalLB controller gives their address from the tenant's pool, and
// the address back into their status; and checks the errors of SPEC 3.4.
func TestLoadBalancers(t *testing.T) {
	ctx := framework.Context(t, 4*slowTimeout)
	name := uniqueName(t)
	tn := onboard(ctx, t, tenantSpec{name: name, users: []string{lbUser}, publicIPs: 4, loadBalancers: 3})
	lena := tenantClient(t, lbUser)
	deletePublicIPUsersAtEnd(t, lena)
	host, _ := hostClients(t)
	hostNS := hostnames.Namespace(tn.Name, tn.UID, defaultNamespace)
	pool := hostnames.MetalLBPool(tn.Name, tn.UID)

	// web: no address asked for: one of the tenant's, assigned by MetalLB.
	web := map[string]interface{}{
		"apiVersion": "tenant.io/v1alpha1", "kind": "LoadBalancer", "metadata": map[string]interface{}{"name": "web", "namespace": defaultNamespace},
		"spec": map[string]interface{}{
			"selector":     map[string]string{"app": "web"},
			"ports":        []map[string]interface{}{{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}},
			"sourceRanges": []string{"198.51.100.0/24"},
		},
	}
	kubectl(ctx, t, lbUser, "apply", "--server-side", "-f", writeJSON(t, web))
	lb := waitLB(ctx, t, lena, defaultNamespace, "web", "address assigned by MetalLB", lbAssigned)
	if !slices.Contains(tn.Status.PublicIPs, lb.Status.Address) {
		t.Fatalf("web got %s, not one of the tenant's public IPs %v", lb.Status.Address, tn.Status.PublicIPs)
	}
	svc := waitService(ctx, t, host, hostNS, hostnames.LoadBalancerService("web"), "as the LoadBalancer says", func(s *corev1.Service) (bool, string) {
		return ingressIP(s) == lb.Status.Address, fmt.Sprintf("%+v %+v", s.Annotations, s.Status)
	})
	var problems []string
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Annotations[addressPoolAnnotation] != pool || svc.Annotations[lbIPsAnnotation] != lb.Spec.Address {
		problems = append(problems, fmt.Sprintf("type %s annotations %v", svc.Spec.Type, svc.Annotations))
	}
	if len(svc.Spec.Selector) != 1 || svc.Spec.Selector["app"] != "web" || !slices.Equal(svc.Spec.LoadBalancerSourceRanges, []string{"198.51.100.0/24"}) {
		problems = append(problems, fmt.Sprintf("selector %v sourceRanges %v", svc.Spec.Selector, svc.Spec.LoadBalancerSourceRanges))
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.IntValue() != 8080 || svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP {
		problems = append(problems, fmt.Sprintf("ports %+v", svc.Spec.Ports))
	}
	if svc.Labels[hostnames.TenantLabel] != tn.Name || svc.Labels["tenant.io/loadbalancer"] != "web" || svc.Annotations[hostnames.OwnerUIDAnnotation] != string(lb.UID) {
		problems = append(problems, fmt.Sprintf("marks %v %v", svc.Labels, svc.Annotations))
	}
	if len(problems) > 0 {
		t.Fatalf("host Service of web: %s", strings.Join(problems, "; "))
	}
	out := kubectl(ctx, t, lbUser, "-n", defaultNamespace, "get", "loadbalancers")
	if !strings.Contains(out, lb.Status.Address) {
		t.Errorf("kubectl get loadbalancers does not show the address:\n%s", out)
	}

	// api: an explicit address of the tenant's.
	var free []string
	for _, ip := range tn.Status.PublicIPs {
		if ip != lb.Status.Address {
			free = append(free, ip)
		}
	}
	if _, err := lena.TenantV1alpha1().LoadBalancers(defaultNamespace).Create(ctx, lbObject("api", free[0]), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	api := waitLB(ctx, t, lena, defaultNamespace, "api", "assigned", lbAssigned)
	if api.Status.Address != free[0] {
		t.Fatalf("api asked for %s and got %s", free[0], api.Status.Address)
	}
	// Both addresses are in use in the Tenant's status, as its list shows.
	waitPublicIPsInUse(ctx, t, lena, tn.Name, 2)
	if out := kubectl(ctx, t, lbUser, "get", "tenant", tn.Name); !strings.Contains(out, "2/4") {
		t.Errorf("kubectl get tenant does not show 2 of 4 public IPs in use:\n%s", out)
	}

	t.Run("errors", func(t *testing.T) {
		_, err := lena.TenantV1alpha1().LoadBalancers(defaultNamespace).Create(ctx, lbObject("dup", lb.Status.Address), metav1.CreateOptions{})
		wantStatus(t, "an address in use", err, 409, lb.Status.Address, "loadbalancers default/web")
		_, err = lena.TenantV1alpha1().LoadBalancers(defaultNamespace).Create(ctx, lbObject("foreign", "203.0.113.254"), metav1.CreateOptions{})
		wantStatus(t, "an address not the tenant's", err, 422, "spec.address")
		// A third LoadBalancer, then the quota (3) is full while an address is free.
		if _, err := lena.TenantV1alpha1().LoadBalancers(defaultNamespace).Create(ctx, lbObject("third", ""), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err = lena.TenantV1alpha1().LoadBalancers(defaultNamespace).Create(ctx, lbObject("fourth", ""), metav1.CreateOptions{})
		wantStatus(t, "over quota", err, 403, "exceeded quota: loadBalancers, requested 1, used 3, limited 3")
		if err := lena.TenantV1alpha1().LoadBalancers(defaultNamespace).Delete(ctx, "third", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// FloatingIPs hold the two free addresses: none is left for a LoadBalancer.
		for _, h := range []string{"holder1", "holder2"} {
			f := &tenantv1alpha1.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: h}}
			eventually(ctx, t, syncTimeout, "FloatingIP "+h+" takes a free address", func(ctx context.Context) (bool, string) {
				_, err := lena.TenantV1alpha1().FloatingIPs(defaultNamespace).Create(ctx, f, metav1.CreateOptions{})
				return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
			})
		}
		_, err = lena.TenantV1alpha1().LoadBalancers(defaultNamespace).Create(ctx, lbObject("none", ""), metav1.CreateOptions{})
		wantStatus(t, "no free address", err, 409, "no free public IP")
		for _, h := range []string{"holder1", "holder2"} {
			if err := lena.TenantV1alpha1().FloatingIPs(defaultNamespace).Delete(ctx, h, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("changes and drift", func(t *testing.T) {
		kubectl(ctx, t, lbUser, "-n", defaultNamespace, "patch", "loadbalancer", "web", "--type=merge", "-p",
			`{"spec":{"ports":[{"name":"https","port":443,"targetPort":8443,"protocol":"TCP"}]}}`)
		waitService(ctx, t, host, hostNS, svc.Name, "port 443", func(s *corev1.Service) (bool, string) {
			return len(s.Spec.Ports) == 1 && s.Spec.Ports[0].Port == 443 && s.Spec.Ports[0].TargetPort.IntValue() == 8443, fmt.Sprintf("%+v", s.Spec.Ports)
		})
		// Someone takes the MetalLB annotation off on the host: put back.
		cur, err := host.CoreV1().Services(hostNS).Get(ctx, svc.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		delete(cur.Annotations, lbIPsAnnotation)
		cur.Spec.Selector = map[string]string{"app": "other"}
		if _, err := host.CoreV1().Services(hostNS).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitService(ctx, t, host, hostNS, svc.Name, "repaired", func(s *corev1.Service) (bool, string) {
			return s.Annotations[lbIPsAnnotation] == lb.Spec.Address && s.Spec.Selector["app"] == "web", fmt.Sprintf("%v %v", s.Annotations, s.Spec.Selector)
		})
		waitLB(ctx, t, lena, defaultNamespace, "web", "still assigned", lbAssigned)
	})

	t.Run("delete releases the address", func(t *testing.T) {
		addr := lb.Status.Address
		kubectl(ctx, t, lbUser, "-n", defaultNamespace, "delete", "loadbalancer", "web")
		waitGone(ctx, t, "host Service of web", func(ctx context.Context) error {
			_, err := host.CoreV1().Services(hostNS).Get(ctx, svc.Name, metav1.GetOptions{})
			return err
		})
		eventually(ctx, t, syncTimeout, "a new LoadBalancer takes "+addr, func(ctx context.Context) (bool, string) {
			_, err := lena.TenantV1alpha1().LoadBalancers(defaultNamespace).Create(ctx, lbObject("again", addr), metav1.CreateOptions{})
			return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
		})
		again := waitLB(ctx, t, lena, defaultNamespace, "again", "assigned", lbAssigned)
		if again.Status.Address != addr {
			t.Fatalf("again got %s, want %s", again.Status.Address, addr)
		}
	})
}

// TestFloatingIPs follows a FloatingIP from holding an address to a 1:1
// NAT of a Pod (its host Service on the address, assigned by the real
// MetalLB controller, and its EgressIP), re-associated with a
// VirtualMachine without losing the address, and released.
func TestFloatingIPs(t *testing.T) {
	ctx := framework.Context(t, 4*slowTimeout)
	name := uniqueName(t)
	tn := onboard(ctx, t, tenantSpec{name: name, users: []string{fipUser}, publicIPs: 2, floatingIPs: 2})
	finn := tenantClient(t, fipUser)
	deletePublicIPUsersAtEnd(t, finn)
	host, _ := hostClients(t)
	_, eip := ovnClients(t)
	hostNS := hostnames.Namespace(tn.Name, tn.UID, defaultNamespace)
	svcName := hostnames.FloatingIPService("ssh")
	eipName := hostnames.FloatingIPEgressIP(tn.UID, defaultNamespace, "ssh")

	// No target: it holds the first free address, nothing on the host.
	kubectl(ctx, t, fipUser, "-n", defaultNamespace, "create", "-f", writeJSON(t, map[string]interface{}{
		"apiVersion": "tenant.io/v1alpha1", "kind": "FloatingIP", "metadata": map[string]interface{}{"name": "ssh"},
	}))
	f := waitFIP(ctx, t, finn, defaultNamespace, "ssh", "Allocated", func(f *tenantv1alpha1.FloatingIP) bool {
		return f.Status.Address != "" && f.Status.Phase == tenantv1alpha1.FloatingIPPhaseAllocated &&
			conditionIs(f.Status.Conditions, tenantv1alpha1.ConditionReady, metav1.ConditionTrue, "")
	})
	addr := f.Status.Address
	if !slices.Contains(tn.Status.PublicIPs, addr) {
		t.Fatalf("ssh holds %s, not one of %v", addr, tn.Status.PublicIPs)
	}
	if _, err := host.CoreV1().Services(hostNS).Get(ctx, svcName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a FloatingIP without target has a host Service: %v", err)
	}

	// A pod (no kubelet runs here: it stays Pending, which is enough).
	pod := restrictedPod(hostNS, "web")
	eventually(ctx, t, syncTimeout, "pod web created in "+hostNS, func(ctx context.Context) (bool, string) {
		// Until kube-controller-manager made the namespace's default
		// ServiceAccount, admission refuses pods.
		_, err := host.CoreV1().Pods(hostNS).Create(ctx, pod, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
	})
	t.Cleanup(func() {
		_ = host.CoreV1().Pods(hostNS).Delete(context.Background(), "web", metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	})

	t.Run("bound to a Pod", func(t *testing.T) {
		kubectl(ctx, t, fipUser, "-n", defaultNamespace, "patch", "floatingip", "ssh", "--type=merge", "-p",
			`{"spec":{"target":{"kind":"Pod","name":"web"},"ports":[{"port":22,"protocol":"TCP"}]}}`)
		// Associated both ways: MetalLB gave the Service the address, and
		// OVN-Kubernetes assigned the EgressIP to an egress node.
		f := waitFIP(ctx, t, finn, defaultNamespace, "ssh", "Associated", func(f *tenantv1alpha1.FloatingIP) bool {
			return f.Status.Phase == tenantv1alpha1.FloatingIPPhaseAssociated && f.Status.ObservedGeneration == f.Generation &&
				conditionIs(f.Status.Conditions, tenantv1alpha1.ConditionReady, metav1.ConditionTrue, "Associated") &&
				conditionIs(f.Status.Conditions, tenantv1alpha1.ConditionEgressAssigned, metav1.ConditionTrue, "Assigned")
		})
		if f.Status.Address != addr {
			t.Fatalf("binding moved the address from %s to %s", addr, f.Status.Address)
		}
		p, err := host.CoreV1().Pods(hostNS).Get(ctx, "web", metav1.GetOptions{})
		if err != nil || p.Labels[hostnames.PodLabel] != "web" {
			t.Fatalf("target pod labels %v (%v)", p.Labels, err)
		}
		svc := waitService(ctx, t, host, hostNS, svcName, "on the address", func(s *corev1.Service) (bool, string) {
			return ingressIP(s) == addr, fmt.Sprintf("%v %+v", s.Annotations, s.Status)
		})
		if svc.Annotations[lbIPsAnnotation] != addr || svc.Spec.Selector[hostnames.PodLabel] != "web" || len(svc.Spec.Selector) != 1 ||
			len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 22 {
			t.Fatalf("host Service %+v %+v", svc.Annotations, svc.Spec)
		}
		e, err := eip.K8sV1().EgressIPs().Get(ctx, eipName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkFIPEgress(t, e, addr, hostNS, f)
		if p.Labels[hostnames.FloatingIPTargetLabel] != string(f.UID) {
			t.Fatalf("target pod labels %v: not bound to the FloatingIP's EgressIP", p.Labels)
		}
	})

	t.Run("re-associated with a VirtualMachine", func(t *testing.T) {
		// The member runs the VM (KubeVirt's aggregated roles).
		admitted(ctx, t, fipUser, virtualMachine(hostNS, "vm1", nil))
		kubectl(ctx, t, fipUser, "-n", defaultNamespace, "patch", "floatingip", "ssh", "--type=merge", "-p",
			`{"spec":{"target":{"kind":"VirtualMachine","name":"vm1"}}}`)
		waitService(ctx, t, host, hostNS, svcName, "selects vm1", func(s *corev1.Service) (bool, string) {
			return len(s.Spec.Selector) == 1 && s.Spec.Selector[hostnames.VirtualMachineLabel] == "vm1" && ingressIP(s) == addr,
				fmt.Sprintf("%v %+v", s.Spec.Selector, s.Status)
		})
		f := waitFIP(ctx, t, finn, defaultNamespace, "ssh", "Associated", func(f *tenantv1alpha1.FloatingIP) bool {
			return f.Status.Phase == tenantv1alpha1.FloatingIPPhaseAssociated && f.Status.ObservedGeneration == f.Generation
		})
		if f.Status.Address != addr {
			t.Fatalf("re-association moved the address from %s to %s", addr, f.Status.Address)
		}
		// Pod web is no longer bound: it leaves through the node again.
		eventually(ctx, t, syncTimeout, "pod web released", func(ctx context.Context) (bool, string) {
			p, err := host.CoreV1().Pods(hostNS).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return p.Labels[hostnames.FloatingIPTargetLabel] == "", fmt.Sprint(p.Labels)
		})
		e, err := eip.K8sV1().EgressIPs().Get(ctx, eipName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkFIPEgress(t, e, addr, hostNS, f)
	})

	t.Run("errors", func(t *testing.T) {
		other := &tenantv1alpha1.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Spec: tenantv1alpha1.FloatingIPSpec{Address: addr}}
		_, err := finn.TenantV1alpha1().FloatingIPs(defaultNamespace).Create(ctx, other, metav1.CreateOptions{})
		wantStatus(t, "an address in use", err, 409, addr, "floatingips default/ssh")
		other.Spec.Address = "203.0.113.254"
		_, err = finn.TenantV1alpha1().FloatingIPs(defaultNamespace).Create(ctx, other, metav1.CreateOptions{})
		wantStatus(t, "an address not the tenant's", err, 422, "spec.address")
		// A LoadBalancer takes the second address: none left.
		if _, err := finn.TenantV1alpha1().LoadBalancers(defaultNamespace).Create(ctx, lbObject("lb", ""), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		other.Spec.Address = ""
		_, err = finn.TenantV1alpha1().FloatingIPs(defaultNamespace).Create(ctx, other, metav1.CreateOptions{})
		wantStatus(t, "no free address", err, 409, "no free public IP")
		if err := finn.TenantV1alpha1().LoadBalancers(defaultNamespace).Delete(ctx, "lb", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// The address of a FloatingIP does not change once held.
		_, err = finn.TenantV1alpha1().FloatingIPs(defaultNamespace).Patch(ctx, "ssh", "application/merge-patch+json",
			[]byte(`{"spec":{"address":"`+otherAddress(tn, addr)+`"}}`), metav1.PatchOptions{})
		wantStatus(t, "changing the address", err, 422, "spec.address")
	})

	t.Run("released", func(t *testing.T) {
		kubectl(ctx, t, fipUser, "-n", defaultNamespace, "patch", "floatingip", "ssh", "--type=json", "-p", `[{"op":"remove","path":"/spec/target"}]`)
		waitGone(ctx, t, "EgressIP "+eipName, func(ctx context.Context) error {
			_, err := eip.K8sV1().EgressIPs().Get(ctx, eipName, metav1.GetOptions{})
			return err
		})
		waitGone(ctx, t, "Service "+svcName, func(ctx context.Context) error {
			_, err := host.CoreV1().Services(hostNS).Get(ctx, svcName, metav1.GetOptions{})
			return err
		})
		waitFIP(ctx, t, finn, defaultNamespace, "ssh", "Allocated again, same address", func(f *tenantv1alpha1.FloatingIP) bool {
			return f.Status.Phase == tenantv1alpha1.FloatingIPPhaseAllocated && f.Status.Address == addr
		})
		kubectl(ctx, t, fipUser, "-n", defaultNamespace, "delete", "floatingip", "ssh")
		again := &tenantv1alpha1.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: "again"}, Spec: tenantv1alpha1.FloatingIPSpec{Address: addr}}
		eventually(ctx, t, syncTimeout, "a new FloatingIP takes "+addr, func(ctx context.Context) (bool, string) {
			_, err := finn.TenantV1alpha1().FloatingIPs(defaultNamespace).Create(ctx, again, metav1.CreateOptions{})
			return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
		})
	})
}

// deletePublicIPUsersAtEnd deletes, when the test ends and before its
// tenant is offboarded (cleanups run last first), the LoadBalancers and
// FloatingIPs of the tenant's Namespace default: a Tenant with any is not
// deleted.
func deletePublicIPUsersAtEnd(t *testing.T, cs clientset.Interface) {
	t.Cleanup(func() { deletePublicIPUsers(t, cs, defaultNamespace) })
}

// deletePublicIPUsers deletes the LoadBalancers and FloatingIPs of tenant
// Namespace ns.
func deletePublicIPUsers(t *testing.T, cs clientset.Interface, ns string) {
	ctx := context.Background()
	if err := cs.TenantV1alpha1().LoadBalancers(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Logf("deleting the LoadBalancers of %s: %v", ns, err)
	}
	if err := cs.TenantV1alpha1().FloatingIPs(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Logf("deleting the FloatingIPs of %s: %v", ns, err)
	}
}

func otherAddress(tn *tenantv1alpha1.Tenant, not string) string {
	for _, ip := range tn.Status.PublicIPs {
		if ip != not {
			return ip
		}
	}
	return not
}

// checkFIPEgress checks that e, the EgressIP of FloatingIP fip, sends the
// pods fip binds in hostNS out through addr.
func checkFIPEgress(t *testing.T, e *egressipv1.EgressIP, addr, hostNS string, fip *tenantv1alpha1.FloatingIP) {
	t.Helper()
	podSelector := map[string]string{hostnames.FloatingIPTargetLabel: string(fip.UID)}
	ns := e.Spec.NamespaceSelector.MatchLabels
	if !slices.Equal(e.Spec.EgressIPs, []string{addr}) || ns["kubernetes.io/metadata.name"] != hostNS || len(e.Spec.NamespaceSelector.MatchExpressions) != 0 ||
		len(e.Spec.PodSelector.MatchLabels) != len(podSelector) {
		t.Fatalf("EgressIP %s: %+v", e.Name, e.Spec)
	}
	for k, v := range podSelector {
		if e.Spec.PodSelector.MatchLabels[k] != v {
			t.Fatalf("EgressIP %s podSelector %v, want %v", e.Name, e.Spec.PodSelector, podSelector)
		}
	}
}

// TestPublicIPIsolation checks that tenant B cannot obtain tenant A's
// public IP by any means: not through its own LoadBalancers or
// FloatingIPs, not by a host Service of its own (the guard policy refuses
// it) and, with the guard policies removed, not from the real MetalLB
// controller either, whose pool of A serves A's namespaces only.
func TestPublicIPIsolation(t *testing.T) {
	ctx := framework.Context(t, 4*slowTimeout)
	a := onboard(ctx, t, tenantSpec{name: uniqueName(t) + "-a", users: []string{isoUserA}, publicIPs: 1})
	b := onboard(ctx, t, tenantSpec{name: uniqueName(t) + "-b", users: []string{isoUserB}, publicIPs: 1})
	ca, cb := tenantClient(t, isoUserA), tenantClient(t, isoUserB)
	deletePublicIPUsersAtEnd(t, ca)
	deletePublicIPUsersAtEnd(t, cb)
	if _, err := ca.TenantV1alpha1().LoadBalancers(defaultNamespace).Create(ctx, lbObject("web", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	lb := waitLB(ctx, t, ca, defaultNamespace, "web", "assigned", lbAssigned)
	x := lb.Status.Address

	// Through the tenant API: not B's address.
	_, err := cb.TenantV1alpha1().LoadBalancers(defaultNamespace).Create(ctx, lbObject("steal", x), metav1.CreateOptions{})
	wantStatus(t, "B's LoadBalancer on A's address", err, 422, "spec.address")
	_, err = cb.TenantV1alpha1().FloatingIPs(defaultNamespace).Create(ctx, &tenantv1alpha1.FloatingIP{
		ObjectMeta: metav1.ObjectMeta{Name: "steal"}, Spec: tenantv1alpha1.FloatingIPSpec{Address: x}}, metav1.CreateOptions{})
	wantStatus(t, "B's FloatingIP on A's address", err, 422, "spec.address")

	// On the host, as B's member in B's host namespace.
	bNS := hostnames.Namespace(b.Name, b.UID, defaultNamespace)
	aPool := hostnames.MetalLBPool(a.Name, a.UID)
	bogus := map[string]map[string]string{
		"steal-pool": {addressPoolAnnotation: aPool},
		"steal-ip":   {lbIPsAnnotation: x},
		"steal-both": {addressPoolAnnotation: aPool, lbIPsAnnotation: x},
	}
	memberB, _ := hostClientsAs(t, isoUserB)
	for name, ann := range bogus {
		_, err := memberB.CoreV1().Services(bNS).Create(ctx, bogusService(name, bNS, ann), metav1.CreateOptions{})
		if st := apiStatus(t, "B's host Service "+name, err); st.Code != 403 || !strings.Contains(st.Message, "LoadBalancer") {
			t.Errorf("B's host Service %s with %v: %d %q, want 403 from the guard policy", name, ann, st.Code, st.Message)
		}
	}

	// Without the guard policies: MetalLB still does not hand A's address
	// or pool to B's namespace.
	removeGuardPolicies(ctx, t)
	for name, ann := range bogus {
		eventually(ctx, t, syncTimeout, "B's host Service "+name+" admitted without the policies", func(ctx context.Context) (bool, string) {
			_, err := memberB.CoreV1().Services(bNS).Create(ctx, bogusService(name, bNS, ann), metav1.CreateOptions{})
			return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
		})
	}
	// MetalLB looks at each and refuses: an AllocationFailed event, no address.
	for name := range bogus {
		eventually(ctx, t, syncTimeout, "MetalLB refuses "+name, func(ctx context.Context) (bool, string) {
			events, err := memberB.CoreV1().Events(bNS).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
			if err != nil {
				return false, err.Error()
			}
			var reasons []string
			for _, e := range events.Items {
				reasons = append(reasons, e.Reason+": "+e.Message)
				if e.Reason == "AllocationFailed" {
					return true, ""
				}
			}
			return false, fmt.Sprint(reasons)
		})
	}
	// B's own LoadBalancer is served meanwhile (MetalLB is working), and
	// none of the bogus ones got an address.
	if _, err := cb.TenantV1alpha1().LoadBalancers(defaultNamespace).Create(ctx, lbObject("own", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	own := waitLB(ctx, t, cb, defaultNamespace, "own", "assigned", lbAssigned)
	if own.Status.Address == x || !slices.Contains(b.Status.PublicIPs, own.Status.Address) {
		t.Fatalf("B's own LoadBalancer got %s (A holds %s, B's IPs %v)", own.Status.Address, x, b.Status.PublicIPs)
	}
	for name := range bogus {
		svc, err := memberB.CoreV1().Services(bNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ip := ingressIP(svc); ip != "" {
			t.Errorf("MetalLB gave B's Service %s the address %s", name, ip)
		}
	}
	if got := waitLB(ctx, t, ca, defaultNamespace, "web", "still assigned", lbAssigned); got.Status.Address != x {
		t.Fatalf("A's LoadBalancer moved from %s to %s", x, got.Status.Address)
	}
}

func bogusService(name, ns string, annotations map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: annotations},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "x"},
			Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
}

// removeGuardPolicies deletes the guard policies' bindings until the test
// ends, then applies the shipped policies again.
func removeGuardPolicies(ctx context.Context, t *testing.T) {
	t.Helper()
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "artifacts", "deploy", "base", "80-guard-policies.yaml")
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, _, err := theStack().Kubectl(context.Background(), stack.AdminUser, "apply", "-f", path); err != nil {
			t.Errorf("restoring the guard policies: %v", err)
		}
	})
	kubectl(ctx, t, stack.AdminUser, "delete", "validatingadmissionpolicybindings",
		"tenant.io-guard-services", "tenant.io-guard-networking", "tenant.io-guard-namespace-labels")
}
