package addresspool

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/claims"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// maxCauses bounds the allocations listed in a refusal.
const maxCauses = 50

// Consistency keeps AddressPools consistent with each other and with what they
// handed out: pools may not overlap (422), and a pool may not be deleted,
// or shrunk, while it has allocations in the space it would lose (409,
// listing them).
//
// Pools claim their space in a keyspace of their own (Space, an allocator
// with its own prefix) with the same one-transaction claims as addresses,
// so two pools created or grown at the same moment cannot both take the
// same space.
type Consistency struct {
	Allocator *ipam.Allocator
	// Space holds the claims of the pools on their address space.
	Space *ipam.Allocator
	// Pools is the storage of AddressPools.
	Pools *genericregistry.Store
	// Claims is how pools hold their space (claims.Ledger): an update gives
	// back, once stored, the space the pool no longer covers.
	Claims *claims.Ledger[*tenant.AddressPool]
}

// installConsistency guards the pools of st with deps' IPAM (nothing without
// an allocator).
func installConsistency(st *kindstore.Storage, deps kindstore.Deps) {
	if deps.IPAM.Allocator == nil {
		return
	}
	g := &Consistency{Allocator: deps.IPAM.Allocator, Space: deps.IPAM.PoolSpace, Pools: st.Store}
	g.Claims = &claims.Ledger[*tenant.AddressPool]{Keyspace: g.Space, Store: st.Store, Held: held}
	h := g.Claims.Hooks(g.Create, g.Update)
	h.AfterDelete, h.BeforeDelete = g.AfterDelete, g.BeforeDelete
	st.Install(h)
}

// held returns the claims p records: every block of its space.
func held(p *tenant.AddressPool) []claims.Claim {
	pool, err := ipam.PoolFromAPI(p)
	if err != nil {
		return nil
	}
	return spaceClaims(p, pool.Space())
}

// spaceClaims returns the claims of pool p on blocks.
func spaceClaims(p *tenant.AddressPool, blocks []netip.Prefix) []claims.Claim {
	out := make([]claims.Claim, len(blocks))
	for i, b := range blocks {
		out[i] = claims.Claim{Block: b, Owner: spaceOwner(p)}
	}
	return out
}

// universe is the space pools claim theirs from.
var universe = ipam.Pool{Name: "ipv4", CIDRs: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}}

// purposeSpace is the purpose of a pool's claim on its space.
const purposeSpace = "AddressPoolSpace"

func spaceOwner(p *tenant.AddressPool) ipam.Owner {
	return ipam.Owner{Tenant: p.Name, TenantUID: string(p.UID), Purpose: purposeSpace}
}

// claimSpace claims every block of the pool's space for it (claims it
// already holds succeed again) and returns the blocks newly claimed; a
// block another pool holds is a 422 naming that pool.
func (g *Consistency) claimSpace(ctx context.Context, p *tenant.AddressPool, pool ipam.Pool) ([]netip.Prefix, error) {
	var claimed []netip.Prefix
	held := map[netip.Prefix]bool{}
	if mine, err := g.Space.ListOwner(ctx, string(p.UID)); err == nil {
		for _, a := range mine {
			held[a.Block] = true
		}
	}
	for _, block := range pool.Space() {
		err := g.Space.ClaimBlock(ctx, universe, block, spaceOwner(p))
		var taken *ipam.TakenError
		switch {
		case err == nil:
			if !held[block] {
				claimed = append(claimed, block)
			}
		case errors.As(err, &taken):
			g.releaseSpace(ctx, p, claimed)
			other := "another pool"
			if taken.Holder != nil {
				other = "AddressPool " + taken.Holder.Tenant
			}
			return nil, apierrors.NewInvalid(tenant.Kind("AddressPool"), p.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "cidrs"), p.Spec.CIDRs,
				fmt.Sprintf("overlaps %s (%s)", other, taken.Conflict))})
		default:
			g.releaseSpace(ctx, p, claimed)
			return nil, err
		}
	}
	return claimed, nil
}

func (g *Consistency) releaseSpace(ctx context.Context, p *tenant.AddressPool, blocks []netip.Prefix) {
	for _, b := range blocks {
		if err := g.Space.Release(ctx, b, spaceOwner(p)); err != nil {
			klog.FromContext(ctx).Error(err, "Releasing a pool's space", "pool", p.Name, "block", b)
		}
	}
}

func (g *Consistency) others(ctx context.Context, name string) ([]tenant.AddressPool, error) {
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
func (g *Consistency) checkOverlap(ctx context.Context, p *tenant.AddressPool) error {
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

// Create refuses a pool that overlaps another, and claims its space.
func (g *Consistency) Create(ctx context.Context, w *kindstore.Write[*tenant.AddressPool]) (genericregistry.FinishFunc, error) {
	p := w.Obj
	if err := g.checkOverlap(ctx, p); err != nil {
		return nil, err
	}
	if w.DryRun {
		return func(context.Context, bool) {}, nil
	}
	pool, _ := ipam.PoolFromAPI(p)
	claimed, err := g.claimSpace(ctx, p, pool)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, success bool) {
		if !success {
			g.releaseSpace(context.WithoutCancel(ctx), p, claimed)
		}
	}, nil
}

// AfterDelete gives a deleted pool's space back.
func (g *Consistency) AfterDelete(obj runtime.Object, options *metav1.DeleteOptions) {
	if options != nil && len(options.DryRun) > 0 {
		return
	}
	if p, ok := obj.(*tenant.AddressPool); ok {
		if _, err := g.Space.ReleaseOwner(context.Background(), string(p.UID)); err != nil {
			klog.Background().Error(err, "Releasing a deleted pool's space", "pool", p.Name)
		}
	}
}

// Update refuses a pool that would overlap another, or lose space
// that holds allocations, and claims the space it gains; the space it
// loses is given back once the pool is stored without it (Claims).
func (g *Consistency) Update(ctx context.Context, w *kindstore.Write[*tenant.AddressPool]) (genericregistry.FinishFunc, error) {
	n, o := w.Obj, w.Old
	if err := g.checkOverlap(ctx, n); err != nil {
		return nil, err
	}
	newPool, _ := ipam.PoolFromAPI(n)
	oldPool, err := ipam.PoolFromAPI(o)
	if err == nil {
		lost := ipam.Subtract(oldPool.Available(), newPool.Available())
		if len(lost) > 0 {
			if err := g.refuseIfAllocated(ctx, o.Name, ipam.Pool{Name: o.Name, CIDRs: lost}, "shrink"); err != nil {
				return nil, err
			}
		}
	}
	if !w.DryRun {
		// With the stored pool's identity: the request may not carry its UID.
		id := n.DeepCopy()
		id.UID = o.UID
		claimed, err := g.claimSpace(ctx, id, newPool)
		if err != nil {
			return nil, err
		}
		w.Claims.Add(spaceClaims(id, claimed)...)
		w.Claims.Drop(spaceClaims(id, ipam.Subtract(oldPool.Space(), newPool.Space()))...)
	}
	return func(context.Context, bool) {}, nil
}

// BeforeDelete refuses to delete a pool that has allocations.
func (g *Consistency) BeforeDelete(ctx context.Context, name string) (*metav1.Preconditions, error) {
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

func (g *Consistency) refuseIfAllocated(ctx context.Context, name string, space ipam.Pool, verb string) error {
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
			Type:    kindstore.CauseTypeAttached,
			Field:   "allocation " + a.Block.String(),
			Message: fmt.Sprintf("%s is allocated to tenant %s (%s)", a.Block, a.Owner.Tenant, a.Owner.Purpose),
		})
	}
	return kindstore.DeleteConflict(tenant.Resource("addresspools"), name,
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
