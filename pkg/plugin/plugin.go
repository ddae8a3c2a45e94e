// Package plugin is kubectl-tenant, the kubectl (and oc) plugin of tenants
// and providers: `kubectl tenant info`, `ns use`, `fip attach`, `admin
// onboard`... Every command is a thin client of the tenant.io API through the
// generated clientset, with the caller's own credentials from the kubeconfig
// (cli-runtime's ConfigFlags: --kubeconfig, --context, --as, -n...).
package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"tenant.io/tenant-apiserver/pkg/adminclient"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	tenantclient "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned/typed/tenant/v1alpha1"
)

// Options are what every command shares: where the API is and who calls it,
// the output format, and the tenant to act in.
type Options struct {
	genericiooptions.IOStreams

	ConfigFlags *genericclioptions.ConfigFlags
	// Output is -o: "" (human), json, yaml, wide or name.
	Output string
	// Tenant is --tenant: the tenant to act in. Empty: the caller's own (its
	// only tenant). A provider admin naming another tenant acts in it by
	// impersonating its host group.
	Tenant string
	// Timeout bounds the commands that wait (onboard, ns create, offboard
	// --wait).
	Timeout time.Duration

	// Now is the clock of age columns; tests may fix it.
	Now func() time.Time

	// session is the caller, resolved once per command run.
	session *session
}

// NewCommand returns the kubectl-tenant root command.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{
		IOStreams:   streams,
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		Timeout:     2 * time.Minute,
		Now:         time.Now,
	}
	cmd := &cobra.Command{
		Use:   "kubectl-tenant",
		Short: "Your tenancy of the cluster: addresses, namespaces, networks, floating IPs, load balancers, bare-metal hosts",
		Long: `kubectl tenant is the command line of a tenant.io tenancy.

Tenants: "info" shows what your tenancy holds (private block, public IPs and
who uses them, quota, networks, namespaces); "ns use dev" points your
kubeconfig at the host namespace of your namespace dev, so plain
"kubectl get pods" works there; "fip" and "lb" give workloads public
addresses; "routes" lists the HTTP routes published on the provider's
gateway; "host" claims bare-metal servers of the classes the provider
offers; "offboarding" says what still blocks deleting the tenancy.

Providers: "admin onboard", "admin tenants", "admin pools", "admin offboard".

It works as "oc tenant" too. Every request goes with your own credentials.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// The name kubectl shows is "kubectl tenant".
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl tenant"},
	}
	flags := cmd.PersistentFlags()
	o.ConfigFlags.AddFlags(flags)
	flags.StringVarP(&o.Output, "output", "o", "", "Output format: json, yaml, wide or name (lists); json or yaml (info, whoami, offboarding)")
	flags.StringVar(&o.Tenant, "tenant", "", "The tenant to act in (default: your own). Providers name any tenant and act in it by impersonation.")
	flags.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long commands that wait (admin onboard, ns create, admin offboard --wait) wait")
	cmd.PersistentPreRunE = func(*cobra.Command, []string) error {
		switch o.Output {
		case "", "json", "yaml", "wide", "name":
			return nil
		}
		return fmt.Errorf("--output %q: must be one of json, yaml, wide, name", o.Output)
	}

	cmd.AddCommand(
		newWhoamiCommand(o),
		newInfoCommand(o),
		newNamespaceCommand(o),
		newNetworkCommand(o),
		newFloatingIPCommand(o),
		newLoadBalancerCommand(o),
		newHostCommand(o),
		newRoutesCommand(o),
		newOffboardingCommand(o),
		newAdminCommand(o),
	)
	return cmd
}

// ExitError ends the command with an exit status after its output is
// written (offboarding: 2 when something blocks).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Run executes the command and returns the process's exit status, having
// printed any error as kubectl does.
func Run(cmd *cobra.Command, errOut io.Writer) int {
	err := cmd.Execute()
	if err == nil {
		return 0
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		if exit.Err != nil {
			PrintError(errOut, exit.Err)
		}
		return exit.Code
	}
	PrintError(errOut, err)
	return 1
}

// restConfig is the caller's client configuration, unthrottled enough for
// the handful of requests a command makes.
func (o *Options) restConfig() (*rest.Config, error) {
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = "kubectl-tenant/" + rest.DefaultKubernetesUserAgent()
	return cfg, nil
}

// clients are the typed clients of one identity.
type clients struct {
	api  tenantclient.TenantV1alpha1Interface
	kube kubernetes.Interface
	// views reads admin.tenant.io, the provider's views of every tenant.
	views *adminclient.Client
	// dynamic reads the host's kinds this module has no types of: the
	// Gateway API routes of the tenant's host namespaces.
	dynamic dynamic.Interface
}

func newClients(cfg *rest.Config) (*clients, error) {
	tc, err := clientset.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	views, err := adminclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &clients{api: tc.TenantV1alpha1(), kube: kc, views: views, dynamic: dc}, nil
}

// withTimeout bounds a waiting command by --timeout.
func (o *Options) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, o.Timeout)
}
