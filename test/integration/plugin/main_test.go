// Package plugin tests kubectl-tenant the way its users run it: the stack's
// kubectl finds the built plugin on PATH, and every command goes through
// kube-apiserver, the aggregation layer and the tenant-apiserver of a stack
// set up as `make run` sets it up (tenants acme for alice and globex for bob,
// with public IPs and a provider service offered to acme). Outputs are
// compared with what the API holds. Clients this project did not write
// (an older kubectl, the Python client) are tested here too.
package plugin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// Users of the tests besides the stack's alice (acme), bob (globex), carol
// (no tenant) and admin.
const (
	newcomer = "ida"  // TestNewTenantJourney: the member of a tenant onboarded by the plugin
	hoster   = "hana" // TestHosts: the member of a tenant granted bare-metal servers
	router   = "gil"  // TestRoutes: the member of a tenant publishing HTTP routes
)

// pluginDir holds the built kubectl-tenant and kubectl_complete-tenant; the
// tests put it first on PATH.
var pluginDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kubectl-tenant-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		if err := buildPlugin(dir); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: building kubectl-tenant: %v\n", err)
			return 1
		}
		pluginDir = dir
		return framework.RunMain(m, stack.Options{
			ExtraUsers: []stack.User{{Name: newcomer}, {Name: hoster}, {Name: router}},
			// The provider's gateway, which writes the status of TestRoutes'
			// routes.
			Gateway: true,
			Setup:   stack.Demo,
		})
	}()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// buildPlugin builds kubectl-tenant into dir and puts the completion helper
// beside it, as `make plugin` does.
func buildPlugin(dir string) error {
	root, err := stack.RepoRoot()
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "kubectl-tenant"), "./cmd/kubectl-tenant")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	helper, err := os.ReadFile(filepath.Join(root, "cmd", "kubectl-tenant", "kubectl_complete-tenant"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "kubectl_complete-tenant"), helper, 0o755)
}
