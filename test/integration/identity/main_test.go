// Package identity tests how users an OIDC identity provider signs in
// become tenant members on Kubernetes: kube-apiserver runs with a
// structured authentication configuration (docs/identity.md) whose JWT
// authenticator trusts an issuer this test process serves on loopback,
// and maps the IdP's group "tenant-<tenant>" to tenant.io:<tenant>.
package identity

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// audience is the audience of the ID tokens kube-apiserver accepts.
const audience = "kubernetes"

// idp is the identity provider of the package's stack.
var idp *issuer

// authenticationConfig is the AuthenticationConfiguration of
// docs/identity.md, for the issuer iss: users are "oidc:<sub>", the IdP's
// group "tenant-<t>" is group tenant.io:<t>, every other group
// "oidc:<group>".
func authenticationConfig(iss *issuer) string {
	caJSON := fmt.Sprintf("%q", iss.CAPEM())
	return `apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ` + iss.URL() + `
    audiences: [` + audience + `]
    certificateAuthority: ` + caJSON + `
  claimMappings:
    username:
      claim: sub
      prefix: "oidc:"
    groups:
      expression: >-
        dyn(claims.groups).map(g, g.startsWith('tenant-')
          ? 'tenant.io:' + g.substring(7)
          : 'oidc:' + g)
`
}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	if idp, err = newIssuer(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: starting the identity provider: %v\n", err)
		return 1
	}
	defer idp.Close()
	dir, err := os.MkdirTemp("", "identity-authn-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	config := filepath.Join(dir, "authentication-config.yaml")
	if err := os.WriteFile(config, []byte(authenticationConfig(idp)), 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		return 1
	}
	// Only kube-apiserver's authentication and tenant-apiserver's
	// membership are looked at here: no networking components.
	return framework.RunMain(m, stack.Options{
		KubeAPIServerArgs: []string{"--authentication-config=" + config},
		SkipMetalLB:       true,
		SkipOVNKube:       true,
		Setup:             stack.DemoPools,
	})
}
