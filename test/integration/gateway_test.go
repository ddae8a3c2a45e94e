package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

var httpRoutesGVR = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}

// gatewayBackend is a loopback HTTP server published in a host namespace
// as a Service whose EndpointSlice points at a pod address that the
// stack's endpoint stand-in delivers to it.
type gatewayBackend struct {
	namespace, name string
	server          *httptest.Server
}

// startGatewayBackend starts a server answering "<answer> <Host>" and
// creates, in namespace, the Service name (port 80) and its EndpointSlice
// (pod address podIP, the server's port).
func startGatewayBackend(ctx context.Context, t *testing.T, client kubernetes.Interface, namespace, name, podIP, answer string) *gatewayBackend {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprintf(w, "%s %s", answer, r.Host)
	}))
	t.Cleanup(srv.Close)
	_, portStr, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)

	// No selector: nothing but the test writes its EndpointSlices.
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(int32(port)),
		}}},
	}
	if _, err := client.CoreV1().Services(namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Service %s/%s: %v", namespace, name, err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-standin", Namespace: namespace, Labels: map[string]string{
			discoveryv1.LabelServiceName: name,
			discoveryv1.LabelManagedBy:   "tenant-stack",
		}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{podIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(int32(port))}},
	}
	if _, err := client.DiscoveryV1().EndpointSlices(namespace).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating EndpointSlice %s/%s: %v", namespace, slice.Name, err)
	}
	return &gatewayBackend{namespace: namespace, name: name, server: srv}
}

// createGatewayNamespace creates a host namespace, with the tenant label
// when tenant is not empty, and deletes it at the end of the test.
func createGatewayNamespace(ctx context.Context, t *testing.T, client kubernetes.Interface, name, tenant string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if tenant != "" {
		ns.Labels = map[string]string{hostnames.TenantLabel: tenant}
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		err := client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", name, err)
		}
	})
}

// createHTTPRoute attaches an HTTPRoute for hostname, to the backend's
// Service, to the shared Gateway's listener.
func createHTTPRoute(ctx context.Context, t *testing.T, dyn dynamic.Interface, b *gatewayBackend, name, hostname string) {
	t.Helper()
	route := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "gateway.networking.k8s.io/v1",
		"kind":       "HTTPRoute",
		"metadata":   map[string]interface{}{"name": name, "namespace": b.namespace},
		"spec": map[string]interface{}{
			"parentRefs": []interface{}{map[string]interface{}{
				"group": "gateway.networking.k8s.io", "kind": "Gateway",
				"namespace": stack.GatewayNamespace, "name": stack.GatewayName, "sectionName": stack.GatewayListenerName,
			}},
			"hostnames": []interface{}{hostname},
			"rules": []interface{}{map[string]interface{}{
				"backendRefs": []interface{}{map[string]interface{}{"name": b.name, "port": int64(80)}},
			}},
		},
	}}
	if _, err := dyn.Resource(httpRoutesGVR).Namespace(b.namespace).Create(ctx, route, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating HTTPRoute %s/%s: %v", b.namespace, name, err)
	}
}

// routeCondition is the condition of type cond that the gateway's
// controller wrote for the shared Gateway into the route's status; nil
// when there is none yet.
func routeCondition(ctx context.Context, dyn dynamic.Interface, namespace, name, cond string) (map[string]interface{}, error) {
	route, err := dyn.Resource(httpRoutesGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	parents, _, _ := unstructured.NestedSlice(route.Object, "status", "parents")
	for _, p := range parents {
		parent, _ := p.(map[string]interface{})
		ref, _ := parent["parentRef"].(map[string]interface{})
		if parent["controllerName"] != stack.GatewayControllerName || ref["name"] != stack.GatewayName || ref["namespace"] != stack.GatewayNamespace {
			continue
		}
		conditions, _ := parent["conditions"].([]interface{})
		for _, c := range conditions {
			if c, _ := c.(map[string]interface{}); c["type"] == cond {
				return c, nil
			}
		}
	}
	return nil, nil
}

// waitRouteCondition waits until the route's condition cond has status
// and, when reason is not empty, reason.
func waitRouteCondition(ctx context.Context, t *testing.T, dyn dynamic.Interface, namespace, name, cond, status, reason string) {
	t.Helper()
	var last map[string]interface{}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		c, err := routeCondition(ctx, dyn, namespace, name, cond)
		if err != nil {
			return false, err
		}
		last = c
		return c != nil && c["status"] == status && (reason == "" || c["reason"] == reason), nil
	})
	if err != nil {
		t.Fatalf("HTTPRoute %s/%s: waiting for %s=%s %s: %v (last: %v)", namespace, name, cond, status, reason, err, last)
	}
}

// waitGatewayAnswer waits until the gateway answers hostname with 200 and
// a body that starts with want.
func waitGatewayAnswer(ctx context.Context, t *testing.T, s *stack.Stack, hostname, want string) string {
	t.Helper()
	var code int
	var body string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		code, body, err = s.GatewayGet(ctx, hostname)
		return err == nil && code == http.StatusOK && strings.HasPrefix(body, want), nil
	})
	if err != nil {
		t.Fatalf("GET %s with Host %s: want 200 %q, last %d %q: %v", s.GatewayURL(), hostname, want, code, body, err)
	}
	return body
}

// TestGatewayStandalone: the provider's gateway (Traefik, Options.Gateway)
// serves an HTTPRoute of a namespace labelled with a tenant, written by
// the admin, to a loopback backend through the endpoint stand-in, and
// reports it Accepted; the route of a namespace without the label is not
// accepted (NotAllowedByListeners) and gets no traffic.
func TestGatewayStandalone(t *testing.T) {
	s := framework.Current()
	ctx := framework.Context(t, 3*time.Minute)
	client, dyn, err := s.Clients(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	if s.GatewayURL() == "" {
		t.Fatal("the stack runs no gateway (Options.Gateway)")
	}

	createGatewayNamespace(ctx, t, client, "gw-tenant-x", "x")
	app := startGatewayBackend(ctx, t, client, "gw-tenant-x", "app", "10.128.0.10", "app of x")
	createHTTPRoute(ctx, t, dyn, app, "app", "app.example.test")
	waitRouteCondition(ctx, t, dyn, "gw-tenant-x", "app", "Accepted", "True", "")
	waitRouteCondition(ctx, t, dyn, "gw-tenant-x", "app", "ResolvedRefs", "True", "")
	if body := waitGatewayAnswer(ctx, t, s, "app.example.test", "app of x"); body != "app of x app.example.test" {
		t.Errorf("the backend saw the request for %q, want the route's hostname", body)
	}

	createGatewayNamespace(ctx, t, client, "gw-unlabelled", "")
	other := startGatewayBackend(ctx, t, client, "gw-unlabelled", "app", "10.128.0.11", "app of nobody")
	createHTTPRoute(ctx, t, dyn, other, "app", "other.example.test")
	waitRouteCondition(ctx, t, dyn, "gw-unlabelled", "app", "Accepted", "False", "NotAllowedByListeners")
	// Give Traefik the time to act on it, then check it routes nothing.
	time.Sleep(2 * time.Second)
	if code, body, err := s.GatewayGet(ctx, "other.example.test"); err != nil || code != http.StatusNotFound {
		t.Errorf("GET with Host other.example.test (route of an unlabelled namespace): %d %q %v, want 404", code, body, err)
	}
	// The accepted route still answers.
	waitGatewayAnswer(ctx, t, s, "app.example.test", "app of x")
}

// TestGatewayDuplicateHostname records what the gateway does with two
// routes of two tenants' namespaces for the same hostname and match:
// Traefik v3.5 accepts both, makes one router per route with the same
// priority (it ranks routers by the specificity of their match, not by
// age), and serves the hostname from one of them, whichever its
// configuration build puts first; the Gateway API's rule that the oldest
// route wins is not applied. Nothing at the gateway keeps a tenant from
// taking another's hostname: that is for admission (docs/routes.md).
func TestGatewayDuplicateHostname(t *testing.T) {
	s := framework.Current()
	ctx := framework.Context(t, 3*time.Minute)
	client, dyn, err := s.Clients(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	createGatewayNamespace(ctx, t, client, "gw-dup-first", "first")
	first := startGatewayBackend(ctx, t, client, "gw-dup-first", "app", "10.128.0.20", "first")
	createHTTPRoute(ctx, t, dyn, first, "app", "dup.example.test")
	waitRouteCondition(ctx, t, dyn, "gw-dup-first", "app", "Accepted", "True", "")
	waitGatewayAnswer(ctx, t, s, "dup.example.test", "first")

	time.Sleep(time.Second) // creation timestamps have a resolution of a second
	createGatewayNamespace(ctx, t, client, "gw-dup-second", "second")
	second := startGatewayBackend(ctx, t, client, "gw-dup-second", "app", "10.128.0.21", "second")
	createHTTPRoute(ctx, t, dyn, second, "app", "dup.example.test")
	waitRouteCondition(ctx, t, dyn, "gw-dup-second", "app", "Accepted", "True", "")
	if c, err := routeCondition(ctx, dyn, "gw-dup-first", "app", "Accepted"); err != nil || c == nil || c["status"] != "True" {
		t.Errorf("the first route after the second: Accepted %v (%v), want True", c, err)
	}
	// Each change Traefik sees rebuilds its routers: label the first
	// Service a few times and ask again after each rebuild.
	answers := map[string]int{}
	for i := range 8 {
		if _, err := client.CoreV1().Services("gw-dup-first").Patch(ctx, "app", types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"round":"`+strconv.Itoa(i)+`"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		code, body, err := s.GatewayGet(ctx, "dup.example.test")
		if err != nil || code != http.StatusOK {
			t.Fatalf("GET with Host dup.example.test: %d %q %v", code, body, err)
		}
		answers[strings.Fields(body)[0]]++
	}
	t.Logf("dup.example.test answered, after each of 8 rebuilds, by: %v (the route of \"first\" is the older)", answers)
}

// TestGatewayAddonApplies: the whole of artifacts/host-addons/gateway,
// Traefik's Deployment and Service included (which the stack does not
// apply: it runs Traefik itself), is accepted by the host as a cluster's
// would be, with kubectl's kustomize.
func TestGatewayAddonApplies(t *testing.T) {
	s := framework.Current()
	ctx := framework.Context(t, time.Minute)
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// --force-conflicts: the stack's Gateway has another listener port,
	// set by another field manager; a dry run changes nothing anyway.
	out, _, err := s.Kubectl(ctx, stack.AdminUser, "apply", "--server-side", "--force-conflicts", "--dry-run=server", "--field-manager=gateway-addon-check", "-k", filepath.Join(root, "artifacts", "host-addons", "gateway"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"deployment.apps/traefik", "service/traefik", "gateway.gateway.networking.k8s.io/shared"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply -k: no %s in\n%s", want, out)
		}
	}
}
