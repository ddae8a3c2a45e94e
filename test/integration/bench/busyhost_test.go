package bench

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// busyNamespace is where the busy host's other service accounts send
// their requests.
const busyNamespace = "bench-busy"

// The FlowSchemas of artifacts/deploy that give tenant-apiserver's own
// host requests the controllers' levels.
var ownFlowSchemas = []string{"tenant-apiserver", "tenant-apiserver-leader-election"}

// BenchmarkSyncBusyHost measures the Namespace sync on a host whose other
// service accounts fill their priority level, workload-low: with
// tenant-apiserver's own requests in workload-high and leader-election (the
// FlowSchemas artifacts/deploy ships), and without them (deleted for the
// round, so that its requests fall under service-accounts, in
// workload-low with the others), in turns on one stack.
//
// The other service accounts (BENCH_BUSY_USERS of them, each keeping
// BENCH_BUSY_IN_FLIGHT requests in flight) create ConfigMaps in a dry run
// that a validating webhook holds for BENCH_BUSY_HOLD: each request keeps
// its seat that long and costs the host little CPU, as a slow webhook or a
// large list of a busy cluster would. Each round, 10 tenants' members
// create BENCH_BUSY_NAMESPACES Namespaces each, two at a time, timed to
// their host namespaces.
func BenchmarkSyncBusyHost(b *testing.B) {
	if b.N > 1 {
		b.Fatal("BenchmarkSyncBusyHost runs its rounds once (-benchtime 1x)")
	}
	users, inFlight, perRound, rounds := envInt(b, "BENCH_BUSY_USERS", 20), envInt(b, "BENCH_BUSY_IN_FLIGHT", 20),
		envInt(b, "BENCH_BUSY_NAMESPACES", 50), envInt(b, "BENCH_BUSY_ROUNDS", 2)
	hold := envDuration(b, "BENCH_BUSY_HOLD", 2*time.Second)
	z := syncSizes{tenants: 10, workers: 10, perTenant: perRound * (2*rounds + 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, stop := benchStack(ctx, b, "", z.tenants, func(o *stack.Options) {
		o.SkipOVNKube = true
		o.SkipMetalLB = true
	})
	defer stop()
	r := &syncRun{b: b, z: z, s: s, seen: newFirstSeen()}
	r.clients()
	// Tenants Ready, with a quota for every round's Namespaces.
	tenantsCtx, stopTenants := context.WithCancel(ctx)
	_, tenantsSynced := watchTenantsReady(tenantsCtx, r.admin, r.seen)
	if !cache.WaitForCacheSync(ctx.Done(), watchHostNamespaces(ctx, r.host, r.seen), tenantsSynced) {
		b.Fatal("the watches never synced")
	}
	r.tenantsReady(ctx)
	stopTenants()

	stopWebhook := startBusyHost(ctx, b, r.host, hold)
	defer stopWebhook()
	schemas := ownSchemas(ctx, b, r.host)

	b.ResetTimer()
	measureRound := func(n int, name string, noise *busyLoad) {
		before, err := takeAPF(ctx, s)
		if err != nil {
			b.Fatal(err)
		}
		dispatchedBefore := ownDispatch(ctx, b, r.host)
		noiseBefore := noise.counts()
		var reqs durations
		var keys []string
		var jobs []job
		for k := 0; k < perRound; k++ {
			for i := 0; i < z.tenants; i++ {
				key, j := r.createNamespace(i, fmt.Sprintf("busy-%d-%d", n, k), &reqs)
				keys, jobs = append(keys, key), append(jobs, j)
			}
		}
		start := time.Now()
		if err := runJobs(ctx, 2*z.tenants, jobs); err != nil {
			b.Fatal(err)
		}
		if err := r.seen.waitSeen(ctx, keys, syncTimeout); err != nil {
			b.Fatal(err)
		}
		took := r.seen.lastSeen(keys).Sub(start)
		noiseAfter := noise.counts()
		after, err := takeAPF(ctx, s)
		if err != nil {
			b.Fatal(err)
		}
		d := r.measure(fmt.Sprintf("round%d", n), fmt.Sprintf("round %d: %s, Namespace create -> host namespace", n, name), keys)
		r.requests("   tenant Namespace create request", &reqs)
		returned := r.seen.afterReturn(keys)
		r.rows = append(r.rows, row{"   create returned -> host namespace", len(returned), pctl(returned, 50), pctl(returned, 99)})
		r.notef("round %d (%s): %d Namespaces synced %s after the first create (p50 %.0f ms, p99 %.0f ms); the other service accounts' requests meanwhile: %d done, %d failed",
			n, name, len(keys), took.Round(time.Millisecond), pctl(d, 50), pctl(d, 99), noiseAfter[0]-noiseBefore[0], noiseAfter[1]-noiseBefore[1])
		r.notef("  requests the host dispatched by FlowSchema (the other service accounts' are under service-accounts too): %s", ownDispatch(ctx, b, r.host).since(dispatchedBefore))
		r.notef("  %s", before.since(after))
	}

	measureRound(0, "quiet host, own FlowSchemas", nil)
	noise := startBusyLoad(ctx, r, users, inFlight)
	// APF lends an idle level's seats to the busy ones and moves them back
	// every 10 s: wait for workload-low to take back what it lent while the
	// host was quiet, and to be full.
	time.Sleep(15 * time.Second)
	for i := 0; i < rounds; i++ {
		schemas.set(ctx, b, true)
		measureRound(1+2*i, "busy host, own FlowSchemas", noise)
		schemas.set(ctx, b, false)
		measureRound(2+2*i, "busy host, without them", noise)
	}
	done, failed := noise.stop()
	b.StopTimer()
	schemas.set(ctx, b, true)
	r.notef("the other service accounts: %d users with %d requests in flight each, held %s by the webhook: %d done, %d failed", users, inFlight, hold, done, failed)
	r.reportAs(fmt.Sprintf("BenchmarkSyncBusyHost: tenant Namespace create start -> host namespace first seen (%d tenants, %d creates in flight)", z.tenants, 2*z.tenants))
}

// envInt reads a positive integer from the environment, def if unset.
func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// startBusyHost starts a webhook that answers every review after hold,
// registers it for ConfigMap creates in busyNamespace, and lets the
// service accounts of that namespace create ConfigMaps there. It returns
// what stops the webhook.
func startBusyHost(ctx context.Context, b *testing.B, host kubernetes.Interface, hold time.Duration) (stop func()) {
	b.Helper()
	if _, err := host.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: busyNamespace}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-busy", Namespace: busyNamespace},
		Rules:      []rbacv1.PolicyRule{{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}},
	}
	if _, err := host.RbacV1().Roles(busyNamespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-busy", Namespace: busyNamespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "bench-busy"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccounts:" + busyNamespace}},
	}
	if _, err := host.RbacV1().RoleBindings(busyNamespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	return holdConfigMapCreates(ctx, b, host, "bench-busy", busyNamespace, hold)
}

// holdConfigMapCreates starts a webhook that answers every review after
// hold and registers it, as configuration name, for ConfigMap creates in
// namespace: each such request keeps its seat that long and costs the host
// little CPU, as a slow webhook or a large list of a busy cluster would.
// It returns what stops the webhook.
func holdConfigMapCreates(ctx context.Context, b *testing.B, host kubernetes.Interface, name, namespace string, hold time.Duration) (stop func()) {
	b.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(req.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "not an admission review", http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(hold):
		case <-req.Context().Done():
			return
		}
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		review.Request = nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()

	url := srv.URL + "/review"
	none, ignore, timeout := admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.Ignore, int32(hold/time.Second+5)
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "hold." + name + ".tenant.io",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}},
			SideEffects:             &none,
			FailurePolicy:           &ignore,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if _, err := host.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	return srv.Close
}

// busyLoad is the other service accounts' requests of one round.
type busyLoad struct {
	cancel       context.CancelFunc
	wg           sync.WaitGroup
	done, failed atomic.Int64
}

// startBusyLoad starts users service accounts of busyNamespace, each keeping
// inFlight dry-run ConfigMap creates in flight there.
func startBusyLoad(ctx context.Context, r *syncRun, users, inFlight int) *busyLoad {
	return startLoad(ctx, r, busyNamespace, users, inFlight, func(u int) rest.ImpersonationConfig {
		return rest.ImpersonationConfig{
			UserName: fmt.Sprintf("system:serviceaccount:%s:busy-%02d", busyNamespace, u),
			Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + busyNamespace, "system:authenticated"},
		}
	})
}

// startLoad starts users identities (who(u), u < users), each keeping
// inFlight dry-run ConfigMap creates in flight in namespace, as the
// provider admin impersonating them (APF classifies the impersonated
// user).
func startLoad(ctx context.Context, r *syncRun, namespace string, users, inFlight int, who func(u int) rest.ImpersonationConfig) *busyLoad {
	ctx, cancel := context.WithCancel(ctx)
	l := &busyLoad{cancel: cancel}
	for u := 0; u < users; u++ {
		cfg := framework.Unthrottled(r.s.RESTConfig(stack.AdminUser))
		cfg.Impersonate = who(u)
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			r.b.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "load-"}}
		for w := 0; w < inFlight; w++ {
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				for ctx.Err() == nil {
					if _, err := client.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
						if ctx.Err() == nil {
							l.failed.Add(1)
							time.Sleep(100 * time.Millisecond)
						}
						continue
					}
					l.done.Add(1)
				}
			}()
		}
	}
	return l
}

// counts are how many of the load's requests have succeeded and failed
// so far (none for no load).
func (l *busyLoad) counts() [2]int64 {
	if l == nil {
		return [2]int64{}
	}
	return [2]int64{l.done.Load(), l.failed.Load()}
}

// stop ends the load and returns how many of its requests succeeded and
// failed (429s that client-go gave up on, timeouts).
func (l *busyLoad) stop() (done, failed int64) {
	l.cancel()
	l.wg.Wait()
	return l.done.Load(), l.failed.Load()
}

// flowSchemas are tenant-apiserver's own FlowSchemas, as the stack applied
// them, to delete and create again between rounds.
type flowSchemas struct {
	host    kubernetes.Interface
	objects []*flowcontrolv1.FlowSchema
	present bool
}

func ownSchemas(ctx context.Context, b *testing.B, host kubernetes.Interface) *flowSchemas {
	fs := &flowSchemas{host: host, present: true}
	for _, name := range ownFlowSchemas {
		o, err := host.FlowcontrolV1().FlowSchemas().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			b.Fatalf("FlowSchema %s of artifacts/deploy: %v", name, err)
		}
		fs.objects = append(fs.objects, o)
	}
	return fs
}

// set creates or deletes the FlowSchemas, then waits until the host
// classifies tenant-apiserver's requests accordingly (its APF
// configuration follows the objects through an informer).
func (fs *flowSchemas) set(ctx context.Context, b *testing.B, present bool) {
	b.Helper()
	if present == fs.present {
		return
	}
	api := fs.host.FlowcontrolV1().FlowSchemas()
	for _, o := range fs.objects {
		var err error
		if present {
			c := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: o.Name, Labels: o.Labels, Annotations: o.Annotations}, Spec: o.Spec}
			_, err = api.Create(ctx, c, metav1.CreateOptions{})
		} else {
			err = api.Delete(ctx, o.Name, metav1.DeleteOptions{})
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	fs.present = present
	// The host's APF configuration controller acts on the objects' events
	// at once; the next second of the syncer's requests shows it.
	time.Sleep(2 * time.Second)
}

// schemaDispatch is how many requests the host dispatched per FlowSchema
// of the ones tenant-apiserver's requests fall under.
type schemaDispatch map[string]float64

func ownDispatch(ctx context.Context, b *testing.B, host kubernetes.Interface) schemaDispatch {
	raw, err := host.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		b.Fatal(err)
	}
	out := schemaDispatch{}
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "apiserver_flowcontrol_dispatched_requests_total{") {
			continue
		}
		schema := label(line, "flow_schema")
		if schema != "service-accounts" && !strings.HasPrefix(schema, "tenant-apiserver") {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			out[schema+" in "+label(line, "priority_level")] += v
		}
	}
	return out
}

func (a schemaDispatch) since(before schemaDispatch) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if d := a[k] - before[k]; d > 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f", k, d))
		}
	}
	return strings.Join(parts, ", ")
}
