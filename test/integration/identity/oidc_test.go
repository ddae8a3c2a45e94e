package identity

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestOIDCGroupClaim signs users in through the OIDC identity provider:
// one in the IdP group "tenant-<tenant>" is in group tenant.io:<tenant> on
// the host and a member of the tenant, without being named in the Tenant;
// one in other groups, or in an IdP group that spells "tenant.io:<tenant>"
// itself, is a member of nothing.
func TestOIDCGroupClaim(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := framework.Current()
	admin, err := clientset.NewForConfig(s.RESTConfig(stack.AdminUser))
	if err != nil {
		t.Fatal(err)
	}
	suffix := make([]byte, 2)
	if _, err := rand.Read(suffix); err != nil {
		t.Fatal(err)
	}
	name := "oidc-" + hex.EncodeToString(suffix)
	prefix := int32(24)
	if _, err := admin.TenantV1alpha1().Tenants().Create(ctx, &tenantv1alpha1.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       tenantv1alpha1.TenantSpec{Network: tenantv1alpha1.TenantNetwork{PrefixLength: &prefix}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.TenantV1alpha1().Tenants().Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	signedIn := func(t *testing.T, sub string, groups ...string) *rest.Config {
		t.Helper()
		tok, err := idp.token(audience, sub, groups)
		if err != nil {
			t.Fatal(err)
		}
		cfg := rest.CopyConfig(s.RESTConfig(stack.AdminUser))
		cfg.BearerToken = tok
		return cfg
	}
	// whoami is the user the host makes of cfg's token, once the JWT
	// authenticator has fetched the issuer's keys.
	whoami := func(t *testing.T, cfg *rest.Config) authenticationv1.UserInfo {
		t.Helper()
		kube, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var info authenticationv1.UserInfo
		var last error
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			review, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
			if last = err; err != nil {
				return false, nil
			}
			info = review.Status.UserInfo
			return true, nil
		}); err != nil {
			t.Fatalf("the host does not take the IdP's token: %v (last: %v)", err, last)
		}
		return info
	}
	// tenants are the Tenants cfg's user sees, once membership settled.
	tenants := func(t *testing.T, cfg *rest.Config, want int) []string {
		t.Helper()
		cs, err := clientset.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		var last error
		_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			list, err := cs.TenantV1alpha1().Tenants().List(ctx, metav1.ListOptions{})
			if last = err; err != nil {
				return false, nil
			}
			names = names[:0]
			for _, tn := range list.Items {
				names = append(names, tn.Name)
			}
			return len(names) == want, nil
		})
		if last != nil {
			t.Fatalf("listing Tenants: %v", last)
		}
		return names
	}

	t.Run("IdP group tenant-<tenant> makes a member", func(t *testing.T) {
		cfg := signedIn(t, "dave", "tenant-"+name, "staff")
		info := whoami(t, cfg)
		if info.Username != "oidc:dave" || !slices.Contains(info.Groups, "tenant.io:"+name) || !slices.Contains(info.Groups, "oidc:staff") {
			t.Fatalf("the host made %s in %v of the token; want oidc:dave in tenant.io:%s and oidc:staff", info.Username, info.Groups, name)
		}
		if got := tenants(t, cfg, 1); !slices.Equal(got, []string{name}) {
			t.Errorf("oidc:dave sees Tenants %v, want its own %s", got, name)
		}
		cs, err := clientset.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ns := &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "from-oidc"}}
		if _, err := cs.TenantV1alpha1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Errorf("oidc:dave creating a Namespace of its tenant: %v", err)
		}
	})

	for _, c := range []struct {
		what   string
		groups []string
	}{
		{"other IdP groups make a member of nothing", []string{"staff", name}},
		{"an IdP group named tenant.io:<tenant> is prefixed, not taken as the tenant's", []string{"tenant.io:" + name, "tenant.io-" + name}},
	} {
		t.Run(c.what, func(t *testing.T) {
			cfg := signedIn(t, "erin", c.groups...)
			info := whoami(t, cfg)
			for _, g := range info.Groups {
				if g == "tenant.io:"+name || g == "tenant.io-"+name {
					t.Fatalf("the host put oidc:erin in %s (groups %v)", g, info.Groups)
				}
			}
			// Give the server's membership the time it gave dave's.
			time.Sleep(time.Second)
			if got := tenants(t, cfg, 0); len(got) != 0 {
				t.Errorf("oidc:erin in IdP groups %v sees Tenants %v, want none", c.groups, got)
			}
		})
	}
}
