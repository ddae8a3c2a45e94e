package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// HostObject is a typed host object.
type HostObject interface {
	metav1.Object
	runtime.Object
}

// HostKind is how a controller reads and writes the host objects of one
// kind that realise its tenant objects: through the informer (objects
// with the tenant label) and a typed client.
type HostKind[T HostObject] struct {
	// Kind names the kind in messages.
	Kind string
	// MetricKind, when set, names the kind in metrics where its name in
	// messages is not the host's ("host namespace": "Namespace").
	MetricKind string
	Informer   cache.SharedIndexInformer
	Create     func(ctx context.Context, obj T) (T, error)
	Get        func(ctx context.Context, namespace, name string) (T, error)
	Update     func(ctx context.Context, obj T) (T, error)
	Delete     func(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error
	// Matches says whether have is as want, marks aside.
	Matches func(have, want T) bool
	// Repair returns a copy of have changed to match want (marks are applied after).
	Repair func(have, want T) T
	// Replace, when set, says that have differs from want in a field the
	// host does not let change (a RoleBinding's roleRef, a network's
	// spec): it is deleted, and want made once it is gone.
	Replace func(have, want T) bool
	// Written, when set, holds what the syncer wrote that the informer
	// does not show yet; Ensure reads it before the informer.
	Written *Written
	// Held, when set, says that the informer holds only part of each
	// object (a host.HeldRoleBinding): it makes a T of what is held,
	// enough for Matches, Replace and the marks, and the fields it does
	// not hold are empty. Ensure then reads the host's whole object
	// before it repairs one, so that what the informer does not hold is
	// written back as the host has it.
	Held func(obj interface{}) (T, error)
}

// fromCache returns the T of an object of the informer, or of Written.
func (k HostKind[T]) fromCache(obj interface{}) (T, error) {
	if k.Held != nil {
		return k.Held(obj)
	}
	t, ok := obj.(T)
	if !ok {
		var none T
		return none, fmt.Errorf("%s: unexpected %T in the informer", k.Kind, obj)
	}
	return t, nil
}

// Ensured is what Ensure found: the object is ours and matches (Synced,
// Obj), or why not (Reason and Message, for a condition).
type Ensured[T HostObject] struct {
	Synced          bool
	Reason, Message string
	Obj             T
}

func ref(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// Ensure makes the host object want (carrying marks) exist and match. A
// host object of that name that the syncer made for a former tenant object
// of the same name (same tenant, kind label and name, another owner UID) is
// deleted, and want made once it is gone; any other object of that name is
// someone else's and left alone (ReasonHostNameTaken).
func (k HostKind[T]) Ensure(ctx context.Context, want T, marks hostnames.Marks) (Ensured[T], error) {
	var none Ensured[T]
	key := ref(want.GetNamespace(), want.GetName())
	var have T
	obj, exists, err := k.Informer.GetStore().GetByKey(key)
	if err != nil {
		return none, err
	}
	var cached metav1.Object
	if exists {
		if have, err = k.fromCache(obj); err != nil {
			return none, err
		}
		cached = obj.(metav1.Object)
	}
	if w, ok := k.Written.newer(key, cached); ok {
		if have, err = k.fromCache(w); err != nil {
			return none, err
		}
		exists = true
	}
	if !exists {
		created, err := k.Create(ctx, want)
		if !apierrors.IsAlreadyExists(err) {
			k.countWriteError(err)
		}
		switch {
		case err == nil:
			klog.FromContext(ctx).V(2).Info("Created host object", "kind", k.Kind, "object", key)
			k.Written.put(created)
			return Ensured[T]{Synced: true, Obj: created}, nil
		case !apierrors.IsAlreadyExists(err):
			return none, err
		}
		// Someone else's (it carries no tenant label, so the informer
		// does not have it), or ours not cached yet.
		if have, err = k.Get(ctx, want.GetNamespace(), want.GetName()); err != nil {
			return none, err
		}
	}
	if !hostnames.OwnedBy(have, marks.OwnerUID) {
		found, ours := hostnames.MarksOf(have, marks.KindLabel)
		if !ours || found.Tenant != marks.Tenant || found.TenantUID != marks.TenantUID || found.Name != marks.Name {
			return Ensured[T]{Reason: ReasonHostNameTaken, Message: fmt.Sprintf(
				"%s %s exists and was not made for this object; it is left untouched: the provider must remove or rename it", k.Kind, key)}, nil
		}
		if have.GetDeletionTimestamp() == nil {
			if err := k.remove(ctx, have); err != nil {
				return none, err
			}
			klog.FromContext(ctx).Info("Deleted host object of a former object of the same name", "kind", k.Kind, "object", key, "ownerUID", found.OwnerUID)
		}
		return Ensured[T]{Reason: ReasonWaiting, Message: fmt.Sprintf(
			"%s %s of a former object of the same name is being deleted; this one's is made once it is gone", k.Kind, key)}, nil
	}
	if have.GetDeletionTimestamp() != nil {
		return Ensured[T]{Reason: ReasonWaiting, Message: fmt.Sprintf("%s %s is being deleted; it is made again once it is gone", k.Kind, key)}, nil
	}
	if k.Replace != nil && k.Replace(have, want) {
		if err := k.remove(ctx, have); err != nil {
			return none, err
		}
		klog.FromContext(ctx).Info("Replacing host object changed where it cannot be repaired", "kind", k.Kind, "object", key)
		return Ensured[T]{Reason: ReasonWaiting, Message: fmt.Sprintf(
			"%s %s was changed on the host where it cannot be repaired and is being replaced", k.Kind, key)}, nil
	}
	if !k.Matches(have, want) || !marks.On(have) {
		updated, wrote, err := k.repair(ctx, have, want, marks)
		if err != nil {
			return none, err
		}
		k.Written.put(updated) // written, or the host's latest read for the retry: newer than the informer's
		if wrote {
			klog.FromContext(ctx).Info("Repaired host object", "kind", k.Kind, "object", key)
		}
		have = updated
	}
	return Ensured[T]{Synced: true, Obj: have}, nil
}

// repair updates have to match want, and says whether it wrote. An
// update answered 409 was made on a version someone else has since
// changed (a host controller writing its status right after the create,
// before the informer showed either): the object is read again and
// repaired on the host's latest, once, if it is still ours to repair that
// way; when the latest already matches, nothing is written. A kind whose
// informer holds part of each object (Held) is read from the host first.
func (k HostKind[T]) repair(ctx context.Context, have, want T, marks hostnames.Marks) (T, bool, error) {
	base := have
	if k.Held != nil {
		latest, stop, err := k.latest(ctx, have, want, marks)
		if err != nil {
			return latest, false, err
		}
		if stop {
			return latest, false, Requeue(time.Second, "%s %s changed on the host before it was repaired; it is looked at again",
				k.Kind, ref(want.GetNamespace(), want.GetName()))
		}
		if k.Matches(latest, want) && marks.On(latest) {
			return latest, false, nil // the host's object matches: the informer is behind
		}
		base = latest
	}
	repaired := k.Repair(base, want)
	marks.Apply(repaired)
	updated, err := k.Update(ctx, repaired)
	if !apierrors.IsConflict(err) {
		k.countWriteError(err)
		return updated, err == nil, err
	}
	latest, stop, gerr := k.latest(ctx, have, want, marks)
	if stop || gerr != nil {
		k.countWriteError(err)
		return updated, false, err // gone, replaced, going or no longer ours: the next reconcile sees which
	}
	if k.Matches(latest, want) && marks.On(latest) {
		return latest, false, nil // someone else's change made it match
	}
	repaired = k.Repair(latest, want)
	marks.Apply(repaired)
	updated, err = k.Update(ctx, repaired)
	k.countWriteError(err)
	return updated, err == nil, err
}

// latest reads have's object from the host, and says to stop when it is
// gone, replaced, going, no longer ours or changed where it cannot be
// repaired: the next reconcile sees which.
func (k HostKind[T]) latest(ctx context.Context, have, want T, marks hostnames.Marks) (T, bool, error) {
	latest, err := k.Get(ctx, want.GetNamespace(), want.GetName())
	if apierrors.IsNotFound(err) {
		return latest, true, nil
	}
	if err != nil {
		return latest, true, err
	}
	stop := latest.GetUID() != have.GetUID() || !hostnames.OwnedBy(latest, marks.OwnerUID) ||
		latest.GetDeletionTimestamp() != nil || (k.Replace != nil && k.Replace(latest, want))
	return latest, stop, nil
}

// Remove deletes the host object namespace/name if it carries owner's
// marks (owned by owner, or, with owner "", made for a tenant object named
// as marks says) and is not already going.
func (k HostKind[T]) Remove(ctx context.Context, namespace, name string, marks hostnames.Marks) (bool, error) {
	obj, exists, err := k.Informer.GetStore().GetByKey(ref(namespace, name))
	if err != nil || !exists {
		return false, err
	}
	have, err := k.fromCache(obj)
	if err != nil {
		return false, err
	}
	if have.GetDeletionTimestamp() != nil {
		return false, nil
	}
	if marks.OwnerUID != "" && !hostnames.OwnedBy(have, marks.OwnerUID) {
		return false, nil
	}
	found, ours := hostnames.MarksOf(have, marks.KindLabel)
	if !ours || found.Tenant != marks.Tenant || found.TenantUID != marks.TenantUID || found.Name != marks.Name {
		return false, nil
	}
	return true, k.remove(ctx, have)
}

func (k HostKind[T]) remove(ctx context.Context, have T) error {
	uid := have.GetUID()
	k.Written.forget(ref(have.GetNamespace(), have.GetName()))
	err := k.Delete(ctx, have.GetNamespace(), have.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or replaced by another object: not ours to delete
	}
	var steps *RequeueError
	if errors.As(err, &steps) {
		return err // removed in steps (hostkinds.Catalogue.HostNamespaces): no write failed
	}
	k.countWriteError(err)
	return err
}

// countWriteError counts a failed write of an object of the kind in
// tenant_syncer_host_write_errors_total, under the host's name of the kind.
func (k HostKind[T]) countWriteError(err error) {
	kind := k.Kind
	if k.MetricKind != "" {
		kind = k.MetricKind
	}
	CountHostWriteError(kind, err)
}

// Cached returns the host object namespace/name from the informer.
func (k HostKind[T]) Cached(namespace, name string) (T, bool) {
	var none T
	obj, exists, err := k.Informer.GetStore().GetByKey(ref(namespace, name))
	if err != nil || !exists {
		return none, false
	}
	have, err := k.fromCache(obj)
	return have, err == nil
}
