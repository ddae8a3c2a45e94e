package addresspool

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/base"
)

// maxCauses bounds the allocations listed in a refusal.
const maxCauses = 50

// Guard keeps AddressPools consistent with each other and with what they
// handed out: pools may not overlap (422), and a pool may not be deleted,
// or shrunk, while it has allocations in the space it would lose (409,
// listing them).
type Guard struct {
	Allocator *ipam.Allocator
	// Pools is the storage of AddressPools.
	Pools *genericregistry.Store
}

func (g *Guard) others(ctx context.Context, name string) ([]tenant.AddressPool, error) {
	list, err := g.Pools.List(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), &metainternalversion.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []tenant.AddressPool
	for _, p := range list.(*tenant.AddressPoolList).Items {
		if p.Name != name {
			out = append(out, p)
		}
	}
	return out, nil
}

// checkOverlap refuses a pool whose space overlaps another pool's.
func (g *Guard) checkOverlap(ctx context.Context, p *tenant.AddressPool) error {
	if errs := validation.ValidateAddressPool(p); len(errs) > 0 {
		return apierrors.NewInvalid(tenant.Kind("AddressPool"), p.Name, errs)
	}
	pool, err := ipam.PoolFromAPI(p)
	if err != nil {
		return apierrors.NewInvalid(tenant.Kind("AddressPool"), p.Name, field.ErrorList{field.Invalid(field.NewPath("spec"), "", err.Error())})
	}
	others, err := g.others(ctx, p.Name)
	if err != nil {
		return err
	}
	for i := range others {
		other, err := ipam.PoolFromAPI(&others[i])
		if err != nil {
			continue
		}
		if shared := ipam.Intersect(pool.Space(), other.Space()); len(shared) > 0 {
			return apierrors.NewInvalid(tenant.Kind("AddressPool"), p.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "cidrs"), p.Spec.CIDRs,
				fmt.Sprintf("overlaps AddressPool %s (%s)", other.Name, shared[0]))})
		}
	}
	return nil
}

// BeginCreate refuses a pool that overlaps another.
func (g *Guard) BeginCreate(ctx context.Context, obj runtime.Object, _ *metav1.CreateOptions) (genericregistry.FinishFunc, error) {
	if err := g.checkOverlap(ctx, obj.(*tenant.AddressPool)); err != nil {
		return nil, err
	}
	return func(context.Context, bool) {}, nil
}

// BeginUpdate refuses a pool that would overlap another, or lose space
// that holds allocations.
func (g *Guard) BeginUpdate(ctx context.Context, obj, old runtime.Object, _ *metav1.UpdateOptions) (genericregistry.FinishFunc, error) {
	n, o := obj.(*tenant.AddressPool), old.(*tenant.AddressPool)
	if err := g.checkOverlap(ctx, n); err != nil {
		return nil, err
	}
	newPool, _ := ipam.PoolFromAPI(n)
	oldPool, err := ipam.PoolFromAPI(o)
	if err != nil {
		return func(context.Context, bool) {}, nil
	}
	lost := ipam.Subtract(oldPool.Available(), newPool.Available())
	if len(lost) > 0 {
		if err := g.refuseIfAllocated(ctx, o.Name, ipam.Pool{Name: o.Name, CIDRs: lost}, "shrink"); err != nil {
			return nil, err
		}
	}
	return func(context.Context, bool) {}, nil
}

// BeforeDelete refuses to delete a pool that has allocations.
func (g *Guard) BeforeDelete(ctx context.Context, name string) (*metav1.Preconditions, error) {
	obj, err := g.Pools.Get(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), name, &metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	p := obj.(*tenant.AddressPool)
	pool, err := ipam.PoolFromAPI(p)
	if err != nil {
		return nil, nil
	}
	if err := g.refuseIfAllocated(ctx, name, pool, "delete"); err != nil {
		return nil, err
	}
	uid, rv := p.UID, p.ResourceVersion
	return &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}, nil
}

func (g *Guard) refuseIfAllocated(ctx context.Context, name string, space ipam.Pool, verb string) error {
	allocs, err := g.Allocator.List(ctx, space)
	if err != nil {
		return err
	}
	if len(allocs) == 0 {
		return nil
	}
	var causes []metav1.StatusCause
	for i, a := range allocs {
		if i == maxCauses {
			break
		}
		causes = append(causes, metav1.StatusCause{
			Type:    base.CauseTypeAttached,
			Field:   "allocation " + a.Block.String(),
			Message: fmt.Sprintf("%s is allocated to tenant %s (%s)", a.Block, a.Owner.Tenant, a.Owner.Purpose),
		})
	}
	return base.DeleteConflict(tenant.Resource("addresspools"), name,
		fmt.Sprintf("cannot %s pool %s: %d allocation(s) in the space it would lose", verb, name, len(allocs)), causes)
}

// Status computes the pool's fill from the allocator.
func Status(ctx context.Context, a *ipam.Allocator, p *tenant.AddressPool) (tenant.AddressPoolStatus, error) {
	pool, err := ipam.PoolFromAPI(p)
	if err != nil {
		return tenant.AddressPoolStatus{}, err
	}
	capacity, allocated, err := a.Usage(ctx, pool)
	if err != nil {
		return tenant.AddressPoolStatus{}, err
	}
	st := *p.Status.DeepCopy()
	st.ObservedGeneration = p.Generation
	st.Capacity, st.Allocated, st.Free = int64(capacity), int64(allocated), int64(capacity)-int64(allocated)
	return st, nil
}
