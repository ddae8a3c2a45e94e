package plugin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// pythonEnv names the Python interpreter of TestPythonClient; by default
// Debian's /usr/bin/python3, where hack/install-test-deps.sh installs the
// python3-kubernetes package.
const pythonEnv = "TENANT_TEST_PYTHON"

// TestPythonClient drives the API with the official Kubernetes Python
// client's dynamic client (test/clients/python/tenant_client.py): discovery,
// list, watch, create, patch, delete, and the 409, 422 (with its field),
// 403 and 404 a client must tell apart, as alice, bob and carol.
func TestPythonClient(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	python := os.Getenv(pythonEnv)
	if python == "" {
		python = "/usr/bin/python3"
	}
	if out, err := exec.CommandContext(ctx, python, "-c", "import kubernetes").CombinedOutput(); err != nil {
		t.Fatalf("%s has no kubernetes module (%v: %s): run hack/install-test-deps.sh, as make test does", python, err, out)
	}
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	s := framework.Current()
	cmd := exec.CommandContext(ctx, python, filepath.Join(root, "test", "clients", "python", "tenant_client.py"),
		s.KubeconfigPath("alice"), s.KubeconfigPath("bob"), s.KubeconfigPath("carol"))
	out, err := cmd.CombinedOutput()
	t.Logf("tenant_client.py:\n%s", out)
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "PASS") {
		t.Fatalf("the Python client's checks failed: %v", err)
	}
}
