package claims

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Claim is one block of a keyspace, claimed for an owner.
type Claim = ipam.Claim

// Object is the pointer type of a stored kind.
type Object interface {
	runtime.Object
	metav1.Object
}

// Ledger is how the objects of one kind hold claims in one keyspace: which
// claims a stored object records (Held), and where to read the object a
// claim names. Tenant blocks and public IPs, Network subnets and NAT
// addresses, FloatingIP and LoadBalancer addresses and AddressPool space
// are each a Ledger; their create and update hooks make the claims and
// record them in the update's Record, and Ledger does the rest the same way
// for all: what an update gives back once its outcome is known
// (AroundUpdate), what a delete gives back (AfterDelete), which claims the
// sweeper keeps (it is an ipam.Recorder), and the repair of claims that
// objects record and nobody holds (Reclaim).
//
// A claim names its object by Owner.Ref, "<resource> [<namespace>/]<name>"
// (Ref); the claims of Tenants and AddressPools in their own keyspaces
// carry no Ref and name the object by Owner.Tenant.
type Ledger[T Object] struct {
	// Resource is the resource name of the kind, as Ref writes it; "" for
	// a kind whose claims carry no Ref.
	Resource string
	// Keyspace is where the claims live.
	Keyspace *ipam.Allocator
	// Store reads the objects.
	Store *genericregistry.Store
	// Held returns the claims obj records.
	Held func(obj T) []Claim
	// Pool, when set, returns the pool from which Reclaim claims again c,
	// a claim that o records and nobody holds, for o's Tenant t; when
	// nil, Reclaim does nothing.
	Pool func(t *tenant.Tenant, o T, c Claim) (ipam.Pool, error)
	// Tenants reads the Tenants, for Reclaim.
	Tenants *genericregistry.Store
}

var _ ipam.Recorder = &Ledger[*tenant.Tenant]{}

// locate returns the context and name to read the object c names with.
func (k *Ledger[T]) locate(ctx context.Context, owner ipam.Owner) (context.Context, string, bool) {
	ns, name := metav1.NamespaceNone, owner.Tenant
	if k.Resource != "" {
		resource, namespace, n, ok := ParseRef(owner.Ref)
		if !ok || resource != k.Resource {
			return nil, "", false
		}
		ns, name = namespace, n
	}
	return tenancy.WithTenant(genericapirequest.WithNamespace(ctx, ns), owner.Tenant), name, true
}

// get reads the object owner names; (nil, nil) if there is none.
func (k *Ledger[T]) get(ctx context.Context, owner ipam.Owner, options *metav1.GetOptions) (T, bool, error) {
	var none T
	scoped, name, ok := k.locate(ctx, owner)
	if !ok {
		return none, false, nil
	}
	obj, err := k.Store.Get(scoped, name, options)
	if apierrors.IsNotFound(err) {
		return none, false, nil
	}
	if err != nil {
		return none, false, err
	}
	o, ok := obj.(T)
	return o, ok, nil
}

// records says whether obj records c.
func (k *Ledger[T]) records(obj runtime.Object, c Claim) bool {
	o, ok := obj.(T)
	return ok && c.In(k.Held(o))
}

// Space implements ipam.Recorder.
func (k *Ledger[T]) Space() *ipam.Allocator { return k.Keyspace }

// Names implements ipam.Recorder: whether alloc is held for an object of
// this kind.
func (k *Ledger[T]) Names(alloc ipam.Allocation) bool {
	if k.Resource == "" {
		return alloc.Owner.Ref == ""
	}
	resource, _, _, ok := ParseRef(alloc.Owner.Ref)
	return ok && resource == k.Resource
}

// Recorded implements ipam.Recorder: whether the object alloc names still
// records it. It reads the watch cache, and confirms from etcd before
// letting an allocation go.
func (k *Ledger[T]) Recorded(alloc ipam.Allocation) (bool, error) {
	c := Claim{Block: alloc.Block, Owner: alloc.Owner}
	for _, options := range []*metav1.GetOptions{{ResourceVersion: "0"}, {}} {
		o, found, err := k.get(context.Background(), alloc.Owner, options)
		if err != nil {
			return true, err
		}
		if found && c.In(k.Held(o)) {
			return true, nil
		}
	}
	return false, nil
}

// AroundUpdate gives back, once an update is stored or refused, the claims
// its tries made or gave up that the object does not record: a try that a
// concurrent write made retry, an address the update gives up, a create
// through an update (server-side apply) that lost to another create. An
// update refused for certain before anything was written (a 4xx answer)
// gives back what its tries claimed. Any other failure gives back nothing:
// whether the update was stored is not certain (an answer lost after etcd
// applied it), so the sweeper, which reads the object from etcd, reclaims
// what it left unrecorded. Holds are given back in any case.
//
// Before giving a claim back it reads the object again from etcd, and
// keeps what that records: a concurrent update may have stored the same
// claim. That leaves one race: between a second update's claim of what
// the object still holds (which succeeds without writing) and its store.
func (k *Ledger[T]) AroundUpdate(ctx context.Context) (context.Context, func(runtime.Object, error)) {
	rec := kindstore.RecordOf(ctx)
	return ctx, func(stored runtime.Object, err error) {
		added, dropped, holds := rec.Take()
		ctx := context.WithoutCancel(ctx)
		defer func() {
			for _, h := range holds {
				release(ctx, h.Space, h.Claim)
			}
		}()
		if err != nil && !CertainlyNotStored(err) {
			return
		}
		candidates := added
		if err == nil {
			candidates = append(added, dropped...)
		}
		var unrecorded []Claim
		for _, c := range candidates {
			if err != nil || !k.records(stored, c) {
				unrecorded = append(unrecorded, c)
			}
		}
		// One read from etcd per object named (the claims of an update
		// usually all name the object updated).
		type current struct {
			held []Claim
			err  error
		}
		read := map[ipam.Owner]current{}
		for _, c := range unrecorded {
			named := ipam.Owner{Tenant: c.Owner.Tenant, Ref: c.Owner.Ref}
			cur, ok := read[named]
			if !ok {
				o, found, err := k.get(ctx, c.Owner, &metav1.GetOptions{})
				if found {
					cur.held = k.Held(o)
				}
				cur.err = err
				read[named] = cur
			}
			if cur.err != nil || c.In(cur.held) {
				continue // the sweeper will, or it is recorded after all
			}
			release(ctx, k.Keyspace, c)
		}
	}
}

// CertainlyNotStored says whether a write that failed with err was refused
// before anything was written: a 4xx answer other than a timeout.
func CertainlyNotStored(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests
}

// AfterDelete gives back the claims a deleted object recorded.
func (k *Ledger[T]) AfterDelete(obj runtime.Object, options *metav1.DeleteOptions) {
	if options != nil && len(options.DryRun) > 0 {
		return
	}
	if o, ok := obj.(T); ok {
		k.Release(context.Background(), k.Held(o)...)
	}
}

// Release gives back cs. A failure is logged: the sweeper reclaims what
// nobody records.
func (k *Ledger[T]) Release(ctx context.Context, cs ...Claim) {
	ctx = context.WithoutCancel(ctx)
	for _, c := range cs {
		release(ctx, k.Keyspace, c)
	}
}

func release(ctx context.Context, space *ipam.Allocator, c Claim) {
	if err := space.Release(ctx, c.Block, c.Owner); err != nil {
		klog.FromContext(ctx).Error(err, "Releasing a claim; the sweeper will", "block", c.Block, "tenant", c.Owner.Tenant, "purpose", c.Owner.Purpose, "ref", c.Owner.Ref)
	}
}

// Read implements ipam.Recorder: it lists the objects once from the watch
// cache, and keeps what they record (ipam.Records): the sweep asks it
// about every allocation of the keyspace, and Reclaim claims again from
// it what nobody holds.
func (k *Ledger[T]) Read(ctx context.Context) (ipam.Records, error) {
	all := tenancy.WithAllTenants(genericapirequest.WithNamespace(ctx, metav1.NamespaceAll))
	list, err := k.Store.List(all, &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	r := &records[T]{ledger: k, has: map[recorded]struct{}{}}
	err = meta.EachListItem(list, func(item runtime.Object) error {
		o, ok := item.(T)
		if !ok {
			return nil
		}
		held := k.Held(o)
		for _, c := range held {
			r.has[recordedOf(c)] = struct{}{}
		}
		if k.Pool != nil && len(held) > 0 {
			r.objects = append(r.objects, held)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// recorded is what makes two claims the same (Claim.Same).
type recorded struct {
	block     netip.Prefix
	purpose   string
	tenantUID string
}

func recordedOf(c Claim) recorded {
	return recorded{block: c.Block, purpose: c.Owner.Purpose, tenantUID: c.Owner.TenantUID}
}

// records are what one read of a Ledger's objects found: every claim
// they record, and the claims of each object for Reclaim (when the ledger
// has a Pool to claim them again from).
type records[T Object] struct {
	ledger  *Ledger[T]
	has     map[recorded]struct{}
	objects [][]Claim
}

// Has implements ipam.Records.
func (r *records[T]) Has(alloc ipam.Allocation) bool {
	_, ok := r.has[recordedOf(Claim{Block: alloc.Block, Owner: alloc.Owner})]
	return ok
}

// Reclaim implements ipam.Records: it claims again the claims that the
// objects read record but nobody holds: those of objects stored before
// their kind claimed (an upgrade), or that a release took from under them
// (see AroundUpdate). It confirms each object from etcd before claiming,
// only in the pool Pool names. A claim that someone else holds by then is
// reported: two objects record the same space, which a person must
// settle. It returns how many it claimed.
func (r *records[T]) Reclaim(ctx context.Context, held ipam.Held) (int, error) {
	// An allocation that did not decode is not in held: it counts as not
	// held, and is claimed again only if its block is free.
	reclaimed := 0
	var errs []error
	for _, claims := range r.objects {
		var missing []Claim
		for _, c := range claims {
			if held[c.Block] != c.Owner.Purpose {
				missing = append(missing, c)
			}
		}
		if len(missing) == 0 {
			continue
		}
		got, err := r.ledger.reclaim(ctx, missing)
		reclaimed += got
		if err != nil {
			errs = append(errs, fmt.Errorf("%s of tenant %s: %w", r.ledger.describe(missing[0].Owner), missing[0].Owner.Tenant, err))
		}
	}
	return reclaimed, errors.Join(errs...)
}

// describe names the object owner names, for errors.
func (k *Ledger[T]) describe(owner ipam.Owner) string {
	if k.Resource == "" {
		return owner.Tenant
	}
	return owner.Ref
}

// reclaim claims missing, the unheld claims of one object as the cache had
// it, for the object as etcd has it.
func (k *Ledger[T]) reclaim(ctx context.Context, missing []Claim) (int, error) {
	cur, found, err := k.get(ctx, missing[0].Owner, &metav1.GetOptions{})
	if err != nil || !found {
		return 0, err
	}
	tobj, err := k.Tenants.Get(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), missing[0].Owner.Tenant, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	t := tobj.(*tenant.Tenant)
	held := k.Held(cur)
	reclaimed := 0
	var errs []error
	for _, c := range missing {
		if !c.In(held) || string(t.UID) != c.Owner.TenantUID {
			continue
		}
		pool, err := k.Pool(t, cur, c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := k.Keyspace.ClaimBlock(ctx, pool, c.Block, c.Owner); err != nil {
			errs = append(errs, fmt.Errorf("claiming %s again: %w", c.Block, err))
			continue
		}
		reclaimed++
	}
	return reclaimed, errors.Join(errs...)
}

// Hooks returns the kind's own create and update hooks, which make the
// claims, with those through which k gives back what updates and deletes
// leave unrecorded.
func (k *Ledger[T]) Hooks(create, update kindstore.WriteFunc[T]) kindstore.Hooks {
	h := kindstore.OnWrite(create, update)
	h.AroundUpdate, h.AfterDelete = k.AroundUpdate, k.AfterDelete
	return h
}
