package integration

// Isolation of provider kinds: what tenant members read of Tenants,
// ProviderServices, VRFPeerings and HostClasses, provider list pagination,
// admin impersonation.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestIsolationProviderScope checks who sees and writes the provider kinds,
// and what callers of no tenant and of several tenants get.
func TestIsolationProviderScope(t *testing.T) {
	isoDemoTenants(t)
	ctx := framework.Context(t, 2*time.Minute)
	tenantKind, poolKind, psvcKind, peeringKind := isoKind(t, "Tenant"), isoKind(t, "AddressPool"), isoKind(t, "ProviderService"), isoKind(t, "VRFPeering")
	netKind, hclsKind := isoKind(t, "Network"), isoKind(t, "HostClass")

	// Provider objects of every kind, by the admin.
	createPsvc := func(name string, extra map[string]interface{}) *unstructured.Unstructured {
		spec := map[string]interface{}{"service": map[string]interface{}{"namespace": "infra", "name": "dns"}}
		for k, v := range extra {
			spec[k] = v
		}
		obj := &unstructured.Unstructured{Object: manifest(psvcKind, name, spec)}
		created, err := isoAdmin.resource(t, psvcKind, "").Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		isoDeleteAtEnd(t, isoAdmin, psvcKind, created)
		return created
	}
	offerAcme := createPsvc("iso-offer-acme", map[string]interface{}{"tenants": []interface{}{"acme"}})
	offerGlobex := createPsvc("iso-offer-globex", map[string]interface{}{"tenants": []interface{}{"globex"}})
	offerAll := createPsvc("iso-offer-all", map[string]interface{}{"allTenants": true})
	pool := isoCreate(ctx, t, isoAdmin, poolKind, "", "iso-pool", nil)
	peering := isoCreate(ctx, t, isoAdmin, peeringKind, "", "iso-peering", nil)
	globexSpec := runtime.DeepCopyJSON(peeringKind.spec)
	globexSpec["tenant"] = "globex"
	peeringGlobex, err := isoAdmin.resource(t, peeringKind, "").Create(ctx, &unstructured.Unstructured{Object: manifest(peeringKind, "iso-peering-globex", globexSpec)}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	isoDeleteAtEnd(t, isoAdmin, peeringKind, peeringGlobex)
	createClass := func(name string, offer map[string]interface{}) *unstructured.Unstructured {
		spec := map[string]interface{}{"hostNamespace": "iso-servers", "tenantLabels": []interface{}{"rack"}}
		for k, v := range offer {
			spec[k] = v
		}
		created, err := isoAdmin.resource(t, hclsKind, "").Create(ctx, &unstructured.Unstructured{Object: manifest(hclsKind, name, spec)}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		isoDeleteAtEnd(t, isoAdmin, hclsKind, created)
		return created
	}
	classAcme := createClass("iso-hcls-acme", map[string]interface{}{"tenants": []interface{}{"acme"}})
	classGlobex := createClass("iso-hcls-globex", map[string]interface{}{"tenants": []interface{}{"globex"}})
	classAll := createClass("iso-hcls-all", map[string]interface{}{"allTenants": true})
	acmeTenant, err := isoAdmin.resource(t, tenantKind, "").Get(ctx, "acme", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	existing := map[string]*unstructured.Unstructured{
		"Tenant": acmeTenant, "AddressPool": pool, "ProviderService": offerAcme, "VRFPeering": peering, "HostClass": classAcme,
	}

	t.Run("tenant members may not write provider kinds", func(t *testing.T) {
		for _, k := range []kindCase{tenantKind, poolKind, psvcKind, peeringKind, hclsKind} {
			target := existing[k.kind]
			for _, c := range []struct {
				caller isoCaller
				// guard: the host's RBAC lets the caller write, the
				// tenant-apiserver refuses it.
				guard bool
			}{
				{isoAlice, false},
				{isoBob, false},
				{isoAs("admin", "tenant.io:acme", "system:masters"), true},
			} {
				res := c.caller.resource(t, k, "")
				what := func(verb string) string { return fmt.Sprintf("%s %s %s", c.caller, verb, k.resource) }
				var contains []string
				if c.guard {
					contains = []string{"managed by the provider"}
				}
				newName := "iso-by-member-" + strings.ToLower(k.kind)
				_, err := res.Create(ctx, &unstructured.Unstructured{Object: manifest(k, newName, runtime.DeepCopyJSON(k.spec))}, metav1.CreateOptions{})
				isoWantErr(t, what("create"), err, 403, contains...)
				upd := target.DeepCopy()
				upd.SetAnnotations(map[string]string{"iso/by": "member"})
				_, err = res.Update(ctx, upd, metav1.UpdateOptions{})
				isoWantErr(t, what("update"), err, 403, contains...)
				_, err = res.Patch(ctx, target.GetName(), types.MergePatchType, []byte(`{"metadata":{"annotations":{"iso/by":"member"}}}`), metav1.PatchOptions{})
				isoWantErr(t, what("patch"), err, 403, contains...)
				body, _ := json.Marshal(map[string]interface{}{"apiVersion": "tenant.io/v1alpha1", "kind": k.kind, "metadata": map[string]interface{}{"name": target.GetName(), "annotations": map[string]interface{}{"iso/by": "member"}}})
				_, err = res.Patch(ctx, target.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "iso-member"})
				isoWantErr(t, what("apply"), err, 403, contains...)
				err = res.Delete(ctx, target.GetName(), metav1.DeleteOptions{})
				isoWantErr(t, what("delete"), err, 403, contains...)
				err = res.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "metadata.name=" + target.GetName()})
				isoWantErr(t, what("deletecollection"), err, 403, contains...)

				got, err := isoAdmin.resource(t, k, "").Get(ctx, target.GetName(), metav1.GetOptions{})
				if err != nil || got.GetUID() != target.GetUID() || got.GetAnnotations()["iso/by"] != "" {
					t.Errorf("%s: %s %s after the refused writes: %v %v", c.caller, k.kind, target.GetName(), err, got)
				}
				if _, err := isoAdmin.resource(t, k, "").Get(ctx, newName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("%s created %s %s: %v", c.caller, k.kind, newName, err)
				}
			}
		}
		_, stderr, err := isoAlice.kubectl(ctx, "create", "-f", writeManifest(t, manifest(tenantKind, "iso-alice-tenant", tenantKind.spec)))
		isoWantKubectlErr(t, "alice kubectl create tenant", stderr, err, "Forbidden")
		_, stderr, err = isoAlice.kubectl(ctx, "delete", "tenant", "acme")
		isoWantKubectlErr(t, "alice kubectl delete tenant acme", stderr, err, "Forbidden")
		_, stderr, err = isoAlice.kubectl(ctx, "label", "tenant", "acme", "iso=alice")
		isoWantKubectlErr(t, "alice kubectl label tenant acme", stderr, err, "Forbidden")
	})

	t.Run("members read only their own tenant", func(t *testing.T) {
		for _, m := range []struct {
			c           isoCaller
			own, others string
		}{{isoAlice, "acme", "globex"}, {isoBob, "globex", "acme"}} {
			out, _, err := m.c.kubectl(ctx, "get", "tenants", "-o", "name")
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(out) != "tenant.tenant.io/"+m.own {
				t.Errorf("%s kubectl get tenants: %q, want only %s", m.c, out, m.own)
			}
			_, stderr, err := m.c.kubectl(ctx, "get", "tenant", m.others)
			isoWantKubectlErr(t, m.c.String()+" kubectl get tenant "+m.others, stderr, err, "NotFound", `"`+m.others+`" not found`)
			res := m.c.resource(t, tenantKind, "")
			for _, opts := range []metav1.ListOptions{{}, {ResourceVersion: "0"}, {FieldSelector: "metadata.name=" + m.others}, {LabelSelector: "kubernetes.io/metadata.name=" + m.others}} {
				list, err := res.List(ctx, opts)
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range list.Items {
					if it.GetName() != m.own {
						t.Errorf("%s lists tenants %+v: LEAK: %s", m.c, opts, it.GetName())
					}
				}
			}
			_, err = res.Get(ctx, m.others, metav1.GetOptions{})
			_, errMissing := res.Get(ctx, "no-such-tenant", metav1.GetOptions{})
			isoSameAsMissing(t, m.c.String()+" get tenant "+m.others, err, m.others, errMissing, "no-such-tenant")
			_, err = res.Get(ctx, m.others, metav1.GetOptions{ResourceVersion: "0"})
			isoWantErr(t, m.c.String()+" get tenant rv=0 "+m.others, err, 404)
			_, err = res.Get(ctx, m.others, metav1.GetOptions{}, "status")
			isoWantErr(t, m.c.String()+" get tenant status "+m.others, err, 404)
			if _, err := res.Get(ctx, m.own, metav1.GetOptions{}, "status"); err != nil {
				t.Errorf("%s cannot read the status of its own tenant: %v", m.c, err)
			}

			// A watch of tenants: the provider touches the other tenant,
			// then this one; the member sees only its own.
			t.Run(m.c.user+" watches", func(t *testing.T) {
				isoProviderWatch(ctx, t, m.c, tenantKind, metav1.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: true},
					[]string{m.others, m.own}, func(name string) bool { return name == m.own })
			})
		}
		t.Cleanup(func() {
			for _, tn := range []string{"acme", "globex"} {
				isoAdmin.resource(t, tenantKind, "").Patch(context.Background(), tn, types.MergePatchType, //nolint:errcheck
					[]byte(`{"metadata":{"annotations":{"iso/touched":null}}}`), metav1.PatchOptions{})
			}
		})
	})

	t.Run("provider services offered", func(t *testing.T) {
		for _, m := range []struct {
			c            isoCaller
			tenant       string
			want, hidden *unstructured.Unstructured
		}{{isoAlice, "acme", offerAcme, offerGlobex}, {isoBob, "globex", offerGlobex, offerAcme}} {
			res := m.c.resource(t, psvcKind, "")
			list, err := res.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, it := range list.Items {
				seen[it.GetName()] = true
				if !isoOfferedTo(&it, m.tenant) {
					t.Errorf("%s lists ProviderService %s not offered to %s: LEAK", m.c, it.GetName(), m.tenant)
				}
			}
			if !seen[m.want.GetName()] || !seen[offerAll.GetName()] {
				t.Errorf("%s lists ProviderServices %v, want %s and %s among them", m.c, isoNames(list), m.want.GetName(), offerAll.GetName())
			}
			for _, name := range []string{m.want.GetName(), offerAll.GetName()} {
				if _, err := res.Get(ctx, name, metav1.GetOptions{}); err != nil {
					t.Errorf("%s get providerservice %s: %v", m.c, name, err)
				}
			}
			_, err = res.Get(ctx, m.hidden.GetName(), metav1.GetOptions{})
			_, errMissing := res.Get(ctx, "no-such-service", metav1.GetOptions{})
			isoSameAsMissing(t, m.c.String()+" get providerservice "+m.hidden.GetName(), err, m.hidden.GetName(), errMissing, "no-such-service")
			_, stderr, err := m.c.kubectl(ctx, "get", "providerservice", m.hidden.GetName())
			isoWantKubectlErr(t, m.c.String()+" kubectl get providerservice "+m.hidden.GetName(), stderr, err, "NotFound")

			t.Run(m.c.user+" watches", func(t *testing.T) {
				isoProviderWatch(ctx, t, m.c, psvcKind, metav1.ListOptions{}, []string{m.hidden.GetName(), m.want.GetName()},
					func(name string) bool { return name == m.want.GetName() || name == offerAll.GetName() })
			})
		}
		// carol is offered nothing.
		list, err := isoCarol.resource(t, psvcKind, "").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 0 {
			t.Errorf("carol lists ProviderServices %v", isoNames(list))
		}
	})

	t.Run("host classes offered", func(t *testing.T) {
		for _, m := range []struct {
			c            isoCaller
			tenant       string
			want, hidden *unstructured.Unstructured
		}{{isoAlice, "acme", classAcme, classGlobex}, {isoBob, "globex", classGlobex, classAcme}} {
			res := m.c.resource(t, hclsKind, "")
			for _, opts := range []metav1.ListOptions{{}, {ResourceVersion: "0"}, {FieldSelector: "metadata.name=" + m.hidden.GetName()},
				{FieldSelector: "spec.hostNamespace=iso-servers"}, {Limit: 1}} {
				list, err := res.List(ctx, opts)
				if err != nil {
					t.Fatalf("%s lists hostclasses %+v: %v", m.c, opts, err)
				}
				for _, it := range list.Items {
					tenants, _, _ := unstructured.NestedStringSlice(it.Object, "spec", "tenants")
					hostNS, _, _ := unstructured.NestedString(it.Object, "spec", "hostNamespace")
					if it.GetName() == m.hidden.GetName() || !isoOfferedTo(&it, m.tenant) {
						t.Errorf("%s lists hostclasses %+v: LEAK: %s", m.c, opts, it.GetName())
					}
					raw, _ := it.MarshalJSON()
					if hostNS != "" || len(tenants) > 1 || len(it.GetAnnotations()) > 0 || strings.Contains(string(raw), "iso-servers") || strings.Contains(string(raw), "it-no-servers") {
						t.Errorf("%s lists hostclasses %+v: %s unredacted: hostNamespace %q, tenants %v, annotations %v",
							m.c, opts, it.GetName(), hostNS, tenants, it.GetAnnotations())
					}
				}
				if opts.FieldSelector == "" && opts.Limit == 0 {
					if names := isoNames(list); !slices.Contains(names, m.want.GetName()) || !slices.Contains(names, classAll.GetName()) {
						t.Errorf("%s lists hostclasses %v, want %s and %s among them", m.c, names, m.want.GetName(), classAll.GetName())
					}
				}
			}
			for _, name := range []string{m.want.GetName(), classAll.GetName()} {
				if _, err := res.Get(ctx, name, metav1.GetOptions{}); err != nil {
					t.Errorf("%s get hostclass %s: %v", m.c, name, err)
				}
			}
			for _, opts := range []metav1.GetOptions{{}, {ResourceVersion: "0"}} {
				_, err := res.Get(ctx, m.hidden.GetName(), opts)
				_, errMissing := res.Get(ctx, "no-such-class", opts)
				isoSameAsMissing(t, fmt.Sprintf("%s get hostclass %s rv=%q", m.c, m.hidden.GetName(), opts.ResourceVersion), err, m.hidden.GetName(), errMissing, "no-such-class")
			}
			// Host RBAC grants members no hostclasses/status: the same 403
			// whether the class is offered, hidden or missing.
			for _, name := range []string{m.want.GetName(), m.hidden.GetName(), "no-such-class"} {
				_, err := res.Get(ctx, name, metav1.GetOptions{}, "status")
				isoWantErr(t, m.c.String()+" get hostclass status "+name, err, 403, `cannot get resource "hostclasses/status"`)
			}
			_, stderr, err := m.c.kubectl(ctx, "get", "hostclass", m.hidden.GetName())
			isoWantKubectlErr(t, m.c.String()+" kubectl get hostclass "+m.hidden.GetName(), stderr, err, "NotFound")
			out, _, err := m.c.kubectl(ctx, "get", "hostclasses", "-o", "name")
			if names := strings.Fields(out); err != nil || slices.Contains(names, "hostclass.tenant.io/"+m.hidden.GetName()) || !slices.Contains(names, "hostclass.tenant.io/"+m.want.GetName()) {
				t.Errorf("%s kubectl get hostclasses: %v %q; want %s and not %s", m.c, err, out, m.want.GetName(), m.hidden.GetName())
			}

			t.Run(m.c.user+" watches", func(t *testing.T) {
				for _, opts := range []metav1.ListOptions{{}, {ResourceVersion: "0", AllowWatchBookmarks: true}} {
					isoProviderWatch(ctx, t, m.c, hclsKind, opts, []string{m.hidden.GetName(), m.want.GetName()},
						func(name string) bool { return name != m.hidden.GetName() })
				}
			})
		}
	})

	t.Run("vrf peerings of their own networks", func(t *testing.T) {
		for _, m := range []struct {
			c            isoCaller
			want, hidden *unstructured.Unstructured
		}{{isoAlice, peering, peeringGlobex}, {isoBob, peeringGlobex, peering}} {
			res := m.c.resource(t, peeringKind, "")
			for _, opts := range []metav1.ListOptions{{}, {ResourceVersion: "0"}, {FieldSelector: "spec.tenant=" + m.hidden.Object["spec"].(map[string]interface{})["tenant"].(string)}} {
				list, err := res.List(ctx, opts)
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range list.Items {
					if it.GetName() == m.hidden.GetName() {
						t.Errorf("%s lists vrfpeerings %+v: LEAK: %s", m.c, opts, it.GetName())
					}
				}
				if opts.FieldSelector == "" && !slices.Contains(isoNames(list), m.want.GetName()) {
					t.Errorf("%s lists vrfpeerings %v, want %s among them", m.c, isoNames(list), m.want.GetName())
				}
			}
			if _, err := res.Get(ctx, m.want.GetName(), metav1.GetOptions{}); err != nil {
				t.Errorf("%s get vrfpeering %s: %v", m.c, m.want.GetName(), err)
			}
			_, err := res.Get(ctx, m.hidden.GetName(), metav1.GetOptions{})
			_, errMissing := res.Get(ctx, "no-such-peering", metav1.GetOptions{})
			isoSameAsMissing(t, m.c.String()+" get vrfpeering "+m.hidden.GetName(), err, m.hidden.GetName(), errMissing, "no-such-peering")
			out, _, err := m.c.kubectl(ctx, "get", "vrfpeerings", "-o", "name")
			names := strings.Fields(out)
			if err != nil || slices.Contains(names, "vrfpeering.tenant.io/"+m.hidden.GetName()) || !slices.Contains(names, "vrfpeering.tenant.io/"+m.want.GetName()) {
				t.Errorf("%s kubectl get vrfpeerings: %v %q; want %s and not %s", m.c, err, out, m.want.GetName(), m.hidden.GetName())
			}
			t.Run(m.c.user+" watches", func(t *testing.T) {
				isoProviderWatch(ctx, t, m.c, peeringKind, metav1.ListOptions{}, []string{m.hidden.GetName(), m.want.GetName()},
					func(name string) bool { return name == m.want.GetName() })
			})
		}
	})

	t.Run("a caller of no tenant", func(t *testing.T) {
		for _, k := range kinds {
			if k.kind == "AddressPool" {
				continue // not even readable by tenant members (host RBAC)
			}
			for _, rv := range []string{"", "0"} {
				list, err := isoCarol.resource(t, k, "").List(ctx, metav1.ListOptions{ResourceVersion: rv})
				if err != nil {
					t.Fatalf("carol lists %s: %v", k.resource, err)
				}
				if len(list.Items) != 0 {
					t.Errorf("carol lists %s rv=%q: %v", k.resource, rv, isoNames(list))
				}
			}
			out, stderr, err := isoCarol.kubectl(ctx, "get", k.qualified(), "-A")
			if err != nil || strings.TrimSpace(out) != "" || !strings.Contains(stderr, "No resources found") {
				t.Errorf("carol kubectl get %s -A: %v %q %q", k.qualified(), err, out, stderr)
			}
		}
		_, err := isoCarol.resource(t, tenantKind, "").Get(ctx, "acme", metav1.GetOptions{})
		isoWantErr(t, "carol get tenant acme", err, 404)
		for _, k := range isoTenantKinds() {
			_, err := isoCarol.resource(t, k, "dev").Create(ctx, isoObject(k, "dev", "carols", nil), metav1.CreateOptions{})
			isoWantErr(t, "carol create "+k.resource, err, 403, "not a member of any tenant")
		}
		_, stderr, err := isoCarol.kubectl(ctx, "create", "-f", writeManifest(t, isoObject(netKind, "", "carols", nil).Object))
		isoWantKubectlErr(t, "carol kubectl create network", stderr, err, "Forbidden", "not a member of any tenant")
		_, stderr, err = isoCarol.kubectl(ctx, "create", "-f", writeManifest(t, manifest(tenantKind, "carols", tenantKind.spec)))
		isoWantKubectlErr(t, "carol kubectl create tenant", stderr, err, "Forbidden")

		// A watch of carol's from before alice writes: nothing comes. The
		// control is alice's watch, opened at the same point.
		before, err := isoAlice.resource(t, netKind, "").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		opts := metav1.ListOptions{ResourceVersion: before.GetResourceVersion()}
		carolW, err := isoCarol.resource(t, netKind, "").Watch(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer carolW.Stop()
		aliceW, err := isoAlice.resource(t, netKind, "").Watch(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer aliceW.Stop()
		net := isoCreate(ctx, t, isoAlice, netKind, "", "iso-carol-probe", nil)
		isoEventsUntil(t, "alice's control watch", aliceW, isoIs(watch.Added, net.GetUID()))
		select {
		case ev, ok := <-carolW.ResultChan():
			if ok {
				t.Errorf("carol's watch received %s %v", ev.Type, ev.Object)
			}
		case <-time.After(time.Second):
		}
	})

	t.Run("a caller of several tenants", func(t *testing.T) {
		for _, c := range []isoCaller{
			isoAs("mallory", "tenant.io:acme", "tenant.io:globex"),
			// alice is a member of acme by name, and of globex by group.
			isoAs("alice", "tenant.io:globex"),
		} {
			for _, k := range []kindCase{netKind, isoKind(t, "Namespace"), tenantKind, psvcKind} {
				_, err := c.resource(t, k, "").List(ctx, metav1.ListOptions{})
				isoWantErr(t, c.String()+" list "+k.resource, err, 403, "acme", "globex")
				_, err = c.resource(t, k, "").Get(ctx, "acme", metav1.GetOptions{})
				isoWantErr(t, c.String()+" get "+k.resource, err, 403, "acme", "globex")
				_, err = c.resource(t, k, "").Watch(ctx, metav1.ListOptions{})
				isoWantErr(t, c.String()+" watch "+k.resource, err, 403, "acme", "globex")
			}
			for _, k := range isoTenantKinds() {
				_, err := c.resource(t, k, "dev").Create(ctx, isoObject(k, "dev", "mallorys", nil), metav1.CreateOptions{})
				isoWantErr(t, c.String()+" create "+k.resource, err, 403, "acme", "globex")
			}
			_, stderr, err := c.kubectl(ctx, "get", "networks.tenant.io")
			isoWantKubectlErr(t, c.String()+" kubectl get networks", stderr, err, "Forbidden", "acme", "globex")
		}
	})
}

// TestIsolationProviderListPagination checks that paging through a list
// of a provider kind reveals nothing a tenant member may not see: not in
// the items, not in the count of remaining items, not in the continue
// tokens.
func TestIsolationProviderListPagination(t *testing.T) {
	isoDemoTenants(t)
	ctx := framework.Context(t, 2*time.Minute)
	tenantKind, psvcKind, hclsKind := isoKind(t, "Tenant"), isoKind(t, "ProviderService"), isoKind(t, "HostClass")
	// Objects alice may not see, named to sort before and after hers.
	isoTenant(ctx, t, "aaa-hidden", "10.56.0.0/16", tenantv1alpha1.TenantQuota{})
	isoTenant(ctx, t, "zzz-hidden", "10.57.0.0/16", tenantv1alpha1.TenantQuota{})
	for _, name := range []string{"aaa-hidden-svc", "iso-page-svc", "zzz-hidden-svc"} {
		tenants := []interface{}{"globex"}
		if name == "iso-page-svc" {
			tenants = []interface{}{"acme"}
		}
		obj := &unstructured.Unstructured{Object: manifest(psvcKind, name, map[string]interface{}{
			"service": map[string]interface{}{"namespace": "infra", "name": "dns"}, "tenants": tenants,
		})}
		created, err := isoAdmin.resource(t, psvcKind, "").Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		isoDeleteAtEnd(t, isoAdmin, psvcKind, created)
	}
	for _, name := range []string{"aaa-hidden-hcls", "iso-page-hcls", "zzz-hidden-hcls"} {
		tenants := []interface{}{"globex"}
		if name == "iso-page-hcls" {
			tenants = []interface{}{"acme"}
		}
		obj := &unstructured.Unstructured{Object: manifest(hclsKind, name, map[string]interface{}{"hostNamespace": "iso-servers", "tenants": tenants})}
		created, err := isoAdmin.resource(t, hclsKind, "").Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		isoDeleteAtEnd(t, isoAdmin, hclsKind, created)
	}

	for _, c := range []struct {
		k       kindCase
		visible func(*unstructured.Unstructured) bool
	}{
		{tenantKind, func(o *unstructured.Unstructured) bool { return o.GetName() == "acme" }},
		{psvcKind, func(o *unstructured.Unstructured) bool { return isoOfferedTo(o, "acme") }},
		{hclsKind, func(o *unstructured.Unstructured) bool { return isoOfferedTo(o, "acme") }},
	} {
		t.Run(c.k.kind, func(t *testing.T) {
			all, err := isoAdmin.resource(t, c.k, "").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			hidden := map[string]bool{}
			for i := range all.Items {
				if c.visible(&all.Items[i]) {
					want = append(want, all.Items[i].GetName())
				} else {
					hidden[all.Items[i].GetName()] = true
				}
			}
			sort.Strings(want)

			var items, leaks []string
			opts := metav1.ListOptions{Limit: 1}
			for page := 0; page < len(all.Items)+2; page++ {
				list, err := isoAlice.resource(t, c.k, "").List(ctx, opts)
				if err != nil {
					t.Fatal(err)
				}
				for i := range list.Items {
					if !c.visible(&list.Items[i]) {
						t.Errorf("page %d: LEAK: %s", page, list.Items[i].GetName())
					}
				}
				items = append(items, isoNames(list)...)
				// What remains to be listed is at most what alice has not had yet.
				if n := list.GetRemainingItemCount(); n != nil && *n > int64(len(want)-len(items)) {
					leaks = append(leaks, fmt.Sprintf("page %d (items %v): remainingItemCount %d", page, isoNames(list), *n))
				}
				if list.GetContinue() == "" {
					break
				}
				var token struct {
					Start string `json:"start"`
				}
				if err := json.Unmarshal([]byte(isoDecodeContinue(list.GetContinue())), &token); err == nil {
					if name := strings.Trim(token.Start, "/\x00"); hidden[name] {
						leaks = append(leaks, fmt.Sprintf("page %d (items %v): continue token starts after %q", page, isoNames(list), name))
					}
				}
				opts.Continue = list.GetContinue()
			}
			if fmt.Sprint(items) != fmt.Sprint(want) {
				t.Errorf("alice's pages of %s: %v, want %v", c.k.resource, items, want)
			}
			if len(leaks) > 0 {
				t.Errorf("a tenant member's paged LIST of %s reveals objects it may not see: %s", c.k.resource, strings.Join(leaks, "; "))
			}
		})
	}
}

// TestIsolationAdminImpersonation checks the provider admin acting inside a
// tenant by impersonation: it sees and writes that tenant's objects only.
func TestIsolationAdminImpersonation(t *testing.T) {
	isoDemoTenants(t)
	ctx := framework.Context(t, 2*time.Minute)
	netKind := isoKind(t, "Network")
	acmeNet := isoCreate(ctx, t, isoAlice, netKind, "", "imp-acme", nil)
	globexNet := isoCreate(ctx, t, isoBob, netKind, "", "imp-globex", nil)
	inAcme := isoAs("admin", "tenant.io:acme")
	inGlobex := isoAs("admin", "tenant.io:globex")

	var list unstructured.UnstructuredList
	inAcme.kubectlJSON(ctx, t, &list, "get", "networks.tenant.io")
	isoCheckList(t, "admin in acme lists networks", &list, "acme", isoForeign{globexNet.GetUID(): "globex imp-globex"})
	if !isoHasUID(&list, acmeNet.GetUID()) {
		t.Errorf("admin in acme lists %v, without acme's imp-acme", isoNames(&list))
	}
	var created unstructured.Unstructured
	inAcme.kubectlJSON(ctx, t, &created, "create", "-f", writeManifest(t, isoObject(netKind, "", "imp-by-admin", nil).Object))
	isoDeleteAtEnd(t, isoAlice, netKind, &created)
	if created.GetLabels()[isoTenantLabel] != "acme" {
		t.Errorf("admin in acme created a network labelled %v", created.GetLabels())
	}
	if got, err := isoAlice.resource(t, netKind, "").Get(ctx, "imp-by-admin", metav1.GetOptions{}); err != nil || got.GetUID() != created.GetUID() {
		t.Errorf("alice reads the admin's network: %v %v", got, err)
	}
	_, err := isoBob.resource(t, netKind, "").Get(ctx, "imp-by-admin", metav1.GetOptions{})
	isoWantErr(t, "bob get of the network the admin created in acme", err, 404)
	out, _, err := inAcme.kubectl(ctx, "get", "tenants", "-o", "name")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out) != "tenant.tenant.io/acme" {
		t.Errorf("admin in acme lists tenants %q, want only acme", out)
	}

	inGlobex.kubectlJSON(ctx, t, &list, "get", "networks.tenant.io")
	isoCheckList(t, "admin in globex lists networks", &list, "globex",
		isoForeign{acmeNet.GetUID(): "acme imp-acme", created.GetUID(): "acme imp-by-admin"})
	if !isoHasUID(&list, globexNet.GetUID()) {
		t.Errorf("admin in globex lists %v, without globex's imp-globex", isoNames(&list))
	}
	_, stderr, err := inGlobex.kubectl(ctx, "get", "networks.tenant.io", "imp-acme")
	isoWantKubectlErr(t, "admin in globex get imp-acme", stderr, err, "NotFound")

	// Without impersonation the admin is in no tenant.
	out, _, err = isoAdmin.kubectl(ctx, "get", "networks.tenant.io", "-o", "name")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out) != "" {
		t.Errorf("admin outside any tenant lists networks %q", out)
	}
}
