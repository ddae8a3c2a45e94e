package stack

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
)

// TenantClient returns the generated tenant.io clientset acting as user,
// through the host kube-apiserver.
func (s *Stack) TenantClient(user string) (clientset.Interface, error) {
	return clientset.NewForConfig(s.RESTConfig(user))
}

// EnsureTenant creates tenant name (as the provider admin) with block cidr
// and users as members, unless it exists, and waits until every member sees
// it: from then on their requests act as that tenant.
func (s *Stack) EnsureTenant(ctx context.Context, name, cidr string, users ...string) error {
	admin, err := s.TenantClient(AdminUser)
	if err != nil {
		return err
	}
	t := &tenantv1alpha1.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: tenantv1alpha1.TenantSpec{
			Members: tenantv1alpha1.TenantMembers{Users: users},
			Network: tenantv1alpha1.TenantNetwork{CIDR: cidr},
		},
	}
	if _, err := admin.TenantV1alpha1().Tenants().Create(ctx, t, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating tenant %s: %w", name, err)
	}
	for _, u := range users {
		if err := s.WaitTenantVisible(ctx, u, name); err != nil {
			return err
		}
	}
	return nil
}

// WaitTenantVisible waits until user can read tenant name.
func (s *Stack) WaitTenantVisible(ctx context.Context, user, name string) error {
	c, err := s.TenantClient(user)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, last = c.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("user %s does not see tenant %s: %v (last error: %v)", user, name, err, last)
	}
	return nil
}

// EnsureNetwork creates the tenant Network name as user (Layer2, subnets
// defaulted from the tenant's block), unless it exists. The syncer makes
// every tenant's Network "default" when it onboards it; a stack without
// the syncer, or a caller that cannot wait for it, makes it here.
func (s *Stack) EnsureNetwork(ctx context.Context, user, name string) error {
	c, err := s.TenantClient(user)
	if err != nil {
		return err
	}
	n := &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: tenantv1alpha1.NetworkSpec{Topology: tenantv1alpha1.NetworkTopologyLayer2}}
	if _, err := c.TenantV1alpha1().Networks().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating network %s as %s: %w", name, user, err)
	}
	return nil
}

// EnsureNamespace creates the tenant Namespace name as user, unless it
// exists; its Network "default" must exist (EnsureNetwork).
func (s *Stack) EnsureNamespace(ctx context.Context, user, name string) error {
	c, err := s.TenantClient(user)
	if err != nil {
		return err
	}
	ns := &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.TenantV1alpha1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s as %s: %w", name, user, err)
	}
	return nil
}

// DemoPools applies artifacts/examples/addresspools.yaml as the provider
// admin: pool tenant-networks (10.0.0.0/8, /16 by default) and pool public
// (203.0.113.0/24 without .0 and .255).
func DemoPools(ctx context.Context, s *Stack) error {
	path := filepath.Join(s.opts.RepoRoot, "artifacts", "examples", "addresspools.yaml")
	if _, _, err := s.Kubectl(ctx, AdminUser, "apply", "--server-side", "-f", path); err != nil {
		return fmt.Errorf("creating the demo address pools: %w", err)
	}
	return nil
}

// DemoTenants creates the demo pools (DemoPools) and the tenants of the
// demo and of most tests: acme (alice, block 10.42.0.0/16) and globex (bob,
// block 10.43.0.0/16), each with a Network "default" (if the syncer has
// not made it yet) and a Namespace "dev" on it.
func DemoTenants(ctx context.Context, s *Stack) error {
	if err := DemoPools(ctx, s); err != nil {
		return err
	}
	for _, t := range []struct{ name, cidr, user string }{
		{"acme", "10.42.0.0/16", "alice"},
		{"globex", "10.43.0.0/16", "bob"},
	} {
		if err := s.EnsureTenant(ctx, t.name, t.cidr, t.user); err != nil {
			return err
		}
		if err := s.EnsureNetwork(ctx, t.user, "default"); err != nil {
			return err
		}
		if err := s.EnsureNamespace(ctx, t.user, "dev"); err != nil {
			return err
		}
	}
	return nil
}
