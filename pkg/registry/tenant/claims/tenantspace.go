package claims

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// The tenant space.
//
// A tenant's objects take their addresses from what IPAM gave their
// Tenant: a Network's subnets from the Tenant's block
// (status.network.cidr), a NAT gateway's, a FloatingIP's and a
// LoadBalancer's address (see PublicIPs) from its public IPs
// (status.publicIPs).
// These claims live in a keyspace of their own, the tenant space: an
// ipam.Allocator on its own etcd prefix (<etcd-prefix>/ipam-local), next
// to the one that hands out the tenants' blocks and public IPs. IPAM never
// gives two tenants overlapping space, so one keyspace holds the claims of
// every tenant, and its one-transaction claims make them race-free across
// replicas: of two objects that claim overlapping space at once, on any
// replicas, exactly one succeeds.
//
// Every claim is owned by the tenant (Owner.Tenant and TenantUID:
// ReleaseOwner frees all of a deleted Tenant's claims) with
//
//   - Purpose "<use>:<object UID>" (Purpose), e.g. "network:<uid>" for
//     a Network's subnet and "natgateway:<uid>" for its NAT address. It must
//     name the object: ClaimBlock succeeds when the same owner and purpose
//     already hold the block, which makes a retried claim harmless but
//     would let two objects share a block were the purpose the same.
//   - Ref "<resource> [<namespace>/]<name>" (Ref), e.g. "networks
//     blue" or "floatingips dev/fip1": whom a conflict names, and where the
//     sweeper looks for the object that records the claim.

// Uses of claims in the tenant space: the first word of their Owner.Purpose.
const (
	// UseNetwork is a subnet of a Network.
	UseNetwork = "network"
	// UseNATGateway is the public IP of a Network's NAT gateway.
	UseNATGateway = "natgateway"
	// UsePublicIPRelease is a public IP that an update of its Tenant
	// gives up, held while the update is stored: no object takes it
	// meanwhile. Nothing records such a hold; the sweeper reclaims the
	// holds a crash left.
	UsePublicIPRelease = "publicip-release"
	// UseFloatingIP is the public IP of a FloatingIP.
	UseFloatingIP = "floatingip"
	// UseLoadBalancer is the public IP of a LoadBalancer.
	UseLoadBalancer = "loadbalancer"
)

// Purpose is the Owner.Purpose of a claim in the tenant space for use by the
// object of UID uid.
func Purpose(use string, uid types.UID) string { return use + ":" + string(uid) }

// ParsePurpose splits a Purpose.
func ParsePurpose(purpose string) (use string, uid types.UID, ok bool) {
	use, id, ok := strings.Cut(purpose, ":")
	if !ok || use == "" || id == "" {
		return "", "", false
	}
	return use, types.UID(id), true
}

// Ref names obj of resource in the Owner.Ref of its claims.
func Ref(resource string, obj metav1.Object) string {
	if obj.GetNamespace() != "" {
		return resource + " " + obj.GetNamespace() + "/" + obj.GetName()
	}
	return resource + " " + obj.GetName()
}

// ParseRef splits a Ref.
func ParseRef(ref string) (resource, namespace, name string, ok bool) {
	resource, obj, ok := strings.Cut(ref, " ")
	if !ok || resource == "" || obj == "" {
		return "", "", "", false
	}
	if ns, n, namespaced := strings.Cut(obj, "/"); namespaced {
		return resource, ns, n, ns != "" && n != ""
	}
	return resource, "", obj, true
}

// OwnerFor is the owner of a claim of t's space for use by obj, an
// object of resource.
func OwnerFor(t *tenant.Tenant, use, resource string, obj metav1.Object) ipam.Owner {
	return ipam.Owner{
		Tenant:    t.Name,
		TenantUID: string(t.UID),
		Purpose:   Purpose(use, obj.GetUID()),
		Ref:       Ref(resource, obj),
	}
}

// HolderOf says who holds a conflicting claim, for error messages:
// "networks blue", "floatingips dev/fip1".
func HolderOf(taken *ipam.TakenError) string {
	switch h := taken.Holder; {
	case h == nil:
		return "another allocation"
	case h.Ref != "":
		return h.Ref
	default:
		return fmt.Sprintf("an allocation of tenant %s (%s)", h.Tenant, h.Purpose)
	}
}

// TenantSpace claims and releases tenant objects' addresses in the
// tenant space; see the comment above UseNetwork.
type TenantSpace struct {
	// Allocator is the keyspace.
	Allocator *ipam.Allocator
	// Storages are the server's storages. The objects of FloatingIPs and
	// LoadBalancers name public IPs: the addresses they name count as
	// taken, claimed in this keyspace or not (an object stored before its
	// kind claimed here holds no claim until the next Reclaim), except to
	// a claim for the object itself.
	Storages *kindstore.Storages
}

// NewTenantSpace returns the tenant space of deps; nil when deps have
// none.
func NewTenantSpace(deps kindstore.Deps) *TenantSpace {
	if deps.IPAM.TenantSpace == nil {
		return nil
	}
	return &TenantSpace{Allocator: deps.IPAM.TenantSpace, Storages: deps.Storages}
}

func (l *TenantSpace) tenants() *genericregistry.Store { return l.Storages.Tenants.Store }

// users are the storages of the kinds whose objects name public IPs.
func (l *TenantSpace) users() []*kindstore.Storage {
	return []*kindstore.Storage{l.Storages.FloatingIPs, l.Storages.LoadBalancers}
}

// Subject is the object a claim is made for, as its errors name it.
type Subject struct {
	Resource schema.GroupResource
	Kind     schema.GroupKind
	Name     string
}

// Invalid is the 422 of the target with errs.
func (tg Subject) Invalid(errs ...*field.Error) error {
	return apierrors.NewInvalid(tg.Kind, tg.Name, field.ErrorList(errs))
}

// Conflict is the 409 of the target with a message.
func (tg Subject) Conflict(format string, args ...interface{}) error {
	return apierrors.NewConflict(tg.Resource, tg.Name, fmt.Errorf(format, args...))
}

// CallerTenant reads, from etcd, Tenant name, which the caller acts as
// (with uid, when the guard resolved it): its block and public IPs are
// what the claims of its objects come from. A Tenant being deleted takes
// nothing new (403, as its quota says).
func (l *TenantSpace) CallerTenant(ctx context.Context, name string, uid types.UID, tg Subject) (*tenant.Tenant, error) {
	if name == "" {
		return nil, apierrors.NewInternalError(errors.New("no tenant for the write"))
	}
	obj, err := l.tenants().Get(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, tg.Conflict("tenant %s does not exist", name)
	}
	if err != nil {
		return nil, err
	}
	t, ok := obj.(*tenant.Tenant)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("tenants store returned a %T", obj))
	}
	if uid != "" && uid != t.UID {
		return nil, tg.Conflict("tenant %s was deleted and created again meanwhile; try again", name)
	}
	if t.DeletionTimestamp != nil {
		return nil, apierrors.NewForbidden(tg.Resource, tg.Name, fmt.Errorf("tenant %s is being deleted", name))
	}
	return t, nil
}

// BlockTenant is CallerTenant for a claim in the tenant's block only, read
// from the watch cache when the cache can answer: a Tenant's block never
// changes once assigned, and the quota charge of the same create checks,
// in etcd, that the Tenant is still the one the caller's guard resolved
// and is not being deleted. What the cache cannot answer for sure (no such
// Tenant yet, another UID, no block yet, a deletion begun) is read from
// etcd, as CallerTenant reads it.
func (l *TenantSpace) BlockTenant(ctx context.Context, name string, uid types.UID, tg Subject) (*tenant.Tenant, error) {
	if name != "" && uid != "" {
		obj, err := l.tenants().Get(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), name, &metav1.GetOptions{ResourceVersion: "0"})
		if t, ok := obj.(*tenant.Tenant); err == nil && ok && t.UID == uid && t.DeletionTimestamp == nil &&
			t.Status.Network != nil && t.Status.Network.CIDR != "" {
			return t, nil
		}
	}
	return l.CallerTenant(ctx, name, uid, tg)
}

// Block returns t's block (status.network.cidr) and the pool of it that
// its Networks' subnets come from; a Tenant without one is a 409.
func (l *TenantSpace) Block(t *tenant.Tenant, tg Subject) (netip.Prefix, ipam.Pool, error) {
	if t.Status.Network == nil || t.Status.Network.CIDR == "" {
		return netip.Prefix{}, ipam.Pool{}, tg.Conflict("tenant %s has no block yet (status.network.cidr)", t.Name)
	}
	block, err := netip.ParsePrefix(t.Status.Network.CIDR)
	if err != nil {
		return netip.Prefix{}, ipam.Pool{}, apierrors.NewInternalError(fmt.Errorf("block %q of tenant %s: %w", t.Status.Network.CIDR, t.Name, err))
	}
	return block, ipam.Pool{Name: "block of tenant " + t.Name, CIDRs: []netip.Prefix{block}}, nil
}

// publicIPs returns t's public IPs, in the order of its status.
func publicIPs(t *tenant.Tenant) []netip.Addr {
	var out []netip.Addr
	for _, s := range t.Status.PublicIPs {
		if a, err := netip.ParseAddr(s); err == nil && a.Is4() {
			out = append(out, a)
		}
	}
	return out
}

// PublicIPPool is the pool of t's public IPs, as /32s.
func (l *TenantSpace) PublicIPPool(t *tenant.Tenant) ipam.Pool {
	return publicIPPool(t, publicIPs(t))
}

func publicIPPool(t *tenant.Tenant, addrs []netip.Addr) ipam.Pool {
	pool := ipam.Pool{Name: "public IPs of tenant " + t.Name}
	for _, a := range addrs {
		pool.CIDRs = append(pool.CIDRs, netip.PrefixFrom(a, 32))
	}
	return pool
}

// ClaimPublicIP gives owner one of t's public IPs and returns it: want,
// if set (422 at path if it is not one of t's, 409 naming whoever uses
// it), else the lowest free one (409 if none is). With dryRun it checks the
// same and returns the address it would give, claiming nothing.
func (l *TenantSpace) ClaimPublicIP(ctx context.Context, t *tenant.Tenant, want string, owner ipam.Owner, path *field.Path, tg Subject, dryRun bool) (netip.Addr, error) {
	addrs := publicIPs(t)
	users, err := l.namedByUsers(ctx, t.Name, owner)
	if err != nil {
		return netip.Addr{}, err
	}
	if want != "" {
		addr, err := netip.ParseAddr(want)
		if err != nil {
			return netip.Addr{}, tg.Invalid(field.Invalid(path, want, err.Error()))
		}
		mine := false
		for _, a := range addrs {
			mine = mine || a == addr
		}
		if !mine {
			return netip.Addr{}, tg.Invalid(field.Invalid(path, want, fmt.Sprintf("is not one of tenant %s's public IPs: %s", t.Name, orNone(t.Status.PublicIPs))))
		}
		if user, ok := users[addr]; ok {
			return netip.Addr{}, tg.Conflict("address %s is in use by %s", addr, user)
		}
		pool := publicIPPool(t, addrs)
		if dryRun {
			if holder, err := l.holderOf(ctx, pool, netip.PrefixFrom(addr, 32), owner); err != nil || holder != "" {
				if err != nil {
					return netip.Addr{}, err
				}
				return netip.Addr{}, tg.Conflict("address %s is in use by %s", addr, holder)
			}
			return addr, nil
		}
		err = l.Allocator.ClaimAddress(ctx, pool, addr, owner)
		var taken *ipam.TakenError
		switch {
		case err == nil:
			return l.stillTenants(ctx, t, addr, owner, tg)
		case errors.As(err, &taken):
			return netip.Addr{}, tg.Conflict("address %s is in use by %s", addr, HolderOf(taken))
		default:
			return netip.Addr{}, err
		}
	}

	none := func() error {
		if len(addrs) == 0 {
			return tg.Conflict("no free public IP in tenant %s: it has none (spec.publicIPs.count is 0)", t.Name)
		}
		return tg.Conflict("no free public IP in tenant %s: all %d are in use", t.Name, len(addrs))
	}
	if len(addrs) == 0 {
		return netip.Addr{}, none()
	}
	pool := publicIPPool(t, addrs)
	for _, a := range addrs {
		if _, used := users[a]; used {
			pool.Exclude = append(pool.Exclude, netip.PrefixFrom(a, 32))
		}
	}
	if dryRun {
		free, err := l.Allocator.Preview(ctx, pool, 32)
		var full *ipam.ExhaustedError
		switch {
		case err == nil:
			return free.Addr(), nil
		case errors.As(err, &full):
			return netip.Addr{}, none()
		default:
			return netip.Addr{}, err
		}
	}
	got, err := l.Allocator.AllocateAddresses(ctx, pool, 1, owner)
	var full *ipam.ExhaustedError
	switch {
	case err == nil:
		return l.stillTenants(ctx, t, got[0], owner, tg)
	case errors.As(err, &full):
		return netip.Addr{}, none()
	default:
		return netip.Addr{}, err
	}
}

// stillTenants checks, once addr is claimed for owner, that t still has
// it, and gives it back if not. An update of t that gives up addr holds it
// in this keyspace until that update is stored (see the Tenant's
// Addresses), so a claim that succeeded came either before that hold,
// which then kept addr with t, or after the update was stored, which a
// read of t now shows.
func (l *TenantSpace) stillTenants(ctx context.Context, t *tenant.Tenant, addr netip.Addr, owner ipam.Owner, tg Subject) (netip.Addr, error) {
	obj, err := l.tenants().Get(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), t.Name, &metav1.GetOptions{})
	if err == nil {
		if cur, ok := obj.(*tenant.Tenant); ok && cur.UID == t.UID && slices.Contains(cur.Status.PublicIPs, addr.String()) {
			return addr, nil
		}
	}
	l.Release(ctx, netip.PrefixFrom(addr, 32), owner)
	if err != nil && !apierrors.IsNotFound(err) {
		return netip.Addr{}, err
	}
	return netip.Addr{}, tg.Conflict("address %s is no longer one of tenant %s's public IPs; try again", addr, t.Name)
}

// holderOf says who, other than owner, holds space overlapping block in
// pool ("" if nobody): the check of a dry run, which claims nothing.
func (l *TenantSpace) holderOf(ctx context.Context, pool ipam.Pool, block netip.Prefix, owner ipam.Owner) (string, error) {
	allocs, err := l.Allocator.List(ctx, pool)
	if err != nil {
		return "", err
	}
	for _, a := range allocs {
		if !a.Block.Overlaps(block) || (a.Owner.TenantUID == owner.TenantUID && a.Owner.Purpose == owner.Purpose) {
			continue
		}
		holder := a.Owner
		return HolderOf(&ipam.TakenError{Block: block, Conflict: a.Block, Holder: &holder}), nil
	}
	return "", nil
}

// namedByUsers returns the public IPs that the objects of l.users() in
// tenant name use, and which object uses each: all but the object that
// claims for owner, whose own address is not in use by another.
func (l *TenantSpace) namedByUsers(ctx context.Context, name string, owner ipam.Owner) (map[netip.Addr]string, error) {
	_, claimant, _ := ParsePurpose(owner.Purpose)
	used := map[netip.Addr]string{}
	scoped := tenancy.WithTenant(genericapirequest.WithNamespace(ctx, metav1.NamespaceAll), name)
	for _, st := range l.users() {
		resource, store := st.Resource, st.Store
		// A consistent list: an object stored a moment ago without a
		// claim must count. It waits for the watch cache to catch up with
		// etcd (26-59 ms per create in a burst, docs/perf/host-kinds.md).
		list, err := store.List(scoped, &metainternalversion.ListOptions{})
		if err != nil {
			return nil, err
		}
		err = meta.EachListItem(list, func(item runtime.Object) error {
			m, err := meta.Accessor(item)
			if err != nil {
				return err
			}
			if claimant != "" && m.GetUID() == claimant {
				return nil
			}
			for _, s := range PublicAddressesOf(item) {
				if a, err := netip.ParseAddr(s); err == nil {
					used[a] = Ref(resource, m)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return used, nil
}

// PublicAddressesOf returns the public IPs an object names (spec and
// status; empty strings included).
func PublicAddressesOf(obj runtime.Object) []string {
	switch o := obj.(type) {
	case *tenant.FloatingIP:
		return []string{o.Spec.Address, o.Status.Address}
	case *tenant.LoadBalancer:
		return []string{o.Spec.Address, o.Status.Address}
	case *tenant.Network:
		var out []string
		if o.Spec.NATGateway != nil {
			out = append(out, o.Spec.NATGateway.Address)
		}
		return append(out, o.Status.NATGatewayIP)
	}
	return nil
}

// Release frees block if owner holds it. A failure is logged: the sweeper
// reclaims what nobody records.
func (l *TenantSpace) Release(ctx context.Context, block netip.Prefix, owner ipam.Owner) {
	release(ctx, l.Allocator, Claim{Block: block, Owner: owner})
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
