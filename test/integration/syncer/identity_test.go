package syncer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/onboarding"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// TestIdentityGroups follows a tenant through the platform's identity
// layer on a host that serves OpenShift Groups (the stack installs
// OpenShift's Group CRD): onboarding makes its Group tenant.io-<tenant>
// with its member users; members added to and taken off the Tenant follow;
// a user the identity provider's group sync adds to the Group survives the
// syncer, and is a member of the tenant through that group alone; tenant
// members cannot change the Group; a Group of that name the syncer did not
// make is left alone and reported; offboarding removes the Group.
func TestIdentityGroups(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*slowTimeout)
	defer cancel()
	_, dyn := hostClients(t)
	admin := tenantClient(t, stack.AdminUser)
	groups := dyn.Resource(controller.Groups)
	name := identityTenant
	groupName := tenancy.IdentityGroup(name)

	tn := onboard(ctx, t, tenantSpec{name: name, users: []string{identityUser}})
	waitIdentitySynced(ctx, t, admin, name)
	waitGroupUsers(ctx, t, groups, groupName, []string{identityUser})
	g, err := groups.Get(ctx, groupName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !hostnames.OwnedBy(g, tn.UID) || g.GetLabels()[hostnames.TenantLabel] != name {
		t.Errorf("Group %s: labels %v, annotations %v; want the tenant label and owner UID %s", groupName, g.GetLabels(), g.GetAnnotations(), tn.UID)
	}

	t.Run("a member added to the Tenant joins the Group", func(t *testing.T) {
		setMemberUsers(ctx, t, admin, name, identityUser, identityUser2)
		waitGroupUsers(ctx, t, groups, groupName, []string{identityUser, identityUser2})
	})

	t.Run("a user the identity provider adds survives the syncer", func(t *testing.T) {
		// What OpenShift's LDAP or OIDC group sync does: add a user to
		// the Group directly.
		g, err := groups.Get(ctx, groupName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		users := append(hostkinds.GroupUsers(g), identityIdPUser)
		if err := unstructured.SetNestedStringSlice(g.Object, users, "users"); err != nil {
			t.Fatal(err)
		}
		if _, err := groups.Update(ctx, g, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("adding %s to Group %s as the identity provider: %v", identityIdPUser, groupName, err)
		}
		// The next sync (this member change) takes out the member the
		// syncer put there and leaves the identity provider's user.
		setMemberUsers(ctx, t, admin, name, identityUser)
		waitGroupUsers(ctx, t, groups, groupName, []string{identityUser, identityIdPUser})
		// And a later one still leaves it: the Tenant's periodic check.
		time.Sleep(3 * time.Second)
		waitGroupUsers(ctx, t, groups, groupName, []string{identityUser, identityIdPUser})
	})

	t.Run("a user in the Group alone is a member", func(t *testing.T) {
		// The stack's authenticator gives iris the group tenant.io-<tenant>,
		// as OpenShift's does a user its Group lists.
		if err := theStack().WaitTenantVisible(ctx, identityIdPUser, name); err != nil {
			t.Fatal(err)
		}
		iris := tenantClient(t, identityIdPUser)
		list, err := iris.TenantV1alpha1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("%s lists its tenant's Namespaces: %v", identityIdPUser, err)
		}
		if len(list.Items) != 1 || list.Items[0].Name != defaultNamespace {
			t.Errorf("%s sees Namespaces %v, want its tenant's %s", identityIdPUser, list.Items, defaultNamespace)
		}
		hostNS := hostnames.Namespace(name, tn.UID, defaultNamespace)
		out, _, _ := theStack().Kubectl(ctx, identityIdPUser, "auth", "can-i", "create", "pods", "-n", hostNS)
		if out != "yes\n" {
			t.Errorf("%s may not create pods in its tenant's host namespace %s: %q", identityIdPUser, hostNS, out)
		}
	})

	t.Run("tenant members cannot change the Group", func(t *testing.T) {
		for _, user := range []string{identityUser, identityIdPUser} {
			_, memberDyn := hostClientsAs(t, user)
			memberGroups := memberDyn.Resource(controller.Groups)
			g, err := groups.Get(ctx, groupName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := unstructured.SetNestedStringSlice(g.Object, append(hostkinds.GroupUsers(g), "mallory"), "users"); err != nil {
				t.Fatal(err)
			}
			if _, err := memberGroups.Update(ctx, g, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
				t.Errorf("%s updating Group %s: %v, want 403", user, groupName, err)
			}
			patch := []byte(`{"users":["mallory"]}`)
			if _, err := memberGroups.Patch(ctx, groupName, types.MergePatchType, patch, metav1.PatchOptions{}); !apierrors.IsForbidden(err) {
				t.Errorf("%s patching Group %s: %v, want 403", user, groupName, err)
			}
			if err := memberGroups.Delete(ctx, groupName, metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
				t.Errorf("%s deleting Group %s: %v, want 403", user, groupName, err)
			}
			other := hostkinds.NewGroup(tenancy.IdentityGroup("other-"+randomHex(t, 2)), []string{user})
			if _, err := memberGroups.Create(ctx, other, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
				t.Errorf("%s creating Group %s: %v, want 403", user, other.GetName(), err)
			}
		}
		waitGroupUsers(ctx, t, groups, groupName, []string{identityUser, identityIdPUser})
	})

	t.Run("a Group the syncer did not make is not taken over", func(t *testing.T) {
		other := name + "-taken"
		otherGroup := tenancy.IdentityGroup(other)
		squatter := hostkinds.NewGroup(otherGroup, []string{"someone"})
		squatter.SetAnnotations(nil)
		if _, err := groups.Create(ctx, squatter, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = groups.Delete(context.Background(), otherGroup, metav1.DeleteOptions{}) })
		kubectlCreate(ctx, t, stack.AdminUser, tenantObject(tenantSpec{name: other, groups: []string{other + "-admins"}}))
		t.Cleanup(func() { offboardAtEnd(t, other) })
		eventually(ctx, t, syncTimeout, "Tenant "+other+" IdentitySynced=False, HostNameTaken", func(ctx context.Context) (bool, string) {
			got, err := admin.TenantV1alpha1().Tenants().Get(ctx, other, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			c := meta.FindStatusCondition(got.Status.Conditions, onboarding.ConditionIdentitySynced)
			return c != nil && c.Status == metav1.ConditionFalse && c.Reason == controller.ReasonHostNameTaken &&
				!tenantReady(got), describeTenant(got)
		})
		g, err := groups.Get(ctx, otherGroup, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if users := hostkinds.GroupUsers(g); !slices.Equal(users, []string{"someone"}) || len(g.GetLabels()) != 0 || len(g.GetAnnotations()) != 0 {
			t.Errorf("the squatter's Group was changed: users %v, labels %v, annotations %v", users, g.GetLabels(), g.GetAnnotations())
		}
		// Once the provider removes it, the tenant gets its own.
		if err := groups.Delete(ctx, otherGroup, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitIdentitySynced(ctx, t, admin, other)
		waitTenantReady(ctx, t, admin, other)
		waitGroupUsers(ctx, t, groups, otherGroup, []string{})
	})

	t.Run("offboarding removes the Group", func(t *testing.T) {
		if err := admin.TenantV1alpha1().Tenants().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(ctx, t, slowTimeout, "Group "+groupName+" gone with its Tenant", func(ctx context.Context) (bool, string) {
			g, err := groups.Get(ctx, groupName, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, "gone"
			}
			if err != nil {
				return false, err.Error()
			}
			return false, fmt.Sprintf("users %v, deletion %v", hostkinds.GroupUsers(g), g.GetDeletionTimestamp())
		})
	})
}

// setMemberUsers sets Tenant name's spec.members.users.
func setMemberUsers(ctx context.Context, t *testing.T, admin clientset.Interface, name string, users ...string) {
	t.Helper()
	patch, err := json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"members": map[string]interface{}{"users": users}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.TenantV1alpha1().Tenants().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("setting the users of Tenant %s to %v: %v", name, users, err)
	}
}

// waitIdentitySynced waits until Tenant name's IdentitySynced is True.
func waitIdentitySynced(ctx context.Context, t *testing.T, admin clientset.Interface, name string) {
	t.Helper()
	eventually(ctx, t, syncTimeout, "Tenant "+name+" IdentitySynced", func(ctx context.Context) (bool, string) {
		got, err := admin.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return conditionTrue(got.Status.Conditions, onboarding.ConditionIdentitySynced), describeTenant(got)
	})
}

// waitGroupUsers waits until Group name holds exactly users, in that order.
func waitGroupUsers(ctx context.Context, t *testing.T, groups dynamic.NamespaceableResourceInterface, name string, users []string) {
	t.Helper()
	eventually(ctx, t, syncTimeout, fmt.Sprintf("Group %s users %v", name, users), func(ctx context.Context) (bool, string) {
		g, err := groups.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		got := hostkinds.GroupUsers(g)
		return slices.Equal(got, users), fmt.Sprintf("users %v, managed %v", got, hostkinds.ManagedGroupUsers(g))
	})
}
