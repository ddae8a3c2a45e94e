package namespace

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Attachment refuses a Namespace whose spec.network names no Network of
// its tenant (422 spec.network, NotFound): its host namespace is attached
// to that Network when it is created, and never after (spec.network is
// immutable). See network.Deletion for the race with a Network's delete.
type Attachment struct {
	// Storages are the server's; Attachment reads their Networks.
	Storages *kindstore.Storages
}

// Create checks that the Network the new Namespace names exists. (The
// Namespace validated before: its spec.network is a well-formed name.)
func (a *Attachment) Create(ctx context.Context, w *kindstore.Write[*tenant.Namespace]) (genericregistry.FinishFunc, error) {
	ns := w.Obj
	nothing := func(context.Context, bool) {}
	if len(utilvalidation.IsDNS1123Label(ns.Spec.Network)) > 0 || a.Storages.Networks == nil {
		return nothing, nil // a storage built without Networks checks none
	}
	if err := a.networkExists(ctx, ns.Spec.Network); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, apierrors.NewInvalid(tenant.Kind("Namespace"), ns.Name, field.ErrorList{
				field.NotFound(field.NewPath("spec", "network"), ns.Spec.Network),
			})
		}
		return nil, err
	}
	return nothing, nil
}

// networkExists reads the Network from the watch cache, and from etcd when
// the cache does not have it (it may have just been created: onboarding
// creates a tenant's Network "default" and then its Namespace "default").
// A Network of a former tenant of the same name does not count.
func (a *Attachment) networkExists(ctx context.Context, name string) error {
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	ours := func(obj runtime.Object) bool {
		n, ok := obj.(*tenant.Network)
		uid := tenancy.TenantUIDFrom(ctx)
		return ok && (uid == "" || n.Labels[tenancy.TenantUIDLabel] == string(uid))
	}
	obj, err := a.Storages.Networks.Store.Get(ctx, name, &metav1.GetOptions{ResourceVersion: "0"})
	if err == nil && ours(obj) {
		return nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	obj, err = a.Storages.Networks.Store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return err
	}
	if !ours(obj) {
		return apierrors.NewNotFound(tenant.Resource("networks"), name)
	}
	return nil
}
