package tenants

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/claims"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Addresses gives Tenants their private block and public IPs from the
// AddressPools, through the IPAM allocator, as part of the Tenant's create
// and update: a Tenant is stored with its addresses or not at all (all or
// nothing), and a failed store gives them back (claims.Ledger). What a
// crash between the two leaves behind, the sweeper reclaims.
type Addresses struct {
	Allocator *ipam.Allocator
	// Storages are the server's: Tenants, the AddressPools they take from,
	// and the kinds that use a tenant's public IPs (FloatingIPs,
	// LoadBalancers, Networks' NAT gateways).
	Storages *kindstore.Storages
	// Claims is how Tenants hold their block and public IPs.
	Claims *claims.Ledger[*tenant.Tenant]
	// Local, when set, is the tenant space (claims.TenantSpace): its
	// claims of a tenant's public IPs count as uses, and a deleted Tenant's
	// claims there are released with the rest. Holds is how updates hold
	// there the addresses they give up; no Tenant records a hold.
	Local *ipam.Allocator
	Holds *claims.Ledger[*tenant.Tenant]
}

// installAddresses gives the Tenants of st their addresses from deps'
// IPAM (nothing without an allocator).
func installAddresses(st *kindstore.Storage, deps kindstore.Deps) {
	if deps.IPAM.Allocator == nil {
		return
	}
	a := &Addresses{Allocator: deps.IPAM.Allocator, Storages: deps.Storages, Local: deps.IPAM.TenantSpace}
	a.Claims = &claims.Ledger[*tenant.Tenant]{Keyspace: a.Allocator, Store: st.Store, Held: held}
	// A deleted Tenant gives back everything it owns, recorded or not.
	h := kindstore.OnWrite(a.Create, a.Update)
	h.AroundUpdate, h.AfterDelete = a.Claims.AroundUpdate, a.AfterDelete
	st.Install(h)
	st.Recorders = append(st.Recorders, a.Claims)
	if a.Local != nil {
		a.Holds = &claims.Ledger[*tenant.Tenant]{Resource: "tenants", Keyspace: a.Local, Store: st.Store,
			Held: func(*tenant.Tenant) []claims.Claim { return nil }}
		st.Recorders = append(st.Recorders, a.Holds)
	}
}

// held returns the claims t records: its block and its public IPs.
func held(t *tenant.Tenant) []claims.Claim {
	var out []claims.Claim
	if t.Status.Network != nil {
		if block, err := netip.ParsePrefix(t.Status.Network.CIDR); err == nil {
			out = append(out, claims.Claim{Block: block, Owner: owner(t, ipam.PurposeTenantNetwork)})
		}
	}
	return append(out, publicIPClaims(t, t.Status.PublicIPs)...)
}

// publicIPClaims returns the claims of t on ips.
func publicIPClaims(t *tenant.Tenant, ips []string) []claims.Claim {
	var out []claims.Claim
	for _, ip := range ips {
		if addr, err := netip.ParseAddr(ip); err == nil {
			out = append(out, claims.Claim{Block: netip.PrefixFrom(addr, 32), Owner: owner(t, ipam.PurposePublicIP)})
		}
	}
	return out
}

func clusterCtx(ctx context.Context) context.Context {
	return genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
}

// pools returns the valid AddressPools of purpose, sorted by name.
func (a *Addresses) pools(ctx context.Context, purpose tenant.AddressPoolPurpose) ([]*tenant.AddressPool, error) {
	list, err := a.Storages.AddressPools.Store.List(clusterCtx(ctx), &metainternalversion.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []*tenant.AddressPool
	for i := range list.(*tenant.AddressPoolList).Items {
		p := &list.(*tenant.AddressPoolList).Items[i]
		if p.Spec.Purpose == purpose && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func owner(t *tenant.Tenant, purpose string) ipam.Owner {
	return ipam.Owner{Tenant: t.Name, TenantUID: string(t.UID), Purpose: purpose}
}

// Create allocates the new Tenant's block and public IPs and writes
// them into its status. (The Tenant validated before: a bad spec is a 422,
// not an allocation.)
func (a *Addresses) Create(ctx context.Context, w *kindstore.Write[*tenant.Tenant]) (genericregistry.FinishFunc, error) {
	t := w.Obj
	// A second create of a name is AlreadyExists, not a clash of addresses
	// with the first one.
	if _, err := a.Claims.Store.Get(clusterCtx(ctx), t.Name, &metav1.GetOptions{}); err == nil {
		return nil, apierrors.NewAlreadyExists(tenant.Resource("tenants"), t.Name)
	}
	t.Status = tenant.TenantStatus{}
	if w.DryRun {
		return func(context.Context, bool) {}, nil
	}
	block, blockPool, err := a.allocateBlock(ctx, t)
	if err != nil {
		return nil, err
	}
	ips, ipPool, err := a.allocatePublicIPs(ctx, t, int(t.Spec.PublicIPs.Count))
	if err != nil {
		a.releaseAll(ctx, t)
		return nil, err
	}
	t.Status.Network = &tenant.TenantNetworkStatus{CIDR: block.String()}
	t.Status.PublicIPs = ips
	msg := fmt.Sprintf("block %s from pool %s", block, blockPool)
	if len(ips) > 0 {
		msg += fmt.Sprintf("; %d public IPs from pool %s", len(ips), ipPool)
	}
	setAllocated(t, msg)
	if err := w.AssignStatus(); err != nil {
		a.releaseAll(ctx, t)
		return nil, err
	}
	return func(ctx context.Context, success bool) {
		if !success {
			a.releaseAll(context.WithoutCancel(ctx), t)
		}
	}, nil
}

func setAllocated(t *tenant.Tenant, msg string) {
	meta.SetStatusCondition(&t.Status.Conditions, metav1.Condition{
		Type: ConditionAddressesAllocated, Status: metav1.ConditionTrue, Reason: "Allocated",
		Message: msg, ObservedGeneration: t.Generation,
	})
}

// ConditionAddressesAllocated is the Tenant condition IPAM owns.
const ConditionAddressesAllocated = "AddressesAllocated"

// allocateBlock claims spec.network.cidr, or allocates a block of
// spec.network.prefixLength (default: the pool's defaultPrefixLength) from
// the first TenantNetworks pool, by name, that has one free. Within a pool
// the lowest free aligned block is taken (first fit).
func (a *Addresses) allocateBlock(ctx context.Context, t *tenant.Tenant) (netip.Prefix, string, error) {
	pools, err := a.pools(ctx, tenant.AddressPoolPurposeTenantNetworks)
	if err != nil {
		return netip.Prefix{}, "", err
	}
	path := field.NewPath("spec", "network")
	if len(pools) == 0 {
		return netip.Prefix{}, "", apierrors.NewConflict(tenant.Resource("tenants"), t.Name,
			errors.New("no AddressPool with purpose TenantNetworks exists"))
	}
	own := owner(t, ipam.PurposeTenantNetwork)
	if t.Spec.Network.CIDR != "" {
		block, err := netip.ParsePrefix(t.Spec.Network.CIDR)
		if err != nil {
			return netip.Prefix{}, "", apierrors.NewInvalid(tenant.Kind("Tenant"), t.Name, field.ErrorList{field.Invalid(path.Child("cidr"), t.Spec.Network.CIDR, err.Error())})
		}
		var names []string
		for _, p := range pools {
			pool, err := ipam.PoolFromAPI(p)
			if err != nil {
				continue
			}
			names = append(names, p.Name)
			err = a.Allocator.ClaimBlock(ctx, pool, block, own)
			var outside *ipam.OutsidePoolError
			switch {
			case err == nil:
				return block, p.Name, nil
			case errors.As(err, &outside):
				continue
			case isTaken(err):
				return netip.Prefix{}, "", apierrors.NewInvalid(tenant.Kind("Tenant"), t.Name, field.ErrorList{field.Invalid(path.Child("cidr"), t.Spec.Network.CIDR, err.Error())})
			default:
				return netip.Prefix{}, "", err
			}
		}
		return netip.Prefix{}, "", apierrors.NewInvalid(tenant.Kind("Tenant"), t.Name, field.ErrorList{field.Invalid(path.Child("cidr"), t.Spec.Network.CIDR,
			fmt.Sprintf("is not inside a TenantNetworks AddressPool (%s)", strings.Join(names, ", ")))})
	}
	var exhausted []string
	for _, p := range pools {
		length := t.Spec.Network.PrefixLength
		if length == nil {
			length = p.Spec.DefaultPrefixLength
		}
		if length == nil {
			continue
		}
		pool, err := ipam.PoolFromAPI(p)
		if err != nil {
			continue
		}
		block, err := a.Allocator.AllocateBlock(ctx, pool, int(*length), own)
		var full *ipam.ExhaustedError
		switch {
		case err == nil:
			return block, p.Name, nil
		case errors.As(err, &full):
			exhausted = append(exhausted, fmt.Sprintf("pool %s has no free /%d", p.Name, *length))
		default:
			return netip.Prefix{}, "", err
		}
	}
	if len(exhausted) == 0 {
		return netip.Prefix{}, "", apierrors.NewInvalid(tenant.Kind("Tenant"), t.Name, field.ErrorList{field.Required(path.Child("prefixLength"),
			"no TenantNetworks AddressPool has a defaultPrefixLength; set cidr or prefixLength")})
	}
	return netip.Prefix{}, "", apierrors.NewConflict(tenant.Resource("tenants"), t.Name,
		fmt.Errorf("tenant networks exhausted: %s", strings.Join(exhausted, "; ")))
}

func isTaken(err error) bool {
	var taken *ipam.TakenError
	var excluded *ipam.ExcludedError
	return errors.As(err, &taken) || errors.As(err, &excluded)
}

// allocatePublicIPs takes n addresses from the first PublicIPs pool, by
// name, that has n free: all or nothing.
func (a *Addresses) allocatePublicIPs(ctx context.Context, t *tenant.Tenant, n int) ([]string, string, error) {
	if n == 0 {
		return nil, "", nil
	}
	pools, err := a.pools(ctx, tenant.AddressPoolPurposePublicIPs)
	if err != nil {
		return nil, "", err
	}
	if len(pools) == 0 {
		return nil, "", apierrors.NewConflict(tenant.Resource("tenants"), t.Name,
			errors.New("no AddressPool with purpose PublicIPs exists"))
	}
	var exhausted []string
	for _, p := range pools {
		pool, err := ipam.PoolFromAPI(p)
		if err != nil {
			continue
		}
		addrs, err := a.Allocator.AllocateAddresses(ctx, pool, n, owner(t, ipam.PurposePublicIP))
		var full *ipam.ExhaustedError
		switch {
		case err == nil:
			ips := make([]string, len(addrs))
			for i, addr := range addrs {
				ips[i] = addr.String()
			}
			return ips, p.Name, nil
		case errors.As(err, &full):
			exhausted = append(exhausted, full.Error())
		default:
			return nil, "", err
		}
	}
	return nil, "", apierrors.NewConflict(tenant.Resource("tenants"), t.Name,
		fmt.Errorf("public IPs exhausted: %s", strings.Join(exhausted, "; ")))
}

// releaseAll gives back everything t holds; failures are left to the sweeper.
func (a *Addresses) releaseAll(ctx context.Context, t *tenant.Tenant) {
	if _, err := a.Allocator.ReleaseOwner(ctx, string(t.UID)); err != nil {
		klog.FromContext(ctx).Error(err, "Releasing a tenant's addresses; the sweeper will", "tenant", t.Name)
	}
}

// hold claims ip in the tenant space for the update whose record is rec,
// and returns "" then; or, if something holds it already (a NAT gateway
// claimed it since the update looked), who. Held, an address the update
// drops cannot be taken by a NAT gateway, FloatingIP or LoadBalancer
// before the Tenant no longer has it; the update's end gives the holds
// back, and the sweeper those a crash left.
func (a *Addresses) hold(ctx context.Context, rec *kindstore.Record, t *tenant.Tenant, ip string) (string, error) {
	addr, err := netip.ParseAddr(ip)
	if a.Local == nil || err != nil {
		return "", nil
	}
	// Unique to the update: two updates of the Tenant never share a hold.
	var holder ipam.Owner
	if holds := rec.Holds(); len(holds) > 0 {
		holder = holds[0].Owner
	} else {
		holder = ipam.Owner{Tenant: t.Name, TenantUID: string(t.UID),
			Purpose: claims.Purpose(claims.UsePublicIPRelease, types.UID(string(t.UID)+"/"+string(uuid.NewUUID()))),
			Ref:     "tenants " + t.Name}
	}
	pool := ipam.Pool{Name: "public IPs of tenant " + t.Name, CIDRs: []netip.Prefix{netip.PrefixFrom(addr, 32)}}
	err = a.Local.ClaimAddress(ctx, pool, addr, holder)
	var taken *ipam.TakenError
	switch {
	case err == nil:
		rec.Hold(a.Local, claims.Claim{Block: netip.PrefixFrom(addr, 32), Owner: holder})
		return "", nil
	case errors.As(err, &taken):
		return claims.HolderOf(taken), nil
	default:
		return "", err
	}
}

// Update follows a change of spec.publicIPs.count: raising it
// allocates more; lowering it drops addresses no FloatingIP, LoadBalancer
// or NAT gateway uses (given back once the Tenant is stored), and is
// refused (409, listing the users) while too few are unused.
func (a *Addresses) Update(ctx context.Context, w *kindstore.Write[*tenant.Tenant]) (genericregistry.FinishFunc, error) {
	n, o, dryRun, rec := w.Obj, w.Old, w.DryRun, w.Claims
	// Only IPAM writes these; whatever the request carried is replaced (and
	// the strategy keeps only what this hook assigns with w.AssignStatus).
	n.Status.Network, n.Status.PublicIPs = o.Status.Network, o.Status.PublicIPs
	if c := meta.FindStatusCondition(o.Status.Conditions, ConditionAddressesAllocated); c != nil {
		meta.SetStatusCondition(&n.Status.Conditions, *c)
	}
	have, want := len(o.Status.PublicIPs), int(n.Spec.PublicIPs.Count)
	nothing := func(context.Context, bool) {}
	// A try after a concurrent write (a status write, a usage charge) that
	// finds the public IPs as the earlier try did keeps what that try
	// decided, and what it claimed and held for it: a try that talks to
	// etcd again each time would lose every race against a busy writer.
	if p, ok := kindstore.Carried[publicIPsPlan](rec); ok && !dryRun && o.Status.Network != nil {
		if p.want == want && slices.Equal(p.from, o.Status.PublicIPs) {
			n.Status.PublicIPs = slices.Clone(p.result)
			setAllocated(n, p.message)
			if err := w.AssignStatus(); err != nil {
				return nil, err
			}
			rec.Drop(p.drop...)
			return nothing, nil
		}
	}
	remember := func(drop []claims.Claim) {
		if !dryRun {
			c := meta.FindStatusCondition(n.Status.Conditions, ConditionAddressesAllocated)
			kindstore.Carry(rec, publicIPsPlan{from: slices.Clone(o.Status.PublicIPs), want: want, result: slices.Clone(n.Status.PublicIPs), message: c.Message, drop: drop})
		}
	}
	switch {
	case want == have || o.Status.Network == nil:
		return nothing, nil
	case want > have:
		if dryRun {
			return nothing, nil
		}
		added, pool, err := a.allocatePublicIPs(ctx, o, want-have)
		if err != nil {
			return nil, err
		}
		rec.Add(publicIPClaims(o, added)...)
		n.Status.PublicIPs = append(append([]string(nil), o.Status.PublicIPs...), added...)
		setAllocated(n, fmt.Sprintf("block %s; %d public IPs (%d more from pool %s)", o.Status.Network.CIDR, want, len(added), pool))
		if err := w.AssignStatus(); err != nil {
			rec.Forget(publicIPClaims(o, added)...)
			a.Claims.Release(ctx, publicIPClaims(o, added)...)
			return nil, err
		}
		remember(nil)
		return nothing, nil
	default:
		used, err := a.inUse(ctx, o)
		if err != nil {
			return nil, err
		}
		// What an earlier try of this update holds is the update's own
		// (a status write between the store's read and its write makes it
		// try again): it is free to drop, and the try claims it again.
		for _, h := range rec.Holds() {
			delete(used, h.Block.Addr().String())
		}
		var keep, drop []string
		for i := len(o.Status.PublicIPs) - 1; i >= 0; i-- {
			ip := o.Status.PublicIPs[i]
			if _, busy := used[ip]; !busy && len(drop) < have-want && !dryRun {
				holder, err := a.hold(ctx, rec, o, ip)
				if err != nil {
					return nil, err
				}
				if holder != "" {
					used[ip] = holder
				}
			}
			if _, busy := used[ip]; !busy && len(drop) < have-want {
				drop = append(drop, ip)
			} else {
				keep = append([]string{ip}, keep...)
			}
		}
		if len(drop) < have-want {
			var users []string
			for _, ip := range o.Status.PublicIPs {
				if u, busy := used[ip]; busy {
					users = append(users, ip+" ("+u+")")
				}
			}
			return nil, apierrors.NewConflict(tenant.Resource("tenants"), o.Name, fmt.Errorf(
				"cannot lower publicIPs.count from %d to %d: only %d of the tenant's public IPs are unused; in use: %s",
				have, want, len(drop), strings.Join(users, ", ")))
		}
		n.Status.PublicIPs = keep
		setAllocated(n, fmt.Sprintf("block %s; %d public IPs", o.Status.Network.CIDR, want))
		if err := w.AssignStatus(); err != nil {
			return nil, err
		}
		if !dryRun {
			rec.Drop(publicIPClaims(o, drop)...)
		}
		remember(publicIPClaims(o, drop))
		return nothing, nil
	}
}

// publicIPsPlan is what a try of an update decided for the Tenant's public
// IPs, from status.publicIPs from for a count of want: the new list, its
// condition message, and the claims it gives up.
type publicIPsPlan struct {
	from, result []string
	want         int
	message      string
	drop         []claims.Claim
}

// inUse returns the public IPs of t that its objects use, and by whom: what
// the objects name, and what is claimed for them in the tenant space (a
// claim is made before its object is stored).
func (a *Addresses) inUse(ctx context.Context, t *tenant.Tenant) (map[string]string, error) {
	used := map[string]string{}
	if a.Local != nil {
		claims, err := a.Local.ListOwner(ctx, string(t.UID))
		if err != nil {
			return nil, err
		}
		for _, c := range claims {
			if c.Block.Bits() == 32 {
				used[c.Block.Addr().String()] = c.Owner.Ref
			}
		}
	}
	scoped := tenancy.WithTenant(clusterCtx(ctx), t.Name)
	for _, st := range []*kindstore.Storage{a.Storages.FloatingIPs, a.Storages.LoadBalancers, a.Storages.Networks} {
		resource := st.Resource
		list, err := st.Store.List(scoped, &metainternalversion.ListOptions{})
		if err != nil {
			return nil, err
		}
		err = meta.EachListItem(list, func(item runtime.Object) error {
			name, err := kindstore.ObjectRef(item)
			if err != nil {
				return err
			}
			ref := resource + " " + name
			for _, ip := range claims.PublicAddressesOf(item) {
				used[ip] = ref
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return used, nil
}

// AfterDelete gives back everything a deleted Tenant held: its block and
// public IPs, and its objects' claims on them in the tenant space.
func (a *Addresses) AfterDelete(obj runtime.Object, options *metav1.DeleteOptions) {
	if options != nil && len(options.DryRun) > 0 {
		return
	}
	if t, ok := obj.(*tenant.Tenant); ok {
		a.releaseAll(context.Background(), t)
		if a.Local != nil {
			if _, err := a.Local.ReleaseOwner(context.Background(), string(t.UID)); err != nil {
				klog.Background().Error(err, "Releasing a tenant's local claims; the sweeper will", "tenant", t.Name)
			}
		}
	}
}
