package plugin

import (
	"context"
	"fmt"
	"strings"

	"tenant.io/tenant-apiserver/pkg/tenantview"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

// Identity is who the caller is, as the host authenticated it.
type Identity struct {
	User   string   `json:"user"`
	Groups []string `json:"groups,omitempty"`
	// Provider is true when the caller may update Tenants: a provider
	// admin.
	Provider bool `json:"provider"`
	// Tenants are the tenants the caller belongs to.
	Tenants []tenantview.Membership `json:"tenants"`
}

// session is the caller and the clients a command uses.
type session struct {
	cfg *rest.Config
	*clients
	identity Identity
	// tenants are the Tenants the caller can read (its own; all for a
	// provider).
	tenants []tenantv1alpha1.Tenant
	// listErr is the API's 403 when the caller may not list Tenants.
	listErr error
}

// session resolves the caller once per command.
func (o *Options) getSession(ctx context.Context) (*session, error) {
	if o.session != nil {
		return o.session, nil
	}
	cfg, err := o.restConfig()
	if err != nil {
		return nil, err
	}
	c, err := newClients(cfg)
	if err != nil {
		return nil, err
	}
	review, err := c.kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("asking the cluster who you are: %w", err)
	}
	s := &session{cfg: cfg, clients: c}
	s.identity.User = review.Status.UserInfo.Username
	s.identity.Groups = review.Status.UserInfo.Groups

	access, err := c.kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: tenantv1alpha1.SchemeGroupVersion.Group, Resource: "tenants", Verb: "update",
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("asking the cluster what you may do: %w", err)
	}
	s.identity.Provider = access.Status.Allowed

	list, err := c.api.Tenants().List(ctx, metav1.ListOptions{})
	if err != nil && !apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("listing your tenants: %w", err)
	}
	if list != nil {
		s.tenants = list.Items
	}
	s.listErr = err
	s.identity.Tenants = tenantview.Memberships(s.identity.User, s.identity.Groups, s.tenants)
	o.session = s
	return s, nil
}

// tenantScope is a tenant and the clients that act inside it.
type tenantScope struct {
	*clients
	tnt *tenantv1alpha1.Tenant
	// impersonated is true when a provider acts in the tenant through its
	// host group.
	impersonated bool
}

// scope is the tenant a tenant command acts in: --tenant, or the caller's
// only tenant.
func (o *Options) scope(ctx context.Context) (*tenantScope, error) {
	s, err := o.getSession(ctx)
	if err != nil {
		return nil, err
	}
	name := o.Tenant
	if name == "" {
		switch len(s.identity.Tenants) {
		case 0:
			if s.identity.Provider {
				return nil, fmt.Errorf("user %s is a provider admin and a member of no tenant: name one with --tenant", s.identity.User)
			}
			return nil, fmt.Errorf("user %s is not a member of any tenant; ask your provider to onboard you (kubectl tenant admin onboard NAME --member %s)", s.identity.User, s.identity.User)
		case 1:
			name = s.identity.Tenants[0].Tenant
		default:
			return nil, fmt.Errorf("user %s is a member of several tenants (%s) and may act in none; ask your provider to leave one", s.identity.User, strings.Join(tenantNames(s.identity.Tenants), ", "))
		}
	}
	return o.scopeOf(ctx, name)
}

// scopeOf is tenant name's scope: the caller's own clients when it is a
// member, else (a provider) clients impersonating the caller in the
// tenant's host group.
func (o *Options) scopeOf(ctx context.Context, name string) (*tenantScope, error) {
	s, err := o.getSession(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range s.identity.Tenants {
		if m.Tenant == name {
			return &tenantScope{clients: s.clients, tnt: s.tenantNamed(name)}, nil
		}
	}
	if !s.identity.Provider {
		return nil, fmt.Errorf("tenant %s: not found, or you are not one of its members", name)
	}
	t, err := s.api.Tenants().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(s.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: s.identity.User, Groups: []string{tenantview.HostGroupPrefix + name}}
	c, err := newClients(cfg)
	if err != nil {
		return nil, err
	}
	return &tenantScope{clients: c, tnt: t, impersonated: true}, nil
}

func (s *session) tenantNamed(name string) *tenantv1alpha1.Tenant {
	for i := range s.tenants {
		if s.tenants[i].Name == name {
			return &s.tenants[i]
		}
	}
	return nil
}

func tenantNames(ms []tenantview.Membership) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.Tenant)
	}
	return out
}
