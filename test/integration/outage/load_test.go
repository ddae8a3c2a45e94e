package outage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"tenant.io/tenant-apiserver/pkg/stack"
)

// loadLabel is the label the write load sets: each write gives it a value
// of its own, so that the stored object tells which write it holds.
const loadLabel = "outage.tenant.io/write"

// objState is what one object can be after the writes made to it: absent,
// or present with the value of loadLabel of one write.
type objState struct {
	exists bool
	value  string
}

func (s objState) String() string {
	if !s.exists {
		return "absent"
	}
	return "present(" + s.value + ")"
}

// tracked is what the writer of one object knows of it: the states it can
// be in given the answers it got. A success leaves one; a request whose
// fate is unknown (5xx, timeout, connection lost) adds the state it would
// have made; an answer that says what is there (404, 409 AlreadyExists)
// narrows them.
type tracked struct {
	possible []objState
	history  []string
}

func (o *tracked) set(states ...objState) {
	o.possible = nil
	for _, s := range states {
		if !slices.Contains(o.possible, s) {
			o.possible = append(o.possible, s)
		}
	}
}

func (o *tracked) add(s objState) { o.set(append(o.possible, s)...) }

func (o *tracked) filter(exists bool) []objState {
	var out []objState
	for _, s := range o.possible {
		if s.exists == exists {
			out = append(out, s)
		}
	}
	return out
}

func (o *tracked) mayExist() bool { return len(o.filter(true)) > 0 }

func (o *tracked) describe() string {
	var p []string
	for _, s := range o.possible {
		p = append(p, s.String())
	}
	return "{" + strings.Join(p, " ") + "} after " + strings.Join(o.history, ", ")
}

// outcome is one request of the load and its answer.
type outcome struct {
	start, end time.Time
	writer, op string
	result     string
}

// load is a write load of several writers, each creating, updating
// (loadLabel) and deleting objects of one resource in one tenant, and of
// the provider creating and deleting Tenants (which take and give back
// addresses). It records every answer and what each object may be.
type load struct {
	t       *testing.T
	writers []*writer

	mu       sync.Mutex
	outcomes []outcome
	// contradictions are answers that deny an acknowledged write.
	contradictions []string
}

// writer writes the objects names of one resource as one client.
type writer struct {
	l        *load
	name     string
	resource schema.GroupVersionResource
	client   dynamic.ResourceInterface
	// prefix starts the names of the objects it creates.
	prefix string
	// tenants: it writes Tenants, which it only creates and deletes.
	tenants bool
	// keep is how many objects that may exist it keeps at most.
	keep int
	rng  *rand.Rand
	seq  int

	mu      sync.Mutex
	objects map[string]*tracked
	order   []string
	// lastSuccess is when a write of it last succeeded.
	lastSuccess time.Time
}

// newLoad builds a load: for each tenant (acting as its member cfg) a
// writer of Namespaces and one of Networks, over a few names each, and a
// provider writer of Tenants named <prefix>-t<n>.
func newLoad(t *testing.T, prefix string, members map[string]string) *load {
	t.Helper()
	l := &load{t: t}
	tenants := make([]string, 0, len(members))
	for tn := range members {
		tenants = append(tenants, tn)
	}
	sort.Strings(tenants)
	for i, tn := range tenants {
		d := dynamicFor(t, theStack().RESTConfig(members[tn]))
		l.add(&writer{name: tn + " namespaces", resource: namespacesGVR, client: d.Resource(namespacesGVR),
			prefix: "ld-", keep: 4, rng: rand.New(rand.NewPCG(uint64(i), 1))})
		l.add(&writer{name: tn + " networks", resource: networksGVR, client: d.Resource(networksGVR),
			prefix: "ld-", keep: 3, rng: rand.New(rand.NewPCG(uint64(i), 2))})
	}
	admin := dynamicFor(t, theStack().RESTConfig(stack.AdminUser))
	l.add(&writer{name: prefix + " tenants", resource: tenantsGVR, client: admin.Resource(tenantsGVR),
		tenants: true, keep: 2, prefix: prefix + "-t", rng: rand.New(rand.NewPCG(99, 3))})
	return l
}

func (l *load) add(w *writer) {
	w.l, w.objects = l, map[string]*tracked{}
	l.writers = append(l.writers, w)
}

// run runs every writer until ctx ends and returns when all have stopped.
func (l *load) run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, w := range l.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				w.step(ctx)
				select {
				case <-ctx.Done():
				case <-time.After(time.Duration(100+w.rng.IntN(300)) * time.Millisecond):
				}
			}
		}()
	}
	wg.Wait()
}

// start runs the load in the background; the function it returns stops
// it and waits for the last requests' answers.
func (l *load) start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { l.run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// step makes one write. A writer keeps up to keep objects that may
// exist: below that it creates one under a new name, else it updates or
// deletes one. A name is never created again once deleted: a tenant
// object's host objects of a former object of the same name must be gone
// before its own are made, which would tie the load to how fast the host
// deletes namespaces. An object whose fate is unknown is updated: the
// answer (404 or success) tells.
func (w *writer) step(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	value := fmt.Sprintf("%d", w.seq)
	var live, unknown []string
	for _, n := range w.order {
		o := w.objects[n]
		switch {
		case len(o.filter(false)) == 0:
			live = append(live, n)
		case o.mayExist():
			unknown = append(unknown, n)
		}
	}
	if w.tenants {
		// Tenants are created and deleted, the oldest first.
		if maybe := append(live, unknown...); len(maybe) > w.keep {
			w.delete(ctx, oldest(w.order, maybe))
			return
		}
		w.create(ctx, fmt.Sprintf("%s%d", w.prefix, w.seq), value)
		return
	}
	switch {
	case len(unknown) > 0 && w.rng.IntN(2) == 0:
		w.update(ctx, unknown[w.rng.IntN(len(unknown))], value)
	case len(live)+len(unknown) < w.keep:
		w.create(ctx, fmt.Sprintf("%s%d", w.prefix, w.seq), value)
	case len(live) > 0 && w.rng.IntN(3) > 0:
		w.update(ctx, live[w.rng.IntN(len(live))], value)
	case len(live) > 0:
		w.delete(ctx, live[w.rng.IntN(len(live))])
	default:
		w.update(ctx, unknown[w.rng.IntN(len(unknown))], value)
	}
}

// oldest is the first of order that is in names.
func oldest(order, names []string) string {
	for _, n := range order {
		if slices.Contains(names, n) {
			return n
		}
	}
	return ""
}

func (w *writer) object(name string) *tracked {
	o, ok := w.objects[name]
	if !ok {
		o = &tracked{possible: []objState{{}}}
		w.objects[name] = o
		w.order = append(w.order, name)
	}
	return o
}

// newObject is the object a create of name sends.
func (w *writer) newObject(name, value string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": namespacesGVR.GroupVersion().String(),
		"metadata":   map[string]interface{}{"name": name, "labels": map[string]interface{}{loadLabel: value}},
	}}
	switch w.resource {
	case namespacesGVR:
		u.SetKind("Namespace")
		u.Object["spec"] = map[string]interface{}{"network": "default"}
	case networksGVR:
		u.SetKind("Network")
		u.Object["spec"] = map[string]interface{}{"topology": "Layer2"}
	case tenantsGVR:
		u.SetKind("Tenant")
		u.Object["spec"] = map[string]interface{}{
			"network":   map[string]interface{}{"prefixLength": int64(24)},
			"publicIPs": map[string]interface{}{"count": int64(1)},
		}
	}
	return u
}

// record keeps the answer to one request; ambiguous reports whether the
// request may or may not have been carried out.
func (w *writer) record(start time.Time, op, name string, err error) (ambiguous bool) {
	res := outcomeOf(err)
	end := time.Now()
	w.l.mu.Lock()
	w.l.outcomes = append(w.l.outcomes, outcome{start: start, end: end, writer: w.name, op: op + " " + name, result: res})
	w.l.mu.Unlock()
	o := w.object(name)
	o.history = append(o.history, op+"="+res)
	if err == nil {
		w.lastSuccess = end
		return false
	}
	if apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsInternalError(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsUnexpectedServerError(err) {
		return true
	}
	if res == "timeout" || res == "connection error" || strings.HasPrefix(res, "5") {
		return true
	}
	return false
}

func (w *writer) contradiction(format string, args ...interface{}) {
	msg := w.name + ": " + fmt.Sprintf(format, args...)
	w.l.mu.Lock()
	w.l.contradictions = append(w.l.contradictions, msg)
	w.l.mu.Unlock()
}

func (w *writer) create(ctx context.Context, name, value string) {
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	start := time.Now()
	_, err := w.client.Create(rctx, w.newObject(name, value), metav1.CreateOptions{})
	if ctx.Err() != nil && err != nil {
		// Stopped: the answer is unknown, as for a timeout.
		w.object(name).add(objState{true, value})
		return
	}
	ambiguous := w.record(start, "create", name, err)
	o := w.object(name)
	want := objState{true, value}
	switch {
	case err == nil:
		o.set(want)
	case apierrors.IsAlreadyExists(err):
		// Either it was there, or a retry of this very create (after an
		// answer that left its fate open) found its own object.
		o.set(append(o.filter(true), want)...)
	case ambiguous:
		o.add(want)
	}
}

func (w *writer) update(ctx context.Context, name, value string) {
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	start := time.Now()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, loadLabel, value)
	_, err := w.client.Patch(rctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	o := w.object(name)
	want := objState{true, value}
	if ctx.Err() != nil && err != nil {
		o.add(want)
		return
	}
	ambiguous := w.record(start, "update", name, err)
	switch {
	case err == nil:
		o.set(want)
	case apierrors.IsNotFound(err):
		absent := o.filter(false)
		if len(absent) == 0 {
			w.contradiction("update of %s: 404, but it must exist: %s", name, o.describe())
		}
		o.set(objState{})
	case ambiguous:
		o.add(want)
	}
}

func (w *writer) delete(ctx context.Context, name string) {
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	start := time.Now()
	err := w.client.Delete(rctx, name, metav1.DeleteOptions{})
	o := w.object(name)
	if ctx.Err() != nil && err != nil {
		o.add(objState{})
		return
	}
	ambiguous := w.record(start, "delete", name, err)
	switch {
	case err == nil, apierrors.IsNotFound(err):
		// A 404 is also what a retry of this very delete gets.
		o.set(objState{})
	case ambiguous:
		o.add(objState{})
	}
}

// countsBetween counts the answers to the requests that started in
// [from, to).
func (l *load) countsBetween(from, to time.Time) map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	counts := map[string]int{}
	for _, o := range l.outcomes {
		if !o.start.Before(from) && o.start.Before(to) {
			counts[o.result]++
		}
	}
	return counts
}

// firstSuccessAfter is when the first request that started after from got
// a success, or the zero time.
func (l *load) firstSuccessAfter(from time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first time.Time
	for _, o := range l.outcomes {
		if o.result == "2xx" && o.start.After(from) && (first.IsZero() || o.end.Before(first)) {
			first = o.end
		}
	}
	return first
}

// successes counts the writes that succeeded.
func (l *load) successes() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, o := range l.outcomes {
		if o.result == "2xx" {
			n++
		}
	}
	return n
}

// waitEveryWriterSucceeds waits until every writer has had a write
// succeed after from: the outage is over for all of them.
func (l *load) waitEveryWriterSucceeds(ctx context.Context, t *testing.T, from time.Time) time.Duration {
	t.Helper()
	return eventually(ctx, t, recoverTimeout, "a successful write of every writer", func(context.Context) (bool, string) {
		var waiting []string
		for _, w := range l.writers {
			w.mu.Lock()
			if !w.lastSuccess.After(from) {
				waiting = append(waiting, w.name)
			}
			w.mu.Unlock()
		}
		return len(waiting) == 0, "no success yet for " + strings.Join(waiting, ", ")
	})
}

// verify checks, once the load has stopped, that every object is in a
// state its writer's answers allow: an acknowledged create or update is
// there with its value unless a later write may have replaced it, an
// acknowledged delete is gone. Deleted Tenants are given recoverTimeout
// to finish offboarding. It returns how many objects it checked.
func (l *load) verify(ctx context.Context, t *testing.T) int {
	t.Helper()
	l.mu.Lock()
	for _, c := range l.contradictions {
		t.Errorf("an answer denied an acknowledged write: %s", c)
	}
	l.mu.Unlock()
	checked := 0
	for _, w := range l.writers {
		for _, name := range w.order {
			o := w.objects[name]
			checked++
			var got objState
			state := func(ctx context.Context) (objState, bool, error) {
				obj, err := w.client.Get(ctx, name, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					return objState{}, false, nil
				}
				if err != nil {
					return objState{}, false, err
				}
				return objState{true, obj.GetLabels()[loadLabel]}, obj.GetDeletionTimestamp() != nil, nil
			}
			eventually(ctx, t, recoverTimeout, w.name+" "+name+" settled", func(ctx context.Context) (bool, string) {
				s, terminating, err := state(ctx)
				if err != nil {
					return false, err.Error()
				}
				got = s
				if terminating {
					return false, "being deleted"
				}
				return true, s.String()
			})
			if !slices.Contains(o.possible, got) {
				t.Errorf("%s %s is %s, but the answers the writer got allow only %s", w.name, name, got, o.describe())
			}
		}
	}
	return checked
}
