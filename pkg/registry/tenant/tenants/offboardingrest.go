package tenants

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

// OffboardingREST serves tenants/offboarding: the OffboardingReport of a
// Tenant, what a DELETE of it would be refused for now. Whoever may read
// the Tenant may read its report: provider admins any, a tenant member
// only its own (another Tenant's is not found).
type OffboardingREST struct {
	// Tenants reads Tenants through their guard.
	Tenants rest.Getter
	// Offboarding lists the blockers.
	Offboarding *Offboarding
}

var (
	_ rest.Getter  = &OffboardingREST{}
	_ rest.Storage = &OffboardingREST{}
)

// NewOffboardingREST returns the offboarding subresource of the Tenants
// that tenants (their guarded storage) reads.
func NewOffboardingREST(tenants rest.Getter, offboarding *Offboarding) *OffboardingREST {
	return &OffboardingREST{Tenants: tenants, Offboarding: offboarding}
}

// New implements rest.Storage.
func (r *OffboardingREST) New() runtime.Object { return &tenant.OffboardingReport{} }

// Destroy implements rest.Storage. The Tenants' storage owns the store.
func (r *OffboardingREST) Destroy() {}

// Get implements rest.Getter. The Tenant is read through the guard, so a
// caller who may not see it gets the same 404 as for a missing Tenant.
func (r *OffboardingREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.Tenants.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	if c, ok := obj.(runtime.CacheableObject); ok {
		obj = c.GetObject()
	}
	t, ok := obj.(*tenant.Tenant)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("tenants storage returned a %T", obj))
	}
	return r.Offboarding.Report(ctx, t)
}
