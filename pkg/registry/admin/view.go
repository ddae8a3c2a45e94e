// Package admin serves admin.tenant.io: the provider's read-only views of
// every tenant's Namespaces, Networks, FloatingIPs, LoadBalancers and
// HostClaims, read from tenant.io's own storage and watch caches. Objects are renamed
// on the way out (see pkg/apis/admin) so that no two tenants' objects share
// a key, and kubectl tables gain a TENANT column.
package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"tenant.io/tenant-apiserver/pkg/apis/admin"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Category is the kubectl category of every admin view: "kubectl get
// tenantio-admin" lists them all.
const Category = "tenantio-admin"

// View serves one tenant kind of admin.tenant.io: get, list and watch of
// every tenant's objects, nothing else.
type View struct {
	// Store is the kind's storage in tenant.io, without its guard.
	Store *genericregistry.Store
	// Resolver maps callers to tenants: a tenant member is refused the
	// views, whatever host RBAC grants it.
	Resolver tenancy.Resolver
	// Watches ends a watch when its caller becomes a tenant member.
	Watches *tenancy.WatchRegistry
	// Resource is the view's resource in admin.tenant.io.
	Resource   schema.GroupResource
	Singular   string
	Namespaced bool
}

var (
	_ rest.Getter               = &View{}
	_ rest.Lister               = &View{}
	_ rest.Watcher              = &View{}
	_ rest.Scoper               = &View{}
	_ rest.SingularNameProvider = &View{}
	_ rest.CategoriesProvider   = &View{}
)

// NewViews returns the views of the tenant kinds of storages, by resource.
func NewViews(storages *kindstore.Storages, resolver tenancy.Resolver, watches *tenancy.WatchRegistry) map[string]rest.Storage {
	out := map[string]rest.Storage{}
	for _, v := range []struct {
		st         *kindstore.Storage
		singular   string
		namespaced bool
	}{
		{storages.Namespaces, "namespace", false},
		{storages.Networks, "network", false},
		{storages.FloatingIPs, "floatingip", true},
		{storages.LoadBalancers, "loadbalancer", true},
		{storages.HostClaims, "hostclaim", true},
	} {
		out[v.st.Resource] = &View{Store: v.st.Store, Resolver: resolver, Watches: watches,
			Resource: admin.Resource(v.st.Resource), Singular: v.singular, Namespaced: v.namespaced}
	}
	return out
}

// New implements rest.Storage.
func (v *View) New() runtime.Object { return v.Store.New() }

// NewList implements rest.Lister.
func (v *View) NewList() runtime.Object { return v.Store.NewList() }

// Destroy implements rest.Storage: tenant.io's storage owns the store.
func (v *View) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (v *View) NamespaceScoped() bool { return v.Namespaced }

// GetSingularName implements rest.SingularNameProvider.
func (v *View) GetSingularName() string { return v.Singular }

// Categories implements rest.CategoriesProvider.
func (v *View) Categories() []string { return []string{Category} }

// authorize refuses tenant members: host RBAC decides who may use the
// views at all, and a member of a tenant reads its own objects through
// tenant.io, never its neighbours' here.
func (v *View) authorize(ctx context.Context, name string) error {
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return apierrors.NewInternalError(errors.New("no user in request context"))
	}
	t, _, err := tenancy.CallerTenant(ctx, v.Resolver, u)
	if err != nil {
		return apierrors.NewForbidden(v.Resource, name, err)
	}
	if t != "" {
		return apierrors.NewForbidden(v.Resource, name,
			fmt.Errorf("the admin views are the provider's: user %q acts as tenant %q, whose objects it reads in tenant.io", u.GetName(), t))
	}
	return nil
}

// Get implements rest.Getter.
func (v *View) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	if err := v.authorize(ctx, name); err != nil {
		return nil, err
	}
	notFound := apierrors.NewNotFound(v.Resource, name)
	key := name
	if v.Namespaced {
		key, _ = genericapirequest.NamespaceFrom(ctx)
	}
	t, inTenant, ok := admin.SplitName(key)
	if !ok || !isLabel(t) {
		return nil, notFound
	}
	ctx = tenancy.WithTenant(ctx, t)
	if v.Namespaced {
		if !isLabel(inTenant) {
			return nil, notFound
		}
		ctx = genericapirequest.WithNamespace(ctx, inTenant)
	} else {
		name = inTenant
	}
	obj, err := v.Store.Get(ctx, name, options)
	if apierrors.IsNotFound(err) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	return v.renamed(obj)
}

// List implements rest.Lister.
func (v *View) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	if err := v.authorize(ctx, ""); err != nil {
		return nil, err
	}
	ctx, options, err := v.scope(ctx, options)
	if err != nil {
		return nil, err
	}
	list, err := v.Store.List(ctx, options)
	if err != nil {
		return nil, err
	}
	// The items are the list's own copies (a list from the watch cache
	// copies each object's top-level struct): renaming them in place
	// touches nothing the cache holds.
	err = meta.EachListItem(list, func(obj runtime.Object) error { return v.rename(obj) })
	if err != nil {
		return nil, err
	}
	return list, nil
}

// Watch implements rest.Watcher.
func (v *View) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	if err := v.authorize(ctx, ""); err != nil {
		return nil, err
	}
	caller := tenancy.WithTenant(ctx, "")
	ctx, options, err := v.scope(ctx, options)
	if err != nil {
		return nil, err
	}
	w, err := v.Store.Watch(ctx, options)
	if err != nil {
		return nil, err
	}
	w = watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if ev.Type == watch.Bookmark || ev.Type == watch.Error {
			return ev, true
		}
		obj, err := v.renamed(ev.Object)
		if err != nil {
			return watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus}, true
		}
		ev.Object = obj
		return ev, true
	})
	if v.Watches != nil {
		w = v.Watches.Track(caller, w)
	}
	return w, nil
}

// renamed returns a copy of obj, as the store or a watch shares it, named
// as this group names it.
func (v *View) renamed(obj runtime.Object) (runtime.Object, error) {
	if c, ok := obj.(runtime.CacheableObject); ok {
		obj = c.GetObject() // a copy
	} else {
		obj = obj.DeepCopyObject()
	}
	return obj, v.rename(obj)
}

// rename names obj, an object of tenant.io's storage that no one else
// holds, as this group names it.
func (v *View) rename(obj runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	t := m.GetLabels()[tenancy.TenantLabel]
	if t == "" {
		return fmt.Errorf("%s %q has no %s label", v.Resource, m.GetName(), tenancy.TenantLabel)
	}
	if v.Namespaced {
		m.SetNamespace(admin.Name(t, m.GetNamespace()))
	} else {
		m.SetName(admin.Name(t, m.GetName()))
	}
	return nil
}

// scope returns the context and options that read, from tenant.io's
// storage, what a list or watch of the view selects. The tenant a request
// names (in its namespace, in a metadata.name or metadata.namespace field
// selector, or in an equality on the tenant.io/tenant label) narrows the
// read to that tenant's key range; several different tenants select
// nothing.
func (v *View) scope(ctx context.Context, options *metainternalversion.ListOptions) (context.Context, *metainternalversion.ListOptions, error) {
	out := &metainternalversion.ListOptions{}
	if options != nil {
		out = options.DeepCopy()
	}
	var (
		tenant, namespace string
		named, none       bool
	)
	restrict := func(key string) string {
		t, inTenant, ok := admin.SplitName(key)
		if !ok || !isLabel(t) || (named && t != tenant) {
			none = true
		}
		tenant, named = t, true
		return inTenant
	}
	if ns, _ := genericapirequest.NamespaceFrom(ctx); ns != "" {
		namespace = restrict(ns)
	}
	if out.FieldSelector != nil && !out.FieldSelector.Empty() {
		var kept []fields.Selector
		for _, r := range out.FieldSelector.Requirements() {
			renamed := r.Field == "metadata.namespace" && v.Namespaced || r.Field == "metadata.name" && !v.Namespaced
			if !renamed {
				kept = append(kept, fieldSelector(r))
				continue
			}
			if r.Operator != selection.Equals && r.Operator != selection.DoubleEquals {
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf(
					"field selector %s%s%s: the admin views select %s by equality only", r.Field, r.Operator, r.Value, r.Field))
			}
			inTenant := restrict(r.Value)
			if r.Field == "metadata.namespace" {
				if namespace != "" && namespace != inTenant {
					none = true
				}
				namespace = inTenant
			}
			kept = append(kept, fields.OneTermEqualSelector(r.Field, inTenant))
		}
		out.FieldSelector = fields.AndSelectors(kept...)
	}
	if out.LabelSelector != nil {
		if t, ok := out.LabelSelector.RequiresExactMatch(tenancy.TenantLabel); ok {
			if named && t != tenant {
				none = true
			}
			tenant, named = t, true
		}
	}
	switch {
	case none || (named && !isLabel(tenant)) || (namespace != "" && !isLabel(namespace)):
		// The empty key range of no tenant.
		return genericapirequest.WithNamespace(tenancy.WithTenant(ctx, ""), ""), out, nil
	case named:
		return genericapirequest.WithNamespace(tenancy.WithTenant(ctx, tenant), namespace), out, nil
	default:
		return tenancy.WithAllTenants(ctx), out, nil
	}
}

func fieldSelector(r fields.Requirement) fields.Selector {
	if r.Operator == selection.NotEquals {
		return fields.OneTermNotEqualSelector(r.Field, r.Value)
	}
	return fields.OneTermEqualSelector(r.Field, r.Value)
}

// isLabel says whether s can be the name of a tenant or of a tenant
// Namespace: a DNS label, which never escapes its key range.
func isLabel(s string) bool { return len(validation.IsDNS1123Label(s)) == 0 }

// ConvertToTable implements rest.TableConvertor: the kind's tenant.io
// table, with the objects' tenant after their name.
func (v *View) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table, err := v.Store.TableConvertor.ConvertToTable(ctx, object, tableOptions)
	if err != nil {
		return nil, err
	}
	if len(table.ColumnDefinitions) > 0 {
		table.ColumnDefinitions = slices.Insert(table.ColumnDefinitions, 1, metav1.TableColumnDefinition{
			Name: "Tenant", Type: "string", Description: "The tenant the object belongs to (its label tenant.io/tenant).",
		})
	}
	for i := range table.Rows {
		row := &table.Rows[i]
		t := ""
		if m, err := meta.Accessor(row.Object.Object); err == nil {
			t = m.GetLabels()[tenancy.TenantLabel]
		}
		row.Cells = slices.Insert(row.Cells, 1, interface{}(t))
	}
	return table, nil
}
