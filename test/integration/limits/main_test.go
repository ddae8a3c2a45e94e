// Package limits tests the product where the host's own components reach
// their limits: a tenant Network rendered into more namespaces than
// OVN-Kubernetes' cluster-manager can name in its status. Its stack is set
// up as `make run` sets it up (tenants acme for alice and globex for bob);
// each test takes the host where no other package's test would want it, so
// the package has a stack of its own, torn down rather than cleaned.
package limits

import (
	"os"
	"testing"

	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m, stack.Options{Setup: stack.Demo}))
}
