package integration

// Isolation in lists and watches: selectors, pagination, and watches from
// an old resourceVersion.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestIsolationSelectorsAndPagination checks that no selector, resource
// version or continue token brings another tenant's objects into a list.
func TestIsolationSelectorsAndPagination(t *testing.T) {
	isoDemoTenants(t)
	// Three FloatingIPs a tenant, then three LoadBalancers.
	isoDemoPublicIPs(t, 3)
	for _, k := range isoTenantKinds() {
		t.Run(k.kind, func(t *testing.T) {
			ctx := framework.Context(t, 2*time.Minute)
			const ns = "dev"
			labels := map[string]string{"iso": "page"}
			foreign := isoForeign{}
			for _, n := range []string{"page-a", "page-b", "page-c"} {
				foreign.add(isoCreate(ctx, t, isoAlice, k, ns, n, labels))
			}
			bobsB := isoCreate(ctx, t, isoBob, k, ns, "page-b", labels)

			type scope struct{ name, ns string }
			scopes := []scope{{"cluster", ""}}
			if k.namespaced {
				scopes = []scope{{"namespace " + ns, ns}, {"all namespaces", ""}}
			}
			for _, scope := range scopes {
				t.Run(scope.name, func(t *testing.T) {
					aliceRes, bobRes := isoAlice.resource(t, k, scope.ns), isoBob.resource(t, k, scope.ns)
					aliceList, err := aliceRes.List(ctx, metav1.ListOptions{})
					if err != nil {
						t.Fatal(err)
					}
					for _, rv := range []string{"", "0"} {
						for _, c := range []struct {
							opts metav1.ListOptions
							want []types.UID // of bob's objects, nil: nothing
						}{
							{opts: metav1.ListOptions{LabelSelector: isoTenantLabel + "=acme"}},
							{opts: metav1.ListOptions{LabelSelector: isoTenantLabel + " in (acme,globex),iso=page"}, want: []types.UID{bobsB.GetUID()}},
							{opts: metav1.ListOptions{LabelSelector: isoTenantLabel + "!=globex"}},
							{opts: metav1.ListOptions{FieldSelector: "metadata.name=page-a"}},
							{opts: metav1.ListOptions{FieldSelector: "metadata.name=page-c", LabelSelector: "iso=page"}},
							{opts: metav1.ListOptions{FieldSelector: "metadata.name=page-b"}, want: []types.UID{bobsB.GetUID()}},
							{opts: metav1.ListOptions{LabelSelector: "iso=page"}, want: []types.UID{bobsB.GetUID()}},
						} {
							c.opts.ResourceVersion = rv
							what := fmt.Sprintf("bob list %+v", c.opts)
							list, err := bobRes.List(ctx, c.opts)
							if err != nil {
								t.Fatalf("%s: %v", what, err)
							}
							isoCheckList(t, what, list, "globex", foreign)
							var got []types.UID
							for _, it := range list.Items {
								got = append(got, it.GetUID())
							}
							if fmt.Sprint(got) != fmt.Sprint(c.want) {
								t.Errorf("%s: got %v, want bob's %v", what, isoNames(list), c.want)
							}
						}
					}
					for _, match := range []metav1.ResourceVersionMatch{metav1.ResourceVersionMatchNotOlderThan, metav1.ResourceVersionMatchExact} {
						opts := metav1.ListOptions{ResourceVersion: aliceList.GetResourceVersion(), ResourceVersionMatch: match}
						list, err := bobRes.List(ctx, opts)
						if err != nil {
							t.Fatalf("bob list %+v: %v", opts, err)
						}
						isoCheckList(t, fmt.Sprintf("bob list %+v", opts), list, "globex", foreign)
					}

					// Alice pages through her objects one at a time.
					var aliceNames []string
					var tokens []string
					opts := metav1.ListOptions{LabelSelector: "iso=page", Limit: 1}
					for i := 0; ; i++ {
						page, err := aliceRes.List(ctx, opts)
						if err != nil {
							t.Fatal(err)
						}
						aliceNames = append(aliceNames, isoNames(page)...)
						if page.GetContinue() == "" || i > 10 {
							break
						}
						tokens = append(tokens, page.GetContinue())
						opts.Continue = page.GetContinue()
					}
					if len(aliceNames) != 3 || len(tokens) != 2 {
						t.Fatalf("alice's pages: %v with %d continue tokens, want her 3 objects", aliceNames, len(tokens))
					}
					// Without a selector, the count of what is left is alice's alone.
					first, err := aliceRes.List(ctx, metav1.ListOptions{Limit: 1})
					if err != nil {
						t.Fatal(err)
					}
					if n := first.GetRemainingItemCount(); n != nil && *n != int64(len(aliceList.Items)-1) {
						t.Errorf("alice's first page of one says %d items remain, want %d: the count includes other tenants' objects", *n, len(aliceList.Items)-1)
					}

					// Bob continues alice's lists with her tokens: he gets
					// nothing of hers (an error would do too).
					for i, token := range tokens {
						for _, sel := range []string{"iso=page", ""} {
							opts := metav1.ListOptions{LabelSelector: sel, Limit: 1, Continue: token}
							for page := 0; page < 10; page++ {
								what := fmt.Sprintf("bob continuing alice's token %d (selector %q)", i, sel)
								list, err := bobRes.List(ctx, opts)
								if err != nil {
									t.Logf("%s: refused: %v", what, err)
									break
								}
								isoCheckList(t, what, list, "globex", foreign)
								if list.GetContinue() == "" {
									break
								}
								opts.Continue = list.GetContinue()
							}
						}
					}

					// Bob pages through his own: only his page-b.
					var bobNames []string
					opts = metav1.ListOptions{LabelSelector: "iso=page", Limit: 1}
					for i := 0; i < 10; i++ {
						page, err := bobRes.List(ctx, opts)
						if err != nil {
							t.Fatal(err)
						}
						isoCheckList(t, "bob's own pages", page, "globex", foreign)
						bobNames = append(bobNames, isoNames(page)...)
						if page.GetContinue() == "" {
							break
						}
						opts.Continue = page.GetContinue()
					}
					if len(bobNames) != 1 || !strings.HasSuffix(bobNames[0], "page-b") {
						t.Errorf("bob's pages: %v, want only his page-b", bobNames)
					}
				})
			}
		})
	}
}

// TestIsolationWatchFromOldResourceVersion has bob watch from a
// resourceVersion older than alice's writes, and in every other way a watch
// can start: he sees his own events and none of alice's.
func TestIsolationWatchFromOldResourceVersion(t *testing.T) {
	isoDemoTenants(t)
	isoDemoPublicIPs(t, 2)
	for _, k := range isoTenantKinds() {
		t.Run(k.kind, func(t *testing.T) {
			ctx := framework.Context(t, 2*time.Minute)
			const ns = "dev"
			bobList, err := isoBob.resource(t, k, ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			old := bobList.GetResourceVersion()

			// Alice's history after old: ADDED, MODIFIED of a; ADDED, DELETED of b.
			aliceRes := isoAlice.resource(t, k, ns)
			foreign := isoForeign{}
			a := isoCreate(ctx, t, isoAlice, k, ns, "old-rv-a", nil)
			foreign.add(a)
			if _, err := aliceRes.Patch(ctx, a.GetName(), types.MergePatchType, []byte(`{"metadata":{"labels":{"iso":"modified"}}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			b, err := aliceRes.Create(ctx, isoObject(k, ns, "old-rv-b", nil), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			foreign.add(b)
			if err := aliceRes.Delete(ctx, b.GetName(), metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}

			// The control: alice, from the same resourceVersion, sees her history.
			w, err := aliceRes.Watch(ctx, metav1.ListOptions{ResourceVersion: old})
			if err != nil {
				t.Fatal(err)
			}
			events := isoEventsUntil(t, "alice watching from "+old, w, isoIs(watch.Deleted, b.GetUID()))
			w.Stop()
			// The syncer's writes of a Namespace's status are not alice's:
			// a MODIFIED that changes nothing but what the syncer writes
			// (syncerWrite) is left out of her history.
			var seen []string
			last := map[string]*unstructured.Unstructured{}
			for _, ev := range events {
				o, ok := ev.Object.(*unstructured.Unstructured)
				if !ok || !strings.HasPrefix(o.GetName(), "old-rv-") {
					continue
				}
				prev := last[o.GetName()]
				last[o.GetName()] = o
				if ev.Type == watch.Modified && prev != nil && syncerWrite(prev, o) {
					continue
				}
				seen = append(seen, string(ev.Type)+" "+o.GetName())
			}
			if want := "[ADDED old-rv-a MODIFIED old-rv-a ADDED old-rv-b DELETED old-rv-b]"; fmt.Sprint(seen) != want {
				t.Errorf("alice watching from %s sees %v, want %s", old, seen, want)
			}

			for _, c := range []struct {
				name     string
				opts     metav1.ListOptions
				sentinel string
			}{
				{name: "old resourceVersion", opts: metav1.ListOptions{ResourceVersion: old}},
				{name: "old resourceVersion with bookmarks", opts: metav1.ListOptions{ResourceVersion: old, AllowWatchBookmarks: true}},
				{name: "resourceVersion 0", opts: metav1.ListOptions{ResourceVersion: "0"}},
				{name: "resourceVersion 0 with bookmarks", opts: metav1.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: true}},
				{name: "resourceVersion unset", opts: metav1.ListOptions{}},
				{name: "initial events", opts: metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}},
				{name: "old resourceVersion and alice's label", opts: metav1.ListOptions{ResourceVersion: old, LabelSelector: "iso in (modified,sentinel)"}},
				// Bob's sentinel has the name of alice's object: the watch of
				// one name is bob's name, not alice's.
				{name: "old resourceVersion and alice's name", opts: metav1.ListOptions{ResourceVersion: old, FieldSelector: "metadata.name=old-rv-a"}, sentinel: "old-rv-a"},
				{name: "old resourceVersion and alice's deleted name", opts: metav1.ListOptions{ResourceVersion: old, FieldSelector: "metadata.name=old-rv-b", AllowWatchBookmarks: true}, sentinel: "old-rv-b"},
			} {
				t.Run(c.name, func(t *testing.T) {
					sentinel := c.sentinel
					if sentinel == "" {
						sentinel = "bob-sentinel"
					}
					isoWatchSeesOnlyOwn(ctx, t, isoBob, "globex", k, ns, c.opts, ns, sentinel, foreign)
					if k.namespaced {
						isoWatchSeesOnlyOwn(ctx, t, isoBob, "globex", k, "", c.opts, ns, sentinel, foreign)
					}
				})
			}
		})
	}
}
