package stack

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfigs writes one kubeconfig per user into dir: the host
// kube-apiserver's URL, its CA embedded, and the user's bearer token.
func writeKubeconfigs(dir, server string, caPEM []byte, users []User) error {
	for _, u := range users {
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["tenant-stack"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
		cfg.AuthInfos[u.Name] = &clientcmdapi.AuthInfo{Token: u.Token}
		cfg.Contexts[u.Name] = &clientcmdapi.Context{Cluster: "tenant-stack", AuthInfo: u.Name}
		cfg.CurrentContext = u.Name
		path := filepath.Join(dir, kubeconfigFileName(u.Name))
		if err := clientcmd.WriteToFile(*cfg, path); err != nil {
			return fmt.Errorf("writing kubeconfig of %s: %w", u.Name, err)
		}
	}
	return nil
}

// restConfig is the client configuration of a user against server.
func restConfig(server string, caPEM []byte, u User) *rest.Config {
	return &rest.Config{
		Host:            server,
		BearerToken:     u.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: caPEM},
		QPS:             100,
		Burst:           200,
	}
}

// DirectTenantConfig is a client configuration that talks to the stack's
// tenant-apiserver itself, bypassing the aggregator (it works while the host
// kube-apiserver is stopped), as the aggregator would forward a request of
// user: with the front-proxy client certificate and the user in the
// X-Remote-User and X-Remote-Group headers. Without groups, a stack user
// gets its own groups; every user is in system:authenticated, as on the
// host. The server still asks the host to authorize the request (it caches
// the answers for a while).
func (s *Stack) DirectTenantConfig(user string, groups ...string) *rest.Config {
	return s.directTenantConfig(s.TenantAPIServerURL(), user, groups)
}

// directTenantConfig is DirectTenantConfig for the tenant-apiserver at url.
func (s *Stack) directTenantConfig(url, user string, groups []string) *rest.Config {
	if len(groups) == 0 {
		groups = s.user(user).Groups
	}
	groups = slices.Clone(groups)
	if !slices.Contains(groups, "system:authenticated") {
		groups = append(groups, "system:authenticated")
	}
	return &rest.Config{
		Host: url,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: s.pki.tenantCAPEM,
			// The name the aggregator verifies (see registerTenantAPIServer).
			ServerName: TenantAPIServerServiceName + "." + TenantAPIServerNamespace + ".svc",
			CertFile:   s.pki.FrontProxyClientCert,
			KeyFile:    s.pki.FrontProxyClientKey,
		},
		QPS:   100,
		Burst: 200,
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
			return &requestHeaderRoundTripper{user: user, groups: groups, next: rt}
		},
	}
}

// requestHeaderRoundTripper sets the request-header authentication headers
// kube-apiserver is configured with (--requestheader-*-headers).
type requestHeaderRoundTripper struct {
	user   string
	groups []string
	next   http.RoundTripper
}

func (t *requestHeaderRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context()) // a RoundTripper must not modify the request
	req.Header.Set("X-Remote-User", t.user)
	req.Header.Del("X-Remote-Group")
	for _, g := range t.groups {
		req.Header.Add("X-Remote-Group", g)
	}
	return t.next.RoundTrip(req)
}

// WrappedRoundTripper lets client-go's debugging wrappers see through it.
func (t *requestHeaderRoundTripper) WrappedRoundTripper() http.RoundTripper { return t.next }

// TenantMetrics reads tenant-apiserver's own /metrics (the aggregator does
// not proxy it), as a member of system:masters.
func (s *Stack) TenantMetrics(ctx context.Context) (string, error) {
	client, err := rest.HTTPClientFor(s.DirectTenantConfig(AdminUser, "system:masters"))
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.TenantAPIServerURL()+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /metrics: %s: %.512s", resp.Status, body)
	}
	return string(body), nil
}
