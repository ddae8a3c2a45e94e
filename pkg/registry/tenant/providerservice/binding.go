package providerservice

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// Binding binds an offer to the tenants it names as they are when they are
// named: each tenant that enters spec.tenants must exist and not be being
// deleted (422 on its entry otherwise), and its UID is recorded in
// status.offers. A tenant that stays in spec.tenants keeps its binding,
// also when it has been deleted since: a tenant created again under that
// name is offered the service only once the provider removes the name and
// names it again.
type Binding struct {
	// Storages are the server's: Binding reads Tenants.
	Storages *kindstore.Storages
}

// Create is the hook of creates.
func (b *Binding) Create(ctx context.Context, w *kindstore.Write[*tenant.ProviderService]) (genericregistry.FinishFunc, error) {
	return b.bind(ctx, w, nil)
}

// Update is the hook of updates.
func (b *Binding) Update(ctx context.Context, w *kindstore.Write[*tenant.ProviderService]) (genericregistry.FinishFunc, error) {
	return b.bind(ctx, w, w.Old.Status.Offers)
}

// bind records in p's status.offers the binding of every tenant p names:
// the one in kept, or the tenant's current UID.
func (b *Binding) bind(ctx context.Context, w *kindstore.Write[*tenant.ProviderService], kept []tenant.ProviderServiceOffer) (genericregistry.FinishFunc, error) {
	p := w.Obj
	bound := make(map[string]tenant.ProviderServiceOffer, len(kept))
	for _, o := range kept {
		bound[o.Tenant] = o
	}
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	offers := make([]tenant.ProviderServiceOffer, 0, len(p.Spec.Tenants))
	var errs field.ErrorList
	for i, name := range p.Spec.Tenants {
		if o, ok := bound[name]; ok {
			offers = append(offers, o)
			continue
		}
		path := field.NewPath("spec", "tenants").Index(i)
		obj, err := b.Storages.Tenants.Store.Get(ctx, name, &metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			errs = append(errs, field.NotFound(path, name))
			continue
		case err != nil:
			errs = append(errs, field.InternalError(path, fmt.Errorf("reading tenant %s: %w", name, err)))
			continue
		}
		t := obj.(*tenant.Tenant)
		if t.DeletionTimestamp != nil {
			errs = append(errs, field.Invalid(path, name, "the tenant is being deleted"))
			continue
		}
		offers = append(offers, tenant.ProviderServiceOffer{Tenant: name, UID: t.UID})
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(tenant.Kind("ProviderService"), p.Name, errs)
	}
	p.Status.Offers = offers
	if err := w.AssignStatus(); err != nil {
		return nil, err
	}
	return func(context.Context, bool) {}, nil
}
