package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	flowcontrolclient "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"
	"k8s.io/client-go/rest"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// Response headers of API Priority and Fairness: the UIDs of the
// FlowSchema and priority level a request was classified into.
const (
	flowSchemaHeader    = "X-Kubernetes-PF-FlowSchema-UID"
	priorityLevelHeader = "X-Kubernetes-PF-PriorityLevel-UID"
)

// TestTenantRequestsHaveAPriorityLevelOfTheirOwn: the flow control
// objects of artifacts/deploy put a member's tenant.io requests in the
// tenant-io priority level, in the host kube-apiserver (through the
// aggregator) and in tenant-apiserver itself, and nothing else there: the
// same member's host requests and the admin's tenant.io requests keep
// their levels.
func TestTenantRequestsHaveAPriorityLevelOfTheirOwn(t *testing.T) {
	s, ctx, host := adminHost(t)
	fc := host.FlowcontrolV1()
	pl, err := fc.PriorityLevelConfigurations().Get(ctx, "tenant-io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Spec.Limited == nil || pl.Spec.Limited.LimitResponse.Queuing == nil || pl.Spec.Limited.LimitResponse.Queuing.HandSize != 1 {
		t.Fatalf("priority level tenant-io does not queue each flow in one queue: %+v", pl.Spec)
	}
	fs := waitFlowSchema(ctx, t, fc, "tenant-io")
	if fs.Spec.DistinguisherMethod == nil || fs.Spec.DistinguisherMethod.Type != flowcontrolv1.FlowDistinguisherMethodByUserType {
		t.Fatalf("FlowSchema tenant-io does not tell users apart: %+v", fs.Spec.DistinguisherMethod)
	}

	tenantLevel := classification{fs.UID, pl.UID}
	checkClassifications(ctx, t, []classified{
		{"a member's tenant.io list, through the aggregator", s.RESTConfig(alice), "/apis/tenant.io/v1alpha1/namespaces", tenantLevel.is},
		{"a member's tenant.io create (dry run), through the aggregator", s.RESTConfig(alice), "POST /apis/tenant.io/v1alpha1/namespaces?dryRun=All", tenantLevel.is},
		{"a member's tenant.io list, in tenant-apiserver", s.DirectTenantConfig(alice), "/apis/tenant.io/v1alpha1/namespaces", tenantLevel.is},
		{"a member's host request", s.RESTConfig(alice), "/api/v1/namespaces/default/pods", tenantLevel.isNot},
		{"the admin's tenant.io list", s.RESTConfig(stack.AdminUser), "/apis/tenant.io/v1alpha1/tenants", tenantLevel.isNot},
	})
}

// adminHost returns the current stack, a context for the test and the
// host admin's client.
func adminHost(t *testing.T) (*stack.Stack, context.Context, kubernetes.Interface) {
	t.Helper()
	s := framework.Current()
	host, _, err := s.Clients(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	return s, framework.Context(t, 2*time.Minute), host
}

// classified is a request and where APF must (or must not) put it.
type classified struct {
	what string
	cfg  *rest.Config
	path string // "[POST ]path", as classify takes it
	want func(classification) error
}

// checkClassifications sends each request and checks its classification.
func checkClassifications(ctx context.Context, t *testing.T, cases []classified) {
	t.Helper()
	for _, c := range cases {
		got, err := classify(ctx, c.cfg, c.path)
		if err != nil {
			t.Errorf("%s: %v", c.what, err)
			continue
		}
		if err := c.want(got); err != nil {
			t.Errorf("%s (%s): %v", c.what, c.path, err)
		}
	}
}

// waitFlowSchema returns FlowSchema name once the host's configuration
// controller has found its priority level (the schema is not dangling), so
// that the servers have read both objects.
func waitFlowSchema(ctx context.Context, t *testing.T, fc flowcontrolclient.FlowcontrolV1Interface, name string) *flowcontrolv1.FlowSchema {
	t.Helper()
	var fs *flowcontrolv1.FlowSchema
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		if fs, err = fc.FlowSchemas().Get(ctx, name, metav1.GetOptions{}); err != nil {
			return false, err
		}
		for _, c := range fs.Status.Conditions {
			if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
				return c.Status == flowcontrolv1.ConditionFalse, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("FlowSchema %s not found, or its priority level missing: %v (%+v)", name, err, fs)
	}
	return fs
}

// classification is where APF put a request.
type classification struct{ flowSchema, priorityLevel types.UID }

func (want classification) is(got classification) error {
	if got != want {
		return fmt.Errorf("classified as FlowSchema %s, priority level %s; want %s, %s",
			got.flowSchema, got.priorityLevel, want.flowSchema, want.priorityLevel)
	}
	return nil
}

func (want classification) isNot(got classification) error {
	if got.flowSchema == want.flowSchema || got.priorityLevel == want.priorityLevel {
		return fmt.Errorf("classified in the tenant.io schema or level (%s, %s)", got.flowSchema, got.priorityLevel)
	}
	return nil
}

// classify sends "[POST ]path" with cfg and returns the classification the
// response headers report, whatever the response's status. Through the aggregator both servers report
// one: they must agree.
func classify(ctx context.Context, cfg *rest.Config, path string) (classification, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return classification{}, err
	}
	method, body := http.MethodGet, io.Reader(nil)
	if p, ok := strings.CutPrefix(path, "POST "); ok {
		method, path = http.MethodPost, p
		body = strings.NewReader(`{"apiVersion":"tenant.io/v1alpha1","kind":"Namespace","metadata":{"name":"flow-control-dry-run"}}`)
	}
	req, err := http.NewRequestWithContext(ctx, method, cfg.Host+path, body)
	if err != nil {
		return classification{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return classification{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	// Flow control comes before authorization: a refused request is
	// classified too.
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	one := func(name string) (types.UID, error) {
		values := resp.Header.Values(name)
		if len(values) == 0 {
			return "", fmt.Errorf("%s %s: %s (%s): no %s header", method, path, resp.Status, msg, name)
		}
		for _, v := range values[1:] {
			if v != values[0] {
				return "", fmt.Errorf("the servers disagree on %s: %q", name, values)
			}
		}
		return types.UID(values[0]), nil
	}
	var c classification
	if c.flowSchema, err = one(flowSchemaHeader); err != nil {
		return c, err
	}
	c.priorityLevel, err = one(priorityLevelHeader)
	return c, err
}

// TestTenantAPIServerRequestsHaveTheControllersLevel: the flow control
// objects of artifacts/deploy put tenant-apiserver's own host requests
// (the syncer's, its informers', its reviews) in workload-high and its
// leader election in leader-election, not in workload-low with every
// other service account; and the running tenant-apiserver's requests are
// dispatched there.
func TestTenantAPIServerRequestsHaveTheControllersLevel(t *testing.T) {
	s, ctx, host := adminHost(t)
	fc := host.FlowcontrolV1()
	level := func(schema, wantLevel string) classification {
		t.Helper()
		fs := waitFlowSchema(ctx, t, fc, schema)
		if fs.Spec.PriorityLevelConfiguration.Name != wantLevel {
			t.Fatalf("FlowSchema %s puts requests in %s, want %s", schema, fs.Spec.PriorityLevelConfiguration.Name, wantLevel)
		}
		pl, err := fc.PriorityLevelConfigurations().Get(ctx, wantLevel, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return classification{fs.UID, pl.UID}
	}
	controllers := level("tenant-apiserver", "workload-high")
	election := level("tenant-apiserver-leader-election", "leader-election")

	self := s.RESTConfig(stack.TenantAPIServerUser)
	other := s.RESTConfig(stack.AdminUser)
	other.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + stack.TenantAPIServerNamespace + ":another",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + stack.TenantAPIServerNamespace, "system:authenticated"},
	}
	lease := "/apis/coordination.k8s.io/v1/namespaces/" + stack.TenantAPIServerNamespace + "/leases/tenant-apiserver-syncer"
	checkClassifications(ctx, t, []classified{
		{"tenant-apiserver's list of host namespaces", self, "/api/v1/namespaces?limit=1", controllers.is},
		{"tenant-apiserver's read of its lease", self, lease, election.is},
		{"tenant-apiserver's discovery", self, "/apis", controllers.is},
		{"another service account's list of namespaces", other, "/api/v1/namespaces?limit=1", controllers.isNot},
		{"another service account's read of the lease", other, lease, election.isNot},
	})

	// The running tenant-apiserver's own requests: its informers and
	// syncer (workload-high) and its lease renewals (leader-election),
	// counted by the host as it dispatched them.
	for _, c := range []struct{ schema, level string }{
		{"tenant-apiserver", "workload-high"},
		{"tenant-apiserver-leader-election", "leader-election"},
	} {
		if err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
			n, err := dispatched(ctx, host.Discovery().RESTClient(), c.schema, c.level)
			return n > 0, err
		}); err != nil {
			t.Errorf("the host dispatched no request of FlowSchema %s in %s: %v", c.schema, c.level, err)
		}
	}
}

// dispatched is how many requests the host's APF dispatched for schema in
// level, from its metrics.
func dispatched(ctx context.Context, client rest.Interface, schema, level string) (float64, error) {
	raw, err := client.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	var n float64
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "apiserver_flowcontrol_dispatched_requests_total{") ||
			!strings.Contains(line, `flow_schema="`+schema+`"`) || !strings.Contains(line, `priority_level="`+level+`"`) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", line, err)
		}
		n += v
	}
	return n, nil
}

// TestEachTenantIsOneFlowOnTheHost: the syncer gives every tenant a
// FlowSchema of the tenant-workloads level with no distinguisher, so that
// everything a tenant sends the host kube-apiserver (its members' requests,
// those of the service accounts of its host namespaces, a new Namespace's
// included) is one flow, and another tenant's another; users of no tenant
// and the tenant.io API keep their levels.
func TestEachTenantIsOneFlowOnTheHost(t *testing.T) {
	s, ctx, host := adminHost(t)
	fc := host.FlowcontrolV1()
	pl, err := fc.PriorityLevelConfigurations().Get(ctx, "tenant-workloads", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q := pl.Spec.Limited; q == nil || q.LimitResponse.Queuing == nil || q.LimitResponse.Queuing.HandSize != 1 {
		t.Fatalf("priority level tenant-workloads does not give each flow one queue: %+v", pl.Spec)
	}
	flowOf := func(tenantName string) classification {
		fs := waitFlowSchema(ctx, t, fc, "tenant.io-"+tenantName)
		if fs.Spec.PriorityLevelConfiguration.Name != pl.Name || fs.Spec.DistinguisherMethod != nil {
			t.Fatalf("FlowSchema of tenant %s: level %s, distinguisher %+v; want tenant-workloads and none (one flow per tenant)",
				tenantName, fs.Spec.PriorityLevelConfiguration.Name, fs.Spec.DistinguisherMethod)
		}
		return classification{fs.UID, pl.UID}
	}
	acme, globex := flowOf("acme"), flowOf("globex")
	acmeNS, globexNS := hostNamespaceOf(ctx, t, alice, "default"), hostNamespaceOf(ctx, t, "bob", "default")
	serviceAccount := func(ns, name string) *rest.Config {
		cfg := s.RESTConfig(stack.AdminUser)
		cfg.Impersonate = rest.ImpersonationConfig{
			UserName: "system:serviceaccount:" + ns + ":" + name,
			Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		}
		return cfg
	}
	asGroupMember := s.RESTConfig(stack.AdminUser)
	asGroupMember.Impersonate = rest.ImpersonationConfig{UserName: "carol", Groups: []string{"tenant.io:acme", "system:authenticated"}}
	asIdentityGroupMember := s.RESTConfig(stack.AdminUser)
	asIdentityGroupMember.Impersonate = rest.ImpersonationConfig{UserName: "carol", Groups: []string{"tenant.io-acme", "system:authenticated"}}
	nobody := s.RESTConfig(stack.AdminUser)
	nobody.Impersonate = rest.ImpersonationConfig{UserName: "dave", Groups: []string{"system:authenticated"}}
	pods := func(ns string) string { return "/api/v1/namespaces/" + ns + "/pods" }
	tenantIO := classification{waitFlowSchema(ctx, t, fc, "tenant-io").UID, ""}
	checkClassifications(ctx, t, []classified{
		{"a member's host list in its host namespace", s.RESTConfig(alice), pods(acmeNS), acme.is},
		{"a member's host request elsewhere (discovery)", s.RESTConfig(alice), "/apis", acme.is},
		{"a member of the tenant's host group", asGroupMember, pods(acmeNS), acme.is},
		{"a member of the tenant's identity group (its OpenShift Group)", asIdentityGroupMember, pods(acmeNS), acme.is},
		{"a service account of the tenant's host namespace", serviceAccount(acmeNS, "builder"), pods(acmeNS), acme.is},
		{"the other tenant's member", s.RESTConfig("bob"), pods(globexNS), globex.is},
		{"the other tenant's service account", serviceAccount(globexNS, "default"), pods(globexNS), globex.is},
		{"a user of no tenant", nobody, pods(acmeNS), acme.isNot},
		{"a service account of another host namespace", serviceAccount("kube-public", "default"), pods("kube-public"), acme.isNot},
		{"a member's tenant.io list stays in tenant-io", s.RESTConfig(alice), "/apis/tenant.io/v1alpha1/namespaces", func(got classification) error {
			if got.flowSchema != tenantIO.flowSchema {
				return fmt.Errorf("classified as FlowSchema %s, want tenant-io's %s", got.flowSchema, tenantIO.flowSchema)
			}
			return nil
		}},
	})
	if t.Failed() {
		return
	}

	// A new Namespace's service accounts join the tenant's flow.
	const tns = "flows"
	namespaces := isoAs(alice).clientset(t).TenantV1alpha1().Namespaces()
	if _, err := namespaces.Create(ctx, &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Namespace %s: %v", tns, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = namespaces.Delete(ctx, tns, metav1.DeleteOptions{})
	})
	newNS := hostNamespaceOf(ctx, t, alice, tns)
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := classify(ctx, serviceAccount(newNS, "default"), pods(newNS))
		return err == nil && got == acme, err
	}); err != nil {
		got, _ := classify(ctx, serviceAccount(newNS, "default"), pods(newNS))
		t.Errorf("a service account of new host namespace %s: classified %+v, want acme's flow %+v: %v", newNS, got, acme, err)
	}
}
