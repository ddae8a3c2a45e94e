package plugin

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/pkg/tenantview"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestRoutes: the provider onboards tenant routeco for gil; info shows its
// route domain, routes says how to publish while there is none; gil writes
// an HTTPRoute and a GRPCRoute in the host namespace of its namespace web
// with kubectl's credentials, naming names of its domain, and routes lists
// them (table, -n, -o json and -o name) with what the stack's gateway
// said of them: the HTTPRoute Accepted, its backend missing until gil
// creates the Service; the GRPCRoute, which the shared Gateway does not
// take, not Accepted; the provider sees them with --tenant. bob (globex) sees none of
// them and cannot read them on the host.
func TestRoutes(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
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
	gilKube, gilHost, err := framework.Current().Clients(router)
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
	// The stack's gateway (Traefik) accepts the HTTPRoute, and says its
	// backend is missing until the Service is there.
	waitRoute(ctx, t, gil, "shop", "a missing backend", func(a string) bool { return strings.HasPrefix(a, "True, ResolvedRefs False (") })
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: hostNS},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "shop"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	if _, err := gilKube.CoreV1().Services(hostNS).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("gil's Service shop in %s: %v", hostNS, err)
	}
	rows := waitRoute(ctx, t, gil, "shop", "True", func(a string) bool { return a == "True" })
	t.Logf("routes:\n%s", gil.ok(ctx, t, "routes"))
	if want := (map[string]string{"NAMESPACE": "web", "NAME": "shop", "KIND": "HTTPRoute", "HOSTNAMES": shop + ",*." + domain, "ACCEPTED": "True", "BACKENDS": "shop"}); !maps.Equal(rows["shop"], want) {
		t.Errorf("routes: shop's row %v, want %v", rows["shop"], want)
	}
	// The shared Gateway's listener takes HTTPRoutes only: the GRPCRoute
	// is not accepted, and routes does not say it is.
	if want := (map[string]string{"NAMESPACE": "web", "NAME": "api", "KIND": "GRPCRoute", "HOSTNAMES": "api." + domain, "BACKENDS": "api"}); !maps.Equal(withoutAccepted(rows["api"]), want) {
		t.Errorf("routes: api's row %v, want %v", rows["api"], want)
	}
	if a := rows["api"]["ACCEPTED"]; a != "Unknown" && !strings.HasPrefix(a, "False (") {
		t.Errorf("routes: the GRPCRoute api is ACCEPTED %q, want Unknown or False (reason)", a)
	}
	out := gil.ok(ctx, t, "route", "-n", "web", "-o", "name")
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
	_, bobHost, err := framework.Current().Clients("bob")
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
			"parentRefs": []any{map[string]any{"name": stack.GatewayName, "namespace": stack.GatewayNamespace, "sectionName": stack.GatewayListenerName}},
			"hostnames":  hs,
			"rules":      []any{map[string]any{"backendRefs": []any{map[string]any{"name": backend, "port": int64(80)}}}},
		},
	}}
}

// routeRows are the rows of routes' table by NAME, each cell by its
// column's header; cells may hold spaces (ACCEPTED: "False (Reason)").
func routeRows(t *testing.T, out string) map[string]map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	headers := []string{"NAMESPACE", "NAME", "KIND", "HOSTNAMES", "ACCEPTED", "BACKENDS"}
	starts := make([]int, len(headers))
	from := 0
	for i, h := range headers {
		// Each header after the one before (NAME is in NAMESPACE).
		j := strings.Index(lines[0][from:], h)
		if j < 0 {
			t.Fatalf("routes' header %q, want the columns %v", lines[0], headers)
		}
		starts[i] = from + j
		from = starts[i] + len(h)
	}
	rows := map[string]map[string]string{}
	for _, line := range lines[1:] {
		row := map[string]string{}
		for i, h := range headers {
			end := len(line)
			if i+1 < len(headers) && starts[i+1] < end {
				end = starts[i+1]
			}
			if starts[i] < end {
				row[h] = strings.TrimSpace(line[starts[i]:end])
			}
		}
		rows[row["NAME"]] = row
	}
	return rows
}

// waitRoute runs routes as u until route name's ACCEPTED satisfies ok, and
// returns the table's rows then.
func waitRoute(ctx context.Context, t *testing.T, u *user, name, what string, ok func(string) bool) map[string]map[string]string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(250 * time.Millisecond) {
		out := u.ok(ctx, t, "routes")
		rows := routeRows(t, out)
		if ok(rows[name]["ACCEPTED"]) {
			return rows
		}
		if time.Now().After(deadline) {
			t.Fatalf("routes: %s's ACCEPTED %q after a minute, want %s:\n%s", name, rows[name]["ACCEPTED"], what, out)
		}
	}
}

func withoutAccepted(row map[string]string) map[string]string {
	out := maps.Clone(row)
	delete(out, "ACCEPTED")
	return out
}
