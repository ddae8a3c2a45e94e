package syncer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestEgressDisjointProperty changes a tenant's FloatingIPs at random (made,
// moved between pods and VMs, untargeted, deleted) on a Network with a NAT
// gateway, through the real stack, and checks what OVN-Kubernetes would
// act on: the EgressIPs on the host. Whenever it looks, no pod matches two
// EgressIPs; once the syncer has caught up, a pod a FloatingIP targets
// matches that FloatingIP's EgressIP only and every other pod the NAT
// gateway's only.
func TestEgressDisjointProperty(t *testing.T) {
	ctx := framework.Context(t, 4*slowTimeout)
	name := uniqueName(t)
	tn := onboard(ctx, t, tenantSpec{name: name, users: []string{egressUser}, publicIPs: 4, floatingIPs: 3})
	member := tenantClient(t, egressUser)
	host, _ := hostClients(t)
	_, eip := ovnClients(t)
	hostNS := hostnames.Namespace(tn.Name, tn.UID, defaultNamespace)
	deletePublicIPUsersAtEnd(t, member)

	kubectl(ctx, t, egressUser, "patch", "network", "default", "--type=merge", "-p", `{"spec":{"natGateway":{"enabled":true}}}`)
	natName := hostnames.NATGatewayEgressIP(hostnames.ClusterUserDefinedNetwork(tn.UID, "default"))

	// Plain pods, and the launcher pods of VMs v0 and v1 as KubeVirt
	// labels them (no KubeVirt runs here).
	plain, vms := []string{"p0", "p1"}, []string{"v0", "v1"}
	pods := map[string]map[string]string{}
	for _, p := range plain {
		pods[p] = nil
	}
	for _, vm := range vms {
		kubectl(ctx, t, egressUser, "create", "-f", writeJSON(t, virtualMachine(hostNS, vm, nil)))
		pods["virt-launcher-"+vm] = map[string]string{hostnames.VirtualMachineLabel: vm}
	}
	for p, l := range pods {
		pod := restrictedPod(hostNS, p)
		pod.Labels = l
		eventually(ctx, t, syncTimeout, "pod "+p, func(ctx context.Context) (bool, string) {
			_, err := host.CoreV1().Pods(hostNS).Create(ctx, pod, metav1.CreateOptions{})
			return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
		})
	}
	// Before the tenant is offboarded: pods and VMs block it.
	t.Cleanup(func() {
		zero := int64(0)
		_ = host.CoreV1().Pods(hostNS).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		theStack().Kubectl(context.Background(), stack.AdminUser, "-n", hostNS, "delete", "virtualmachines.kubevirt.io", "--all") //nolint:errcheck
	})

	nsObj, err := host.CoreV1().Namespaces().Get(ctx, hostNS, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// matches names, by pod, the EgressIPs of the tenant that select it.
	matches := func(ctx context.Context) (map[string][]string, error) {
		list, err := eip.K8sV1().EgressIPs().List(ctx, metav1.ListOptions{LabelSelector: hostnames.TenantLabel + "=" + name})
		if err != nil {
			return nil, err
		}
		podList, err := host.CoreV1().Pods(hostNS).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		out := map[string][]string{}
		for _, p := range podList.Items {
			out[p.Name] = nil
			for _, e := range list.Items {
				nsSel, err1 := metav1.LabelSelectorAsSelector(&e.Spec.NamespaceSelector)
				podSel, err2 := metav1.LabelSelectorAsSelector(&e.Spec.PodSelector)
				if err1 != nil || err2 != nil {
					return nil, fmt.Errorf("EgressIP %s: %v %v", e.Name, err1, err2)
				}
				if nsSel.Matches(labels.Set(nsObj.Labels)) && podSel.Matches(labels.Set(p.Labels)) {
					out[p.Name] = append(out[p.Name], e.Name)
				}
			}
			sort.Strings(out[p.Name])
		}
		return out, nil
	}
	targets := map[string]*tenantv1alpha1.FloatingIPTarget{} // FloatingIP -> target
	// want is the EgressIP each pod should leave through.
	want := func() map[string]string {
		out := map[string]string{}
		for p, l := range pods {
			out[p] = natName
			for f, tg := range targets {
				if tg != nil && ((tg.Kind == tenantv1alpha1.FloatingIPTargetPod && tg.Name == p) ||
					(tg.Kind == tenantv1alpha1.FloatingIPTargetVirtualMachine && l[hostnames.VirtualMachineLabel] == tg.Name)) {
					out[p] = hostnames.FloatingIPEgressIP(tn.UID, defaultNamespace, f)
				}
			}
		}
		return out
	}
	converge := func(step string) {
		t.Helper()
		eventually(ctx, t, syncTimeout, "egress after "+step, func(ctx context.Context) (bool, string) {
			got, err := matches(ctx)
			if err != nil {
				return false, err.Error()
			}
			var state []string
			done := true
			for p, w := range want() {
				if len(got[p]) > 1 {
					t.Fatalf("after %s: pod %s matches %d EgressIPs %v", step, p, len(got[p]), got[p])
				}
				done = done && slices.Equal(got[p], []string{w})
				state = append(state, fmt.Sprintf("%s: %v (want %s)", p, got[p], w))
			}
			sort.Strings(state)
			return done, strings.Join(state, "; ")
		})
	}
	converge("enabling the NAT gateway")

	const seed, steps = 17, 24
	r := rand.New(rand.NewPCG(seed, seed))
	t.Logf("seed %d", seed)
	for step := 1; step <= steps; step++ {
		f := fmt.Sprintf("fip%d", r.IntN(3))
		_, exists := targets[f]
		var what string
		switch {
		case exists && r.IntN(4) == 0:
			if err := member.TenantV1alpha1().FloatingIPs(defaultNamespace).Delete(ctx, f, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			delete(targets, f)
			what = "deleted " + f
		default:
			// A target no other FloatingIP has (the registry refuses a
			// second one), or none.
			var free []*tenantv1alpha1.FloatingIPTarget
			for _, p := range plain {
				free = append(free, &tenantv1alpha1.FloatingIPTarget{Kind: tenantv1alpha1.FloatingIPTargetPod, Name: p})
			}
			for _, vm := range vms {
				free = append(free, &tenantv1alpha1.FloatingIPTarget{Kind: tenantv1alpha1.FloatingIPTargetVirtualMachine, Name: vm})
			}
			free = slices.DeleteFunc(free, func(tg *tenantv1alpha1.FloatingIPTarget) bool {
				for other, otg := range targets {
					if other != f && otg != nil && *otg == *tg {
						return true
					}
				}
				return false
			})
			var tg *tenantv1alpha1.FloatingIPTarget
			if i := r.IntN(len(free) + 1); i < len(free) {
				tg = free[i]
			}
			if exists {
				patch := `{"spec":{"target":null}}`
				if tg != nil {
					patch = fmt.Sprintf(`{"spec":{"target":{"kind":%q,"name":%q}}}`, tg.Kind, tg.Name)
				}
				if _, err := member.TenantV1alpha1().FloatingIPs(defaultNamespace).Patch(ctx, f, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
					t.Fatalf("retargeting %s to %+v: %v", f, tg, err)
				}
			} else {
				obj := &tenantv1alpha1.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: f}, Spec: tenantv1alpha1.FloatingIPSpec{Target: tg}}
				if _, err := member.TenantV1alpha1().FloatingIPs(defaultNamespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
					t.Fatalf("creating %s for %+v: %v", f, tg, err)
				}
			}
			targets[f] = tg
			what = fmt.Sprintf("%s targets %+v", f, tg)
		}
		t.Logf("step %d: %s", step, what)
		converge(what)
	}
}
