package tenantview

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	tenantclient "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned/typed/tenant/v1alpha1"
)

// RouteKind is a kind of Gateway API route a tenant writes in its host
// namespaces, and where the host serves it.
type RouteKind struct {
	Kind     string
	Resource schema.GroupVersionResource
}

// RouteKinds are the route kinds Routes lists: those the provider's
// gateway serves tenants (artifacts/deploy/base/82-route-policies.yaml).
var RouteKinds = []RouteKind{
	{Kind: "HTTPRoute", Resource: schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}},
	{Kind: "GRPCRoute", Resource: schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "grpcroutes"}},
}

// Route is an HTTPRoute or GRPCRoute of one of the tenant's namespaces, as
// `kubectl tenant routes` and the console's Routes page show it.
type Route struct {
	// Namespace is the tenant Namespace; HostNamespace the host namespace
	// the route lives in.
	Namespace     string   `json:"namespace"`
	HostNamespace string   `json:"hostNamespace"`
	Name          string   `json:"name"`
	Kind          string   `json:"kind"`
	Hostnames     []string `json:"hostnames"`
	// Accepted is what the gateway said of the route (RouteAccepted).
	Accepted string `json:"accepted"`
	// Backends are the Services the route sends requests to: a name, or
	// namespace/name for a Service of another namespace (by its tenant
	// Namespace name when it is one of the tenant's); another kind than
	// Service as Kind/name.
	Backends []string `json:"backends"`
	// Object is the route as the host returned it.
	Object *unstructured.Unstructured `json:"-"`
}

// Routes lists the HTTPRoutes and GRPCRoutes in the host namespaces of
// namespaces (all the tenant's, with their status.hostNamespace), or of
// the one Namespace only names when only is not empty (its name, or its
// host namespace's; a 404 when it is not one of namespaces), through
// client, a dynamic client of the host with the caller's credentials.
// They are ordered by Namespace, name and kind. A Namespace without a
// host namespace yet has none. A host without a route kind (no Gateway
// API, or an older one without GRPCRoute: the API's 404) has no routes of
// that kind; every other error is returned.
func Routes(ctx context.Context, client dynamic.Interface, namespaces []NamespaceInfo, only string) ([]Route, error) {
	tenantNames := map[string]string{}
	for _, ns := range namespaces {
		if ns.HostNamespace != "" {
			tenantNames[ns.HostNamespace] = ns.Name
		}
	}
	if only != "" {
		i := slices.IndexFunc(namespaces, func(n NamespaceInfo) bool { return n.Name == only })
		if i < 0 {
			i = slices.IndexFunc(namespaces, func(n NamespaceInfo) bool { return n.HostNamespace == only })
		}
		if i < 0 {
			return nil, apierrors.NewNotFound(tenantv1alpha1.Resource("namespaces"), only)
		}
		namespaces = namespaces[i : i+1]
	}
	out := []Route{}
	for _, rk := range RouteKinds {
		for _, ns := range namespaces {
			if ns.HostNamespace == "" {
				continue
			}
			list, err := client.Resource(rk.Resource).Namespace(ns.HostNamespace).List(ctx, metav1.ListOptions{})
			if apierrors.IsNotFound(err) {
				// The host serves no such kind: every namespace alike.
				break
			}
			if err != nil {
				return nil, fmt.Errorf("listing %s in the host namespace %s of namespace %s: %w", rk.Resource.Resource, ns.HostNamespace, ns.Name, err)
			}
			for i := range list.Items {
				out = append(out, NewRoute(&list.Items[i], ns.Name, tenantNames))
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Kind < b.Kind
	})
	return out, nil
}

// NewRoute is route u of tenant Namespace namespace; tenantNames maps the
// tenant's host namespaces to its Namespace names, for the backends.
func NewRoute(u *unstructured.Unstructured, namespace string, tenantNames map[string]string) Route {
	r := Route{Namespace: namespace, HostNamespace: u.GetNamespace(), Name: u.GetName(), Kind: u.GetKind(), Object: u}
	r.Hostnames, _, _ = unstructured.NestedStringSlice(u.Object, "spec", "hostnames")
	if r.Hostnames == nil {
		r.Hostnames = []string{}
	}
	r.Accepted = RouteAccepted(u)
	r.Backends = routeBackends(u, tenantNames)
	return r
}

// RouteAccepted is what the gateways that looked at route u
// (status.parents) said of it: "True", or "False (<reason>)", followed by
// ", ResolvedRefs False (<reason>)" when a backend is not usable; one
// entry per parent, named, when it has several. "Unknown" when no gateway
// has written status: the gateway does not run, or has not seen it yet.
func RouteAccepted(u *unstructured.Unstructured) string {
	parents, _, _ := unstructured.NestedSlice(u.Object, "status", "parents")
	var out []string
	for _, p := range parents {
		pm, ok := p.(map[string]any)
		if !ok {
			continue
		}
		conds, _, _ := unstructured.NestedSlice(pm, "conditions")
		s := conditionColumn(conds, "Accepted")
		if c := findCondition(conds, "ResolvedRefs"); c != nil && c["status"] == string(metav1.ConditionFalse) {
			s += ", ResolvedRefs " + conditionColumn(conds, "ResolvedRefs")
		}
		if len(parents) > 1 {
			name, _, _ := unstructured.NestedString(pm, "parentRef", "name")
			s = name + ": " + s
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return string(metav1.ConditionUnknown)
	}
	return strings.Join(out, "; ")
}

// conditionColumn is a condition of conds as a column: True, or
// False/Unknown with its reason; Unknown when there is none.
func conditionColumn(conds []any, typ string) string {
	c := findCondition(conds, typ)
	if c == nil {
		return string(metav1.ConditionUnknown)
	}
	status, _ := c["status"].(string)
	reason, _ := c["reason"].(string)
	if status == string(metav1.ConditionTrue) || reason == "" {
		return status
	}
	return status + " (" + reason + ")"
}

func findCondition(conds []any, typ string) map[string]any {
	for _, c := range conds {
		if cm, ok := c.(map[string]any); ok && cm["type"] == typ {
			return cm
		}
	}
	return nil
}

// routeBackends are the backends of every rule of route u, each once, in
// the order they first appear.
func routeBackends(u *unstructured.Unstructured, tenantNames map[string]string) []string {
	rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
	out := []string{}
	seen := map[string]bool{}
	for _, rule := range rules {
		rm, ok := rule.(map[string]any)
		if !ok {
			continue
		}
		refs, _, _ := unstructured.NestedSlice(rm, "backendRefs")
		for _, ref := range refs {
			m, ok := ref.(map[string]any)
			if !ok {
				continue
			}
			name, _, _ := unstructured.NestedString(m, "name")
			group, _, _ := unstructured.NestedString(m, "group")
			kind, _, _ := unstructured.NestedString(m, "kind")
			ns, _, _ := unstructured.NestedString(m, "namespace")
			b := name
			if ns != "" && ns != u.GetNamespace() {
				if t, ok := tenantNames[ns]; ok {
					ns = t
				}
				b = ns + "/" + name
			}
			if (group != "" && group != "core") || (kind != "" && kind != "Service") {
				if kind == "" {
					kind = "Service"
				}
				if group != "" && group != "core" {
					kind += "." + group
				}
				b = kind + "/" + b
			}
			if !seen[b] {
				seen[b] = true
				out = append(out, b)
			}
		}
	}
	return out
}

// TenantRoutes lists the routes of the caller's tenant through api (the
// tenant.io API, for its Namespaces) and client (the host), as Routes
// does.
func TenantRoutes(ctx context.Context, api tenantclient.TenantV1alpha1Interface, client dynamic.Interface, only string) ([]Route, error) {
	list, err := api.Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing namespaces: %w", err)
	}
	return Routes(ctx, client, NamespaceInfos(list.Items), only)
}
