package network

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/claims"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Resource is the resource name of Networks, as claims.Ref writes it.
const Resource = "networks"

// DefaultSubnetPrefixLength is the size of the subnet a Network gets when
// it names none: the lowest free /24 of its tenant's block, or the whole
// block when that is smaller.
const DefaultSubnetPrefixLength = 24

var (
	subnetsPath    = field.NewPath("spec", "subnets")
	natAddressPath = field.NewPath("spec", "natGateway", "address")
)

// IPAM gives Networks their subnets and NAT gateway addresses from their
// tenant's space, as part of the Network's create and update, with claims
// in the tenant space (claims.TenantSpace):
//
//   - spec.subnets: each subnet must lie inside the tenant's block (422
//     spec.subnets[i]) and overlap no subnet of another Network of the
//     tenant (422 spec.subnets[i], naming that Network and its subnet). A
//     Network that names none gets the lowest free /24 of the block (the
//     whole block when it is smaller than a /24), written into spec.subnets
//     like a Service's clusterIP; no room is a 409 naming the block. Each
//     subnet is claimed with Purpose "network:<Network UID>". After a
//     create, spec.subnets is never empty, and status.subnets mirrors it.
//   - spec.natGateway: while enabled, status.natGatewayIP is one of the
//     tenant's public IPs (spec.natGateway.address, or the lowest free
//     one), claimed with Purpose "natgateway:<Network UID>", so that no
//     other NAT gateway, FloatingIP or LoadBalancer has it; while disabled
//     it is empty and the address is given back.
//
// Both claims carry Ref "networks <name>". A Network is stored with its
// claims or not at all (claims.Ledger): a failed create gives back what it
// claimed, an update gives back what it dropped or claimed in vain once
// its outcome is known, a delete gives back what the Network recorded, and
// the sweeper reclaims what a crash left unrecorded. Dry runs check
// everything and show what would be assigned, claiming nothing.
//
// The claims are etcd transactions that fail if any overlapping claim
// exists, so two Networks created at once with overlapping subnets, on one
// replica or several sharing etcd, never both succeed.
type IPAM struct {
	Space *claims.TenantSpace
	// Claims is how Networks hold their claims.
	Claims *claims.Ledger[*tenant.Network]
	// Networks is the storage of Networks.
	Networks *genericregistry.Store
}

// installIPAM gives the Networks of st their subnets and NAT addresses
// from space (nothing when space is nil).
func installIPAM(st *kindstore.Storage, space *claims.TenantSpace) {
	if space == nil {
		return
	}
	i := &IPAM{Space: space, Networks: st.Store}
	i.Claims = &claims.Ledger[*tenant.Network]{
		Resource: Resource,
		Keyspace: space.Allocator,
		Store:    st.Store,
		Held:     held,
		Tenants:  space.Storages.Tenants.Store,
		Pool:     i.pool,
	}
	st.Install(i.Claims.Hooks(i.Create, i.Update))
	st.Recorders = append(st.Recorders, i.Claims)
}

func subject(n *tenant.Network) claims.Subject {
	return claims.Subject{Resource: tenant.Resource(Resource), Kind: tenant.Kind("Network"), Name: n.Name}
}

// ownerFromLabels is the owner of n's claims of use, from the tenant labels
// the server gave n; ok is false for an object without them.
func ownerFromLabels(n *tenant.Network, use string) (ipam.Owner, bool) {
	t := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: n.Labels[tenancy.TenantLabel], UID: types.UID(n.Labels[tenancy.TenantUIDLabel])}}
	if t.Name == "" || t.UID == "" {
		return ipam.Owner{}, false
	}
	return claims.OwnerFor(t, use, Resource, n), true
}

// held returns the claims n records: its subnets (spec.subnets) and its
// NAT address (status.natGatewayIP).
func held(n *tenant.Network) []claims.Claim {
	var out []claims.Claim
	if owner, ok := ownerFromLabels(n, claims.UseNetwork); ok {
		for _, s := range n.Spec.Subnets {
			if p, err := netip.ParsePrefix(s); err == nil {
				out = append(out, claims.Claim{Block: p, Owner: owner})
			}
		}
	}
	if owner, ok := ownerFromLabels(n, claims.UseNATGateway); ok {
		if a, err := netip.ParseAddr(n.Status.NATGatewayIP); err == nil {
			out = append(out, claims.Claim{Block: netip.PrefixFrom(a, 32), Owner: owner})
		}
	}
	return out
}

// pool is where c, a claim of n that nobody holds, is claimed again: the
// block of n's tenant t for a subnet, its public IPs for a NAT address.
func (i *IPAM) pool(t *tenant.Tenant, n *tenant.Network, c claims.Claim) (ipam.Pool, error) {
	if use, _, _ := claims.ParsePurpose(c.Owner.Purpose); use == claims.UseNetwork {
		_, pool, err := i.Space.Block(t, subject(n))
		return pool, err
	}
	pool := i.Space.PublicIPPool(t)
	if len(pool.CIDRs) == 0 {
		return pool, fmt.Errorf("%s is not one of tenant %s's public IPs", c.Block.Addr(), t.Name)
	}
	return pool, nil
}

// Create claims the new Network's subnets (or the
// default one) and, with the NAT gateway enabled, its address, and writes
// them into spec.subnets, status.subnets and status.natGatewayIP. The
// finish function gives the claims back if the Network is not stored.
func (i *IPAM) Create(ctx context.Context, w *kindstore.Write[*tenant.Network]) (genericregistry.FinishFunc, error) {
	n, dryRun := w.Obj, w.DryRun
	tg := subject(n)
	// A second create of a name is AlreadyExists, not a clash of subnets
	// with the first one. This read is etcd's, not the watch cache's: a
	// create of a name the cache does not show yet (a controller making
	// what it just made) would claim a subnet it then gives back, and in
	// between refuse another Network's overlapping subnet.
	if _, err := i.Networks.Get(ctx, n.Name, &metav1.GetOptions{}); err == nil {
		return nil, apierrors.NewAlreadyExists(tg.Resource, n.Name)
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	// The tenant's block may come from the watch cache when the create's
	// quota charge checks the Tenant in etcd; its public IPs may not: they
	// change (CallerTenant reads etcd).
	callerTenant := i.Space.CallerTenant
	if gw := n.Spec.NATGateway; kindstore.Charges(ctx) && (gw == nil || !gw.Enabled) {
		callerTenant = i.Space.BlockTenant
	}
	t, err := callerTenant(ctx, w.Tenant, w.TenantUID, tg)
	if err != nil {
		return nil, err
	}
	// The name is free and the tenant takes new objects: the quota is
	// written while the subnets are claimed.
	kindstore.StartCharge(ctx)
	subnets, claimed, err := i.claimSubnets(ctx, t, n, n, dryRun)
	if err != nil {
		return nil, err
	}
	natIP := ""
	if gw := n.Spec.NATGateway; gw != nil && gw.Enabled {
		owner := claims.OwnerFor(t, claims.UseNATGateway, Resource, n)
		addr, err := i.Space.ClaimPublicIP(ctx, t, gw.Address, owner, natAddressPath, tg, dryRun)
		if err != nil {
			i.Claims.Release(ctx, claimed...)
			return nil, err
		}
		if !dryRun {
			claimed = append(claimed, claims.Claim{Block: netip.PrefixFrom(addr, 32), Owner: owner})
		}
		natIP = addr.String()
	}
	n.Spec.Subnets = subnets
	n.Status.Subnets = slices.Clone(subnets)
	n.Status.NATGatewayIP = natIP
	if err := w.AssignStatus(); err != nil {
		i.Claims.Release(ctx, claimed...)
		return nil, err
	}
	// A create through an update (server-side apply of a new Network)
	// calls finish before it writes: the update's outcome decides.
	w.Claims.Add(claimed...)
	return func(ctx context.Context, success bool) {
		if !success {
			w.Claims.Forget(claimed...)
			i.Claims.Release(ctx, claimed...)
		}
	}, nil
}

// claimSubnets claims n's subnets in t's block, or the default one, for
// the Network stored as id (n itself on create; on update, the stored
// object, whose UID the request may not carry), and returns them and the
// claims made. On error it has given back what it claimed.
func (i *IPAM) claimSubnets(ctx context.Context, t *tenant.Tenant, n, id *tenant.Network, dryRun bool) ([]string, []claims.Claim, error) {
	tg := subject(n)
	block, pool, err := i.Space.Block(t, tg)
	if err != nil {
		return nil, nil, err
	}
	owner := claims.OwnerFor(t, claims.UseNetwork, Resource, id)
	if len(n.Spec.Subnets) == 0 {
		bits := max(DefaultSubnetPrefixLength, block.Bits())
		noRoom := func() error {
			return tg.Conflict("no free /%d left in tenant %s's block %s for a default subnet; name spec.subnets", bits, t.Name, block)
		}
		allocate := func() (netip.Prefix, error) { return i.Space.Allocator.AllocateBlock(ctx, pool, bits, owner) }
		if dryRun {
			allocate = func() (netip.Prefix, error) { return i.Space.Allocator.Preview(ctx, pool, bits) }
		}
		got, err := allocate()
		var full *ipam.ExhaustedError
		switch {
		case err == nil && dryRun:
			return []string{got.String()}, nil, nil
		case err == nil:
			return []string{got.String()}, []claims.Claim{{Block: got, Owner: owner}}, nil
		case errors.As(err, &full):
			return nil, nil, noRoom()
		default:
			return nil, nil, err
		}
	}

	if errs := validation.ValidateSubnetsWithinBlock(n.Spec.Subnets, block, subnetsPath); len(errs) > 0 {
		return nil, nil, apierrors.NewInvalid(tg.Kind, n.Name, errs)
	}
	var allocs []ipam.Allocation
	if dryRun {
		if allocs, err = i.Space.Allocator.List(ctx, pool); err != nil {
			return nil, nil, err
		}
	}
	var errs field.ErrorList
	var claimed []claims.Claim
	for idx, s := range n.Spec.Subnets {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			continue // ValidateNetwork reported it
		}
		if dryRun {
			for _, a := range allocs {
				if a.Block.Overlaps(p) && (a.Owner.TenantUID != owner.TenantUID || a.Owner.Purpose != owner.Purpose) {
					holder := a.Owner
					errs = append(errs, field.Invalid(subnetsPath.Index(idx), s, overlaps(&ipam.TakenError{Block: p, Conflict: a.Block, Holder: &holder})))
					break
				}
			}
			continue
		}
		err = i.Space.Allocator.ClaimBlock(ctx, pool, p, owner)
		var taken *ipam.TakenError
		var outside *ipam.OutsidePoolError
		switch {
		case err == nil:
			claimed = append(claimed, claims.Claim{Block: p, Owner: owner})
		case errors.As(err, &taken):
			errs = append(errs, field.Invalid(subnetsPath.Index(idx), s, overlaps(taken)))
		case errors.As(err, &outside):
			errs = append(errs, field.Invalid(subnetsPath.Index(idx), s, fmt.Sprintf("must be inside the tenant's block %s", block)))
		default:
			i.Claims.Release(ctx, claimed...)
			return nil, nil, err
		}
	}
	if len(errs) > 0 {
		i.Claims.Release(ctx, claimed...)
		return nil, nil, apierrors.NewInvalid(tg.Kind, n.Name, errs)
	}
	return slices.Clone(n.Spec.Subnets), claimed, nil
}

// overlaps explains a subnet refused because another claim overlaps it.
func overlaps(taken *ipam.TakenError) string {
	conflict := taken.Conflict
	if !conflict.IsValid() {
		conflict = taken.Block
	}
	if taken.Holder != nil {
		if resource, _, name, ok := claims.ParseRef(taken.Holder.Ref); ok && resource == Resource {
			return fmt.Sprintf("overlaps subnet %s of network %s", conflict, name)
		}
	}
	return fmt.Sprintf("overlaps %s, held by %s", conflict, claims.HolderOf(taken))
}

// Update follows a change of the NAT gateway: enabling it claims an
// address, disabling it clears status.natGatewayIP, changing its address
// claims the new one; AroundUpdate gives back the old or unused ones once
// the Network is stored. It also gives subnets to a Network stored before
// the registry claimed them, and makes status.subnets mirror spec.subnets.
// Whatever the request wrote into status.subnets and status.natGatewayIP
// never counts.
func (i *IPAM) Update(ctx context.Context, w *kindstore.Write[*tenant.Network]) (genericregistry.FinishFunc, error) {
	n, o, dryRun, rec := w.Obj, w.Old, w.DryRun, w.Claims
	tg := subject(n)
	nothing := func(context.Context, bool) {}
	// An update that omits the subnets keeps them (as Kind.KeepAssigned
	// does after this hook).
	if len(n.Spec.Subnets) == 0 {
		n.Spec.Subnets = o.Spec.Subnets
	}
	n.Status.Subnets, n.Status.NATGatewayIP = o.Status.Subnets, o.Status.NATGatewayIP

	oldIP := o.Status.NATGatewayIP
	gw := n.Spec.NATGateway
	enabled := gw != nil && gw.Enabled
	needSubnets := len(o.Spec.Subnets) == 0
	needNAT := enabled && (oldIP == "" || (gw.Address != "" && gw.Address != oldIP))
	dropNAT := oldIP != "" && (!enabled || needNAT)
	// status.subnets mirrors spec.subnets (a Network stored before the
	// registry set it catches up).
	mirror := !needSubnets && !slices.Equal(o.Status.Subnets, o.Spec.Subnets)
	if !needSubnets && !needNAT && !dropNAT && !mirror {
		return nothing, nil
	}
	n.Status.Subnets = slices.Clone(n.Spec.Subnets)
	var t *tenant.Tenant
	if needSubnets || needNAT {
		var err error
		if t, err = i.Space.CallerTenant(ctx, w.Tenant, w.TenantUID, tg); err != nil {
			return nil, err
		}
	}
	var claimed []claims.Claim
	undo := func() {
		rec.Forget(claimed...)
		i.Claims.Release(ctx, claimed...)
	}
	if needSubnets {
		subnets, got, err := i.claimSubnets(ctx, t, n, o, dryRun)
		if err != nil {
			return nil, err
		}
		claimed = append(claimed, got...)
		rec.Add(got...)
		n.Spec.Subnets, n.Status.Subnets = subnets, slices.Clone(subnets)
	}
	if dropNAT {
		n.Status.NATGatewayIP = ""
		if owner, ok := ownerFromLabels(o, claims.UseNATGateway); ok && !dryRun {
			if a, err := netip.ParseAddr(oldIP); err == nil {
				rec.Drop(claims.Claim{Block: netip.PrefixFrom(a, 32), Owner: owner})
			}
		}
	}
	if needNAT {
		owner := claims.OwnerFor(t, claims.UseNATGateway, Resource, o)
		addr, err := i.Space.ClaimPublicIP(ctx, t, gw.Address, owner, natAddressPath, tg, dryRun)
		if err != nil {
			undo()
			return nil, err
		}
		if !dryRun {
			c := claims.Claim{Block: netip.PrefixFrom(addr, 32), Owner: owner}
			claimed = append(claimed, c)
			rec.Add(c)
		}
		n.Status.NATGatewayIP = addr.String()
	}
	if err := w.AssignStatus(); err != nil {
		undo()
		return nil, err
	}
	return nothing, nil
}
