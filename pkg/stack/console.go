package stack

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// startConsole runs tenant-console over HTTPS in front of the host
// kube-apiserver, with sign-in by token (the stack's users' tokens).
func (s *Stack) startConsole(ctx context.Context) (*process, error) {
	var err error
	if s.consolePort, err = freePort(); err != nil {
		return nil, err
	}
	s.console.args = []string{
		"--bind-address=127.0.0.1",
		"--port=" + strconv.Itoa(s.consolePort),
		"--tls-cert-file=" + s.pki.ConsoleCert,
		"--tls-private-key-file=" + s.pki.ConsoleKey,
		"--server=" + s.KubeAPIServerURL(),
		"--certificate-authority=" + s.pki.ServerCA,
		"--v=2",
	}
	t := time.Now()
	if err := s.console.start(); err != nil {
		return s.console, err
	}
	client := s.ConsoleHTTPClient()
	if err := s.console.waitReady(ctx, s.opts.StartTimeout, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.ConsoleURL()+"/healthz", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /healthz: %s", resp.Status)
		}
		return nil
	}); err != nil {
		return s.console, err
	}
	s.logf("tenant-console ready on %s (%s)", s.ConsoleURL(), time.Since(t).Round(100*time.Millisecond))
	return s.console, nil
}

// ConsoleURL is the web console, https://127.0.0.1:<port>; empty when the
// stack runs none.
func (s *Stack) ConsoleURL() string {
	if s.console == nil {
		return ""
	}
	return fmt.Sprintf("https://127.0.0.1:%d", s.consolePort)
}

// ConsoleCAFile is the CA of the console's serving certificate.
func (s *Stack) ConsoleCAFile() string { return s.pki.ServerCA }

// ConsoleHTTPClient trusts the console's certificate and follows no
// redirects, so that callers see the console's own answers.
func (s *Stack) ConsoleHTTPClient() *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.pki.serverCAPEM)
	return &http.Client{
		Timeout:       30 * time.Second,
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Token is the bearer token of a stack user ("" for an unknown one).
func (s *Stack) Token(user string) string {
	for _, u := range s.users {
		if u.Name == user {
			return u.Token
		}
	}
	return ""
}
