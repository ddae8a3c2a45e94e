package console

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
)

// liveKinds are the tables a page can keep live, by the name in
// /live/{kind}.
var liveKinds = map[string]*kind{}

func init() {
	for _, k := range append(append(append([]*kind{}, tenantKinds...), viewKinds...), tenantsKind, poolsKind, tenantProgressKind) {
		liveKinds[k.Resource] = k
	}
}

// Timing of the event streams.
const (
	// liveSettle gathers a burst of watch events into one update.
	liveSettle = 100 * time.Millisecond
	// liveHeartbeat keeps idle streams open through proxies.
	liveHeartbeat = 25 * time.Second
)

// live streams a table's rows as server-sent events: the rows of a list,
// then the rows again whenever the API's watch says something changed.
// The list and the watch are the caller's own, so the API decides what
// the stream may contain. When the watch ends the stream ends, and the
// browser reconnects and lists again.
func (s *Server) live(w http.ResponseWriter, r *http.Request) {
	c := callerFrom(r)
	k := liveKinds[r.PathValue("kind")]
	if k == nil {
		http.NotFound(w, r)
		return
	}
	ctx := r.Context()
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	opts := metav1.ListOptions{}
	if name := r.URL.Query().Get("name"); name != "" {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	}
	if t := r.URL.Query().Get("tenant"); t != "" {
		opts.LabelSelector = tenantSelector(t).LabelSelector
	}
	send := func(event, data string) bool {
		var b strings.Builder
		b.WriteString("event: " + event + "\n")
		for _, line := range strings.Split(data, "\n") {
			b.WriteString("data: " + line + "\n")
		}
		b.WriteString("\n")
		if _, err := w.Write([]byte(b.String())); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	problem := func(err error) {
		e := newAPIError(err, nil)
		_, _ = fmt.Fprintf(w, "retry: 10000\n")
		send("problem", fmt.Sprintf("%d %s: %s", e.Code, e.Reason, e.Message))
	}

	list, err := k.list(ctx, c, opts)
	if err != nil {
		problem(err)
		return
	}
	items, rv, err := itemsOf(list)
	if err != nil {
		problem(err)
		return
	}
	state := map[string]runtime.Object{}
	for _, o := range items {
		state[objectKey(o)] = o
	}
	render := func() bool {
		objs := make([]runtime.Object, 0, len(state))
		for _, o := range state {
			objs = append(objs, o)
		}
		var buf bytes.Buffer
		if err := s.rows.ExecuteTemplate(&buf, "rows", &tableData{Kind: k, Rows: sortedRows(k, objs), CSRF: c.CSRF}); err != nil {
			klog.ErrorS(err, "Rendering live rows", "kind", k.Resource)
			return false
		}
		return send("rows", buf.String())
	}
	_, _ = fmt.Fprintf(w, "retry: 2000\n")
	if !render() {
		return
	}

	opts.ResourceVersion, opts.AllowWatchBookmarks = rv, true
	wi, err := k.watch(ctx, c, opts)
	if err != nil {
		problem(err)
		return
	}
	defer wi.Stop()
	settle := time.NewTimer(liveSettle)
	settle.Stop()
	heartbeat := time.NewTicker(liveHeartbeat)
	defer heartbeat.Stop()
	pending := false
	for {
		select {
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				state[objectKey(ev.Object)] = ev.Object
			case watch.Deleted:
				delete(state, objectKey(ev.Object))
			case watch.Bookmark:
				continue
			default: // watch.Error: the browser reconnects and lists again
				return
			}
			if !pending {
				pending = true
				settle.Reset(liveSettle)
			}
		case <-settle.C:
			pending = false
			if !render() {
				return
			}
		case <-heartbeat.C:
			if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil || rc.Flush() != nil {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

func objectKey(o runtime.Object) string {
	acc, err := meta.Accessor(o)
	if err != nil {
		return ""
	}
	return acc.GetNamespace() + "/" + acc.GetName()
}

// tableData is what the rows template renders.
type tableData struct {
	Kind *kind
	Rows []row
	CSRF string
	// Live is the URL of the table's event stream.
	Live string
}
