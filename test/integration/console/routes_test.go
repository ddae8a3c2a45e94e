package console

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/pkg/tenantview"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestRoutes: the provider onboards tenant routeui for gia, who writes an
// HTTPRoute in the host namespace of her namespace web with her own
// credentials; her Routes page shows her route domain, the route's
// hostnames, what the gateway said of it and its backend, and says the
// page is read-only; her Overview names the domain. bob's Routes page
// shows globex's domain and none of it.
func TestRoutes(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	admin := tenantClient(t, stack.AdminUser).TenantV1alpha1()
	tnt := &tenantv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "routeui"}, Spec: tenantv1alpha1.TenantSpec{
		Members: tenantv1alpha1.TenantMembers{Users: []string{router}}, Network: tenantv1alpha1.TenantNetwork{PrefixLength: ptr.To[int32](24)}}}
	if _, err := admin.Tenants().Create(ctx, tnt, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Tenants().Delete(context.Background(), tnt.Name, metav1.DeleteOptions{}) })
	s := framework.Current()
	if err := s.WaitTenantReady(ctx, tnt.Name, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureNamespace(ctx, router, "web"); err != nil {
		t.Fatal(err)
	}
	gia := tenantClient(t, router).TenantV1alpha1()
	var hostNS string
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		ns, err := gia.Namespaces().Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		hostNS = ns.Status.HostNamespace
		return hostNS != "" && tenantview.Ready(ns.Status.Conditions) == "True", nil
	}); err != nil {
		t.Fatalf("routeui's namespace web not Ready: %v", err)
	}
	tnt, err := admin.Tenants().Get(ctx, tnt.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	domain := tnt.Status.RouteDomain
	if domain != "routeui."+stack.RouteDomain {
		t.Fatalf("routeui's route domain %q", domain)
	}

	host, err := dynamic.NewForConfig(s.RESTConfig(router))
	if err != nil {
		t.Fatal(err)
	}
	shop := "shop." + domain
	route := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"name": "shop", "namespace": hostNS},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": stack.GatewayName, "namespace": stack.GatewayNamespace, "sectionName": stack.GatewayListenerName}},
			"hostnames":  []any{shop},
			"rules":      []any{map[string]any{"backendRefs": []any{map[string]any{"name": "shop", "port": int64(80)}}}},
		},
	}}
	if _, err := host.Resource(tenantview.RouteKinds[0].Resource).Namespace(hostNS).Create(ctx, route, metav1.CreateOptions{}); err != nil {
		t.Fatalf("gia's HTTPRoute in %s: %v", hostNS, err)
	}
	// This package's stack runs no gateway (stack.Options.Gateway; the
	// plugin's tests run one): nothing writes the route's status, and the
	// page says so rather than guess.
	const accepted = "Unknown"

	w := openWindow(t, router)
	w.open("/routes")
	if got := w.text("#route-domain"); got != domain {
		t.Errorf("the Routes page's route domain %q, want %q", got, domain)
	}
	key := "web/shop/HTTPRoute"
	for col, want := range map[int]string{1: "web", 2: "shop", 3: "HTTPRoute", 4: shop, 5: accepted, 6: "shop"} {
		if got := w.eval2(cell("routes", key, col)); got != want {
			t.Errorf("the Routes page: column %d of %s is %q, want %q", col, key, got, want)
		}
	}
	if got := w.text("#routes-how"); !contains(got, "read-only", "kubectl") {
		t.Errorf("the Routes page does not say routes are written with kubectl: %q", got)
	}
	if got := w.text(`nav a[aria-current="page"]`); got != "Routes" {
		t.Errorf("the navigation's current entry %q, want Routes", got)
	}
	w.screenshot("routes")
	w.open("/overview")
	if got := w.text("#overview-route-domain"); got != domain {
		t.Errorf("the Overview's route domain %q, want %q", got, domain)
	}

	bob := openWindow(t, "bob")
	bob.open("/routes")
	if got := bob.text("#route-domain"); got != "globex."+stack.RouteDomain {
		t.Errorf("bob's route domain %q, want globex's", got)
	}
	mustNotContain(t, "bob's Routes page", bob.text("main"), shop, domain, hostNS)
	if got := bob.text("#routes-table tbody"); got != "No routes." {
		t.Errorf("bob's routes: %q, want none", got)
	}
}

// contains says whether s contains every want.
func contains(s string, wants ...string) bool {
	for _, w := range wants {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}
