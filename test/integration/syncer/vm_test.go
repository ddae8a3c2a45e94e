package syncer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestVirtualMachines runs a tenant's VMs in its host namespace, as its
// member, with the rights KubeVirt's aggregated roles add to admin: a
// FloatingIP to a VM is Pending until the VM exists, Associated while it
// does and Pending again once it is deleted; a second FloatingIP for the
// same VM is refused; a LoadBalancer selects a VM's pod by KubeVirt's
// label; VMs, their instances, PVCs and DataVolumes block deleting the
// Namespace and the Tenant, each named, and the report says which run.
func TestVirtualMachines(t *testing.T) {
	ctx := framework.Context(t, 4*slowTimeout)
	name := uniqueName(t)
	tn := onboard(ctx, t, tenantSpec{name: name, users: []string{vmUser}, publicIPs: 2, floatingIPs: 2, loadBalancers: 1})
	vic := tenantClient(t, vmUser)
	host, _ := hostClients(t)
	_, eip := ovnClients(t)
	const dev = "dev"
	kubectl(ctx, t, vmUser, "create", "-f", writeJSON(t, namespaceObject(dev)))
	waitNamespaceSynced(ctx, t, vic, dev)
	t.Cleanup(func() { deletePublicIPUsers(t, vic, dev) })
	hostNS := hostnames.Namespace(tn.Name, tn.UID, dev)

	t.Run("member may manage VMs and disks", func(t *testing.T) {
		// The admin RoleBinding the syncer makes covers KubeVirt's and
		// CDI's kinds once their aggregated roles are installed.
		for _, resource := range []string{"virtualmachines.kubevirt.io", "virtualmachineinstances.kubevirt.io", "datavolumes.cdi.kubevirt.io", "persistentvolumeclaims"} {
			eventually(ctx, t, syncTimeout, vmUser+" may create "+resource, func(ctx context.Context) (bool, string) {
				out, _, _ := theStack().Kubectl(ctx, vmUser, "auth", "can-i", "create", resource, "-n", hostNS)
				return strings.TrimSpace(out) == "yes", out
			})
		}
		// Not in another tenant's namespaces, nor cluster-wide.
		out, _, _ := theStack().Kubectl(ctx, vmUser, "auth", "can-i", "list", "virtualmachines.kubevirt.io", "--all-namespaces")
		if strings.TrimSpace(out) != "no" {
			t.Errorf("%s may list VMs cluster-wide: %q", vmUser, out)
		}
	})

	kubectl(ctx, t, vmUser, "-n", dev, "create", "-f", writeJSON(t, map[string]interface{}{
		"apiVersion": "tenant.io/v1alpha1", "kind": "FloatingIP", "metadata": map[string]interface{}{"name": "web-ip"},
		"spec": map[string]interface{}{"target": map[string]interface{}{"kind": "VirtualMachine", "name": "web"},
			"ports": []interface{}{map[string]interface{}{"port": int64(22), "protocol": "TCP"}}},
	}))
	pendingForWeb := func(what string) *tenantv1alpha1.FloatingIP {
		return waitFIP(ctx, t, vic, dev, "web-ip", what, func(f *tenantv1alpha1.FloatingIP) bool {
			return f.Status.Phase == tenantv1alpha1.FloatingIPPhasePending && f.Status.Address != "" &&
				conditionIs(f.Status.Conditions, tenantv1alpha1.ConditionReady, metav1.ConditionFalse, "TargetNotFound")
		})
	}
	var addr string
	t.Run("Pending while the VM does not exist", func(t *testing.T) {
		f := pendingForWeb("Pending, TargetNotFound")
		addr = f.Status.Address
		if c := meta.FindStatusCondition(f.Status.Conditions, tenantv1alpha1.ConditionReady); c == nil || !strings.Contains(c.Message, "VirtualMachine web does not exist in namespace dev") {
			t.Errorf("Ready condition %+v does not say the VM is missing", c)
		}
	})

	t.Run("Associated once the VM exists", func(t *testing.T) {
		kubectl(ctx, t, vmUser, "create", "-f", writeJSON(t, virtualMachine(hostNS, "web", nil)))
		waitFIP(ctx, t, vic, dev, "web-ip", "Associated", func(f *tenantv1alpha1.FloatingIP) bool {
			return f.Status.Phase == tenantv1alpha1.FloatingIPPhaseAssociated && f.Status.Address == addr &&
				conditionIs(f.Status.Conditions, tenantv1alpha1.ConditionReady, metav1.ConditionTrue, "Associated") &&
				conditionIs(f.Status.Conditions, tenantv1alpha1.ConditionEgressAssigned, metav1.ConditionTrue, "Assigned")
		})
		svc := waitService(ctx, t, host, hostNS, hostnames.FloatingIPService("web-ip"), "on the address", func(s *corev1.Service) (bool, string) {
			return ingressIP(s) == addr, fmt.Sprintf("%+v", s.Status)
		})
		if len(svc.Spec.Selector) != 1 || svc.Spec.Selector[hostnames.VirtualMachineLabel] != "web" {
			t.Errorf("host Service selects %v, want the VM's pod by %s=web", svc.Spec.Selector, hostnames.VirtualMachineLabel)
		}
		f, err := vic.TenantV1alpha1().FloatingIPs(dev).Get(ctx, "web-ip", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e, err := eip.K8sV1().EgressIPs().Get(ctx, hostnames.FloatingIPEgressIP(tn.UID, dev, "web-ip"), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkFIPEgress(t, e, addr, hostNS, f)
		// The VM's pod (no KubeVirt runs here: the pod KubeVirt would
		// start, with its label) is bound to the FloatingIP's EgressIP.
		launcher := restrictedPod(hostNS, "virt-launcher-web-0")
		launcher.Labels = map[string]string{hostnames.VirtualMachineLabel: "web"}
		launcherClient, _ := hostClientsAs(t, vmUser)
		eventually(ctx, t, syncTimeout, "launcher pod created", func(ctx context.Context) (bool, string) {
			_, err := launcherClient.CoreV1().Pods(hostNS).Create(ctx, launcher, metav1.CreateOptions{})
			return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
		})
		eventually(ctx, t, syncTimeout, "launcher pod bound to web-ip", func(ctx context.Context) (bool, string) {
			p, err := host.CoreV1().Pods(hostNS).Get(ctx, launcher.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return p.Labels[hostnames.FloatingIPTargetLabel] == string(f.UID), fmt.Sprint(p.Labels)
		})
	})

	t.Run("one FloatingIP per VM", func(t *testing.T) {
		second := &tenantv1alpha1.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: "web-ip2"},
			Spec: tenantv1alpha1.FloatingIPSpec{Target: &tenantv1alpha1.FloatingIPTarget{Kind: tenantv1alpha1.FloatingIPTargetVirtualMachine, Name: "web"}}}
		_, err := vic.TenantV1alpha1().FloatingIPs(dev).Create(ctx, second, metav1.CreateOptions{})
		wantStatus(t, "a second FloatingIP for VM web", err, 409, "VirtualMachine web is already the target of FloatingIP web-ip")
		// Nor by moving one there.
		second.Spec.Target = nil
		if _, err := vic.TenantV1alpha1().FloatingIPs(dev).Create(ctx, second, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err = vic.TenantV1alpha1().FloatingIPs(dev).Patch(ctx, "web-ip2", "application/merge-patch+json",
			[]byte(`{"spec":{"target":{"kind":"VirtualMachine","name":"web"}}}`), metav1.PatchOptions{})
		wantStatus(t, "retargeting a FloatingIP to VM web", err, 409, "FloatingIP web-ip")
		if err := vic.TenantV1alpha1().FloatingIPs(dev).Delete(ctx, "web-ip2", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("LoadBalancer over a VM", func(t *testing.T) {
		lb := &tenantv1alpha1.LoadBalancer{
			ObjectMeta: metav1.ObjectMeta{Name: "web-lb"},
			Spec: tenantv1alpha1.LoadBalancerSpec{
				Selector: map[string]string{hostnames.VirtualMachineLabel: "web"},
				Ports:    []tenantv1alpha1.LoadBalancerPort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: tenantv1alpha1.ProtocolTCP}},
			},
		}
		if _, err := vic.TenantV1alpha1().LoadBalancers(dev).Create(ctx, lb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got := waitLB(ctx, t, vic, dev, "web-lb", "address assigned", lbAssigned)
		svc := waitService(ctx, t, host, hostNS, hostnames.LoadBalancerService("web-lb"), "on the address", func(s *corev1.Service) (bool, string) {
			return ingressIP(s) == got.Status.Address, fmt.Sprintf("%+v", s.Status)
		})
		if len(svc.Spec.Selector) != 1 || svc.Spec.Selector[hostnames.VirtualMachineLabel] != "web" {
			t.Errorf("host Service selects %v, want the VM's pod", svc.Spec.Selector)
		}
	})

	t.Run("VMs and disks block deletes", func(t *testing.T) {
		kubectl(ctx, t, vmUser, "create", "-f", writeJSON(t, virtualMachine(hostNS, "db", nil)))
		kubectl(ctx, t, vmUser, "create", "-f", writeJSON(t, object("kubevirt.io/v1", "VirtualMachineInstance", hostNS, "web",
			map[string]interface{}{"spec": virtualMachineInstanceSpec()})))
		kubectl(ctx, t, vmUser, "create", "-f", writeJSON(t, object("v1", "PersistentVolumeClaim", hostNS, "db-data", map[string]interface{}{
			"spec": map[string]interface{}{"accessModes": []interface{}{"ReadWriteOnce"},
				"resources": map[string]interface{}{"requests": map[string]interface{}{"storage": "1Gi"}}}})))
		kubectl(ctx, t, vmUser, "create", "-f", writeJSON(t, object("cdi.kubevirt.io/v1beta1", "DataVolume", hostNS, "db-disk", map[string]interface{}{
			"spec": map[string]interface{}{"source": map[string]interface{}{"blank": map[string]interface{}{}},
				"storage": map[string]interface{}{"resources": map[string]interface{}{"requests": map[string]interface{}{"storage": "1Gi"}}}}})))

		workloads := []string{"datavolumes dev/db-disk", "persistentvolumeclaims dev/db-data",
			"virtualmachineinstances dev/web", "virtualmachines dev/db", "virtualmachines dev/web"}
		err := vic.TenantV1alpha1().Namespaces().Delete(ctx, dev, metav1.DeleteOptions{})
		st := apiStatus(t, "delete of Namespace dev", err)
		causes := causeFields(st)
		for _, w := range append([]string{"floatingips dev/web-ip", "loadbalancers dev/web-lb", "pods dev/virt-launcher-web-0"}, workloads...) {
			if !slices.Contains(causes, w) {
				t.Errorf("409 causes %v lack %s", causes, w)
			}
		}
		if st.Code != 409 || !strings.Contains(st.Message, "(blocked by floatingips dev/web-ip, loadbalancers dev/web-lb, datavolumes dev/db-disk and 5 more)") {
			t.Errorf("delete of Namespace dev: %d %q, want 409 naming the first blockers", st.Code, st.Message)
		}
		// kubectl prints the message: the names reach the user.
		_, stderr, err := theStack().Kubectl(ctx, vmUser, "delete", "namespaces.tenant.io", dev)
		if err == nil || !strings.Contains(stderr, "blocked by floatingips dev/web-ip") {
			t.Errorf("kubectl delete: %v %q", err, stderr)
		}

		if _, _, err := theStack().Kubectl(ctx, stack.AdminUser, "delete", "tenants.tenant.io", name); err == nil {
			t.Fatal("the Tenant was deleted with VMs running")
		}
		admin := tenantClient(t, stack.AdminUser)
		report, err := admin.TenantV1alpha1().Tenants().GetOffboarding(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		states := map[string]tenantv1alpha1.WorkloadState{}
		for _, b := range report.Blockers {
			states[b.Resource+" "+b.Namespace+"/"+b.Name] = b.State
		}
		for w, want := range map[string]tenantv1alpha1.WorkloadState{
			"virtualmachines dev/web": tenantv1alpha1.WorkloadRunning, "virtualmachineinstances dev/web": tenantv1alpha1.WorkloadRunning,
			"virtualmachines dev/db":             tenantv1alpha1.WorkloadStopped,
			"persistentvolumeclaims dev/db-data": tenantv1alpha1.WorkloadDisk, "datavolumes dev/db-disk": tenantv1alpha1.WorkloadDisk,
		} {
			if states[w] != want {
				t.Errorf("offboarding report: %s is %q, want %q (%+v)", w, states[w], want, report.Blockers)
			}
		}
		if report.Ready {
			t.Error("offboarding report ready with VMs running")
		}
	})

	t.Run("Pending again once the VM is deleted", func(t *testing.T) {
		kubectl(ctx, t, vmUser, "-n", hostNS, "delete", "virtualmachineinstances.kubevirt.io", "web")
		kubectl(ctx, t, vmUser, "-n", hostNS, "delete", "virtualmachines.kubevirt.io", "web")
		kubectl(ctx, t, vmUser, "-n", hostNS, "delete", "pod", "virt-launcher-web-0", "--grace-period=0", "--force")
		pendingForWeb("Pending again, TargetNotFound")
		if _, err := host.CoreV1().Services(hostNS).Get(ctx, hostnames.FloatingIPService("web-ip"), metav1.GetOptions{}); err != nil {
			t.Errorf("the FloatingIP's Service: %v (it keeps the address for the VM's return)", err)
		}
	})

	t.Run("deletes go through once nothing is left", func(t *testing.T) {
		for _, args := range [][]string{
			{"delete", "virtualmachines.kubevirt.io", "db"}, {"delete", "persistentvolumeclaims", "db-data"},
			{"delete", "datavolumes.cdi.kubevirt.io", "db-disk"},
		} {
			kubectl(ctx, t, vmUser, append([]string{"-n", hostNS, "--wait=false"}, args...)...)
		}
		deletePublicIPUsers(t, vic, dev)
		eventually(ctx, t, syncTimeout, "Namespace dev deleted", func(ctx context.Context) (bool, string) {
			err := vic.TenantV1alpha1().Namespaces().Delete(ctx, dev, metav1.DeleteOptions{})
			return err == nil || apierrors.IsNotFound(err), fmt.Sprint(err)
		})
	})
}
