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

const networkResource = "network.tenant.io"

func newNetworkCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "net",
		Aliases: []string{"network", "networks"},
		Short:   "Your networks (VPCs)",
	}
	cmd.AddCommand(newNetworkListCommand(o), newNetworkCreateCommand(o), newNetworkDeleteCommand(o))
	return cmd
}

func completeNetworks(o *Options) cobra.CompletionFunc {
	return completeWith(o, func(ctx context.Context, sc *tenantScope) ([]string, error) {
		list, err := sc.api.Networks().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return namesOf(list.Items), nil
	})
}

func newNetworkListCommand(o *Options) *cobra.Command {
	return newListCommand(o, "list", "List your networks", false, func(ctx context.Context, _ bool) (*listing, error) {
		sc, err := o.scope(ctx)
		if err != nil {
			return nil, err
		}
		list, err := sc.api.Networks().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		l := &listing{kind: "Network", resource: networkResource,
			headers: []string{"NAME", "TOPOLOGY", "SUBNETS", "NAT", "READY", "AGE"}, wide: []string{"NAMESPACES", "HOST NETWORK"}}
		for i := range list.Items {
			n := &list.Items[i]
			l.add(n, n.Name, []string{n.Name, string(n.Spec.Topology), strings.Join(tenantview.Subnets(n), ","), tenantview.NAT(n), tenantview.Ready(n.Status.Conditions), age(o.Now(), n.CreationTimestamp)},
				strings.Join(n.Status.Namespaces, ","), n.Status.HostNetwork)
		}
		return l, nil
	})
}

func newNetworkCreateCommand(o *Options) *cobra.Command {
	var topology string
	var subnets []string
	var nat, shared bool
	cmd := &cobra.Command{
		Use:   "create NAME [--topology layer2|layer3] [--subnet CIDR]... [--nat] [--shared-services]",
		Short: "Create a network",
		Long: `Create a Network: an OVN-Kubernetes primary user-defined network of your
own. Without --subnet it gets the next free /24 of your private block.
--nat gives it a NAT gateway: its pods reach the outside from one of your
public IPs. --shared-services makes its Services reachable from your other
networks that share theirs, and theirs from it (spec.serviceNetwork Shared).`,
		Example: `  kubectl tenant net create blue
  kubectl tenant net create big --topology layer3 --subnet 10.42.16.0/20 --nat`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := o.scope(cmd.Context())
			if err != nil {
				return err
			}
			n := &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: args[0]}, Spec: tenantv1alpha1.NetworkSpec{Subnets: subnets}}
			switch strings.ToLower(topology) {
			case "":
			case "layer2":
				n.Spec.Topology = tenantv1alpha1.NetworkTopologyLayer2
			case "layer3":
				n.Spec.Topology = tenantv1alpha1.NetworkTopologyLayer3
			default:
				return fmt.Errorf("--topology %q: must be layer2 or layer3", topology)
			}
			if nat {
				n.Spec.NATGateway = &tenantv1alpha1.NATGateway{Enabled: true}
			}
			if shared {
				n.Spec.ServiceNetwork = tenantv1alpha1.ServiceNetworkShared
			}
			created, err := sc.api.Networks().Create(cmd.Context(), n, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			return o.printObject(created, "Network", networkResource, created.Name, "created")
		},
	}
	cmd.Flags().StringVar(&topology, "topology", "", "layer2 (default) or layer3")
	cmd.Flags().StringSliceVar(&subnets, "subnet", nil, "A subnet inside your private block (repeat for layer3)")
	cmd.Flags().BoolVar(&nat, "nat", false, "Give the network a NAT gateway on one of your public IPs")
	cmd.Flags().BoolVar(&shared, "shared-services", false, "Share the network's Services with your other networks that share theirs")
	return cmd
}

func newNetworkDeleteCommand(o *Options) *cobra.Command {
	return newDeleteCommand(o, networkResource, "Delete a network", completeNetworks(o), func(ctx context.Context, sc *tenantScope, name string) error {
		return sc.api.Networks().Delete(ctx, name, metav1.DeleteOptions{})
	})
}
