package tenancy

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

// Guard decides, for one resource, which caller may read and write what.
// Every verb of GuardedREST and StatusREST goes through it.
type Guard interface {
	// Read binds ctx to what the caller may see; name is "" for collections.
	Read(ctx context.Context, name string) (context.Context, error)
	// Write binds ctx for a create or update of name, or refuses it.
	Write(ctx context.Context, name string) (context.Context, error)
	// Remove binds ctx for a delete of name ("" for collections), or
	// refuses it.
	Remove(ctx context.Context, name string) (context.Context, error)
	// Select returns the list options of every list and watch in a Read
	// ctx: the store query of what the caller may see, paging kept.
	Select(ctx context.Context, options *metainternalversion.ListOptions) *metainternalversion.ListOptions
	// Visible says whether an object read in a Read ctx may be shown. When
	// it returns nil, everything read in that ctx is visible.
	Visible(ctx context.Context) func(runtime.Object) bool
	// Narrow returns the list options to read with in a Read ctx whose
	// Visible is not nil: paging is left out (a page, its continue token and
	// remaining count would reveal what the caller may not see), and the
	// store query narrowed where the guard can.
	Narrow(ctx context.Context, options *metainternalversion.ListOptions) *metainternalversion.ListOptions
	// Redact returns, for a Read ctx, what the caller is shown of a
	// visible object: a copy with what it may not read left out. nil:
	// the object as stored.
	Redact(ctx context.Context) func(runtime.Object) runtime.Object
}

func callerOf(ctx context.Context) (user.Info, error) {
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewInternalError(errors.New("no user in request context"))
	}
	return u, nil
}

// TenantGuard guards kinds partitioned by tenant: every verb runs in the key
// range of the caller's tenant, so another tenant's object is not found,
// whatever the verb. A caller of no tenant reads an empty view and may not
// write; a caller of several tenants may do neither.
type TenantGuard struct {
	Resolver Resolver
	Resource schema.GroupResource
	// Namespaces, for namespaced kinds, reads the caller's tenant Namespaces:
	// a request in a virtual namespace the tenant does not have is answered
	// 404 for that namespace.
	Namespaces NamespaceGetter
}

// NamespaceGetter reads tenant Namespaces in the tenant of ctx.
type NamespaceGetter interface {
	Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error)
}

var _ Guard = &TenantGuard{}

func (g *TenantGuard) scope(ctx context.Context, name string, write bool) (context.Context, error) {
	return g.scopeFor(ctx, name, write, false)
}

// scopeFor binds ctx to the caller's tenant. A caller of no tenant may read
// and delete in its (empty) view, and is refused writes; emptyView skips
// the virtual namespace check for it.
func (g *TenantGuard) scopeFor(ctx context.Context, name string, write, emptyView bool) (context.Context, error) {
	u, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	t, uid, err := CallerTenant(ctx, g.Resolver, u)
	if err != nil {
		return nil, apierrors.NewForbidden(g.Resource, name, err)
	}
	if t == "" && write {
		return nil, apierrors.NewForbidden(g.Resource, name,
			fmt.Errorf("user %q is not a member of any tenant", u.GetName()))
	}
	ctx = WithTenantUID(WithTenant(ctx, t), uid)
	if g.Namespaces != nil && (!emptyView || t != "") {
		if ns, ok := genericapirequest.NamespaceFrom(ctx); ok && ns != "" {
			if err := g.namespaceExists(ctx, ns); err != nil {
				return nil, err
			}
		}
	}
	return ctx, nil
}

// namespaceExists reads the tenant Namespace from the watch cache, and from
// etcd when the cache does not have it yet (it may have just been created).
func (g *TenantGuard) namespaceExists(ctx context.Context, ns string) error {
	_, err := g.Namespaces.Get(ctx, ns, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		_, err = g.Namespaces.Get(ctx, ns, &metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(tenant.Resource("namespaces"), ns)
	}
	return err
}

// Read implements Guard.
func (g *TenantGuard) Read(ctx context.Context, name string) (context.Context, error) {
	return g.scope(ctx, name, false)
}

// Write implements Guard.
func (g *TenantGuard) Write(ctx context.Context, name string) (context.Context, error) {
	return g.scope(ctx, name, true)
}

// Remove implements Guard. A caller of no tenant deletes in its empty view:
// a named object is not found, a collection is empty. That is what the
// host's namespace controller, which deletes every namespaced kind of a
// terminating host namespace, must see of ours to let the namespace go.
func (g *TenantGuard) Remove(ctx context.Context, name string) (context.Context, error) {
	return g.scopeFor(ctx, name, false, true)
}

// Select implements Guard: only objects labelled with the UID of the
// caller's tenant. The key range is the tenant's by name; the label keeps
// out a former tenant of the same name, whose objects a watch or list from
// an old resourceVersion would otherwise replay.
func (g *TenantGuard) Select(ctx context.Context, options *metainternalversion.ListOptions) *metainternalversion.ListOptions {
	uid := TenantUIDFrom(ctx)
	if uid == "" {
		return options
	}
	req, err := labels.NewRequirement(TenantUIDLabel, selection.Equals, []string{string(uid)})
	if err != nil {
		return options // a UID is always a valid label value
	}
	selected := &metainternalversion.ListOptions{}
	if options != nil {
		selected = options.DeepCopy()
	}
	if selected.LabelSelector == nil {
		selected.LabelSelector = labels.Everything()
	}
	selected.LabelSelector = selected.LabelSelector.Add(*req)
	return selected
}

// Visible implements Guard: the key range already holds only the tenant's objects.
func (g *TenantGuard) Visible(context.Context) func(runtime.Object) bool { return nil }

// Narrow implements Guard; it is never called, since Visible is nil.
func (g *TenantGuard) Narrow(_ context.Context, options *metainternalversion.ListOptions) *metainternalversion.ListOptions {
	return options
}

// Redact implements Guard: a tenant's objects are all its own.
func (g *TenantGuard) Redact(context.Context) func(runtime.Object) runtime.Object { return nil }

// ProviderGuard guards provider kinds. Provider admins, the callers allowed
// to write Tenants, see and write everything (host RBAC decides the rest).
// Tenant members may not write provider kinds, and see only what
// VisibleToTenant lets them: their own Tenant, the ProviderServices offered
// to them. Other callers see nothing.
type ProviderGuard struct {
	Resolver   Resolver
	Authorizer authorizer.Authorizer
	Resource   schema.GroupResource
	// VisibleToTenant says whether tenant t, of UID uid, may read obj;
	// nil: nothing.
	VisibleToTenant func(t string, uid types.UID, obj runtime.Object) bool
	// RedactForTenant, if set, returns what tenant t is shown of obj, an
	// object VisibleToTenant lets it read: a copy without what concerns
	// other tenants.
	RedactForTenant func(t string, obj runtime.Object) runtime.Object
	// NamedByTenant says that the one object a tenant may read is the one
	// named like the tenant (Tenants): its reads are narrowed to that name.
	NamedByTenant bool
}

var _ Guard = &ProviderGuard{}

type viewerKey struct{}

type viewer struct {
	admin  bool
	tenant string
	uid    types.UID
}

// Read implements Guard.
func (g *ProviderGuard) Read(ctx context.Context, name string) (context.Context, error) {
	u, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	t, uid, err := CallerTenant(ctx, g.Resolver, u)
	if err != nil {
		return nil, apierrors.NewForbidden(g.Resource, name, err)
	}
	v := viewer{tenant: t, uid: uid}
	if t == "" {
		v.admin, err = g.isProviderAdmin(ctx, u)
		if err != nil {
			return nil, err
		}
	}
	return context.WithValue(WithTenant(ctx, t), viewerKey{}, v), nil
}

// Write implements Guard.
func (g *ProviderGuard) Write(ctx context.Context, name string) (context.Context, error) {
	u, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	t, _, err := CallerTenant(ctx, g.Resolver, u)
	if err != nil {
		return nil, apierrors.NewForbidden(g.Resource, name, err)
	}
	if t != "" {
		return nil, apierrors.NewForbidden(g.Resource, name,
			fmt.Errorf("%s are managed by the provider; user %q acts as tenant %q", g.Resource.Resource, u.GetName(), t))
	}
	return ctx, nil
}

// Remove implements Guard: deletes are writes of provider kinds.
func (g *ProviderGuard) Remove(ctx context.Context, name string) (context.Context, error) {
	return g.Write(ctx, name)
}

// Select implements Guard: provider kinds are not partitioned.
func (g *ProviderGuard) Select(_ context.Context, options *metainternalversion.ListOptions) *metainternalversion.ListOptions {
	return options
}

// Visible implements Guard.
func (g *ProviderGuard) Visible(ctx context.Context) func(runtime.Object) bool {
	v, _ := ctx.Value(viewerKey{}).(viewer)
	switch {
	case v.admin:
		return nil
	case v.tenant == "" || g.VisibleToTenant == nil:
		return func(runtime.Object) bool { return false }
	default:
		return func(obj runtime.Object) bool { return g.VisibleToTenant(v.tenant, v.uid, unwrap(obj)) }
	}
}

// Redact implements Guard.
func (g *ProviderGuard) Redact(ctx context.Context) func(runtime.Object) runtime.Object {
	v, _ := ctx.Value(viewerKey{}).(viewer)
	if v.admin || v.tenant == "" || g.RedactForTenant == nil {
		return nil
	}
	return func(obj runtime.Object) runtime.Object { return g.RedactForTenant(v.tenant, unwrap(obj)) }
}

// Narrow implements Guard.
func (g *ProviderGuard) Narrow(ctx context.Context, options *metainternalversion.ListOptions) *metainternalversion.ListOptions {
	v, _ := ctx.Value(viewerKey{}).(viewer)
	narrowed := &metainternalversion.ListOptions{}
	if options != nil {
		narrowed = options.DeepCopy()
	}
	narrowed.Limit, narrowed.Continue = 0, ""
	if g.NamedByTenant && v.tenant != "" {
		byName := fields.OneTermEqualSelector("metadata.name", v.tenant)
		if narrowed.FieldSelector == nil || narrowed.FieldSelector.Empty() {
			narrowed.FieldSelector = byName
		} else {
			narrowed.FieldSelector = fields.AndSelectors(narrowed.FieldSelector, byName)
		}
	}
	return narrowed
}

// unwrap returns the object inside the watch cache's caching wrapper.
func unwrap(obj runtime.Object) runtime.Object {
	if c, ok := obj.(runtime.CacheableObject); ok {
		return c.GetObject()
	}
	return obj
}

// isProviderAdmin asks the host whether u may update Tenants: who may
// manage tenancies may see all provider objects.
func (g *ProviderGuard) isProviderAdmin(ctx context.Context, u user.Info) (bool, error) {
	if g.Authorizer == nil {
		return false, nil
	}
	decision, _, err := g.Authorizer.Authorize(ctx, authorizer.AttributesRecord{
		User: u, Verb: "update", APIGroup: tenant.GroupName, APIVersion: "v1alpha1",
		Resource: "tenants", ResourceRequest: true,
	})
	if err != nil && decision != authorizer.DecisionAllow {
		return false, apierrors.NewInternalError(fmt.Errorf("authorizing %q: %w", u.GetName(), err))
	}
	return decision == authorizer.DecisionAllow, nil
}
