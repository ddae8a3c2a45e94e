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
}

// Reconciler is the skeleton of the controllers of tenant objects of kind
// O: it reads the object's Tenant and the object from the informers, has
// the kind sync the host or remove what the object left, reports the
// outcome in the object's status, and says when to look again. A Tenant
// that is gone or being deleted is offboarding's and the checker's: its
// objects are left alone.
type Reconciler[O any, X any] struct {
	// Kind names the kind in logs ("network").
	Kind string
	// Tenants and Objects are the informers of Tenants and of the kind.
	Tenants, Objects cache.SharedIndexInformer
	// Written, when set, holds the objects whose status SetStatus wrote
	// that Objects does not show yet (Sources.WrittenOf(Objects)): a
	// reconcile reads the newer of the two.
	Written *Written
	// Health says whether the host answers; nil: it always does.
	Health interface{ Err() error }
	// Sync brings the host in line with o, of Tenant t.
	Sync func(ctx context.Context, t *tenant.Tenant, o O, key queue.Key) (Outcome[X], error)
	// Remove removes the host objects of the object key names, which no
	// longer exists.
	Remove func(ctx context.Context, t *tenant.Tenant, key queue.Key) error
	// SetStatus writes out into o's status.
	SetStatus func(ctx context.Context, t *tenant.Tenant, key queue.Key, o O, out Outcome[X]) error
	// Conditions returns o's status conditions: a sync that makes its
	// HostSynced condition true for a new generation is counted in
	// tenant_syncer_write_to_host_seconds.
	Conditions func(o O) []metav1.Condition
}

func (r *Reconciler[O, X]) hostDown() error {
	if r.Health == nil {
		return nil
	}
	return r.Health.Err()
}

// Reconcile implements ReconcileFunc. A sync that fails is reported in the
// status (HostUnreachable when the host does not answer, HostError
// otherwise) and retried with backoff; while the host health check fails,
// nothing is synced.
func (r *Reconciler[O, X]) Reconcile(ctx context.Context, key queue.Key) error {
	logger := klog.FromContext(ctx).WithValues("tenant", key.Tenant, r.Kind, key.String())
	ctx = klog.NewContext(ctx, logger)
	obj, exists, err := r.Tenants.GetStore().GetByKey(key.Tenant)
	if err != nil || !exists {
		return err
	}
	t := obj.(*tenant.Tenant)
	if t.DeletionTimestamp != nil {
		return nil
	}
	objKey := ObjectKey(key.Tenant, key.Namespace, key.Name)
	obj, exists, err = r.Objects.GetStore().GetByKey(objKey)
	if err != nil {
		return err
	}
	unseen := false
	if exists {
		obj = r.Written.Latest(objKey, obj)
	} else if created, ok := r.Written.Unseen(objKey); ok {
		obj, unseen = created, true // just created here, not in the informer yet (HandOff)
	} else {
		return r.Remove(ctx, t, key)
	}
	o := obj.(O)
	var out Outcome[X]
	if down := r.hostDown(); down != nil {
		// Not retried: the host's return requeues every object.
		out = Outcome[X]{Reason: ReasonHostUnreachable, Message: down.Error()}
	} else if out, err = r.Sync(ctx, t, o, key); err != nil {
		out = Outcome[X]{Reason: ReasonHostError, Message: err.Error()}
		if Unreachable(err) {
			out.Reason = ReasonHostUnreachable
		}
	}
	if serr := r.SetStatus(ctx, t, key, o, out); serr != nil {
		return serr
	}
	if out.Synced {
		r.observeSynced(o)
	}
	switch {
	case err != nil:
		return err
	case !out.Synced && out.Reason == ReasonHostNameTaken:
		return Requeue(takenRecheck, "%s", out.Message)
	case !out.Synced && out.Reason == ReasonWaiting:
		return Requeue(waitingRecheck, "%s", out.Message)
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
