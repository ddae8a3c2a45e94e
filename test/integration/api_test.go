package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	applyv1alpha1 "tenant.io/tenant-apiserver/pkg/generated/applyconfiguration/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

const alice = "alice"

// kindCase is one tenant.io kind as the API tests exercise it.
type kindCase struct {
	kind, resource, shortName string
	// namespaced kinds live in a tenant's virtual namespace "dev".
	namespaced bool
	// tenantOwned kinds are written by a tenant member; provider kinds by the admin.
	tenantOwned bool
	// spec is a valid spec; patch is a valid merge patch of it.
	spec, patch map[string]interface{}
	// specFor, when set, gives each object a spec of its own (AddressPools
	// may not overlap).
	specFor func(name string) map[string]interface{}
}

func (k kindCase) user() string {
	if k.tenantOwned {
		return alice
	}
	return stack.AdminUser
}

// qualified is the resource name kubectl resolves unambiguously: tenant.io
// Namespaces are not core namespaces.
func (k kindCase) qualified() string { return k.resource + ".tenant.io" }

func (k kindCase) gvr() schema.GroupVersionResource {
	return tenantv1alpha1.SchemeGroupVersion.WithResource(k.resource)
}

var kinds = []kindCase{
	{kind: "Tenant", resource: "tenants", shortName: "tnt",
		spec:  map[string]interface{}{"displayName": "ACME", "network": map[string]interface{}{"prefixLength": int64(24)}, "publicIPs": map[string]interface{}{"count": int64(2)}},
		patch: map[string]interface{}{"spec": map[string]interface{}{"displayName": "ACME Corp"}}},
	{kind: "AddressPool", resource: "addresspools", shortName: "apool",
		specFor: func(name string) map[string]interface{} {
			h := fnv.New32a()
			h.Write([]byte(name))
			return map[string]interface{}{"purpose": "TenantNetworks", "cidrs": []interface{}{fmt.Sprintf("172.%d.%d.0/24", 16+h.Sum32()%16, h.Sum32()/16%256)}, "defaultPrefixLength": int64(26)}
		},
		spec:  map[string]interface{}{"purpose": "TenantNetworks", "cidrs": []interface{}{"172.31.255.0/24"}, "defaultPrefixLength": int64(26)},
		patch: map[string]interface{}{"spec": map[string]interface{}{"defaultPrefixLength": int64(27)}}},
	{kind: "ProviderService", resource: "providerservices", shortName: "psvc",
		spec:  map[string]interface{}{"service": map[string]interface{}{"namespace": "infra", "name": "dns"}, "tenants": []interface{}{"acme"}},
		patch: map[string]interface{}{"spec": map[string]interface{}{"alias": "resolver"}}},
	{kind: "VRFPeering", resource: "vrfpeerings", shortName: "vrfp",
		// Peerings of one Network share its VRF's router: one ASN, each
		// neighbor once (an address derived from the name).
		specFor: func(name string) map[string]interface{} {
			h := fnv.New32a()
			h.Write([]byte(name))
			return map[string]interface{}{"tenant": "acme", "network": "default", "asn": int64(64512),
				"neighbors": []interface{}{map[string]interface{}{"address": fmt.Sprintf("198.18.%d.%d", h.Sum32()%256, 1+h.Sum32()/256%254), "asn": int64(65000)}}}
		},
		spec:  map[string]interface{}{"tenant": "acme", "network": "default", "asn": int64(64512), "neighbors": []interface{}{map[string]interface{}{"address": "192.0.2.1", "asn": int64(65000)}}},
		patch: map[string]interface{}{"spec": map[string]interface{}{"asn": int64(64513)}}},
	{kind: "Namespace", resource: "namespaces", shortName: "tns", tenantOwned: true,
		spec:  map[string]interface{}{"network": "default"},
		patch: map[string]interface{}{"metadata": map[string]interface{}{"labels": map[string]interface{}{"team": "web"}}}},
	{kind: "Network", resource: "networks", shortName: "net", tenantOwned: true,
		// No subnets: the server gives each a free /24 of the block (two
		// Networks of one tenant may not overlap).
		spec:  map[string]interface{}{"topology": "Layer2"},
		patch: map[string]interface{}{"spec": map[string]interface{}{"natGateway": map[string]interface{}{"enabled": true}}}},
	{kind: "FloatingIP", resource: "floatingips", shortName: "fip", namespaced: true, tenantOwned: true,
		// A workload has one FloatingIP: each targets a VM of its own name.
		specFor: func(name string) map[string]interface{} {
			return map[string]interface{}{"target": map[string]interface{}{"kind": "VirtualMachine", "name": name}, "ports": []interface{}{map[string]interface{}{"port": int64(22), "protocol": "TCP"}}}
		},
		spec:  map[string]interface{}{"target": map[string]interface{}{"kind": "VirtualMachine", "name": "web"}, "ports": []interface{}{map[string]interface{}{"port": int64(22), "protocol": "TCP"}}},
		patch: map[string]interface{}{"spec": map[string]interface{}{"target": map[string]interface{}{"kind": "Pod", "name": "web-0"}}}},
	{kind: "LoadBalancer", resource: "loadbalancers", shortName: "lb", namespaced: true, tenantOwned: true,
		spec:  map[string]interface{}{"selector": map[string]interface{}{"app": "web"}, "ports": []interface{}{map[string]interface{}{"name": "http", "port": int64(80), "targetPort": int64(8080), "protocol": "TCP"}}},
		patch: map[string]interface{}{"spec": map[string]interface{}{"sourceRanges": []interface{}{"198.51.100.0/24"}}}},
	{kind: "HostClass", resource: "hostclasses", shortName: "hcls",
		spec:  map[string]interface{}{"hostNamespace": "it-no-servers", "tenantLabels": []interface{}{"rack"}, "tenants": []interface{}{"acme", "globex"}},
		patch: map[string]interface{}{"spec": map[string]interface{}{"hardware": "None"}}},
	{kind: "HostClaim", resource: "hostclaims", shortName: "hc", namespaced: true, tenantOwned: true,
		// The demo tenants' class, whose namespace holds no server: a
		// claim stays Pending (demoHostClass).
		spec:  map[string]interface{}{"hostClass": demoHostClass},
		patch: map[string]interface{}{"spec": map[string]interface{}{"online": true}}},
}

func manifest(k kindCase, name string, spec map[string]interface{}) map[string]interface{} {
	if k.specFor != nil && reflect.DeepEqual(spec, k.spec) {
		spec = k.specFor(name)
	}
	meta := map[string]interface{}{"name": name}
	if k.namespaced {
		meta["namespace"] = "dev"
	}
	return map[string]interface{}{
		"apiVersion": tenantv1alpha1.SchemeGroupVersion.String(),
		"kind":       k.kind,
		"metadata":   meta,
		"spec":       spec,
	}
}

// writeManifest writes obj as YAML into a temporary file for kubectl -f.
func writeManifest(t *testing.T, obj interface{}) string {
	t.Helper()
	data, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return writeManifestBytes(t, data)
}

// writeManifestBytes writes data into a temporary file for kubectl -f.
func writeManifestBytes(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubectlJSON runs kubectl with -o json and decodes its output into out
// (an *unstructured.Unstructured or a typed object).
func kubectlJSON(ctx context.Context, t *testing.T, user string, out interface{}, args ...string) {
	t.Helper()
	stdout, _, err := framework.Current().Kubectl(ctx, user, append(args, "-o", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	var decode func([]byte) error
	if u, ok := out.(*unstructured.Unstructured); ok {
		decode = u.UnmarshalJSON
	} else {
		decode = func(b []byte) error { return json.Unmarshal(b, out) }
	}
	if err := decode([]byte(stdout)); err != nil {
		t.Fatalf("decoding kubectl %v: %v\n%s", args, err, stdout)
	}
}

func nsArgs(k kindCase) []string {
	if k.namespaced {
		return []string{"-n", "dev"}
	}
	return nil
}

func dynamicFor(t *testing.T, user string, k kindCase) dynamic.ResourceInterface {
	t.Helper()
	_, dyn, err := framework.Current().Clients(user)
	if err != nil {
		t.Fatal(err)
	}
	if k.namespaced {
		return dyn.Resource(k.gvr()).Namespace("dev")
	}
	return dyn.Resource(k.gvr())
}

// TestDiscovery checks that kubectl finds every kind through the
// aggregator with its scope and short name.
func TestDiscovery(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	out, _, err := framework.Current().Kubectl(ctx, stack.AdminUser, "api-resources", "--api-group=tenant.io", "--no-headers", "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		rows[f[0]] = f
	}
	if len(rows) != len(kinds) {
		t.Errorf("api-resources lists %d resources, want %d:\n%s", len(rows), len(kinds), out)
	}
	for _, k := range kinds {
		f, ok := rows[k.resource]
		if !ok {
			t.Errorf("%s missing from api-resources", k.resource)
			continue
		}
		// NAME SHORTNAMES APIVERSION NAMESPACED KIND VERBS CATEGORIES
		want := []string{k.resource, k.shortName, "tenant.io/v1alpha1", fmt.Sprint(k.namespaced), k.kind}
		if len(f) < 7 || strings.Join(f[:5], " ") != strings.Join(want, " ") {
			t.Errorf("api-resources row %q, want it to start with %q", strings.Join(f, " "), strings.Join(want, " "))
			continue
		}
		for _, verb := range []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"} {
			if !strings.Contains(f[5], verb) {
				t.Errorf("%s verbs %s lack %s", k.resource, f[5], verb)
			}
		}
		if f[6] != "tenantio" {
			t.Errorf("%s categories %s, want tenantio", k.resource, f[6])
		}
	}
}

// TestEveryKindThroughKubectl drives create, get, list, the three patch
// types, replace and delete of every kind with the built kubectl.
func TestEveryKindThroughKubectl(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.kind, func(t *testing.T) {
			ctx := framework.Context(t, 2*time.Minute)
			s := framework.Current()
			name := "kubectl-" + strings.ToLower(k.kind)
			user := k.user()
			ns := nsArgs(k)
			if k.kind == "Network" {
				// The patch enables the NAT gateway: one of acme's public IPs.
				ensurePublicIPs(ctx, t, "acme", 4)
			}

			if _, _, err := s.Kubectl(ctx, user, "create", "-f", writeManifest(t, manifest(k, name, k.spec))); err != nil {
				t.Fatal(err)
			}
			var got unstructured.Unstructured
			kubectlJSON(ctx, t, user, &got, append([]string{"get", k.qualified(), name}, ns...)...)
			if got.GetGeneration() != 1 {
				t.Errorf("generation after create = %d, want 1", got.GetGeneration())
			}
			if k.tenantOwned && got.GetLabels()["tenant.io/tenant"] != "acme" {
				t.Errorf("labels %v, want tenant.io/tenant=acme set by the server", got.GetLabels())
			}

			// The table has the kind's columns, and the short name works.
			table, _, err := s.Kubectl(ctx, user, append([]string{"get", k.shortName}, ns...)...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(table, name) || !strings.Contains(table, "AGE") {
				t.Errorf("kubectl get %s:\n%s", k.shortName, table)
			}

			// Merge patch.
			patch, _ := json.Marshal(k.patch)
			if _, _, err := s.Kubectl(ctx, user, append([]string{"patch", k.qualified(), name, "--type=merge", "-p", string(patch)}, ns...)...); err != nil {
				t.Fatal(err)
			}
			// JSON patch.
			jsonPatch := `[{"op":"add","path":"/metadata/annotations","value":{"example.com/note":"json-patched"}}]`
			if _, _, err := s.Kubectl(ctx, user, append([]string{"patch", k.qualified(), name, "--type=json", "-p", jsonPatch}, ns...)...); err != nil {
				t.Fatal(err)
			}
			kubectlJSON(ctx, t, user, &got, append([]string{"get", k.qualified(), name}, ns...)...)
			if got.GetAnnotations()["example.com/note"] != "json-patched" {
				t.Errorf("annotations after JSON patch: %v", got.GetAnnotations())
			}
			if k.patch["spec"] != nil && got.GetGeneration() != 2 {
				t.Errorf("generation after a spec patch = %d, want 2", got.GetGeneration())
			}

			// Server-side apply by a second field manager, then replace (PUT).
			applied := manifest(k, name, k.spec)
			applied["metadata"].(map[string]interface{})["labels"] = map[string]interface{}{"applied": "yes"}
			if _, _, err := s.Kubectl(ctx, user, "apply", "--server-side", "--force-conflicts", "--field-manager=it-apply", "-f", writeManifest(t, applied)); err != nil {
				t.Fatal(err)
			}
			kubectlJSON(ctx, t, user, &got, append([]string{"get", k.qualified(), name, "--show-managed-fields"}, ns...)...)
			if got.GetLabels()["applied"] != "yes" {
				t.Errorf("labels after server-side apply: %v", got.GetLabels())
			}
			managers := map[string]bool{}
			for _, mf := range got.GetManagedFields() {
				managers[mf.Manager] = true
			}
			if !managers["it-apply"] {
				t.Errorf("managedFields lack the apply manager: %v", managers)
			}
			// The syncer may write a Tenant or Namespace after it was read:
			// the replace then fails with a 409 and is sent again on the
			// object read anew.
			for attempt := 1; ; attempt++ {
				got.SetAnnotations(map[string]string{"example.com/note": "replaced"})
				_, stderr, err := s.Kubectl(ctx, user, "replace", "-f", writeManifest(t, got.Object))
				if err == nil {
					break
				}
				if attempt == 5 || !strings.Contains(stderr, "the object has been modified") {
					t.Fatal(err)
				}
				kubectlJSON(ctx, t, user, &got, append([]string{"get", k.qualified(), name}, ns...)...)
			}

			if _, _, err := s.Kubectl(ctx, user, append([]string{"delete", k.qualified(), name, "--wait=true"}, ns...)...); err != nil {
				t.Fatal(err)
			}
			_, stderr, err := s.Kubectl(ctx, user, append([]string{"get", k.qualified(), name}, ns...)...)
			if err == nil || !strings.Contains(stderr, "NotFound") {
				t.Errorf("get after delete: err=%v stderr=%s", err, stderr)
			}
		})
	}
}

// TestEveryKindThroughDynamicClient covers list with selectors, watch,
// update and deletecollection for every kind.
func TestEveryKindThroughDynamicClient(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.kind, func(t *testing.T) {
			ctx := framework.Context(t, 2*time.Minute)
			client := dynamicFor(t, k.user(), k)
			selector := "it-dyn=" + strings.ToLower(k.kind)

			w, err := client.Watch(ctx, metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()

			var names []string
			for i := 0; i < 3; i++ {
				obj := &unstructured.Unstructured{Object: manifest(k, fmt.Sprintf("dyn-%s-%d", strings.ToLower(k.kind), i), k.spec)}
				obj.SetLabels(map[string]string{"it-dyn": strings.ToLower(k.kind), "index": fmt.Sprint(i)})
				created, err := client.Create(ctx, obj, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, created.GetName())
			}
			// The syncer writes the status (and a Tenant's finalizer) of
			// what it sees created: those MODIFIED events may come between
			// the ones this test is about, and are skipped. Any other event
			// fails the test.
			next := syncerSkippingWatch(ctx, t, w)
			for _, want := range names {
				ev, o := next()
				if ev.Type != watch.Added || o.GetName() != want {
					t.Fatalf("watch event %v %v, want ADDED %s", ev.Type, ev.Object, want)
				}
			}

			list, err := client.List(ctx, metav1.ListOptions{LabelSelector: selector + ",index!=1"})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 2 {
				t.Errorf("label-selected list has %d items, want 2", len(list.Items))
			}
			list, err = client.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + names[1]})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 1 || list.Items[0].GetName() != names[1] {
				t.Errorf("field-selected list: %d items", len(list.Items))
			}
			page, err := client.List(ctx, metav1.ListOptions{LabelSelector: selector, Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Items) != 2 || page.GetContinue() == "" {
				t.Errorf("first page: %d items, continue %q", len(page.Items), page.GetContinue())
			}
			rest, err := client.List(ctx, metav1.ListOptions{LabelSelector: selector, Limit: 2, Continue: page.GetContinue()})
			if err != nil {
				t.Fatal(err)
			}
			if len(rest.Items) != 1 || rest.GetContinue() != "" {
				t.Errorf("second page: %d items, continue %q", len(rest.Items), rest.GetContinue())
			}

			// The syncer may write the object between the Get and the
			// Update: a 409 Conflict then, and the update is retried.
			err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				obj, err := client.Get(ctx, names[0], metav1.GetOptions{})
				if err != nil {
					return err
				}
				obj.SetAnnotations(map[string]string{"updated": "yes"})
				_, err = client.Update(ctx, obj, metav1.UpdateOptions{})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if ev, o := next(); ev.Type != watch.Modified || o.GetName() != names[0] || o.GetAnnotations()["updated"] != "yes" {
				t.Errorf("watch event %v %s annotations %v, want MODIFIED %s with updated=yes", ev.Type, o.GetName(), o.GetAnnotations(), names[0])
			}

			if k.kind == "Tenant" {
				// A Tenant is deleted at once only when the syncer has
				// onboarded it (finalizer tenant.io/offboarding): before,
				// its Namespace "default" blocks the delete (409). That
				// Namespace needs the tenant's Network "default".
				for _, name := range names {
					ensureTenantNetwork(ctx, t, name, "default")
					if err := framework.Current().WaitTenantReady(ctx, name, time.Minute); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := client.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: selector}); err != nil {
				t.Fatal(err)
			}
			list, err = client.List(ctx, metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				t.Fatal(err)
			}
			if k.kind == "Tenant" {
				// Each is deleted (a deletionTimestamp) and disappears once
				// the syncer has removed its Namespaces and host objects.
				for _, it := range list.Items {
					if it.GetDeletionTimestamp() == nil {
						t.Errorf("tenant %s left without a deletionTimestamp after deletecollection", it.GetName())
					}
				}
				left := isoNames(list)
				err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
					l, err := client.List(ctx, metav1.ListOptions{LabelSelector: selector})
					if err != nil {
						return false, nil
					}
					left = isoNames(l)
					return len(left) == 0, nil
				})
				if err != nil {
					t.Errorf("tenants %v still there 1m after deletecollection: %v", left, err)
				}
			} else if len(list.Items) != 0 {
				t.Errorf("%d items left after deletecollection", len(list.Items))
			}
		})
	}
}

// syncerWrite says whether cur, a watch's MODIFIED object, differs from
// prev, the same object as the watch delivered it before, only where the
// syncer writes: status, and the finalizer tenant.io/offboarding it adds to
// a Tenant (resourceVersion and managedFields change with every write).
func syncerWrite(prev, cur *unstructured.Unstructured) bool {
	strip := func(u *unstructured.Unstructured) map[string]interface{} {
		c := u.DeepCopy()
		delete(c.Object, "status")
		c.SetResourceVersion("")
		c.SetManagedFields(nil)
		var finalizers []string
		for _, f := range c.GetFinalizers() {
			if f != "tenant.io/offboarding" {
				finalizers = append(finalizers, f)
			}
		}
		c.SetFinalizers(finalizers)
		return c.Object
	}
	return reflect.DeepEqual(strip(prev), strip(cur))
}

// syncerSkippingWatch returns a reader of w's next event that is not a
// syncer write (syncerWrite) to an object the watch delivered before. It
// fails the test on a watch error, an object that is not unstructured, or
// when nothing comes before ctx ends.
func syncerSkippingWatch(ctx context.Context, t *testing.T, w watch.Interface) func() (watch.Event, *unstructured.Unstructured) {
	last := map[string]*unstructured.Unstructured{}
	return func() (watch.Event, *unstructured.Unstructured) {
		t.Helper()
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatal("watch ended")
				}
				o, isU := ev.Object.(*unstructured.Unstructured)
				if ev.Type == watch.Error || !isU {
					t.Fatalf("watch event %v %v", ev.Type, ev.Object)
				}
				key := o.GetNamespace() + "/" + o.GetName()
				prev := last[key]
				last[key] = o
				if ev.Type == watch.Modified && prev != nil && syncerWrite(prev, o) {
					continue
				}
				return ev, o
			case <-ctx.Done():
				t.Fatal("no watch event")
			}
		}
	}
}

// TestGeneratedClientset uses the typed clientset, its watch, and apply
// configurations (server-side apply) against the aggregated server.
func TestGeneratedClientset(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	cs, err := clientset.NewForConfig(framework.Current().RESTConfig(alice))
	if err != nil {
		t.Fatal(err)
	}
	nets := cs.TenantV1alpha1().Networks()
	ensurePublicIPs(ctx, t, "acme", 4) // the apply enables the NAT gateway
	w, err := nets.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=typed"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	created, err := nets.Create(ctx, &tenantv1alpha1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "typed"},
		Spec:       tenantv1alpha1.NetworkSpec{Subnets: []string{"10.42.7.0/24"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.Topology != tenantv1alpha1.NetworkTopologyLayer2 {
		t.Errorf("topology defaulted to %q, want Layer2", created.Spec.Topology)
	}
	ev := <-w.ResultChan()
	if n, ok := ev.Object.(*tenantv1alpha1.Network); ev.Type != watch.Added || !ok || n.Name != "typed" {
		t.Fatalf("typed watch event %v %T", ev.Type, ev.Object)
	}

	applied, err := nets.Apply(ctx, applyv1alpha1.Network("typed").
		WithSpec(applyv1alpha1.NetworkSpec().WithTopology(tenantv1alpha1.NetworkTopologyLayer2).WithSubnets("10.42.7.0/24").
			WithNATGateway(applyv1alpha1.NATGateway().WithEnabled(true))),
		metav1.ApplyOptions{FieldManager: "typed-apply", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if applied.Spec.NATGateway == nil || !applied.Spec.NATGateway.Enabled || applied.Generation != 2 {
		t.Errorf("after apply: spec %+v generation %d", applied.Spec, applied.Generation)
	}

	fips := cs.TenantV1alpha1().FloatingIPs("dev")
	if _, err := fips.Create(ctx, &tenantv1alpha1.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: "typed"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := cs.TenantV1alpha1().FloatingIPs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range list.Items {
		found = found || (f.Namespace == "dev" && f.Name == "typed")
	}
	if !found {
		t.Errorf("list across namespaces lacks dev/typed: %v", list.Items)
	}
	if err := fips.Delete(ctx, "typed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := nets.Delete(ctx, "typed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestExplain checks that the OpenAPI published through the aggregator
// documents the fields.
func TestExplain(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	for _, c := range []struct{ path, want string }{
		{"networks.tenant.io.spec.topology", "Layer2 or Layer3"},
		{"tenants.tenant.io.spec.network", "prefixLength"},
		{"floatingips.tenant.io.spec.target", "VirtualMachine or Pod"},
		{"loadbalancers.tenant.io.status", "address"},
		{"addresspools.tenant.io.spec.purpose", "TenantNetworks"},
		{"hostclaims.tenant.io.spec", "rebootRequestedAt"},
		{"hostclaims.tenant.io.spec.hostClass", "Immutable"},
		{"hostclasses.tenant.io", "bare-metal servers the provider offers"},
	} {
		out, _, err := framework.Current().Kubectl(ctx, alice, "explain", c.path)
		if err != nil {
			t.Errorf("explain %s: %v", c.path, err)
			continue
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("explain %s lacks %q:\n%s", c.path, c.want, out)
		}
	}
}

// providerInTenant is the admin acting inside tenant acme by impersonation,
// keeping system:masters for the status writes a tenant member may not do.
var providerInTenant = []string{"--as=admin", "--as-group=tenant.io:acme", "--as-group=system:masters"}

// TestStatusSubresource checks that spec writes cannot change status and
// status writes cannot change spec, that neither changes what the
// registry's IPAM assigns (status.natGatewayIP, status.subnets), and that
// kubectl wait sees conditions.
func TestStatusSubresource(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	s := framework.Current()
	k := kinds[5] // Network
	publicIPs := ensurePublicIPs(ctx, t, "acme", 4)
	if _, _, err := s.Kubectl(ctx, alice, "create", "-f", writeManifest(t, manifest(k, "status-net", k.spec))); err != nil {
		t.Fatal(err)
	}
	defer s.Kubectl(ctx, alice, "delete", "networks", "status-net") //nolint:errcheck

	// A spec write that carries status: the status is the server's, not
	// the request's. (Enabling the NAT gateway gives it one of acme's
	// public IPs, which 203.0.113.254 is not.)
	patch := `{"spec":{"natGateway":{"enabled":true}},"status":{"natGatewayIP":"203.0.113.254","subnets":["10.42.254.0/24"]}}`
	if _, _, err := s.Kubectl(ctx, alice, "patch", "networks", "status-net", "--type=merge", "-p", patch); err != nil {
		t.Fatal(err)
	}
	var net tenantv1alpha1.Network
	kubectlJSON(ctx, t, alice, &net, "get", "networks", "status-net")
	if net.Status.NATGatewayIP == "203.0.113.254" || !slices.Contains(publicIPs, net.Status.NATGatewayIP) {
		t.Errorf("after a spec write carrying status, status.natGatewayIP=%q, want one of acme's public IPs %v", net.Status.NATGatewayIP, publicIPs)
	}
	if !slices.Equal(net.Status.Subnets, net.Spec.Subnets) || len(net.Spec.Subnets) != 1 {
		t.Errorf("after a spec write carrying status, status.subnets=%v, want the spec's %v", net.Status.Subnets, net.Spec.Subnets)
	}
	if net.Generation != 2 {
		t.Errorf("generation %d after a spec change, want 2", net.Generation)
	}
	natIP := net.Status.NATGatewayIP

	// Tenant members may not write status at all.
	_, stderr, err := s.Kubectl(ctx, alice, "patch", "networks", "status-net", "--subresource=status", "--type=merge", "-p", `{"status":{"natGatewayIP":"203.0.113.9"}}`)
	if err == nil || !strings.Contains(stderr, "Forbidden") {
		t.Errorf("a tenant member patched status: err=%v %s", err, stderr)
	}

	// A status write that carries spec: spec and generation stay.
	now := metav1.Now().UTC().Format(time.RFC3339)
	statusPatch := fmt.Sprintf(`{"spec":{"topology":"Layer3","natGateway":null},"status":{"natGatewayIP":"203.0.113.9","conditions":[{"type":"Ready","status":"True","reason":"Synced","message":"on the host","lastTransitionTime":%q,"observedGeneration":2}]}}`, now)
	args := append([]string{"patch", "networks", "status-net", "--subresource=status", "--type=merge", "-p", statusPatch}, providerInTenant...)
	// The object as that write stored it (the syncer may write status
	// again right after).
	kubectlJSON(ctx, t, stack.AdminUser, &net, args...)
	if c := meta.FindStatusCondition(net.Status.Conditions, "Ready"); c == nil || c.Message != "on the host" || c.ObservedGeneration != 2 {
		t.Errorf("status write did not land: %+v", net.Status)
	}
	if net.Status.NATGatewayIP != natIP {
		t.Errorf("a status write changed status.natGatewayIP from %s to %q: IPAM owns it", natIP, net.Status.NATGatewayIP)
	}
	if net.Spec.Topology != tenantv1alpha1.NetworkTopologyLayer2 || net.Spec.NATGateway == nil || net.Generation != 2 {
		t.Errorf("a status write changed spec: %+v generation %d", net.Spec, net.Generation)
	}

	if _, _, err := s.Kubectl(ctx, alice, "wait", "networks/status-net", "--for=condition=Ready", "--timeout=30s"); err != nil {
		t.Errorf("kubectl wait --for=condition=Ready: %v", err)
	}
}

// TestTenantScopeOfCaller checks the coarse identity rules this server
// starts with: provider kinds are for the provider, tenant kinds need a tenant.
func TestTenantScopeOfCaller(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	s := framework.Current()
	net := kinds[5]

	// The admin is in no tenant: an empty view, and writes are refused.
	out, _, err := s.Kubectl(ctx, stack.AdminUser, "get", "networks", "-o", "name")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out) != "" {
		t.Errorf("admin outside any tenant lists networks: %q", out)
	}
	_, stderr, err := s.Kubectl(ctx, stack.AdminUser, "create", "-f", writeManifest(t, manifest(net, "admin-net", net.spec)))
	if err == nil || !strings.Contains(stderr, "not a member of any tenant") {
		t.Errorf("admin created a tenant network: err=%v %s", err, stderr)
	}
	// Acting inside acme by impersonation works.
	args := append([]string{"create", "-f", writeManifest(t, manifest(net, "impersonated-net", net.spec))}, providerInTenant...)
	if _, _, err := s.Kubectl(ctx, stack.AdminUser, args...); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Kubectl(ctx, alice, "delete", "networks", "impersonated-net"); err != nil {
		t.Errorf("alice cannot see the network created in her tenant by impersonation: %v", err)
	}

	// Tenant members may not write provider kinds (host RBAC).
	tenantKind := kinds[0]
	_, stderr, err = s.Kubectl(ctx, alice, "create", "-f", writeManifest(t, manifest(tenantKind, "alice-tenant", tenantKind.spec)))
	if err == nil || !strings.Contains(stderr, "Forbidden") {
		t.Errorf("a tenant member created a Tenant: err=%v %s", err, stderr)
	}
}

// TestInvalidInputs sends bad objects and checks each gets 422 Invalid
// naming the field, and that nothing is stored.
func TestInvalidInputs(t *testing.T) {
	byKind := map[string]kindCase{}
	for _, k := range kinds {
		byKind[k.kind] = k
	}
	cases := []struct {
		name, kind string
		objName    string
		spec       map[string]interface{}
		field      string
	}{
		{"tenant cidr not canonical", "Tenant", "bad-cidr", map[string]interface{}{"network": map[string]interface{}{"cidr": "10.42.0.1/16"}}, "spec.network.cidr"},
		{"tenant cidr garbage", "Tenant", "bad-cidr2", map[string]interface{}{"network": map[string]interface{}{"cidr": "banana"}}, "spec.network.cidr"},
		{"tenant cidr ipv6", "Tenant", "bad-cidr3", map[string]interface{}{"network": map[string]interface{}{"cidr": "fd00::/64"}}, "spec.network.cidr"},
		{"tenant cidr and prefixLength", "Tenant", "bad-both", map[string]interface{}{"network": map[string]interface{}{"cidr": "10.42.0.0/16", "prefixLength": int64(16)}}, "spec.network"},
		{"tenant prefixLength too small", "Tenant", "bad-prefix", map[string]interface{}{"network": map[string]interface{}{"prefixLength": int64(4)}}, "spec.network.prefixLength"},
		{"tenant public IP count negative", "Tenant", "bad-count", map[string]interface{}{"network": map[string]interface{}{"prefixLength": int64(16)}, "publicIPs": map[string]interface{}{"count": int64(-1)}}, "spec.publicIPs.count"},
		{"tenant negative quota", "Tenant", "bad-quota", map[string]interface{}{"network": map[string]interface{}{"prefixLength": int64(16)}, "quota": map[string]interface{}{"networks": int64(-2)}}, "spec.quota.networks"},
		{"tenant name not a DNS label", "Tenant", "Bad_Name", map[string]interface{}{"network": map[string]interface{}{"prefixLength": int64(16)}}, "metadata.name"},
		{"tenant name too long", "Tenant", strings.Repeat("a", 31), map[string]interface{}{"network": map[string]interface{}{"prefixLength": int64(16)}}, "metadata.name"},
		{"pool purpose unknown", "AddressPool", "bad-purpose", map[string]interface{}{"purpose": "Everything", "cidrs": []interface{}{"10.0.0.0/8"}}, "spec.purpose"},
		{"pool without ranges", "AddressPool", "bad-empty", map[string]interface{}{"purpose": "PublicIPs"}, "spec.cidrs"},
		{"pool overlapping cidrs", "AddressPool", "bad-overlap", map[string]interface{}{"purpose": "PublicIPs", "cidrs": []interface{}{"203.0.113.0/24", "203.0.113.128/25"}}, "spec.cidrs[1]"},
		{"provider service without service name", "ProviderService", "bad-svc", map[string]interface{}{"service": map[string]interface{}{"namespace": "infra"}}, "spec.service.name"},
		{"vrf peering bad asn", "VRFPeering", "bad-asn", map[string]interface{}{"tenant": "acme", "network": "default", "asn": int64(0), "neighbors": []interface{}{map[string]interface{}{"address": "192.0.2.1", "asn": int64(65000)}}}, "spec.asn"},
		{"vrf peering bad neighbor", "VRFPeering", "bad-neighbor", map[string]interface{}{"tenant": "acme", "network": "default", "asn": int64(64512), "neighbors": []interface{}{map[string]interface{}{"address": "300.1.1.1", "asn": int64(65000)}}}, "spec.neighbors[0].address"},
		{"namespace bad network name", "Namespace", "bad-ns", map[string]interface{}{"network": "Not_A_Name"}, "spec.network"},
		{"namespace name too long", "Namespace", strings.Repeat("n", 64), map[string]interface{}{"network": "default"}, "metadata.name"},
		{"network unknown topology", "Network", "bad-topology", map[string]interface{}{"topology": "Layer7"}, "spec.topology"},
		{"network bad subnet", "Network", "bad-subnet", map[string]interface{}{"subnets": []interface{}{"10.42.0.0/33"}}, "spec.subnets[0]"},
		{"network overlapping subnets", "Network", "bad-overlap", map[string]interface{}{"subnets": []interface{}{"10.42.0.0/24", "10.42.0.128/25"}}, "spec.subnets[1]"},
		{"network bad NAT address", "Network", "bad-nat", map[string]interface{}{"natGateway": map[string]interface{}{"enabled": true, "address": "not-an-ip"}}, "spec.natGateway.address"},
		{"floating ip bad address", "FloatingIP", "bad-address", map[string]interface{}{"address": "203.0.113.300"}, "spec.address"},
		{"floating ip unknown target kind", "FloatingIP", "bad-target", map[string]interface{}{"target": map[string]interface{}{"kind": "Deployment", "name": "web"}}, "spec.target.kind"},
		{"floating ip port out of range", "FloatingIP", "bad-port", map[string]interface{}{"ports": []interface{}{map[string]interface{}{"port": int64(70000)}}}, "spec.ports[0].port"},
		{"floating ip bad protocol", "FloatingIP", "bad-proto", map[string]interface{}{"ports": []interface{}{map[string]interface{}{"port": int64(22), "protocol": "ICMP"}}}, "spec.ports[0].protocol"},
		{"load balancer without ports", "LoadBalancer", "bad-noports", map[string]interface{}{"selector": map[string]interface{}{"app": "web"}}, "spec.ports"},
		{"load balancer without selector", "LoadBalancer", "bad-nosel", map[string]interface{}{"ports": []interface{}{map[string]interface{}{"port": int64(80)}}}, "spec.selector"},
		{"load balancer bad source range", "LoadBalancer", "bad-range", map[string]interface{}{"selector": map[string]interface{}{"app": "web"}, "ports": []interface{}{map[string]interface{}{"port": int64(80)}}, "sourceRanges": []interface{}{"0.0.0.0/33"}}, "spec.sourceRanges[0]"},
		{"load balancer bad target port", "LoadBalancer", "bad-target-port", map[string]interface{}{"selector": map[string]interface{}{"app": "web"}, "ports": []interface{}{map[string]interface{}{"port": int64(80), "targetPort": int64(70000)}}}, "spec.ports[0].targetPort"},
		{"load balancer bad selector", "LoadBalancer", "bad-selector", map[string]interface{}{"selector": map[string]interface{}{"bad key!": "web"}, "ports": []interface{}{map[string]interface{}{"port": int64(80)}}}, "spec.selector"},
		{"host class platform label", "HostClass", "bad-label", map[string]interface{}{"hostNamespace": "it-no-servers", "tenantLabels": []interface{}{"kubernetes.io/hostname"}}, "spec.tenantLabels[0]"},
		{"host class offered twice over", "HostClass", "bad-offer", map[string]interface{}{"hostNamespace": "it-no-servers", "allTenants": true, "tenants": []interface{}{"acme"}}, "spec.tenants"},
		{"host claim of no class", "HostClaim", "bad-class", map[string]interface{}{"hostClass": "no-such-class"}, "spec.hostClass"},
		{"host claim local image", "HostClaim", "bad-image", map[string]interface{}{"hostClass": demoHostClass, "image": map[string]interface{}{"url": "file:///etc/passwd", "checksum": "https://images.example.net/x.sha256sum"}}, "spec.image.url"},
		{"host claim data from another namespace", "HostClaim", "bad-data", map[string]interface{}{"hostClass": demoHostClass, "userData": map[string]interface{}{"name": "../other/boot"}}, "spec.userData.name"},
	}
	if len(cases) < 20 {
		t.Fatalf("only %d bad inputs", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := framework.Context(t, 2*time.Minute)
			k := byKind[c.kind]
			client := dynamicFor(t, k.user(), k)
			_, err := client.Create(ctx, &unstructured.Unstructured{Object: manifest(k, c.objName, c.spec)}, metav1.CreateOptions{})
			var status *apierrors.StatusError
			if !errors.As(err, &status) || status.ErrStatus.Code != 422 {
				t.Fatalf("create returned %v, want 422 Invalid", err)
			}
			var fields []string
			if d := status.ErrStatus.Details; d != nil {
				for _, cause := range d.Causes {
					fields = append(fields, cause.Field)
				}
			}
			found := false
			for _, f := range fields {
				found = found || strings.HasPrefix(f, c.field)
			}
			if !found {
				t.Errorf("422 causes name fields %v, want %s (%s)", fields, c.field, status.ErrStatus.Message)
			}
			if _, err := client.Get(ctx, c.objName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("a refused object was stored: %v", err)
			}
		})
	}

	// Immutable fields, through kubectl.
	t.Run("immutable topology via kubectl", func(t *testing.T) {
		ctx := framework.Context(t, 2*time.Minute)
		s := framework.Current()
		k := byKind["Network"]
		if _, _, err := s.Kubectl(ctx, alice, "create", "-f", writeManifest(t, manifest(k, "immutable", k.spec))); err != nil {
			t.Fatal(err)
		}
		defer s.Kubectl(ctx, alice, "delete", "networks", "immutable") //nolint:errcheck
		var created tenantv1alpha1.Network
		kubectlJSON(ctx, t, alice, &created, "get", "networks.tenant.io", "immutable")
		_, stderr, err := s.Kubectl(ctx, alice, "patch", "networks", "immutable", "--type=merge", "-p", `{"spec":{"topology":"Layer3"}}`)
		if err == nil || !strings.Contains(stderr, "spec.topology") || !strings.Contains(stderr, "immutable") {
			t.Errorf("changing topology: err=%v %s", err, stderr)
		}
		// Dropping the assigned subnets means "no change", not "remove them".
		if _, _, err := s.Kubectl(ctx, alice, "patch", "networks.tenant.io", "immutable", "--type=merge", "-p", `{"spec":{"subnets":null}}`); err != nil {
			t.Errorf("patch dropping subnets: %v", err)
		}
		var net tenantv1alpha1.Network
		kubectlJSON(ctx, t, alice, &net, "get", "networks.tenant.io", "immutable")
		if len(net.Spec.Subnets) != 1 || !slices.Equal(net.Spec.Subnets, created.Spec.Subnets) || net.Generation != 1 {
			t.Errorf("after dropping subnets: %v, generation %d", net.Spec.Subnets, net.Generation)
		}
		// A tenant cannot relabel its object into another tenant.
		_, stderr, err = s.Kubectl(ctx, alice, "label", "networks", "immutable", "--overwrite", "tenant.io/tenant=globex")
		if err == nil || !strings.Contains(stderr, "tenant.io/tenant") {
			t.Errorf("relabelling to another tenant: err=%v %s", err, stderr)
		}
	})

	// Tenant label set by the caller to another tenant on create.
	t.Run("foreign tenant label on create", func(t *testing.T) {
		ctx := framework.Context(t, 2*time.Minute)
		k := byKind["Network"]
		obj := &unstructured.Unstructured{Object: manifest(k, "foreign-label", k.spec)}
		obj.SetLabels(map[string]string{"tenant.io/tenant": "globex"})
		_, err := dynamicFor(t, alice, k).Create(ctx, obj, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Errorf("create with tenant.io/tenant=globex: %v, want 422", err)
		}
	})
}

// TestExamples applies every example of artifacts/examples as the user it
// is meant for, so the documented walkthrough keeps working.
func TestExamples(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	s := framework.Current()
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "artifacts", "examples")
	// network.yaml enables a NAT gateway, which takes one of the tenant's
	// public IPs; tenant.yaml gives acme some, globex needs its own.
	ensurePublicIPs(ctx, t, "globex", 2)
	for _, c := range []struct {
		file string
		user string
		args []string
		// shared objects (tenant acme, its Namespace dev) are fixtures of the
		// whole package: applied (updated), never deleted.
		shared bool
	}{
		{"addresspools.yaml", stack.AdminUser, nil, false},
		{"tenant.yaml", stack.AdminUser, nil, true},
		{"provider-infra.yaml", stack.AdminUser, nil, false},
		{"providerservice.yaml", stack.AdminUser, nil, false},
		{"vrfpeering.yaml", stack.AdminUser, nil, false},
		{"baremetalhosts.yaml", stack.AdminUser, nil, false},
		{"hostclass.yaml", stack.AdminUser, nil, false},
		{"network.yaml", alice, nil, false},
		{"network.yaml", "bob", nil, false},
		{"namespace.yaml", alice, nil, true},
		{"floatingip.yaml", alice, []string{"-n", "dev"}, false},
		{"loadbalancer.yaml", alice, []string{"-n", "dev"}, false},
		{"hostclaim.yaml", alice, []string{"-n", "dev"}, false},
	} {
		path := filepath.Join(dir, c.file)
		if _, _, err := s.Kubectl(ctx, c.user, append([]string{"apply", "-f", path}, c.args...)...); err != nil {
			t.Errorf("%s as %s: %v", c.file, c.user, err)
			continue
		}
		if c.shared {
			continue
		}
		t.Cleanup(func() {
			s.Kubectl(context.Background(), c.user, append([]string{"delete", "--ignore-not-found", "-f", path}, c.args...)...) //nolint:errcheck
		})
	}
	// alice's VM web, in the host namespace of her Namespace dev: the
	// FloatingIP of floatingip.yaml is bound to it.
	vm := filepath.Join(dir, "virtualmachine.yaml")
	devHost := hostNamespaceOf(ctx, t, alice, "dev")
	if _, _, err := s.Kubectl(ctx, alice, "-n", devHost, "apply", "-f", vm); err != nil {
		t.Errorf("virtualmachine.yaml as %s in %s: %v", alice, devHost, err)
	}
	t.Cleanup(func() {
		s.Kubectl(context.Background(), stack.AdminUser, "-n", devHost, "delete", "--ignore-not-found", "-f", vm) //nolint:errcheck
	})
	// alice's HostClaim web is bound to a server of the example's class,
	// provisioned and powered on (the baremetal-operator's part played by
	// the stack's stand-in).
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		out, _, err := s.Kubectl(ctx, alice, "-n", "dev", "get", "hostclaims.tenant.io", "web", "-o", "jsonpath={.status.phase}/{.status.power}")
		return err == nil && strings.TrimSpace(out) == "Provisioned/On", nil
	})
	if err != nil {
		out, _, _ := s.Kubectl(ctx, alice, "-n", "dev", "get", "hostclaims.tenant.io", "web", "-o", "yaml")
		t.Errorf("hostclaim.yaml: not Provisioned/On: %v\n%s", err, out)
	}
	// alice reads her Tenant: its block and its host namespace prefix.
	var acme tenantv1alpha1.Tenant
	kubectlJSON(ctx, t, alice, &acme, "get", "tenants.tenant.io", "acme")
	if acme.Status.Network == nil || acme.Status.Network.CIDR != "10.42.0.0/16" || len(acme.Status.PublicIPs) != 4 ||
		!regexp.MustCompile(`^acme-[0-9a-f]{6}$`).MatchString(acme.Status.NamespacePrefix) {
		t.Errorf("acme's status as alice reads it: %+v", acme.Status)
	}
	// alice and bob each own a Network "default" (from onboarding) and
	// "blue" (the example), and see only their own.
	for _, u := range []string{alice, "bob"} {
		out, _, err := s.Kubectl(ctx, u, "get", "networks.tenant.io", "-o", "jsonpath={range .items[*]}{.metadata.labels.tenant\\.io/tenant}/{.metadata.name}{\"\\n\"}{end}")
		if err != nil {
			t.Fatal(err)
		}
		tenant := map[string]string{alice: "acme", "bob": "globex"}[u]
		if want := tenant + "/blue\n" + tenant + "/default"; strings.TrimSpace(out) != want {
			t.Errorf("%s lists networks %q, want only %q", u, out, want)
		}
	}
}

// hostNamespaceOf is the host namespace of user's tenant Namespace ns, as
// its status says once the syncer made it.
func hostNamespaceOf(ctx context.Context, t *testing.T, user, ns string) string {
	t.Helper()
	var host string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		out, _, err := framework.Current().Kubectl(ctx, user, "get", "namespaces.tenant.io", ns, "-o", "jsonpath={.status.hostNamespace}")
		host = strings.TrimSpace(out)
		return err == nil && host != "", nil
	})
	if err != nil {
		t.Fatalf("host namespace of %s's Namespace %s: %v", user, ns, err)
	}
	return host
}

// TestDeleteNamespaceWithContents checks that a tenant Namespace holding a
// FloatingIP cannot be deleted (409 naming it), and can once it is empty.
func TestDeleteNamespaceWithContents(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	s := framework.Current()
	if err := s.EnsureNamespace(ctx, alice, "busy"); err != nil {
		t.Fatal(err)
	}
	fip := kinds[6]
	obj := manifest(fip, "pinned", fip.spec)
	obj["metadata"].(map[string]interface{})["namespace"] = "busy"
	if _, _, err := s.Kubectl(ctx, alice, "create", "-f", writeManifest(t, obj)); err != nil {
		t.Fatal(err)
	}
	err := dynamicFor(t, alice, kinds[4]).Delete(ctx, "busy", metav1.DeleteOptions{})
	var status *apierrors.StatusError
	if !errors.As(err, &status) || status.ErrStatus.Code != 409 || status.ErrStatus.Details == nil ||
		len(status.ErrStatus.Details.Causes) != 1 || status.ErrStatus.Details.Causes[0].Field != "floatingips busy/pinned" {
		t.Fatalf("deleting a namespace with a FloatingIP: %v (%+v)", err, status)
	}
	if _, _, err := s.Kubectl(ctx, alice, "-n", "busy", "delete", "floatingips.tenant.io", "pinned"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Kubectl(ctx, alice, "delete", "namespaces.tenant.io", "busy"); err != nil {
		t.Errorf("deleting the emptied namespace: %v", err)
	}
}
