package integration

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"tenant.io/tenant-apiserver/test/integration/framework"
)

func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m, framework.Options{Setup: framework.DemoTenants}))
}

// TestStackServesTenantGroup checks the wiring every other test relies on:
// the host kube-apiserver serves tenant.io/v1alpha1 through the aggregator.
func TestStackServesTenantGroup(t *testing.T) {
	s := framework.Current()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	out, _, err := s.Kubectl(ctx, framework.AdminUser, "api-versions")
	if err != nil {
		t.Fatal(err)
	}
	if !containsLine(out, "tenant.io/v1alpha1") {
		t.Errorf("kubectl api-versions does not list tenant.io/v1alpha1:\n%s", out)
	}

	status, _, err := s.Kubectl(ctx, framework.AdminUser, "get", "apiservice", framework.TenantAPIServiceName,
		"-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`)
	if err != nil {
		t.Fatal(err)
	}
	if status != "True" {
		t.Errorf("APIService %s Available=%q, want True", framework.TenantAPIServiceName, status)
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
