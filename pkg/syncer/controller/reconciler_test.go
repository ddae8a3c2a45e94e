package controller

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

type downHost struct{ err error }

func (h downHost) Err() error { return h.err }

// TestReconciler checks the skeleton every tenant-object controller runs:
// which Tenants and objects it leaves alone, when it removes, what status
// it writes for each outcome, and when it asks to look again.
func TestReconciler(t *testing.T) {
	acme := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "uid-acme"}}
	leaving := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "leaving", UID: "uid-leaving", DeletionTimestamp: &metav1.Time{Time: time.Now()}}}
	// Cached copies carry their tenant (and namespace) in metadata.namespace.
	blue := &tenant.Network{ObjectMeta: metav1.ObjectMeta{Namespace: CacheNamespace("acme", ""), Name: "blue", UID: "uid-blue"}}
	left := &tenant.Network{ObjectMeta: metav1.ObjectMeta{Namespace: CacheNamespace("leaving", ""), Name: "blue"}}
	refused := errors.New("connection refused")
	broken := errors.New("admission webhook denied the request")

	for _, c := range []struct {
		name     string
		key      queue.Key
		health   error
		outcome  Outcome[string]
		syncErr  error
		calls    []string
		status   *Outcome[string] // the status written, if any
		requeue  time.Duration    // a *RequeueError after that long
		later    bool             // the requeue is a background one
		failWith error            // the error returned, other than a requeue
		created  bool             // green was just created here (HandOff), its informer has not shown it
	}{
		{name: "no tenant", key: queue.Key{Tenant: "gone", Name: "blue"}},
		{name: "tenant being deleted", key: queue.Key{Tenant: "leaving", Name: "blue"}},
		{name: "object gone", key: queue.Key{Tenant: "acme", Name: "green"}, calls: []string{"remove acme/green"}},
		{name: "synced", key: queue.Key{Tenant: "acme", Name: "blue"},
			outcome: Outcome[string]{Synced: true, Details: "cudn"}, calls: []string{"sync blue"},
			status: &Outcome[string]{Synced: true, Details: "cudn"}},
		{name: "host down", key: queue.Key{Tenant: "acme", Name: "blue"}, health: refused,
			status: &Outcome[string]{Reason: ReasonHostUnreachable, Message: "connection refused"}},
		{name: "host error", key: queue.Key{Tenant: "acme", Name: "blue"}, syncErr: broken, calls: []string{"sync blue"},
			status: &Outcome[string]{Reason: ReasonHostError, Message: broken.Error()}, failWith: broken},
		{name: "name taken", key: queue.Key{Tenant: "acme", Name: "blue"}, calls: []string{"sync blue"},
			outcome: Outcome[string]{Reason: ReasonHostNameTaken, Message: "someone's"},
			status:  &Outcome[string]{Reason: ReasonHostNameTaken, Message: "someone's"}, requeue: takenRecheck},
		{name: "waiting", key: queue.Key{Tenant: "acme", Name: "blue"}, calls: []string{"sync blue"},
			outcome: Outcome[string]{Reason: ReasonWaiting, Message: "terminating"},
			status:  &Outcome[string]{Reason: ReasonWaiting, Message: "terminating"}, requeue: waitingRecheck},
		{name: "synced, looking again later", key: queue.Key{Tenant: "acme", Name: "blue"}, calls: []string{"sync blue"},
			outcome: Outcome[string]{Synced: true, Reason: "TargetNotFound", RequeueAfter: 5 * time.Second},
			status:  &Outcome[string]{Synced: true, Reason: "TargetNotFound", RequeueAfter: 5 * time.Second}, requeue: 5 * time.Second},
		{name: "just created, not in the informer yet", key: queue.Key{Tenant: "acme", Name: "green"}, created: true,
			outcome: Outcome[string]{Synced: true}, calls: []string{"sync green"},
			status: &Outcome[string]{Synced: true}, requeue: writtenTTL, later: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tenants := cache.NewSharedIndexInformer(&cache.ListWatch{}, &tenant.Tenant{}, 0, cache.Indexers{})
			objects := cache.NewSharedIndexInformer(&cache.ListWatch{}, &tenant.Network{}, 0, cache.Indexers{})
			for _, o := range []interface{}{acme, leaving} {
				if err := tenants.GetStore().Add(o); err != nil {
					t.Fatal(err)
				}
			}
			for _, o := range []interface{}{blue, left} {
				if err := objects.GetStore().Add(o); err != nil {
					t.Fatal(err)
				}
			}
			written, err := NewWritten(objects)
			if err != nil {
				t.Fatal(err)
			}
			green := &tenant.Network{ObjectMeta: metav1.ObjectMeta{Namespace: CacheNamespace("acme", ""), Name: "green", UID: "uid-green", ResourceVersion: "7"}}
			if c.created {
				written.Created(green)
			}
			var calls []string
			var status *Outcome[string]
			r := &Reconciler[*tenant.Network, string]{
				Kind: "network", Tenants: tenants, Objects: objects, Status: StatusWriter[*tenant.Network]{Written: written}, Health: downHost{c.health},
				Sync: func(_ context.Context, tn *tenant.Tenant, n *tenant.Network, _ queue.Key) (Outcome[string], error) {
					if tn != acme {
						t.Errorf("sync for tenant %s", tn.Name)
					}
					calls = append(calls, "sync "+n.Name)
					return c.outcome, c.syncErr
				},
				Remove: func(_ context.Context, tn *tenant.Tenant, key queue.Key) error {
					calls = append(calls, "remove "+tn.Name+"/"+key.Name)
					return nil
				},
				SetStatus: func(_ *tenant.Tenant, _ queue.Key, n *tenant.Network, out Outcome[string]) func(*tenant.Network) bool {
					if n != blue && (!c.created || n != green) {
						t.Errorf("status of %s", n.Name)
					}
					status = &out
					return func(*tenant.Network) bool { return false }
				},
			}
			err = r.Reconcile(context.Background(), c.key)
			if !slices.Equal(calls, c.calls) {
				t.Errorf("calls %v, want %v", calls, c.calls)
			}
			switch {
			case c.status == nil && status != nil:
				t.Errorf("status %+v written, want none", *status)
			case c.status != nil && (status == nil || *status != *c.status):
				t.Errorf("status %+v, want %+v", status, *c.status)
			}
			var requeue *RequeueError
			switch {
			case c.requeue > 0:
				if !errors.As(err, &requeue) || requeue.After != c.requeue || requeue.Background != c.later {
					t.Errorf("error %+v, want a requeue after %s (background %t)", err, c.requeue, c.later)
				}
			case c.failWith != nil:
				if !errors.Is(err, c.failWith) {
					t.Errorf("error %v, want %v", err, c.failWith)
				}
			case err != nil:
				t.Errorf("error %v, want none", err)
			}
		})
	}
}

// TestReconcilerProviderSteps checks the steps of the provider's objects:
// an orphaned object has its host objects removed and its outcome
// reported even while the host is down; a status that reports what the
// kind found is left alone on errors; keys of a tenant as a whole go to
// SyncTenant, with no Tenant once it is leaving.
func TestReconcilerProviderSteps(t *testing.T) {
	acme := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "uid-acme"}}
	leaving := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "leaving", UID: "uid-leaving", DeletionTimestamp: &metav1.Time{Time: time.Now()}}}
	peer := &tenant.VRFPeering{ObjectMeta: metav1.ObjectMeta{Name: "peer", UID: "uid-peer"}, Spec: tenant.VRFPeeringSpec{Tenant: "acme"}}
	stray := &tenant.VRFPeering{ObjectMeta: metav1.ObjectMeta{Name: "stray", UID: "uid-stray"}, Spec: tenant.VRFPeeringSpec{Tenant: "gone"}}
	refused := errors.New("connection refused")
	broken := errors.New("admission webhook denied the request")
	orphaned := Outcome[string]{Orphaned: true, Reason: "TenantGone", Message: "gone"}

	for _, c := range []struct {
		name       string
		key        queue.Key
		health     error
		keepStatus bool
		outcome    Outcome[string]
		syncErr    error
		calls      []string
		status     *Outcome[string]
		requeue    time.Duration
		later      bool
		failWith   error
	}{
		{name: "bound", key: queue.Key{Tenant: "acme", Name: "peer"}, outcome: Outcome[string]{Synced: true},
			calls: []string{"bound peer", "sync acme/peer", "after peer"}, status: &Outcome[string]{Synced: true}},
		{name: "orphaned, host down", key: queue.Key{Tenant: "gone", Name: "stray"}, health: refused,
			calls: []string{"bound stray", "remove orphan stray", "after stray"}, status: &orphaned},
		{name: "gone", key: queue.Key{Tenant: "acme", Name: "other"}, calls: []string{"remove <none>/other"}},
		{name: "waiting, own recheck", key: queue.Key{Tenant: "acme", Name: "peer"}, outcome: Outcome[string]{Reason: ReasonWaiting},
			calls: []string{"bound peer", "sync acme/peer", "after peer"}, status: &Outcome[string]{Reason: ReasonWaiting}, requeue: 2 * time.Second},
		{name: "resolved, looked at again in the background", key: queue.Key{Name: "peer"}, keepStatus: true,
			outcome: Outcome[string]{Synced: true, RequeueAfter: time.Minute, Background: true},
			calls:   []string{"bound peer", "sync acme/peer", "after peer"}, status: &Outcome[string]{Synced: true, RequeueAfter: time.Minute, Background: true},
			requeue: time.Minute, later: true},
		{name: "host down, status kept", key: queue.Key{Name: "peer"}, keepStatus: true, health: refused,
			calls: []string{"bound peer"}, failWith: refused},
		{name: "sync failed, status kept", key: queue.Key{Name: "peer"}, keepStatus: true, syncErr: broken,
			calls: []string{"bound peer", "sync acme/peer"}, failWith: broken},
		{name: "sync failed, reported", key: queue.Key{Name: "peer"}, syncErr: broken,
			calls: []string{"bound peer", "sync acme/peer"}, status: &Outcome[string]{Reason: ReasonHostError, Message: broken.Error()}, failWith: broken},
		{name: "tenant", key: queue.Key{Tenant: "acme"}, calls: []string{"tenant acme (acme)"}},
		{name: "tenant leaving", key: queue.Key{Tenant: "leaving"}, calls: []string{"tenant leaving (<none>)"}},
		{name: "tenant, host down", key: queue.Key{Tenant: "acme"}, health: refused, failWith: refused},
	} {
		t.Run(c.name, func(t *testing.T) {
			tenants := cache.NewSharedIndexInformer(&cache.ListWatch{}, &tenant.Tenant{}, 0, cache.Indexers{})
			objects := cache.NewSharedIndexInformer(&cache.ListWatch{}, &tenant.VRFPeering{}, 0, cache.Indexers{})
			for _, o := range []interface{}{acme, leaving} {
				if err := tenants.GetStore().Add(o); err != nil {
					t.Fatal(err)
				}
			}
			for _, o := range []interface{}{peer, stray} {
				if err := objects.GetStore().Add(o); err != nil {
					t.Fatal(err)
				}
			}
			name := func(tn *tenant.Tenant) string {
				if tn == nil {
					return "<none>"
				}
				return tn.Name
			}
			var calls []string
			var status *Outcome[string]
			r := &Reconciler[*tenant.VRFPeering, string]{
				Kind: "vrfpeering", Tenants: tenants, Objects: objects, Health: downHost{c.health},
				ProviderObjects: true, KeepStatusOnError: c.keepStatus, Recheck: 2 * time.Second,
				Bound: func(p *tenant.VRFPeering) (*tenant.Tenant, Outcome[string]) {
					calls = append(calls, "bound "+p.Name)
					if p == stray {
						return nil, orphaned
					}
					return acme, Outcome[string]{}
				},
				RemoveOrphan: func(_ context.Context, p *tenant.VRFPeering) error {
					calls = append(calls, "remove orphan "+p.Name)
					return nil
				},
				Sync: func(_ context.Context, tn *tenant.Tenant, p *tenant.VRFPeering, _ queue.Key) (Outcome[string], error) {
					calls = append(calls, "sync "+name(tn)+"/"+p.Name)
					return c.outcome, c.syncErr
				},
				Remove: func(_ context.Context, tn *tenant.Tenant, key queue.Key) error {
					calls = append(calls, "remove "+name(tn)+"/"+key.Name)
					return nil
				},
				SetStatus: func(_ *tenant.Tenant, _ queue.Key, _ *tenant.VRFPeering, out Outcome[string]) func(*tenant.VRFPeering) bool {
					status = &out
					return func(*tenant.VRFPeering) bool { return false }
				},
				AfterStatus: func(_ context.Context, p *tenant.VRFPeering, _ Outcome[string]) error {
					calls = append(calls, "after "+p.Name)
					return nil
				},
				SyncTenant: func(_ context.Context, tn string, live *tenant.Tenant) error {
					calls = append(calls, "tenant "+tn+" ("+name(live)+")")
					return nil
				},
			}
			err := r.Reconcile(context.Background(), c.key)
			if !slices.Equal(calls, c.calls) {
				t.Errorf("calls %v, want %v", calls, c.calls)
			}
			switch {
			case c.status == nil && status != nil:
				t.Errorf("status %+v written, want none", *status)
			case c.status != nil && (status == nil || *status != *c.status):
				t.Errorf("status %+v, want %+v", status, *c.status)
			}
			var requeue *RequeueError
			switch {
			case c.requeue > 0:
				if !errors.As(err, &requeue) || requeue.After != c.requeue || requeue.Background != c.later {
					t.Errorf("error %+v, want a requeue after %s (background %t)", err, c.requeue, c.later)
				}
			case c.failWith != nil:
				if !errors.Is(err, c.failWith) {
					t.Errorf("error %v, want %v", err, c.failWith)
				}
			case err != nil:
				t.Errorf("error %v, want none", err)
			}
		})
	}
}

// TestReconcilerTenantObjects checks the steps of a kind whose objects are
// the Tenants themselves: Prepare ends the reconcile of a Tenant it
// handles, and any other is synced as its own Tenant.
func TestReconcilerTenantObjects(t *testing.T) {
	acme := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "uid-acme"}}
	leaving := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "leaving", UID: "uid-leaving", DeletionTimestamp: &metav1.Time{Time: time.Now()}}}
	stuck := errors.New("still offboarding")
	for _, c := range []struct {
		name     string
		key      queue.Key
		calls    []string
		status   bool
		failWith error
	}{
		{name: "synced", key: queue.Key{Tenant: "acme"}, calls: []string{"prepare acme", "sync acme/acme"}, status: true},
		{name: "prepared", key: queue.Key{Tenant: "leaving"}, calls: []string{"prepare leaving"}, failWith: stuck},
		{name: "gone", key: queue.Key{Tenant: "gone"}, calls: []string{"remove gone"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tenants := cache.NewSharedIndexInformer(&cache.ListWatch{}, &tenant.Tenant{}, 0, cache.Indexers{})
			for _, o := range []interface{}{acme, leaving} {
				if err := tenants.GetStore().Add(o); err != nil {
					t.Fatal(err)
				}
			}
			var calls []string
			status := false
			r := &Reconciler[*tenant.Tenant, struct{}]{
				Kind: "tenant", Tenants: tenants, Objects: tenants, TenantObjects: true,
				Prepare: func(_ context.Context, tn *tenant.Tenant) (bool, error) {
					calls = append(calls, "prepare "+tn.Name)
					if tn.DeletionTimestamp != nil {
						return true, stuck
					}
					return false, nil
				},
				Sync: func(_ context.Context, owner, tn *tenant.Tenant, _ queue.Key) (Outcome[struct{}], error) {
					calls = append(calls, "sync "+owner.Name+"/"+tn.Name)
					return Outcome[struct{}]{Synced: true}, nil
				},
				Remove: func(_ context.Context, _ *tenant.Tenant, key queue.Key) error {
					calls = append(calls, "remove "+key.Tenant)
					return nil
				},
				SetStatus: func(*tenant.Tenant, queue.Key, *tenant.Tenant, Outcome[struct{}]) func(*tenant.Tenant) bool {
					status = true
					return func(*tenant.Tenant) bool { return false }
				},
			}
			err := r.Reconcile(context.Background(), c.key)
			if !slices.Equal(calls, c.calls) {
				t.Errorf("calls %v, want %v", calls, c.calls)
			}
			if status != c.status {
				t.Errorf("status written: %t, want %t", status, c.status)
			}
			if !errors.Is(err, c.failWith) && (err != nil || c.failWith != nil) {
				t.Errorf("error %v, want %v", err, c.failWith)
			}
		})
	}
}
