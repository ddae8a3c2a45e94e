package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
)

// BenchmarkNamespaceDelete measures a tenant Namespace delete to its host
// namespace gone, with OVN-Kubernetes' cluster-manager in the stack, for
// BENCH_NSDELETE_COUNT Namespaces attached to the tenant's Network and
// deleted BENCH_NSDELETE_WORKERS at a time; beside it, as the reference,
// BENCH_NSDELETE_DIRECT host namespaces of the same network deleted while
// their network still selects them (what the syncer did before it
// detached them first), waited for at most BENCH_NSDELETE_CAP; and, as the floor, as many namespaces that no
// network selects, created and deleted directly. It counts
// the moments, polled every 100 ms, at which the Network was not Ready.
func BenchmarkNamespaceDelete(b *testing.B) {
	if b.N > 1 {
		b.Fatal("BenchmarkNamespaceDelete runs its rounds once (-benchtime 1x)")
	}
	count, workers, direct := envInt(b, "BENCH_NSDELETE_COUNT", 30), envInt(b, "BENCH_NSDELETE_WORKERS", 5), envInt(b, "BENCH_NSDELETE_DIRECT", 3)
	limit := envDuration(b, "BENCH_NSDELETE_CAP", 2*time.Minute)
	z := syncSizes{tenants: 1, workers: 1, perTenant: count + direct + 1}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, stop := benchStack(ctx, b, "", z.tenants, nil)
	defer stop()
	r := &syncRun{b: b, z: z, s: s, seen: newFirstSeen()}
	r.clients()
	r.tenantsReadyWatched(ctx)
	member := r.members[0]

	// The Namespaces, each attached to the tenant's Network default.
	names := make([]string, count+direct)
	hostNS := map[string]string{}
	for i := range names {
		names[i] = fmt.Sprintf("del-%03d", i)
		if _, err := member.TenantV1alpha1().Namespaces().Create(ctx, tenantNamespace(names[i]), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for _, name := range names {
		ns, err := waitAttached(ctx, member, name)
		if err != nil {
			b.Fatal(err)
		}
		hostNS[name] = ns.Status.HostNamespace
	}
	gone := watchNamespacesGone(ctx, b, r.host)
	notReady := watchNetworkNotReady(ctx, member, "default")

	b.ResetTimer()
	// The product's path first: the tenant Namespace deleted.
	var took []time.Duration
	var mu sync.Mutex
	var jobs []job
	before := notReady.Load()
	for _, name := range names[:count] {
		jobs = append(jobs, func(ctx context.Context) error {
			start := time.Now()
			if err := member.TenantV1alpha1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				return err
			}
			d, ok := gone.wait(ctx, hostNS[name], start, limit)
			if !ok {
				return fmt.Errorf("host namespace %s not gone %s after its Namespace's delete", hostNS[name], limit)
			}
			mu.Lock()
			took = append(took, d)
			mu.Unlock()
			return nil
		})
	}
	if err := runJobs(ctx, workers, jobs); err != nil {
		b.Fatal(err)
	}
	productNotReady := notReady.Load() - before
	// The floor: kube-controller-manager's own deletion of a namespace
	// that no network selects, as many at a time.
	var floor []time.Duration
	jobs = nil
	for i := range count {
		jobs = append(jobs, func(ctx context.Context) error {
			name := fmt.Sprintf("bench-plain-%03d", i)
			if _, err := r.host.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
				return err
			}
			start := time.Now()
			if err := r.host.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				return err
			}
			d, ok := gone.wait(ctx, name, start, limit)
			if !ok {
				return fmt.Errorf("namespace %s not gone %s after its delete", name, limit)
			}
			mu.Lock()
			floor = append(floor, d)
			mu.Unlock()
			return nil
		})
	}
	if err := runJobs(ctx, workers, jobs); err != nil {
		b.Fatal(err)
	}
	// Then the reference: host namespaces deleted while selected (they
	// keep the network not Ready until they go, so they come last).
	var reference []time.Duration
	var stuck int
	jobs = nil
	before = notReady.Load()
	for _, name := range names[count:] {
		jobs = append(jobs, func(ctx context.Context) error {
			start := time.Now()
			if err := r.host.CoreV1().Namespaces().Delete(ctx, hostNS[name], metav1.DeleteOptions{}); err != nil {
				return err
			}
			d, ok := gone.wait(ctx, hostNS[name], start, limit)
			mu.Lock()
			defer mu.Unlock()
			if ok {
				reference = append(reference, d)
			} else {
				stuck++
			}
			return nil
		})
	}
	if err := runJobs(ctx, workers, jobs); err != nil {
		b.Fatal(err)
	}
	referenceNotReady := notReady.Load() - before
	for _, name := range names[count:] {
		_ = member.TenantV1alpha1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	}

	b.StopTimer()

	b.ReportMetric(pctl(took, 50), "delete-p50-ms")
	b.ReportMetric(pctl(took, 99), "delete-p99-ms")
	r.rows = append(r.rows, row{"tenant Namespace delete -> host namespace gone", len(took), pctl(took, 50), pctl(took, 99)})
	r.rows = append(r.rows, row{"namespace of no network deleted -> gone (the floor)", len(floor), pctl(floor, 50), pctl(floor, 99)})
	if len(reference) > 0 {
		r.rows = append(r.rows, row{"host namespace deleted while selected -> gone", len(reference), pctl(reference, 50), pctl(reference, 99)})
	}
	r.notef("tenant Namespaces deleted %d at a time: %d, the Network seen not Ready %d times (polled every 100 ms)", workers, len(took), productNotReady)
	r.notef("reference, host namespaces deleted while their network selects them: %d of %d gone within %s, the Network seen not Ready %d times",
		len(reference), len(reference)+stuck, limit, referenceNotReady)
	r.reportAs("BenchmarkNamespaceDelete: with OVN-Kubernetes' cluster-manager")
}

// waitAttached waits until tenant Namespace name is Ready: its host
// namespace synced and its network rendered there.
func waitAttached(ctx context.Context, member clientset.Interface, name string) (*tenantv1alpha1.Namespace, error) {
	var ns *tenantv1alpha1.Namespace
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, syncTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		ns, err = member.TenantV1alpha1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		return err == nil && meta.IsStatusConditionTrue(ns.Status.Conditions, tenantv1alpha1.ConditionReady), nil
	})
	if err != nil {
		return nil, fmt.Errorf("Namespace %s not Ready: %w", name, err)
	}
	return ns, nil
}

// namespacesGone records when each host namespace was deleted from the
// host (its watch's DELETED event).
type namespacesGone struct {
	mu   sync.Mutex
	at   map[string]time.Time
	cond *sync.Cond
}

func watchNamespacesGone(ctx context.Context, b *testing.B, host kubernetes.Interface) *namespacesGone {
	g := &namespacesGone{at: map[string]time.Time{}}
	g.cond = sync.NewCond(&g.mu)
	list, err := host.CoreV1().Namespaces().List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		b.Fatal(err)
	}
	w, err := host.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if ns, ok := ev.Object.(*corev1.Namespace); ok && ev.Type == watch.Deleted {
				g.mu.Lock()
				g.at[ns.Name] = time.Now()
				g.cond.Broadcast()
				g.mu.Unlock()
			}
		}
	}()
	go func() {
		<-ctx.Done()
		g.cond.Broadcast()
	}()
	return g
}

// wait returns how long after start namespace name went, or false if it
// did not within limit.
func (g *namespacesGone) wait(ctx context.Context, name string, start time.Time, limit time.Duration) (time.Duration, bool) {
	deadline := time.AfterFunc(time.Until(start.Add(limit)), func() {
		g.mu.Lock()
		g.cond.Broadcast()
		g.mu.Unlock()
	})
	defer deadline.Stop()
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		if at, ok := g.at[name]; ok {
			return at.Sub(start), true
		}
		if ctx.Err() != nil || time.Since(start) >= limit {
			return 0, false
		}
		g.cond.Wait()
	}
}

// watchNetworkNotReady counts the polls, every 100 ms, that find the
// member's Network name not Ready.
func watchNetworkNotReady(ctx context.Context, member clientset.Interface, name string) *atomic.Int64 {
	var n atomic.Int64
	go func() {
		for ctx.Err() == nil {
			nw, err := member.TenantV1alpha1().Networks().Get(ctx, name, metav1.GetOptions{})
			if err == nil && !meta.IsStatusConditionTrue(nw.Status.Conditions, tenantv1alpha1.ConditionReady) {
				n.Add(1)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return &n
}
