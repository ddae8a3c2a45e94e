package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"
)

// LocalOptions are the options of the local stack `make run` starts: work
// dir <root>/_output/local (kept after exit for its logs, wiped on the next
// start) and kubeconfigs in <root>/_output/kubeconfigs.
func LocalOptions(repoRoot string) Options {
	return Options{
		RepoRoot:      repoRoot,
		WorkDir:       filepath.Join(repoRoot, "_output", "local"),
		KeepWorkDir:   true,
		KubeconfigDir: filepath.Join(repoRoot, "_output", "kubeconfigs"),
		Log:           os.Stderr,
		Console:       true,
		TenantDNS:     true,
		// The servers of the demo's HostClass: the baremetal-operator's
		// part is played by the stand-in (docs/baremetal.md).
		BareMetalStandIn: true,
	}
}

// RunLocal starts a stack, runs hook (e.g. Demo) on it, prints one line
// containing READY and a few lines of usage to out, and keeps the stack up
// until ctx is done; then it stops everything it started. A ctx cancelled
// during the start is not an error.
func RunLocal(ctx context.Context, out io.Writer, opts Options, hook func(context.Context, *Stack) error) (err error) {
	begin := time.Now()
	s, err := Start(ctx, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer func() {
		if stopErr := s.Stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
	}()
	if hook != nil {
		if err := hook(ctx, s); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("post-start hook: %w", err)
		}
	}

	kubectl, admin := relToCwd(s.KubectlPath()), relToCwd(s.KubeconfigPath(AdminUser))
	fmt.Fprintf(out, "READY: tenant-apiserver %s behind kube-apiserver %s (up in %s)\n",
		s.TenantAPIServerURL(), s.KubeAPIServerURL(), time.Since(begin).Round(100*time.Millisecond))
	fmt.Fprintf(out, "  provider admin:  %s --kubeconfig %s api-resources --api-group=tenant.io\n", kubectl, admin)
	fmt.Fprintf(out, "  tenant users:    --kubeconfig %s (acme), %s (globex), %s (no tenant)\n",
		relToCwd(s.KubeconfigPath("alice")), relToCwd(s.KubeconfigPath("bob")), relToCwd(s.KubeconfigPath("carol")))
	fmt.Fprintf(out, "  or:              export KUBECONFIG=%s; kubectl get apiservice %s\n", s.KubeconfigPath(AdminUser), TenantAPIServiceName)
	if addr := s.TenantDNSAddr(); addr != "" {
		host, port, _ := net.SplitHostPort(addr)
		fmt.Fprintf(out, "  tenant DNS:      dig @%s -p %s resolver.infra.svc.%s (the host's view; a Hard tenant's pods get their own names, docs/dns.md)\n", host, port, ClusterDomain)
	}
	if url := s.ConsoleURL(); url != "" {
		fmt.Fprintf(out, "  web console:     %s (certificate signed by %s)\n", url, relToCwd(s.ConsoleCAFile()))
		fmt.Fprintf(out, "    sign in with the token of alice, bob or admin, e.g.: %s --kubeconfig %s config view --raw -o jsonpath='{.users[0].user.token}'\n",
			kubectl, relToCwd(s.KubeconfigPath("alice")))
	}
	if dp := s.DataPath(); dp != nil {
		fmt.Fprintf(out, "  OVN data path:   zone %s; %s --db=%s show; %s --db=%s lflow-list; %s --db=%s <switch> '<flow>'\n",
			dp.Zone, relToCwd(filepath.Join(s.opts.BinDir, "ovn-nbctl")), dp.NB, relToCwd(filepath.Join(s.opts.BinDir, "ovn-sbctl")), dp.SB,
			relToCwd(filepath.Join(s.opts.BinDir, "ovn-trace")), dp.SB)
	}
	if err := printTenants(ctx, s, out); err != nil {
		return fmt.Errorf("listing the tenants: %w", err)
	}
	if s.opts.BareMetalStandIn {
		fmt.Fprintf(out, "  bare metal:      kubectl --kubeconfig %s get hostclasses; then apply artifacts/examples/hostclaim.yaml -n dev (servers of the stand-in, docs/baremetal.md)\n",
			relToCwd(s.KubeconfigPath("alice")))
	}
	if url := s.GatewayURL(); url != "" {
		fmt.Fprintf(out, "  HTTP routes:     HTTPRoutes on <tenant>.%s attached to %s/%s; curl -H 'Host: <hostname>' %s (docs/routes.md)\n",
			RouteDomain, GatewayNamespace, GatewayName, url)
	}
	fmt.Fprintf(out, "  logs:            %s/*.log\n", relToCwd(s.path("logs")))
	fmt.Fprintf(out, "  stop:            Ctrl-C (or SIGTERM) stops every process\n")

	<-ctx.Done()
	s.logf("stopping the local stack")
	return nil
}

// relToCwd shortens path to one relative to the working directory when it
// lies below it.
func relToCwd(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil || rel == ".." || len(rel) > 3 && rel[:3] == "../" {
		return path
	}
	return rel
}
