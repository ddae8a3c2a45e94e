package limits

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	udnclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1/apis/clientset/versioned"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// networkAttachments are the NetworkAttachmentDefinitions cluster-manager
// renders a network into each namespace it selects with.
var networkAttachments = schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}

// TestNetworkPastClusterManagersReport: cluster-manager reports a network
// created in one message naming every namespace it is rendered into, and a
// condition's message holds 32,768 bytes; past that, the host refuses its
// status writes. A Network whose Namespaces' host names do not fit says
// so in NetworkCreated, keeping the status cluster-manager last reported,
// and its Namespaces still each say whether they are attached.
func TestNetworkPastClusterManagersReport(t *testing.T) {
	// 505 host namespace names of 63 characters, each named with ", ":
	// 505 x 65 bytes, more than 32,768.
	const count = 505
	ctx := framework.Context(t, 10*time.Minute)
	s := framework.Current()
	admin, member := client(t, s, stack.AdminUser), client(t, s, "alice")
	dyn, err := dynamic.NewForConfig(s.RESTConfig(stack.AdminUser))
	if err != nil {
		t.Fatal(err)
	}
	tn, err := admin.TenantV1alpha1().Tenants().Patch(ctx, "acme", types.MergePatchType,
		[]byte(fmt.Sprintf(`{"spec":{"quota":{"namespaces":%d}}}`, count+10)), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cudn := hostnames.ClusterUserDefinedNetwork(tn.UID, "default")
	waitNetwork(ctx, t, member, "NetworkCreated by OVN-Kubernetes", func(n *tenantv1alpha1.Network) bool {
		return conditionIs(n.Status.Conditions, tenantv1alpha1.ConditionNetworkCreated, metav1.ConditionTrue, "NetworkAttachmentDefinitionCreated")
	})
	before, err := member.TenantV1alpha1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}

	names := make([]string, count)
	for i := range names {
		names[i] = fmt.Sprintf("wide-%03d-%s", i, strings.Repeat("x", 50))
		if host := hostnames.Namespace(tn.Name, tn.UID, names[i]); len(host) != 63 {
			t.Fatalf("host namespace %s: %d characters, want 63", host, len(host))
		}
	}
	created := time.Now()
	errs := make([]error, len(names))
	slots := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i, n := range names {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			ns := &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: tenantv1alpha1.NamespaceSpec{Network: "default"}}
			_, errs[i] = member.TenantV1alpha1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d Namespaces created in %s", count, time.Since(created).Round(time.Millisecond))

	attached := len(before.Items) + count
	n := waitNetwork(ctx, t, member, "NetworkCreated saying cluster-manager cannot report", func(n *tenantv1alpha1.Network) bool {
		c := meta.FindStatusCondition(n.Status.Conditions, tenantv1alpha1.ConditionNetworkCreated)
		return len(n.Status.Namespaces) == attached && c != nil && strings.Contains(c.Message, "cannot report")
	})
	c := meta.FindStatusCondition(n.Status.Conditions, tenantv1alpha1.ConditionNetworkCreated)
	t.Logf("Network default with %d Namespaces after %s: NetworkCreated %s/%s: %s", len(n.Status.Namespaces), time.Since(created).Round(time.Millisecond),
		c.Status, c.Reason, c.Message)
	for _, want := range []string{"ClusterUserDefinedNetwork " + cudn, fmt.Sprintf("these %d do not fit", attached), "NetworkAttached",
		"Its last report stands (True, NetworkAttachmentDefinitionCreated)"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("NetworkCreated message %q, want %q in it", c.Message, want)
		}
	}
	if c.Status != metav1.ConditionTrue || !conditionIs(n.Status.Conditions, tenantv1alpha1.ConditionReady, metav1.ConditionTrue, "") {
		t.Errorf("the network exists and its last report said created; conditions %+v", n.Status.Conditions)
	}
	// kubectl shows it to the member.
	out, stderr, err := s.Kubectl(ctx, "alice", "get", "networks.tenant.io", "default", "-o",
		`jsonpath={.status.conditions[?(@.type=="NetworkCreated")].message}`)
	if err != nil || !strings.Contains(out, "cannot report on ClusterUserDefinedNetwork "+cudn) {
		t.Errorf("kubectl: NetworkCreated message %q (%v: %s)", out, err, stderr)
	}

	// The premise, on the real cluster-manager: once it has rendered the
	// network into the namespaces, the host refuses its report as too
	// long, and the host's status names fewer namespaces than there are.
	logPath := s.LogPath("ovnkube-cluster-manager")
	var state string
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		log, err := os.ReadFile(logPath)
		if err != nil {
			return false, err
		}
		for _, line := range strings.Split(string(log), "\n") {
			if strings.Contains(line, cudn) && strings.Contains(line, "may not be more than 32768 bytes") {
				return true, nil
			}
		}
		nads, err := dyn.Resource(networkAttachments).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + cudn})
		if err != nil {
			return false, err
		}
		state = fmt.Sprintf("%d of %d network attachments rendered", len(nads.Items), attached)
		return false, nil
	}); err != nil {
		t.Fatalf("cluster-manager's report was never refused as too long (%s): %v; see %s", state, err, logPath)
	}
	udn, err := udnclientset.NewForConfig(s.RESTConfig(stack.AdminUser))
	if err != nil {
		t.Fatal(err)
	}
	host, err := udn.K8sV1().ClusterUserDefinedNetworks().Get(ctx, cudn, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hc := meta.FindStatusCondition(host.Status.Conditions, tenantv1alpha1.ConditionNetworkCreated)
	if hc == nil {
		t.Fatalf("the host's ClusterUserDefinedNetwork %s has no NetworkCreated: %+v", cudn, host.Status.Conditions)
	}
	if named := strings.Count(hc.Message, ", ") + 1; len(hc.Message) > 32768 || named >= attached {
		t.Errorf("the host's NetworkCreated names %d namespaces (%d bytes), want fewer than %d", named, len(hc.Message), attached)
	} else {
		t.Logf("the host's NetworkCreated names %d of %d namespaces (%d bytes)", named, attached, len(hc.Message))
	}

	// Each Namespace still says whether it is attached: the last one
	// created becomes Ready once its attachment is rendered.
	last := names[count-1]
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		ns, err := member.TenantV1alpha1().Namespaces().Get(ctx, last, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return conditionIs(ns.Status.Conditions, tenantv1alpha1.ConditionNetworkAttached, metav1.ConditionTrue, "Attached") &&
			conditionIs(ns.Status.Conditions, tenantv1alpha1.ConditionReady, metav1.ConditionTrue, ""), nil
	}); err != nil {
		t.Errorf("Namespace %s never NetworkAttached and Ready: %v", last, err)
	}
}

func client(t *testing.T, s *stack.Stack, user string) clientset.Interface {
	t.Helper()
	c, err := clientset.NewForConfig(framework.Unthrottled(s.RESTConfig(user)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitNetwork waits until the member's Network default is ok.
func waitNetwork(ctx context.Context, t *testing.T, member clientset.Interface, what string, ok func(*tenantv1alpha1.Network) bool) *tenantv1alpha1.Network {
	t.Helper()
	var last *tenantv1alpha1.Network
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := member.TenantV1alpha1().Networks().Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = n
		return ok(n), nil
	}); err != nil {
		t.Fatalf("Network default never %s: %v; last %+v", what, err, last)
	}
	return last
}

func conditionIs(conds []metav1.Condition, typ string, status metav1.ConditionStatus, reason string) bool {
	c := meta.FindStatusCondition(conds, typ)
	return c != nil && c.Status == status && (reason == "" || c.Reason == reason)
}
