package base

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Objects that hold one public IP.
//
// A FloatingIP and a LoadBalancer each hold one of their tenant's public
// IPs (Tenant.status.publicIPs), which no other FloatingIP, LoadBalancer or
// NAT gateway of the tenant has. PublicIPs gives it to them as part of
// their create, with a claim in the tenant-local keyspace (LocalSpace):
// the address spec.address asks for, else the lowest free one. The claim
// is owned by the tenant with Purpose "<use>:<object UID>" and Ref
// "<resource> <namespace>/<name>", and the object records the address in
// one field (PublicIPKind.Held): the registry's own status.address of a
// FloatingIP, the spec.address of a LoadBalancer (defaulted like a
// Service's clusterIP, because its status.address is what the host's load
// balancer reports). The address never changes afterwards: an update that
// omits spec.address keeps it, one that asks for another is a 422.
//
// An object is stored with its claim or not at all: a failed create gives
// the claim back, an update gives back what its tries claimed in vain once
// its outcome is known (AroundUpdate), a delete gives back what the object
// recorded (AfterDelete), and the sweeper (LocalSpace.Keep with Records)
// reclaims what a crash left unrecorded; Reclaim claims again what objects
// record and nobody holds (objects stored before their kind claimed). Dry
// runs check everything and show the address they would get, claiming
// nothing.

// PublicIPKind says where the objects of a kind ask for and record their
// public IP. T is the kind's pointer type.
type PublicIPKind[T Object] struct {
	// Resource is the resource name, as LocalRef writes it: "floatingips".
	Resource string
	// Kind is the kind, as errors name it: "FloatingIP".
	Kind string
	// Use is the use of the claims (LocalUseFloatingIP).
	Use string
	// Requested points at the address an object asks for (spec.address),
	// "" for any.
	Requested func(T) *string
	// Held points at the field that records the address an object holds:
	// what its claim is for. It may be Requested.
	Held func(T) *string
	// HeldInStatus says that Held is a status field the server owns
	// (Kind.ServerOwnedStatus): the hooks record it with AssignStatus.
	HeldInStatus bool
	// Validate checks a new object; ValidateSpecUpdate checks the spec of
	// an update (the hooks run before the strategy fills in the metadata).
	Validate           func(T) field.ErrorList
	ValidateSpecUpdate func(newObj, oldObj T) field.ErrorList
}

// PublicIPs gives the objects of one kind their public IP from their
// tenant's, in the tenant-local keyspace; see PublicIPKind. Its methods
// are the store's hooks (Install).
type PublicIPs[T Object] struct {
	Kind  PublicIPKind[T]
	Space *LocalSpace
	// Store is the storage of the kind.
	Store *genericregistry.Store
	// Quota and QuotaResource, when set, are the quota the kind counts
	// against. A create checks it (charging is GuardedREST's) before
	// claiming: over quota is a 403, never a 409 for want of an address.
	Quota         QuotaTracker
	QuotaResource string
}

// publicIPAddressPath is where every kind asks for its address.
var publicIPAddressPath = field.NewPath("spec", "address")

// Install makes p the hooks of st: creates and updates claim, updates
// give back what they claimed in vain, deletes release.
func (p *PublicIPs[T]) Install(st *Storage) {
	st.Store.BeginCreate = p.BeginCreate
	st.Store.BeginUpdate = p.BeginUpdate
	st.Store.AfterDelete = ChainAfterDelete(st.Store.AfterDelete, p.AfterDelete)
	st.Main.AroundUpdate = p.AroundUpdate
}

func (p *PublicIPs[T]) target(o T) Target {
	return Target{Resource: tenant.Resource(p.Kind.Resource), Kind: tenant.Kind(p.Kind.Kind), Name: o.GetName()}
}

// localClaim is one tenant-local claim made by a write.
type localClaim struct {
	block netip.Prefix
	owner ipam.Owner
}

// claimOf is the claim o records: the address in its Held field, owned as
// the tenant labels the server gave o say; ok is false for an object that
// records none.
func (p *PublicIPs[T]) claimOf(o T) (localClaim, bool) {
	labels := o.GetLabels()
	t := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: labels[tenancy.TenantLabel], UID: types.UID(labels[tenancy.TenantUIDLabel])}}
	addr, err := netip.ParseAddr(*p.Kind.Held(o))
	if t.Name == "" || t.UID == "" || err != nil || !addr.Is4() {
		return localClaim{}, false
	}
	return localClaim{block: netip.PrefixFrom(addr, 32), owner: LocalOwner(t, p.Kind.Use, p.Kind.Resource, o)}, true
}

// Records says whether obj, an object of the kind, records block for use:
// the sweeper's rule for the kind (LocalKind).
func (p *PublicIPs[T]) Records(obj runtime.Object, use string, block netip.Prefix) bool {
	o, ok := obj.(T)
	return ok && use == p.Kind.Use && block.Bits() == 32 && *p.Kind.Held(o) == block.Addr().String()
}

// recordsClaim says whether o, as stored, records c.
func (p *PublicIPs[T]) recordsClaim(o T, c localClaim) bool {
	use, uid, ok := ParseLocalPurpose(c.owner.Purpose)
	return ok && uid == o.GetUID() && p.Records(o, use, c.block)
}

// BeginCreate validates the new object, checks its tenant's quota, claims
// its address and records it in the Held field. The finish function gives
// the claim back if the object is not stored.
func (p *PublicIPs[T]) BeginCreate(ctx context.Context, obj runtime.Object, options *metav1.CreateOptions) (genericregistry.FinishFunc, error) {
	o := obj.(T)
	if o.GetNamespace() == "" {
		// As the strategy will: the Ref names the namespace.
		o.SetNamespace(genericapirequest.NamespaceValue(ctx))
	}
	tg := p.target(o)
	// A bad spec is a 422, not a claim.
	if errs := p.Kind.Validate(o); len(errs) > 0 {
		return nil, tg.Invalid(errs...)
	}
	// A second create of a name is AlreadyExists, not a clash of addresses
	// with the first one.
	if _, err := p.Store.Get(ctx, o.GetName(), &metav1.GetOptions{}); err == nil {
		return nil, apierrors.NewAlreadyExists(tg.Resource, o.GetName())
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	t, err := p.Space.CallerTenant(ctx, tg)
	if err != nil {
		return nil, err
	}
	dryRun := options != nil && len(options.DryRun) > 0
	if p.Quota != nil && p.QuotaResource != "" {
		if err := p.Quota.Reserve(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), t.Name, p.QuotaResource, true); err != nil {
			return nil, err
		}
	}
	owner := LocalOwner(t, p.Kind.Use, p.Kind.Resource, o)
	addr, err := p.Space.ClaimPublicIP(ctx, t, *p.Kind.Requested(o), owner, publicIPAddressPath, tg, dryRun)
	if err != nil {
		return nil, err
	}
	var claimed []localClaim
	if !dryRun {
		claimed = append(claimed, localClaim{block: netip.PrefixFrom(addr, 32), owner: owner})
	}
	*p.Kind.Held(o) = addr.String()
	if p.Kind.HeldInStatus {
		if err := AssignStatus(ctx, o); err != nil {
			p.release(ctx, claimed)
			return nil, err
		}
	}
	// A create through an update (server-side apply of a new object) calls
	// finish before it writes: the update's outcome decides (AroundUpdate).
	rec := publicIPRecordFrom(ctx)
	rec.add(claimed...)
	return func(ctx context.Context, success bool) {
		if !success {
			rec.forget(claimed...)
			p.release(ctx, claimed)
		}
	}, nil
}

// BeginUpdate keeps the address: an update that omits spec.address keeps
// the stored one, one that changes it is refused (422, by the kind's
// validation), and whatever the request wrote into a Held status field
// never counts. An object stored before its kind claimed, which holds no
// address, gets one (spec.address, else the lowest free one).
func (p *PublicIPs[T]) BeginUpdate(ctx context.Context, obj, old runtime.Object, options *metav1.UpdateOptions) (genericregistry.FinishFunc, error) {
	n, o := obj.(T), old.(T)
	tg := p.target(o)
	nothing := func(context.Context, bool) {}
	// As Kind.KeepAssigned does after this hook.
	if *p.Kind.Requested(n) == "" {
		*p.Kind.Requested(n) = *p.Kind.Requested(o)
	}
	held := *p.Kind.Held(o)
	if p.Kind.HeldInStatus {
		*p.Kind.Held(n) = held
	}
	// A refused change is a 422, not a claim.
	if errs := p.Kind.ValidateSpecUpdate(n, o); len(errs) > 0 {
		return nil, tg.Invalid(errs...)
	}
	if held != "" {
		return nothing, nil
	}
	t, err := p.Space.CallerTenant(ctx, tg)
	if err != nil {
		return nil, err
	}
	dryRun := options != nil && len(options.DryRun) > 0
	owner := LocalOwner(t, p.Kind.Use, p.Kind.Resource, o)
	addr, err := p.Space.ClaimPublicIP(ctx, t, *p.Kind.Requested(n), owner, publicIPAddressPath, tg, dryRun)
	if err != nil {
		return nil, err
	}
	var claimed []localClaim
	if !dryRun {
		claimed = append(claimed, localClaim{block: netip.PrefixFrom(addr, 32), owner: owner})
	}
	*p.Kind.Held(n) = addr.String()
	if p.Kind.HeldInStatus {
		if err := AssignStatus(ctx, n); err != nil {
			p.release(ctx, claimed)
			return nil, err
		}
	}
	publicIPRecordFrom(ctx).add(claimed...)
	return nothing, nil
}

// publicIPRecord collects the claims the tries of one update made.
type publicIPRecord struct {
	mu    sync.Mutex
	added []localClaim
}

type publicIPRecordKey struct{}

// publicIPRecordFrom returns the record of the update in ctx; outside an
// update, one that nobody reads.
func publicIPRecordFrom(ctx context.Context) *publicIPRecord {
	if rec, ok := ctx.Value(publicIPRecordKey{}).(*publicIPRecord); ok {
		return rec
	}
	return &publicIPRecord{}
}

func (r *publicIPRecord) add(cs ...localClaim) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.added = append(r.added, cs...)
}

func (r *publicIPRecord) forget(cs ...localClaim) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.added = slices.DeleteFunc(r.added, func(c localClaim) bool { return slices.Contains(cs, c) })
}

func (r *publicIPRecord) take() []localClaim {
	r.mu.Lock()
	defer r.mu.Unlock()
	added := r.added
	r.added = nil
	return added
}

// AroundUpdate gives back, once an update is stored or refused, the
// claims its tries made that the object does not record: a try that a
// concurrent write made retry, a create through an update (server-side
// apply) that lost to another create. An update that failed otherwise than
// for certain before anything was written (not a 4xx) gives back nothing:
// whether it was stored is not certain, so the sweeper, which reads the
// object from etcd, reclaims what it left unrecorded. Before giving a
// claim back it reads the object again from etcd, and keeps what that
// records (a concurrent update with the same claim may have stored it).
func (p *PublicIPs[T]) AroundUpdate(ctx context.Context) (context.Context, func(runtime.Object, error)) {
	rec := &publicIPRecord{}
	return context.WithValue(ctx, publicIPRecordKey{}, rec), func(stored runtime.Object, err error) {
		added := rec.take()
		if len(added) == 0 || (err != nil && !certainlyNotStored(err)) {
			return
		}
		ctx := context.WithoutCancel(ctx)
		var unrecorded []localClaim
		for _, c := range added {
			if o, ok := stored.(T); !ok || err != nil || !p.recordsClaim(o, c) {
				unrecorded = append(unrecorded, c)
			}
		}
		p.release(ctx, slices.DeleteFunc(unrecorded, func(c localClaim) bool {
			recorded, err := p.recordedNow(ctx, c)
			return recorded || err != nil // the sweeper will
		}))
	}
}

// recordedNow says whether the object c names records c, as etcd has it.
func (p *PublicIPs[T]) recordedNow(ctx context.Context, c localClaim) (bool, error) {
	_, ns, name, ok := ParseLocalRef(c.owner.Ref)
	if !ok {
		return false, nil
	}
	obj, err := p.Store.Get(tenancy.WithTenant(genericapirequest.WithNamespace(ctx, ns), c.owner.Tenant), name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	o, ok := obj.(T)
	return ok && p.recordsClaim(o, c), nil
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

// AfterDelete gives back the address of a deleted object.
func (p *PublicIPs[T]) AfterDelete(obj runtime.Object, options *metav1.DeleteOptions) {
	if options != nil && len(options.DryRun) > 0 {
		return
	}
	if o, ok := obj.(T); ok {
		if c, ok := p.claimOf(o); ok {
			p.release(context.Background(), []localClaim{c})
		}
	}
}

func (p *PublicIPs[T]) release(ctx context.Context, cs []localClaim) {
	ctx = context.WithoutCancel(ctx)
	for _, c := range cs {
		p.Space.Release(ctx, c.block, c.owner)
	}
}

// Reclaim claims again, in the tenant-local keyspace, the addresses that
// stored objects record but nobody holds: those of objects stored before
// their kind claimed (an upgrade), or that a release took from under them.
// It reads the objects from the watch cache and confirms each from etcd
// before claiming, only among its tenant's public IPs. A claim that
// someone else holds by then is reported: two objects record the same
// address, which a person must settle. It returns how many it claimed.
func (p *PublicIPs[T]) Reclaim(ctx context.Context) (int, error) {
	allocs, err := p.Space.Allocator.ListAll(ctx)
	if err != nil && allocs == nil {
		return 0, err
	}
	held := map[netip.Prefix]string{}
	for _, a := range allocs {
		held[a.Block] = a.Owner.Purpose
	}
	all := tenancy.WithAllTenants(genericapirequest.WithNamespace(ctx, metav1.NamespaceAll))
	list, err := p.Store.List(all, &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return 0, err
	}
	reclaimed := 0
	var errs []error
	err = meta.EachListItem(list, func(item runtime.Object) error {
		o, ok := item.(T)
		if !ok {
			return nil
		}
		c, ok := p.claimOf(o)
		if !ok || held[c.block] == c.owner.Purpose {
			return nil
		}
		got, err := p.reclaim(ctx, o, c)
		reclaimed += got
		if err != nil {
			errs = append(errs, fmt.Errorf("%s of tenant %s: %w", c.owner.Ref, c.owner.Tenant, err))
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	return reclaimed, errors.Join(errs...)
}

// reclaim claims c, the unheld claim of o as the cache had it, if o as
// etcd has it records c.
func (p *PublicIPs[T]) reclaim(ctx context.Context, o T, c localClaim) (int, error) {
	scoped := tenancy.WithTenant(genericapirequest.WithNamespace(ctx, o.GetNamespace()), c.owner.Tenant)
	obj, err := p.Store.Get(scoped, o.GetName(), &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if cur, ok := obj.(T); !ok || !p.recordsClaim(cur, c) {
		return 0, nil
	}
	tobj, err := p.Space.Tenants.Get(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), c.owner.Tenant, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	t := tobj.(*tenant.Tenant)
	if string(t.UID) != c.owner.TenantUID {
		return 0, nil
	}
	if err := p.Space.Allocator.ClaimBlock(ctx, p.Space.PublicIPPool(t), c.block, c.owner); err != nil {
		return 0, fmt.Errorf("claiming %s again: %w", c.block.Addr(), err)
	}
	return 1, nil
}
