package stack

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// TenantDNSUser is the identity tenant-dns runs as on the host: the
// ServiceAccount of artifacts/deploy/base/90-tenant-dns.yaml, bound to the
// ClusterRole there.
const TenantDNSUser = "system:serviceaccount:" + TenantAPIServerNamespace + ":tenant-dns"

// ClusterDomain is the cluster DNS domain of the stack.
const ClusterDomain = "cluster.local"

// startTenantDNS runs tenant-dns (CoreDNS with the tenantdns plugin) on a
// loopback port, as TenantDNSUser, with a Corefile like the deployed one:
// tenantdns for the cluster domain, the reverse zones and the public zone
// (PublicDNSZone, tenant-apiserver's),
// then cache and forward to the stack's upstream when one is given
// (Options.DNSUpstream; nothing is ever sent off the machine).
func (s *Stack) startTenantDNS(ctx context.Context) (*process, error) {
	ports := make([]int, 4)
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	s.dnsPort, s.dnsMetricsPort = ports[0], ports[1]
	readyPort, healthPort := ports[2], ports[3]
	var b strings.Builder
	fmt.Fprintf(&b, ".:%d {\n    bind 127.0.0.1\n    errors\n", s.dnsPort)
	fmt.Fprintf(&b, "    health 127.0.0.1:%d\n    ready 127.0.0.1:%d\n    prometheus 127.0.0.1:%d\n", healthPort, readyPort, s.dnsMetricsPort)
	fmt.Fprintf(&b, "    tenantdns %s in-addr.arpa ip6.arpa {\n        kubeconfig %s\n", ClusterDomain, s.KubeconfigPath(TenantDNSUser))
	fmt.Fprintf(&b, "        public %s\n", PublicDNSZone)
	b.WriteString("    }\n")
	if s.opts.DNSUpstream != "" {
		fmt.Fprintf(&b, "    cache 30\n    forward . %s\n", s.opts.DNSUpstream)
	}
	b.WriteString("}\n")
	if s.opts.DNSBaseline {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		s.dnsBaselinePort = p
		fmt.Fprintf(&b, ".:%d {\n    bind 127.0.0.1\n    errors\n    kubernetes %s in-addr.arpa ip6.arpa {\n        kubeconfig %s\n    }\n}\n", p, ClusterDomain, s.KubeconfigPath(TenantDNSUser))
	}
	corefile := s.path("tenant-dns.Corefile")
	if err := os.WriteFile(corefile, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	s.tenantDNS.args = []string{"-conf", corefile}
	t := time.Now()
	if err := s.tenantDNS.start(); err != nil {
		return s.tenantDNS, err
	}
	url := "http://127.0.0.1:" + strconv.Itoa(readyPort) + "/ready"
	if err := s.tenantDNS.waitReady(ctx, s.opts.StartTimeout, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /ready: %s", resp.Status)
		}
		return nil
	}); err != nil {
		return s.tenantDNS, err
	}
	s.logf("tenant-dns ready on udp/tcp 127.0.0.1:%d, metrics on 127.0.0.1:%d (%s)", s.dnsPort, s.dnsMetricsPort, time.Since(t).Round(100*time.Millisecond))
	return s.tenantDNS, nil
}

// TenantDNSAddr is tenant-dns's address, "127.0.0.1:<port>"; empty when
// the stack runs none.
func (s *Stack) TenantDNSAddr() string {
	if s.tenantDNS == nil {
		return ""
	}
	return "127.0.0.1:" + strconv.Itoa(s.dnsPort)
}

// TenantDNSBaselineAddr is the address of the same tenant-dns process's
// second server, CoreDNS's kubernetes plugin answering the cluster's names
// as a cluster DNS does (Options.DNSBaseline); empty without it.
func (s *Stack) TenantDNSBaselineAddr() string {
	if s.tenantDNS == nil || s.dnsBaselinePort == 0 {
		return ""
	}
	return "127.0.0.1:" + strconv.Itoa(s.dnsBaselinePort)
}

// TenantDNSMetricsURL is tenant-dns's Prometheus endpoint.
func (s *Stack) TenantDNSMetricsURL() string {
	return "http://127.0.0.1:" + strconv.Itoa(s.dnsMetricsPort) + "/metrics"
}
