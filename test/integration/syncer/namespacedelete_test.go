package syncer

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestNamespaceDeleteLeavesNetworkReady deletes tenant Namespaces attached
// to the tenant's Network, as a member does (kubectl delete): each host
// namespace, NetworkAttachmentDefinition included, goes within seconds,
// and the Network, which still serves the tenant's other Namespaces, stays
// Ready throughout.
func TestNamespaceDeleteLeavesNetworkReady(t *testing.T) {
	ctx := framework.Context(t, 4*slowTimeout)
	name := uniqueName(t)
	onboard(ctx, t, tenantSpec{name: name, users: []string{deleteUser}})
	member := tenantClient(t, deleteUser)
	host, _ := hostClients(t)
	waitNamespaceReady(ctx, t, member, defaultNamespace)

	const n = 6
	hostNS := map[string]string{}
	for i := range n {
		ns := fmt.Sprintf("gone-%d", i)
		kubectl(ctx, t, deleteUser, "create", "-f", writeJSON(t, namespaceObject(ns)))
	}
	for i := range n {
		ns := fmt.Sprintf("gone-%d", i)
		hostNS[ns] = waitNamespaceReady(ctx, t, member, ns).Status.HostNamespace
	}
	waitNetwork(ctx, t, member, "default", "Ready", func(n *tenantv1alpha1.Network) bool {
		return conditionTrue(n.Status.Conditions, tenantv1alpha1.ConditionReady)
	})

	// Watch the Network's Ready for the whole of the deletes.
	watchCtx, stopWatch := context.WithCancel(ctx)
	var flips []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for watchCtx.Err() == nil {
			got, err := member.TenantV1alpha1().Networks().Get(watchCtx, "default", metav1.GetOptions{})
			if err == nil {
				if c := meta.FindStatusCondition(got.Status.Conditions, tenantv1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
					mu.Lock()
					flips = append(flips, fmt.Sprintf("%s: %+v", time.Now().Format("15:04:05.000"), c))
					mu.Unlock()
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()

	var took []time.Duration
	for i := range n {
		ns := fmt.Sprintf("gone-%d", i)
		start := time.Now()
		kubectl(ctx, t, deleteUser, "delete", "namespaces.tenant.io", ns, "--wait=false")
		eventually(ctx, t, slowTimeout, "host namespace "+hostNS[ns]+" gone", func(ctx context.Context) (bool, string) {
			got, err := host.CoreV1().Namespaces().Get(ctx, hostNS[ns], metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, "gone"
			}
			if err != nil {
				return false, err.Error()
			}
			return false, fmt.Sprintf("phase %s, conditions %+v", got.Status.Phase, got.Status.Conditions)
		})
		took = append(took, time.Since(start))
	}
	stopWatch()
	wg.Wait()
	slices.Sort(took)
	t.Logf("tenant Namespace delete -> host namespace gone, %d deletes: p50 %s, max %s (all: %v)", n, took[n/2], took[n-1], took)
	if len(flips) > 0 {
		t.Errorf("the Network was not Ready %d times while its Namespaces were deleted, first: %s", len(flips), flips[0])
	}
}
