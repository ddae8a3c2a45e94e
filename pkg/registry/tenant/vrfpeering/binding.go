package vrfpeering

import (
	"context"
	"fmt"
	"net/netip"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Binding ties a VRFPeering to the Tenant and Network it names, and keeps
// its prefixes and neighbors away from what this server hands out:
//
//   - on create, the Tenant (not being deleted) and its Network must
//     exist (422 on spec.tenant or spec.network); their UIDs are recorded
//     in status.tenantUID and status.networkUID, so that a Tenant or
//     Network created again under the same name is not peered;
//   - on create and update, every advertised prefix lies inside one of the
//     Network's subnets, no received prefix overlaps an AddressPool outside
//     the tenant's own block, no neighbor lies in an AddressPool, and the
//     other peerings of the Network have the same ASN and other neighbors.
type Binding struct {
	// Storages are the server's: Binding reads Tenants, Networks and AddressPools.
	Storages *kindstore.Storages
}

// Create is the hook of creates.
func (b *Binding) Create(ctx context.Context, w *kindstore.Write[*tenant.VRFPeering]) (genericregistry.FinishFunc, error) {
	p := w.Obj
	t, n, errs := b.bound(ctx, p)
	if len(errs) == 0 {
		errs = b.checkAddresses(ctx, p, t, n)
	}
	if len(errs) == 0 {
		errs = b.sharedVRF(ctx, p, n)
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(tenant.Kind("VRFPeering"), p.Name, errs)
	}
	p.Status.TenantUID, p.Status.NetworkUID = t.UID, n.UID
	if err := w.AssignStatus(); err != nil {
		return nil, err
	}
	return func(context.Context, bool) {}, nil
}

// Update is the hook of updates: the spec's prefixes and
// neighbors are checked against the Network and Tenant it is bound to,
// while they exist (an orphaned peering can still be changed or deleted).
func (b *Binding) Update(ctx context.Context, w *kindstore.Write[*tenant.VRFPeering]) (genericregistry.FinishFunc, error) {
	p, o := w.Obj, w.Old
	t, n, errs := b.bound(ctx, p)
	if len(errs) == 0 && t.UID == o.Status.TenantUID && n.UID == o.Status.NetworkUID {
		errs = append(b.checkAddresses(ctx, p, t, n), b.sharedVRF(ctx, p, n)...)
		if len(errs) > 0 {
			return nil, apierrors.NewInvalid(tenant.Kind("VRFPeering"), p.Name, errs)
		}
	}
	return func(context.Context, bool) {}, nil
}

// bound reads the Tenant and Network p names.
func (b *Binding) bound(ctx context.Context, p *tenant.VRFPeering) (*tenant.Tenant, *tenant.Network, field.ErrorList) {
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	spec := field.NewPath("spec")
	obj, err := b.Storages.Tenants.Store.Get(ctx, p.Spec.Tenant, &metav1.GetOptions{})
	if err != nil {
		return nil, nil, field.ErrorList{lookupError(spec.Child("tenant"), p.Spec.Tenant, "tenant", err)}
	}
	t := obj.(*tenant.Tenant)
	if t.DeletionTimestamp != nil {
		return nil, nil, field.ErrorList{field.Invalid(spec.Child("tenant"), p.Spec.Tenant, "the tenant is being deleted")}
	}
	obj, err = b.Storages.Networks.Store.Get(tenancy.WithTenant(ctx, t.Name), p.Spec.Network, &metav1.GetOptions{})
	if err != nil {
		return nil, nil, field.ErrorList{lookupError(spec.Child("network"), p.Spec.Network, "network of tenant "+t.Name, err)}
	}
	n := obj.(*tenant.Network)
	if n.Labels[tenancy.TenantUIDLabel] != "" && n.Labels[tenancy.TenantUIDLabel] != string(t.UID) {
		return nil, nil, field.ErrorList{field.NotFound(spec.Child("network"), p.Spec.Network)}
	}
	if n.DeletionTimestamp != nil {
		return nil, nil, field.ErrorList{field.Invalid(spec.Child("network"), p.Spec.Network, "the network is being deleted")}
	}
	return t, n, nil
}

// sharedVRF refuses a peering that cannot share Network n's VRF with the
// other peerings of n: frr-k8s merges their routers into the VRF's one
// BGP router, which has one ASN, and a neighbor can be configured once.
// Two creates racing can both pass; the syncer then realises only the
// older.
func (b *Binding) sharedVRF(ctx context.Context, p *tenant.VRFPeering, n *tenant.Network) field.ErrorList {
	others, err := PeeringsOf(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), b.Storages.VRFPeerings.Store, p.Spec.Tenant, n)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec", "network"), err)}
	}
	var errs field.ErrorList
	for _, o := range others {
		if o.Name == p.Name {
			continue
		}
		if path, msg := validation.VRFPeeringConflict(p, o); path != nil {
			errs = append(errs, field.Invalid(path, value(p, path), msg))
		}
	}
	return errs
}

func value(p *tenant.VRFPeering, path *field.Path) interface{} {
	if path.String() == "spec.asn" {
		return p.Spec.ASN
	}
	for i, nb := range p.Spec.Neighbors {
		if path.String() == field.NewPath("spec", "neighbors").Index(i).Child("address").String() {
			return nb.Address
		}
	}
	return nil
}

// PeeringsOf lists the VRFPeerings bound to Network n of tenant t.
func PeeringsOf(ctx context.Context, store interface {
	List(context.Context, *metainternalversion.ListOptions) (runtime.Object, error)
}, t string, n *tenant.Network) ([]*tenant.VRFPeering, error) {
	list, err := store.List(ctx, &metainternalversion.ListOptions{
		FieldSelector: fields.SelectorFromSet(fields.Set{"spec.tenant": t, "spec.network": n.Name}),
	})
	if err != nil {
		return nil, err
	}
	var out []*tenant.VRFPeering
	err = meta.EachListItem(list, func(item runtime.Object) error {
		if p, ok := item.(*tenant.VRFPeering); ok && p.Spec.Tenant == t && p.Spec.Network == n.Name && p.Status.NetworkUID == n.UID {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

func lookupError(path *field.Path, name, what string, err error) *field.Error {
	if apierrors.IsNotFound(err) {
		return field.NotFound(path, name)
	}
	return field.InternalError(path, fmt.Errorf("reading %s %s: %w", what, name, err))
}

// checkAddresses checks p's prefixes and neighbors against Network n of
// Tenant t and the AddressPools.
func (b *Binding) checkAddresses(ctx context.Context, p *tenant.VRFPeering, t *tenant.Tenant, n *tenant.Network) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	subnets := parsePrefixes(n.Spec.Subnets)
	for i, s := range p.Spec.Advertise {
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			continue // validation refused it
		}
		inside := false
		for _, sub := range subnets {
			inside = inside || ipam.Contains(sub, pfx)
		}
		if !inside {
			errs = append(errs, field.Invalid(spec.Child("advertise").Index(i), s,
				fmt.Sprintf("must be inside one of network %s's subnets %v: a VRF announces only its own network", n.Name, n.Spec.Subnets)))
		}
	}

	pools, err := b.pools(ctx)
	if err != nil {
		return field.ErrorList{field.InternalError(spec, err)}
	}
	var block netip.Prefix
	if t.Status.Network != nil {
		block, _ = netip.ParsePrefix(t.Status.Network.CIDR)
	}
	if p.Spec.Receive != nil {
		for i, s := range p.Spec.Receive.Prefixes {
			pfx, err := netip.ParsePrefix(s)
			if err != nil || ipam.Contains(block, pfx) {
				continue
			}
			if pool, cidr, ok := overlapping(pools, pfx); ok {
				errs = append(errs, field.Invalid(spec.Child("receive", "prefixes").Index(i), s,
					fmt.Sprintf("overlaps %s of AddressPool %s outside tenant %s's block: routes to other tenants' or public addresses never enter a tenant's VRF", cidr, pool, t.Name)))
			}
		}
	}
	for i, nb := range p.Spec.Neighbors {
		addr, err := netip.ParseAddr(nb.Address)
		if err != nil {
			continue
		}
		if pool, cidr, ok := overlapping(pools, netip.PrefixFrom(addr, 32)); ok {
			errs = append(errs, field.Invalid(spec.Child("neighbors").Index(i).Child("address"), nb.Address,
				fmt.Sprintf("lies in %s of AddressPool %s: a neighbor is a provider router, never an address handed to tenants", cidr, pool)))
		}
	}
	return errs
}

type poolCIDR struct {
	pool string
	cidr netip.Prefix
}

// pools lists the CIDRs of every AddressPool.
func (b *Binding) pools(ctx context.Context) ([]poolCIDR, error) {
	list, err := b.Storages.AddressPools.Store.List(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), &metainternalversion.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []poolCIDR
	err = meta.EachListItem(list, func(item runtime.Object) error {
		p := item.(*tenant.AddressPool)
		for _, c := range parsePrefixes(p.Spec.CIDRs) {
			out = append(out, poolCIDR{pool: p.Name, cidr: c})
		}
		return nil
	})
	return out, err
}

func overlapping(pools []poolCIDR, p netip.Prefix) (string, netip.Prefix, bool) {
	for _, c := range pools {
		if c.cidr.Overlaps(p) {
			return c.pool, c.cidr, true
		}
	}
	return "", netip.Prefix{}, false
}

func parsePrefixes(ss []string) []netip.Prefix {
	out := make([]netip.Prefix, 0, len(ss))
	for _, s := range ss {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}
