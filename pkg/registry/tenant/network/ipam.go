package network

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/base"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Resource is the resource name of Networks, as LocalRef writes it.
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
// in the tenant-local keyspace (base.LocalSpace):
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
//     other NAT gateway (and, once they claim here too, no FloatingIP or
//     LoadBalancer) has it; while disabled it is empty and the address is
//     given back.
//
// Both claims carry Ref "networks <name>". A Network is stored with its
// claims or not at all: a failed create gives back what it claimed, an
// update gives back what it dropped or claimed in vain once its outcome is
// known (AroundUpdate), a delete gives back what the Network recorded
// (AfterDelete), and the sweeper (base.LocalSpace.Keep with Records)
// reclaims what a crash left unrecorded. Dry runs check everything and
// show what would be assigned, claiming nothing.
//
// The claims are etcd transactions that fail if any overlapping claim
// exists, so two Networks created at once with overlapping subnets, on one
// replica or several sharing etcd, never both succeed.
type IPAM struct {
	Space *base.LocalSpace
	// Networks is the storage of Networks.
	Networks *genericregistry.Store
}

func targetOf(n *tenant.Network) base.Target {
	return base.Target{Resource: tenant.Resource(Resource), Kind: tenant.Kind("Network"), Name: n.Name}
}

// claim is one tenant-local claim made or dropped by a write.
type claim struct {
	block netip.Prefix
	owner ipam.Owner
}

// ownerFromLabels is the owner of n's claims of use, from the tenant labels
// the server gave n; ok is false for an object without them.
func ownerFromLabels(n *tenant.Network, use string) (ipam.Owner, bool) {
	t := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: n.Labels[tenancy.TenantLabel], UID: types.UID(n.Labels[tenancy.TenantUIDLabel])}}
	if t.Name == "" || t.UID == "" {
		return ipam.Owner{}, false
	}
	return base.LocalOwner(t, use, Resource, n), true
}

// claims returns the claims n records: its subnets and its NAT address.
func claims(n *tenant.Network) []claim {
	var out []claim
	if owner, ok := ownerFromLabels(n, base.LocalUseNetwork); ok {
		for _, s := range n.Spec.Subnets {
			if p, err := netip.ParsePrefix(s); err == nil {
				out = append(out, claim{block: p, owner: owner})
			}
		}
	}
	if owner, ok := ownerFromLabels(n, base.LocalUseNATGateway); ok {
		if a, err := netip.ParseAddr(n.Status.NATGatewayIP); err == nil {
			out = append(out, claim{block: netip.PrefixFrom(a, 32), owner: owner})
		}
	}
	return out
}

// Records says whether Network obj records block for use: a subnet in
// spec.subnets, a NAT address in status.natGatewayIP. It is the sweeper's
// rule for Networks (base.LocalKind).
func Records(obj runtime.Object, use string, block netip.Prefix) bool {
	n, ok := obj.(*tenant.Network)
	if !ok {
		return false
	}
	switch use {
	case base.LocalUseNetwork:
		for _, s := range n.Spec.Subnets {
			if p, err := netip.ParsePrefix(s); err == nil && p == block {
				return true
			}
		}
	case base.LocalUseNATGateway:
		return block.Bits() == 32 && n.Status.NATGatewayIP == block.Addr().String()
	}
	return false
}

// recordsClaim says whether n, as stored, records c.
func recordsClaim(n *tenant.Network, c claim) bool {
	use, uid, ok := base.ParseLocalPurpose(c.owner.Purpose)
	return ok && uid == n.UID && Records(n, use, c.block)
}

// BeginCreate validates the new Network, claims its subnets (or the
// default one) and, with the NAT gateway enabled, its address, and writes
// them into spec.subnets, status.subnets and status.natGatewayIP. The
// finish function gives the claims back if the Network is not stored.
func (i *IPAM) BeginCreate(ctx context.Context, obj runtime.Object, options *metav1.CreateOptions) (genericregistry.FinishFunc, error) {
	n := obj.(*tenant.Network)
	tg := targetOf(n)
	// A bad spec is a 422, not a claim.
	if errs := validation.ValidateNetwork(n); len(errs) > 0 {
		return nil, apierrors.NewInvalid(tg.Kind, n.Name, errs)
	}
	// A second create of a name is AlreadyExists, not a clash of subnets
	// with the first one.
	if _, err := i.Networks.Get(ctx, n.Name, &metav1.GetOptions{}); err == nil {
		return nil, apierrors.NewAlreadyExists(tg.Resource, n.Name)
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	t, err := i.Space.CallerTenant(ctx, tg)
	if err != nil {
		return nil, err
	}
	dryRun := options != nil && len(options.DryRun) > 0
	subnets, claimed, err := i.claimSubnets(ctx, t, n, n, dryRun)
	if err != nil {
		return nil, err
	}
	natIP := ""
	if gw := n.Spec.NATGateway; gw != nil && gw.Enabled {
		owner := base.LocalOwner(t, base.LocalUseNATGateway, Resource, n)
		addr, err := i.Space.ClaimPublicIP(ctx, t, gw.Address, owner, natAddressPath, tg, dryRun)
		if err != nil {
			i.release(ctx, claimed)
			return nil, err
		}
		if !dryRun {
			claimed = append(claimed, claim{block: netip.PrefixFrom(addr, 32), owner: owner})
		}
		natIP = addr.String()
	}
	n.Spec.Subnets = subnets
	n.Status.Subnets = slices.Clone(subnets)
	n.Status.NATGatewayIP = natIP
	if err := base.AssignStatus(ctx, n); err != nil {
		i.release(ctx, claimed)
		return nil, err
	}
	// A create through an update (server-side apply of a new Network)
	// calls finish before it writes: the update's outcome decides.
	rec := recordFrom(ctx)
	rec.add(claimed...)
	return func(ctx context.Context, success bool) {
		if !success {
			rec.forget(claimed...)
			i.release(context.WithoutCancel(ctx), claimed)
		}
	}, nil
}

// claimSubnets claims n's subnets in t's block, or the default one, for
// the Network stored as id (n itself on create; on update, the stored
// object, whose UID the request may not carry), and returns them and the
// claims made. On error it has given back what it claimed.
func (i *IPAM) claimSubnets(ctx context.Context, t *tenant.Tenant, n, id *tenant.Network, dryRun bool) ([]string, []claim, error) {
	tg := targetOf(n)
	block, pool, err := i.Space.Block(t, tg)
	if err != nil {
		return nil, nil, err
	}
	owner := base.LocalOwner(t, base.LocalUseNetwork, Resource, id)
	if len(n.Spec.Subnets) == 0 {
		bits := max(DefaultSubnetPrefixLength, block.Bits())
		noRoom := func() error {
			return tg.Conflict("no free /%d left in tenant %s's block %s for a default subnet; name spec.subnets", bits, t.Name, block)
		}
		if dryRun {
			allocs, err := i.Space.Allocator.List(ctx, pool)
			if err != nil {
				return nil, nil, err
			}
			taken := make([]netip.Prefix, 0, len(allocs))
			for _, a := range allocs {
				taken = append(taken, a.Block)
			}
			free, ok := base.FirstFree(pool.CIDRs, taken, bits)
			if !ok {
				return nil, nil, noRoom()
			}
			return []string{free.String()}, nil, nil
		}
		got, err := i.Space.Allocator.AllocateBlock(ctx, pool, bits, owner)
		var full *ipam.ExhaustedError
		switch {
		case err == nil:
			return []string{got.String()}, []claim{{block: got, owner: owner}}, nil
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
	var claimed []claim
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
			claimed = append(claimed, claim{block: p, owner: owner})
		case errors.As(err, &taken):
			errs = append(errs, field.Invalid(subnetsPath.Index(idx), s, overlaps(taken)))
		case errors.As(err, &outside):
			errs = append(errs, field.Invalid(subnetsPath.Index(idx), s, fmt.Sprintf("must be inside the tenant's block %s", block)))
		default:
			i.release(ctx, claimed)
			return nil, nil, err
		}
	}
	if len(errs) > 0 {
		i.release(ctx, claimed)
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
		if resource, _, name, ok := base.ParseLocalRef(taken.Holder.Ref); ok && resource == Resource {
			return fmt.Sprintf("overlaps subnet %s of network %s", conflict, name)
		}
	}
	return fmt.Sprintf("overlaps %s, held by %s", conflict, base.HolderOf(taken))
}

// writeRecord collects, over the tries of one update, the claims they made
// and those they meant to give back.
type writeRecord struct {
	mu             sync.Mutex
	added, dropped []claim
}

type writeRecordKey struct{}

// recordFrom returns the record of the update in ctx; outside an update,
// one that nobody reads (what it would have released, the sweeper does).
func recordFrom(ctx context.Context) *writeRecord {
	if rec, ok := ctx.Value(writeRecordKey{}).(*writeRecord); ok {
		return rec
	}
	return &writeRecord{}
}

func (r *writeRecord) add(cs ...claim) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.added = append(r.added, cs...)
}

func (r *writeRecord) drop(cs ...claim) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropped = append(r.dropped, cs...)
}

func (r *writeRecord) forget(cs ...claim) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.added = slices.DeleteFunc(r.added, func(c claim) bool { return slices.Contains(cs, c) })
}

func (r *writeRecord) take() (added, dropped []claim) {
	r.mu.Lock()
	defer r.mu.Unlock()
	added, dropped, r.added, r.dropped = r.added, r.dropped, nil, nil
	return added, dropped
}

// BeginUpdate follows a change of the NAT gateway: enabling it claims an
// address, disabling it clears status.natGatewayIP, changing its address
// claims the new one; AroundUpdate gives back the old or unused ones once
// the Network is stored. It also gives subnets to a Network stored before
// the registry claimed them, and makes status.subnets mirror spec.subnets.
// Whatever the request wrote into status.subnets and status.natGatewayIP
// never counts.
func (i *IPAM) BeginUpdate(ctx context.Context, obj, old runtime.Object, options *metav1.UpdateOptions) (genericregistry.FinishFunc, error) {
	n, o := obj.(*tenant.Network), old.(*tenant.Network)
	tg := targetOf(n)
	nothing := func(context.Context, bool) {}
	// An update that omits the subnets keeps them (as Kind.KeepAssigned
	// does after this hook); a bad spec is a 422, not a claim.
	if len(n.Spec.Subnets) == 0 {
		n.Spec.Subnets = o.Spec.Subnets
	}
	// The spec only: the strategy, after this hook, fills in and checks
	// the metadata.
	probe := n.DeepCopy()
	probe.ObjectMeta = *o.ObjectMeta.DeepCopy()
	if errs := validation.ValidateNetworkUpdate(probe, o); len(errs) > 0 {
		return nil, apierrors.NewInvalid(tg.Kind, n.Name, errs)
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
	dryRun := options != nil && len(options.DryRun) > 0
	rec := recordFrom(ctx)
	var t *tenant.Tenant
	if needSubnets || needNAT {
		var err error
		if t, err = i.Space.CallerTenant(ctx, tg); err != nil {
			return nil, err
		}
	}
	var claimed []claim
	undo := func() {
		rec.forget(claimed...)
		i.release(ctx, claimed)
	}
	if needSubnets {
		subnets, got, err := i.claimSubnets(ctx, t, n, o, dryRun)
		if err != nil {
			return nil, err
		}
		claimed = append(claimed, got...)
		rec.add(got...)
		n.Spec.Subnets, n.Status.Subnets = subnets, slices.Clone(subnets)
	}
	if dropNAT {
		n.Status.NATGatewayIP = ""
		if owner, ok := ownerFromLabels(o, base.LocalUseNATGateway); ok && !dryRun {
			if a, err := netip.ParseAddr(oldIP); err == nil {
				rec.drop(claim{block: netip.PrefixFrom(a, 32), owner: owner})
			}
		}
	}
	if needNAT {
		owner := base.LocalOwner(t, base.LocalUseNATGateway, Resource, o)
		addr, err := i.Space.ClaimPublicIP(ctx, t, gw.Address, owner, natAddressPath, tg, dryRun)
		if err != nil {
			undo()
			return nil, err
		}
		if !dryRun {
			c := claim{block: netip.PrefixFrom(addr, 32), owner: owner}
			claimed = append(claimed, c)
			rec.add(c)
		}
		n.Status.NATGatewayIP = addr.String()
	}
	if err := base.AssignStatus(ctx, n); err != nil {
		undo()
		return nil, err
	}
	return nothing, nil
}

// AroundUpdate gives back, once an update of a Network is stored, the
// claims its tries made or dropped that the stored Network does not
// record. An update refused for certain before anything was written (a 4xx
// answer: a conflict with a concurrent write, an invalid object, an
// address in use) gives back what its tries claimed. Any other failure
// gives back nothing: whether the update was stored is not certain (an
// answer lost after etcd applied it), so the sweeper, which reads the
// Network from etcd, reclaims what it left unrecorded.
//
// One race remains: an update that disables the NAT gateway (or moves it)
// and a second update that re-enables it with the same address, within
// the moment between the first one's store and its release. The second
// one's claim of an address its Network still holds succeeds without
// writing, and the first one's release then frees it under the second. The
// release is skipped when the Network, read again from etcd, records the
// address, which leaves only the milliseconds between the second update's
// claim and its store.
func (i *IPAM) AroundUpdate(ctx context.Context) (context.Context, func(runtime.Object, error)) {
	rec := &writeRecord{}
	return context.WithValue(ctx, writeRecordKey{}, rec), func(stored runtime.Object, err error) {
		added, dropped := rec.take()
		if len(added)+len(dropped) == 0 {
			return
		}
		ctx := context.WithoutCancel(ctx)
		if err != nil {
			if certainlyNotStored(err) {
				i.release(ctx, added)
			}
			return
		}
		n, ok := stored.(*tenant.Network)
		if !ok {
			return
		}
		var unrecorded []claim
		for _, c := range append(added, dropped...) {
			if !recordsClaim(n, c) {
				unrecorded = append(unrecorded, c)
			}
		}
		if len(unrecorded) == 0 {
			return
		}
		current, err := i.Networks.Get(tenancy.WithTenant(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), n.Labels[tenancy.TenantLabel]), n.Name, &metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return // the sweeper will
		}
		if cur, ok := current.(*tenant.Network); ok && err == nil {
			unrecorded = slices.DeleteFunc(unrecorded, func(c claim) bool { return recordsClaim(cur, c) })
		}
		i.release(ctx, unrecorded)
	}
}

// certainlyNotStored says whether a write that failed with err was refused
// before anything was written: a 4xx answer other than a timeout.
func certainlyNotStored(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests
}

// AfterDelete gives back the subnets and NAT address of a deleted Network.
func (i *IPAM) AfterDelete(obj runtime.Object, options *metav1.DeleteOptions) {
	if options != nil && len(options.DryRun) > 0 {
		return
	}
	if n, ok := obj.(*tenant.Network); ok {
		i.release(context.Background(), claims(n))
	}
}

func (i *IPAM) release(ctx context.Context, cs []claim) {
	ctx = context.WithoutCancel(ctx)
	for _, c := range cs {
		i.Space.Release(ctx, c.block, c.owner)
	}
}

// Reclaim claims again, in the tenant-local keyspace, the subnets and NAT
// addresses that stored Networks record but nobody holds: those of Networks
// stored before the registry claimed them (an upgrade), and an address a
// release took from under a Network (see AroundUpdate). It reads the
// Networks from the watch cache and confirms each from etcd before
// claiming, only inside the Network's tenant's block and public IPs. A
// claim that someone else holds by then is reported: two Networks record
// overlapping space, which a person must settle. It returns how many it
// claimed.
func (i *IPAM) Reclaim(ctx context.Context) (int, error) {
	allocs, err := i.Space.Allocator.ListAll(ctx)
	if err != nil && allocs == nil {
		return 0, err
	}
	held := map[netip.Prefix]string{}
	for _, a := range allocs {
		held[a.Block] = a.Owner.Purpose
	}
	cluster := genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	list, err := i.Networks.List(tenancy.WithAllTenants(cluster), &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return 0, err
	}
	reclaimed := 0
	var errs []error
	for idx := range list.(*tenant.NetworkList).Items {
		n := &list.(*tenant.NetworkList).Items[idx]
		var missing []claim
		for _, c := range claims(n) {
			if held[c.block] != c.owner.Purpose {
				missing = append(missing, c)
			}
		}
		if len(missing) == 0 {
			continue
		}
		got, err := i.reclaim(tenancy.WithTenant(cluster, n.Labels[tenancy.TenantLabel]), n, missing)
		reclaimed += got
		if err != nil {
			errs = append(errs, fmt.Errorf("network %s of tenant %s: %w", n.Name, n.Labels[tenancy.TenantLabel], err))
		}
	}
	return reclaimed, errors.Join(errs...)
}

// reclaim claims missing, the unheld claims of Network n as the cache had
// it, for n as etcd has it.
func (i *IPAM) reclaim(ctx context.Context, n *tenant.Network, missing []claim) (int, error) {
	obj, err := i.Networks.Get(ctx, n.Name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	cur := obj.(*tenant.Network)
	tobj, err := i.Space.Tenants.Get(ctx, cur.Labels[tenancy.TenantLabel], &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	t := tobj.(*tenant.Tenant)
	reclaimed := 0
	var errs []error
	for _, c := range missing {
		if !recordsClaim(cur, c) || string(t.UID) != c.owner.TenantUID {
			continue
		}
		use, _, _ := base.ParseLocalPurpose(c.owner.Purpose)
		pool := i.Space.PublicIPPool(t)
		if use == base.LocalUseNetwork {
			if _, pool, err = i.Space.Block(t, targetOf(cur)); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if len(pool.CIDRs) == 0 {
			errs = append(errs, fmt.Errorf("%s is not one of tenant %s's public IPs", c.block.Addr(), t.Name))
			continue
		}
		switch err := i.Space.Allocator.ClaimBlock(ctx, pool, c.block, c.owner); {
		case err == nil:
			reclaimed++
		default:
			errs = append(errs, fmt.Errorf("claiming %s again: %w", c.block, err))
		}
	}
	return reclaimed, errors.Join(errs...)
}
