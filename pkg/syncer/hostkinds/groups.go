package hostkinds

import (
	"encoding/json"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// newGroups is the host kind of the OpenShift Group the syncer makes for
// each tenant: the tenant in the platform's identity layer. The Group's
// users are shared with the identity provider's group sync, so a Group is
// never made to equal the one the syncer wants; it is merged with it (see
// MergeGroupUsers).
func newGroups(s *controller.Sources) controller.HostKind[*unstructured.Unstructured] {
	k := dynamicKind(s, controller.Groups, "Group", s.HostGroups)
	// The Group a reconcile just created stands in for the informer's
	// view until it shows it: the Tenant's next reconcile, queued by the
	// events of its other host objects, finds it there instead of
	// creating it again (answered 409) and reading it back.
	k.Written = s.WrittenOf(s.HostGroups)
	k.Matches = func(have, want *unstructured.Unstructured) bool {
		users, managed := MergeGroupUsers(have, GroupUsers(want))
		return slices.Equal(users, GroupUsers(have)) && slices.Equal(managed, ManagedGroupUsers(have))
	}
	k.Repair = func(have, want *unstructured.Unstructured) *unstructured.Unstructured {
		users, managed := MergeGroupUsers(have, GroupUsers(want))
		out := have.DeepCopy()
		setGroupUsers(out, users, managed)
		return out
	}
	return k
}

// NewGroup returns the Group name whose users are users, all of them the
// syncer's (a Group it creates).
func NewGroup(name string, users []string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{}}
	u.SetGroupVersionKind(controller.Groups.GroupVersion().WithKind("Group"))
	u.SetName(name)
	setGroupUsers(u, users, users)
	return u
}

// GroupUsers are the users of Group g, in its order.
func GroupUsers(g *unstructured.Unstructured) []string {
	users, _, _ := unstructured.NestedStringSlice(g.Object, "users")
	return users
}

// ManagedGroupUsers are the users of Group g that the syncer put there, as
// its annotation lists them (sorted).
func ManagedGroupUsers(g *unstructured.Unstructured) []string {
	raw, ok := g.GetAnnotations()[hostnames.ManagedUsersAnnotation]
	if !ok {
		return nil
	}
	var users []string
	if err := json.Unmarshal([]byte(raw), &users); err != nil {
		return nil // garbled: the syncer claims none of the users, and removes none
	}
	slices.Sort(users)
	return slices.Compact(users)
}

// MergeGroupUsers returns the users Group have must hold for a tenant whose
// members are members (Tenant.spec.members.users), and those of them that
// the syncer manages from then on:
//
//   - every member is in the Group, kept where it was, the missing ones
//     appended in members' order;
//   - a user the syncer managed that is no longer a member is taken out;
//   - any other user (the identity provider's group sync put it there, or
//     an admin did) stays.
//
// A member the syncer finds already in the Group was put there by someone
// else and is not managed: taken off the Tenant, it stays. The managed
// users are sorted.
func MergeGroupUsers(have *unstructured.Unstructured, members []string) (users, managed []string) {
	wasManaged := ManagedGroupUsers(have)
	current := GroupUsers(have)
	isMember := func(u string) bool { return slices.Contains(members, u) }
	users = []string{}
	managed = []string{}
	for _, u := range current {
		if slices.Contains(users, u) {
			continue
		}
		switch owned := slices.Contains(wasManaged, u); {
		case owned && !isMember(u):
			continue // the syncer's, and no longer a member
		case owned:
			managed = append(managed, u)
		}
		users = append(users, u)
	}
	for _, u := range members {
		if !slices.Contains(users, u) {
			users = append(users, u)
			managed = append(managed, u)
		}
	}
	slices.Sort(managed)
	return users, slices.Compact(managed)
}

// setGroupUsers sets g's users and the annotation that lists the managed ones.
func setGroupUsers(g *unstructured.Unstructured, users, managed []string) {
	list := make([]interface{}, len(users))
	for i, u := range users {
		list[i] = u
	}
	g.Object["users"] = list
	sorted := slices.Clone(managed)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	if sorted == nil {
		sorted = []string{}
	}
	data, _ := json.Marshal(sorted) // a []string always marshals
	annotations := g.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[hostnames.ManagedUsersAnnotation] = string(data)
	g.SetAnnotations(annotations)
}
