package outage

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

const (
	// pollInterval is how often the tests look again.
	pollInterval = 250 * time.Millisecond
	// recoverTimeout is the one time bound of the tests: how long after an
	// outage ends the stack may take to recover (serve, resume watches,
	// converge). Generous: the machine may be slow and shared.
	recoverTimeout = 2 * time.Minute
	// setupTimeout bounds onboarding the tests' tenants.
	setupTimeout = 2 * time.Minute
	// requestTimeout bounds one request of the write load.
	requestTimeout = 10 * time.Second
)

var (
	namespacesGVR = tenantv1alpha1.SchemeGroupVersion.WithResource("namespaces")
	networksGVR   = tenantv1alpha1.SchemeGroupVersion.WithResource("networks")
	tenantsGVR    = tenantv1alpha1.SchemeGroupVersion.WithResource("tenants")
	cudnGVR       = schema.GroupVersionResource{Group: "k8s.ovn.org", Version: "v1", Resource: "clusteruserdefinednetworks"}
	poolGVR       = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "ipaddresspools"}
)

func theStack() *stack.Stack { return framework.Current() }

// dynamicFor is a dynamic client for cfg without client-side rate limits.
func dynamicFor(t *testing.T, cfg *rest.Config) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(framework.Unthrottled(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// tenantClientFor is the generated clientset for cfg.
func tenantClientFor(t *testing.T, cfg *rest.Config) clientset.Interface {
	t.Helper()
	cs, err := clientset.NewForConfig(framework.Unthrottled(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// adminClient is the provider admin through the aggregator.
func adminClient(t *testing.T) clientset.Interface {
	t.Helper()
	return tenantClientFor(t, theStack().RESTConfig(stack.AdminUser))
}

// inTenant is the provider admin impersonating a member of tenant name:
// it acts inside that tenant (for tenants with no member user).
func inTenant(t *testing.T, name string) *rest.Config {
	t.Helper()
	cfg := theStack().RESTConfig(stack.AdminUser)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "outage-checker", Groups: []string{"tenant.io:" + name}}
	return cfg
}

// eventually polls check until it reports done and fails the test after
// timeout, with what and the last state check described. It returns how
// long it took.
func eventually(ctx context.Context, t *testing.T, timeout time.Duration, what string, check func(ctx context.Context) (done bool, state string)) time.Duration {
	t.Helper()
	begin := time.Now()
	last := "(not checked)"
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		done, state := check(ctx)
		// A check cut short by the deadline says nothing of the state:
		// keep what the one before it saw.
		if ctx.Err() == nil || last == "(not checked)" {
			last = state
		}
		return done, nil
	})
	if err != nil {
		t.Fatalf("%s: not so after %s (%v); last seen: %s", what, timeout, err, last)
	}
	return time.Since(begin)
}

// onboardTenants creates n tenants named <prefix>-<i>, the i-th with
// member memberUsers[prefix][i], a /16 block, one public IP and room for
// the write load in its quota, and waits until they are Ready and their
// members see them. It returns the names, and each tenant's member.
func onboardTenants(ctx context.Context, t *testing.T, prefix string, n int) (names []string, members map[string]string) {
	t.Helper()
	admin := adminClient(t)
	users := memberUsers[prefix][:n]
	members = map[string]string{}
	for i := range n {
		name := fmt.Sprintf("%s-%d", prefix, i)
		prefixLength, namespaces, networks := int32(16), int32(20), int32(20)
		tn := &tenantv1alpha1.Tenant{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: tenantv1alpha1.TenantSpec{
				Members:   tenantv1alpha1.TenantMembers{Users: []string{users[i]}},
				Network:   tenantv1alpha1.TenantNetwork{PrefixLength: &prefixLength},
				PublicIPs: tenantv1alpha1.TenantPublicIPs{Count: 1},
				Quota:     tenantv1alpha1.TenantQuota{Namespaces: &namespaces, Networks: &networks},
			},
		}
		if _, err := admin.TenantV1alpha1().Tenants().Create(ctx, tn, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating tenant %s: %v", name, err)
		}
		names = append(names, name)
		members[name] = users[i]
	}
	for i, name := range names {
		eventually(ctx, t, setupTimeout, "tenant "+name+" Ready", func(ctx context.Context) (bool, string) {
			tn, err := admin.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return tenantReady(tn), describeConditions(tn.Status.Conditions)
		})
		if err := theStack().WaitTenantVisible(ctx, users[i], name); err != nil {
			t.Fatal(err)
		}
	}
	return names, members
}

// tenantReady reports whether tn is Ready with HostSynced and Ready True.
func tenantReady(tn *tenantv1alpha1.Tenant) bool {
	return tn.Status.Phase == tenantv1alpha1.TenantPhaseReady &&
		meta.IsStatusConditionTrue(tn.Status.Conditions, tenantv1alpha1.ConditionHostSynced) &&
		meta.IsStatusConditionTrue(tn.Status.Conditions, tenantv1alpha1.ConditionReady)
}

func describeConditions(conds []metav1.Condition) string {
	var parts []string
	for _, c := range conds {
		parts = append(parts, fmt.Sprintf("%s=%s/%s(%q)", c.Type, c.Status, c.Reason, c.Message))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// outcomeOf classifies the answer to a request: "2xx", the HTTP status
// code of an API error, "timeout", or "connection error".
func outcomeOf(err error) string {
	if err == nil {
		return "2xx"
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Code != 0 {
		return fmt.Sprint(st.Status().Code)
	}
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	}
	return "connection error"
}

// describeCounts renders outcome counts as "2xx: 12, 503: 4".
func describeCounts(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, counts[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// processWatch records the PIDs of the stack's API servers and the
// number of lines mentioning a panic in their logs, to tell afterwards
// whether one exited or panicked in between.
type processWatch struct {
	pids   map[string]int
	panics map[string]int
}

// watchedProcesses are the stack's processes that must survive every outage.
var watchedProcesses = []string{"tenant-apiserver", "kube-apiserver"}

func watchProcesses(t *testing.T) processWatch {
	t.Helper()
	pw := processWatch{pids: map[string]int{}, panics: map[string]int{}}
	for _, p := range watchedProcesses {
		pw.pids[p] = theStack().PID(p)
		if pw.pids[p] == 0 {
			t.Fatalf("%s is not running before the outage", p)
		}
		pw.panics[p] = len(panicLines(t, p))
	}
	return pw
}

// check fails the test for every watched process that is no longer the
// same process, or whose log mentions a panic it did not before.
func (pw processWatch) check(t *testing.T) {
	t.Helper()
	for _, p := range watchedProcesses {
		if pid := theStack().PID(p); pid != pw.pids[p] {
			t.Errorf("%s exited: pid %d before, %d now (see %s)", p, pw.pids[p], pid, theStack().LogPath(p))
		}
		if lines := panicLines(t, p); len(lines) > pw.panics[p] {
			t.Errorf("%s logged a panic: %s", p, strings.Join(lines[pw.panics[p]:], "\n"))
		}
	}
}

// panicMarks are what a log line of a panic holds: Go's runtime, and
// apimachinery's recovery of a panic in a request or a controller.
// ("panicked: false" of a request's post-timeout report is none.)
var panicMarks = []string{"panic:", "panicked: true", "Observed a panic", "[running]:"}

// panicLines are the lines of a process' log that report a panic.
func panicLines(t *testing.T, process string) []string {
	t.Helper()
	data, err := os.ReadFile(theStack().LogPath(process))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		for _, m := range panicMarks {
			if strings.Contains(l, m) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}
