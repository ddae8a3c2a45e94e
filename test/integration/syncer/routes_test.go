package syncer

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// Messages of the route policies (artifacts/deploy/base/82-route-policies.yaml).
const (
	msgRouteForeign     = "is not a name of this tenant: a route may name"
	msgRouteNoHostnames = "spec.hostnames must list the names the route serves"
	msgRouteParent      = "routes in tenant namespaces attach to the provider's Gateways only"
	msgGatewayKinds     = "in tenant namespaces are the provider's"
	msgReferenceGrant   = "a ReferenceGrant in a tenant namespace may let in the tenant's own namespaces only"
)

// TestRoutes publishes an HTTP service of one tenant (the victim) on a
// hostname of its route domain through the stack's gateway, then tries,
// as a member of another tenant, every way to take, shadow or share that
// hostname: its exact name, wildcards over it, the provider's domain, no
// hostname at all, capitals and a trailing dot, an update of an admitted
// route, a GRPCRoute, a route attached to something other than a
// Gateway, a Gateway of its own, its namespace's route domains, and
// ReferenceGrants across tenants. Each is refused with the reason, and the victim's
// hostname serves the victim's backend throughout; the attacker's own
// hostname serves the attacker's.
func TestRoutes(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	env := onboardSecurityEnv(ctx, t, routeUser, routeOverGrantedUser, routeVictimUser)
	attacker, overGranted, own, foreign := env.attacker, env.overGranted, env.own, env.foreign
	victimDomain, ownDomain := env.victim.Status.RouteDomain, env.tenant.Status.RouteDomain

	t.Run("RouteDomains", func(t *testing.T) {
		for _, c := range []struct{ tenant, got, ns string }{{env.victim.Name, victimDomain, foreign}, {env.tenant.Name, ownDomain, own}} {
			want := c.tenant + "." + stack.RouteDomain
			if c.got != want {
				t.Errorf("Tenant %s: status.routeDomain %q, want %q", c.tenant, c.got, want)
			}
			host, _ := hostClients(t)
			eventually(ctx, t, syncTimeout, "route domain annotation of "+c.ns, func(ctx context.Context) (bool, string) {
				ns, err := host.CoreV1().Namespaces().Get(ctx, c.ns, metav1.GetOptions{})
				if err != nil {
					return false, err.Error()
				}
				got := ns.Annotations[hostnames.RouteDomainsAnnotation]
				return got == want, fmt.Sprintf("%s=%q", hostnames.RouteDomainsAnnotation, got)
			})
		}
	})

	victimHost := "shop." + victimDomain
	victimBackend := newRouteBackend(ctx, t, foreign, "shop", "victim's shop")
	victimRoute := httpRoute(foreign, "shop", []string{victimHost}, "shop", "")
	admitted(ctx, t, routeVictimUser, victimRoute)
	waitRouteAccepted(ctx, t, foreign, "shop")
	expectServed(ctx, t, victimHost, victimBackend.body)

	t.Run("TakeExactHostname", func(t *testing.T) {
		refused(ctx, t, attacker, httpRoute(own, "steal", []string{victimHost}, "web", ""), msgRouteForeign, victimHost)
	})
	t.Run("TakeRouteDomain", func(t *testing.T) {
		refused(ctx, t, attacker, httpRoute(own, "steal-domain", []string{victimDomain}, "web", ""), msgRouteForeign, victimDomain)
	})
	t.Run("Wildcards", func(t *testing.T) {
		for i, h := range []string{"*." + victimDomain, "*." + stack.RouteDomain, "*.example.net", "*.shop." + victimDomain} {
			refused(ctx, t, attacker, httpRoute(own, fmt.Sprintf("wild-%d", i), []string{h}, "web", ""), msgRouteForeign, h)
		}
	})
	t.Run("LookAlikeSuffix", func(t *testing.T) {
		// A name that ends like the attacker's domain without the dot
		// before it is not below it.
		h := "x" + ownDomain
		refused(ctx, t, attacker, httpRoute(own, "look-alike", []string{h}, "web", ""), msgRouteForeign, h)
		// One foreign name among the tenant's own is enough.
		refused(ctx, t, attacker, httpRoute(own, "mixed", []string{"web." + ownDomain, victimHost}, "web", ""), msgRouteForeign, victimHost)
	})
	t.Run("NoHostnames", func(t *testing.T) {
		refused(ctx, t, attacker, httpRoute(own, "catch-all", nil, "web", ""), msgRouteNoHostnames, ownDomain)
	})
	t.Run("CaseAndTrailingDot", func(t *testing.T) {
		// Gateway API's schema takes hostnames in lower case without a
		// trailing dot: the host refuses the rest as invalid before any
		// policy runs.
		for i, h := range []string{strings.ToUpper(victimHost), victimHost + ".", "Shop." + victimDomain} {
			invalidCommand(ctx, t, attacker, []string{"create", "-f", writeJSON(t, httpRoute(own, fmt.Sprintf("case-%d", i), []string{h}, "web", ""))}, "spec.hostnames[0]", "should match")
		}
	})
	t.Run("UpdateToForeignHostname", func(t *testing.T) {
		admitted(ctx, t, attacker, httpRoute(own, "later", []string{"later." + ownDomain}, "web", ""))
		refusedCommand(ctx, t, attacker, []string{"-n", own, "patch", "httproute", "later", "--type=merge",
			"-p", `{"spec":{"hostnames":["` + victimHost + `"]}}`}, msgRouteForeign, victimHost)
	})
	t.Run("GRPCRoute", func(t *testing.T) {
		r := httpRoute(own, "grpc-steal", []string{victimHost}, "web", "")
		r.SetKind("GRPCRoute")
		unstructured.RemoveNestedField(r.Object, "spec", "rules")
		refused(ctx, t, attacker, r, msgRouteForeign, victimHost)
	})
	t.Run("ParentNotAGateway", func(t *testing.T) {
		r := httpRoute(own, "mesh", []string{"mesh." + ownDomain}, "web", "")
		_ = unstructured.SetNestedSlice(r.Object, []interface{}{map[string]interface{}{
			"group": "", "kind": "Service", "name": "shop", "namespace": foreign,
		}}, "spec", "parentRefs")
		refused(ctx, t, attacker, r, msgRouteParent)
	})
	t.Run("OwnGateway", func(t *testing.T) {
		gw := gateway(own, "mine", victimHost)
		// A member's roles grant no Gateways; a member given more RBAC
		// than the product gives meets the guard policy.
		refused(ctx, t, attacker, gw, msgRBAC)
		refused(ctx, t, overGranted, gw, msgGatewayKinds)
	})
	t.Run("WidenOwnDomain", func(t *testing.T) {
		// The domains the policy reads are an annotation of the namespace.
		args := []string{"annotate", "namespace", own, "--overwrite", hostnames.RouteDomainsAnnotation + "=" + ownDomain + "," + victimDomain}
		refusedCommand(ctx, t, attacker, args, msgRBAC)
		refusedCommand(ctx, t, overGranted, args, msgNamespaceLabel)
	})
	t.Run("ReferenceGrantAcrossTenants", func(t *testing.T) {
		// A grant in the attacker's namespace to the victim's namespace,
		// and one in the victim's namespace, which RBAC does not allow.
		refused(ctx, t, attacker, referenceGrant(own, "to-victim", foreign), msgReferenceGrant, foreign)
		refused(ctx, t, attacker, referenceGrant(foreign, "into-victim", own), msgRBAC)
		admitted(ctx, t, attacker, referenceGrant(own, "own", own))
	})

	// The attacker's own hostname works, and a backend in the victim's
	// namespace is not reached from it: without a ReferenceGrant there
	// the gateway refuses the reference.
	attackerBackend := newRouteBackend(ctx, t, own, "web", "attacker's web")
	admitted(ctx, t, attacker, httpRoute(own, "web", []string{"web." + ownDomain}, "web", ""))
	waitRouteAccepted(ctx, t, own, "web")
	expectServed(ctx, t, "web."+ownDomain, attackerBackend.body)
	t.Run("BackendInOtherTenant", func(t *testing.T) {
		admitted(ctx, t, attacker, httpRoute(own, "borrow", []string{"borrow." + ownDomain}, "shop", foreign))
		waitRouteCondition(ctx, t, own, "borrow", "ResolvedRefs", "False", "RefNotPermitted")
		expectNotServed(ctx, t, "borrow."+ownDomain, victimBackend.body)
	})

	// After every attempt the victim's hostname still serves the victim.
	expectServed(ctx, t, victimHost, victimBackend.body)
}

// httpRoute is an HTTPRoute in ns attached to the stack's shared Gateway,
// sending every request for hostnames to Service backend (port 80) of
// backendNamespace ("" for ns).
func httpRoute(ns, name string, hostnames []string, backend, backendNamespace string) *unstructured.Unstructured {
	ref := map[string]interface{}{"name": backend, "port": int64(80)}
	if backendNamespace != "" {
		ref["namespace"] = backendNamespace
	}
	spec := map[string]interface{}{
		"parentRefs": []interface{}{map[string]interface{}{"name": stack.GatewayName, "namespace": stack.GatewayNamespace}},
		"rules":      []interface{}{map[string]interface{}{"backendRefs": []interface{}{ref}}},
	}
	if hostnames != nil {
		hs := make([]interface{}, len(hostnames))
		for i, h := range hostnames {
			hs[i] = h
		}
		spec["hostnames"] = hs
	}
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "gateway.networking.k8s.io/v1",
		"kind":       "HTTPRoute",
		"metadata":   map[string]interface{}{"name": name, "namespace": ns},
		"spec":       spec,
	}}
}

// gateway is a Gateway in ns of the stack's GatewayClass with one HTTP
// listener for hostname.
func gateway(ns, name, hostname string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "gateway.networking.k8s.io/v1",
		"kind":       "Gateway",
		"metadata":   map[string]interface{}{"name": name, "namespace": ns},
		"spec": map[string]interface{}{
			"gatewayClassName": stack.GatewayClassName,
			"listeners": []interface{}{map[string]interface{}{
				"name": "http", "protocol": "HTTP", "port": int64(80), "hostname": hostname,
			}},
		},
	}}
}

// referenceGrant is a ReferenceGrant in ns letting HTTPRoutes of from use
// the Services of ns.
func referenceGrant(ns, name, from string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "gateway.networking.k8s.io/v1beta1",
		"kind":       "ReferenceGrant",
		"metadata":   map[string]interface{}{"name": name, "namespace": ns},
		"spec": map[string]interface{}{
			"from": []interface{}{map[string]interface{}{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": from}},
			"to":   []interface{}{map[string]interface{}{"group": "", "kind": "Service"}},
		},
	}}
}

// invalidCommand runs kubectl args as user and fails the test unless the
// host refuses it as invalid (422) with a message containing every want.
func invalidCommand(ctx context.Context, t *testing.T, user string, args []string, wants ...string) {
	t.Helper()
	_, stderr, err := theStack().Kubectl(ctx, user, args...)
	if err == nil {
		t.Fatalf("%s: kubectl %s was accepted, want it refused as invalid", user, strings.Join(args, " "))
	}
	if !strings.Contains(stderr, "is invalid") {
		t.Fatalf("%s: kubectl %s: want 422 Invalid, got: %s", user, strings.Join(args, " "), stderr)
	}
	for _, w := range wants {
		if !strings.Contains(stderr, w) {
			t.Errorf("%s: kubectl %s: refusal %q does not say %q", user, strings.Join(args, " "), strings.TrimSpace(stderr), w)
		}
	}
}

// routeBackend is an HTTP server on loopback that answers every request
// with body, published as Service name (port 80) of host namespace ns.
type routeBackend struct {
	body string
}

// newRouteBackend starts a backend answering body and publishes it as
// Service name in ns, with an EndpointSlice that the test writes as
// kube-controller-manager's endpoint controller would for a pod: its
// address is one of the pod network, which the stack's endpoint stand-in
// connects to the loopback server (stack.EndpointStandIn).
func newRouteBackend(ctx context.Context, t *testing.T, ns, name, body string) *routeBackend {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	host, _ := hostClients(t)
	svc := service(ns, name, func(s *corev1.Service) {
		s.Spec.Selector = nil
		s.Spec.Ports[0].TargetPort = intstr.FromInt32(int32(port))
	})
	if _, err := host.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ready := true
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name + "-standin", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			// An address of the pod network; the stand-in dials the port on loopback.
			Addresses:  []string{"10.128.0.10"},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
		}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if _, err := host.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return &routeBackend{body: body}
}

var httpRoutesGVR = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}

// waitRouteAccepted waits until the gateway has accepted HTTPRoute name of
// ns on the shared Gateway and resolved its backends.
func waitRouteAccepted(ctx context.Context, t *testing.T, ns, name string) {
	t.Helper()
	waitRouteCondition(ctx, t, ns, name, "Accepted", "True", "Accepted")
	waitRouteCondition(ctx, t, ns, name, "ResolvedRefs", "True", "ResolvedRefs")
}

// waitRouteCondition waits until the gateway's controller reports
// condition of HTTPRoute name of ns, for the shared Gateway, with status
// and reason.
func waitRouteCondition(ctx context.Context, t *testing.T, ns, name, condition, status, reason string) {
	t.Helper()
	_, dyn := hostClients(t)
	eventually(ctx, t, syncTimeout, fmt.Sprintf("HTTPRoute %s/%s %s=%s (%s)", ns, name, condition, status, reason), func(ctx context.Context) (bool, string) {
		r, err := dyn.Resource(httpRoutesGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		parents, _, _ := unstructured.NestedSlice(r.Object, "status", "parents")
		for _, p := range parents {
			parent, _ := p.(map[string]interface{})
			if parent["controllerName"] != stack.GatewayControllerName {
				continue
			}
			conditions, _, _ := unstructured.NestedSlice(parent, "conditions")
			for _, c := range conditions {
				cond, _ := c.(map[string]interface{})
				if cond["type"] == condition {
					return cond["status"] == status && cond["reason"] == reason, fmt.Sprintf("%s=%v (%v): %v", condition, cond["status"], cond["reason"], cond["message"])
				}
			}
		}
		return false, fmt.Sprintf("no %s condition from %s in %v", condition, stack.GatewayControllerName, parents)
	})
}

// expectServed waits until the gateway answers hostname with body: a
// route just accepted may take Traefik a moment to load.
func expectServed(ctx context.Context, t *testing.T, hostname, body string) {
	t.Helper()
	eventually(ctx, t, syncTimeout, hostname+" served by the gateway", func(ctx context.Context) (bool, string) {
		code, got, err := theStack().GatewayGet(ctx, hostname)
		if err != nil {
			return false, err.Error()
		}
		return code == http.StatusOK && got == body, fmt.Sprintf("%d %q", code, got)
	})
}

// expectNotServed checks that the gateway does not answer hostname with body.
func expectNotServed(ctx context.Context, t *testing.T, hostname, body string) {
	t.Helper()
	code, got, err := theStack().GatewayGet(ctx, hostname)
	if err != nil {
		t.Fatal(err)
	}
	if got == body {
		t.Errorf("%s: the gateway answered %d %q, the other tenant's backend", hostname, code, got)
	}
}
