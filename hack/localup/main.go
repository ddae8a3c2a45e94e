// Command localup runs the whole stack (etcd, kube-apiserver, MetalLB
// controller, tenant-apiserver, the web console) on loopback in the foreground, for
// `make run` / hack/local-up.sh. SIGINT or SIGTERM stops it all.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"tenant.io/tenant-apiserver/pkg/stack"
)

func main() {
	skipMetalLB := flag.Bool("skip-metallb", false, "do not run the MetalLB controller")
	skipOVNKube := flag.Bool("skip-ovnkube", false, "do not run OVN-Kubernetes' cluster-manager (nor create the simulated Nodes)")
	skipDataPath := flag.Bool("skip-data-path", false, "do not run the logical data path (OVN's databases, ovn-northd, ovnkube-controller)")
	skipBuild := flag.Bool("skip-build", false, "run _output/bin/tenant-apiserver and tenant-console as they are instead of building them")
	noConsole := flag.Bool("no-console", false, "do not run the web console")
	gateway := flag.Bool("gateway", false, "run the provider's gateway (Traefik, built by hack/local-up.sh on first use) for tenants' HTTP routes (docs/routes.md)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Stop with whoever started us (make, a shell): a SIGTERM to `make run`
	// reaches make only, and must not leave the stack behind.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0); errno != 0 {
		fmt.Fprintln(os.Stderr, "warning: cannot follow the parent process:", errno)
	}

	root, err := stack.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	opts := stack.LocalOptions(root)
	opts.SkipMetalLB = *skipMetalLB
	opts.SkipOVNKube = *skipOVNKube
	opts.SkipDataPath = *skipDataPath
	opts.SkipBuild = *skipBuild
	opts.Console = !*noConsole
	opts.Gateway = *gateway
	if err := stack.RunLocal(ctx, os.Stdout, opts, stack.Demo); err != nil {
		fmt.Fprintln(os.Stderr, "local stack:", err)
		os.Exit(1)
	}
}
