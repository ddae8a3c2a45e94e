package onboarding

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// ConditionIdentitySynced is the Tenant condition that says whether the
// tenant is registered in the platform's identity layer: its OpenShift
// Group exists and holds its member users. A Tenant has it only on a host
// that serves user.openshift.io Groups.
const ConditionIdentitySynced = "IdentitySynced"

// ReasonGroupSynced is the reason of a True IdentitySynced.
const ReasonGroupSynced = "GroupSynced"

// identityRecheck is how often a Tenant whose Group name someone else's
// Group holds looks again: that Group carries no tenant label, so no
// event says when it goes.
const identityRecheck = 10 * time.Second

// identity is what a sync found of a Tenant's Group.
type identity struct {
	// known: the host's Groups were looked at; unset, the condition is
	// left as it is (the host does not serve Groups, or the sync failed).
	known           bool
	synced          bool
	reason, message string
}

// details are what a sync of a Tenant reports besides HostSynced.
type details struct {
	identity identity
}

// syncIdentity makes t's OpenShift Group hold its member users, when the
// host serves Groups: the Group tenancy.IdentityGroup(t) (OpenShift refuses
// ':' in Group names, so it is not tenancy.GroupPrefix+t), whose users are
// shared with the identity provider's group sync (hostkinds.MergeGroupUsers).
func (c *Controller) syncIdentity(ctx context.Context, t *tenant.Tenant) (identity, error) {
	if !c.src.GroupsKnown() {
		return identity{}, nil
	}
	name := tenancy.IdentityGroup(t.Name)
	marks := hostnames.Marks{Tenant: t.Name, TenantUID: t.UID, OwnerUID: t.UID, ChangedBy: hostnames.ChangedBy(t)}
	want := hostkinds.NewGroup(name, t.Spec.Members.Users)
	marks.Apply(want)
	got, err := c.kinds.Groups.Ensure(ctx, want, marks)
	if err != nil {
		return identity{}, fmt.Errorf("identity group %s: %w", name, err)
	}
	if !got.Synced {
		return identity{known: true, reason: got.Reason, message: got.Message}, nil
	}
	return identity{known: true, synced: true, reason: ReasonGroupSynced, message: fmt.Sprintf(
		"Group %s holds the tenant's member users; the identity layer's members of it are members of the tenant", name)}, nil
}

// setIdentityCondition records id in conditions; it says whether anything changed.
func setIdentityCondition(conditions *[]metav1.Condition, generation int64, id identity) bool {
	if !id.known {
		return false
	}
	return controller.SetCondition(conditions, generation, ConditionIdentitySynced, id.synced, id.reason, id.message)
}
