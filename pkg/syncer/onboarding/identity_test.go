package onboarding

import (
	"context"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
)

// TestIdentityOnlyWhereGroupsAreServed: on a host that does not serve
// OpenShift Groups (the informer never runs) nothing is written and the
// Tenant has no IdentitySynced condition; once it does, the tenant's Group
// is made with its member users and the condition says so.
func TestIdentityOnlyWhereGroupsAreServed(t *testing.T) {
	ctx := context.Background()
	src, f := controllertest.NewSources(t)
	c, err := New(src, hostkinds.New(src), AdvertiseL2)
	if err != nil {
		t.Fatal(err)
	}
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid", Generation: 1},
		Spec: tenant.TenantSpec{Members: tenant.TenantMembers{Users: []string{"ida"}}}}

	id, err := c.syncIdentity(ctx, tn)
	if err != nil || id.known {
		t.Fatalf("without Groups: %+v, %v; want nothing known", id, err)
	}
	for _, a := range f.Dynamic.Actions() {
		if a.GetResource() == controller.Groups {
			t.Errorf("without Groups the host was asked to %s groups", a.GetVerb())
		}
	}
	live := tn.DeepCopy()
	c.tenantStatus(tn, true, controller.ReasonSynced, "", id)(live)
	if cond := meta.FindStatusCondition(live.Status.Conditions, ConditionIdentitySynced); cond != nil {
		t.Errorf("without Groups the Tenant has %+v", cond)
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go src.HostGroups.RunWithContext(runCtx)
	if !cache.WaitFor(runCtx, "", src.HostGroups.HasSyncedChecker()) {
		t.Fatal("Groups informer did not sync")
	}
	id, err = c.syncIdentity(ctx, tn)
	if err != nil || !id.known || !id.synced {
		t.Fatalf("with Groups: %+v, %v; want synced", id, err)
	}
	g, err := f.Dynamic.Resource(controller.Groups).Get(ctx, "tenant.io-acme", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if users := hostkinds.GroupUsers(g); !slices.Equal(users, []string{"ida"}) || !hostnames.OwnedBy(g, tn.UID) {
		t.Errorf("Group users %v, annotations %v; want [ida], owned by the Tenant", users, g.GetAnnotations())
	}
	c.tenantStatus(tn, true, controller.ReasonSynced, "", id)(live)
	if cond := meta.FindStatusCondition(live.Status.Conditions, ConditionIdentitySynced); cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != ReasonGroupSynced {
		t.Errorf("with Groups the Tenant has %+v, want IdentitySynced True", cond)
	}
}
