package stack

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// The provider's gateway (artifacts/host-addons/gateway): the GatewayClass
// of Traefik's Gateway API provider and the one Gateway all tenants attach
// their HTTPRoutes to.
const (
	// GatewayNamespace holds the shared Gateway and Traefik's ServiceAccount.
	GatewayNamespace = "tenant-gateway"
	// GatewayName is the shared Gateway.
	GatewayName = "shared"
	// GatewayListenerName is the shared Gateway's HTTP listener.
	GatewayListenerName = "web"
	// GatewayClassName is the GatewayClass of Traefik's provider.
	GatewayClassName = "traefik"
	// GatewayControllerName is the controllerName Traefik's provider
	// answers to, and writes into the status of the routes it accepts.
	GatewayControllerName = "traefik.io/gateway-controller"
	// GatewayUser is the identity Traefik runs as on the host: the
	// ServiceAccount of artifacts/host-addons/gateway/rbac.yaml, bound to
	// the ClusterRole there.
	GatewayUser = "system:serviceaccount:" + GatewayNamespace + ":traefik"
)

var (
	gatewayClassesGVR = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}
	gatewaysGVR       = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}
)

// startGateway runs the provider's gateway: the endpoint stand-in, the
// manifests of artifacts/host-addons/gateway but Traefik's Deployment and
// Service (with the Gateway's listener on the port picked here), and
// Traefik as GatewayUser with only its Gateway API provider. It returns
// once Traefik has accepted the GatewayClass and programmed the Gateway.
func (s *Stack) startGateway(ctx context.Context) (*process, error) {
	t := time.Now()
	if s.endpointStandIn == nil {
		e, err := startEndpointStandIn(ClusterNetworkCIDR)
		if err != nil {
			return nil, fmt.Errorf("starting the endpoint stand-in: %w", err)
		}
		s.endpointStandIn = e
	}
	var err error
	if s.gatewayPort, err = freePort(); err != nil {
		return nil, err
	}
	pingPort, err := freePort()
	if err != nil {
		return nil, err
	}
	bundle, err := writeGatewayBundle(filepath.Join(s.opts.HostAddonDir, "gateway"), s.path("gateway.yaml"), s.gatewayPort)
	if err != nil {
		return nil, err
	}
	if err := s.applyFiles(ctx, []string{bundle}); err != nil {
		return nil, fmt.Errorf("applying the gateway manifests (%s): %w", bundle, err)
	}

	// Traefik reads its token from a file (it takes no kubeconfig).
	token := s.path("traefik.token")
	if err := os.WriteFile(token, []byte(s.user(GatewayUser).Token), 0o600); err != nil {
		return nil, err
	}
	ca := s.path("traefik-host-ca.crt")
	if err := os.WriteFile(ca, s.pki.serverCAPEM, 0o644); err != nil {
		return nil, err
	}
	s.gateway = &process{
		name: "traefik",
		path: s.bin("traefik"),
		args: append(gatewayArgs(s.gatewayPort, pingPort),
			"--providers.kubernetesGateway.endpoint="+s.KubeAPIServerURL(),
			"--providers.kubernetesGateway.token="+token,
			"--providers.kubernetesGateway.certAuthFilePath="+ca,
			// The Gateway's status address: where tests reach it.
			"--providers.kubernetesGateway.statusAddress.ip=127.0.0.1",
			// Its default, ERROR, would not say what it made of the routes.
			"--log.level=INFO",
			"--log.noColor=true",
		),
		// Backends are reached through the endpoint stand-in; the
		// host API (loopback) never goes through a proxy.
		env:     []string{"HTTP_PROXY=" + s.endpointStandIn.URL(), "HTTPS_PROXY=" + s.endpointStandIn.URL(), "NO_PROXY=127.0.0.1,localhost"},
		logPath: s.LogPath("traefik"),
	}
	if err := s.gateway.start(); err != nil {
		return s.gateway, err
	}
	ping := "http://127.0.0.1:" + strconv.Itoa(pingPort) + "/ping"
	_, dyn, err := s.Clients(AdminUser)
	if err != nil {
		return s.gateway, err
	}
	if err := s.gateway.waitReady(ctx, s.opts.StartTimeout, func(ctx context.Context) error {
		if _, err := httpGet(ctx, http.DefaultClient, ping, ""); err != nil {
			return err
		}
		if err := conditionTrue(ctx, dyn, gatewayClassesGVR, "", GatewayClassName, "Accepted"); err != nil {
			return err
		}
		return conditionTrue(ctx, dyn, gatewaysGVR, GatewayNamespace, GatewayName, "Programmed")
	}); err != nil {
		return s.gateway, err
	}
	s.logf("gateway (Traefik) ready on %s, endpoint stand-in on %s (%s)", s.GatewayURL(), s.endpointStandIn.URL(), time.Since(t).Round(100*time.Millisecond))
	return s.gateway, nil
}

// gatewayArgs are Traefik's flags but those that point it at the host: the
// flags of artifacts/host-addons/gateway/traefik.yaml, with the web
// entrypoint (the Gateway's listener) and the ping entrypoint on loopback.
func gatewayArgs(webPort, pingPort int) []string {
	return []string{
		"--global.checkNewVersion=false",
		"--global.sendAnonymousUsage=false",
		"--entryPoints.web.address=127.0.0.1:" + strconv.Itoa(webPort),
		"--entryPoints.traefik.address=127.0.0.1:" + strconv.Itoa(pingPort),
		"--ping=true",
		"--ping.entryPoint=traefik",
		"--providers.kubernetesGateway=true",
	}
}

// writeGatewayBundle writes the gateway manifests of dir that the stack
// applies into out, dependencies first: all but Traefik's Deployment and Service (Traefik runs
// as a local process), with every listener of the shared Gateway on port,
// the loopback port of Traefik's web entrypoint (Traefik serves a listener
// on the entrypoint whose address ends in the listener's port).
func writeGatewayBundle(dir, out string, port int) (string, error) {
	files, err := yamlFiles(dir)
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", fmt.Errorf("no gateway manifests in %s", dir)
	}
	all, err := readManifests(files)
	if err != nil {
		return "", err
	}
	sort.SliceStable(all, func(i, j int) bool { return kindOrder(all[i].meta.Kind) < kindOrder(all[j].meta.Kind) })
	var buf bytes.Buffer
	found := false
	for _, m := range all {
		raw := m.raw
		switch {
		case m.meta.Kind == "Deployment" || m.meta.Kind == "Service":
			continue
		case m.meta.Kind == "Gateway" && m.meta.Metadata.Name == GatewayName && m.meta.Metadata.Namespace == GatewayNamespace:
			if raw, err = setListenerPorts(raw, port); err != nil {
				return "", fmt.Errorf("%s: %w", m, err)
			}
			found = true
		}
		fmt.Fprintf(&buf, "---\n# from %s\n%s\n", m.source, bytes.TrimSpace(raw))
	}
	if !found {
		return "", fmt.Errorf("no Gateway %s/%s in %s", GatewayNamespace, GatewayName, dir)
	}
	return out, os.WriteFile(out, buf.Bytes(), 0o644)
}

// setListenerPorts sets the port of every listener of a Gateway manifest.
func setListenerPorts(raw []byte, port int) ([]byte, error) {
	var obj map[string]interface{}
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	listeners, _, err := unstructured.NestedSlice(obj, "spec", "listeners")
	if err != nil || len(listeners) == 0 {
		return nil, fmt.Errorf("no listeners (%v)", err)
	}
	for _, l := range listeners {
		l.(map[string]interface{})["port"] = int64(port)
	}
	if err := unstructured.SetNestedSlice(obj, listeners, "spec", "listeners"); err != nil {
		return nil, err
	}
	return yaml.Marshal(obj)
}

// conditionTrue returns nil when the object's status has the condition
// with status True, else an error with what it has.
func conditionTrue(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, namespace, name, condition string) error {
	obj, err := dyn.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		cond, _ := c.(map[string]interface{})
		if cond["type"] != condition {
			continue
		}
		if cond["status"] == "True" {
			return nil
		}
		return fmt.Errorf("%s %s %s=%v: %v: %v", gvr.Resource, name, condition, cond["status"], cond["reason"], cond["message"])
	}
	return fmt.Errorf("%s %s has no %s condition yet", gvr.Resource, name, condition)
}

// GatewayURL is the shared Gateway's HTTP listener, http://127.0.0.1:<port>;
// empty without Options.Gateway. Requests carry the route's hostname in
// their Host header.
func (s *Stack) GatewayURL() string {
	if s.gateway == nil {
		return ""
	}
	return "http://127.0.0.1:" + strconv.Itoa(s.gatewayPort)
}

// GatewayGet sends GET / to the shared Gateway's listener with Host:
// hostname (the name a route serves) and returns the status code and body.
func (s *Stack) GatewayGet(ctx context.Context, hostname string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.GatewayURL()+"/", nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = hostname
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// EndpointStandIn is the gateway's stand-in for pods' addresses (see
// EndpointStandIn); nil without Options.Gateway.
func (s *Stack) EndpointStandIn() *EndpointStandIn { return s.endpointStandIn }
