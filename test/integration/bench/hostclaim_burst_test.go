package bench

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostbinding"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/pkg/syncer/hostclaim"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// The names of BenchmarkHostClaimBurst's objects: its stack is its own,
// so nothing of it outlives the benchmark.
const (
	claimPool      = "metal3-burst" // the provider namespace of the servers
	claimClass     = "burst"        // the HostClass offering them
	claimName      = "server"       // each tenant's HostClaim, in its Namespace default
	claimNamespace = "default"
	// claimLedgerPrefix is where the stack's tenant-apiserver keeps its
	// binding record: its --etcd-prefix (pkg/stack) and "/hostbindings"
	// (pkg/cmd/server).
	claimLedgerPrefix = "/tenant.io/hostbindings"
)

// claimBoundKey keys tenant t's claim first seen Bound; claimRefusedKey
// first seen Pending with Associated False, reason NoHostAvailable.
func claimBoundKey(t string) string   { return "claim-bound/" + t }
func claimRefusedKey(t string) string { return "claim-refused/" + t }

// BenchmarkHostClaimBurst has more tenants claim a server at once than a
// HostClass has servers, through the whole stack: 100 servers
// (BareMetalHosts registered and inspected by the baremetal-operator
// stand-in, 50 ms per step) in one class offered to every tenant, 200
// Ready tenants with a quota of one HostClaim each, then one HostClaim per
// tenant, created by its member through kube-apiserver's aggregation, 20
// creates at a time. Each claim is followed in its member's watch until it
// is Bound or Pending with reason NoHostAvailable. It reports how many were
// bound and refused, the time from the first create to the last claim
// bound and to the last refused, and create -> Bound per claim. Then, off
// the clock, it checks the servers (exactly one BareMetalHost per Bound
// claim carries it as consumerRef, no claim on two) and tenant-apiserver's
// binding record in etcd (one binding per Bound claim, on that server):
// double-bindings counts every server or claim held twice, or held
// without the other side agreeing. BENCH_HOSTCLAIM_SERVERS, _TENANTS and
// _WORKERS change the sizes.
func BenchmarkHostClaimBurst(b *testing.B) {
	if b.N > 1 {
		b.Fatal("BenchmarkHostClaimBurst fills its stack: run it once (-benchtime 1x)")
	}
	servers := envInt(b, "BENCH_HOSTCLAIM_SERVERS", 100)
	tenants := envInt(b, "BENCH_HOSTCLAIM_TENANTS", 200)
	workers := envInt(b, "BENCH_HOSTCLAIM_WORKERS", 20)
	if servers > 254 {
		b.Fatalf("BENCH_HOSTCLAIM_SERVERS=%d: at most 254 demo servers", servers)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, stop := benchStack(ctx, b, "BENCH_HOSTCLAIM_TENANT_APISERVER_ARGS", tenants, func(o *stack.Options) {
		// Neither the tenants' networks nor public IPs take part.
		o.SkipOVNKube, o.SkipMetalLB = true, true
		o.BareMetalStandIn, o.BareMetalStandInStep = true, 50*time.Millisecond
	})
	defer stop()
	r := &syncRun{b: b, z: syncSizes{tenants: tenants, workers: workers}, s: s, seen: newFirstSeen()}
	r.clients()
	dyn, err := dynamic.NewForConfig(framework.Unthrottled(s.RESTConfig(stack.AdminUser)))
	if err != nil {
		b.Fatal(err)
	}

	// The servers, and the class once it counts them all available.
	registered := time.Now()
	if err := stack.CreateDemoBareMetalHosts(ctx, dyn, claimPool, servers, func(int) map[string]string {
		return map[string]string{"infra-kind": "standard"}
	}); err != nil {
		b.Fatal(err)
	}
	if _, err := r.admin.TenantV1alpha1().HostClasses().Create(ctx, &tenantv1alpha1.HostClass{
		ObjectMeta: metav1.ObjectMeta{Name: claimClass},
		Spec:       tenantv1alpha1.HostClassSpec{HostNamespace: claimPool, TenantLabels: []string{"infra-kind"}, AllTenants: true},
	}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	for {
		c, err := r.admin.TenantV1alpha1().HostClasses().Get(ctx, claimClass, metav1.GetOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if c.Status.Hosts == int32(servers) && c.Status.Available == int32(servers) {
			break
		}
		if time.Since(registered) > syncTimeout {
			b.Fatalf("HostClass %s after %s: %+v, want %d servers available", claimClass, syncTimeout, c.Status, servers)
		}
		time.Sleep(200 * time.Millisecond)
	}
	r.notef("servers: %d registered, inspected and counted available by the class %s after their create",
		servers, time.Since(registered).Round(time.Millisecond))

	// The tenants, created 50 at a time by the provider, Ready and
	// visible to their members.
	onboarded := time.Now()
	r.hostClaimTenants(ctx)
	r.notef("tenants: %d Ready and visible to their members %s after the first create", tenants, time.Since(onboarded).Round(time.Millisecond))

	// One watch of HostClaims per member, as the tenant sees them.
	watchCtx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	var synced []cache.InformerSynced
	for i := range tenants {
		t := syncTenantName(i)
		record := func(obj interface{}) {
			now := time.Now()
			c, ok := obj.(*tenantv1alpha1.HostClaim)
			if !ok || c.Name != claimName {
				return
			}
			switch {
			case c.Status.Phase == tenantv1alpha1.HostClaimBound:
				r.seen.saw(claimBoundKey(t), now)
			case claimRefused(c):
				r.seen.saw(claimRefusedKey(t), now)
			}
		}
		claims := r.members[i].TenantV1alpha1().HostClaims(claimNamespace)
		_, ok := recordWatch(watchCtx, &tenantv1alpha1.HostClaim{}, claims.List, claims.Watch, record)
		synced = append(synced, ok)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		b.Fatal("the members' watches of HostClaims never synced")
	}

	// The burst.
	var jobs []job
	var reqs durations
	for i := range tenants {
		t := syncTenantName(i)
		c := r.members[i].TenantV1alpha1().HostClaims(claimNamespace)
		jobs = append(jobs, func(ctx context.Context) error {
			r.seen.start(claimBoundKey(t))
			r.seen.alias(claimBoundKey(t), claimRefusedKey(t))
			t0 := time.Now()
			if _, err := c.Create(ctx, &tenantv1alpha1.HostClaim{
				ObjectMeta: metav1.ObjectMeta{Name: claimName},
				Spec:       tenantv1alpha1.HostClaimSpec{HostClass: claimClass},
			}, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("tenant %s: HostClaim create: %w", t, err)
			}
			reqs.add(time.Since(t0))
			return nil
		})
	}
	cpu := takeCPU(s)
	apfBefore, err := takeAPF(ctx, s)
	if err != nil {
		b.Fatal(err)
	}
	serverBefore, err := hostClaimCreateTime(ctx, s)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	if err := runJobs(ctx, workers, jobs); err != nil {
		b.Fatal(err)
	}
	created := time.Since(start)
	var bound, refused []string
	deadline := time.Now().Add(syncTimeout)
	for {
		bound, refused = r.claimOutcomes(tenants)
		if len(bound)+len(refused) >= tenants && len(bound) >= min(servers, tenants) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("after %s: %d claims Bound, %d Pending with %s, of %d", syncTimeout, len(bound), len(refused), hostclaim.ReasonNoHostAvailable, tenants)
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.StopTimer()
	cpuUse := cpu.since(s)
	apfAfter, err := takeAPF(ctx, s)
	if err != nil {
		b.Fatal(err)
	}
	serverAfter, err := hostClaimCreateTime(ctx, s)
	if err != nil {
		b.Fatal(err)
	}
	lastBound := r.seen.lastSeen(bound).Sub(start)
	lastRefused := r.seen.lastSeen(refused).Sub(start)
	toBound, err := r.seen.latencies(bound)
	if err != nil {
		b.Fatal(err)
	}
	toRefused, err := r.seen.latencies(refused)
	if err != nil {
		b.Fatal(err)
	}

	// Off the clock: what the tenants, the servers and the record say.
	double := r.checkHostClaims(ctx, dyn, s, servers, tenants)

	b.ReportMetric(float64(len(bound)), "bound")
	b.ReportMetric(float64(len(refused)), "refused")
	b.ReportMetric(float64(double), "double-bindings")
	b.ReportMetric(float64(lastBound.Milliseconds()), "ms-to-all-bound")
	b.ReportMetric(float64(lastRefused.Milliseconds()), "ms-to-all-refused")
	b.ReportMetric(pctl(toBound, 50), "create-to-bound-p50-ms")
	b.ReportMetric(pctl(toBound, 99), "create-to-bound-p99-ms")
	r.rows = append(r.rows,
		row{"HostClaim create -> Bound (member's watch)", len(toBound), pctl(toBound, 50), pctl(toBound, 99)},
		row{"HostClaim create -> Pending, NoHostAvailable", len(toRefused), pctl(toRefused, 50), pctl(toRefused, 99)})
	r.requests("   HostClaim create request (aggregated)", &reqs)
	r.notef("burst: %d creates done %s after the first; last claim Bound after %s, last refused after %s",
		tenants, created.Round(time.Millisecond), lastBound.Round(time.Millisecond), lastRefused.Round(time.Millisecond))
	if n := serverAfter.count - serverBefore.count; n > 0 {
		mean := 1000 * (serverAfter.sum - serverBefore.sum) / n
		b.ReportMetric(mean, "create-server-mean-ms")
		r.notef("  tenant-apiserver's own time for a HostClaim create (from its /metrics): mean %.1f ms over %.0f creates", mean, n)
	}
	r.notef("  %s", apfBefore.since(apfAfter))
	r.notef("  %s", cpuUse)
	printTable(os.Stdout, fmt.Sprintf("BenchmarkHostClaimBurst: %d tenants claim at once from a class of %d servers (%d creates at a time)",
		tenants, servers, workers), r.rows)
	for _, line := range r.summary {
		fmt.Fprintf(os.Stdout, "  %s\n", line)
	}
	fmt.Fprintln(os.Stdout)
}

// claimRefused says whether c waits for a server: Pending, Associated
// False with reason NoHostAvailable.
func claimRefused(c *tenantv1alpha1.HostClaim) bool {
	if c.Status.Phase != tenantv1alpha1.HostClaimPending {
		return false
	}
	for _, cond := range c.Status.Conditions {
		if cond.Type == "Associated" {
			return cond.Status == metav1.ConditionFalse && cond.Reason == hostclaim.ReasonNoHostAvailable
		}
	}
	return false
}

// hostClaimTenants creates the tenants (no public IPs, a quota of one
// HostClaim), waits until they are Ready, and until each member sees its
// tenant.
func (r *syncRun) hostClaimTenants(ctx context.Context) {
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	_, tenantsSynced := watchTenantsReady(watchCtx, r.admin, r.seen)
	if !cache.WaitForCacheSync(ctx.Done(), tenantsSynced) {
		r.b.Fatal("the watch of the Tenants never synced")
	}
	one, prefix := int32(1), int32(24)
	var keys []string
	var jobs []job
	var reqs durations
	for i := range r.z.tenants {
		name := syncTenantName(i)
		keys = append(keys, tenantReadyKey(name))
		t := &tenantv1alpha1.Tenant{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: tenantv1alpha1.TenantSpec{
				Network: tenantv1alpha1.TenantNetwork{PrefixLength: &prefix},
				Quota:   tenantv1alpha1.TenantQuota{HostClaims: &one},
			},
		}
		jobs = append(jobs, timedCreate(r.seen, tenantReadyKey(name), &reqs, func(ctx context.Context) error {
			_, err := r.admin.TenantV1alpha1().Tenants().Create(ctx, t, metav1.CreateOptions{})
			return err
		}))
	}
	if err := runJobs(ctx, 50, jobs); err != nil {
		r.b.Fatal(err)
	}
	if err := r.seen.waitSeen(ctx, keys, syncTimeout); err != nil {
		r.b.Fatal(err)
	}
	var visible []job
	for i := range r.z.tenants {
		visible = append(visible, func(ctx context.Context) error {
			return r.s.WaitTenantVisible(ctx, syncTenantUser(i).Name, syncTenantName(i))
		})
	}
	if err := runJobs(ctx, 50, visible); err != nil {
		r.b.Fatal(err)
	}
}

// claimOutcomes returns the keys of the claims seen Bound and of those seen
// refused (and never Bound), of tenants 0..n-1.
func (r *syncRun) claimOutcomes(n int) (bound, refused []string) {
	r.seen.mu.Lock()
	defer r.seen.mu.Unlock()
	for i := range n {
		t := syncTenantName(i)
		if _, ok := r.seen.seen[claimBoundKey(t)]; ok {
			bound = append(bound, claimBoundKey(t))
		} else if _, ok := r.seen.seen[claimRefusedKey(t)]; ok {
			refused = append(refused, claimRefusedKey(t))
		}
	}
	return bound, refused
}

// checkHostClaims reads every claim as its member does now, every server
// of the pool and the binding record, and returns the double bindings: a
// claim on two servers, or a server, a claim or a binding whose other side
// does not name it back. It fails the benchmark on any of those, on a
// claim neither Bound nor refused, and on a count of Bound claims other
// than min(servers, tenants).
func (r *syncRun) checkHostClaims(ctx context.Context, dyn dynamic.Interface, s *stack.Stack, servers, tenants int) int {
	var problems []string
	double := 0
	boundClaims := map[types.UID]string{} // claim UID -> tenant
	var phases []string
	for i := range tenants {
		t := syncTenantName(i)
		c, err := r.members[i].TenantV1alpha1().HostClaims(claimNamespace).Get(ctx, claimName, metav1.GetOptions{})
		if err != nil {
			r.b.Fatal(err)
		}
		switch {
		case c.Status.Phase == tenantv1alpha1.HostClaimBound:
			boundClaims[c.UID] = t
		case claimRefused(c):
		default:
			phases = append(phases, fmt.Sprintf("%s: %s", t, c.Status.Phase))
		}
	}
	if len(phases) > 0 {
		problems = append(problems, fmt.Sprintf("%d claims neither Bound nor waiting, e.g. %s", len(phases), phases[0]))
	}
	if want := min(servers, tenants); len(boundClaims) != want {
		problems = append(problems, fmt.Sprintf("%d claims Bound, want %d", len(boundClaims), want))
	}

	// The servers: one consumerRef per Bound claim.
	hosts, err := dyn.Resource(stack.BareMetalHostResource).Namespace(claimPool).List(ctx, metav1.ListOptions{})
	if err != nil {
		r.b.Fatal(err)
	}
	serverOf := map[types.UID]string{} // claim UID -> server
	consumed := 0
	for _, h := range hosts.Items {
		uid, _, _ := unstructured.NestedString(h.Object, "spec", "consumerRef", "uid")
		if uid == "" {
			continue
		}
		consumed++
		claim := types.UID(uid)
		if other, dup := serverOf[claim]; dup {
			double++
			problems = append(problems, fmt.Sprintf("claim %s is the consumer of %s and %s", uid, other, h.GetName()))
		}
		serverOf[claim] = h.GetName()
		if _, ok := boundClaims[claim]; !ok {
			double++
			problems = append(problems, fmt.Sprintf("server %s names claim %s, which is not Bound", h.GetName(), uid))
		}
	}
	for uid, t := range boundClaims {
		if _, ok := serverOf[uid]; !ok {
			double++
			problems = append(problems, fmt.Sprintf("tenant %s's claim is Bound, and no server names it", t))
		}
	}

	// The record: one binding per Bound claim, on the server naming it.
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{s.TenantEtcdURL()}, DialTimeout: 10 * time.Second})
	if err != nil {
		r.b.Fatal(err)
	}
	defer func() { _ = client.Close() }()
	bindings, err := hostbinding.New(client, claimLedgerPrefix).List(ctx)
	if err != nil {
		r.b.Fatal(err)
	}
	holder := map[hostbinding.Host]types.UID{}
	for _, bd := range bindings {
		if other, dup := holder[bd.Host]; dup {
			double++
			problems = append(problems, fmt.Sprintf("the record binds %s to claims %s and %s", bd.Host, other, bd.Claim.UID))
		}
		holder[bd.Host] = bd.Claim.UID
		if got := serverOf[bd.Claim.UID]; bd.Host.Namespace != claimPool || got != bd.Host.Name {
			double++
			problems = append(problems, fmt.Sprintf("the record binds claim %s to %s, the servers say %q", bd.Claim.UID, bd.Host, got))
		}
	}
	if len(bindings) != len(boundClaims) {
		problems = append(problems, fmt.Sprintf("the record holds %d bindings for %d Bound claims", len(bindings), len(boundClaims)))
	}

	if len(problems) > 0 {
		sort.Strings(problems)
		r.b.Errorf("%d problems with the claims, e.g.:\n%s", len(problems), strings.Join(problems[:min(5, len(problems))], "\n"))
	}
	r.notef("check: %d claims Bound, %d servers with a consumerRef (all distinct, each a Bound claim's), %d bindings in the record, each the server's; %d double bindings",
		len(boundClaims), consumed, len(bindings), double)
	return double
}

// hostClaimCreateTime reads, from tenant-apiserver's own /metrics, the sum
// and count of the time it took to serve HostClaim creates.
func hostClaimCreateTime(ctx context.Context, s *stack.Stack) (histogram, error) {
	m, err := scrapeHistograms(ctx, s.DirectTenantConfig(stack.AdminUser, "system:masters"), s.TenantAPIServerURL(), "apiserver_request_duration_seconds")
	if err != nil {
		return histogram{}, err
	}
	var out histogram
	for k, h := range m {
		if l := parseLabels(k); l["verb"] == "POST" && l["resource"] == "hostclaims" && l["subresource"] == "" {
			out.sum += h.sum
			out.count += h.count
		}
	}
	return out, nil
}
