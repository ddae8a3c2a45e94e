package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	tenantclientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestAuthorizationFollowsHostRBAC: tenant-apiserver asks the host whether
// a caller may make a request, and keeps the allowed answers for the
// stack's --authorization-webhook-cache-authorized-ttl (10 s), asking again
// in the background before they expire. A permission granted by host RBAC
// is honoured, a steady stream of the same request keeps being allowed
// (from answers refreshed behind it), and a revoked one is refused again
// within the TTL, found by such a refresh.
func TestAuthorizationFollowsHostRBAC(t *testing.T) {
	s := framework.Current()
	ctx := framework.Context(t, 3*time.Minute)
	host, _, err := s.Clients(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	name := "authz-reader-" + rand.String(5)
	caller, err := tenantclientset.NewForConfig(framework.Unthrottled(s.DirectTenantConfig(name, "authz-test")))
	if err != nil {
		t.Fatal(err)
	}
	list := func() error {
		_, err := caller.TenantV1alpha1().AddressPools().List(ctx, metav1.ListOptions{})
		return err
	}
	if err := list(); !apierrors.IsForbidden(err) {
		t.Fatalf("list of AddressPools by %s before any binding: %v, want 403", name, err)
	}

	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{"tenant.io"}, Resources: []string{"addresspools"}, Verbs: []string{"list"},
	}}}
	if _, err := host.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}}}
	if _, err := host.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = host.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	// The 403 above is kept for the unauthorized TTL: wait it out.
	poll := func(what string, want func(error) bool) time.Time {
		t.Helper()
		for {
			err := list()
			if want(err) {
				return time.Now()
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: last answer %v", what, err)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	poll("list allowed once bound", func(err error) bool { return err == nil })

	before := authzCacheCounters(ctx, t, s)
	// Longer than three quarters of the TTL, one request every 250 ms: each
	// is allowed, and the answer is refreshed behind them at least once.
	for end := time.Now().Add(9 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if err := list(); err != nil {
			t.Fatalf("list by %s while bound: %v", name, err)
		}
	}
	during := authzCacheCounters(ctx, t, s)
	if during[`refreshes_total{result="allowed"}`] <= before[`refreshes_total{result="allowed"}`] {
		t.Errorf("no allowed answer refreshed while the same request was made for 9 s: %v -> %v", before, during)
	}
	if during[`lookups_total{result="hit"}`] <= before[`lookups_total{result="hit"}`] {
		t.Errorf("no request answered from the kept answers: %v -> %v", before, during)
	}

	if err := host.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	refused := poll("list refused once unbound", apierrors.IsForbidden)
	// Within the TTL plus one review; the slack is for a loaded machine.
	if took := refused.Sub(revoked); took > 30*time.Second {
		t.Errorf("a revoked permission was used for %v after the binding's delete; the TTL is 10 s", took)
	}
	after := authzCacheCounters(ctx, t, s)
	if after[`refreshes_total{result="revoked"}`] <= during[`refreshes_total{result="revoked"}`] {
		t.Errorf("the revocation was not found by a refresh: %v -> %v", during, after)
	}
}

// authzCacheCounters reads tenant-apiserver's tenant_authorization_cache
// counters, by name and labels without the prefix.
func authzCacheCounters(ctx context.Context, t *testing.T, s *stack.Stack) map[string]float64 {
	t.Helper()
	text, err := s.TenantMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, "tenant_authorization_cache_")
		if !ok {
			continue
		}
		series, value, ok := strings.Cut(rest, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatal(fmt.Errorf("metric line %q: %w", line, err))
		}
		out[series] = v
	}
	return out
}
