// Package queue holds the work queue of the syncer's controllers: a
// client-go rate-limited work queue whose pending items are handed out in
// turn per tenant, so that a tenant with thousands of pending objects
// delays another tenant's next object by one item per busy tenant, not by
// its whole backlog.
package queue

import (
	"time"

	"k8s.io/client-go/util/workqueue"
)

// Key names an object a controller reconciles: a Tenant (Name empty) or a
// tenant object of Tenant (Name, and Namespace for namespaced kinds).
type Key struct {
	Tenant    string
	Namespace string
	Name      string
}

// String implements fmt.Stringer, for logs.
func (k Key) String() string {
	s := k.Tenant
	if k.Namespace != "" {
		s += "/" + k.Namespace
	}
	if k.Name != "" {
		s += "/" + k.Name
	}
	return s
}

// New returns a named rate-limited work queue of Keys that hands them out
// fairly across tenants. A failing key is retried after base, doubling up
// to limit.
func New(name string, base, limit time.Duration) workqueue.TypedRateLimitingInterface[Key] {
	fifo := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[Key]{
		Name:  name,
		Queue: NewFair(func(k Key) string { return k.Tenant }),
	})
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[Key]{
		Name:  name,
		Queue: fifo,
	})
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.NewTypedItemExponentialFailureRateLimiter[Key](base, limit),
		workqueue.TypedRateLimitingQueueConfig[Key]{Name: name, DelayingQueue: delaying})
}

// Fair is a workqueue.Queue that keeps one FIFO lane per tenant and pops
// from the lanes round-robin. The workqueue around it deduplicates items
// and serialises their processing; Fair only decides the order. It is not
// safe for concurrent use on its own (the workqueue holds its lock).
type Fair[T comparable] struct {
	tenantOf func(T) string
	lanes    map[string]*lane[T]
	// turn holds the tenants with pending items, in the order they are served.
	turn ring[string]
	n    int
}

type lane[T any] struct{ items ring[T] }

var _ workqueue.Queue[Key] = &Fair[Key]{}

// NewFair returns a fair queue whose items belong to tenantOf(item).
func NewFair[T comparable](tenantOf func(T) string) *Fair[T] {
	return &Fair[T]{tenantOf: tenantOf, lanes: map[string]*lane[T]{}}
}

// Touch implements workqueue.Queue: an item added again keeps its place.
func (q *Fair[T]) Touch(T) {}

// Push implements workqueue.Queue.
func (q *Fair[T]) Push(item T) {
	t := q.tenantOf(item)
	l, ok := q.lanes[t]
	if !ok {
		l = &lane[T]{}
		q.lanes[t] = l
		q.turn.push(t)
	}
	l.items.push(item)
	q.n++
}

// Len implements workqueue.Queue.
func (q *Fair[T]) Len() int { return q.n }

// Pop implements workqueue.Queue: the next item of the tenant whose turn
// it is. The workqueue only pops when Len() > 0.
func (q *Fair[T]) Pop() T {
	t := q.turn.pop()
	l := q.lanes[t]
	item := l.items.pop()
	if l.items.len() > 0 {
		q.turn.push(t)
	} else {
		delete(q.lanes, t)
	}
	q.n--
	return item
}

// ring is a FIFO on a growable circular buffer: pushes and pops do not
// allocate once it has grown to its working size.
type ring[T any] struct {
	buf        []T
	head, size int
}

func (r *ring[T]) len() int { return r.size }

func (r *ring[T]) push(v T) {
	if r.size == len(r.buf) {
		grown := make([]T, max(4, 2*len(r.buf)))
		for i := 0; i < r.size; i++ {
			grown[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = grown, 0
	}
	r.buf[(r.head+r.size)%len(r.buf)] = v
	r.size++
}

func (r *ring[T]) pop() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return v
}
