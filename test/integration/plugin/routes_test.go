package plugin

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/pkg/tenantview"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestRoutes: the provider onboards tenant routeco for gil; info shows its
// route domain, routes says how to publish while there is none; gil writes
// an HTTPRoute and a GRPCRoute in the host namespace of its namespace web
// with kubectl's credentials, naming names of its domain, and routes lists
// them (table, -n, -o json and -o name) with what the gateway said of
// them; the provider sees them with --tenant. bob (globex) sees none of
// them and cannot read them on the host.
func TestRoutes(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	admin, gil, bob := newUser(t, stack.AdminUser), newUser(t, router), newUser(t, "bob")
	adminAPI := api(t, stack.AdminUser).TenantV1alpha1()

	r := admin.tenant(ctx, "admin", "onboard", "routeco", "--member", router, "--prefix-length", "24", "--quota", "namespaces=2")
	if r.code != 0 {
		t.Fatalf("admin onboard routeco: %s", r)
	}
	t.Cleanup(func() { _ = adminAPI.Tenants().Delete(context.Background(), "routeco", metav1.DeleteOptions{}) })
	tnt, err := adminAPI.Tenants().Get(ctx, "routeco", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	domain := tnt.Status.RouteDomain
	if want := "routeco." + stack.RouteDomain; domain != want {
		t.Fatalf("routeco's status.routeDomain %q, want %q", domain, want)
	}

	// The domain in info, before any route.
	mustContain(t, "info", gil.ok(ctx, t, "info"), "Route domain:   "+domain+"\n")
	var info tenantview.Info
	gil.okJSON(ctx, t, &info, "info")
	if info.RouteDomain != domain {
		t.Errorf("info -o json: routeDomain %q, want %q", info.RouteDomain, domain)
	}
	mustContain(t, "ns create web", gil.ok(ctx, t, "ns", "create", "web"), "namespace.tenant.io/web created\n")
	web, err := api(t, router).TenantV1alpha1().Namespaces().Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hostNS := web.Status.HostNamespace
	r = gil.tenant(ctx, "routes")
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("routes without routes: %s", r)
	}
	mustContain(t, "routes without routes", r.stderr, "Publish one", "naming "+domain+" or names below it (*."+domain+")", "No resources found.")

	// gil's routes, written on the host with gil's own credentials.
	gilHost, err := dynamic.NewForConfig(framework.Current().RESTConfig(router))
	if err != nil {
		t.Fatal(err)
	}
	shop := "shop." + domain
	for _, obj := range []*unstructured.Unstructured{
		gatewayRoute("HTTPRoute", hostNS, "shop", []string{shop, "*." + domain}, "shop"),
		gatewayRoute("GRPCRoute", hostNS, "api", []string{"api." + domain}, "api"),
	} {
		rk := tenantview.RouteKinds[0]
		if obj.GetKind() == "GRPCRoute" {
			rk = tenantview.RouteKinds[1]
		}
		if _, err := gilHost.Resource(rk.Resource).Namespace(hostNS).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("gil's %s %s in %s: %v", obj.GetKind(), obj.GetName(), hostNS, err)
		}
	}
	// The stack runs no gateway: nothing writes the routes' status, and
	// routes says so rather than guess.
	const accepted = "Unknown"

	out := gil.ok(ctx, t, "routes")
	t.Logf("routes:\n%s", out)
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			rows[f[1]] = f
		}
	}
	if h := rows["NAME"]; strings.Join(h, " ") != "NAMESPACE NAME KIND HOSTNAMES ACCEPTED BACKENDS" {
		t.Errorf("routes' header: %v", h)
	}
	for name, want := range map[string]string{
		"shop": "web shop HTTPRoute " + shop + ",*." + domain + " " + accepted + " shop",
		"api":  "web api GRPCRoute api." + domain + " " + accepted + " api",
	} {
		if got := strings.Join(rows[name], " "); got != want {
			t.Errorf("routes: %s's row %q, want %q", name, got, want)
		}
	}
	out = gil.ok(ctx, t, "route", "-n", "web", "-o", "name")
	if want := "grpcroute.gateway.networking.k8s.io/api\nhttproute.gateway.networking.k8s.io/shop\n"; out != want {
		t.Errorf("route -n web -o name: %q, want %q", out, want)
	}
	var list struct {
		Kind  string                      `json:"kind"`
		Items []unstructured.Unstructured `json:"items"`
	}
	gil.okJSON(ctx, t, &list, "routes", "-n", hostNS)
	if list.Kind != "List" || len(list.Items) != 2 {
		t.Fatalf("routes -n %s -o json: %d items of a %s", hostNS, len(list.Items), list.Kind)
	}
	for _, it := range list.Items {
		hosts, _, _ := unstructured.NestedStringSlice(it.Object, "spec", "hostnames")
		if it.GetNamespace() != hostNS || it.GetAPIVersion() != "gateway.networking.k8s.io/v1" || !strings.HasSuffix(hosts[0], "."+domain) {
			t.Errorf("routes -o json: %s %s/%s with hostnames %v", it.GetAPIVersion(), it.GetNamespace(), it.GetName(), hosts)
		}
	}
	r = gil.fails(ctx, t, 1, "routes", "-n", "dev")
	mustContain(t, "routes -n of no namespace of routeco", r.stderr, "Error from server (NotFound): ", `"dev" not found`)

	// The provider looks inside routeco (as its host group).
	mustContain(t, "admin's --tenant routeco routes -o wide", admin.ok(ctx, t, "--tenant", "routeco", "routes", "-o", "wide"), "HOST NAMESPACE", hostNS, shop)

	// bob: none of it, in the plugin or on the host.
	r = bob.tenant(ctx, "routes")
	if r.code != 0 {
		t.Fatalf("bob's routes: %s", r)
	}
	mustNotContain(t, "bob's routes", r.stdout+r.stderr, "shop", "routeco", hostNS)
	r = bob.fails(ctx, t, 1, "routes", "-n", hostNS)
	mustContain(t, "bob's routes -n "+hostNS, r.stderr, "Error from server (NotFound): ")
	mustNotContain(t, "bob's info", bob.ok(ctx, t, "info"), domain)
	bobHost, err := dynamic.NewForConfig(framework.Current().RESTConfig("bob"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bobHost.Resource(tenantview.RouteKinds[0].Resource).Namespace(hostNS).Get(ctx, "shop", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("bob's get of routeco's route on the host: %v, want 403", err)
	}
}

// gatewayRoute is a route of kind in ns for hostnames, attached to the
// provider's shared Gateway, sending every request to Service backend.
func gatewayRoute(kind, ns, name string, hostnames []string, backend string) *unstructured.Unstructured {
	hs := make([]any, len(hostnames))
	for i, h := range hostnames {
		hs[i] = h
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1",
		"kind":       kind,
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": "shared", "namespace": "tenant-gateway"}},
			"hostnames":  hs,
			"rules":      []any{map[string]any{"backendRefs": []any{map[string]any{"name": backend, "port": int64(80)}}}},
		},
	}}
}
