package base

import (
	"fmt"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Resource is everything the generic storage needs to serve one kind.
type Resource[T Object, S any, St any] struct {
	Kind Kind[T, S, St]
	// Plural and Singular are the resource names, e.g. "networks", "network".
	Plural, Singular string
	// ShortNames are the kubectl short names of the resource.
	ShortNames   []string
	New, NewList func() runtime.Object
	// Fields are the kind's field selectors besides metadata.name and
	// metadata.namespace; keep them in step with the field label conversion
	// funcs of the versioned package.
	Fields func(T) fields.Set
	Table  Table[T]
}

// Storage is the REST storage of one kind: the resource and its status.
type Storage struct {
	// Main is a *REST, or a *TenantScopedREST for kinds owned by tenants.
	Main   rest.StandardStorage
	Status *StatusREST
}

// NewStorage builds the etcd-backed storage of r. Tenant-owned kinds are
// partitioned by tenant and served through TenantScopedREST with resolver.
func NewStorage[T Object, S any, St any](scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, r Resource[T, S, St], resolver tenancy.Resolver) (*Storage, error) {
	strategy := NewStrategy(scheme, r.Kind)
	statusStrategy := NewStatusStrategy(scheme, r.Kind)
	gr := tenant.Resource(r.Plural)

	store := &genericregistry.Store{
		NewFunc:                   r.New,
		NewListFunc:               r.NewList,
		PredicateFunc:             matcher(r),
		DefaultQualifiedResource:  gr,
		SingularQualifiedResource: tenant.Resource(r.Singular),

		CreateStrategy:      strategy,
		UpdateStrategy:      strategy,
		DeleteStrategy:      strategy,
		ResetFieldsStrategy: strategy,

		TableConvertor: r.Table,
	}
	options := &generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: attrs(r)}
	if r.Kind.TenantOwned {
		tenancy.Partition(store, options, r.Kind.Namespaced)
	}
	if err := store.CompleteWithOptions(options); err != nil {
		return nil, fmt.Errorf("building storage of %s: %w", gr, err)
	}

	names := Names{ShortNamesList: r.ShortNames}
	if !r.Kind.TenantOwned {
		return &Storage{Main: &REST{Store: store, Names: names}, Status: NewStatusREST(store, statusStrategy, nil)}, nil
	}
	scoper := &Scoper{Resolver: resolver, Resource: gr}
	return &Storage{
		Main:   &TenantScopedREST{Store: store, Scoper: *scoper, Names: names},
		Status: NewStatusREST(store, statusStrategy, scoper),
	}, nil
}

func attrs[T Object, S any, St any](r Resource[T, S, St]) storage.AttrFunc {
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		o, ok := obj.(T)
		if !ok {
			return nil, nil, fmt.Errorf("given object is a %T, not a %s", obj, r.Singular)
		}
		fs := fields.Set{"metadata.name": o.GetName()}
		if r.Kind.Namespaced {
			fs["metadata.namespace"] = o.GetNamespace()
		}
		if r.Fields != nil {
			for k, v := range r.Fields(o) {
				fs[k] = v
			}
		}
		return labels.Set(o.GetLabels()), fs, nil
	}
}

func matcher[T Object, S any, St any](r Resource[T, S, St]) func(labels.Selector, fields.Selector) storage.SelectionPredicate {
	getAttrs := attrs(r)
	return func(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
		return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: getAttrs}
	}
}

// Category is the kubectl category of every tenant.io resource:
// "kubectl get tenantio" lists them all.
const Category = "tenantio"

// Names gives a REST storage its kubectl short names and category.
type Names struct {
	ShortNamesList []string
}

// ShortNames implements rest.ShortNamesProvider.
func (n Names) ShortNames() []string { return n.ShortNamesList }

// Categories implements rest.CategoriesProvider.
func (n Names) Categories() []string { return []string{Category} }

// REST serves a kind that is not partitioned by tenant: provider resources.
type REST struct {
	*genericregistry.Store
	Names
}

var (
	_ rest.StandardStorage    = &REST{}
	_ rest.ShortNamesProvider = &REST{}
	_ rest.CategoriesProvider = &REST{}
	_ rest.ShortNamesProvider = &TenantScopedREST{}
	_ rest.CategoriesProvider = &TenantScopedREST{}
)
