package controller

import (
	"context"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

const (
	// takenRecheck is how often an object whose host name someone else
	// holds looks again: nothing of the syncer's says when it is freed.
	takenRecheck = 10 * time.Second
	// waitingRecheck is how often an object waiting for the host (a host
	// namespace terminating, an address not assigned yet) looks again.
	waitingRecheck = time.Second
)

// Outcome is what a sync found: the host objects exist and match
// (Synced), or why not (Reason and Message, for the object's conditions).
// Details are what the kind's status reports besides (an address, the
// host object as last seen).
type Outcome[X any] struct {
	Synced          bool
	Reason, Message string
	Details         X
	// RequeueAfter, when set, has the object looked at again after that
	// long although nothing failed: what it waits for raises no event.
	RequeueAfter time.Duration
	// Background has the look again after RequeueAfter wait behind the
	// keys that events queue: nothing is known to have changed.
	Background bool
	// Orphaned: what the object was made for (its Tenant, or an object
	// it names) is gone or was replaced, as Reason and Message say; its
	// host objects are removed and none are made for it again.
	Orphaned bool
}

// Reconciler is the skeleton of the syncer's controllers of objects of
// kind O: it reads the object's Tenant and the object from the informers,
// has the kind sync the host or remove what the object left, reports the
// outcome in the object's status, and says when to look again. A Tenant
// that is gone or being deleted is offboarding's and the checker's: its
// objects are left alone. The provider's objects (VRFPeerings,
// ProviderServices) and the Tenants themselves add the steps below
// Conditions: the Tenant they name and when they are orphaned, keys of a
// tenant as a whole, and a Tenant's onboarding and offboarding.
type Reconciler[O Object, X any] struct {
	// Kind names the kind in logs ("network").
	Kind string
	// Tenants and Objects are the informers of Tenants and of the kind.
	Tenants, Objects cache.SharedIndexInformer
	// Health says whether the host answers; nil: it always does.
	Health interface{ Err() error }
	// Sync brings the host in line with o, of Tenant t.
	Sync func(ctx context.Context, t *tenant.Tenant, o O, key queue.Key) (Outcome[X], error)
	// Remove removes the host objects of the object key names, which no
	// longer exists.
	Remove func(ctx context.Context, t *tenant.Tenant, key queue.Key) error
	// Status stores the objects' statuses. Its Written, when set, holds
	// the objects whose status it stored that Objects does not show yet
	// (Sources.WrittenOf(Objects)): a reconcile reads the newer of the
	// two.
	Status StatusWriter[O]
	// SetStatus says how out is put into o's status: it returns the
	// function that sets the status of live (a copy of o, then the newest
	// stored copy) and says whether anything changed.
	SetStatus func(t *tenant.Tenant, key queue.Key, o O, out Outcome[X]) func(live O) bool
	// Conditions returns o's status conditions: a sync that makes its
	// HostSynced condition true for a new generation is counted in
	// tenant_syncer_write_to_host_seconds.
	Conditions func(o O) []metav1.Condition

	// The steps below are for kinds whose objects are not a tenant's own.

	// TenantObjects: the objects are the Tenants themselves, each named by
	// a key's Tenant alone; a Tenant is the Tenant of its own sync, and
	// its status is written outside any tenant's scope.
	TenantObjects bool
	// Prepare, when set, runs before anything else for an object that
	// exists: when it reports done (a Tenant it onboarded, or one leaving
	// that it offboards), the reconcile ends there, with its error.
	Prepare func(ctx context.Context, o O) (done bool, err error)

	// ProviderObjects: the objects are the provider's, named alone in
	// Objects; a key's Tenant, when set, is the tenant the object names.
	// The skeleton looks up no Tenant for them: that is Bound's to do.
	ProviderObjects bool
	// Bound, when set, replaces the look-up of the key's Tenant: it
	// returns the live Tenant o was made for (nil for an object made for
	// no tenant), or, when what o was made for is gone or was replaced,
	// o's Orphaned outcome. An orphaned object's host objects are removed
	// (RemoveOrphan) and the outcome reported, whether the host answers
	// or not; Remove is then given no Tenant.
	Bound func(o O) (*tenant.Tenant, Outcome[X])
	// RemoveOrphan removes the host objects of o, orphaned.
	RemoveOrphan func(ctx context.Context, o O) error
	// SyncTenant, when set, reconciles the keys that name a tenant alone
	// (Name empty): what the kind makes for a tenant as a whole, from
	// every object of the kind. tn is nil when Tenant t is gone or being
	// deleted: what was made for it goes. Like Sync, it runs only while
	// the host answers; an error retries the key with backoff.
	SyncTenant func(ctx context.Context, t string, tn *tenant.Tenant) error
	// AfterStatus, when set, runs once the outcome is in the status, unless
	// the sync failed.
	AfterStatus func(ctx context.Context, o O, out Outcome[X]) error
	// KeepStatusOnError: the status reports what the kind found, not how
	// the host answers. A sync that fails, or a host that does not
	// answer, leaves it as it was, and the key is retried with backoff.
	KeepStatusOnError bool
	// Recheck, when set, is how soon an object that waits (ReasonWaiting)
	// or whose host name someone else holds (ReasonHostNameTaken) looks
	// again; unset, 1 s and 10 s.
	Recheck time.Duration

	// unreachable holds the keys reported HostUnreachable since the host
	// last came back (TakeUnreachable).
	unreachable unreachableKeys
}

// TakeUnreachable returns the keys whose objects this Reconciler reported
// HostUnreachable since the last call, and forgets them: when the host
// answers again, those are the objects to look at again.
func (r *Reconciler[O, X]) TakeUnreachable() []queue.Key { return r.unreachable.take() }

func (r *Reconciler[O, X]) hostDown() error {
	if r.Health == nil {
		return nil
	}
	return r.Health.Err()
}

// Reconcile implements ReconcileFunc. A sync that fails is reported in the
// status (HostUnreachable when the host does not answer, HostError
// otherwise; not with KeepStatusOnError) and retried with backoff; while
// the host health check fails, nothing is synced.
func (r *Reconciler[O, X]) Reconcile(ctx context.Context, key queue.Key) error {
	logger := klog.FromContext(ctx).WithValues("tenant", key.Tenant, r.Kind, key.String())
	ctx = klog.NewContext(ctx, logger)
	if key.Name == "" && r.SyncTenant != nil {
		return r.reconcileTenant(ctx, key.Tenant)
	}
	var t *tenant.Tenant
	if r.Bound == nil && !r.ProviderObjects && !r.TenantObjects {
		obj, exists, err := r.Tenants.GetStore().GetByKey(key.Tenant)
		if err != nil || !exists {
			return err
		}
		if t = obj.(*tenant.Tenant); t.DeletionTimestamp != nil {
			return nil
		}
	}
	objKey := ObjectKey(key.Tenant, key.Namespace, key.Name)
	switch {
	case r.ProviderObjects:
		objKey = key.Name
	case r.TenantObjects:
		objKey = key.Tenant
	}
	obj, exists, err := r.Objects.GetStore().GetByKey(objKey)
	if err != nil {
		return err
	}
	unseen := false
	if exists {
		obj = r.Status.Written.Latest(objKey, obj)
	} else if created, ok := r.Status.Written.Unseen(objKey); ok {
		obj, unseen = created, true // just created here, not in the informer yet (HandOff)
	} else {
		return r.Remove(ctx, t, key)
	}
	o := obj.(O)
	if r.Prepare != nil {
		if done, err := r.Prepare(ctx, o); done || err != nil {
			return err
		}
	}
	var out Outcome[X]
	switch {
	case r.Bound != nil:
		t, out = r.Bound(o)
	case r.TenantObjects:
		t, _ = any(o).(*tenant.Tenant)
	}
	down := r.hostDown()
	if down != nil && !out.Orphaned && !r.KeepStatusOnError {
		// Recorded before the status says so, and the host asked again:
		// if it came back in between, its return may have taken the
		// record before this key was in it, and the key syncs now.
		r.unreachable.add(key)
		down = r.hostDown()
	}
	switch {
	case out.Orphaned:
		// Nothing of it may stay on the host, or be made for a new one.
		if err := r.RemoveOrphan(ctx, o); err != nil {
			return err
		}
	case down != nil && r.KeepStatusOnError:
		return down
	case down != nil:
		// Not retried: the host's return queues the keys recorded above.
		out = Outcome[X]{Reason: ReasonHostUnreachable, Message: down.Error()}
	default:
		if out, err = r.Sync(ctx, t, o, key); err != nil {
			if r.KeepStatusOnError {
				return err
			}
			out = Outcome[X]{Reason: ReasonHostError, Message: err.Error()}
			if Unreachable(err) {
				out.Reason = ReasonHostUnreachable
			}
		}
	}
	scope, ns := key.Tenant, key.Namespace
	if r.TenantObjects {
		scope, ns = "", ""
	}
	if serr := r.Status.Write(ctx, scope, ns, o, r.SetStatus(t, key, o, out)); serr != nil {
		return serr
	}
	if out.Synced {
		r.observeSynced(o)
	}
	if r.AfterStatus != nil && err == nil {
		if aerr := r.AfterStatus(ctx, o, out); aerr != nil {
			return aerr
		}
	}
	taken, waiting := takenRecheck, waitingRecheck
	if r.Recheck > 0 {
		taken, waiting = r.Recheck, r.Recheck
	}
	switch {
	case err != nil:
		return err
	case !out.Synced && out.Reason == ReasonHostNameTaken:
		return Requeue(taken, "%s", out.Message)
	case !out.Synced && out.Reason == ReasonWaiting:
		return Requeue(waiting, "%s", out.Message)
	case out.RequeueAfter > 0 && out.Background:
		return RequeueBackground(out.RequeueAfter, "%s", out.Message)
	case out.RequeueAfter > 0:
		return Requeue(out.RequeueAfter, "%s", out.Message)
	case unseen:
		// Looked at again from the informer's view: an object deleted
		// right after its create may have been synced from the created
		// copy while its delete was on its way. Behind the tenant's new
		// objects: most likely nothing changed.
		return RequeueBackground(writtenTTL, "synced from the created object, before its informer showed it")
	}
	return nil
}

// reconcileTenant runs SyncTenant for tenant t while the host answers.
func (r *Reconciler[O, X]) reconcileTenant(ctx context.Context, t string) error {
	var tn *tenant.Tenant
	if obj, exists, err := r.Tenants.GetStore().GetByKey(t); err != nil {
		return err
	} else if exists && obj.(*tenant.Tenant).DeletionTimestamp == nil {
		tn = obj.(*tenant.Tenant)
	}
	if down := r.hostDown(); down != nil {
		return down
	}
	return r.SyncTenant(ctx, t, tn)
}

// observeSynced counts in tenant_syncer_write_to_host_seconds the time
// since o's spec was written, unless o (as cached, before this sync's
// status write) already said that this generation was synced.
func (r *Reconciler[O, X]) observeSynced(o O) {
	m, err := meta.Accessor(o)
	if err != nil || r.Conditions == nil {
		return
	}
	if c := meta.FindStatusCondition(r.Conditions(o), tenant.ConditionHostSynced); c != nil &&
		c.Status == metav1.ConditionTrue && c.ObservedGeneration == m.GetGeneration() {
		return
	}
	// The kind's name in the API: "network" → "Network", "floatingIP" → "FloatingIP".
	kind := strings.ToUpper(r.Kind[:1]) + r.Kind[1:]
	ObserveWriteToHost(kind, m.GetAnnotations()[hostnames.ChangedAtAnnotation], time.Now())
}
