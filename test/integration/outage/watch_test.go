package outage

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// event is one change of one object, as a watcher received it or as etcd
// recorded it.
type event struct {
	typ  watch.EventType
	name string
	rv   int64
	// at is when the watcher received it (zero for etcd's).
	at time.Time
}

func (e event) String() string { return fmt.Sprintf("%s %s@%d", e.typ, e.name, e.rv) }

// watcher is a client's watch of one resource of one tenant, as a
// reflector would keep it: list once, then watch from the last
// resourceVersion seen, and when the watch ends, watch again from there.
// It never lists again: a watch that cannot resume (410 Gone) is a
// failure, recorded in err.
type watcher struct {
	name     string
	tenant   string
	resource schema.GroupVersionResource
	client   dynamic.ResourceInterface

	mu sync.Mutex
	// listRV and initial are the first list's resourceVersion and objects
	// (name -> resourceVersion).
	listRV  int64
	initial map[string]int64
	events  []event
	lastRV  int64
	// ends are when a watch ended (closed by the server or the
	// connection); starts when one was established.
	ends, starts []time.Time
	failures     []string
	done         chan struct{}
}

// startWatcher lists and starts watching resource as the client d, until ctx ends.
func startWatcher(ctx context.Context, t *testing.T, name, tenant string, resource schema.GroupVersionResource, d dynamic.Interface) *watcher {
	t.Helper()
	w := &watcher{name: name, tenant: tenant, resource: resource, client: d.Resource(resource), initial: map[string]int64{}, done: make(chan struct{})}
	list, err := w.client.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("%s: listing: %v", name, err)
	}
	w.listRV = mustRV(t, list.GetResourceVersion())
	w.lastRV = w.listRV
	for _, item := range list.Items {
		w.initial[item.GetName()] = mustRV(t, item.GetResourceVersion())
	}
	go w.run(ctx)
	return w
}

func mustRV(t *testing.T, rv string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return n
}

func (w *watcher) run(ctx context.Context) {
	defer close(w.done)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		w.mu.Lock()
		from := w.lastRV
		w.mu.Unlock()
		wi, err := w.client.Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatInt(from, 10), AllowWatchBookmarks: true})
		if err != nil {
			if apierrors.IsGone(err) || apierrors.IsResourceExpired(err) {
				w.fail("watch from %d: %v", from, err)
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		w.mu.Lock()
		w.starts = append(w.starts, time.Now())
		w.mu.Unlock()
		gone := w.consume(ctx, wi)
		wi.Stop()
		w.mu.Lock()
		w.ends = append(w.ends, time.Now())
		w.mu.Unlock()
		if gone {
			return
		}
	}
}

// consume reads one watch until it ends; it reports whether the server
// said the resourceVersion is gone.
func (w *watcher) consume(ctx context.Context, wi watch.Interface) (gone bool) {
	for {
		select {
		case <-ctx.Done():
			return false
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return false
			}
			now := time.Now()
			if ev.Type == watch.Error {
				err := apierrors.FromObject(ev.Object)
				if apierrors.IsGone(err) || apierrors.IsResourceExpired(err) {
					w.fail("watch from %d ended: %v", w.last(), err)
					return true
				}
				return false
			}
			obj, isObj := ev.Object.(*unstructured.Unstructured)
			if !isObj {
				w.fail("event %s with a %T", ev.Type, ev.Object)
				continue
			}
			rv, err := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
			if err != nil {
				w.fail("event %s %s: resourceVersion %q", ev.Type, obj.GetName(), obj.GetResourceVersion())
				continue
			}
			w.mu.Lock()
			if ev.Type != watch.Bookmark {
				if rv <= w.lastRV {
					w.failures = append(w.failures, fmt.Sprintf("event %s %s@%d after resourceVersion %d: repeated or out of order", ev.Type, obj.GetName(), rv, w.lastRV))
				}
				w.events = append(w.events, event{typ: ev.Type, name: obj.GetName(), rv: rv, at: now})
			}
			if rv > w.lastRV {
				w.lastRV = rv
			}
			w.mu.Unlock()
		}
	}
}

func (w *watcher) fail(format string, args ...interface{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failures = append(w.failures, fmt.Sprintf(format, args...))
}

func (w *watcher) last() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastRV
}

// firstEventAfter is when the watcher received its first event after
// from, or the zero time.
func (w *watcher) firstEventAfter(from time.Time) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.events {
		if e.at.After(from) {
			return e.at
		}
	}
	return time.Time{}
}

// sawDelete reports whether the watcher received a DELETED event of name.
func (w *watcher) sawDelete(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.events {
		if e.typ == watch.Deleted && e.name == name {
			return true
		}
	}
	return false
}

// endsAfter counts the watches that ended after from.
func (w *watcher) endsAfter(from time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, e := range w.ends {
		if e.After(from) {
			n++
		}
	}
	return n
}

// watchers are the watches of a test: for each tenant, its Namespaces
// and its Networks, as its member through the aggregator.
type watchers struct {
	all    []*watcher
	cancel context.CancelFunc
}

// startWatchers starts the watchers of the tenants, each acting as the
// member users[tenant].
func startWatchers(ctx context.Context, t *testing.T, members map[string]string) *watchers {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	ws := &watchers{cancel: cancel}
	t.Cleanup(ws.stop)
	for _, tn := range sortedKeys(members) {
		d := dynamicFor(t, theStack().RESTConfig(members[tn]))
		for _, r := range []schema.GroupVersionResource{namespacesGVR, networksGVR} {
			ws.all = append(ws.all, startWatcher(ctx, t, tn+" "+r.Resource, tn, r, d))
		}
	}
	return ws
}

func (ws *watchers) stop() {
	ws.cancel()
	for _, w := range ws.all {
		<-w.done
	}
}

// waitResumed waits until every watcher has received an event after
// from, and returns the time from from to the last of these.
func (ws *watchers) waitResumed(ctx context.Context, t *testing.T, from time.Time) time.Duration {
	t.Helper()
	var last time.Time
	eventually(ctx, t, recoverTimeout, "every watch delivering events again", func(context.Context) (bool, string) {
		var waiting []string
		last = time.Time{}
		for _, w := range ws.all {
			at := w.firstEventAfter(from)
			if at.IsZero() {
				waiting = append(waiting, w.name)
			}
			if at.After(last) {
				last = at
			}
		}
		return len(waiting) == 0, "no event yet for " + strings.Join(waiting, ", ")
	})
	return last.Sub(from)
}

// verify checks each watcher against the truth, once the writes have
// stopped: the objects a fresh list returns are what the watcher's events
// make of its first list, and the events it received are exactly those
// etcd recorded in the tenant's key range since its first list — none
// lost, none repeated. To know the watcher is up to date, it writes a
// marker (a label on the tenant's "default" object) as markerClient(tenant)
// and waits until the watcher has seen it.
func (ws *watchers) verify(ctx context.Context, t *testing.T, markerClient func(tenant string) dynamic.Interface) {
	t.Helper()
	for _, w := range ws.all {
		w.mu.Lock()
		for _, f := range w.failures {
			t.Errorf("%s: %s", w.name, f)
		}
		w.mu.Unlock()

		list, err := w.client.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("%s: listing: %v", w.name, err)
		}
		listRV := mustRV(t, list.GetResourceVersion())
		patch := fmt.Sprintf(`{"metadata":{"labels":{"outage.tenant.io/marker":"%d"}}}`, time.Now().UnixNano())
		marked, err := markerClient(w.tenant).Resource(w.resource).Patch(ctx, "default", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("%s: writing the marker: %v", w.name, err)
		}
		markRV := mustRV(t, marked.GetResourceVersion())
		eventually(ctx, t, recoverTimeout, w.name+" seeing the marker", func(context.Context) (bool, string) {
			last := w.last()
			return last >= markRV, fmt.Sprintf("last resourceVersion %d, marker %d", last, markRV)
		})

		w.mu.Lock()
		events := slices.Clone(w.events)
		initial, firstRV := w.initial, w.listRV
		w.mu.Unlock()

		// The list, against the watcher's view at the list's resourceVersion.
		view := map[string]int64{}
		for n, rv := range initial {
			view[n] = rv
		}
		for _, e := range events {
			if e.rv > listRV {
				break
			}
			if e.typ == watch.Deleted {
				delete(view, e.name)
			} else {
				view[e.name] = e.rv
			}
		}
		listed := map[string]int64{}
		for _, item := range list.Items {
			listed[item.GetName()] = mustRV(t, item.GetResourceVersion())
		}
		if !mapsEqual(view, listed) {
			t.Errorf("%s: at resourceVersion %d a list returns %v, the watcher's events make %v", w.name, listRV, listed, view)
		}

		// The events, against etcd's history of the tenant's key range.
		prefix := etcdKeyPrefix(ctx, t, w.resource, w.tenant)
		history, err := etcdHistory(ctx, prefix, firstRV+1, markRV)
		if err != nil {
			t.Fatalf("%s: reading etcd's history of %s: %v", w.name, prefix, err)
		}
		var seen []event
		for _, e := range events {
			if e.rv <= markRV {
				seen = append(seen, event{typ: e.typ, name: e.name, rv: e.rv})
			}
		}
		if !slices.Equal(seen, history) {
			t.Errorf("%s: the watcher received %d events, etcd recorded %d in %s since revision %d:\n%s",
				w.name, len(seen), len(history), prefix, firstRV, diffEvents(seen, history))
		} else {
			t.Logf("%s: %d events from revision %d to %d, exactly etcd's; %d watches ended and were resumed",
				w.name, len(seen), firstRV, markRV, len(w.ends))
		}
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// diffEvents describes how the watcher's events differ from etcd's.
func diffEvents(seen, history []event) string {
	inSeen := map[event]int{}
	for _, e := range seen {
		inSeen[e]++
	}
	inHistory := map[event]int{}
	for _, e := range history {
		inHistory[e]++
	}
	var lines []string
	for _, e := range history {
		if inSeen[e] == 0 {
			lines = append(lines, "  lost:      "+e.String())
		}
	}
	for e, n := range inSeen {
		switch {
		case inHistory[e] == 0:
			lines = append(lines, "  not in etcd: "+e.String())
		case n > 1:
			lines = append(lines, fmt.Sprintf("  repeated %d times: %s", n, e))
		}
	}
	if len(lines) == 0 {
		lines = append(lines, "  same events in another order")
	}
	slices.Sort(lines)
	if len(lines) > 40 {
		lines = append(lines[:40], fmt.Sprintf("  ... and %d more", len(lines)-40))
	}
	return strings.Join(lines, "\n")
}

// etcdKeyPrefix is the key range in etcd of the objects of resource of
// tenant: ".../<resource>/<tenant>/", found among the keys that exist
// (every tenant has a "default" Namespace and Network).
func etcdKeyPrefix(ctx context.Context, t *testing.T, resource schema.GroupVersionResource, tenant string) string {
	t.Helper()
	resp, err := etcdClient.Get(ctx, "/tenant.io/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatalf("listing etcd keys: %v", err)
	}
	segment := "/" + resource.Resource + "/" + tenant + "/"
	for _, kv := range resp.Kvs {
		k := string(kv.Key)
		if i := strings.Index(k, segment); i >= 0 && !strings.Contains(k[i+len(segment):], "/") {
			return k[:i+len(segment)]
		}
	}
	t.Fatalf("no key of %s of tenant %s in etcd", resource.Resource, tenant)
	return ""
}

// etcdHistory reads from etcd every change under prefix from revision
// from to revision to, as watch events.
func etcdHistory(ctx context.Context, prefix string, from, to int64) ([]event, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	// RequestProgress reaches the watches of the stream its context names:
	// give it the watch's.
	ctx = clientv3.WithRequireLeader(ctx)
	wch := etcdClient.Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithProgressNotify())
	var out []event
	ticker := time.NewTicker(200 * time.Millisecond)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("reading up to revision %d: %w (read %d events)", to, ctx.Err(), len(out))
		case <-ticker.C:
			_ = etcdClient.RequestProgress(ctx)
		case resp, ok := <-wch:
			if !ok {
				return nil, fmt.Errorf("etcd watch closed")
			}
			if err := resp.Err(); err != nil {
				return nil, err
			}
			for _, ev := range resp.Events {
				if ev.Kv.ModRevision > to {
					return out, nil
				}
				e := event{name: strings.TrimPrefix(string(ev.Kv.Key), prefix), rv: ev.Kv.ModRevision}
				switch {
				case ev.Type == clientv3.EventTypeDelete:
					e.typ = watch.Deleted
				case ev.IsCreate():
					e.typ = watch.Added
				default:
					e.typ = watch.Modified
				}
				out = append(out, e)
			}
			// A progress notification comes only once every event up to
			// its revision has been sent.
			if resp.IsProgressNotify() && resp.Header.Revision >= to {
				return out, nil
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
