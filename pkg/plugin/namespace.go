package plugin

import (
	"context"
	"fmt"
	"time"

	"tenant.io/tenant-apiserver/pkg/tenantview"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

const namespaceResource = "namespace.tenant.io"

func newNamespaceCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "ns",
		Aliases: []string{"namespace", "namespaces"},
		Short:   "Your namespaces, and using one with plain kubectl",
		Long: `Your tenant's namespaces. Each is a host namespace <tenant>-<hash6>-<name>
where its pods, VMs and disks run; "ns use NAME" makes it the current
context's namespace, so plain kubectl, oc and virtctl work there.`,
	}
	cmd.AddCommand(newNamespaceListCommand(o), newNamespaceCreateCommand(o), newNamespaceDeleteCommand(o),
		newNamespaceUseCommand(o), newNamespaceHostCommand(o))
	return cmd
}

func completeNamespaces(o *Options) cobra.CompletionFunc {
	return completeWith(o, func(ctx context.Context, sc *tenantScope) ([]string, error) {
		list, err := sc.api.Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return namesOf(list.Items), nil
	})
}

func newNamespaceListCommand(o *Options) *cobra.Command {
	return newListCommand(o, "list", "List your namespaces with their host namespaces", false, func(ctx context.Context, _ bool) (*listing, error) {
		sc, err := o.scope(ctx)
		if err != nil {
			return nil, err
		}
		list, err := sc.api.Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		l := &listing{kind: "Namespace", resource: namespaceResource,
			headers: []string{"NAME", "NETWORK", "HOST NAMESPACE", "PHASE", "READY", "AGE"}}
		for i := range list.Items {
			n := &list.Items[i]
			l.add(n, n.Name, []string{n.Name, n.Spec.Network, n.Status.HostNamespace, string(n.Status.Phase),
				tenantview.Ready(n.Status.Conditions), age(o.Now(), n.CreationTimestamp)})
		}
		return l, nil
	})
}

func newNamespaceCreateCommand(o *Options) *cobra.Command {
	var network string
	var noWait bool
	cmd := &cobra.Command{
		Use:   "create NAME [--network N]",
		Short: "Create a namespace and wait until pods can run in it",
		Long: `Creates the namespace and follows it until it is Ready: its host namespace
exists and OVN-Kubernetes has attached it to its network, so its pods start.
Each step is written to stderr as it is reached; --timeout ends the wait
with the step it stopped at (the namespace stays: delete it with ns delete).`,
		Example: `  kubectl tenant ns create dev
  kubectl tenant ns create web --network blue`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			sc, err := o.scope(ctx)
			if err != nil {
				return err
			}
			ns := &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: args[0]}, Spec: tenantv1alpha1.NamespaceSpec{Network: network}}
			created, err := sc.api.Namespaces().Create(ctx, ns, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			if noWait || o.Output != "" {
				return o.printObject(created, "Namespace", namespaceResource, created.Name, "created")
			}
			fmt.Fprintf(o.Out, "%s/%s created\n", namespaceResource, created.Name)
			ready, err := o.waitNamespaceReady(ctx, sc, created.Name)
			if err != nil {
				return err
			}
			fmt.Fprintf(o.Out, "namespace %s is ready: host namespace %s, attached to network %s: kubectl tenant ns use %s\n",
				ready.Name, ready.Status.HostNamespace, ready.Spec.Network, ready.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&network, "network", "", "The Network of the namespace's workloads (default: the tenant's network default)")
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "Return once the namespace is created, without waiting until it is Ready")
	return cmd
}

// waitNamespaceReady follows namespace name (--timeout) until it is Ready,
// writing each step it reaches (its host namespace made, its network
// attached) to stderr.
func (o *Options) waitNamespaceReady(ctx context.Context, sc *tenantScope, name string) (*tenantv1alpha1.Namespace, error) {
	ctx, cancel := o.withTimeout(ctx)
	defer cancel()
	var last *tenantv1alpha1.Namespace
	var said string
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ns, err := sc.api.Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = ns
		if line := namespaceProgress(ns); line != said && line != "" {
			fmt.Fprintf(o.ErrOut, "  %s\n", line)
			said = line
		}
		ready := tenantview.ConditionOf(ns.Status.Conditions, tenantv1alpha1.ConditionReady)
		return ready != nil && ready.Status == metav1.ConditionTrue, nil
	})
	if err != nil && last != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("namespace %s is not Ready after %s (phase %s, ready %s); it exists: kubectl tenant ns delete %s removes it",
			name, o.Timeout, orNone(string(last.Status.Phase)), readyMessage(last.Status.Conditions), name)
	}
	return last, err
}

// namespaceProgress is one line on the step a new Namespace has reached,
// empty until its host namespace is made.
func namespaceProgress(ns *tenantv1alpha1.Namespace) string {
	synced := tenantview.ConditionOf(ns.Status.Conditions, tenantv1alpha1.ConditionHostSynced)
	if synced == nil || synced.Status != metav1.ConditionTrue || ns.Status.HostNamespace == "" {
		return ""
	}
	attached := tenantview.ConditionOf(ns.Status.Conditions, tenantv1alpha1.ConditionNetworkAttached)
	if attached != nil && attached.Status == metav1.ConditionTrue {
		return "network " + ns.Spec.Network + " attached"
	}
	return "host namespace " + ns.Status.HostNamespace + " made; waiting for OVN-Kubernetes to attach network " + ns.Spec.Network
}

// readyMessage is the Ready condition as a sentence.
func readyMessage(conds []metav1.Condition) string {
	c := tenantview.ConditionOf(conds, "Ready")
	if c == nil {
		return "unknown"
	}
	if c.Message == "" {
		return string(c.Status) + " " + c.Reason
	}
	return fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
}

func newNamespaceDeleteCommand(o *Options) *cobra.Command {
	return newDeleteCommand(o, namespaceResource, "Delete a namespace (refused, with the blockers, while it holds workloads, disks or addresses)",
		completeNamespaces(o), func(ctx context.Context, sc *tenantScope, name string) error {
			return sc.api.Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
		})
}

// hostNamespace is the host namespace of tenant namespace name.
func (o *Options) hostNamespace(ctx context.Context, name string) (string, error) {
	sc, err := o.scope(ctx)
	if err != nil {
		return "", err
	}
	ns, err := sc.api.Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if ns.Status.HostNamespace == "" {
		return "", fmt.Errorf("namespace %s has no host namespace yet (phase %s); try again in a moment", name, orNone(string(ns.Status.Phase)))
	}
	return ns.Status.HostNamespace, nil
}

func newNamespaceUseCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "use NAME",
		Short: "Make a namespace's host namespace the current context's namespace",
		Long: `Sets the namespace of the current kubeconfig context (or --context) to the
host namespace of NAME, as kubens does: plain "kubectl get pods",
"oc get pods" and "virtctl console" then act there. kubectl tenant
commands keep taking NAME: they map the host namespace back.`,
		Example:           `  kubectl tenant ns use dev && kubectl get pods`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeNamespaces(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			host, err := o.hostNamespace(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			loader := o.ConfigFlags.ToRawKubeConfigLoader()
			raw, err := loader.RawConfig()
			if err != nil {
				return err
			}
			name := raw.CurrentContext
			if o.ConfigFlags.Context != nil && *o.ConfigFlags.Context != "" {
				name = *o.ConfigFlags.Context
			}
			kctx, ok := raw.Contexts[name]
			if !ok || kctx == nil {
				return fmt.Errorf("the kubeconfig has no context %q to set a namespace in", name)
			}
			kctx.Namespace = host
			if err := clientcmd.ModifyConfig(loader.ConfigAccess(), raw, true); err != nil {
				return fmt.Errorf("writing the kubeconfig: %w", err)
			}
			fmt.Fprintf(o.Out, "Context %q now uses namespace %s (host namespace %s).\n", name, args[0], host)
			return nil
		},
	}
}

func newNamespaceHostCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:               "host NAME",
		Short:             "Print the host namespace of a namespace (for scripts)",
		Example:           `  kubectl -n "$(kubectl tenant ns host dev)" get pods`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeNamespaces(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			host, err := o.hostNamespace(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintln(o.Out, host)
			return nil
		},
	}
}

// tenantNamespace is the tenant namespace a namespaced command acts in: -n,
// else the kubeconfig context's namespace. A host namespace of one of the
// tenant's namespaces (set by "ns use") maps back to that namespace.
func (o *Options) tenantNamespace(ctx context.Context, sc *tenantScope) (string, error) {
	ns, _, err := o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", err
	}
	list, err := sc.api.Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, n := range list.Items {
		if n.Name == ns {
			return ns, nil
		}
	}
	for _, n := range list.Items {
		if n.Status.HostNamespace == ns {
			return n.Name, nil
		}
	}
	return ns, nil
}
