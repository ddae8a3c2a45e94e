package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"tenant.io/tenant-apiserver/pkg/tenantview"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

const (
	hostClaimResource = "hostclaim.tenant.io"
	hostClassResource = "hostclass.tenant.io"
)

func newHostCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "host",
		Aliases: []string{"hosts", "hostclaim", "hostclaims"},
		Short:   "Bare-metal servers: claim one of a class the provider offers, power it, reboot it, give it an image",
		Long: `A HostClaim, in one of your namespaces (-n, or the namespace "ns use"
chose), claims a bare-metal server of a HostClass the provider offers you
("host classes" lists them). The provider binds a free server of the class
to it; with an image, the server is provisioned with it and your cloud-init
data (Secrets of the claim's namespace). The provider grants how many
servers you may claim (quota hostclaims, "kubectl tenant info").`,
	}
	cmd.AddCommand(newHostListCommand(o), newHostClassesCommand(o), newHostCreateCommand(o), newHostPowerCommand(o),
		newHostRebootCommand(o), newHostImageCommand(o), newHostDeleteCommand(o))
	return cmd
}

func completeHostClaims(o *Options) cobra.CompletionFunc {
	return completeWith(o, func(ctx context.Context, sc *tenantScope) ([]string, error) {
		ns, err := o.tenantNamespace(ctx, sc)
		if err != nil {
			return nil, err
		}
		list, err := sc.api.HostClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return namesOf(list.Items), nil
	})
}

func completeHostClasses(o *Options) cobra.CompletionFunc {
	return completeWith(o, func(ctx context.Context, sc *tenantScope) ([]string, error) {
		list, err := sc.api.HostClasses().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return namesOf(list.Items), nil
	})
}

func newHostListCommand(o *Options) *cobra.Command {
	return newListCommand(o, "list", "List your host claims", true, func(ctx context.Context, all bool) (*listing, error) {
		sc, ns, err := o.namespaced(ctx, all)
		if err != nil {
			return nil, err
		}
		list, err := sc.api.HostClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		l := &listing{kind: "HostClaim", resource: hostClaimResource, all: all,
			headers: []string{"NAME", "PHASE", "CLASS", "ADDRESS", "POWER", "AGE"}, wide: []string{"ONLINE", "IMAGE", "BOOT MAC", "HARDWARE"}}
		for i := range list.Items {
			h := &list.Items[i]
			l.add(h, h.Name, hostClaimColumns(h, o.Now()), hostClaimWideColumns(h)...)
		}
		return l, nil
	})
}

// hostClaimColumns are a HostClaim's row of host list.
func hostClaimColumns(h *tenantv1alpha1.HostClaim, now time.Time) []string {
	return []string{h.Name, string(h.Status.Phase), h.Spec.HostClass, tenantview.HostAddress(h), string(h.Status.Power), age(now, h.CreationTimestamp)}
}

// hostClaimWideColumns are a HostClaim's -o wide columns.
func hostClaimWideColumns(h *tenantv1alpha1.HostClaim) []string {
	image := ""
	if h.Spec.Image != nil {
		image = h.Spec.Image.URL
	}
	return []string{fmt.Sprint(h.Spec.Online), image, h.Status.BootMACAddress, tenantview.HostHardware(h.Status.Hardware)}
}

func newHostClassesCommand(o *Options) *cobra.Command {
	cmd := newListCommand(o, "classes", "List the classes of servers offered to you", false, func(ctx context.Context, _ bool) (*listing, error) {
		sc, err := o.scope(ctx)
		if err != nil {
			return nil, err
		}
		list, err := sc.api.HostClasses().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		l := &listing{kind: "HostClass", resource: hostClassResource,
			headers: []string{"NAME", "LABELS", "AVAILABLE", "HARDWARE", "AGE"}}
		for i := range list.Items {
			c := &list.Items[i]
			l.add(c, c.Name, []string{c.Name, tenantview.HostClassLabels(c), fmt.Sprint(c.Status.Available), string(c.Spec.Hardware), age(o.Now(), c.CreationTimestamp)})
		}
		return l, nil
	})
	cmd.Long = `Lists the HostClasses the provider offers your tenant: the labels of their
servers you may select on in "host create --selector" (with the values the
servers have), how many servers are free to claim now, and whether a claim
shows the server's hardware (Summary) or not (None).`
	return cmd
}

// imageFlags are the flags of a HostImage.
type imageFlags struct {
	url, checksum, checksumType, format string
}

func (f *imageFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.url, "image", "", "The URL (http or https) of the operating system image to provision")
	cmd.Flags().StringVar(&f.checksum, "checksum", "", "The image's checksum, or the URL of a file holding it")
	cmd.Flags().StringVar(&f.checksumType, "checksum-type", "", "md5, sha256, sha512 or auto (default auto)")
	cmd.Flags().StringVar(&f.format, "format", "", "raw, qcow2, vdi, vmdk or live-iso (default: detected)")
}

// image is the HostImage the flags name, nil when --image is not given.
func (f *imageFlags) image() (*tenantv1alpha1.HostImage, error) {
	if f.url == "" {
		if f.checksum != "" || f.checksumType != "" || f.format != "" {
			return nil, fmt.Errorf("--checksum, --checksum-type and --format describe an image: give --image too")
		}
		return nil, nil
	}
	return &tenantv1alpha1.HostImage{URL: f.url, Checksum: f.checksum, ChecksumType: f.checksumType, Format: f.format}, nil
}

// dataSecret is a HostDataSecret naming secret, nil for "".
func dataSecret(secret string) *tenantv1alpha1.HostDataSecret {
	if secret == "" {
		return nil
	}
	return &tenantv1alpha1.HostDataSecret{Name: secret}
}

// hostSelector parses --selector: label selector syntax over the class's
// tenant labels (rack=r1,gpu in (a100,h100)); nil for "".
func hostSelector(s string) (*metav1.LabelSelector, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	sel, err := metav1.ParseToLabelSelector(s)
	if err != nil {
		return nil, fmt.Errorf("--selector %q: %w", s, err)
	}
	return sel, nil
}

func newHostCreateCommand(o *Options) *cobra.Command {
	var (
		class, selector                 string
		userData, metaData, networkData string
		online                          bool
		img                             imageFlags
	)
	cmd := &cobra.Command{
		Use:   "create NAME --class CLASS [--selector k=v,...] [--image URL --checksum SUM [--checksum-type T] [--format F]] [--user-data SECRET] [--meta-data SECRET] [--network-data SECRET] [--online]",
		Short: "Claim a server of a class",
		Long: `Creates a HostClaim for a server of --class ("host classes" lists those
offered to you), among those whose labels match --selector. With --image
the server is provisioned with it; --user-data, --meta-data and
--network-data name Secrets of the claim's namespace holding the
cloud-init data (under the key userData, metaData or networkData, or as
the Secret's only key). --online powers the server on.`,
		Example: `  kubectl tenant host create db-1 --class metal-large
  kubectl tenant host create web-1 -n dev --class metal-small --selector rack=r1 \
      --image https://images.example.net/ubuntu-24.04.qcow2 --checksum https://images.example.net/SHA256SUMS \
      --checksum-type sha256 --user-data web-cloud-init --online`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if class == "" {
				return fmt.Errorf("--class is required: kubectl tenant host classes lists the classes offered to you")
			}
			sel, err := hostSelector(selector)
			if err != nil {
				return err
			}
			image, err := img.image()
			if err != nil {
				return err
			}
			sc, ns, err := o.namespaced(ctx, false)
			if err != nil {
				return err
			}
			h := &tenantv1alpha1.HostClaim{ObjectMeta: metav1.ObjectMeta{Name: args[0], Namespace: ns},
				Spec: tenantv1alpha1.HostClaimSpec{HostClass: class, HostSelector: sel, Online: online, Image: image,
					UserData: dataSecret(userData), MetaData: dataSecret(metaData), NetworkData: dataSecret(networkData)}}
			created, err := sc.api.HostClaims(ns).Create(ctx, h, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			if o.Output != "" {
				return o.printObject(created, "HostClaim", hostClaimResource, created.Name, "created")
			}
			fmt.Fprintf(o.Out, "%s/%s created (phase %s; kubectl tenant host list -n %s follows it)\n",
				hostClaimResource, created.Name, orNone(string(created.Status.Phase)), created.Namespace)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&class, "class", "", "The HostClass of the server (required)")
	f.StringVar(&selector, "selector", "", "Select among the class's servers by its labels, k=v[,k=v] (label selector syntax)")
	f.StringVar(&userData, "user-data", "", "A Secret of the namespace holding the cloud-init user data")
	f.StringVar(&metaData, "meta-data", "", "A Secret of the namespace holding the cloud-init meta-data")
	f.StringVar(&networkData, "network-data", "", "A Secret of the namespace holding the cloud-init network configuration")
	f.BoolVar(&online, "online", false, "Power the server on")
	img.add(cmd)
	_ = cmd.RegisterFlagCompletionFunc("class", func(cmd *cobra.Command, _ []string, s string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeHostClasses(o)(cmd, nil, s)
	})
	return cmd
}

// patchHostClaim merge-patches the spec of HostClaim name in the caller's
// namespace and prints what changed: "hostclaim.tenant.io/NAME <verb>".
func (o *Options) patchHostClaim(ctx context.Context, name string, spec map[string]any, verb string) (*tenantv1alpha1.HostClaim, error) {
	sc, ns, err := o.namespaced(ctx, false)
	if err != nil {
		return nil, err
	}
	patch, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return nil, err
	}
	updated, err := sc.api.HostClaims(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return nil, err
	}
	return updated, o.printObject(updated, "HostClaim", hostClaimResource, updated.Name, verb)
}

func newHostPowerCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "power NAME on|off",
		Short: "Power a claimed server on or off (spec.online)",
		Long: `Sets spec.online: the provider powers the server on or off. "host list"
shows the power state the server reports.`,
		Example: `  kubectl tenant host power db-1 on`,
		Args:    cobra.ExactArgs(2),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, s string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) == 1 {
				return []cobra.Completion{"on", "off"}, cobra.ShellCompDirectiveNoFileComp
			}
			return completeHostClaims(o)(cmd, args, s)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var online bool
			switch strings.ToLower(args[1]) {
			case "on":
				online = true
			case "off":
			default:
				return fmt.Errorf("power %q: must be on or off", args[1])
			}
			_, err := o.patchHostClaim(cmd.Context(), args[0], map[string]any{"online": online}, "powered "+strings.ToLower(args[1]))
			return err
		},
	}
}

func newHostRebootCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "reboot NAME",
		Short: "Reboot a claimed server once (spec.rebootRequestedAt)",
		Long: `Sets spec.rebootRequestedAt to now: the provider reboots the server once,
when it is powered on, and records the request in status.lastRebootRequest.`,
		Example:           `  kubectl tenant host reboot db-1`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeHostClaims(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			now := metav1.NewTime(o.Now().Truncate(time.Second))
			updated, err := o.patchHostClaim(cmd.Context(), args[0], map[string]any{"rebootRequestedAt": now}, "reboot requested")
			if err != nil {
				return err
			}
			if o.Output == "" && !updated.Spec.Online {
				fmt.Fprintf(o.ErrOut, "note: %s is not asked to be on (host power %s on); the reboot happens once it is\n", updated.Name, updated.Name)
			}
			return nil
		},
	}
}

func newHostImageCommand(o *Options) *cobra.Command {
	var img imageFlags
	var remove bool
	cmd := &cobra.Command{
		Use:   "image NAME (--image URL --checksum SUM [--checksum-type T] [--format F] | --remove)",
		Short: "Provision a claimed server with an image, or remove its image",
		Long: `Sets the image of a claim that has none: the server is provisioned with it.
--remove takes the image away: the server is deprovisioned and its disks
cleaned. An image is not changed in place: remove it, then set the new one.`,
		Example: `  kubectl tenant host image db-1 --image https://images.example.net/debian-13.qcow2 --checksum 3f79bb7b435b05321651daefd374cdc6
  kubectl tenant host image db-1 --remove`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeHostClaims(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			image, err := img.image()
			if err != nil {
				return err
			}
			switch {
			case remove && image != nil:
				return fmt.Errorf("--remove and --image: give one")
			case remove:
				_, err = o.patchHostClaim(cmd.Context(), args[0], map[string]any{"image": nil}, "image removed")
			case image != nil:
				_, err = o.patchHostClaim(cmd.Context(), args[0], map[string]any{"image": image}, "image set")
			default:
				return fmt.Errorf("give --image URL --checksum SUM, or --remove")
			}
			return err
		},
	}
	img.add(cmd)
	cmd.Flags().BoolVar(&remove, "remove", false, "Remove the image: the server is deprovisioned and cleaned")
	return cmd
}

func newHostDeleteCommand(o *Options) *cobra.Command {
	return newDeleteCommand(o, hostClaimResource, "Delete a host claim (the server is deprovisioned, cleaned and returned to its class)", completeHostClaims(o),
		func(ctx context.Context, sc *tenantScope, name string) error {
			ns, err := o.tenantNamespace(ctx, sc)
			if err != nil {
				return err
			}
			return sc.api.HostClaims(ns).Delete(ctx, name, metav1.DeleteOptions{})
		})
}
