package plugin

import (
	"context"
	"fmt"
	"time"

	"tenant.io/tenant-apiserver/pkg/tenantview"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

const floatingIPResource = "floatingip.tenant.io"

func newFloatingIPCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "fip",
		Aliases: []string{"floatingip", "floatingips"},
		Short:   "Floating IPs: a public address bound 1:1 to a VM or pod",
		Long: `Floating IPs live in one of your namespaces (-n, or the namespace "ns use"
chose). A floating IP holds one of your public IPs; attached to a VM or
pod it forwards the given ports to it, and the workload's own traffic
leaves from that address.`,
	}
	cmd.AddCommand(newFloatingIPListCommand(o), newFloatingIPCreateCommand(o), newFloatingIPAttachCommand(o),
		newFloatingIPDetachCommand(o), newFloatingIPDeleteCommand(o))
	return cmd
}

func completeFloatingIPs(o *Options) cobra.CompletionFunc {
	return completeWith(o, func(ctx context.Context, sc *tenantScope) ([]string, error) {
		ns, err := o.tenantNamespace(ctx, sc)
		if err != nil {
			return nil, err
		}
		list, err := sc.api.FloatingIPs(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return namesOf(list.Items), nil
	})
}

func newFloatingIPListCommand(o *Options) *cobra.Command {
	return newListCommand(o, "list", "List floating IPs", true, func(ctx context.Context, all bool) (*listing, error) {
		sc, ns, err := o.namespaced(ctx, all)
		if err != nil {
			return nil, err
		}
		list, err := sc.api.FloatingIPs(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		l := &listing{kind: "FloatingIP", resource: floatingIPResource, all: all,
			headers: []string{"NAME", "ADDRESS", "TARGET", "PORTS", "PHASE", "AGE"}, wide: []string{"READY", "DNS NAME"}}
		for i := range list.Items {
			f := &list.Items[i]
			l.add(f, f.Name, []string{f.Name, f.Status.Address, tenantview.Target(f.Spec.Target), tenantview.FIPPorts(f.Spec.Ports), string(f.Status.Phase), age(o.Now(), f.CreationTimestamp)},
				tenantview.Ready(f.Status.Conditions), f.Status.DNSName)
		}
		return l, nil
	})
}

// targetFlags are --pod, --vm and --port of create and attach.
type targetFlags struct {
	pod, vm string
	ports   []string
}

func (f *targetFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.pod, "pod", "", "Bind to this pod")
	cmd.Flags().StringVar(&f.vm, "vm", "", "Bind to this VirtualMachine")
	cmd.Flags().StringSliceVar(&f.ports, "port", nil, "An inbound port to forward, PORT[/tcp|udp|sctp] (repeatable)")
}

// target is the FloatingIP target and ports the flags name (nil target:
// none given).
func (f *targetFlags) target() (*tenantv1alpha1.FloatingIPTarget, []tenantv1alpha1.FloatingIPPort, error) {
	var t *tenantv1alpha1.FloatingIPTarget
	switch {
	case f.pod != "" && f.vm != "":
		return nil, nil, fmt.Errorf("--pod and --vm: give one")
	case f.pod != "":
		t = &tenantv1alpha1.FloatingIPTarget{Kind: tenantv1alpha1.FloatingIPTargetPod, Name: f.pod}
	case f.vm != "":
		t = &tenantv1alpha1.FloatingIPTarget{Kind: tenantv1alpha1.FloatingIPTargetVirtualMachine, Name: f.vm}
	}
	var ports []tenantv1alpha1.FloatingIPPort
	for _, s := range f.ports {
		port, proto, err := tenantview.ParsePort(s)
		if err != nil {
			return nil, nil, fmt.Errorf("--port %q: %w", s, err)
		}
		ports = append(ports, tenantv1alpha1.FloatingIPPort{Port: port, Protocol: proto})
	}
	if t == nil && len(ports) > 0 {
		return nil, nil, fmt.Errorf("--port needs --pod or --vm")
	}
	return t, ports, nil
}

// parsePort parses PORT[/PROTOCOL].
func newFloatingIPCreateCommand(o *Options) *cobra.Command {
	var address string
	var tf targetFlags
	cmd := &cobra.Command{
		Use:   "create NAME [--address IP] [--pod P | --vm V] [--port 22/tcp]...",
		Short: "Create a floating IP (the first free public IP, or --address)",
		Example: `  kubectl tenant fip create web
  kubectl tenant fip create ssh --vm web --port 22/tcp`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			target, ports, err := tf.target()
			if err != nil {
				return err
			}
			sc, ns, err := o.namespaced(ctx, false)
			if err != nil {
				return err
			}
			f := &tenantv1alpha1.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: args[0], Namespace: ns},
				Spec: tenantv1alpha1.FloatingIPSpec{Address: address, Target: target, Ports: ports}}
			created, err := sc.api.FloatingIPs(ns).Create(ctx, f, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			if o.Output != "" {
				return o.printObject(created, "FloatingIP", floatingIPResource, created.Name, "created")
			}
			fmt.Fprintf(o.Out, "%s/%s created\n", floatingIPResource, created.Name)
			return o.reportFloatingIP(ctx, sc, created)
		},
	}
	cmd.Flags().StringVar(&address, "address", "", "One of your public IPs (default: the first free one)")
	tf.add(cmd)
	return cmd
}

// reportFloatingIP waits briefly for the syncer to act on f's current spec
// and says where it stands: address, phase, and why it is not bound.
func (o *Options) reportFloatingIP(ctx context.Context, sc *tenantScope, f *tenantv1alpha1.FloatingIP) error {
	last := f
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := sc.api.FloatingIPs(f.Namespace).Get(ctx, f.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = got
		return got.Status.ObservedGeneration >= got.Generation && got.Status.Phase != "", nil
	})
	fmt.Fprintf(o.Out, "address %s, target %s, phase %s", orNone(last.Status.Address), tenantview.Target(last.Spec.Target), orNone(string(last.Status.Phase)))
	if c := tenantview.ConditionOf(last.Status.Conditions, "Ready"); c != nil && c.Status != metav1.ConditionTrue && c.Message != "" {
		fmt.Fprintf(o.Out, " (%s: %s)", c.Reason, c.Message)
	}
	fmt.Fprintln(o.Out)
	return nil
}

// retarget sets FloatingIP name's target and ports (retrying on
// conflicts) and reports where it stands.
func (o *Options) retarget(ctx context.Context, name string, target *tenantv1alpha1.FloatingIPTarget, ports []tenantv1alpha1.FloatingIPPort, verb string) error {
	sc, ns, err := o.namespaced(ctx, false)
	if err != nil {
		return err
	}
	var updated *tenantv1alpha1.FloatingIP
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		f, err := sc.api.FloatingIPs(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		f.Spec.Target, f.Spec.Ports = target, ports
		updated, err = sc.api.FloatingIPs(ns).Update(ctx, f, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	if o.Output != "" {
		return o.printObject(updated, "FloatingIP", floatingIPResource, updated.Name, verb)
	}
	if target != nil {
		verb += " to " + tenantview.Target(target)
	}
	fmt.Fprintf(o.Out, "%s/%s %s\n", floatingIPResource, updated.Name, verb)
	return o.reportFloatingIP(ctx, sc, updated)
}

func newFloatingIPAttachCommand(o *Options) *cobra.Command {
	var tf targetFlags
	cmd := &cobra.Command{
		Use:   "attach NAME (--pod P | --vm V) [--port 22/tcp]...",
		Short: "Bind a floating IP to a VM or pod",
		Long: `Binds the floating IP to a VM or pod of its namespace, forwarding --port
(and replacing the ports it had). A target that does not exist yet leaves
it Pending until it does.`,
		Example:           `  kubectl tenant fip attach web --vm web --port 22/tcp --port 443/tcp`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeFloatingIPs(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			target, ports, err := tf.target()
			if err != nil {
				return err
			}
			if target == nil {
				return fmt.Errorf("attach needs --pod or --vm")
			}
			return o.retarget(ctx, args[0], target, ports, "attached")
		},
	}
	tf.add(cmd)
	return cmd
}

func newFloatingIPDetachCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:               "detach NAME",
		Short:             "Unbind a floating IP (it keeps its address)",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeFloatingIPs(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.retarget(cmd.Context(), args[0], nil, nil, "detached")
		},
	}
}

func newFloatingIPDeleteCommand(o *Options) *cobra.Command {
	return newDeleteCommand(o, floatingIPResource, "Delete a floating IP (its address goes back to your free public IPs)", completeFloatingIPs(o),
		func(ctx context.Context, sc *tenantScope, name string) error {
			ns, err := o.tenantNamespace(ctx, sc)
			if err != nil {
				return err
			}
			return sc.api.FloatingIPs(ns).Delete(ctx, name, metav1.DeleteOptions{})
		})
}
