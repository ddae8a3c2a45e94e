package tenant

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/base"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Offboarding decides whether a Tenant may be deleted: only when it owns
// nothing. Objects that outlived their Tenant would otherwise be inherited
// by the next Tenant of the same name.
type Offboarding struct {
	// Tenants is the storage of Tenants.
	Tenants *genericregistry.Store
	// Owned are the storages of tenant-owned kinds, by resource name.
	Owned map[string]*genericregistry.Store
}

// Blockers lists what tenant name still owns, and returns the Tenant read.
func (o *Offboarding) Blockers(ctx context.Context, name string) (*tenant.Tenant, []metav1.StatusCause, error) {
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	obj, err := o.Tenants.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	t := obj.(*tenant.Tenant)
	causes, err := base.Attached(tenancy.WithTenant(ctx, name), o.Owned, "tenant "+name)
	if err != nil {
		return nil, nil, err
	}
	if u := t.Status.Usage; len(causes) == 0 && (u.Namespaces+u.Networks+u.FloatingIPs+u.LoadBalancers) > 0 {
		// Charged but not stored yet: a create in flight.
		causes = append(causes, metav1.StatusCause{
			Type:    base.CauseTypeAttached,
			Message: fmt.Sprintf("tenant %s has creates in flight (usage %+v)", name, u),
		})
	}
	return t, causes, nil
}

// BeforeDelete refuses with 409 the delete of a Tenant that owns anything,
// listing every blocker, and otherwise lets it happen only if the Tenant is
// unchanged since it was checked: every create charges the Tenant's quota
// first, so a create racing with the delete changes its resourceVersion.
func (o *Offboarding) BeforeDelete(ctx context.Context, name string) (*metav1.Preconditions, error) {
	t, causes, err := o.Blockers(ctx, name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	if len(causes) > 0 {
		return nil, base.DeleteConflict(tenant.Resource("tenants"), name,
			fmt.Sprintf("tenant %s still owns %d object(s) or creates in flight; delete them first", name, len(causes)), causes)
	}
	uid, rv := t.UID, t.ResourceVersion
	return &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}, nil
}
