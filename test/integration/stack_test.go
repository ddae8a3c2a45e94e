package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m, stack.Options{
		Setup:                demoTenants,
		BareMetalStandIn:     true,
		BareMetalStandInStep: 100 * time.Millisecond,
		// The provider's gateway (gateway_test.go): Traefik starts in
		// seconds, once built.
		Gateway: true,
	}))
}

// demoTenants is stack.DemoTenants with each demo tenant's Network
// "default" made sure of before its Namespace "dev" names it: a Namespace
// must name an existing Network, and onboarding creates "default" only a
// moment after the Tenant (whoever is first, the other finds it there).
// Each demo tenant may also claim servers of demoHostClass.
func demoTenants(ctx context.Context, s *stack.Stack) error {
	if err := stack.DemoPools(ctx, s); err != nil {
		return err
	}
	for _, t := range []struct{ name, cidr, user string }{
		{"acme", "10.42.0.0/16", alice},
		{"globex", "10.43.0.0/16", "bob"},
	} {
		if err := s.EnsureTenant(ctx, t.name, t.cidr, t.user); err != nil {
			return err
		}
		if err := ensureNetwork(ctx, s.RESTConfig(t.user), "default"); err != nil {
			return err
		}
	}
	if err := stack.DemoTenants(ctx, s); err != nil {
		return err
	}
	return demoHostClaims(ctx, s.RESTConfig(stack.AdminUser))
}

// demoHostClass is the HostClass offered to the demo tenants acme and
// globex by demoTenants. Its namespace holds no BareMetalHost: claims of
// it are stored and stay Pending, which is all the API tests need.
const demoHostClass = "it-hosts"

// demoHostClaimQuota is the demo tenants' least quota of HostClaims: the
// isolation tests hold up to five claims a tenant at once.
const demoHostClaimQuota = 8

// demoHostClaims makes sure of demoHostClass and of each demo tenant's
// quota of HostClaims, with the provider admin's configuration cfg: a
// test that applies artifacts/examples/tenant.yaml lowers acme's.
func demoHostClaims(ctx context.Context, cfg *rest.Config) error {
	c, err := clientset.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = c.TenantV1alpha1().HostClasses().Create(ctx, &tenantv1alpha1.HostClass{
		ObjectMeta: metav1.ObjectMeta{Name: demoHostClass},
		Spec:       tenantv1alpha1.HostClassSpec{HostNamespace: "it-no-servers", Tenants: []string{"acme", "globex"}},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating HostClass %s: %w", demoHostClass, err)
	}
	tenants := c.TenantV1alpha1().Tenants()
	for _, name := range []string{"acme", "globex"} {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			tn, err := tenants.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if q := tn.Spec.Quota.HostClaims; q != nil && *q >= demoHostClaimQuota {
				return nil
			}
			tn.Spec.Quota.HostClaims = ptr.To[int32](demoHostClaimQuota)
			_, err = tenants.Update(ctx, tn, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("giving tenant %s a quota of %d HostClaims: %w", name, demoHostClaimQuota, err)
		}
	}
	return nil
}

// ensureNetwork creates the Network name (Layer2, subnet defaulted by the
// server) with the client configuration cfg, unless it exists.
func ensureNetwork(ctx context.Context, cfg *rest.Config, name string) error {
	c, err := clientset.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = c.TenantV1alpha1().Networks().Create(ctx, &tenantv1alpha1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       tenantv1alpha1.NetworkSpec{Topology: tenantv1alpha1.NetworkTopologyLayer2},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating network %s: %w", name, err)
	}
	return nil
}

// TestStackServesTenantGroup checks the wiring every other test relies on:
// the host kube-apiserver serves tenant.io/v1alpha1 through the aggregator.
func TestStackServesTenantGroup(t *testing.T) {
	s := framework.Current()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	out, _, err := s.Kubectl(ctx, stack.AdminUser, "api-versions")
	if err != nil {
		t.Fatal(err)
	}
	if !containsLine(out, "tenant.io/v1alpha1") {
		t.Errorf("kubectl api-versions does not list tenant.io/v1alpha1:\n%s", out)
	}

	status, _, err := s.Kubectl(ctx, stack.AdminUser, "get", "apiservice", stack.TenantAPIServiceName,
		"-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`)
	if err != nil {
		t.Fatal(err)
	}
	if status != "True" {
		t.Errorf("APIService %s Available=%q, want True", stack.TenantAPIServiceName, status)
	}
}

func containsLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

// TestHostControllerManager checks the host's kube-controller-manager: the
// garbage collector deletes dependents of a deleted owner, a deleted
// Namespace really goes away, and a new Namespace gets its default
// ServiceAccount, which the ServiceAccount admission plugin wants of pods.
func TestHostControllerManager(t *testing.T) {
	s := framework.Current()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client, _, err := s.Clients(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}

	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "host-kcm-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	configMaps := client.CoreV1().ConfigMaps(ns.Name)
	owner, err := configMaps.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := configMaps.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:            "dependent",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	background := metav1.DeletePropagationBackground
	if err := configMaps.Delete(ctx, owner.Name, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := configMaps.Get(ctx, "dependent", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}); err != nil {
		t.Fatalf("the dependent ConfigMap of a deleted owner is still there after 30s: %v (logs: %s)", err, s.LogPath("kube-controller-manager"))
	}
	t.Logf("garbage collected the dependent in %s", time.Since(start).Round(10*time.Millisecond))

	if err := client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	var last *corev1.Namespace
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := client.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		last = got
		return false, err
	}); err != nil {
		var conditions []string
		if last != nil {
			for _, c := range last.Status.Conditions {
				if c.Status == corev1.ConditionTrue {
					conditions = append(conditions, fmt.Sprintf("%s: %s", c.Type, c.Message))
				}
			}
		}
		t.Fatalf("namespace %s is still there 60s after its deletion: %v; conditions: %q", ns.Name, err, conditions)
	}
	t.Logf("namespace deleted in %s", time.Since(start).Round(10*time.Millisecond))

	// A pod created right after its namespace is admitted: the ServiceAccount
	// plugin waits a little for the default ServiceAccount.
	fresh, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "host-kcm-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().Namespaces().Delete(context.Background(), fresh.Name, metav1.DeleteOptions{})
	})
	pod, err := client.CoreV1().Pods(fresh.Name).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a pod in a new namespace: %v", err)
	}
	if pod.Spec.ServiceAccountName != "default" {
		t.Errorf("pod.spec.serviceAccountName = %q, want default (set by the ServiceAccount admission plugin)", pod.Spec.ServiceAccountName)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts(fresh.Name).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}); err != nil {
		t.Fatalf("namespace %s has no default ServiceAccount after 30s: %v", fresh.Name, err)
	}
}
