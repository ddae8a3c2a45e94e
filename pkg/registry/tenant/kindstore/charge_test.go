package kindstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apiserver"
	"tenant.io/tenant-apiserver/pkg/registry/registrytest"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/network"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// gatedQuota is a quota whose charges wait for a gate to open (when set)
// and are refused with refuse (when set); it counts what it was asked.
type gatedQuota struct {
	mu                 sync.Mutex
	reserved, released int
	started            chan struct{} // closed by the first Reserve
	gate               chan struct{} // Reserve waits for it, when set
	refuse             error
}

func (q *gatedQuota) Reserve(context.Context, string, string, bool) error {
	q.mu.Lock()
	select {
	case <-q.started:
	default:
		close(q.started)
	}
	q.mu.Unlock()
	if q.gate != nil {
		select {
		case <-q.gate:
		case <-time.After(10 * time.Second):
			return errors.New("the charge waited 10 s for the kind's hook")
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.refuse != nil {
		return q.refuse
	}
	q.reserved++
	return nil
}

func (q *gatedQuota) Release(context.Context, string, string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.released++
}

func (q *gatedQuota) counts() (int, int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.reserved, q.released
}

// TestQuotaChargeRunsBesideTheKindsHooks: a kind's hook may start the
// create's quota charge and go on while it is written (a hook that waits
// for the charge to start, beside a charge that waits for the hook, both
// finish); a create refused by a hook or by admission after its charge
// started gives the unit back once the charge is known; a hook refusing
// before it starts the charge, and an invalid object, are charged nothing;
// a hook that asks for the charge's outcome gets the quota's refusal
// before it does anything.
func TestQuotaChargeRunsBesideTheKindsHooks(t *testing.T) {
	q := &gatedQuota{started: make(chan struct{}), gate: make(chan struct{})}
	getter := registrytest.RESTOptionsGetter(registrytest.StartEtcd(t), false)
	st, err := network.NewStorage(apiserver.Scheme, getter, kindstore.Deps{Resolver: tenancy.GroupResolver{}, Storages: &kindstore.Storages{}, Quota: q})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Main.Destroy)
	var hook func(ctx context.Context) error
	st.Install(kindstore.Hooks{BeginCreate: func(ctx context.Context, _ runtime.Object, _ *metav1.CreateOptions) (genericregistry.FinishFunc, error) {
		if err := hook(ctx); err != nil {
			return nil, err
		}
		return func(context.Context, bool) {}, nil
	}})
	ctx := reqCtx(alice, "")

	// Side by side: the hook returns only once the charge started, and the
	// charge finishes only once the hook ran.
	hook = func(ctx context.Context) error {
		if !kindstore.Charges(ctx) {
			return errors.New("a create through GuardedREST carries no charge")
		}
		kindstore.StartCharge(ctx)
		select {
		case <-q.started:
		case <-time.After(10 * time.Second):
			return errors.New("the charge had not started 10 s into the kind's hook")
		}
		close(q.gate)
		return nil
	}
	mustCreate(t, ctx, st, newNetwork("side-by-side"))
	if reserved, released := q.counts(); reserved != 1 || released != 0 {
		t.Errorf("after a create: %d charged, %d given back; want 1, 0", reserved, released)
	}

	// A hook's refusal before it starts the charge: nothing charged.
	refused := apierrors.NewConflict(tenant.Resource("networks"), "refused", errors.New("no room"))
	hook = func(context.Context) error { return refused }
	if _, err := create(ctx, st, newNetwork("refused")); !errors.Is(err, refused) {
		t.Errorf("create refused by a hook: %v, want the hook's 409", err)
	}
	if reserved, released := q.counts(); reserved != 1 || released != 0 {
		t.Errorf("after a create a hook refused before its charge: %d charged, %d given back; want 1, 0", reserved, released)
	}
	// After: the unit is given back.
	hook = func(ctx context.Context) error { kindstore.StartCharge(ctx); return refused }
	if _, err := create(ctx, st, newNetwork("refused")); !errors.Is(err, refused) {
		t.Errorf("create refused by a hook: %v, want the hook's 409", err)
	}
	if reserved, released := q.counts(); reserved != 2 || released != 1 {
		t.Errorf("after a create a hook refused once its charge started: %d charged, %d given back; want 2, 1", reserved, released)
	}

	// Admission's refusal, after a hook started the charge: given back too.
	hook = func(ctx context.Context) error { kindstore.StartCharge(ctx); return nil }
	forbidden := apierrors.NewForbidden(tenant.Resource("networks"), "denied", errors.New("not allowed"))
	if _, err := st.Main.Create(ctx, newNetwork("denied"), func(context.Context, runtime.Object) error { return forbidden }, &metav1.CreateOptions{}); !errors.Is(err, forbidden) {
		t.Errorf("create refused by admission: %v, want its 403", err)
	}
	if reserved, released := q.counts(); reserved != 3 || released != 2 {
		t.Errorf("after a create admission refused: %d charged, %d given back; want 3, 2", reserved, released)
	}

	// An invalid object is refused before anything is charged.
	bad := newNetwork("bad")
	bad.Spec.Topology = "Layer9"
	if _, err := create(ctx, st, bad); !apierrors.IsInvalid(err) {
		t.Errorf("create of an invalid Network: %v, want 422", err)
	}
	if reserved, released := q.counts(); reserved != 3 || released != 2 {
		t.Errorf("after an invalid create: %d charged, %d given back; want 3, 2", reserved, released)
	}

	// Over quota: a hook asking for the outcome gets the refusal, and
	// nothing is given back.
	q.refuse = apierrors.NewForbidden(tenant.Resource("networks"), "", errors.New("exceeded quota: networks"))
	var seen error
	hook = func(ctx context.Context) error {
		charged, err := kindstore.ChargeOutcome(ctx)
		if !charged {
			return errors.New("the kind's hook saw no charge")
		}
		seen = err
		return err
	}
	if _, err := create(ctx, st, newNetwork("over")); !apierrors.IsForbidden(err) {
		t.Errorf("create over quota: %v, want 403", err)
	}
	if !apierrors.IsForbidden(seen) {
		t.Errorf("the hook saw %v as the charge's outcome, want the quota's 403", seen)
	}
	if reserved, released := q.counts(); reserved != 3 || released != 2 {
		t.Errorf("after a create over quota: %d charged, %d given back; want 3, 2", reserved, released)
	}
}
