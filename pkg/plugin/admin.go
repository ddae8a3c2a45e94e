package plugin

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"tenant.io/tenant-apiserver/pkg/tenantview"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

const tenantResource = "tenant.tenant.io"

func newAdminCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Provider commands: onboard, tenants, pools, offboard; every tenant's namespaces, networks, fips, lbs, hosts; whois",
		Long: `Provider commands. onboard, tenants, pools, offboard and whois need the
right to manage Tenants; onboard's summary acts in the new tenant by
impersonating its host group tenant.io:<tenant>, as providers do with
kubectl --as-group. namespaces, networks, fips, lbs and hosts read every
tenant's objects in the provider's read-only views (admin.tenant.io).`,
	}
	cmd.AddCommand(newOnboardCommand(o), newTenantsCommand(o), newPoolsCommand(o), newOffboardCommand(o))
	cmd.AddCommand(newViewsCommands(o)...)
	return cmd
}

// requireProvider fails unless the caller may manage Tenants.
func (o *Options) requireProvider(ctx context.Context) (*session, error) {
	s, err := o.getSession(ctx)
	if err != nil {
		return nil, err
	}
	if !s.identity.Provider {
		return nil, fmt.Errorf("user %s may not manage tenants: kubectl tenant admin is for the provider", s.identity.User)
	}
	return s, nil
}

func newOnboardCommand(o *Options) *cobra.Command {
	var (
		members, groups []string
		prefixLength    int32
		cidr, display   string
		isolation       string
		publicIPs       int32
		quota           map[string]string
	)
	cmd := &cobra.Command{
		Use:   "onboard NAME (--member USER | --group G)... (--prefix-length N | --cidr C) [--public-ips N] [--quota k=v,...] [--isolation hard|soft]",
		Short: "Onboard a tenant, wait until it is Ready, and print what it was given",
		Long: `Creates the Tenant, follows it until Ready (or says why it failed), then
prints what the tenant holds, as "kubectl tenant info" shows it to its
members: ready to hand to the customer with their kubeconfig.

--quota takes namespaces, networks, floatingips, loadbalancers and
hostclaims (counts; hostclaims defaults to 0, no servers)
and compute resources: requests.cpu, limits.cpu, requests.memory,
limits.memory, requests.storage, pods, persistentvolumeclaims,
count/virtualmachines.kubevirt.io.

--isolation hard also isolates the tenant's name lookups: its pods resolve
its own names only, through the provider's tenant DNS server (docs/dns.md).
Soft, the default, keeps the cluster's DNS.`,
		Example: `  kubectl tenant admin onboard acme --member alice --prefix-length 16 --public-ips 4 \
      --quota namespaces=10,floatingips=4,requests.cpu=16,requests.memory=64Gi`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			q, err := tenantview.ParseQuota(quota)
			if err != nil {
				return err
			}
			s, err := o.requireProvider(ctx)
			if err != nil {
				return err
			}
			var iso tenantv1alpha1.TenantIsolation
			switch strings.ToLower(isolation) {
			case "":
			case "hard":
				iso = tenantv1alpha1.TenantIsolationHard
			case "soft":
				iso = tenantv1alpha1.TenantIsolationSoft
			default:
				return fmt.Errorf("--isolation %q: must be hard or soft", isolation)
			}
			t := &tenantv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: args[0]}, Spec: tenantv1alpha1.TenantSpec{
				Isolation:   iso,
				DisplayName: display,
				Members:     tenantv1alpha1.TenantMembers{Users: members, Groups: groups},
				Network:     tenantv1alpha1.TenantNetwork{CIDR: cidr},
				PublicIPs:   tenantv1alpha1.TenantPublicIPs{Count: publicIPs},
				Quota:       q,
			}}
			if cmd.Flags().Changed("prefix-length") {
				t.Spec.Network.PrefixLength = &prefixLength
			}
			created, err := s.api.Tenants().Create(ctx, t, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			fmt.Fprintf(o.ErrOut, "%s/%s created\n", tenantResource, created.Name)
			if _, err := o.waitTenantReady(ctx, s, created.Name); err != nil {
				return err
			}
			sc, err := o.scopeOf(ctx, created.Name)
			if err != nil {
				return err
			}
			info, err := tenantview.Gather(ctx, sc.api, sc.tnt.Name)
			if err != nil {
				return fmt.Errorf("tenant %s is Ready, but reading what it holds failed: %w", created.Name, err)
			}
			return o.printInfo(info)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&members, "member", nil, "A user of the tenant (repeatable)")
	f.StringSliceVar(&groups, "group", nil, "A group whose users are the tenant's members (repeatable)")
	f.Int32Var(&prefixLength, "prefix-length", 0, "Allocate a private block of this prefix length")
	f.StringVar(&cidr, "cidr", "", "Claim this private block")
	f.Int32Var(&publicIPs, "public-ips", 0, "How many public IPs the tenant gets")
	f.StringToStringVar(&quota, "quota", nil, "Quotas, k=v[,k=v] (repeatable)")
	f.StringVar(&display, "display-name", "", "A human name of the tenant")
	f.StringVar(&isolation, "isolation", "", "hard: its name lookups are isolated too (the tenant DNS server); soft (default): its networks only")
	return cmd
}

// waitTenantReady follows Tenant name until it is Ready, writing each new
// phase and problem to stderr; Failed and --timeout end it with the reason.
func (o *Options) waitTenantReady(ctx context.Context, s *session, name string) (*tenantv1alpha1.Tenant, error) {
	ctx, cancel := o.withTimeout(ctx)
	defer cancel()
	var last *tenantv1alpha1.Tenant
	var said string
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		t, err := s.api.Tenants().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = t
		if line := tenantProgress(t); line != said {
			fmt.Fprintf(o.ErrOut, "  %s\n", line)
			said = line
		}
		switch t.Status.Phase {
		case tenantv1alpha1.TenantPhaseReady:
			return true, nil
		case tenantv1alpha1.TenantPhaseFailed:
			return false, fmt.Errorf("tenant %s failed: %s", name, problems(t.Status.Conditions))
		}
		return false, nil
	})
	if err != nil && last != nil && ctx.Err() != nil {
		err = fmt.Errorf("tenant %s is not Ready after %s: phase %s, %s", name, o.Timeout, orNone(string(last.Status.Phase)), problems(last.Status.Conditions))
	}
	if err != nil {
		// The Tenant exists: say so, and how to follow or remove it.
		return nil, fmt.Errorf("%w; the tenant exists (kubectl tenant --tenant %s info to follow it, kubectl tenant admin offboard %s to remove it)", err, name, name)
	}
	return last, nil
}

// tenantProgress is one line on where a Tenant's onboarding stands.
func tenantProgress(t *tenantv1alpha1.Tenant) string {
	line := "phase " + orNone(string(t.Status.Phase))
	if p := problems(t.Status.Conditions); p != "" {
		line += ": " + p
	}
	return line
}

// problems are the conditions that are not True, as one line.
func problems(conds []metav1.Condition) string {
	var out []string
	for _, c := range conds {
		if c.Status == metav1.ConditionTrue {
			continue
		}
		s := c.Type + "=" + string(c.Status)
		if c.Reason != "" {
			s += " " + c.Reason
		}
		if c.Message != "" {
			s += " (" + c.Message + ")"
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

// used is "used/limit", or "used" without a limit.
func used(n int32, limit *int32) string {
	if limit == nil {
		return strconv.Itoa(int(n))
	}
	return fmt.Sprintf("%d/%d", n, *limit)
}

func newTenantsCommand(o *Options) *cobra.Command {
	return newListCommand(o, "tenants", "Every tenant: phase, block, public IPs used/total, usage against quota", false, func(ctx context.Context, _ bool) (*listing, error) {
		s, err := o.requireProvider(ctx)
		if err != nil {
			return nil, err
		}
		// The session's one list of Tenants holds all the table shows.
		if s.listErr != nil {
			return nil, s.listErr
		}
		l := &listing{kind: "Tenant", resource: tenantResource,
			headers: []string{"NAME", "PHASE", "BLOCK", "PUBLIC IPS", "NS", "NETS", "FIPS", "LBS", "HOSTS", "AGE"},
			wide:    []string{"CPU", "MEMORY", "MEMBERS"}}
		for i := range s.tenants {
			t := &s.tenants[i]
			block := ""
			if t.Status.Network != nil {
				block = t.Status.Network.CIDR
			}
			u, q := t.Status.Usage, t.Spec.Quota
			ips := fmt.Sprintf("%d/%d", u.PublicIPs, len(t.Status.PublicIPs))
			members := append(append([]string(nil), t.Spec.Members.Users...), prefixed("group:", t.Spec.Members.Groups)...)
			l.add(t, t.Name,
				[]string{t.Name, string(t.Status.Phase), block, ips, used(u.Namespaces, q.Namespaces), used(u.Networks, q.Networks),
					used(u.FloatingIPs, q.FloatingIPs), used(u.LoadBalancers, q.LoadBalancers), used(u.HostClaims, q.HostClaims), age(o.Now(), t.CreationTimestamp)},
				computeUsed(t, corev1.ResourceRequestsCPU), computeUsed(t, corev1.ResourceRequestsMemory), strings.Join(members, ","))
		}
		return l, nil
	})
}

func prefixed(p string, in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		out = append(out, p+s)
	}
	return out
}

// computeUsed is "used/limit" of a compute quota, "-" without one.
func computeUsed(t *tenantv1alpha1.Tenant, name corev1.ResourceName) string {
	limit, ok := t.Spec.Quota.Compute[name]
	if !ok {
		return "-"
	}
	u := t.Status.Usage.Compute[name]
	return u.String() + "/" + limit.String()
}

func newPoolsCommand(o *Options) *cobra.Command {
	return newListCommand(o, "pools", "Every AddressPool: capacity, allocated, free", false, func(ctx context.Context, _ bool) (*listing, error) {
		s, err := o.requireProvider(ctx)
		if err != nil {
			return nil, err
		}
		list, err := s.api.AddressPools().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		l := &listing{kind: "AddressPool", resource: "addresspool.tenant.io",
			headers: []string{"NAME", "PURPOSE", "CAPACITY", "ALLOCATED", "FREE", "USE"},
			wide:    []string{"CIDRS", "RANGES"}}
		for i := range list.Items {
			p := &list.Items[i]
			l.add(p, p.Name, []string{p.Name, string(p.Spec.Purpose), strconv.FormatInt(p.Status.Capacity, 10),
				strconv.FormatInt(p.Status.Allocated, 10), strconv.FormatInt(p.Status.Free, 10), bar(p.Status.Allocated, p.Status.Capacity, 10)},
				strings.Join(p.Spec.CIDRs, ","), strings.Join(p.Spec.Ranges, ","))
		}
		return l, nil
	})
}

// bar draws used out of total as [###-------] 30%.
func bar(usedN, total int64, width int) string {
	if total <= 0 {
		return "[" + strings.Repeat("-", width) + "]   -"
	}
	filled := int(usedN * int64(width) / total)
	if usedN > 0 && filled == 0 {
		filled = 1
	}
	if filled > width {
		filled = width
	}
	pct := float64(usedN) * 100 / float64(total)
	return fmt.Sprintf("[%s%s] %3.0f%%", strings.Repeat("#", filled), strings.Repeat("-", width-filled), pct)
}

func newOffboardCommand(o *Options) *cobra.Command {
	var waitGone bool
	cmd := &cobra.Command{
		Use:   "offboard NAME [--wait]",
		Short: "Show what blocks deleting a tenant; delete it when nothing does",
		Long: `Prints the tenant's offboarding report. When nothing blocks, deletes the
Tenant: its namespaces, networks and host objects go, then its addresses
return to their pools (--wait waits for that). Exit status 2 when
something blocks.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := o.requireProvider(ctx)
			if err != nil {
				return err
			}
			name := args[0]
			report, err := s.api.Tenants().GetOffboarding(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !report.Ready {
				return o.printOffboarding(report)
			}
			if err := s.api.Tenants().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				return err
			}
			fmt.Fprintf(o.Out, "%s %q deleted\n", tenantResource, name)
			if !waitGone {
				return nil
			}
			wctx, cancel := o.withTimeout(ctx)
			defer cancel()
			err = wait.PollUntilContextCancel(wctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
				_, err := s.api.Tenants().Get(ctx, name, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					return true, nil
				}
				return false, err
			})
			if err != nil {
				return fmt.Errorf("tenant %s is still being removed after %s: %w", name, o.Timeout, err)
			}
			fmt.Fprintf(o.Out, "tenant %s is gone: its host objects are removed and its addresses returned\n", name)
			return nil
		},
	}
	cmd.Flags().BoolVar(&waitGone, "wait", false, "Wait until the tenant and everything it had are gone")
	return cmd
}
