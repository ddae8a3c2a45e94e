package integration

// The provider's views (admin.tenant.io): every tenant's Namespaces,
// Networks, FloatingIPs, LoadBalancers and HostClaims, read-only, named so
// that two tenants' objects of the same name never share a key.

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/adminclient"
	"tenant.io/tenant-apiserver/pkg/apis/admin"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// adminView is k's view in admin.tenant.io as c reads it, in namespace ns
// ("" for all).
func adminView(t *testing.T, c isoCaller, k kindCase, ns string) dynamic.ResourceInterface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(c.config())
	if err != nil {
		t.Fatal(err)
	}
	gvr := admin.SchemeGroupVersion.WithResource(k.resource)
	if k.namespaced && ns != "" {
		return dyn.Resource(gvr).Namespace(ns)
	}
	return dyn.Resource(gvr)
}

// adminKey is the namespace/name key of tenant t's object of k named name
// (in t's namespace ns) in the admin views.
func adminKey(k kindCase, t, ns, name string) string {
	if k.namespaced {
		return admin.Name(t, ns) + "/" + name
	}
	return admin.Name(t, name)
}

func keyOf(o metav1.Object) string {
	if o.GetNamespace() != "" {
		return o.GetNamespace() + "/" + o.GetName()
	}
	return o.GetName()
}

// viewKeys returns the keys of list's items, and fails the test when two
// items share a key.
func viewKeys(t *testing.T, what string, list *unstructured.UnstructuredList) map[string]types.UID {
	t.Helper()
	keys := map[string]types.UID{}
	for _, it := range list.Items {
		k := keyOf(&it)
		if uid, dup := keys[k]; dup {
			t.Errorf("%s: two objects under key %q (%s and %s)", what, k, uid, it.GetUID())
		}
		keys[k] = it.GetUID()
	}
	return keys
}

// TestAdminViewsAcrossTenants checks the provider's views of every tenant
// kind: the same name in two tenants gives two keys, every read (get, list,
// selectors, pages, watch) names objects that way, and nothing can be written.
func TestAdminViewsAcrossTenants(t *testing.T) {
	isoDemoTenants(t)
	isoDemoPublicIPs(t, 1)
	const ns = "dev"
	for _, k := range isoTenantKinds() {
		t.Run(k.kind, func(t *testing.T) {
			ctx := framework.Context(t, 2*time.Minute)
			name := "seen-" + strings.ToLower(k.kind)
			labels := map[string]string{"admin-view": "test"}
			alices := isoCreate(ctx, t, isoAlice, k, ns, name, labels)
			bobs := isoCreate(ctx, t, isoBob, k, ns, name, labels)
			aliceKey, bobKey := adminKey(k, "acme", ns, name), adminKey(k, "globex", ns, name)
			view := adminView(t, isoAdmin, k, "")

			all, err := view.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("admin list: %v", err)
			}
			keys := viewKeys(t, "admin list", all)
			if keys[aliceKey] != alices.GetUID() || keys[bobKey] != bobs.GetUID() {
				t.Fatalf("admin list: %s is %q and %s is %q, want alice's %s and bob's %s (keys %v)",
					aliceKey, keys[aliceKey], bobKey, keys[bobKey], alices.GetUID(), bobs.GetUID(), keys)
			}
			for _, it := range all.Items {
				if it.GetLabels()[isoTenantLabel] == "" {
					t.Errorf("admin list: %s has no %s label", keyOf(&it), isoTenantLabel)
				}
			}

			// Get, by the view's key.
			getIn := func(key string) (*unstructured.Unstructured, error) {
				if k.namespaced {
					nsName, n, _ := strings.Cut(key, "/")
					return adminView(t, isoAdmin, k, nsName).Get(ctx, n, metav1.GetOptions{})
				}
				return view.Get(ctx, key, metav1.GetOptions{})
			}
			for key, want := range map[string]types.UID{aliceKey: alices.GetUID(), bobKey: bobs.GetUID()} {
				got, err := getIn(key)
				if err != nil {
					t.Fatalf("admin get %s: %v", key, err)
				}
				if got.GetUID() != want || keyOf(got) != key {
					t.Errorf("admin get %s: got %s (%s), want UID %s", key, keyOf(got), got.GetUID(), want)
				}
			}
			missing := []string{adminKey(k, "acme", ns, "missing"), adminKey(k, "nosuchtenant", ns, name)}
			if k.namespaced {
				// The tenant's namespace without its tenant; not a namespace.
				missing = append(missing, ns+"/"+name, adminKey(k, "acme", "Bad_NS", name))
			} else {
				missing = append(missing, name, "Bad_Tenant."+name)
			}
			for _, key := range missing {
				_, err := getIn(key)
				isoWantErr(t, "admin get "+key, err, http.StatusNotFound)
			}

			// Selections: by tenant label, by name, by namespace.
			type sel struct {
				what string
				res  dynamic.ResourceInterface
				opts metav1.ListOptions
				want []string
			}
			sels := []sel{
				{"tenant label", view, metav1.ListOptions{LabelSelector: isoTenantLabel + "=globex,admin-view=test"}, []string{bobKey}},
				{"tenant label set", view, metav1.ListOptions{LabelSelector: isoTenantLabel + " in (acme,globex),admin-view=test"}, []string{aliceKey, bobKey}},
				{"other label", view, metav1.ListOptions{LabelSelector: "admin-view=test"}, []string{aliceKey, bobKey}},
				{"conflicting tenants", view, metav1.ListOptions{LabelSelector: isoTenantLabel + "=acme", FieldSelector: "metadata.name=" + strings.TrimPrefix(bobKey, admin.Name("globex", ns)+"/")}, nil},
			}
			if k.namespaced {
				sels[3].opts.FieldSelector = "metadata.namespace=" + admin.Name("globex", ns)
				sels = append(sels,
					sel{"namespace", adminView(t, isoAdmin, k, admin.Name("acme", ns)), metav1.ListOptions{LabelSelector: "admin-view=test"}, []string{aliceKey}},
					sel{"namespace field", view, metav1.ListOptions{FieldSelector: "metadata.namespace=" + admin.Name("globex", ns), LabelSelector: "admin-view=test"}, []string{bobKey}},
					sel{"name field", view, metav1.ListOptions{FieldSelector: "metadata.name=" + name}, []string{aliceKey, bobKey}},
					sel{"unknown tenant's namespace", adminView(t, isoAdmin, k, admin.Name("nosuchtenant", ns)), metav1.ListOptions{}, nil})
			} else {
				sels[3].opts.FieldSelector = "metadata.name=" + bobKey
				sels = append(sels,
					sel{"name field", view, metav1.ListOptions{FieldSelector: "metadata.name=" + aliceKey}, []string{aliceKey}},
					sel{"name without tenant", view, metav1.ListOptions{FieldSelector: "metadata.name=" + name}, nil})
			}
			for _, s := range sels {
				for _, rv := range []string{"", "0"} {
					s.opts.ResourceVersion = rv
					list, err := s.res.List(ctx, s.opts)
					if err != nil {
						t.Fatalf("admin list by %s %+v: %v", s.what, s.opts, err)
					}
					var got []string
					for k := range viewKeys(t, s.what, list) {
						got = append(got, k)
					}
					sort.Strings(got)
					if fmt.Sprint(got) != fmt.Sprint(s.want) {
						t.Errorf("admin list by %s %+v: got %v, want %v", s.what, s.opts, got, s.want)
					}
				}
			}
			if _, err := view.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name!=" + aliceKey}); !k.namespaced {
				isoWantErr(t, "admin list by metadata.name!=", err, http.StatusBadRequest, "equality")
			} else if err != nil {
				t.Errorf("admin list by metadata.name!= of a namespaced kind: %v", err)
			}

			// Pages of one: every object once, keys unique across pages.
			seen := map[string]bool{}
			opts := metav1.ListOptions{Limit: 1}
			for page := 0; page <= len(all.Items); page++ {
				list, err := view.List(ctx, opts)
				if err != nil {
					t.Fatalf("admin page %d: %v", page, err)
				}
				for _, it := range list.Items {
					if seen[keyOf(&it)] {
						t.Errorf("admin page %d: %s again", page, keyOf(&it))
					}
					seen[keyOf(&it)] = true
				}
				if opts.Continue = list.GetContinue(); opts.Continue == "" {
					break
				}
			}
			if !seen[aliceKey] || !seen[bobKey] {
				t.Errorf("admin pages of one: saw %v, want %s and %s among them", seen, aliceKey, bobKey)
			}

			// A watch of one tenant sees its changes under the view's key,
			// and nothing of the other tenant.
			w, err := view.Watch(ctx, metav1.ListOptions{ResourceVersion: all.GetResourceVersion(), LabelSelector: isoTenantLabel + "=globex"})
			if err != nil {
				t.Fatalf("admin watch: %v", err)
			}
			defer w.Stop()
			patch := []byte(`{"metadata":{"labels":{"admin-view":"changed"}}}`)
			if _, err := isoAlice.resource(t, k, ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := isoBob.resource(t, k, ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			for {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						t.Fatal("admin watch ended before bob's change")
					}
					if ev.Type == watch.Error || ev.Type == watch.Bookmark {
						t.Fatalf("admin watch: %s event %v", ev.Type, ev.Object)
					}
					o := ev.Object.(*unstructured.Unstructured)
					if o.GetLabels()[isoTenantLabel] != "globex" {
						t.Fatalf("admin watch of globex: %s event of %s (tenant %s)", ev.Type, keyOf(o), o.GetLabels()[isoTenantLabel])
					}
					if o.GetUID() == bobs.GetUID() && o.GetLabels()["admin-view"] == "changed" {
						if keyOf(o) != bobKey {
							t.Errorf("admin watch: bob's change arrived as %s, want %s", keyOf(o), bobKey)
						}
						goto watched
					}
				case <-ctx.Done():
					t.Fatal("admin watch: no event of bob's change")
				}
			}
		watched:

			// Read-only: no verb but get, list and watch.
			obj := alices.DeepCopy()
			obj.SetResourceVersion("")
			obj.SetName(admin.Name("acme", "written"))
			if k.namespaced {
				obj.SetName("written")
				obj.SetNamespace(admin.Name("acme", ns))
			}
			res := adminView(t, isoAdmin, k, obj.GetNamespace())
			obj.SetAPIVersion(admin.SchemeGroupVersion.String())
			_, err = res.Create(ctx, obj, metav1.CreateOptions{})
			isoWantErr(t, "admin create", err, http.StatusMethodNotAllowed)
			getKey := aliceKey
			if k.namespaced {
				getKey = name
				res = adminView(t, isoAdmin, k, admin.Name("acme", ns))
			}
			err = res.Delete(ctx, getKey, metav1.DeleteOptions{})
			isoWantErr(t, "admin delete", err, http.StatusMethodNotAllowed)
			_, err = res.Patch(ctx, getKey, types.MergePatchType, patch, metav1.PatchOptions{})
			isoWantErr(t, "admin patch", err, http.StatusMethodNotAllowed)
		})
	}
}

// TestAdminViewsAreTheProviders checks who may read the views: host RBAC
// keeps tenant members and other users out, and a member of a tenant is
// refused even when RBAC lets it in.
func TestAdminViewsAreTheProviders(t *testing.T) {
	isoDemoTenants(t)
	ctx := framework.Context(t, time.Minute)
	k := isoKind(t, "Network")
	for _, c := range []struct {
		who      isoCaller
		contains string
	}{
		{isoAlice, "cannot list resource"},
		{isoCarol, "cannot list resource"},
		// RBAC lets system:masters in; the server refuses a tenant's member.
		{isoAs("nosy-member", "system:masters", "tenant.io:acme"), `acts as tenant "acme"`},
		{isoAs("member-of-two", "system:masters", "tenant.io:acme", "tenant.io:globex"), "several tenants"},
	} {
		_, err := adminView(t, c.who, k, "").List(ctx, metav1.ListOptions{})
		isoWantErr(t, c.who.String()+" listing admin networks", err, http.StatusForbidden, c.contains)
		_, err = adminView(t, c.who, k, "").Get(ctx, admin.Name("acme", "default"), metav1.GetOptions{})
		isoWantErr(t, c.who.String()+" getting admin network acme.default", err, http.StatusForbidden)
		if _, err := adminView(t, c.who, k, "").Watch(ctx, metav1.ListOptions{}); err == nil {
			t.Errorf("%s watching admin networks: allowed", c.who)
		}
	}

	// A provider operator bound to the shipped viewer role reads the views
	// and may not manage Tenants.
	kube, _, err := framework.Current().Clients(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "test-provider-viewer-noc"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "tenant.io:provider-viewer"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "noc"}},
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
	})
	noc := isoAs("noc")
	var list *unstructured.UnstructuredList
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err = adminView(t, noc, k, "").List(ctx, metav1.ListOptions{LabelSelector: isoTenantLabel + "=acme"})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("noc, a provider viewer, listing admin networks: %v", err)
	}
	if keys := viewKeys(t, "noc's list", list); keys[admin.Name("acme", "default")] == "" {
		t.Errorf("noc's list of acme's networks: %v, want acme.default", keys)
	}
	err = noc.clientset(t).TenantV1alpha1().Tenants().Delete(ctx, "acme", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	isoWantErr(t, "noc deleting Tenant acme", err, http.StatusForbidden)
}

// TestAdminViewsInKubectl checks what a provider sees with kubectl: a
// TENANT column, the views' names, the category, explain, and that the
// plain resource names still mean tenant.io.
func TestAdminViewsInKubectl(t *testing.T) {
	isoDemoTenants(t)
	isoDemoPublicIPs(t, 1)
	ctx := framework.Context(t, 2*time.Minute)
	fip := isoKind(t, "FloatingIP")
	isoCreate(ctx, t, isoAlice, fip, "dev", "kubectl-seen", nil)
	isoCreate(ctx, t, isoBob, fip, "dev", "kubectl-seen", nil)

	out, _, err := isoAdmin.kubectl(ctx, "get", "networks.admin.tenant.io")
	if err != nil {
		t.Fatal(err)
	}
	header := strings.Fields(strings.SplitN(out, "\n", 2)[0])
	if len(header) < 2 || header[0] != "NAME" || header[1] != "TENANT" {
		t.Errorf("kubectl get networks.admin.tenant.io: header %v, want NAME TENANT ...\n%s", header, out)
	}
	for _, want := range []string{"acme.default", "globex.default"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl get networks.admin.tenant.io: no %s in\n%s", want, out)
		}
	}
	out, _, err = isoAdmin.kubectl(ctx, "get", "floatingips.admin.tenant.io", "-A", "--field-selector", "metadata.name=kubectl-seen")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAMESPACE") {
		t.Fatalf("kubectl get floatingips.admin.tenant.io -A: want a header and 2 rows, got\n%s", out)
	}
	rows := map[string]string{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		rows[f[0]+"/"+f[1]] = f[2]
	}
	if rows["acme.dev/kubectl-seen"] != "acme" || rows["globex.dev/kubectl-seen"] != "globex" {
		t.Errorf("kubectl get floatingips.admin.tenant.io -A: rows %v, want acme.dev/kubectl-seen of acme and globex.dev/kubectl-seen of globex", rows)
	}

	// HostClaims: tenant.io's columns after NAME and TENANT, and the kind's
	// own field selectors.
	hc := isoKind(t, "HostClaim")
	isoCreate(ctx, t, isoAlice, hc, "dev", "kubectl-seen", nil)
	isoCreate(ctx, t, isoBob, hc, "dev", "kubectl-seen", nil)
	for _, c := range []struct {
		args   []string
		header string
	}{
		{nil, "NAMESPACE NAME TENANT PHASE HOST CLASS ADDRESS POWER AGE"},
		{[]string{"-o", "wide"}, "NAMESPACE NAME TENANT PHASE HOST CLASS ADDRESS POWER ONLINE IMAGE BOOT MAC AGE"},
	} {
		args := append([]string{"get", "hostclaims.admin.tenant.io", "-A", "--field-selector", "metadata.name=kubectl-seen,spec.hostClass=" + demoHostClass}, c.args...)
		out, _, err := isoAdmin.kubectl(ctx, args...)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != c.header {
			t.Fatalf("kubectl %v: want the header %s and 2 rows, got\n%s", args, c.header, out)
		}
		for i, want := range []string{"acme.dev kubectl-seen acme Pending " + demoHostClass, "globex.dev kubectl-seen globex Pending " + demoHostClass} {
			if got := strings.Join(strings.Fields(lines[1+i]), " "); !strings.HasPrefix(got, want+" ") {
				t.Errorf("kubectl %v: row %q, want it to start with %q", args, got, want)
			}
		}
	}

	out, _, err = isoAdmin.kubectl(ctx, "get", "tenantio-admin", "-A", "-o", "name")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"network.admin.tenant.io/acme.default", "namespace.admin.tenant.io/globex.dev", "floatingip.admin.tenant.io/kubectl-seen", "hostclaim.admin.tenant.io/kubectl-seen"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl get tenantio-admin: no %s in\n%s", want, out)
		}
	}
	out, _, err = isoAdmin.kubectl(ctx, "explain", "floatingips.admin.tenant.io.spec.target")
	if err != nil || !strings.Contains(out, "GROUP:      admin.tenant.io") || !strings.Contains(out, "kind") {
		t.Errorf("kubectl explain floatingips.admin.tenant.io.spec.target: %v\n%s", err, out)
	}
	// "networks" is still tenant.io's: the admin is in no tenant.
	_, stderr, err := isoAdmin.kubectl(ctx, "get", "networks")
	if err != nil || !strings.Contains(stderr, "No resources found") {
		t.Errorf("kubectl get networks as the admin: %v %s, want tenant.io's empty view", err, stderr)
	}
}

// TestAdminViewsKeepInformersWhole runs a client-go informer over every
// tenant's FloatingIPs, as a provider's tooling would: its cache, keyed by
// namespace/name, holds each tenant's same-named object under a key of its own.
func TestAdminViewsKeepInformersWhole(t *testing.T) {
	isoDemoTenants(t)
	isoDemoPublicIPs(t, 1)
	ctx := framework.Context(t, 2*time.Minute)
	fip := isoKind(t, "FloatingIP")
	isoCreate(ctx, t, isoAlice, fip, "dev", "cached", nil)
	isoCreate(ctx, t, isoBob, fip, "dev", "cached", nil)

	dyn, err := dynamic.NewForConfig(isoAdmin.config())
	if err != nil {
		t.Fatal(err)
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	informer := factory.ForResource(schema.GroupVersionResource{Group: admin.GroupName, Version: "v1alpha1", Resource: "floatingips"}).Informer()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("informer of admin floatingips never synced")
	}
	for _, key := range []string{"acme.dev/cached", "globex.dev/cached"} {
		if _, ok, _ := informer.GetStore().GetByKey(key); !ok {
			t.Errorf("informer of admin floatingips: no %s among %v", key, informer.GetStore().ListKeys())
		}
	}

	// The typed client reads the same objects.
	ac, err := adminclient.NewForConfig(isoAdmin.config())
	if err != nil {
		t.Fatal(err)
	}
	got, err := ac.FloatingIPs(admin.Name("globex", "dev")).Get(ctx, "cached", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Namespace != "globex.dev" || got.Labels[isoTenantLabel] != "globex" {
		t.Errorf("admin client get globex.dev/cached: got %s/%s of tenant %s", got.Namespace, got.Name, got.Labels[isoTenantLabel])
	}
	list, err := ac.Networks().List(ctx, metav1.ListOptions{LabelSelector: isoTenantLabel + "=acme"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range list.Items {
		if !strings.HasPrefix(n.Name, "acme.") {
			t.Errorf("admin client list of acme's networks: %s", n.Name)
		}
	}
}
