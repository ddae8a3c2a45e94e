package tenantview

import (
	"context"
	"errors"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// route is a Gateway API route of kind in host namespace ns.
func route(kind, ns, name string, spec, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func parent(name string, conds ...map[string]any) map[string]any {
	cs := make([]any, len(conds))
	for i, c := range conds {
		cs[i] = c
	}
	return map[string]any{"parentRef": map[string]any{"name": name}, "controllerName": "traefik.io/gateway-controller", "conditions": cs}
}

func cond(typ, status, reason string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason}
}

func TestRouteAccepted(t *testing.T) {
	for _, c := range []struct {
		name   string
		status map[string]any
		want   string
	}{
		{"no status", nil, "Unknown"},
		{"no parents", map[string]any{"parents": []any{}}, "Unknown"},
		{"accepted", map[string]any{"parents": []any{parent("shared", cond("Accepted", "True", "Accepted"), cond("ResolvedRefs", "True", "ResolvedRefs"))}}, "True"},
		{"refused", map[string]any{"parents": []any{parent("shared", cond("Accepted", "False", "NotAllowedByListeners"))}}, "False (NotAllowedByListeners)"},
		{"backend missing", map[string]any{"parents": []any{parent("shared", cond("Accepted", "True", "Accepted"), cond("ResolvedRefs", "False", "BackendNotFound"))}},
			"True, ResolvedRefs False (BackendNotFound)"},
		{"parent without conditions", map[string]any{"parents": []any{parent("shared")}}, "Unknown"},
		{"two parents", map[string]any{"parents": []any{parent("a", cond("Accepted", "True", "")), parent("b", cond("Accepted", "False", "NoMatchingParent"))}},
			"a: True; b: False (NoMatchingParent)"},
	} {
		if got := RouteAccepted(route("HTTPRoute", "h", "r", map[string]any{}, c.status)); got != c.want {
			t.Errorf("%s: RouteAccepted = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestRouteBackends(t *testing.T) {
	ref := func(kv ...string) any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	u := route("HTTPRoute", "acme-1a2b3c-dev", "web", map[string]any{"rules": []any{
		map[string]any{"backendRefs": []any{ref("name", "web"), ref("name", "web", "namespace", "acme-1a2b3c-dev"), ref("name", "api", "namespace", "acme-1a2b3c-prod")}},
		map[string]any{"backendRefs": []any{ref("name", "old", "namespace", "elsewhere"), ref("name", "svc", "group", "", "kind", "Service"),
			ref("name", "bucket", "group", "example.net", "kind", "Bucket")}},
		map[string]any{"filters": []any{}},
	}}, nil)
	got := NewRoute(u, "dev", map[string]string{"acme-1a2b3c-dev": "dev", "acme-1a2b3c-prod": "prod"})
	want := []string{"web", "prod/api", "elsewhere/old", "svc", "Bucket.example.net/bucket"}
	if !slices.Equal(got.Backends, want) {
		t.Errorf("backends %q, want %q", got.Backends, want)
	}
	if got.Hostnames == nil || len(got.Hostnames) != 0 || got.Kind != "HTTPRoute" || got.HostNamespace != "acme-1a2b3c-dev" {
		t.Errorf("route %+v", got)
	}
}

var routeListKinds = map[schema.GroupVersionResource]string{RouteKinds[0].Resource: "HTTPRouteList", RouteKinds[1].Resource: "GRPCRouteList"}

func TestRoutes(t *testing.T) {
	spec := func(host, backend string) map[string]any {
		return map[string]any{"hostnames": []any{host}, "rules": []any{map[string]any{"backendRefs": []any{map[string]any{"name": backend}}}}}
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), routeListKinds,
		route("HTTPRoute", "acme-1a2b3c-prod", "web", spec("www.acme.apps.example.net", "web"), nil),
		route("HTTPRoute", "acme-1a2b3c-dev", "web", spec("dev.acme.apps.example.net", "web"), nil),
		route("GRPCRoute", "acme-1a2b3c-dev", "api", spec("api.acme.apps.example.net", "api"), nil),
		route("HTTPRoute", "globex-4d5e6f-dev", "other", spec("globex.apps.example.net", "x"), nil),
	)
	nss := []NamespaceInfo{{Name: "prod", HostNamespace: "acme-1a2b3c-prod"}, {Name: "dev", HostNamespace: "acme-1a2b3c-dev"}, {Name: "new"}}
	got, err := Routes(context.Background(), client, nss, "")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range got {
		keys = append(keys, r.Namespace+"/"+r.Name+"/"+r.Kind+"/"+r.Hostnames[0]+"/"+r.Accepted)
	}
	want := []string{"dev/api/GRPCRoute/api.acme.apps.example.net/Unknown", "dev/web/HTTPRoute/dev.acme.apps.example.net/Unknown", "prod/web/HTTPRoute/www.acme.apps.example.net/Unknown"}
	if !slices.Equal(keys, want) {
		t.Errorf("routes %q, want %q", keys, want)
	}

	for _, only := range []string{"prod", "acme-1a2b3c-prod"} {
		got, err = Routes(context.Background(), client, nss, only)
		if err != nil || len(got) != 1 || got[0].Namespace != "prod" {
			t.Errorf("routes of %s only: %+v %v", only, got, err)
		}
	}
	if _, err := Routes(context.Background(), client, nss, "globex-4d5e6f-dev"); !apierrors.IsNotFound(err) {
		t.Errorf("routes of another tenant's host namespace: %v, want a 404", err)
	}
}

// TestRoutesWithoutGatewayAPI: a host that does not serve a route kind (the
// API's 404) has none of it; any other error is the caller's.
func TestRoutesWithoutGatewayAPI(t *testing.T) {
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), routeListKinds,
		route("HTTPRoute", "acme-1a2b3c-dev", "web", map[string]any{}, nil))
	lists := 0
	client.PrependReactor("list", "grpcroutes", func(clienttesting.Action) (bool, runtime.Object, error) {
		lists++
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "grpcroutes"}, "")
	})
	nss := []NamespaceInfo{{Name: "dev", HostNamespace: "acme-1a2b3c-dev"}, {Name: "prod", HostNamespace: "acme-1a2b3c-prod"}}
	got, err := Routes(context.Background(), client, nss, "")
	if err != nil || len(got) != 1 || got[0].Name != "web" {
		t.Errorf("routes without GRPCRoute: %+v %v", got, err)
	}
	if lists != 1 {
		t.Errorf("grpcroutes listed %d times, want once: a 404 is the host's, not the namespace's", lists)
	}

	client.PrependReactor("list", "httproutes", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "httproutes"}, "", errors.New("no"))
	})
	if _, err := Routes(context.Background(), client, nss, ""); !apierrors.IsForbidden(err) {
		t.Errorf("routes when the host refuses: %v, want its 403", err)
	}
}
