package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// The example provider repository of artifacts/gitops/provider: its
// tenants, their public IP counts, and the provider's objects it declares
// besides the shared pools (which it declares exactly as the stack's
// setup made them).
var (
	gitopsTenants       = map[string]int{"initech": 2, "hooli": 1}
	gitopsVRFPeering    = "initech-default"
	gitopsService       = "gitops-ntp"
	gitopsHostClass     = "gitops-general"
	gitopsPools         = []string{"tenant-networks", "public", "connects"}
	gitopsRepoLabel     = "provider.example.com/repository"
	gitopsPrunedTenant  = "hooli"
	gitopsBlockerNS     = "web"
	gitopsBlockerFIP    = "ip"
	gitopsTenantTimeout = 2 * time.Minute
)

// TestGitOps holds the provider side in a repository as a GitOps tool
// does: artifacts/gitops/provider applied with server-side apply and with
// client-side apply leaves nothing for `kubectl diff` to report once the
// syncer and IPAM have written status, applying it again changes
// nothing, and pruning a tenant from it meets the same 409 as any delete
// while the tenant holds a FloatingIP, then goes through.
func TestGitOps(t *testing.T) {
	ctx := framework.Context(t, 8*time.Minute)
	s := framework.Current()
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(root, "artifacts", "gitops", "provider")
	admin, err := s.TenantClient(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanUpGitOps(t, s, admin) })

	start := time.Now()
	for _, mode := range []struct {
		name  string
		apply []string
		diff  []string
	}{
		{"server-side", []string{"apply", "--server-side", "-k", repo}, []string{"diff", "--server-side", "-k", repo}},
		{"client-side", []string{"apply", "-k", repo}, []string{"diff", "-k", repo}},
	} {
		for round := 1; round <= 2; round++ {
			applyAsGitOpsTool(ctx, t, mode.apply...)
			waitGitOpsSettled(ctx, t, admin)
			if diff := kubectlDiff(ctx, t, mode.diff...); diff != "" {
				t.Errorf("%s apply, round %d: kubectl %s reports:\n%s", mode.name, round, strings.Join(mode.diff, " "), diff)
			}
			t.Logf("%s apply, round %d: applied, settled and diffed at %s", mode.name, round, time.Since(start).Round(time.Millisecond))
		}
	}

	// A member of the tenant to be pruned takes a public IP.
	member := []string{"--as=" + stack.AdminUser, "--as-group=tenant.io:" + gitopsPrunedTenant}
	blocker := writeManifestBytes(t, []byte(fmt.Sprintf(`apiVersion: tenant.io/v1alpha1
kind: Namespace
metadata:
  name: %s
---
apiVersion: tenant.io/v1alpha1
kind: FloatingIP
metadata:
  name: %s
  namespace: %s
`, gitopsBlockerNS, gitopsBlockerFIP, gitopsBlockerNS)))
	if _, _, err := s.Kubectl(ctx, stack.AdminUser, append(member, "create", "-f", blocker)...); err != nil {
		t.Fatal(err)
	}

	// The repository without the tenant: its directory gone from
	// tenants/, as the commit that offboards it leaves the repository.
	pruned := t.TempDir()
	kustomization := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- %s
- %s
- %s
sortOptions:
  order: fifo
labels:
- pairs:
    %s: provider
`, relPath(t, pruned, repo, "pools"), relPath(t, pruned, repo, "tenants", "initech"), relPath(t, pruned, repo, "offers"), gitopsRepoLabel)
	if err := os.WriteFile(filepath.Join(pruned, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		t.Fatal(err)
	}
	prune := []string{"apply", "-k", pruned, "--prune", "-l", gitopsRepoLabel + "=provider",
		"--prune-allowlist=tenant.io/v1alpha1/Tenant", "--prune-allowlist=tenant.io/v1alpha1/VRFPeering"}
	_, _, err = s.Kubectl(ctx, stack.AdminUser, prune...)
	if err == nil || !strings.Contains(err.Error(), "attached to tenant "+gitopsPrunedTenant) {
		t.Fatalf("pruning tenant %s while it holds a FloatingIP: %v, want the offboarding conflict", gitopsPrunedTenant, err)
	}
	t.Logf("prune refused: %v", err)
	// The same refusal through the API, with the report's causes.
	err = admin.TenantV1alpha1().Tenants().Delete(ctx, gitopsPrunedTenant, metav1.DeleteOptions{})
	var status *apierrors.StatusError
	wantCause := "floatingips " + gitopsBlockerNS + "/" + gitopsBlockerFIP
	if !errors.As(err, &status) || status.ErrStatus.Code != 409 || status.ErrStatus.Details == nil ||
		!slices.ContainsFunc(status.ErrStatus.Details.Causes, func(c metav1.StatusCause) bool { return c.Field == wantCause }) {
		t.Fatalf("deleting tenant %s: %v (%+v), want 409 with cause %q", gitopsPrunedTenant, err, status, wantCause)
	}
	tn, err := admin.TenantV1alpha1().Tenants().Get(ctx, gitopsPrunedTenant, metav1.GetOptions{})
	if err != nil || tn.DeletionTimestamp != nil || tn.Status.Phase != tenantv1alpha1.TenantPhaseReady {
		t.Fatalf("tenant %s after the refused prune: %v %+v, want it Ready and not deleting", gitopsPrunedTenant, err, tn)
	}
	t.Logf("prune refused with %d cause(s) at %s", len(status.ErrStatus.Details.Causes), time.Since(start).Round(time.Millisecond))

	// The tenant gives up its public IP: the next sync prunes it.
	if _, _, err := s.Kubectl(ctx, stack.AdminUser, append(member, "delete", "-n", gitopsBlockerNS, "floatingips.tenant.io", gitopsBlockerFIP)...); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := s.Kubectl(ctx, stack.AdminUser, prune...); err != nil {
		t.Fatalf("pruning tenant %s once it holds nothing: %v\n%s", gitopsPrunedTenant, err, stderr)
	}
	waitTenantGone(ctx, t, admin, gitopsPrunedTenant)
	if diff := kubectlDiff(ctx, t, "diff", "-k", pruned); diff != "" {
		t.Errorf("after the prune, kubectl diff -k reports:\n%s", diff)
	}
	t.Logf("tenant %s pruned and gone at %s", gitopsPrunedTenant, time.Since(start).Round(time.Millisecond))
}

// relPath is the path of elem under repo relative to dir: kustomize takes
// other kustomizations by relative path only.
func relPath(t *testing.T, dir, repo string, elem ...string) string {
	t.Helper()
	p, err := filepath.Rel(dir, filepath.Join(append([]string{repo}, elem...)...))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// applyAsGitOpsTool applies the repository as the provider admin the way
// a GitOps tool syncs: an apply that fails is tried again a few seconds
// later. Only a new tenant's VRFPeering needs that: it names the Network
// default, which onboarding makes a moment after the Tenant.
func applyAsGitOpsTool(ctx context.Context, t *testing.T, args ...string) {
	t.Helper()
	var last error
	for attempt := 1; attempt <= 10; attempt++ {
		_, _, last = framework.Current().Kubectl(ctx, stack.AdminUser, args...)
		if last == nil {
			if attempt > 1 {
				t.Logf("kubectl %s: applied in %d passes", args[0], attempt)
			}
			return
		}
		t.Logf("kubectl %s, pass %d: %v", args[0], attempt, last)
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(2 * time.Second):
		}
	}
	t.Fatalf("kubectl %s: %v", strings.Join(args, " "), last)
}

// kubectlDiff runs kubectl diff as the provider admin and returns what it
// reports: empty when it exits 0 (no differences). It fails the test when
// kubectl diff itself fails (exit code above 1).
func kubectlDiff(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, err := framework.Current().Kubectl(ctx, stack.AdminUser, args...)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return stdout
	default:
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr)
		return ""
	}
}

// waitGitOpsSettled waits until the repository's Tenants are Ready with
// their addresses, its other objects' status has caught up with their
// generation, and nothing of the repository changes for a few seconds:
// then a diff compares the manifests with a cluster at rest.
func waitGitOpsSettled(ctx context.Context, t *testing.T, admin clientset.Interface) {
	t.Helper()
	c := admin.TenantV1alpha1()
	var last, why string
	stableSince := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, gitopsTenantTimeout, true, func(ctx context.Context) (bool, error) {
		var versions []string
		why = ""
		for name, publicIPs := range gitopsTenants {
			tn, err := c.Tenants().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				why = err.Error()
				return false, nil
			}
			if tn.Status.Phase != tenantv1alpha1.TenantPhaseReady || tn.Status.Network == nil || tn.Status.Network.CIDR == "" || len(tn.Status.PublicIPs) != publicIPs {
				why = fmt.Sprintf("tenant %s: %+v", name, tn.Status)
				return false, nil
			}
			versions = append(versions, tn.ResourceVersion)
		}
		p, err := c.VRFPeerings().Get(ctx, gitopsVRFPeering, metav1.GetOptions{})
		if err != nil || p.Status.ObservedGeneration != p.Generation {
			why = fmt.Sprintf("vrfpeering %s: %v %+v", gitopsVRFPeering, err, p)
			return false, nil
		}
		ps, err := c.ProviderServices().Get(ctx, gitopsService, metav1.GetOptions{})
		if err != nil || ps.Status.ObservedGeneration != ps.Generation {
			why = fmt.Sprintf("providerservice %s: %v %+v", gitopsService, err, ps)
			return false, nil
		}
		hc, err := c.HostClasses().Get(ctx, gitopsHostClass, metav1.GetOptions{})
		if err != nil {
			why = err.Error()
			return false, nil
		}
		versions = append(versions, p.ResourceVersion, ps.ResourceVersion, hc.ResourceVersion)
		for _, name := range gitopsPools {
			pool, err := c.AddressPools().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				why = err.Error()
				return false, nil
			}
			versions = append(versions, pool.ResourceVersion)
		}
		now := strings.Join(versions, ",")
		if now != last {
			last, stableSince = now, time.Now()
			why = "still changing"
			return false, nil
		}
		return time.Since(stableSince) >= 3*time.Second, nil
	})
	if err != nil {
		t.Fatalf("the repository's objects did not settle: %v (%s)", err, why)
	}
}

// waitTenantGone waits until Tenant name no longer exists.
func waitTenantGone(ctx context.Context, t *testing.T, admin clientset.Interface, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, gitopsTenantTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := admin.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("tenant %s still exists: %v", name, err)
	}
}

// cleanUpGitOps deletes what the repository made (not the shared pools,
// which it only declares as they are) and takes its marks off the pools.
func cleanUpGitOps(t *testing.T, s *stack.Stack, admin clientset.Interface) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := admin.TenantV1alpha1()
	_ = c.VRFPeerings().Delete(ctx, gitopsVRFPeering, metav1.DeleteOptions{})
	_ = c.ProviderServices().Delete(ctx, gitopsService, metav1.DeleteOptions{})
	_ = c.HostClasses().Delete(ctx, gitopsHostClass, metav1.DeleteOptions{})
	member := []string{"--as=" + stack.AdminUser, "--as-group=tenant.io:" + gitopsPrunedTenant}
	s.Kubectl(ctx, stack.AdminUser, append(member, "delete", "--ignore-not-found", "-n", gitopsBlockerNS, "floatingips.tenant.io", gitopsBlockerFIP)...) //nolint:errcheck
	for name := range gitopsTenants {
		err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			// A VRFPeering being deleted may still block for a moment.
			err := c.Tenants().Delete(ctx, name, metav1.DeleteOptions{})
			return err == nil || apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("cleanup: deleting tenant %s: %v", name, err)
		}
	}
	for name := range gitopsTenants {
		err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			_, err := c.Tenants().Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("cleanup: tenant %s not gone: %v", name, err)
		}
	}
	for _, name := range gitopsPools {
		s.Kubectl(ctx, stack.AdminUser, "label", "addresspools.tenant.io", name, gitopsRepoLabel+"-")                                    //nolint:errcheck
		s.Kubectl(ctx, stack.AdminUser, "annotate", "addresspools.tenant.io", name, "kubectl.kubernetes.io/last-applied-configuration-") //nolint:errcheck
	}
}
