package base

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Scoper binds a request to the tenant of its caller.
type Scoper struct {
	Resolver tenancy.Resolver
	Resource schema.GroupResource
}

// Scope returns ctx bound to the caller's tenant. A caller of no tenant
// reads an empty view and may not write; a caller of several tenants may do
// neither, because the server cannot tell which one it means.
func (s Scoper) Scope(ctx context.Context, name string, write bool) (context.Context, error) {
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewInternalError(errors.New("no user in request context"))
	}
	t, err := tenancy.TenantOf(s.Resolver, u)
	if err != nil {
		return nil, apierrors.NewForbidden(s.Resource, name, err)
	}
	if t == "" && write {
		return nil, apierrors.NewForbidden(s.Resource, name,
			fmt.Errorf("user %q is not a member of any tenant", u.GetName()))
	}
	return tenancy.WithTenant(ctx, t), nil
}

// TenantScopedREST serves a store partitioned with tenancy.Partition: every
// verb runs in the key range of the caller's tenant, so another tenant's
// object is not found, whatever the verb.
type TenantScopedREST struct {
	*genericregistry.Store
	Scoper Scoper
	Names
}

var (
	_ rest.StandardStorage      = &TenantScopedREST{}
	_ rest.TableConvertor       = &TenantScopedREST{}
	_ rest.ResetFieldsStrategy  = &TenantScopedREST{}
	_ rest.SingularNameProvider = &TenantScopedREST{}
)

// Create implements rest.Creater.
func (r *TenantScopedREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	name := ""
	if o, ok := obj.(metav1.Object); ok {
		name = o.GetName()
	}
	ctx, err := r.Scoper.Scope(ctx, name, true)
	if err != nil {
		return nil, err
	}
	return r.Store.Create(ctx, obj, createValidation, options)
}

// Get implements rest.Getter.
func (r *TenantScopedREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	ctx, err := r.Scoper.Scope(ctx, name, false)
	if err != nil {
		return nil, err
	}
	return r.Store.Get(ctx, name, options)
}

// List implements rest.Lister.
func (r *TenantScopedREST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	ctx, err := r.Scoper.Scope(ctx, "", false)
	if err != nil {
		return nil, err
	}
	return r.Store.List(ctx, options)
}

// Watch implements rest.Watcher.
func (r *TenantScopedREST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	ctx, err := r.Scoper.Scope(ctx, "", false)
	if err != nil {
		return nil, err
	}
	return r.Store.Watch(ctx, options)
}

// Update implements rest.Updater.
func (r *TenantScopedREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	ctx, err := r.Scoper.Scope(ctx, name, true)
	if err != nil {
		return nil, false, err
	}
	return r.Store.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}

// Delete implements rest.GracefulDeleter.
func (r *TenantScopedREST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	ctx, err := r.Scoper.Scope(ctx, name, true)
	if err != nil {
		return nil, false, err
	}
	return r.Store.Delete(ctx, name, deleteValidation, options)
}

// DeleteCollection implements rest.CollectionDeleter.
func (r *TenantScopedREST) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions, listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	ctx, err := r.Scoper.Scope(ctx, "", true)
	if err != nil {
		return nil, err
	}
	return r.Store.DeleteCollection(ctx, deleteValidation, options, listOptions)
}

// StatusREST serves the status subresource of a kind. With a Scoper it runs
// in the caller's tenant, like TenantScopedREST.
type StatusREST struct {
	store  *genericregistry.Store
	scoper *Scoper
}

// NewStatusREST returns the status subresource of store: a copy of it that
// writes with statusStrategy. scoper is nil for kinds not partitioned by tenant.
func NewStatusREST(store *genericregistry.Store, statusStrategy interface {
	rest.RESTUpdateStrategy
	rest.ResetFieldsStrategy
}, scoper *Scoper) *StatusREST {
	s := *store
	s.CreateStrategy = nil
	s.DeleteStrategy = nil
	s.UpdateStrategy = statusStrategy
	s.ResetFieldsStrategy = statusStrategy
	return &StatusREST{store: &s, scoper: scoper}
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

func (r *StatusREST) scope(ctx context.Context, name string, write bool) (context.Context, error) {
	if r.scoper == nil {
		return ctx, nil
	}
	return r.scoper.Scope(ctx, name, write)
}

// Get implements rest.Getter.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	ctx, err := r.scope(ctx, name, false)
	if err != nil {
		return nil, err
	}
	return r.store.Get(ctx, name, options)
}

// Update implements rest.Updater. Status is never created through the subresource.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	ctx, err := r.scope(ctx, name, true)
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
