package kindstore

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// The write of one object.
//
// A create or an update goes through GuardedREST, then genericregistry's
// store: the validation (once, on a copy: see validation), the kind's
// hooks in the order they were installed, the strategy, the admission
// checks, the quota, the write. The hooks of a kind see the write as one
// typed value, Write: the object, the stored object, the caller's tenant,
// whether it is a dry run, the Record of the claims it makes and gives
// up, and the status it assigns. The store calls its hooks with the
// request context only, so GuardedREST prepares one writeState per request
// there; nothing else of a write travels in the context.
//
// Some status fields are the registry's own (Kind.ServerOwnedStatus): a
// Tenant's block and public IPs, a Network's subnets and NAT gateway
// address. The hooks decide them, but the strategy's PrepareForCreate and
// PrepareForUpdate run after the hooks and reset status: to nothing on
// create, to the stored status on update. So a hook records the object as
// it leaves it (Write.AssignStatus), and the strategy copies the
// ServerOwnedStatus fields from that record and from nowhere else: what a
// request wrote into them never counts, whether hooks are installed or not.

// Write is one create or update of an object of kind T, as the kind's
// hooks see it. A write may be tried more than once (an update retried
// after a conflict, a create retried with another generated name); each
// try is a Write of its own, and Claims is shared by the tries.
type Write[T Object] struct {
	// Obj is the object to store; the hooks may change it.
	Obj T
	// Old is the stored object of an update; the zero T on a create
	// (also a create through an update: server-side apply of a new object).
	Old T
	// Update says that Old is stored and Obj replaces it.
	Update bool
	// DryRun says that the write checks everything and stores nothing:
	// hooks claim nothing and show what they would assign.
	DryRun bool
	// Tenant and TenantUID are the tenant the caller acts as, as the guard
	// resolved it; empty for the provider's kinds.
	Tenant    string
	TenantUID types.UID
	// Claims records the claims the request's tries made and gave up.
	Claims *Record

	state *writeState
}

// AssignStatus records Obj, as the hook leaves it, as the source of its
// ServerOwnedStatus fields for the rest of this try of the write. It fails
// (500) when the write does not come through GuardedREST: the assignment
// would be lost, and the hook must undo what it did and refuse the write.
func (w *Write[T]) AssignStatus() error {
	if w.state == nil {
		return apierrors.NewInternalError(errNoWriteState)
	}
	w.state.mu.Lock()
	defer w.state.mu.Unlock()
	w.state.obj, w.state.assigned = w.Obj, w.Obj.DeepCopyObject()
	return nil
}

// WriteFunc is a kind's hook on the creates or the updates of its objects:
// it may refuse the write, change w.Obj, and return the function told
// whether the object was stored.
type WriteFunc[T Object] func(ctx context.Context, w *Write[T]) (genericregistry.FinishFunc, error)

// OnWrite returns the hooks that run create on every create and update on
// every update of the kind's objects (either may be nil).
func OnWrite[T Object](create, update WriteFunc[T]) Hooks {
	var h Hooks
	if create != nil {
		h.BeginCreate = func(ctx context.Context, obj runtime.Object, options *metav1.CreateOptions) (genericregistry.FinishFunc, error) {
			w := newWrite[T](ctx, obj)
			w.DryRun = options != nil && len(options.DryRun) > 0
			return create(ctx, w)
		}
	}
	if update != nil {
		h.BeginUpdate = func(ctx context.Context, obj, old runtime.Object, options *metav1.UpdateOptions) (genericregistry.FinishFunc, error) {
			w := newWrite[T](ctx, obj)
			w.Old, w.Update = old.(T), true
			w.DryRun = options != nil && len(options.DryRun) > 0
			return update(ctx, w)
		}
	}
	return h
}

func newWrite[T Object](ctx context.Context, obj runtime.Object) *Write[T] {
	state := stateFrom(ctx)
	name, _ := tenancy.TenantFrom(ctx)
	return &Write[T]{Obj: obj.(T), Tenant: name, TenantUID: tenancy.TenantUIDFrom(ctx), Claims: state.claims(), state: state}
}

// writeState is what the tries of one request share: the status the hooks
// of the current try assigned, and the claims record.
type writeState struct {
	mu       sync.Mutex
	obj      runtime.Object
	assigned runtime.Object
	record   Record
}

type writeStateKey struct{}

// withWrite returns ctx prepared for one create or update.
func withWrite(ctx context.Context) context.Context {
	if _, ok := ctx.Value(writeStateKey{}).(*writeState); ok {
		return ctx
	}
	return context.WithValue(ctx, writeStateKey{}, &writeState{})
}

// stateFrom returns the state of the write in ctx; nil outside GuardedREST
// (a write through the store directly).
func stateFrom(ctx context.Context) *writeState {
	s, _ := ctx.Value(writeStateKey{}).(*writeState)
	return s
}

// claims returns the record of s; outside GuardedREST, one that nobody
// reads (what it would have given back, the sweeper does).
func (s *writeState) claims() *Record {
	if s == nil {
		return &Record{}
	}
	return &s.record
}

// RecordOf returns the claims record of the write in ctx, for the
// AroundUpdate hook that settles it once the outcome is known.
func RecordOf(ctx context.Context) *Record {
	return stateFrom(ctx).claims()
}

var errNoWriteState = errors.New("the write did not come through the guarded storage, which carries the status the server assigns")

// assignedStatus returns what the hooks recorded for obj in ctx.
func assignedStatus(ctx context.Context, obj runtime.Object) (runtime.Object, bool) {
	s := stateFrom(ctx)
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.obj != obj || s.assigned == nil {
		return nil, false
	}
	return s.assigned, true
}

// Record collects, over the tries of one write (a conflict with a
// concurrent write makes the store try an update again), the claims they
// made, the claims of the stored object they give up, and holds: claims
// kept only while the write runs.
type Record struct {
	mu             sync.Mutex
	added, dropped []ipam.Claim
	holds          []Hold
	carried        map[reflect.Type]any
}

// Hold is a claim in Space kept only while the write runs.
type Hold struct {
	Space *ipam.Allocator
	Claim ipam.Claim
}

// Add records claims a try made.
func (r *Record) Add(cs ...ipam.Claim) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.added = append(r.added, cs...)
}

// Drop records claims of the stored object that the write gives up.
func (r *Record) Drop(cs ...ipam.Claim) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropped = append(r.dropped, cs...)
}

// Forget unrecords claims a try made and gave back itself.
func (r *Record) Forget(cs ...ipam.Claim) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.added = slices.DeleteFunc(r.added, func(c ipam.Claim) bool { return c.In(cs) })
}

// Hold records c, claimed in space for the write only: it is given back
// once the write is over, stored or not.
func (r *Record) Hold(space *ipam.Allocator, c ipam.Claim) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range r.holds {
		if h.Space == space && h.Claim.Same(c) {
			return
		}
	}
	r.holds = append(r.holds, Hold{space, c})
}

// Holds returns the claims held so far.
func (r *Record) Holds() []ipam.Claim {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]ipam.Claim, len(r.holds))
	for i, h := range r.holds {
		out[i] = h.Claim
	}
	return out
}

// Take returns what the tries recorded and empties the record.
func (r *Record) Take() (added, dropped []ipam.Claim, holds []Hold) {
	r.mu.Lock()
	defer r.mu.Unlock()
	added, dropped, holds = r.added, r.dropped, r.holds
	r.added, r.dropped, r.holds = nil, nil, nil
	return added, dropped, holds
}

// Carry keeps v for the write's later tries (a hook that made its claims
// in one try need not make them again in the next); one value per type.
func Carry[V any](r *Record, v V) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.carried == nil {
		r.carried = map[reflect.Type]any{}
	}
	r.carried[reflect.TypeFor[V]()] = v
}

// Carried returns the value of type V an earlier try of the write kept.
func Carried[V any](r *Record) (V, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.carried[reflect.TypeFor[V]()].(V)
	return v, ok
}
