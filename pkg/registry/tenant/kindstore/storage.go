package kindstore

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/intern"
	"tenant.io/tenant-apiserver/pkg/ipam"
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
	// metadata.namespace, a new map on each call; keep them in step with
	// the field label conversion funcs of the versioned package.
	Fields func(T) fields.Set
	// Rewritten says that the kind's objects are written again and again
	// without their selectable fields changing (a Tenant, on every quota
	// charge of its tenant): the versions of one object that the watch
	// cache keeps in its history then share one field set.
	Rewritten bool
	Table     Table[T]
	// QuotaResource is the Tenant quota this kind counts against, if any.
	QuotaResource string
	// VisibleToTenant, for provider kinds, says whether tenant t of UID
	// uid may read obj (its own Tenant, the ProviderServices offered to
	// it, the VRFPeerings of its Networks).
	VisibleToTenant func(t string, uid types.UID, obj runtime.Object) bool
	// RedactForTenant, for provider kinds, returns what tenant t is shown
	// of an object it may read (see tenancy.ProviderGuard).
	RedactForTenant func(t string, obj runtime.Object) runtime.Object
	// NamedByTenant, for provider kinds, says that the one object a tenant
	// may read is named like the tenant.
	NamedByTenant bool
}

// Deps are what the storage of a kind needs from the rest of the server.
type Deps struct {
	// Resolver maps callers to tenants.
	Resolver tenancy.Resolver
	// Authorizer is the server's (the host's, by delegation).
	Authorizer authorizer.Authorizer
	// Watches tracks open watches, to end them when membership changes.
	Watches *tenancy.WatchRegistry
	// Quota counts tenant-owned objects against their tenant's quota; nil: no quota.
	Quota QuotaTracker
	// HostWorkloads reads the workloads of host namespaces (pods, VMs and
	// their disks), which block the delete of their tenant Namespace and
	// Tenant; nil: they are not checked.
	HostWorkloads host.Workloads
	// IPAM is where objects claim their addresses.
	IPAM IPAM
	// DefaultObjectQuota are the object counts (Tenant.spec.quota.objects)
	// a Tenant gets when it is created without them; Tenants only.
	DefaultObjectQuota corev1.ResourceList
	// TenantDNSAddress is the address of the provider's tenant DNS server
	// (--tenant-dns-address), which Tenants of Hard isolation need; empty:
	// there is none, and such Tenants are refused. Tenants only.
	TenantDNSAddress string
	// RouteDomain is the provider's route domain (--route-domain): each
	// Tenant's status.routeDomain is <tenant>.<RouteDomain>; empty: none.
	// Tenants only.
	RouteDomain string
	// Storages is the set the new storage joins, as far as it is built:
	// the hooks of a kind read the storage of another kind from it when
	// they run, by which time every storage is built. Namespaced kinds
	// need Storages.Namespaces built before them. A kind missing from the
	// set (a test that builds some kinds alone) holds no objects to them;
	// nil: the storage is built alone.
	Storages *Storages
}

// IPAM are the keyspaces of address claims.
type IPAM struct {
	// Allocator hands out tenants' blocks and public IPs from the
	// AddressPools; nil: Tenants are stored without addresses, and no
	// other kind claims any (tests of storage alone).
	Allocator *ipam.Allocator
	// PoolSpace holds the AddressPools' claims on their space.
	PoolSpace *ipam.Allocator
	// TenantSpace holds the claims of tenant objects on their tenant's
	// block and public IPs (a Network's subnets and NAT address, a
	// FloatingIP's and a LoadBalancer's address); nil: those are stored
	// without them.
	TenantSpace *ipam.Allocator
}

// Storages is the storage of every tenant.io resource. The server builds
// them in the order of the fields: quotas are charged on Tenants, and
// namespaced kinds live in Namespaces.
type Storages struct {
	Tenants, AddressPools, ProviderServices, VRFPeerings *Storage
	Namespaces, Networks, FloatingIPs, LoadBalancers     *Storage
	HostClasses, HostClaims                              *Storage
}

// List returns the storages in the order of the fields.
func (s *Storages) List() []*Storage {
	return []*Storage{s.Tenants, s.AddressPools, s.ProviderServices, s.VRFPeerings,
		s.Namespaces, s.Networks, s.FloatingIPs, s.LoadBalancers, s.HostClasses, s.HostClaims}
}

// Stores returns the unguarded stores of sts, by resource name; nil
// storages (kinds a test leaves out) are skipped.
func Stores(sts ...*Storage) map[string]*genericregistry.Store {
	m := make(map[string]*genericregistry.Store, len(sts))
	for _, st := range sts {
		if st != nil {
			m[st.Resource] = st.Store
		}
	}
	return m
}

// QuotaTracker counts the objects of each tenant against its quota.
type QuotaTracker interface {
	// Reserve takes one unit of resource from tenant's quota, or refuses
	// with 403. A dry run only checks.
	Reserve(ctx context.Context, tenant, resource string, dryRun bool) error
	// Release gives one unit back.
	Release(ctx context.Context, tenant, resource string)
}

// Storage is the REST storage of one kind: the resource and its status.
type Storage struct {
	// Resource is the resource name, e.g. "networks".
	Resource string
	Main     *GuardedREST
	Status   *StatusREST
	// Store is the storage without guard, for the server's own use.
	Store *genericregistry.Store
	// StatusStore writes status without guard, for the server's own use.
	StatusStore *genericregistry.Store
	// Subresources are the kind's subresources besides status, by name.
	Subresources map[string]rest.Storage
	// Recorders are the kinds of address claims the objects hold, for
	// IPAM's sweepers and repairs.
	Recorders []ipam.Recorder
}

// NewStorage builds the etcd-backed storage of r. Tenant-owned kinds are
// partitioned by tenant and guarded by TenantGuard; provider kinds by ProviderGuard.
func NewStorage[T Object, S any, St any](scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, r Resource[T, S, St], deps Deps) (*Storage, error) {
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
	options := &generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: Attrs(r)}
	var guard tenancy.Guard
	if r.Kind.TenantOwned {
		tenancy.Partition(store, options, r.Kind.Namespaced)
		tg := &tenancy.TenantGuard{Resolver: deps.Resolver, Resource: gr}
		if r.Kind.Namespaced {
			if deps.Storages == nil || deps.Storages.Namespaces == nil {
				return nil, fmt.Errorf("storage of %s needs the tenant Namespaces", gr)
			}
			tg.Namespaces = deps.Storages.Namespaces.Store
		}
		guard = tg
	} else {
		guard = &tenancy.ProviderGuard{Resolver: deps.Resolver, Authorizer: deps.Authorizer, Resource: gr,
			VisibleToTenant: r.VisibleToTenant, RedactForTenant: r.RedactForTenant, NamedByTenant: r.NamedByTenant}
	}
	if err := store.CompleteWithOptions(options); err != nil {
		return nil, fmt.Errorf("building storage of %s: %w", gr, err)
	}
	status := NewStatusREST(store, statusStrategy, guard)
	main := &GuardedREST{Store: store, Guard: guard, Watches: deps.Watches, Names: Names{ShortNamesList: r.ShortNames}}
	if r.Kind.TenantOwned && deps.Quota != nil && r.QuotaResource != "" {
		main.Quota, main.QuotaResource = deps.Quota, r.QuotaResource
	}
	st := &Storage{
		Resource:    r.Plural,
		Main:        main,
		Status:      status,
		Store:       store,
		StatusStore: status.store,
	}
	st.Install(validation(store))
	if main.Quota != nil {
		st.Install(Hooks{AfterDelete: releaseOnDelete(main.Quota, r.QuotaResource)})
	}
	return st, nil
}

// releaseOnDelete gives back a unit of the tenant's quota of resource for
// every object really deleted (not merely marked for deletion).
func releaseOnDelete(quota QuotaTracker, resource string) genericregistry.AfterDeleteFunc {
	return func(obj runtime.Object, options *metav1.DeleteOptions) {
		if options != nil && len(options.DryRun) > 0 {
			return
		}
		if o, err := meta.Accessor(obj); err == nil {
			quota.Release(context.Background(), o.GetLabels()[tenancy.TenantLabel], resource)
		}
	}
}

// Attrs is the function that gives the watch cache and the predicates of
// r's kind an object's labels and selectable fields.
func Attrs[T Object, S any, St any](r Resource[T, S, St]) storage.AttrFunc {
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		o, ok := obj.(T)
		if !ok {
			return nil, nil, fmt.Errorf("given object is a %T, not a %s", obj, r.Singular)
		}
		var fs fields.Set
		if r.Fields != nil {
			fs = r.Fields(o)
		} else {
			fs = fields.Set{}
		}
		fs["metadata.name"] = o.GetName()
		if r.Kind.Namespaced {
			fs["metadata.namespace"] = o.GetNamespace()
		}
		if r.Rewritten {
			// Nothing writes a field set: the watch cache and the
			// predicates only match selectors against it.
			fs = intern.SharedAcrossVersions(fs)
		}
		return labels.Set(o.GetLabels()), fs, nil
	}
}

func matcher[T Object, S any, St any](r Resource[T, S, St]) func(labels.Selector, fields.Selector) storage.SelectionPredicate {
	getAttrs := Attrs(r)
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
