package kindstore

import (
	"context"
	"errors"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// Server-assigned status.
//
// Some status fields are the registry's own (Kind.ServerOwnedStatus): a
// Tenant's block and public IPs, a Network's subnets and NAT gateway
// address. The store's BeginCreate and BeginUpdate hooks decide them, as
// part of the write, but the strategy's PrepareForCreate and
// PrepareForUpdate run after the hooks and reset status: to nothing on
// create, to the stored status on update. So a hook records the object as
// it leaves it (AssignStatus), in the request context that GuardedREST
// prepares (WithStatusAssignment), and the strategy copies the
// ServerOwnedStatus fields from that record and from nowhere else: what a
// request wrote into them never counts, whether the hooks are installed or
// not.

type assignmentKey struct{}

// assignment is what the hooks of one write recorded. A write may be tried
// more than once (an update retried after a conflict, a create retried with
// another generated name); each try hands the hooks and the strategy a
// fresh object, so the record names the object it belongs to.
type assignment struct {
	mu       sync.Mutex
	obj      runtime.Object
	assigned runtime.Object
}

// WithStatusAssignment returns ctx prepared for the hooks of one create or
// update to record the status they assign. GuardedREST prepares every
// write; code that writes through a store directly must prepare its
// context itself if the store's hooks assign status.
func WithStatusAssignment(ctx context.Context) context.Context {
	if _, ok := ctx.Value(assignmentKey{}).(*assignment); ok {
		return ctx
	}
	return context.WithValue(ctx, assignmentKey{}, &assignment{})
}

// errNoAssignment is returned by AssignStatus when ctx was not prepared.
var errNoAssignment = errors.New("the request context cannot carry the status the server assigns (write through GuardedREST, or prepare it with WithStatusAssignment)")

// AssignStatus records obj, as a BeginCreate or BeginUpdate hook leaves it,
// as the source of its ServerOwnedStatus fields for the rest of this try of
// the write. It fails (500) when ctx was not prepared: the assignment would
// be lost, and the hook must undo what it did and refuse the write.
func AssignStatus(ctx context.Context, obj runtime.Object) error {
	a, ok := ctx.Value(assignmentKey{}).(*assignment)
	if !ok {
		return apierrors.NewInternalError(errNoAssignment)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.obj, a.assigned = obj, obj.DeepCopyObject()
	return nil
}

// assignedStatus returns what the hooks recorded for obj in ctx.
func assignedStatus(ctx context.Context, obj runtime.Object) (runtime.Object, bool) {
	a, ok := ctx.Value(assignmentKey{}).(*assignment)
	if !ok {
		return nil, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.obj != obj || a.assigned == nil {
		return nil, false
	}
	return a.assigned, true
}
