package stack

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEndpointStandIn: a connection through the stand-in to a pod address
// reaches the loopback server of its port, with the request as sent (its
// Host header the route's hostname); any other address, or a name, is
// refused without being dialled.
func TestEndpointStandIn(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "host="+r.Host+" path="+r.URL.Path)
	}))
	defer backend.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(backend.URL, "http://"))

	e, err := startEndpointStandIn(ClusterNetworkCIDR)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.stop(time.Second); err != nil {
			t.Error(err)
		}
	}()
	proxyURL, _ := url.Parse(e.URL())
	// As Traefik's transport: the proxy from the environment, which takes
	// socks5:// URLs.
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}

	for _, tc := range []struct {
		name, url, host string
		wantBody        string // "": refused
	}{
		{"pod address", "http://10.128.0.10:" + port + "/x", "app.example.test", "host=app.example.test path=/x"},
		{"another pod address", "http://10.131.255.254:" + port + "/", "", "host=10.131.255.254:" + port + " path=/"},
		{"outside the pod network", "http://10.132.0.1:" + port + "/", "", ""},
		{"loopback", "http://127.0.0.1:" + port + "/", "", ""},
		{"a name", "http://example.com:" + port + "/", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, tc.url, nil)
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := client.Do(req)
			if tc.wantBody == "" {
				if err == nil {
					_ = resp.Body.Close()
					t.Fatalf("GET %s through the stand-in: %s, want refused", tc.url, resp.Status)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(body) != tc.wantBody {
				t.Errorf("GET %s: %s %q, want 200 %q", tc.url, resp.Status, body, tc.wantBody)
			}
		})
	}
}

// TestWriteGatewayBundle: the stack applies the gateway add-on's manifests
// but Traefik's Deployment and Service, with the Gateway's listener on the
// stack's port.
func TestWriteGatewayBundle(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "gateway.yaml")
	if _, err := writeGatewayBundle(filepath.Join(root, "artifacts", "host-addons", "gateway"), out, 41234); err != nil {
		t.Fatal(err)
	}
	all, err := readManifests([]string{out})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, m := range all {
		kinds[m.meta.Kind]++
		if m.meta.Kind == "Gateway" {
			if !strings.Contains(string(m.raw), "port: "+strconv.Itoa(41234)) || strings.Contains(string(m.raw), "port: 8000") {
				t.Errorf("Gateway listener port not set to the stack's:\n%s", m.raw)
			}
		}
	}
	for _, kind := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "GatewayClass", "Gateway"} {
		if kinds[kind] != 1 {
			t.Errorf("%d %s in the bundle, want 1", kinds[kind], kind)
		}
	}
	for _, kind := range []string{"Deployment", "Service"} {
		if kinds[kind] != 0 {
			t.Errorf("%d %s in the bundle: the stack runs Traefik itself", kinds[kind], kind)
		}
	}
	// The Deployment runs the Traefik the stack builds, with the flags the
	// stack passes.
	deployment, err := os.ReadFile(filepath.Join(root, "artifacts", "host-addons", "gateway", "traefik.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile(filepath.Join(root, "hack", "tools", "traefik", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	version := regexp.MustCompile(`(?m)^require github.com/traefik/traefik/v3 (v\S+)$`).FindSubmatch(goMod)
	if version == nil {
		t.Fatal("hack/tools/traefik/go.mod requires no github.com/traefik/traefik/v3")
	}
	if image := "image: docker.io/library/traefik:" + string(version[1]) + "\n"; !strings.Contains(string(deployment), image) {
		t.Errorf("traefik.yaml's Deployment lacks %q: the version hack/tools/traefik builds", image)
	}
	for _, arg := range gatewayArgs(8000, 8080) {
		arg = strings.Replace(arg, "127.0.0.1:", ":", 1)
		if !strings.Contains(string(deployment), "- "+arg+"\n") {
			t.Errorf("traefik.yaml's Deployment lacks %s, which the stack passes", arg)
		}
	}
}
