package tenancy

import (
	"slices"
	"sort"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

// Membership resolves callers to tenants from the Tenants that exist: a user
// is a member of tenant T when T.spec.members lists the user or one of its
// groups, or when the user is in group "tenant.io:T". It is kept current
// from a Tenant informer, so a change of members takes effect with the next
// request; open watches of callers who lost their tenant are ended through
// the listeners.
type Membership struct {
	mu sync.RWMutex
	// tenants holds the members of every existing tenant, by tenant name.
	tenants map[string]members
	// byUser and byGroup index tenants by explicit member.
	byUser  map[string]map[string]bool
	byGroup map[string]map[string]bool

	listenersMu sync.Mutex
	listeners   []func()
}

type members struct {
	uid           types.UID
	users, groups []string
}

var _ UIDResolver = &Membership{}

// NewMembership returns an empty index.
func NewMembership() *Membership {
	return &Membership{
		tenants: map[string]members{},
		byUser:  map[string]map[string]bool{},
		byGroup: map[string]map[string]bool{},
	}
}

// TenantsOf implements Resolver.
func (m *Membership) TenantsOf(u user.Info) []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var tenants []string
	for t := range m.byUser[u.GetName()] {
		tenants = append(tenants, t)
	}
	for _, g := range u.GetGroups() {
		for t := range m.byGroup[g] {
			tenants = append(tenants, t)
		}
		if t, ok := cutTenantGroup(g); ok {
			if _, exists := m.tenants[t]; exists {
				tenants = append(tenants, t)
			}
		}
	}
	sort.Strings(tenants)
	return dedupSorted(tenants)
}

// TenantUID implements UIDResolver.
func (m *Membership) TenantUID(name string) (types.UID, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	mem, ok := m.tenants[name]
	return mem.uid, ok
}

// OnChange registers f to run after every change of membership.
func (m *Membership) OnChange(f func()) {
	m.listenersMu.Lock()
	defer m.listenersMu.Unlock()
	m.listeners = append(m.listeners, f)
}

// Set records the members of tenant t, replacing what was known. Most
// updates of a Tenant (its status, its usage on every create of a tenant
// object) leave the members alone: those change nothing and notify nobody.
func (m *Membership) Set(t *v1alpha1.Tenant) {
	mem := members{uid: t.UID, users: append([]string(nil), t.Spec.Members.Users...), groups: append([]string(nil), t.Spec.Members.Groups...)}
	m.mu.Lock()
	if old, ok := m.tenants[t.Name]; ok && old.uid == mem.uid && slices.Equal(old.users, mem.users) && slices.Equal(old.groups, mem.groups) {
		m.mu.Unlock()
		return
	}
	m.removeLocked(t.Name)
	m.tenants[t.Name] = mem
	for _, u := range mem.users {
		addIndex(m.byUser, u, t.Name)
	}
	for _, g := range mem.groups {
		addIndex(m.byGroup, g, t.Name)
	}
	m.recordSizeLocked()
	m.mu.Unlock()
	m.notify()
}

// recordSizeLocked sets tenant_membership_index_entries.
func (m *Membership) recordSizeLocked() {
	membershipEntries.WithLabelValues("tenant").Set(float64(len(m.tenants)))
	membershipEntries.WithLabelValues("user").Set(float64(len(m.byUser)))
	membershipEntries.WithLabelValues("group").Set(float64(len(m.byGroup)))
}

// Delete forgets tenant name.
func (m *Membership) Delete(name string) {
	m.mu.Lock()
	m.removeLocked(name)
	m.recordSizeLocked()
	m.mu.Unlock()
	m.notify()
}

func (m *Membership) removeLocked(name string) {
	old, ok := m.tenants[name]
	if !ok {
		return
	}
	for _, u := range old.users {
		delIndex(m.byUser, u, name)
	}
	for _, g := range old.groups {
		delIndex(m.byGroup, g, name)
	}
	delete(m.tenants, name)
}

func (m *Membership) notify() {
	m.listenersMu.Lock()
	listeners := append([]func(){}, m.listeners...)
	m.listenersMu.Unlock()
	for _, f := range listeners {
		f()
	}
}

// EventHandler keeps m current from a Tenant informer.
func (m *Membership) EventHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			if t, ok := obj.(*v1alpha1.Tenant); ok {
				m.Set(t)
			}
		},
		UpdateFunc: func(_, obj interface{}) {
			if t, ok := obj.(*v1alpha1.Tenant); ok {
				m.Set(t)
			}
		},
		DeleteFunc: func(obj interface{}) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if t, ok := obj.(*v1alpha1.Tenant); ok {
				m.Delete(t.Name)
			}
		},
	}
}

// MembersOnly is the transform of the index's Tenant informer: of a
// Tenant it keeps what the index reads (name, UID, resourceVersion,
// deletion and spec.members), so that the index does not hold a copy of
// every Tenant's spec and status besides the watch cache's.
func MembersOnly(obj interface{}) (interface{}, error) {
	t, ok := obj.(*v1alpha1.Tenant)
	if !ok {
		return obj, nil
	}
	return &v1alpha1.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: t.Name, UID: t.UID, ResourceVersion: t.ResourceVersion, DeletionTimestamp: t.DeletionTimestamp},
		Spec:       v1alpha1.TenantSpec{Members: t.Spec.Members},
	}, nil
}

func addIndex(idx map[string]map[string]bool, key, tenant string) {
	if idx[key] == nil {
		idx[key] = map[string]bool{}
	}
	idx[key][tenant] = true
}

func delIndex(idx map[string]map[string]bool, key, tenant string) {
	delete(idx[key], tenant)
	if len(idx[key]) == 0 {
		delete(idx, key)
	}
}
