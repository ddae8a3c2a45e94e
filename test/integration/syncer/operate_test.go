package syncer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestMetricsAndAudit follows one tenant's writes into what a provider
// operates by: the tenant-apiserver's /metrics (behind authorization), its
// audit log, and the marks on the host objects that lead from a host
// object back to the tenant object and the user who last changed it.
func TestMetricsAndAudit(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	s := theStack()
	tn := onboard(ctx, t, tenantSpec{name: uniqueName(t), users: []string{operateUser}, prefixLength: 16, namespaces: 2})
	prefix := strings.TrimSuffix(tn.Status.Network.CIDR, ".0.0/16")
	mia := tenantClient(t, operateUser)
	admin := tenantClient(t, stack.AdminUser)
	udn, _ := ovnClients(t)

	// /metrics answers the provider, and a tenant's user gets the 403 of
	// the host's authorization.
	if _, err := scrapeAs(ctx, s.DirectTenantConfig(operateUser)); !apierrors.IsForbidden(err) {
		t.Errorf("/metrics as tenant user %s: %v, want 403", operateUser, err)
	}
	before := scrape(ctx, t)

	// An open watch of Networks is counted while it lasts.
	w, err := mia.TenantV1alpha1().Networks().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, syncTimeout, "tenant_watches{resource=networks} counting the open watch", func(ctx context.Context) (bool, string) {
		m := scrape(ctx, t)
		got, was := m.value("tenant_watches", "resource", "networks"), before.value("tenant_watches", "resource", "networks")
		return got >= was+1, fmt.Sprintf("%v (before the watch: %v)", got, was)
	})
	w.Stop()

	// A Network: its host network carries its UID and its user; the
	// metrics count the reconcile and the time from the write to the host.
	n, err := mia.TenantV1alpha1().Networks().Create(ctx, &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: "metered"},
		Spec: tenantv1alpha1.NetworkSpec{Topology: tenantv1alpha1.NetworkTopologyLayer2, Subnets: []string{prefix + ".10.0/24"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Annotations[hostnames.ChangedByAnnotation]; got != operateUser {
		t.Errorf("Network %s annotation %s = %q, want %q", n.Name, hostnames.ChangedByAnnotation, got, operateUser)
	}
	changedAt, err := time.Parse(time.RFC3339Nano, n.Annotations[hostnames.ChangedAtAnnotation])
	if err != nil || changedAt.Before(n.CreationTimestamp.Add(-time.Second)) || changedAt.After(n.CreationTimestamp.Add(time.Second)) {
		t.Errorf("Network %s annotation %s = %q (%v), want the time of its creation %s", n.Name, hostnames.ChangedAtAnnotation,
			n.Annotations[hostnames.ChangedAtAnnotation], err, n.CreationTimestamp)
	}
	n = waitNetwork(ctx, t, mia, n.Name, "HostSynced", networkSynced)
	cudn, err := udn.K8sV1().ClusterUserDefinedNetworks().Get(ctx, hostnames.ClusterUserDefinedNetwork(tn.UID, n.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantMarks := map[string]string{hostnames.OwnerUIDAnnotation: string(n.UID), hostnames.TenantUIDAnnotation: string(tn.UID), hostnames.ChangedByAnnotation: operateUser}
	for k, v := range wantMarks {
		if cudn.Annotations[k] != v {
			t.Errorf("ClusterUserDefinedNetwork %s annotation %s = %q, want %q", cudn.Name, k, cudn.Annotations[k], v)
		}
	}
	// The host namespace of the Tenant's default Namespace carries the
	// user who made it: the syncer, at onboarding.
	host, _ := hostClients(t)
	hostNS, err := host.CoreV1().Namespaces().Get(ctx, hostnames.Namespace(tn.Name, tn.UID, defaultNamespace), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := hostNS.Annotations[hostnames.ChangedByAnnotation]; got != "system:tenant-apiserver:syncer" {
		t.Errorf("host namespace %s annotation %s = %q, want the syncer's user", hostNS.Name, hostnames.ChangedByAnnotation, got)
	}

	after := scrape(ctx, t)
	for _, c := range []struct {
		name   string
		labels []string
	}{
		{"tenant_syncer_write_to_host_seconds", []string{"kind", "Network"}},
		{"tenant_syncer_reconciles_total", []string{"controller", "tenant-networks", "result", "success"}},
		{"workqueue_adds_total", []string{"name", "tenant-networks"}},
		{"workqueue_work_duration_seconds", []string{"name", "tenant-networks"}},
	} {
		if got, was := after.value(c.name, c.labels...), before.value(c.name, c.labels...); got <= was {
			t.Errorf("%s%v: %v after a Network was synced, %v before", c.name, c.labels, got, was)
		}
	}
	if !after.has("workqueue_depth", "name", "tenant-networks") {
		t.Errorf("workqueue_depth{name=tenant-networks} is missing")
	}

	// The audit log has mia's create, with the object as stored: its UID is
	// the host network's owner UID.
	waitAudit(ctx, t, s.TenantAPIServerAuditLogPath(), func(e auditv1.Event) bool {
		return e.Verb == "create" && e.ObjectRef != nil && e.ObjectRef.Resource == "networks" && e.ObjectRef.Name == n.Name &&
			e.User.Username == operateUser && e.ResponseStatus != nil && e.ResponseStatus.Code == 201 &&
			e.ResponseObject != nil && bytes.Contains(e.ResponseObject.Raw, []byte(`"uid":"`+string(n.UID)+`"`))
	}, "create of Network "+n.Name+" by "+operateUser+" (201, with UID "+string(n.UID)+")")

	// A create past the quota: the 403 is counted by resource.
	if _, err := mia.TenantV1alpha1().Namespaces().Create(ctx, namespaceObject("second"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	refusedBefore := scrape(ctx, t).value("tenant_quota_refusals_total", "resource", "namespaces")
	if _, err := mia.TenantV1alpha1().Namespaces().Create(ctx, namespaceObject("third"), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("a third Namespace with a quota of 2: %v, want 403", err)
	}
	if got := scrape(ctx, t).value("tenant_quota_refusals_total", "resource", "namespaces"); got != refusedBefore+1 {
		t.Errorf("tenant_quota_refusals_total{resource=namespaces}: %v after one refusal, %v before", got, refusedBefore)
	}

	// The host refuses a write (a policy of the provider's): counted by
	// host kind, and the Network says why; once the policy is gone it syncs.
	refused := "refused-by-host"
	removePolicy := refuseCUDNs(ctx, t, host, refused)
	errorsBefore := scrape(ctx, t).value("tenant_syncer_host_write_errors_total", "kind", "ClusterUserDefinedNetwork")
	if _, err := mia.TenantV1alpha1().Networks().Create(ctx, &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: refused},
		Spec: tenantv1alpha1.NetworkSpec{Topology: tenantv1alpha1.NetworkTopologyLayer2, Subnets: []string{prefix + ".11.0/24"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNetwork(ctx, t, mia, refused, "HostSynced False (HostError)", func(n *tenantv1alpha1.Network) bool {
		return conditionIs(n.Status.Conditions, tenantv1alpha1.ConditionHostSynced, metav1.ConditionFalse, "HostError")
	})
	eventually(ctx, t, syncTimeout, "tenant_syncer_host_write_errors_total{kind=ClusterUserDefinedNetwork} counting the refusal", func(ctx context.Context) (bool, string) {
		got := scrape(ctx, t).value("tenant_syncer_host_write_errors_total", "kind", "ClusterUserDefinedNetwork")
		return got > errorsBefore, fmt.Sprintf("%v (before: %v)", got, errorsBefore)
	})
	removePolicy()
	waitNetwork(ctx, t, mia, refused, "HostSynced once the host accepts it", networkSynced)

	// Gauges that must equal what the API says.
	eventually(ctx, t, syncTimeout, "tenant_membership_index_entries equal to the Tenants and their members", func(ctx context.Context) (bool, string) {
		list, err := admin.TenantV1alpha1().Tenants().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		users, groups := map[string]bool{}, map[string]bool{}
		for _, tn := range list.Items {
			for _, u := range tn.Spec.Members.Users {
				users[u] = true
			}
			for _, g := range tn.Spec.Members.Groups {
				groups[g] = true
			}
		}
		m := scrape(ctx, t)
		got := [3]float64{m.value("tenant_membership_index_entries", "kind", "tenant"), m.value("tenant_membership_index_entries", "kind", "user"), m.value("tenant_membership_index_entries", "kind", "group")}
		want := [3]float64{float64(len(list.Items)), float64(len(users)), float64(len(groups))}
		return got == want, fmt.Sprintf("tenant/user/group %v, the API's %v", got, want)
	})
	eventually(ctx, t, syncTimeout, "tenant_ipam_pool_* equal to the AddressPools' status", func(ctx context.Context) (bool, string) {
		pools, err := admin.TenantV1alpha1().AddressPools().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		m := scrape(ctx, t)
		var diff []string
		for _, p := range pools.Items {
			got := [3]float64{m.value("tenant_ipam_pool_capacity_addresses", "pool", p.Name), m.value("tenant_ipam_pool_allocated_addresses", "pool", p.Name), m.value("tenant_ipam_pool_free_addresses", "pool", p.Name)}
			want := [3]float64{float64(p.Status.Capacity), float64(p.Status.Allocated), float64(p.Status.Free)}
			if got != want || p.Status.Capacity == 0 {
				diff = append(diff, fmt.Sprintf("%s: metrics %v, status %v", p.Name, got, want))
			}
		}
		return len(pools.Items) > 0 && len(diff) == 0, strings.Join(diff, "; ")
	})

	// The Grafana dashboard of artifacts/monitoring queries only series
	// that the server serves, with the labels it groups and selects by.
	checkDashboard(t, scrape(ctx, t))
}

// dashboardSeries finds in a PromQL expression each metric with its
// label matchers ("name{...}"), and the labels of its "by (...)".
var (
	dashboardSeries  = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}`)
	dashboardMatcher = regexp.MustCompile(`([a-zA-Z_]+)\s*(=~|!=|!~|=)\s*"([^"]*)"`)
	dashboardBy      = regexp.MustCompile(`by \(([^)]*)\)`)
)

// checkDashboard fails the test for each query of the dashboard that
// names a metric m does not hold, or groups or selects by a label its
// series lack. The labels Prometheus adds to a target (job, pod) are not
// the server's.
func checkDashboard(t *testing.T, m metricFamilies) {
	t.Helper()
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "artifacts", "monitoring", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dashboard struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dashboard); err != nil {
		t.Fatalf("the dashboard: %v", err)
	}
	targetLabels := map[string]bool{"job": true, "pod": true, "le": true}
	queries := 0
	for _, p := range dashboard.Panels {
		for _, q := range p.Targets {
			queries++
			var by []string
			for _, b := range dashboardBy.FindAllStringSubmatch(q.Expr, -1) {
				for _, l := range strings.Split(b[1], ",") {
					by = append(by, strings.TrimSpace(l))
				}
			}
			for _, ser := range dashboardSeries.FindAllStringSubmatch(q.Expr, -1) {
				name := strings.TrimSuffix(ser[1], "_bucket")
				f := m[name]
				if f == nil || len(f.Metric) == 0 {
					t.Errorf("dashboard panel %q: %s is not served on /metrics", p.Title, ser[1])
					continue
				}
				want := map[string]string{}
				for _, mt := range dashboardMatcher.FindAllStringSubmatch(ser[2], -1) {
					if !targetLabels[mt[1]] && mt[2] == "=" {
						want[mt[1]] = mt[3]
					}
				}
				for _, l := range by {
					if !targetLabels[l] {
						if _, ok := want[l]; !ok {
							want[l] = ""
						}
					}
				}
				if !servesLabels(f, want) {
					t.Errorf("dashboard panel %q: no series of %s has the labels %v", p.Title, name, want)
				}
			}
		}
	}
	if queries == 0 {
		t.Errorf("the dashboard has no queries")
	}
}

// servesLabels says whether a series of f has every label of want, with
// its value where want gives one.
func servesLabels(f *dto.MetricFamily, want map[string]string) bool {
series:
	for _, s := range f.Metric {
		have := map[string]string{}
		for _, l := range s.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got, ok := have[k]; !ok || (v != "" && got != v) {
				continue series
			}
		}
		return true
	}
	return false
}

// metricFamilies are a scrape of /metrics.
type metricFamilies map[string]*dto.MetricFamily

// scrapeAs reads the tenant-apiserver's /metrics with cfg.
func scrapeAs(ctx context.Context, cfg *rest.Config) (metricFamilies, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(bytes.NewReader(raw))
}

// scrape reads the stack's tenant-apiserver's /metrics as the provider admin.
func scrape(ctx context.Context, t *testing.T) metricFamilies {
	t.Helper()
	m, err := scrapeAs(ctx, theStack().DirectTenantConfig(stack.AdminUser, "system:masters"))
	if err != nil {
		t.Fatalf("scraping /metrics: %v", err)
	}
	return m
}

// find returns the series of family name with the label pairs given.
func (m metricFamilies) find(name string, labels ...string) *dto.Metric {
	f := m[name]
	if f == nil {
		return nil
	}
series:
	for _, s := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range s.Label {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue series
			}
		}
		return s
	}
	return nil
}

func (m metricFamilies) has(name string, labels ...string) bool {
	return m.find(name, labels...) != nil
}

// value is a series' value: a counter's or gauge's value, a histogram's
// count; 0 when the series does not exist.
func (m metricFamilies) value(name string, labels ...string) float64 {
	s := m.find(name, labels...)
	switch {
	case s == nil:
		return 0
	case s.Counter != nil:
		return s.Counter.GetValue()
	case s.Gauge != nil:
		return s.Gauge.GetValue()
	case s.Histogram != nil:
		return float64(s.Histogram.GetSampleCount())
	}
	return 0
}

// waitAudit waits until the audit log at path holds an event match accepts.
func waitAudit(ctx context.Context, t *testing.T, path string, match func(auditv1.Event) bool, what string) {
	t.Helper()
	eventually(ctx, t, syncTimeout, "audit event: "+what, func(context.Context) (bool, string) {
		f, err := os.Open(path)
		if err != nil {
			return false, err.Error()
		}
		defer func() { _ = f.Close() }()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		events := 0
		for sc.Scan() {
			var e auditv1.Event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				return false, fmt.Sprintf("line %d of %s: %v", events+1, path, err)
			}
			events++
			if match(e) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events in %s, none matching", events, path)
	})
}

// refuseCUDNs has the host refuse to create ClusterUserDefinedNetworks
// made for tenant Networks named network (a ValidatingAdmissionPolicy,
// as a provider might have), and returns the function that removes it.
func refuseCUDNs(ctx context.Context, t *testing.T, host kubernetes.Interface, network string) func() {
	t.Helper()
	name := "refuse-" + network
	fail := admissionv1.Fail
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule:       admissionv1.Rule{APIGroups: []string{"k8s.ovn.org"}, APIVersions: []string{"*"}, Resources: []string{"clusteruserdefinednetworks"}},
				},
			}}},
			Validations: []admissionv1.Validation{{
				Expression: fmt.Sprintf(`!has(object.metadata.labels) || !(%q in object.metadata.labels) || object.metadata.labels[%q] != %q`,
					hostnames.NetworkLabel, hostnames.NetworkLabel, network),
				Message: "the provider refuses this network",
			}},
		},
	}
	if _, err := host.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	if _, err := host.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The host enforces a new policy a moment later: a dry run tells when.
	udn, _ := ovnClients(t)
	probe := &udnv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: "probe-" + randomHex(t, 4), Labels: map[string]string{hostnames.NetworkLabel: network}},
		Spec: udnv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"probe": "only"}},
			Network: udnv1.NetworkSpec{Topology: udnv1.NetworkTopologyLayer2,
				Layer2: &udnv1.Layer2Config{Role: udnv1.NetworkRolePrimary, Subnets: udnv1.DualStackCIDRs{"192.168.251.0/24"}}},
		},
	}
	eventually(ctx, t, syncTimeout, "the host enforcing policy "+name, func(ctx context.Context) (bool, string) {
		_, err := udn.K8sV1().ClusterUserDefinedNetworks().Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsInvalid(err) && strings.Contains(err.Error(), "the provider refuses this network"), fmt.Sprintf("dry run: %v", err)
	})
	removed := false
	remove := func() {
		if removed {
			return
		}
		removed = true
		ctx := context.Background()
		for _, err := range []error{
			host.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, name, metav1.DeleteOptions{}),
			host.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, name, metav1.DeleteOptions{}),
		} {
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("removing policy %s: %v", name, err)
			}
		}
	}
	t.Cleanup(remove)
	return remove
}
