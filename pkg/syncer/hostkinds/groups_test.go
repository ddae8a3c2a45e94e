package hostkinds

import (
	"slices"
	"testing"

	"tenant.io/tenant-apiserver/pkg/hostnames"
)

func TestMergeGroupUsers(t *testing.T) {
	for _, c := range []struct {
		name           string
		have, managed  []string // the Group's users, and the ones its annotation lists (nil: no annotation)
		members        []string
		want, wantMngd []string
	}{
		{name: "new members appended and managed", have: []string{}, managed: []string{}, members: []string{"ida", "ivo"},
			want: []string{"ida", "ivo"}, wantMngd: []string{"ida", "ivo"}},
		{name: "identity provider's user stays", have: []string{"ida", "iris"}, managed: []string{"ida"}, members: []string{"ida"},
			want: []string{"ida", "iris"}, wantMngd: []string{"ida"}},
		{name: "member taken off the Tenant goes", have: []string{"ida", "iris", "ivo"}, managed: []string{"ida", "ivo"}, members: []string{"ida"},
			want: []string{"ida", "iris"}, wantMngd: []string{"ida"}},
		{name: "member the identity provider put there first is not managed", have: []string{"iris"}, managed: []string{}, members: []string{"iris", "ida"},
			want: []string{"iris", "ida"}, wantMngd: []string{"ida"}},
		{name: "unmanaged member taken off the Tenant stays", have: []string{"iris", "ida"}, managed: []string{"ida"}, members: []string{"ida"},
			want: []string{"iris", "ida"}, wantMngd: []string{"ida"}},
		{name: "managed user removed on the host comes back", have: []string{"iris"}, managed: []string{"ida"}, members: []string{"ida"},
			want: []string{"iris", "ida"}, wantMngd: []string{"ida"}},
		{name: "no annotation: nothing is removed", have: []string{"iris", "ivo"}, managed: nil, members: []string{"ida"},
			want: []string{"iris", "ivo", "ida"}, wantMngd: []string{"ida"}},
		{name: "duplicates collapse", have: []string{"ida", "ida"}, managed: []string{"ida"}, members: []string{"ida", "ida"},
			want: []string{"ida"}, wantMngd: []string{"ida"}},
		{name: "no members, no managed users: empty", have: []string{"ida"}, managed: []string{"ida"}, members: nil,
			want: []string{}, wantMngd: []string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := NewGroup("tenant.io-acme", c.have)
			if c.managed == nil {
				g.SetAnnotations(nil)
			} else {
				setGroupUsers(g, c.have, c.managed)
			}
			users, managed := MergeGroupUsers(g, c.members)
			if !slices.Equal(users, c.want) || !slices.Equal(managed, c.wantMngd) {
				t.Errorf("users %q managed %q, want %q managed %q", users, managed, c.want, c.wantMngd)
			}
			// Merging again changes nothing: the repaired Group matches.
			setGroupUsers(g, users, managed)
			again, againManaged := MergeGroupUsers(g, c.members)
			if !slices.Equal(again, users) || !slices.Equal(againManaged, managed) {
				t.Errorf("second merge: users %q managed %q, want %q %q", again, againManaged, users, managed)
			}
		})
	}
}

func TestManagedGroupUsersGarbled(t *testing.T) {
	g := NewGroup("tenant.io-acme", []string{"ida"})
	g.SetAnnotations(map[string]string{hostnames.ManagedUsersAnnotation: "ida,ivo"})
	if got := ManagedGroupUsers(g); got != nil {
		t.Errorf("a garbled annotation claims %q; want none", got)
	}
}
