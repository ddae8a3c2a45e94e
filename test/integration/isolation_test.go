package integration

// Isolation of tenant objects: same names in two tenants, every verb on
// another tenant's object, the tenant label, virtual namespaces.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestIsolationSameNames has acme and globex own objects of the same names
// of every tenant kind: each member sees only its own, through kubectl and
// the dynamic client.
func TestIsolationSameNames(t *testing.T) {
	isoDemoTenants(t)
	// Each tenant's FloatingIP and LoadBalancer hold one of its public IPs.
	isoDemoPublicIPs(t, 2)
	ctx := framework.Context(t, 2*time.Minute)
	members := []struct {
		c      isoCaller
		tenant string
	}{{isoAlice, "acme"}, {isoBob, "globex"}}
	objects := []struct {
		kind, ns, name string
	}{
		{"Namespace", "", "shared-ns"},
		{"Network", "", "shared"},
		{"FloatingIP", "dev", "shared"},
		{"LoadBalancer", "dev", "shared"},
		{"HostClaim", "dev", "shared"},
	}

	// created[tenant][kind] is the object the tenant's member created.
	created := map[string]map[string]*unstructured.Unstructured{}
	for _, m := range members {
		created[m.tenant] = map[string]*unstructured.Unstructured{}
		for _, o := range objects {
			k := isoKind(t, o.kind)
			var obj unstructured.Unstructured
			m.c.kubectlJSON(ctx, t, &obj, "create", "-f", writeManifest(t, isoObject(k, o.ns, o.name, nil).Object))
			isoDeleteAtEnd(t, m.c, k, &obj)
			created[m.tenant][o.kind] = &obj
		}
	}

	for _, m := range members {
		foreign := isoForeign{}
		for tn, objs := range created {
			if tn != m.tenant {
				for _, o := range objs {
					foreign.add(o)
				}
			}
		}
		for _, o := range objects {
			k := isoKind(t, o.kind)
			own := created[m.tenant][o.kind]
			what := fmt.Sprintf("%s: %s", m.c, isoRef(k, o.ns, o.name))
			if own.GetLabels()[isoTenantLabel] != m.tenant {
				t.Errorf("%s: created with labels %v, want %s=%s", what, own.GetLabels(), isoTenantLabel, m.tenant)
			}
			var ns []string
			if k.namespaced {
				ns = []string{"-n", o.ns}
			}

			var got unstructured.Unstructured
			m.c.kubectlJSON(ctx, t, &got, append([]string{"get", k.qualified(), o.name}, ns...)...)
			if got.GetUID() != own.GetUID() {
				t.Errorf("%s: kubectl get returns uid %s, want its own %s", what, got.GetUID(), own.GetUID())
			}
			isoCheckObject(t, what+" kubectl get", &got, m.tenant, foreign)

			var list unstructured.UnstructuredList
			m.c.kubectlJSON(ctx, t, &list, append([]string{"get", k.qualified()}, ns...)...)
			isoCheckList(t, what+" kubectl list", &list, m.tenant, foreign)
			if !isoHasUID(&list, own.GetUID()) {
				t.Errorf("%s: kubectl list %v lacks its own object", what, isoNames(&list))
			}
			table, _, err := m.c.kubectl(ctx, append([]string{"get", k.qualified(), o.name, "-L", isoTenantLabel, "--no-headers"}, ns...)...)
			if err != nil {
				t.Fatal(err)
			}
			if fields := strings.Fields(table); len(fields) == 0 || fields[len(fields)-1] != m.tenant {
				t.Errorf("%s: kubectl get -L %s: %q, want the last column %s", what, isoTenantLabel, table, m.tenant)
			}

			dyn, err := m.c.resource(t, k, o.ns).Get(ctx, o.name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if dyn.GetUID() != own.GetUID() {
				t.Errorf("%s: dynamic get returns uid %s, want its own %s", what, dyn.GetUID(), own.GetUID())
			}
			dlist, err := m.c.resource(t, k, o.ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			isoCheckList(t, what+" dynamic list", dlist, m.tenant, foreign)
			if !isoHasUID(dlist, own.GetUID()) {
				t.Errorf("%s: dynamic list %v lacks its own object", what, isoNames(dlist))
			}
		}
	}
	for _, o := range objects {
		a, g := created["acme"][o.kind], created["globex"][o.kind]
		if a.GetUID() == g.GetUID() {
			t.Errorf("%s %s: acme and globex objects share uid %s", o.kind, o.name, a.GetUID())
		}
	}
}

// TestIsolationEveryVerb has bob use every verb on the name of an object
// only alice has, for every tenant kind: each is answered as if the object
// did not exist, and alice's object is untouched.
func TestIsolationEveryVerb(t *testing.T) {
	isoDemoTenants(t)
	// Alice's (and bob's own) FloatingIP and LoadBalancer each hold one of
	// their tenant's public IPs.
	isoDemoPublicIPs(t, 2)
	for _, k := range isoTenantKinds() {
		t.Run(k.kind, func(t *testing.T) {
			ctx := framework.Context(t, 2*time.Minute)
			const name, ns, missing = "alice-only", "dev", "never-existed"
			labels := map[string]string{"iso": "verbs"}
			selector := "iso=verbs"
			aliceRes := isoAlice.resource(t, k, ns)
			bobRes := isoBob.resource(t, k, ns)
			isoCreate(ctx, t, isoAlice, k, ns, name, labels)
			foreign := isoForeign{}
			// The syncer writes the object's status (and, for a
			// LoadBalancer, MetalLB's address) after the create: wait until
			// it has, so that only bob could change it from here on.
			isoSettled(ctx, t, aliceRes, name)

			var mine *unstructured.Unstructured
			reread := func() {
				t.Helper()
				var err error
				if mine, err = aliceRes.Get(ctx, name, metav1.GetOptions{}); err != nil {
					t.Fatalf("alice lost her %s: %v", isoRef(k, ns, name), err)
				}
				foreign.add(mine)
			}
			reread()
			// intact checks that nothing bob did changed alice's object.
			intact := func(after string) {
				t.Helper()
				got, err := aliceRes.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatalf("after bob's %s, alice's %s: %v", after, isoRef(k, ns, name), err)
				}
				if got.GetUID() != mine.GetUID() || got.GetResourceVersion() != mine.GetResourceVersion() || got.GetLabels()[isoTenantLabel] != "acme" {
					t.Errorf("after bob's %s, alice's object changed: uid %s rv %s labels %v, was uid %s rv %s",
						after, got.GetUID(), got.GetResourceVersion(), got.GetLabels(), mine.GetUID(), mine.GetResourceVersion())
				}
			}

			t.Run("get", func(t *testing.T) {
				for _, opts := range []metav1.GetOptions{{}, {ResourceVersion: "0"}} {
					_, err := bobRes.Get(ctx, name, opts)
					_, errMissing := bobRes.Get(ctx, missing, opts)
					isoSameAsMissing(t, fmt.Sprintf("bob get rv=%q", opts.ResourceVersion), err, name, errMissing, missing)
				}
				_, err := bobRes.Get(ctx, name, metav1.GetOptions{}, "status")
				_, errMissing := bobRes.Get(ctx, missing, metav1.GetOptions{}, "status")
				isoSameAsMissing(t, "bob get status", err, name, errMissing, missing)
			})

			t.Run("list", func(t *testing.T) {
				for _, opts := range []metav1.ListOptions{{}, {ResourceVersion: "0"}, {LabelSelector: selector}} {
					list, err := bobRes.List(ctx, opts)
					if err != nil {
						t.Fatal(err)
					}
					isoCheckList(t, fmt.Sprintf("bob list %+v", opts), list, "globex", foreign)
				}
			})

			t.Run("watch", func(t *testing.T) {
				w, err := bobRes.Watch(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Stop()
				// Alice writes her object while bob watches; then bob's own
				// write. Bob must see his own and nothing of alice's before it.
				patch := `{"metadata":{"annotations":{"iso/touched":"by-alice"}}}`
				if _, err := aliceRes.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
				s := isoCreate(ctx, t, isoBob, k, ns, "bob-sentinel", labels)
				events := isoEventsUntil(t, "bob watch", w, isoIs(watch.Added, s.GetUID()))
				isoCheckEvents(t, "bob watch", events, "globex", foreign)
				reread()
			})

			t.Run("update", func(t *testing.T) {
				// Alice's object as alice read it, resourceVersion and all.
				obj := mine.DeepCopy()
				obj.SetAnnotations(map[string]string{"iso/by": "bob"})
				_, err := bobRes.Update(ctx, obj, metav1.UpdateOptions{})
				isoWantErr(t, "bob update", err, 404)
				obj.SetResourceVersion("")
				_, err = bobRes.Update(ctx, obj, metav1.UpdateOptions{})
				isoWantErr(t, "bob unconditional update", err, 404)
				intact("update")
			})

			t.Run("patch", func(t *testing.T) {
				for _, p := range []struct {
					typ  types.PatchType
					body string
				}{
					{types.MergePatchType, `{"metadata":{"annotations":{"iso/by":"bob"}}}`},
					{types.JSONPatchType, `[{"op":"add","path":"/metadata/annotations","value":{"iso/by":"bob"}}]`},
				} {
					_, err := bobRes.Patch(ctx, name, p.typ, []byte(p.body), metav1.PatchOptions{})
					_, errMissing := bobRes.Patch(ctx, missing, p.typ, []byte(p.body), metav1.PatchOptions{})
					isoSameAsMissing(t, "bob "+string(p.typ), err, name, errMissing, missing)
				}
				intact("patch")
			})

			t.Run("delete", func(t *testing.T) {
				err := bobRes.Delete(ctx, name, metav1.DeleteOptions{})
				errMissing := bobRes.Delete(ctx, missing, metav1.DeleteOptions{})
				isoSameAsMissing(t, "bob delete", err, name, errMissing, missing)
				uid := mine.GetUID()
				err = bobRes.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
				isoWantErr(t, "bob delete with alice's uid as precondition", err, 404)
				intact("delete")
			})

			t.Run("kubectl", func(t *testing.T) {
				nsArgs := nsArgs(k)
				for _, args := range [][]string{
					{"get", k.qualified(), name},
					{"describe", k.qualified(), name},
					{"label", k.qualified(), name, "iso/by=bob"},
					{"annotate", k.qualified(), name, "iso/by=bob"},
					{"patch", k.qualified(), name, "--type=merge", "-p", `{"metadata":{"labels":{"iso-by":"bob"}}}`},
					{"delete", k.qualified(), name},
				} {
					_, stderr, err := isoBob.kubectl(ctx, append(args, nsArgs...)...)
					if args[0] == "describe" {
						// kubectl describe words its 404 in its own way.
						if err == nil || !strings.Contains(stderr, "not found") {
							t.Errorf("bob kubectl describe: err=%v %s", err, stderr)
						}
						continue
					}
					isoWantKubectlErr(t, "bob kubectl "+args[0], stderr, err, "NotFound", `"`+name+`" not found`)
				}
				intact("kubectl")
			})

			t.Run("create", func(t *testing.T) {
				bobs := isoCreate(ctx, t, isoBob, k, ns, name, labels)
				if bobs.GetUID() == mine.GetUID() || bobs.GetLabels()[isoTenantLabel] != "globex" {
					t.Errorf("bob's create of %s: uid %s labels %v, want his own object of globex", name, bobs.GetUID(), bobs.GetLabels())
				}
				got, err := bobRes.Get(ctx, name, metav1.GetOptions{})
				if err != nil || got.GetUID() != bobs.GetUID() {
					t.Errorf("bob reads %v (%v), want his own uid %s", got, err, bobs.GetUID())
				}
				intact("create")
				uid := bobs.GetUID()
				if err := bobRes.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil {
					t.Fatalf("bob deleting his own %s: %v", name, err)
				}
				intact("delete of his own object of the same name")
			})

			t.Run("apply", func(t *testing.T) {
				// Server-side apply creates what does not exist: bob's own object.
				body, err := json.Marshal(isoObject(k, ns, name, map[string]string{"iso": "verbs", "applied": "bob"}).Object)
				if err != nil {
					t.Fatal(err)
				}
				applied, err := bobRes.Patch(ctx, name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "iso-bob"})
				if err != nil {
					t.Fatalf("bob apply: %v", err)
				}
				isoDeleteAtEnd(t, isoBob, k, applied)
				if applied.GetUID() == mine.GetUID() || applied.GetLabels()[isoTenantLabel] != "globex" {
					t.Errorf("bob's apply of %s: uid %s labels %v, want his own object of globex", name, applied.GetUID(), applied.GetLabels())
				}
				intact("apply")
			})

			t.Run("deletecollection", func(t *testing.T) {
				// Bob owns an object of alice's name and another one; each
				// deletecollection removes his and leaves alice's.
				bobsSame := isoCreate(ctx, t, isoBob, k, ns, name, labels)
				bobsOther := isoCreate(ctx, t, isoBob, k, ns, "bob-dc", labels)
				for _, c := range []struct {
					opts metav1.ListOptions
					gone *unstructured.Unstructured
				}{
					{metav1.ListOptions{FieldSelector: "metadata.name=" + name}, bobsSame},
					{metav1.ListOptions{LabelSelector: selector}, bobsOther},
				} {
					if err := bobRes.DeleteCollection(ctx, metav1.DeleteOptions{}, c.opts); err != nil {
						t.Fatalf("bob deletecollection %+v: %v", c.opts, err)
					}
					intact(fmt.Sprintf("deletecollection %+v", c.opts))
					if _, err := bobRes.Get(ctx, c.gone.GetName(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
						t.Errorf("bob's %s after his deletecollection %+v: %v, want it gone", c.gone.GetName(), c.opts, err)
					}
				}
				left, err := bobRes.List(ctx, metav1.ListOptions{LabelSelector: selector})
				if err != nil {
					t.Fatal(err)
				}
				if len(left.Items) != 0 {
					t.Errorf("bob's deletecollection left his %v", isoNames(left))
				}
				list, err := aliceRes.List(ctx, metav1.ListOptions{LabelSelector: selector})
				if err != nil {
					t.Fatal(err)
				}
				if names := isoNames(list); len(names) != 1 || !isoHasUID(list, mine.GetUID()) {
					t.Errorf("alice's objects after bob's deletecollection: %v, want her %s", names, name)
				}
			})
		})
	}
}

// TestIsolationTenantLabel checks that a tenant cannot put its objects, at
// create or later, into another tenant by the tenant label.
func TestIsolationTenantLabel(t *testing.T) {
	isoDemoTenants(t)
	for _, k := range isoTenantKinds() {
		t.Run(k.kind, func(t *testing.T) {
			ctx := framework.Context(t, 2*time.Minute)
			const ns = "dev"
			aliceRes, bobRes := isoAlice.resource(t, k, ns), isoBob.resource(t, k, ns)
			nsArgs := nsArgs(k)

			// On create, through the API and through kubectl.
			_, err := aliceRes.Create(ctx, isoObject(k, ns, "label-create", map[string]string{isoTenantLabel: "globex"}), metav1.CreateOptions{})
			isoWantErr(t, "alice creating with tenant globex", err, 422, isoTenantLabel)
			_, stderr, err := isoAlice.kubectl(ctx, "create", "-f", writeManifest(t, isoObject(k, ns, "label-create", map[string]string{isoTenantLabel: "globex"}).Object))
			isoWantKubectlErr(t, "alice kubectl create with tenant globex", stderr, err, "Invalid", isoTenantLabel)
			_, err = aliceRes.Get(ctx, "label-create", metav1.GetOptions{})
			isoWantErr(t, "alice get of the refused object", err, 404)
			_, err = bobRes.Get(ctx, "label-create", metav1.GetOptions{})
			isoWantErr(t, "bob get of alice's refused object", err, 404)

			mine := isoCreate(ctx, t, isoAlice, k, ns, "label-update", nil)
			name := mine.GetName()
			// The syncer may write the object (a Namespace's status) after
			// it was read: that 409 is no answer to the relabel, which is
			// sent again on the object read anew.
			err = retry.OnError(retry.DefaultRetry, isoModifiedConflict, func() error {
				cur, err := aliceRes.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				relabelled := cur.DeepCopy()
				relabelled.SetLabels(map[string]string{isoTenantLabel: "globex"})
				_, err = aliceRes.Update(ctx, relabelled, metav1.UpdateOptions{})
				return err
			})
			isoWantErr(t, "alice update to tenant globex", err, 422, isoTenantLabel)
			for _, value := range []string{"globex", "", "acme-2"} {
				_, err = aliceRes.Patch(ctx, name, types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, isoTenantLabel, value)), metav1.PatchOptions{})
				isoWantErr(t, fmt.Sprintf("alice merge patch to tenant %q", value), err, 422, isoTenantLabel)
			}
			_, err = aliceRes.Patch(ctx, name, types.JSONPatchType, []byte(`[{"op":"replace","path":"/metadata/labels/tenant.io~1tenant","value":"globex"}]`), metav1.PatchOptions{})
			isoWantErr(t, "alice json patch to tenant globex", err, 422, isoTenantLabel)
			body, _ := json.Marshal(isoObject(k, ns, name, map[string]string{isoTenantLabel: "globex"}).Object)
			_, err = aliceRes.Patch(ctx, name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "iso-alice", Force: ptr.To(true)})
			isoWantErr(t, "alice apply of tenant globex", err, 422, isoTenantLabel)
			_, stderr, err = isoAlice.kubectl(ctx, append([]string{"label", k.qualified(), name, "--overwrite", isoTenantLabel + "=globex"}, nsArgs...)...)
			isoWantKubectlErr(t, "alice kubectl label tenant globex", stderr, err, "Invalid", isoTenantLabel)
			// Dropping the label cannot move the object out of acme either.
			if _, _, err := isoAlice.kubectl(ctx, append([]string{"label", k.qualified(), name, isoTenantLabel + "-"}, nsArgs...)...); err != nil {
				t.Logf("alice kubectl label %s-: %v", isoTenantLabel, err)
			}
			// The provider acting in acme writes status; labels are not status.
			statusPatch := fmt.Sprintf(`{"metadata":{"labels":{%q:"globex"}}}`, isoTenantLabel)
			if _, _, err := isoAdmin.kubectl(ctx, append(append([]string{"patch", k.qualified(), name, "--subresource=status", "--type=merge", "-p", statusPatch}, nsArgs...), providerInTenant...)...); err != nil {
				t.Logf("admin in acme patching status labels: %v", err)
			}

			got, err := aliceRes.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("alice lost her object: %v", err)
			}
			if got.GetUID() != mine.GetUID() || got.GetLabels()[isoTenantLabel] != "acme" {
				t.Errorf("alice's object after the relabel attempts: uid %s labels %v, want uid %s in acme", got.GetUID(), got.GetLabels(), mine.GetUID())
			}
			_, err = bobRes.Get(ctx, name, metav1.GetOptions{})
			isoWantErr(t, "bob get of alice's object", err, 404)
			foreign := isoForeign{}
			foreign.add(mine)
			for _, sel := range []string{isoTenantLabel + "=acme", isoTenantLabel + "=globex", ""} {
				list, err := bobRes.List(ctx, metav1.ListOptions{LabelSelector: sel})
				if err != nil {
					t.Fatal(err)
				}
				isoCheckList(t, "bob list "+sel, list, "globex", foreign)
			}
			list, err := aliceRes.List(ctx, metav1.ListOptions{LabelSelector: isoTenantLabel + "=globex"})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 0 {
				t.Errorf("alice lists %v labelled globex", isoNames(list))
			}
		})
	}
}

// TestIsolationVirtualNamespaces checks the virtual namespaces of tenants:
// a namespace the tenant does not have is not found, whoever else has it.
func TestIsolationVirtualNamespaces(t *testing.T) {
	isoDemoTenants(t)
	ctx := framework.Context(t, 2*time.Minute)
	nsKind, fipKind, lbKind, hcKind := isoKind(t, "Namespace"), isoKind(t, "FloatingIP"), isoKind(t, "LoadBalancer"), isoKind(t, "HostClaim")
	isoCreate(ctx, t, isoAlice, nsKind, "", "iso-ns-both", nil)
	isoCreate(ctx, t, isoAlice, nsKind, "", "iso-ns-alice", nil)
	isoCreate(ctx, t, isoBob, nsKind, "", "iso-ns-both", nil)
	aliceFIPs := isoForeign{}
	for _, ns := range []string{"dev", "iso-ns-both", "iso-ns-alice"} {
		aliceFIPs.add(isoCreate(ctx, t, isoAlice, fipKind, ns, "web", nil))
	}
	bobFIPs := isoForeign{}
	for _, ns := range []string{"dev", "iso-ns-both"} {
		bobFIPs.add(isoCreate(ctx, t, isoBob, fipKind, ns, "web", nil))
	}
	aliceLB := isoCreate(ctx, t, isoAlice, lbKind, "iso-ns-alice", "web", nil)
	isoCreate(ctx, t, isoAlice, hcKind, "iso-ns-alice", "web", nil)

	t.Run("a namespace nobody has", func(t *testing.T) {
		_, stderr, err := isoAlice.kubectl(ctx, "get", "floatingips", "-n", "nosuch")
		isoWantKubectlErr(t, "alice kubectl -n nosuch get floatingips", stderr, err, "NotFound", `"nosuch"`, "namespaces")
		res := isoAlice.resource(t, fipKind, "nosuch")
		_, err = res.List(ctx, metav1.ListOptions{})
		isoWantErr(t, "alice list in nosuch", err, 404, `"nosuch"`)
		if st := isoStatus(t, "alice list in nosuch", err); st.Details == nil || st.Details.Kind != "namespaces" || st.Details.Name != "nosuch" {
			t.Errorf("alice list in nosuch: details %+v, want namespaces nosuch", st.Details)
		}
		_, err = res.Get(ctx, "web", metav1.GetOptions{})
		isoWantErr(t, "alice get in nosuch", err, 404, `"nosuch"`)
		_, err = res.Watch(ctx, metav1.ListOptions{})
		isoWantErr(t, "alice watch in nosuch", err, 404, `"nosuch"`)
		_, err = res.Create(ctx, isoObject(fipKind, "nosuch", "web", nil), metav1.CreateOptions{})
		isoWantErr(t, "alice create in nosuch", err, 404, `"nosuch"`)
	})

	t.Run("all namespaces", func(t *testing.T) {
		var list unstructured.UnstructuredList
		isoAlice.kubectlJSON(ctx, t, &list, "get", "floatingips", "-A")
		isoCheckList(t, "alice kubectl get floatingips -A", &list, "acme", bobFIPs)
		for uid, desc := range aliceFIPs {
			if !isoHasUID(&list, uid) {
				t.Errorf("alice kubectl get floatingips -A: %v lacks her %s", isoNames(&list), desc)
			}
		}
		dlist, err := isoAlice.resource(t, fipKind, "").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		isoCheckList(t, "alice lists floatingips in all namespaces", dlist, "acme", bobFIPs)
		blist, err := isoBob.resource(t, fipKind, "").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		isoCheckList(t, "bob lists floatingips in all namespaces", blist, "globex", aliceFIPs)
		for _, ns := range []string{"iso-ns-alice", "iso-ns-both", "dev"} {
			sel, err := isoBob.resource(t, fipKind, "").List(ctx, metav1.ListOptions{FieldSelector: "metadata.namespace=" + ns})
			if err != nil {
				t.Fatal(err)
			}
			isoCheckList(t, "bob field-selects namespace "+ns, sel, "globex", aliceFIPs)
		}
	})

	t.Run("another tenant's namespace", func(t *testing.T) {
		for _, k := range []kindCase{fipKind, lbKind, hcKind} {
			res := isoBob.resource(t, k, "iso-ns-alice")
			_, err := res.List(ctx, metav1.ListOptions{})
			_, errMissing := isoBob.resource(t, k, "iso-ns-never").List(ctx, metav1.ListOptions{})
			isoSameAsMissing(t, "bob list "+k.resource+" in iso-ns-alice", err, "iso-ns-alice", errMissing, "iso-ns-never")
			_, err = res.Get(ctx, "web", metav1.GetOptions{})
			isoWantErr(t, "bob get "+k.resource+" in iso-ns-alice", err, 404, `"iso-ns-alice"`)
			_, err = res.Watch(ctx, metav1.ListOptions{})
			isoWantErr(t, "bob watch "+k.resource+" in iso-ns-alice", err, 404, `"iso-ns-alice"`)
			_, err = res.Create(ctx, isoObject(k, "iso-ns-alice", "bobs", nil), metav1.CreateOptions{})
			isoWantErr(t, "bob create "+k.resource+" in iso-ns-alice", err, 404, `"iso-ns-alice"`)
			err = res.Delete(ctx, "web", metav1.DeleteOptions{})
			isoWantErr(t, "bob delete "+k.resource+" in iso-ns-alice", err, 404)
			err = res.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
			isoWantErr(t, "bob deletecollection "+k.resource+" in iso-ns-alice", err, 404)
			_, err = res.Patch(ctx, "web", types.MergePatchType, []byte(`{"metadata":{"labels":{"iso":"bob"}}}`), metav1.PatchOptions{})
			isoWantErr(t, "bob patch "+k.resource+" in iso-ns-alice", err, 404)
			_, stderr, err := isoBob.kubectl(ctx, "get", k.qualified(), "-n", "iso-ns-alice")
			isoWantKubectlErr(t, "bob kubectl get "+k.resource+" -n iso-ns-alice", stderr, err, "NotFound", `"iso-ns-alice"`)
		}
		_, err := isoBob.resource(t, nsKind, "").Get(ctx, "iso-ns-alice", metav1.GetOptions{})
		isoWantErr(t, "bob get namespace iso-ns-alice", err, 404)
		// Alice's objects there are untouched.
		if got, err := isoAlice.resource(t, lbKind, "iso-ns-alice").Get(ctx, "web", metav1.GetOptions{}); err != nil || got.GetUID() != aliceLB.GetUID() {
			t.Errorf("alice's LoadBalancer in iso-ns-alice: %v %v", got, err)
		}
		list, err := isoAlice.resource(t, fipKind, "iso-ns-alice").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 {
			t.Errorf("alice's FloatingIPs in iso-ns-alice: %v", isoNames(list))
		}
	})

	t.Run("a namespace both tenants have", func(t *testing.T) {
		for _, m := range []struct {
			c            isoCaller
			tenant       string
			own, foreign isoForeign
		}{{isoAlice, "acme", aliceFIPs, bobFIPs}, {isoBob, "globex", bobFIPs, aliceFIPs}} {
			res := m.c.resource(t, fipKind, "iso-ns-both")
			list, err := res.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			isoCheckList(t, m.c.String()+" lists floatingips in iso-ns-both", list, m.tenant, m.foreign)
			got, err := res.Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := m.own[got.GetUID()]; !ok {
				t.Errorf("%s gets iso-ns-both/web uid %s, not its own", m.c, got.GetUID())
			}
		}
	})
}
