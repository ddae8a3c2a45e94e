package onboarding

import (
	"context"
	"slices"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
)

// TestSyncFlowSchema: a tenant's FlowSchema names its members, its host
// group and the service accounts of each of its host namespaces, in the
// tenants' level with no distinguisher; it follows the tenant's
// Namespaces, is repaired when edited, and a FlowSchema of that name the
// syncer did not make is left alone and reported.
func TestSyncFlowSchema(t *testing.T) {
	src, f := controllertest.NewSources(t)
	c, err := New(src, hostkinds.New(src), AdvertiseL2)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"},
		Spec: tenant.TenantSpec{Members: tenant.TenantMembers{Users: []string{"alice"}, Groups: []string{"acme-devs"}}}}
	for _, name := range []string{"default", "web"} {
		controllertest.Cache(t, src.Namespaces, tn.Name, "", &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("ns-" + name),
			Labels: map[string]string{hostnames.TenantLabel: tn.Name}}})
	}
	api := f.Kube.FlowcontrolV1().FlowSchemas()
	cached := func(check func(*flowcontrolv1.FlowSchema) bool) func() bool {
		return func() bool {
			obj, exists, _ := src.HostFlowSchemas.GetStore().GetByKey(FlowSchemaName(tn.Name))
			return exists && check(obj.(*flowcontrolv1.FlowSchema))
		}
	}
	subjects := func(fs *flowcontrolv1.FlowSchema) []string {
		var out []string
		for _, s := range fs.Spec.Rules[0].Subjects {
			switch s.Kind {
			case flowcontrolv1.SubjectKindUser:
				out = append(out, "user "+s.User.Name)
			case flowcontrolv1.SubjectKindGroup:
				out = append(out, "group "+s.Group.Name)
			case flowcontrolv1.SubjectKindServiceAccount:
				out = append(out, "sa "+s.ServiceAccount.Namespace+"/"+s.ServiceAccount.Name)
			}
		}
		return out
	}

	if problem, err := c.syncFlowSchema(ctx, tn); err != nil || problem != "" {
		t.Fatalf("first sync: %q, %v", problem, err)
	}
	fs, err := api.Get(ctx, FlowSchemaName(tn.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user alice", "group acme-devs", "group tenant.io:acme", "group tenant.io-acme",
		"sa " + hostnames.Namespace(tn.Name, tn.UID, "default") + "/*", "sa " + hostnames.Namespace(tn.Name, tn.UID, "web") + "/*"}
	if got := subjects(fs); !slices.Equal(got, want) {
		t.Errorf("subjects %q, want %q", got, want)
	}
	if fs.Spec.PriorityLevelConfiguration.Name != TenantsPriorityLevel || fs.Spec.DistinguisherMethod != nil || fs.Spec.MatchingPrecedence != FlowSchemaPrecedence {
		t.Errorf("spec %+v: want level %s, no distinguisher (one flow per tenant), precedence %d", fs.Spec, TenantsPriorityLevel, FlowSchemaPrecedence)
	}
	if marks, ok := hostnames.MarksOf(fs, ""); !ok || marks.TenantUID != tn.UID || !hostnames.OwnedBy(fs, tn.UID) {
		t.Errorf("FlowSchema not marked as the tenant's: %v %v", fs.Labels, fs.Annotations)
	}

	// A new Namespace's service accounts join the flow.
	controllertest.Cache(t, src.Namespaces, tn.Name, "", &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev", UID: "ns-dev",
		Labels: map[string]string{hostnames.TenantLabel: tn.Name}}})
	controllertest.Eventually(t, "the informer has the FlowSchema", cached(func(*flowcontrolv1.FlowSchema) bool { return true }))
	if _, err := c.syncFlowSchema(ctx, tn); err != nil {
		t.Fatal(err)
	}
	fs, _ = api.Get(ctx, FlowSchemaName(tn.Name), metav1.GetOptions{})
	if got := subjects(fs); !slices.Contains(got, "sa "+hostnames.Namespace(tn.Name, tn.UID, "dev")+"/*") {
		t.Errorf("subjects after Namespace dev: %q", got)
	}

	// Moved to another level by hand: repaired.
	fs.Spec.PriorityLevelConfiguration.Name = "exempt"
	if _, err := api.Update(ctx, fs, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, "the informer has the edit", cached(func(fs *flowcontrolv1.FlowSchema) bool {
		return fs.Spec.PriorityLevelConfiguration.Name == "exempt"
	}))
	if _, err := c.syncFlowSchema(ctx, tn); err != nil {
		t.Fatal(err)
	}
	if fs, _ = api.Get(ctx, FlowSchemaName(tn.Name), metav1.GetOptions{}); fs.Spec.PriorityLevelConfiguration.Name != TenantsPriorityLevel {
		t.Errorf("level after repair %q, want %q", fs.Spec.PriorityLevelConfiguration.Name, TenantsPriorityLevel)
	}

	// --tenant-flow-schemas=false: the syncer removes the ones it made.
	c.FlowSchemas = false
	controllertest.Eventually(t, "the informer has the repair", cached(func(fs *flowcontrolv1.FlowSchema) bool {
		return fs.Spec.PriorityLevelConfiguration.Name == TenantsPriorityLevel
	}))
	if problem, err := c.syncFlowSchema(ctx, tn); err != nil || problem != "" {
		t.Fatalf("sync with FlowSchemas off: %q, %v", problem, err)
	}
	if _, err := api.Get(ctx, FlowSchemaName(tn.Name), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("FlowSchema with FlowSchemas off: %v, want it deleted", err)
	}
	c.FlowSchemas = true

	// The provider's own FlowSchema of the name another tenant would get.
	other := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "globex", UID: "other-uid"}}
	if _, err := api.Create(ctx, &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: FlowSchemaName(other.Name)},
		Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-low"}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	problem, err := c.syncFlowSchema(ctx, other)
	if err != nil || !strings.Contains(problem, "was not made for this object") {
		t.Errorf("someone else's FlowSchema: problem %q, err %v; want it reported and left alone", problem, err)
	}
	if fs, _ := api.Get(ctx, FlowSchemaName(other.Name), metav1.GetOptions{}); fs.Spec.PriorityLevelConfiguration.Name != "workload-low" {
		t.Errorf("someone else's FlowSchema was changed: %+v", fs.Spec)
	}
}
