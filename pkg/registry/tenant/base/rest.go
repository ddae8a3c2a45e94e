package base

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// GuardedREST serves a store through a Guard: every verb is bound to what
// the caller may see and write.
type GuardedREST struct {
	*genericregistry.Store
	Guard   Guard
	Watches *WatchRegistry
	Names
	// Quota, when set, charges creates to the tenant's quota of QuotaResource.
	Quota         QuotaTracker
	QuotaResource string
}

var (
	_ rest.StandardStorage     = &GuardedREST{}
	_ rest.TableConvertor      = &GuardedREST{}
	_ rest.ResetFieldsStrategy = &GuardedREST{}
	_ rest.ShortNamesProvider  = &GuardedREST{}
	_ rest.CategoriesProvider  = &GuardedREST{}
)

func objectName(obj runtime.Object) string {
	if o, err := meta.Accessor(obj); err == nil {
		return o.GetName()
	}
	return ""
}

// Create implements rest.Creater.
func (r *GuardedREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	ctx, err := r.Guard.Write(ctx, objectName(obj))
	if err != nil {
		return nil, err
	}
	if r.Quota == nil {
		return r.Store.Create(ctx, obj, createValidation, options)
	}
	// The quota is charged like admission, after the object validated, and
	// given back if storing it fails. (A create with generateName may
	// validate several times; it is charged once.)
	t, _ := tenancy.TenantFrom(ctx)
	dryRun := options != nil && len(options.DryRun) > 0
	charged := false
	charge := func(ctx context.Context, obj runtime.Object) error {
		if createValidation != nil {
			if err := createValidation(ctx, obj); err != nil {
				return err
			}
		}
		if charged {
			return nil
		}
		if err := r.Quota.Reserve(ctx, t, r.QuotaResource, dryRun); err != nil {
			return err
		}
		charged = !dryRun
		return nil
	}
	out, err := r.Store.Create(ctx, obj, charge, options)
	if err != nil && charged {
		r.Quota.Release(context.WithoutCancel(ctx), t, r.QuotaResource)
	}
	return out, err
}

// Get implements rest.Getter.
func (r *GuardedREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return guardedGet(ctx, r.Store, r.Guard, name, options)
}

func guardedGet(ctx context.Context, store *genericregistry.Store, guard Guard, name string, options *metav1.GetOptions) (runtime.Object, error) {
	ctx, err := guard.Read(ctx, name)
	if err != nil {
		return nil, err
	}
	obj, err := store.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	if visible := guard.Visible(ctx); visible != nil && !visible(obj) {
		return nil, apierrors.NewNotFound(store.DefaultQualifiedResource, name)
	}
	return obj, nil
}

// List implements rest.Lister.
func (r *GuardedREST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	ctx, err := r.Guard.Read(ctx, "")
	if err != nil {
		return nil, err
	}
	list, err := r.Store.List(ctx, options)
	if err != nil {
		return nil, err
	}
	if visible := r.Guard.Visible(ctx); visible != nil {
		if err := filterList(list, visible); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// Watch implements rest.Watcher. The watch ends when the caller's tenant
// membership changes.
func (r *GuardedREST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	ctx, err := r.Guard.Read(ctx, "")
	if err != nil {
		return nil, err
	}
	w, err := r.Store.Watch(ctx, options)
	if err != nil {
		return nil, err
	}
	if visible := r.Guard.Visible(ctx); visible != nil {
		w = watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
			if ev.Type == watch.Bookmark || ev.Type == watch.Error {
				return ev, true
			}
			return ev, visible(ev.Object)
		})
	}
	if r.Watches != nil {
		return r.Watches.Track(ctx, w)
	}
	return w, nil
}

// Update implements rest.Updater.
func (r *GuardedREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	ctx, err := r.Guard.Write(ctx, name)
	if err != nil {
		return nil, false, err
	}
	return r.Store.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}

// Delete implements rest.GracefulDeleter.
func (r *GuardedREST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	ctx, err := r.Guard.Write(ctx, name)
	if err != nil {
		return nil, false, err
	}
	return r.Store.Delete(ctx, name, deleteValidation, options)
}

// DeleteCollection implements rest.CollectionDeleter.
func (r *GuardedREST) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions, listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	ctx, err := r.Guard.Write(ctx, "")
	if err != nil {
		return nil, err
	}
	return r.Store.DeleteCollection(ctx, deleteValidation, options, listOptions)
}

// StatusREST serves the status subresource of a kind through the kind's Guard.
type StatusREST struct {
	store *genericregistry.Store
	guard Guard
}

// NewStatusREST returns the status subresource of store: a copy of it that
// writes with statusStrategy.
func NewStatusREST(store *genericregistry.Store, statusStrategy interface {
	rest.RESTUpdateStrategy
	rest.ResetFieldsStrategy
}, guard Guard) *StatusREST {
	s := *store
	s.CreateStrategy = nil
	s.DeleteStrategy = nil
	s.BeginCreate = nil
	s.AfterDelete = nil
	s.UpdateStrategy = statusStrategy
	s.ResetFieldsStrategy = statusStrategy
	return &StatusREST{store: &s, guard: guard}
}

var (
	_ rest.Patcher             = &StatusREST{}
	_ rest.Storage             = &StatusREST{}
	_ rest.ResetFieldsStrategy = &StatusREST{}
	_ rest.TableConvertor      = &StatusREST{}
)

// New implements rest.Storage.
func (r *StatusREST) New() runtime.Object { return r.store.New() }

// Destroy implements rest.Storage. The main resource owns the shared storage.
func (r *StatusREST) Destroy() {}

// Get implements rest.Getter.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return guardedGet(ctx, r.store, r.guard, name, options)
}

// Update implements rest.Updater. Status is never created through the subresource.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	ctx, err := r.guard.Write(ctx, name)
	if err != nil {
		return nil, false, err
	}
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable implements rest.TableConvertor.
func (r *StatusREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}
