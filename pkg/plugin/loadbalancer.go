package plugin

import (
	"context"
	"fmt"
	"strings"

	"tenant.io/tenant-apiserver/pkg/tenantview"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

const loadBalancerResource = "loadbalancer.tenant.io"

func newLoadBalancerCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "lb",
		Aliases: []string{"loadbalancer", "loadbalancers"},
		Short:   "Load balancers: a public IP balancing ports over the pods or VMs a selector picks",
	}
	cmd.AddCommand(newLoadBalancerListCommand(o), newLoadBalancerCreateCommand(o), newLoadBalancerDeleteCommand(o))
	return cmd
}

func newLoadBalancerListCommand(o *Options) *cobra.Command {
	return newListCommand(o, "list", "List load balancers", true, func(ctx context.Context, all bool) (*listing, error) {
		sc, ns, err := o.namespaced(ctx, all)
		if err != nil {
			return nil, err
		}
		list, err := sc.api.LoadBalancers(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		l := &listing{kind: "LoadBalancer", resource: loadBalancerResource, all: all,
			headers: []string{"NAME", "ADDRESS", "PORTS", "SELECTOR", "READY", "AGE"}, wide: []string{"SOURCE RANGES", "DNS NAME"}}
		for i := range list.Items {
			lb := &list.Items[i]
			l.add(lb, lb.Name, []string{lb.Name, lb.Status.Address, tenantview.LBPorts(lb.Spec.Ports), tenantview.Selector(lb.Spec.Selector), tenantview.Ready(lb.Status.Conditions), age(o.Now(), lb.CreationTimestamp)},
				strings.Join(lb.Spec.SourceRanges, ","), lb.Status.DNSName)
		}
		return l, nil
	})
}

func newLoadBalancerCreateCommand(o *Options) *cobra.Command {
	var selector map[string]string
	var ports, sourceRanges []string
	var address string
	cmd := &cobra.Command{
		Use:   "create NAME --selector k=v --port 80[:8080][/tcp]... [--address IP] [--source-range CIDR]...",
		Short: "Create a load balancer on one of your public IPs",
		Example: `  kubectl tenant lb create web --selector app=web --port 80:8080/tcp --port 443:8443/tcp
  kubectl tenant lb create vm-ssh --selector vm.kubevirt.io/name=web --port 22`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			lb := &tenantv1alpha1.LoadBalancer{ObjectMeta: metav1.ObjectMeta{Name: args[0]},
				Spec: tenantv1alpha1.LoadBalancerSpec{Address: address, Selector: selector, SourceRanges: sourceRanges}}
			for _, s := range ports {
				p, err := tenantview.ParseLBPort(s)
				if err != nil {
					return fmt.Errorf("--port %q: %w", s, err)
				}
				lb.Spec.Ports = append(lb.Spec.Ports, p)
			}
			if len(lb.Spec.Ports) > 1 {
				// Several ports need names; name them after themselves.
				for i := range lb.Spec.Ports {
					p := &lb.Spec.Ports[i]
					p.Name = fmt.Sprintf("%s-%d", strings.ToLower(string(p.Protocol)), p.Port)
				}
			}
			sc, ns, err := o.namespaced(ctx, false)
			if err != nil {
				return err
			}
			lb.Namespace = ns
			created, err := sc.api.LoadBalancers(lb.Namespace).Create(ctx, lb, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			return o.printObject(created, "LoadBalancer", loadBalancerResource, created.Name, "created")
		},
	}
	cmd.Flags().StringToStringVar(&selector, "selector", nil, "The backends' labels, k=v[,k=v] (repeatable)")
	cmd.Flags().StringSliceVar(&ports, "port", nil, "A balanced port, PORT[:TARGET][/tcp|udp|sctp] (repeatable)")
	cmd.Flags().StringVar(&address, "address", "", "One of your public IPs (default: assigned from yours)")
	cmd.Flags().StringSliceVar(&sourceRanges, "source-range", nil, "An IPv4 CIDR allowed to connect (repeatable; default everyone)")
	return cmd
}

func newLoadBalancerDeleteCommand(o *Options) *cobra.Command {
	complete := completeWith(o, func(ctx context.Context, sc *tenantScope) ([]string, error) {
		ns, err := o.tenantNamespace(ctx, sc)
		if err != nil {
			return nil, err
		}
		list, err := sc.api.LoadBalancers(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return namesOf(list.Items), nil
	})
	return newDeleteCommand(o, loadBalancerResource, "Delete a load balancer", complete, func(ctx context.Context, sc *tenantScope, name string) error {
		ns, err := o.tenantNamespace(ctx, sc)
		if err != nil {
			return err
		}
		return sc.api.LoadBalancers(ns).Delete(ctx, name, metav1.DeleteOptions{})
	})
}
