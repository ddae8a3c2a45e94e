package claims

import (
	"context"
	"net/netip"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Objects that hold one public IP.
//
// A FloatingIP and a LoadBalancer each hold one of their tenant's public
// IPs (Tenant.status.publicIPs), which no other FloatingIP, LoadBalancer or
// NAT gateway of the tenant has. PublicIPs gives it to them as part of
// their create, with a claim in the tenant space (TenantSpace):
// the address spec.address asks for, else the lowest free one. The claim
// is owned by the tenant with Purpose "<use>:<object UID>" and Ref
// "<resource> <namespace>/<name>", and the object records the address in
// one field (PublicIP.Held): the registry's own status.address of a
// FloatingIP, the spec.address of a LoadBalancer (defaulted like a
// Service's clusterIP, because its status.address is what the host's load
// balancer reports). The address never changes afterwards: an update that
// omits spec.address keeps it, one that asks for another is a 422.
//
// An object is stored with its claim or not at all: a failed create gives
// the claim back, an update gives back what its tries claimed in vain once
// its outcome is known (AroundUpdate), a delete gives back what the object
// recorded (AfterDelete), and the sweeper reclaims what a crash left
// unrecorded; Reclaim claims again what objects
// record and nobody holds (objects stored before their kind claimed). Dry
// runs check everything and show the address they would get, claiming
// nothing.

// PublicIP says where the objects of a kind ask for and record their
// public IP. T is the kind's pointer type.
type PublicIP[T Object] struct {
	// Resource is the resource name, as Ref writes it: "floatingips".
	Resource string
	// Kind is the kind, as errors name it: "FloatingIP".
	Kind string
	// Use is the use of the claims (UseFloatingIP).
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
}

// PublicIPs gives the objects of one kind their public IP from their
// tenant's, in the tenant space; see PublicIP.
type PublicIPs[T Object] struct {
	Of    PublicIP[T]
	Space *TenantSpace
	// Claims is the kind's claims in the tenant space.
	Claims *Ledger[T]
	// Store is the storage of the kind.
	Store *genericregistry.Store
	// Quota and QuotaResource, when set, are the quota the kind counts
	// against. A create checks it (charging is GuardedREST's) before
	// claiming: over quota is a 403, never a 409 for want of an address.
	Quota         kindstore.QuotaTracker
	QuotaResource string
}

// InstallPublicIPs gives the objects of st their public IP as of says,
// from space (nothing when space is nil): creates and updates claim,
// updates give back what they claimed in vain, deletes release, and the
// sweepers learn which claims the objects record.
func InstallPublicIPs[T Object](st *kindstore.Storage, of PublicIP[T], space *TenantSpace) *PublicIPs[T] {
	if space == nil {
		return nil
	}
	p := &PublicIPs[T]{Of: of, Space: space, Store: st.Store, Quota: st.Main.Quota, QuotaResource: st.Main.QuotaResource}
	p.Claims = &Ledger[T]{
		Resource: of.Resource,
		Keyspace: space.Allocator,
		Store:    st.Store,
		Held:     p.held,
		Tenants:  space.tenants(),
		Pool: func(t *tenant.Tenant, _ T, c Claim) (ipam.Pool, error) {
			return space.PublicIPPool(t), nil
		},
	}
	st.Install(p.Claims.Hooks(p.Create, p.Update))
	st.Recorders = append(st.Recorders, p.Claims)
	return p
}

// publicIPAddressPath is where every kind asks for its address.
var publicIPAddressPath = field.NewPath("spec", "address")

func (p *PublicIPs[T]) subject(o T) Subject {
	return Subject{Resource: tenant.Resource(p.Of.Resource), Kind: tenant.Kind(p.Of.Kind), Name: o.GetName()}
}

// held is the claim o records: the address in its Held field, owned as
// the tenant labels the server gave o say; none for an object that
// records none.
func (p *PublicIPs[T]) held(o T) []Claim {
	t, ok := labelledTenant(o)
	addr, err := netip.ParseAddr(*p.Of.Held(o))
	if !ok || err != nil || !addr.Is4() {
		return nil
	}
	return []Claim{{Block: netip.PrefixFrom(addr, 32), Owner: OwnerFor(t, p.Of.Use, p.Of.Resource, o)}}
}

// labelledTenant is the Tenant that the labels the server gave o name.
func labelledTenant(o metav1.Object) (*tenant.Tenant, bool) {
	labels := o.GetLabels()
	t := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: labels[tenancy.TenantLabel], UID: types.UID(labels[tenancy.TenantUIDLabel])}}
	return t, t.Name != "" && t.UID != ""
}

// Create checks the new object's tenant's quota, claims its address and
// records it in the Held field. The finish function gives the claim back
// if the object is not stored.
func (p *PublicIPs[T]) Create(ctx context.Context, w *kindstore.Write[T]) (genericregistry.FinishFunc, error) {
	o := w.Obj
	if o.GetNamespace() == "" {
		// As the strategy will: the Ref names the namespace.
		o.SetNamespace(genericapirequest.NamespaceValue(ctx))
	}
	sub := p.subject(o)
	// A second create of a name is AlreadyExists, not a clash of addresses
	// with the first one.
	if _, err := p.Store.Get(ctx, o.GetName(), &metav1.GetOptions{}); err == nil {
		return nil, apierrors.NewAlreadyExists(sub.Resource, o.GetName())
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	t, err := p.Space.CallerTenant(ctx, w.Tenant, w.TenantUID, sub)
	if err != nil {
		return nil, err
	}
	// Over quota claims nothing: the charge of the create (or, outside
	// GuardedREST, a dry run of it) answers first.
	if charged, err := kindstore.ChargeOutcome(ctx); charged {
		if err != nil {
			return nil, err
		}
	} else if p.Quota != nil && p.QuotaResource != "" {
		if err := p.Quota.Reserve(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), t.Name, p.QuotaResource, true); err != nil {
			return nil, err
		}
	}
	claimed, err := p.claim(ctx, w, t, o, sub)
	if err != nil {
		return nil, err
	}
	// A create through an update (server-side apply of a new object) calls
	// finish before it writes: the update's outcome decides (AroundUpdate).
	return func(ctx context.Context, success bool) {
		if !success {
			w.Claims.Forget(claimed...)
			p.Claims.Release(ctx, claimed...)
		}
	}, nil
}

// Update keeps the address: an update that omits spec.address keeps
// the stored one, one that changes it is refused (422, by the kind's
// validation), and whatever the request wrote into a Held status field
// never counts. An object stored before its kind claimed, which holds no
// address, gets one (spec.address, else the lowest free one).
func (p *PublicIPs[T]) Update(ctx context.Context, w *kindstore.Write[T]) (genericregistry.FinishFunc, error) {
	n, o := w.Obj, w.Old
	sub := p.subject(o)
	nothing := func(context.Context, bool) {}
	// As Kind.KeepAssigned does after this hook.
	if *p.Of.Requested(n) == "" {
		*p.Of.Requested(n) = *p.Of.Requested(o)
	}
	held := *p.Of.Held(o)
	if p.Of.HeldInStatus {
		*p.Of.Held(n) = held
	}
	if held != "" {
		return nothing, nil
	}
	t, err := p.Space.CallerTenant(ctx, w.Tenant, w.TenantUID, sub)
	if err != nil {
		return nil, err
	}
	if _, err := p.claim(ctx, w, t, o, sub); err != nil {
		return nil, err
	}
	return nothing, nil
}

// claim claims for w.Obj, whose stored identity is id (the request may not
// carry its UID), the address it asks for (else the lowest free one of t's),
// records it in w.Obj's Held field and in the write's record, and returns
// the claim made (none in a dry run, which only checks and shows the
// address). On error it has given back what it claimed.
func (p *PublicIPs[T]) claim(ctx context.Context, w *kindstore.Write[T], t *tenant.Tenant, id T, sub Subject) ([]Claim, error) {
	o, dryRun := w.Obj, w.DryRun
	owner := OwnerFor(t, p.Of.Use, p.Of.Resource, id)
	addr, err := p.Space.ClaimPublicIP(ctx, t, *p.Of.Requested(o), owner, publicIPAddressPath, sub, dryRun)
	if err != nil {
		return nil, err
	}
	var claimed []Claim
	if !dryRun {
		claimed = append(claimed, Claim{Block: netip.PrefixFrom(addr, 32), Owner: owner})
	}
	*p.Of.Held(o) = addr.String()
	if p.Of.HeldInStatus {
		if err := w.AssignStatus(); err != nil {
			p.Claims.Release(ctx, claimed...)
			return nil, err
		}
	}
	w.Claims.Add(claimed...)
	return claimed, nil
}
