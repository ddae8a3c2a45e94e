package controller

import (
	"context"
	"errors"
	"net"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Condition reasons the syncer reports.
const (
	ReasonSynced             = "Synced"
	ReasonHostUnreachable    = "HostUnreachable"
	ReasonHostNameTaken      = "HostNameTaken"
	ReasonHostError          = "HostError"
	ReasonWaiting            = "Waiting"
	ReasonHostObjectsMissing = "HostObjectsMissing"
	ReasonOffboarding        = "Offboarding"
)

// Object is a typed API object: a tenant object, or a host object.
type Object interface {
	metav1.Object
	runtime.Object
}

// StatusWriter stores the statuses of one kind's tenant objects through
// the kind's status storage. The kind says how its status reads
// (a function that sets it on an object and says whether anything
// changed); the writer tries that on a copy of the informer's object
// first, and stores only what changes the object.
type StatusWriter[O Object] struct {
	// Store is the kind's status storage.
	Store rest.Updater
	// Written, when set, is the Written of the kind's informer
	// (Sources.WrittenOf): it holds what the writer stored until the
	// informer shows it.
	Written *Written
	// Probe, when set, returns the copy of an informer's object that a
	// status is tried on first, for kinds whose deep copy costs more than
	// the status needs; unset, a deep copy.
	Probe func(o O) O
}

// Write sets the status of o, the informer's copy of an object of tenant
// t in namespace ns, with set, and stores it unless set reports no
// change. set is given a copy of o first: most reconciles find everything
// as it was, and the cached copy tells without a read of the storage.
// Then it is given the newest stored copy, unless that is another object
// of the same name.
func (w StatusWriter[O]) Write(ctx context.Context, t, ns string, o O, set func(live O) bool) error {
	probe := w.Probe
	if probe == nil {
		probe = func(o O) O { return o.DeepCopyObject().(O) }
	}
	if !set(probe(o)) {
		return nil
	}
	return updateStatus(ctx, w.Store, w.Written, t, ns, o.GetName(), func(obj runtime.Object) bool {
		live, ok := obj.(O)
		return ok && live.GetUID() == o.GetUID() && set(live)
	})
}

// updateStatus applies mutate to the newest stored copy of tenant object
// name (of tenant t, in namespace ns) and stores it through the status
// storage, unless mutate reports no change. It reads the object from the
// storage, never from an informer: what it writes is never older than
// what is stored. A missing object is not an error (it was deleted). What
// it stores goes to written (when not nil), the Written of the kind's
// informer, until that informer shows it.
func updateStatus(ctx context.Context, statusStore rest.Updater, written *Written, t, ns, name string, mutate func(obj runtime.Object) bool) error {
	ctx = genericapirequest.WithNamespace(tenancy.WithTenant(ctx, t), ns)
	changed := false
	stored, _, err := statusStore.Update(ctx, name, rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		obj := old.DeepCopyObject()
		if changed = mutate(obj); !changed {
			return old, nil
		}
		return obj, nil
	}), nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{FieldManager: FieldManager})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil && changed && written != nil {
		if m, merr := meta.Accessor(stored); merr == nil {
			written.put(m)
		}
	}
	return err
}

// SetCondition sets a condition of an object of generation gen, and says
// whether anything changed.
func SetCondition(conditions *[]metav1.Condition, gen int64, typ string, ok bool, reason, message string) bool {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	return meta.SetStatusCondition(conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: gen,
	})
}

// Unreachable says whether err means the host API could not be reached
// (refused, reset, timed out, or answered that it is unavailable), as
// opposed to the host refusing the request.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var urlErr *url.Error
	var netErr net.Error
	if errors.As(err, &urlErr) || errors.As(err, &netErr) {
		return true
	}
	return apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) ||
		errors.Is(err, context.DeadlineExceeded)
}
