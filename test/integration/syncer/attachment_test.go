package syncer

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestNamespaceNetworkAttached: a tenant Namespace is Ready only once
// OVN-Kubernetes' cluster-manager has rendered its Network into its host
// namespace, a NetworkAttachmentDefinition there that pods are attached
// by. With cluster-manager stopped (SIGSTOP, a few seconds: far within its
// leader lease), a new Namespace is HostSynced (the syncer's part is done)
// but not NetworkAttached, and not Ready, saying why; once cluster-manager
// runs again and renders the network, it is both. Then cluster-manager
// crashes (SIGKILL): the stack starts it again, as a kubelet would, and it
// takes its lease back and renders the next Namespace's network.
func TestNamespaceNetworkAttached(t *testing.T) {
	ctx := framework.Context(t, 4*slowTimeout)
	name := uniqueName(t)
	tn := onboard(ctx, t, tenantSpec{name: name, users: []string{attachUser}})
	member := tenantClient(t, attachUser)
	_, dyn := hostClients(t)
	cudn := hostnames.ClusterUserDefinedNetwork(tn.UID, "default")

	// The default Namespace: attached, and the attachment is the one
	// cluster-manager rendered.
	def := waitNamespaceReady(ctx, t, member, defaultNamespace)
	attached := meta.FindStatusCondition(def.Status.Conditions, tenantv1alpha1.ConditionNetworkAttached)
	// The message names the attachment by its network, as every Namespace
	// on that network shares it; status.hostNamespace names where it is.
	if attached == nil || attached.Status != metav1.ConditionTrue || !strings.Contains(attached.Message, "NetworkAttachmentDefinition "+cudn) ||
		strings.Contains(attached.Message, def.Status.HostNamespace) {
		t.Fatalf("default Namespace NetworkAttached %+v, want True naming NetworkAttachmentDefinition %s and not the host namespace %s", attached, cudn, def.Status.HostNamespace)
	}
	if _, err := dyn.Resource(nadGVR).Namespace(def.Status.HostNamespace).Get(ctx, cudn, metav1.GetOptions{}); err != nil {
		t.Fatalf("the NetworkAttachmentDefinition the default Namespace is attached by: %v", err)
	}

	pid := theStack().PID("ovnkube-cluster-manager")
	if pid == 0 {
		t.Fatal("the stack runs no OVN-Kubernetes cluster-manager")
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Errorf("resuming cluster-manager: %v", err)
			}
		}
	}
	t.Cleanup(resume)

	const late = "late"
	kubectl(ctx, t, attachUser, "create", "-f", writeJSON(t, namespaceObject(late)))
	waiting := waitNamespace(ctx, t, member, late, syncTimeout, "HostSynced, not attached and not Ready", func(ns *tenantv1alpha1.Namespace) bool {
		return conditionIs(ns.Status.Conditions, tenantv1alpha1.ConditionHostSynced, metav1.ConditionTrue, "") &&
			conditionIs(ns.Status.Conditions, tenantv1alpha1.ConditionNetworkAttached, metav1.ConditionFalse, "AttachmentPending") &&
			conditionIs(ns.Status.Conditions, tenantv1alpha1.ConditionReady, metav1.ConditionFalse, "NetworkNotAttached")
	})
	if ready := meta.FindStatusCondition(waiting.Status.Conditions, tenantv1alpha1.ConditionReady); !strings.Contains(ready.Message, "NetworkAttachmentDefinition "+cudn) {
		t.Errorf("Ready message %q does not name the NetworkAttachmentDefinition it waits for", ready.Message)
	}
	// kubectl shows why, as the member sees it.
	if out := kubectl(ctx, t, attachUser, "get", "namespaces.tenant.io", late, "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].reason}"); out != "NetworkNotAttached" {
		t.Errorf("kubectl: Ready reason %q while cluster-manager is stopped, want NetworkNotAttached", out)
	}
	if out := kubectl(ctx, t, attachUser, "get", "namespaces.tenant.io", late); !tableCell(out, late, "READY", "False") {
		t.Errorf("kubectl get: want READY False for %s while cluster-manager is stopped:\n%s", late, out)
	}
	resume()

	ns := waitNamespaceReady(ctx, t, member, late)
	if _, err := dyn.Resource(nadGVR).Namespace(ns.Status.HostNamespace).Get(ctx, cudn, metav1.GetOptions{}); err != nil {
		t.Errorf("Namespace %s Ready without its NetworkAttachmentDefinition: %v", late, err)
	}
	if out := kubectl(ctx, t, attachUser, "get", "namespaces.tenant.io", late); !tableCell(out, late, "READY", "True") {
		t.Errorf("kubectl get: want READY True for %s:\n%s", late, out)
	}

	restarts := theStack().Restarts("ovnkube-cluster-manager")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, syncTimeout, "cluster-manager started again after it was killed", func(context.Context) (bool, string) {
		now, n := theStack().PID("ovnkube-cluster-manager"), theStack().Restarts("ovnkube-cluster-manager")
		return now != 0 && now != pid && n == restarts+1, fmt.Sprintf("pid %d (killed %d), %d restarts (%d before)", now, pid, n, restarts)
	})
	const afterCrash = "after-crash"
	kubectl(ctx, t, attachUser, "create", "-f", writeJSON(t, namespaceObject(afterCrash)))
	ns = waitNamespaceReady(ctx, t, member, afterCrash)
	if _, err := dyn.Resource(nadGVR).Namespace(ns.Status.HostNamespace).Get(ctx, cudn, metav1.GetOptions{}); err != nil {
		t.Errorf("Namespace %s Ready without its NetworkAttachmentDefinition: %v", afterCrash, err)
	}
	if !theStack().LogContains("ovnkube-cluster-manager", "restarting ovnkube-cluster-manager in 1s") {
		t.Errorf("cluster-manager's log does not say it was restarted (%s)", theStack().LogPath("ovnkube-cluster-manager"))
	}
}

// waitNamespaceReady waits until tenant Namespace name, as the member cs
// sees it, is HostSynced, NetworkAttached and Ready. Cluster-manager
// renders a network into a new namespace within a second here, but was
// seen to take a minute: it waits as long as a restart may take.
func waitNamespaceReady(ctx context.Context, t *testing.T, cs clientset.Interface, name string) *tenantv1alpha1.Namespace {
	t.Helper()
	return waitNamespace(ctx, t, cs, name, slowTimeout, "Ready", func(ns *tenantv1alpha1.Namespace) bool {
		return conditionIs(ns.Status.Conditions, tenantv1alpha1.ConditionHostSynced, metav1.ConditionTrue, "") &&
			conditionIs(ns.Status.Conditions, tenantv1alpha1.ConditionNetworkAttached, metav1.ConditionTrue, "Attached") &&
			conditionIs(ns.Status.Conditions, tenantv1alpha1.ConditionReady, metav1.ConditionTrue, "")
	})
}

// tableCell says whether kubectl's table out has, in the row of name, the
// value want in the column headed column (kubectl aligns each column's
// cells under its header).
func tableCell(out, name, column, want string) bool {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	at := strings.Index(lines[0], column)
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name && at >= 0 && at < len(l) {
			cell := strings.Fields(l[at:])
			return len(cell) > 0 && cell[0] == want
		}
	}
	return false
}
