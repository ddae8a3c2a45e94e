// Package connects hands out the connect subnets of ClusterNetworkConnects:
// of the connections between tenants' networks and provider networks (one
// per tenant and provider network), and of each tenant's service network
// (one per tenant, connecting its Shared Networks), from the
// ConnectSubnets AddressPools, through the same IPAM allocator as tenant
// blocks and public IPs: no two connections, and no connection and tenant
// block, ever share an address.
package connects

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// Purpose is the IPAM purpose of connect subnets.
const Purpose = "ConnectSubnet"

// refPrefix starts the Owner.Ref of a connect subnet of a connection with
// a provider network: "clusternetworkconnects <provider network>".
const refPrefix = "clusternetworkconnects "

// serviceNetworkRef is the Owner.Ref of the connect subnet of a tenant's
// service network, the connection of its Shared Networks with each other
// (hostnames.ServiceNetworkConnect). It is not of the form refPrefix +
// name, so it is never taken for a provider network's.
const serviceNetworkRef = "service-network"

// ErrNoPool says that no ConnectSubnets AddressPool exists.
var ErrNoPool = errors.New("no AddressPool with purpose ConnectSubnets exists")

// Connects claims and releases connect subnets. The allocation is the
// record: a tenant's connection to provider network pn holds the
// allocation of purpose ConnectSubnet whose Ref names pn, and its service
// network the one whose Ref is serviceNetworkRef.
type Connects struct {
	Allocator *ipam.Allocator
	// Storages are the server's: AddressPools and Tenants.
	Storages *kindstore.Storages
}

func owner(t, uid, ref string) ipam.Owner {
	return ipam.Owner{Tenant: t, TenantUID: uid, Purpose: Purpose, Ref: ref}
}

// Held returns the connect subnets tenant uid holds for connections with
// provider networks, by provider network.
func (c *Connects) Held(ctx context.Context, uid string) (map[string]netip.Prefix, error) {
	byRef, _, err := c.held(ctx, uid)
	if err != nil {
		return nil, err
	}
	out := map[string]netip.Prefix{}
	for ref, block := range byRef {
		if pn, ok := strings.CutPrefix(ref, refPrefix); ok && pn != "" {
			out[pn] = block
		}
	}
	return out, nil
}

// HeldServiceNetwork returns the connect subnet of the service network of
// tenant uid, and whether it holds one.
func (c *Connects) HeldServiceNetwork(ctx context.Context, uid string) (netip.Prefix, bool, error) {
	byRef, _, err := c.held(ctx, uid)
	if err != nil {
		return netip.Prefix{}, false, err
	}
	block, ok := byRef[serviceNetworkRef]
	return block, ok, nil
}

// held returns the connect subnets tenant uid holds, by Ref, and the
// extra allocations: where an answer lost in a crash left two for one
// connection, the lowest is held, the others are extra.
func (c *Connects) held(ctx context.Context, uid string) (held map[string]netip.Prefix, extra []ipam.Allocation, err error) {
	allocs, err := c.Allocator.ListOwner(ctx, uid)
	if err != nil {
		return nil, nil, err
	}
	held = map[string]netip.Prefix{}
	for _, a := range allocs {
		if a.Owner.Purpose != Purpose || a.Owner.Ref == "" || a.Owner.Ref == refPrefix {
			continue
		}
		if _, ok := held[a.Owner.Ref]; ok {
			extra = append(extra, a)
			continue
		}
		held[a.Owner.Ref] = a.Block
	}
	return held, extra, nil
}

// Claim returns the connect subnet of tenant t (UID uid) for provider
// network pn, and the prefix length of each network's slice of it: the
// one it holds, or a new one from the first ConnectSubnets pool, by name,
// with room. Extra allocations of pn are given back.
func (c *Connects) Claim(ctx context.Context, t, uid, pn string) (netip.Prefix, int, error) {
	return c.claim(ctx, t, uid, refPrefix+pn)
}

// ClaimServiceNetwork returns the connect subnet of the service network of
// tenant t (UID uid), as Claim does for a provider network's connection:
// one more per tenant at most, from the same pools.
func (c *Connects) ClaimServiceNetwork(ctx context.Context, t, uid string) (netip.Prefix, int, error) {
	return c.claim(ctx, t, uid, serviceNetworkRef)
}

func (c *Connects) claim(ctx context.Context, t, uid, ref string) (netip.Prefix, int, error) {
	held, extra, err := c.held(ctx, uid)
	if err != nil {
		return netip.Prefix{}, 0, err
	}
	for _, a := range extra {
		if a.Owner.Ref == ref {
			if err := c.Allocator.Release(ctx, a.Block, a.Owner); err != nil {
				return netip.Prefix{}, 0, err
			}
		}
	}
	if block, ok := held[ref]; ok {
		return block, block.Bits() + validation.ConnectNetworkPrefixBits, nil
	}
	pools, err := c.pools(ctx)
	if err != nil {
		return netip.Prefix{}, 0, err
	}
	if len(pools) == 0 {
		return netip.Prefix{}, 0, ErrNoPool
	}
	var errs []error
	for _, p := range pools {
		pool, err := ipam.PoolFromAPI(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		bits := validation.DefaultConnectPrefixLength
		if p.Spec.DefaultPrefixLength != nil {
			bits = int(*p.Spec.DefaultPrefixLength)
		}
		block, err := c.Allocator.AllocateBlock(ctx, pool, bits, owner(t, uid, ref))
		if err == nil {
			return block, bits + validation.ConnectNetworkPrefixBits, nil
		}
		errs = append(errs, fmt.Errorf("pool %s: %w", p.Name, err))
	}
	return netip.Prefix{}, 0, errors.Join(errs...)
}

// Release gives back the connect subnet block of tenant t (UID uid) for
// provider network pn.
func (c *Connects) Release(ctx context.Context, t, uid, pn string, block netip.Prefix) error {
	return c.Allocator.Release(ctx, block, owner(t, uid, refPrefix+pn))
}

// ReleaseServiceNetwork gives back block, the connect subnet of the
// service network of tenant t (UID uid).
func (c *Connects) ReleaseServiceNetwork(ctx context.Context, t, uid string, block netip.Prefix) error {
	return c.Allocator.Release(ctx, block, owner(t, uid, serviceNetworkRef))
}

func (c *Connects) pools(ctx context.Context) ([]*tenant.AddressPool, error) {
	// The watch cache first; when it has no pool, a consistent read
	// before refusing: a pool just created through another replica may
	// not have reached this one's cache yet.
	out, err := c.listPools(ctx, "0")
	if err != nil || len(out) > 0 {
		return out, err
	}
	return c.listPools(ctx, "")
}

// listPools lists the ConnectSubnets pools at resourceVersion rv, by name.
func (c *Connects) listPools(ctx context.Context, rv string) ([]*tenant.AddressPool, error) {
	list, err := c.Storages.AddressPools.Store.List(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), &metainternalversion.ListOptions{ResourceVersion: rv})
	if err != nil {
		return nil, err
	}
	var out []*tenant.AddressPool
	for i := range list.(*tenant.AddressPoolList).Items {
		p := &list.(*tenant.AddressPoolList).Items[i]
		if p.Spec.Purpose == tenant.AddressPoolPurposeConnectSubnets && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Recorder is the sweepers' view of connect subnets: one stays while the
// Tenant that holds it exists. (The syncer gives back the subnets of
// connections it removes; a Tenant deleted gives back all it holds.)
type Recorder struct {
	Connects *Connects
}

var _ ipam.Recorder = Recorder{}

// Space implements ipam.Recorder.
func (r Recorder) Space() *ipam.Allocator { return r.Connects.Allocator }

// Names implements ipam.Recorder.
func (r Recorder) Names(alloc ipam.Allocation) bool { return alloc.Owner.Purpose == Purpose }

// Recorded implements ipam.Recorder: whether the Tenant alloc names still
// exists, read from etcd.
func (r Recorder) Recorded(alloc ipam.Allocation) (bool, error) {
	ctx := genericapirequest.WithNamespace(context.Background(), metav1.NamespaceNone)
	obj, err := r.Connects.Storages.Tenants.Store.Get(ctx, alloc.Owner.Tenant, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	return string(obj.(*tenant.Tenant).UID) == alloc.Owner.TenantUID, nil
}

// Read implements ipam.Recorder: the Tenants, listed once from the watch
// cache.
func (r Recorder) Read(ctx context.Context) (ipam.Records, error) {
	list, err := r.Connects.Storages.Tenants.Store.List(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	items := list.(*tenant.TenantList).Items
	tenants := make(tenantsRead, len(items))
	for i := range items {
		tenants[items[i].Name] = string(items[i].UID)
	}
	return tenants, nil
}

// tenantsRead are the Tenants one read found: the UID of each, by name.
type tenantsRead map[string]string

// Has implements ipam.Records: whether the Tenant alloc names was there.
func (t tenantsRead) Has(alloc ipam.Allocation) bool {
	uid, ok := t[alloc.Owner.Tenant]
	return ok && uid == alloc.Owner.TenantUID
}

// Reclaim implements ipam.Records: no object records connect subnets, so
// there is nothing to claim again.
func (tenantsRead) Reclaim(context.Context, ipam.Held) (int, error) { return 0, nil }
