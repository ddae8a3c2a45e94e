// Package queue holds the work queue of the syncer's controllers: a
// client-go rate-limited work queue whose pending items are handed out in
// turn per tenant, so that a tenant with thousands of pending objects
// delays another tenant's next object by one item per busy tenant, not by
// its whole backlog; and whose background items (the periodic check of
// every object) wait until no other item does, but for one turn in
// backgroundTurn.
package queue

import (
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// passPending reports Pending per queue, by the queue's name (that of its
// workqueue_* series).
var passPending = metrics.NewGaugeVec(&metrics.GaugeOpts{
	Subsystem: "tenant_syncer",
	Name:      "pass_pending_keys",
	Help: "Keys of a queue's current pass over every object (the periodic check, or everything again once the host is back) " +
		"not queued yet: a queue holds a window of a pass at a time, so workqueue_depth does not count them.",
	StabilityLevel: metrics.ALPHA,
}, []string{"name"})

func init() {
	legacyregistry.MustRegister(passPending)
}

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

// Queue is the syncer's work queue of Keys: rate-limited, fair across
// tenants, with a background lane (AddBackground, AddBackgroundAll).
type Queue struct {
	workqueue.TypedRateLimitingInterface[Key]
	fair *Fair[Key]

	// pass holds the keys of the last AddBackgroundAll or AddCheckAll not
	// queued yet.
	passMu  sync.Mutex
	pass    []Key
	pending metrics.GaugeMetric
	// every, for a pass of AddCheckAll, is the least time between two of
	// its keys; next is when the next may go, and later the timer that
	// feeds it then.
	every time.Duration
	next  time.Time
	later *time.Timer

	// held are the keys added while holding (Hold): a set of its own, let
	// go whole once Release makes them a pass. holding says held != nil
	// without passMu, so that Add takes no extra lock once released.
	holding atomic.Bool
	held    map[Key]struct{}
}

// passWindow is how many keys of a pass wait in the background lane at a
// time. The workqueue's sets and the fair queue's maps grow to the most
// keys they ever held and never shrink (Go maps do not): a pass queued
// whole would keep room for every object of the kind for good (about 50
// MB at 10,000 tenants x 10 objects).
const passWindow = 512

// New returns a named rate-limited work queue of Keys that hands them out
// fairly across tenants. A failing key is retried after base, doubling up
// to limit.
func New(name string, base, limit time.Duration) *Queue {
	fair := NewFair(func(k Key) string { return k.Tenant })
	fifo := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[Key]{
		Name:  name,
		Queue: fair,
	})
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[Key]{
		Name:  name,
		Queue: fifo,
	})
	return &Queue{
		TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.NewTypedItemExponentialFailureRateLimiter[Key](base, limit),
			workqueue.TypedRateLimitingQueueConfig[Key]{Name: name, DelayingQueue: delaying}),
		fair:    fair,
		pending: passPending.WithLabelValues(name),
	}
}

// Add implements workqueue.TypedInterface: it queues key in its tenant's
// lane, or keeps it aside while the queue holds (Hold).
func (q *Queue) Add(key Key) {
	if q.hold(key) {
		return
	}
	q.TypedRateLimitingInterface.Add(key)
}

// AddBackground queues key in the background lane, behind every key Add
// queues: for work no event asked for (the periodic check of every object,
// everything again once the host is back). A key already waiting keeps its
// place; a background key that Add queues again moves to its tenant's lane.
func (q *Queue) AddBackground(key Key) {
	if q.hold(key) {
		return
	}
	q.fair.mark(key)
	q.TypedRateLimitingInterface.Add(key)
}

// Hold makes Add and AddBackground keep their keys aside until Release,
// each once. It is for the start of a controller: its informers list
// every object, their handlers add each one's key (often several times,
// from the object and from the host objects made for it), and no worker
// takes one before every informer has listed. Queued at once, those keys
// would grow the workqueue's sets, its metrics' maps and the fair queue's
// lanes to the size of the whole store, room Go maps keep for good (about
// 20 MB at 10,000 tenants x 10 objects). Held, they cost a set that goes
// once they are a pass.
func (q *Queue) Hold() {
	q.passMu.Lock()
	defer q.passMu.Unlock()
	if q.held == nil {
		q.held = map[Key]struct{}{}
	}
	q.holding.Store(true)
}

// hold keeps key aside and returns true while the queue holds.
func (q *Queue) hold(key Key) bool {
	if !q.holding.Load() {
		return false
	}
	q.passMu.Lock()
	defer q.passMu.Unlock()
	if q.held == nil {
		return false
	}
	q.held[key] = struct{}{}
	return true
}

// Release ends Hold: the keys held go to the background lane a window at
// a time, ahead of any pass waiting, and keys added from now on are
// queued as usual, before them.
func (q *Queue) Release() {
	q.passMu.Lock()
	keys := make([]Key, 0, len(q.held)+len(q.pass))
	for k := range q.held {
		keys = append(keys, k)
	}
	q.pass, q.every = append(keys, q.pass...), 0
	q.held = nil
	q.holding.Store(false)
	q.passMu.Unlock()
	q.feed()
}

// AddBackgroundAll queues keys in the background lane, as AddBackground
// does, a window at a time: the next keys go in as workers take the
// previous ones (Get). A pass not done when the next one comes is
// replaced by it: every object when the host becomes unreachable, and
// on its return the objects that reported it, which are all that the
// pass it replaces still had to change.
func (q *Queue) AddBackgroundAll(keys []Key) {
	q.passMu.Lock()
	q.pass, q.every = keys, 0
	q.passMu.Unlock()
	q.feed()
}

// AddCheckAll queues keys as AddBackgroundAll does, but one key every
// every at most, and only when no pass waits (nor keys held): it reports
// whether it queued them. It is for the periodic check of every object,
// whose cost must not grow with the store: paced, a pass over a large
// store takes longer than the check's period, and is not cut short by
// the next one, which waits instead. A pass of AddBackgroundAll replaces
// it.
func (q *Queue) AddCheckAll(keys []Key, every time.Duration) bool {
	q.passMu.Lock()
	if len(q.pass) > 0 || q.held != nil {
		q.passMu.Unlock()
		return false
	}
	q.pass, q.every = keys, every
	q.passMu.Unlock()
	q.feed()
	return true
}

// Pending is how many keys of the current pass, or held (Hold), are not
// queued yet.
func (q *Queue) Pending() int {
	q.passMu.Lock()
	defer q.passMu.Unlock()
	return len(q.pass) + len(q.held)
}

// Get implements workqueue.TypedInterface, and tops the background lane
// up from the current pass.
func (q *Queue) Get() (Key, bool) {
	key, shutdown := q.TypedRateLimitingInterface.Get()
	if !shutdown {
		q.feed()
	}
	return key, shutdown
}

// feed queues keys of the current pass until passWindow of its keys wait
// in the background lane.
func (q *Queue) feed() {
	q.passMu.Lock()
	defer q.passMu.Unlock()
	// While the queue holds, the pass waits whole (no worker takes keys).
	for q.held == nil && len(q.pass) > 0 && q.fair.backgroundLen() < passWindow && !q.ShuttingDown() {
		if q.every > 0 {
			now := time.Now()
			if wait := q.next.Sub(now); wait > 0 {
				if q.later == nil {
					q.later = time.AfterFunc(wait, func() {
						q.passMu.Lock()
						q.later = nil
						q.passMu.Unlock()
						q.feed()
					})
				}
				break
			}
			q.next = now.Add(q.every)
		}
		key := q.pass[0]
		q.pass[0] = Key{}
		q.pass = q.pass[1:]
		q.fair.mark(key)
		q.TypedRateLimitingInterface.Add(key)
	}
	if len(q.pass) == 0 {
		q.pass, q.every = nil, 0
	}
	q.pending.Set(float64(len(q.pass)))
}

// AddBackgroundAfter queues key in the background lane once d has
// passed: for a look again that nothing is waiting for.
func (q *Queue) AddBackgroundAfter(key Key, d time.Duration) {
	time.AfterFunc(d, func() {
		if !q.ShuttingDown() {
			q.AddBackground(key)
		}
	})
}

// backgroundTurn is how often, while tenants' lanes wait, the background
// lane is served anyway: one pop in backgroundTurn, so that a steady stream
// of events does not hold the periodic check back for ever.
const backgroundTurn = 8

// Fair is a workqueue.Queue that keeps one FIFO lane per tenant and pops
// from the lanes round-robin, and a background FIFO served when the lanes
// are empty (and one pop in backgroundTurn). The workqueue around it
// deduplicates items and serialises their processing; Fair only decides
// the order. Apart from mark, it is not safe for concurrent use on its own
// (the workqueue holds its lock).
type Fair[T comparable] struct {
	tenantOf func(T) string
	lanes    map[string]*lane[T]
	// turn holds the tenants with pending items, in the order they are served.
	turn ring[string]
	// n counts the pending items: in lanes, and in background still to be
	// served there.
	n int

	// background holds the items pushed while marked, in order; an item
	// moved to a lane since stays in it, stale, and is skipped.
	background   ring[T]
	inBackground map[T]struct{}
	sinceTurn    int
	// waiting is len(inBackground), readable outside the workqueue's lock.
	waiting atomic.Int64

	// marked are the items AddBackground is about to add: mark is called
	// outside the workqueue's lock.
	mu     sync.Mutex
	marked map[T]struct{}
}

type lane[T any] struct{ items ring[T] }

var _ workqueue.Queue[Key] = &Fair[Key]{}

// NewFair returns a fair queue whose items belong to tenantOf(item).
func NewFair[T comparable](tenantOf func(T) string) *Fair[T] {
	return &Fair[T]{tenantOf: tenantOf, lanes: map[string]*lane[T]{}, inBackground: map[T]struct{}{}, marked: map[T]struct{}{}}
}

// mark says that the next Push or Touch of item comes from AddBackground.
func (q *Fair[T]) mark(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.marked[item] = struct{}{}
}

// backgroundLen is how many items wait in the background lane; safe for
// concurrent use.
func (q *Fair[T]) backgroundLen() int { return int(q.waiting.Load()) }

// takeMark says whether item was marked, and unmarks it.
func (q *Fair[T]) takeMark(item T) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	_, ok := q.marked[item]
	delete(q.marked, item)
	return ok
}

// Touch implements workqueue.Queue: an item added again while it waits
// keeps its place, unless it waits in the background and this add is not
// a background one: then it moves to its tenant's lane.
func (q *Fair[T]) Touch(item T) {
	if q.takeMark(item) {
		return
	}
	if _, ok := q.inBackground[item]; ok {
		delete(q.inBackground, item)
		q.waiting.Add(-1)
		q.n--
		q.Push(item)
	}
}

// Push implements workqueue.Queue.
func (q *Fair[T]) Push(item T) {
	if q.takeMark(item) {
		q.background.push(item)
		q.inBackground[item] = struct{}{}
		q.waiting.Add(1)
		q.n++
		return
	}
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
// it is, or of the background when no tenant has one (or its turn has
// come). The workqueue only pops when Len() > 0.
func (q *Fair[T]) Pop() T {
	q.sinceTurn++
	if len(q.inBackground) > 0 && (q.turn.len() == 0 || q.sinceTurn >= backgroundTurn) {
		q.sinceTurn = 0
		for {
			item := q.background.pop()
			if _, ok := q.inBackground[item]; ok {
				delete(q.inBackground, item)
				q.waiting.Add(-1)
				q.n--
				return item
			}
		}
	}
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
