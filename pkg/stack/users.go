package stack

import (
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

// Users of every stack. The tokens are random per stack.
const (
	// AdminUser is the provider admin, a member of system:masters.
	AdminUser = "admin"
	// TenantAPIServerUser is the identity the tenant-apiserver process runs as
	// on the host, the user name of its ServiceAccount.
	TenantAPIServerUser = "system:serviceaccount:" + TenantAPIServerNamespace + ":" + TenantAPIServerServiceName
	// KubeControllerManagerUser is the identity of kube-controller-manager,
	// bound by kube-apiserver's bootstrap RBAC policy to the ClusterRole of
	// the same name.
	KubeControllerManagerUser = "system:kube-controller-manager"
)

// User is a host user authenticated by a static bearer token.
type User struct {
	// Name is the user name kube-apiserver reports.
	Name string
	// Groups are the user's groups; kube-apiserver adds system:authenticated.
	Groups []string
	// Token is the bearer token; a random one is generated when empty.
	Token string
}

// DefaultUsers returns the users of every stack: the provider admin, alice
// (tenant acme), bob (tenant globex), carol (a tenant user of no tenant), the
// tenant-apiserver's own service account, kube-controller-manager,
// tenant-dns's service account and the gateway's (Traefik's).
func DefaultUsers() []User {
	return []User{
		{Name: AdminUser, Groups: []string{"system:masters"}},
		{Name: "alice", Groups: []string{"tenant.io:acme"}},
		{Name: "bob", Groups: []string{"tenant.io:globex"}},
		{Name: "carol"},
		{Name: TenantAPIServerUser, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + TenantAPIServerNamespace, "system:authenticated"}},
		{Name: KubeControllerManagerUser},
		{Name: TenantDNSUser, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + TenantAPIServerNamespace, "system:authenticated"}},
		{Name: GatewayUser, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + GatewayNamespace, "system:authenticated"}},
	}
}

// kubeconfigFileName maps a user name to the base name of its kubeconfig:
// "alice" -> "alice.kubeconfig", a service account
// "system:serviceaccount:ns:name" -> "name.kubeconfig".
func kubeconfigFileName(user string) string {
	if rest, ok := strings.CutPrefix(user, "system:serviceaccount:"); ok {
		user = rest[strings.LastIndex(rest, ":")+1:]
	}
	return strings.NewReplacer(":", "-", "/", "-").Replace(user) + ".kubeconfig"
}

// completeUsers merges the default and extra users (an extra user replaces a
// default one of the same name) and fills in missing tokens.
func completeUsers(extra []User) ([]User, error) {
	users := DefaultUsers()
	for _, u := range extra {
		if u.Name == "" {
			return nil, fmt.Errorf("extra user with an empty name")
		}
		replaced := false
		for i := range users {
			if users[i].Name == u.Name {
				users[i], replaced = u, true
			}
		}
		if !replaced {
			users = append(users, u)
		}
	}
	files := map[string]string{}
	for i := range users {
		if other, dup := files[kubeconfigFileName(users[i].Name)]; dup {
			return nil, fmt.Errorf("users %q and %q would share the kubeconfig %s", other, users[i].Name, kubeconfigFileName(users[i].Name))
		}
		files[kubeconfigFileName(users[i].Name)] = users[i].Name
		if users[i].Token == "" {
			b := make([]byte, 24)
			if _, err := rand.Read(b); err != nil {
				return nil, err
			}
			users[i].Token = hex.EncodeToString(b)
		}
		users[i].Groups = append([]string(nil), users[i].Groups...)
	}
	return users, nil
}

// writeTokenFile writes kube-apiserver's --token-auth-file:
// token,user,uid,"group1,group2".
func writeTokenFile(path string, users []User) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	for _, u := range users {
		if err := w.Write([]string{u.Token, u.Name, u.Name, strings.Join(u.Groups, ",")}); err != nil {
			_ = f.Close()
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
