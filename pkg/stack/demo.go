package stack

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// demoPublicIPs are the public IPs the demo tenants get.
var demoPublicIPs = map[string]int32{"acme": 4, "globex": 2}

// Demo runs after a local stack (RunLocal, `make run`) is up and before it
// reports READY. It is where demo content goes — AddressPools, a Tenant or
// two for alice and bob — so that a person trying the product finds
// something to look at. It must be idempotent and fast, use s.Kubectl or
// s.Clients (as AdminUser for provider objects), and return an error rather
// than leave half-made state silently. Tests never run it.
//
// It creates the demo tenants acme (alice, 4 public IPs) and globex (bob,
// 2 public IPs), each with a Namespace "dev", waits until the syncer
// has made them Ready on the host, and offers the provider's DNS resolver
// (namespace infra on provider network infra) to acme, not to globex. With
// the baremetal-operator stand-in, it registers the example's servers and
// offers their HostClass to acme, whose quota takes two HostClaims.
func Demo(ctx context.Context, s *Stack) error {
	if err := DemoTenants(ctx, s); err != nil {
		return err
	}
	admin, err := s.TenantClient(AdminUser)
	if err != nil {
		return err
	}
	for name, count := range demoPublicIPs {
		patch := fmt.Sprintf(`{"spec":{"publicIPs":{"count":%d}}}`, count)
		if name == "acme" && s.opts.BareMetalStandIn {
			patch = fmt.Sprintf(`{"spec":{"publicIPs":{"count":%d},"quota":{"hostClaims":2}}}`, count)
		}
		if _, err := admin.TenantV1alpha1().Tenants().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("giving tenant %s public IPs: %w", name, err)
		}
	}
	for name := range demoPublicIPs {
		if err := s.WaitTenantReady(ctx, name, time.Minute); err != nil {
			return err
		}
	}
	files := []string{"provider-infra.yaml", "providerservice.yaml"}
	if s.opts.BareMetalStandIn {
		files = append(files, "baremetalhosts.yaml", "hostclass.yaml")
	}
	for _, f := range files {
		if _, _, err := s.Kubectl(ctx, AdminUser, "apply", "--server-side", "-f", filepath.Join(s.opts.RepoRoot, "artifacts", "examples", f)); err != nil {
			return fmt.Errorf("applying the demo's %s: %w", f, err)
		}
	}
	return nil
}

// WaitTenantReady waits until Tenant name is in phase Ready.
func (s *Stack) WaitTenantReady(ctx context.Context, name string, timeout time.Duration) error {
	admin, err := s.TenantClient(AdminUser)
	if err != nil {
		return err
	}
	var last *tenantv1alpha1.Tenant
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		t, err := admin.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = t
		return t.Status.Phase == tenantv1alpha1.TenantPhaseReady, nil
	})
	if err != nil {
		return fmt.Errorf("tenant %s not Ready after %s (status %+v): %w", name, timeout, statusOf(last), err)
	}
	return nil
}

func statusOf(t *tenantv1alpha1.Tenant) interface{} {
	if t == nil {
		return nil
	}
	return t.Status
}

// printTenants writes a line per Tenant: its phase, public IPs and host namespaces.
func printTenants(ctx context.Context, s *Stack, out io.Writer) error {
	admin, err := s.TenantClient(AdminUser)
	if err != nil {
		return err
	}
	host, _, err := s.Clients(AdminUser)
	if err != nil {
		return err
	}
	tenants, err := admin.TenantV1alpha1().Tenants().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, t := range tenants.Items {
		namespaces, err := host.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: hostnames.TenantLabel + "=" + t.Name})
		if err != nil {
			return err
		}
		var names []string
		for _, ns := range namespaces.Items {
			names = append(names, ns.Name)
		}
		sort.Strings(names)
		fmt.Fprintf(out, "  tenant %-8s %s, members %v, public IPs %v, host namespaces: %s\n",
			t.Name, t.Status.Phase, t.Spec.Members.Users, t.Status.PublicIPs, strings.Join(names, ", "))
	}
	return nil
}
