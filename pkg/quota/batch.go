package quota

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// A tenant creating objects as fast as it can would have each create write
// its Tenant: one compare-and-swap per create, every one racing the
// others' on the same object and most retrying. Instead the charges of one
// tenant wait while a write of its usage is in flight, and the next write
// takes all that are waiting: one write of the Tenant for the lot, each
// charge checked against the limit in turn as if they had been written one
// after the other (so the last ones of a batch that crosses the limit are
// refused, and 50 creates at once against 10 still admit exactly 10).

// chargeWriteTimeout bounds one write of a batch: it no longer ends with
// the request that started it, since it carries the others' charges.
const chargeWriteTimeout = 30 * time.Second

// charge is one request's change to a counter, and its outcome.
type charge struct {
	resource string
	delta    int32
	// uid, when set, is the Tenant the caller's guard resolved: a charge
	// to a Tenant of that name with another UID (deleted and created again
	// since) is refused, so that no create is charged to a tenant it was
	// not checked against.
	uid     types.UID
	err     error
	refused bool
	done    chan struct{}
}

// tenantCharges are the charges of one tenant waiting for the write in
// flight.
type tenantCharges struct {
	writing bool
	next    []*charge
}

// errNothingToWrite ends a batch's update when every charge of it was
// refused.
var errNothingToWrite = errors.New("no charge to write")

// add changes resource's counter of tenantName by delta, batched with the
// tenant's other charges of the moment.
func (q *Tracker) add(ctx context.Context, tenantName, resource string, delta int32) error {
	c := &charge{resource: resource, delta: delta, done: make(chan struct{})}
	if delta > 0 {
		c.uid = tenancy.TenantUIDFrom(ctx)
	}
	q.mu.Lock()
	if q.pending == nil {
		q.pending = map[string]*tenantCharges{}
	}
	tc := q.pending[tenantName]
	if tc == nil {
		tc = &tenantCharges{}
		q.pending[tenantName] = tc
	}
	tc.next = append(tc.next, c)
	lead := !tc.writing
	tc.writing = true
	q.mu.Unlock()
	if lead {
		// The first charge writes its batch (itself, and whatever joined
		// before the write began), then hands what came meanwhile to a
		// writer of its own, so that no request waits for more than the
		// write in flight and its own.
		q.writeNext(ctx, tenantName, tc)
		if q.more(tenantName, tc) {
			go func() {
				for {
					q.writeNext(ctx, tenantName, tc)
					if !q.more(tenantName, tc) {
						return
					}
				}
			}()
		}
	}
	<-c.done
	if c.refused {
		refusals.WithLabelValues(lower(resource)).Inc()
	}
	return c.err
}

// more says whether charges of tc wait for a write; if none do, the
// tenant has no writer any more.
func (q *Tracker) more(tenantName string, tc *tenantCharges) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(tc.next) > 0 {
		return true
	}
	tc.writing = false
	delete(q.pending, tenantName)
	return false
}

// writeNext writes the charges of tc waiting now in one update of the
// Tenant, and tells each its outcome.
func (q *Tracker) writeNext(ctx context.Context, tenantName string, tc *tenantCharges) {
	q.mu.Lock()
	batch := tc.next
	tc.next = nil
	q.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	// Each write has its own deadline: a writer that goes on for a tenant
	// creating without pause must not run out of time.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), chargeWriteTimeout)
	defer cancel()
	apply := func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		t := old.(*tenant.Tenant).DeepCopy()
		applied := false
		for _, c := range batch {
			c.err, c.refused = nil, false
			if c.delta > 0 && t.DeletionTimestamp != nil {
				c.err = terminating(tenant.Resource(lower(c.resource)), tenantName)
				continue
			}
			if c.uid != "" && c.uid != t.UID {
				c.err = recreated(tenant.Resource(lower(c.resource)), tenantName)
				continue
			}
			used, limit, err := fields(t, c.resource)
			if err != nil {
				c.err = apierrors.NewInternalError(err)
				continue
			}
			if c.delta > 0 && limit != nil && *used+c.delta > *limit {
				c.err, c.refused = refusal(c.resource, *used, *limit), true
				continue
			}
			*used = max(0, *used+c.delta)
			applied = true
		}
		if !applied {
			return nil, errNothingToWrite
		}
		return t, nil
	}
	// Tenants are cluster-scoped: drop the namespace of a namespaced request.
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	_, _, err := q.tenants.Update(ctx, tenantName, rest.DefaultUpdatedObjectInfo(nil, apply),
		nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	failed := err != nil && !errors.Is(err, errNothingToWrite)
	for _, c := range batch {
		if failed {
			// Nothing was written: every charge of the batch fails with
			// the write (a Tenant gone, the storage unavailable).
			c.err, c.refused = err, false
		}
		close(c.done)
	}
	chargesPerWrite.Observe(float64(len(batch)))
}
