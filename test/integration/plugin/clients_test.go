package plugin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// TestKubectlSkew drives tenant.io with the kubectls users bring: the
// stack's own (the server's version), kubectl one minor version older (the
// oldest the version skew policy promises, built by hack/build-tools.sh as
// skew-kubectl), and the kubectl of the machine image when there is one
// (older still: outside the policy, tested because users have it).
// Discovery, apply, get (the server's table), explain and wait work with
// each; the versions tested are logged and recorded in the README.
func TestKubectlSkew(t *testing.T) {
	s := framework.Current()
	kubectls := []struct{ name, path string }{
		{"stack", s.KubectlPath()},
		{"previous-minor", filepath.Join(filepath.Dir(s.KubectlPath()), "skew-kubectl")},
		{"machine-image", "/usr/bin/kubectl"},
	}
	for i, k := range kubectls {
		t.Run(k.name, func(t *testing.T) {
			if _, err := os.Stat(k.path); err != nil {
				if k.name == "machine-image" {
					t.Skipf("this machine has no %s", k.path)
				}
				t.Fatalf("%s: %v (hack/build-tools.sh builds it)", k.path, err)
			}
			ctx := framework.Context(t, 3*time.Minute)
			u := newUser(t, "alice")
			u.kubectl = k.path
			run := func(args ...string) string {
				t.Helper()
				r := u.kubectlRun(ctx, args...)
				if r.code != 0 {
					t.Fatalf("%s %s: %s", k.path, strings.Join(args, " "), r)
				}
				return r.stdout
			}
			var version struct {
				ClientVersion struct{ GitVersion string } `json:"clientVersion"`
			}
			if err := jsonUnmarshal(run("version", "--client", "-o", "json"), &version); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: kubectl %s", k.name, version.ClientVersion.GitVersion)

			mustContain(t, "api-resources", run("api-resources", "--api-group=tenant.io", "-o", "name"),
				"networks.tenant.io\n", "floatingips.tenant.io\n", "namespaces.tenant.io\n", "tenants.tenant.io\n")
			name := "skew-" + strconv.Itoa(i)
			manifest := filepath.Join(t.TempDir(), "network.yaml")
			if err := os.WriteFile(manifest, []byte("apiVersion: tenant.io/v1alpha1\nkind: Network\nmetadata:\n  name: "+name+"\nspec:\n  topology: Layer2\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			mustContain(t, "apply", run("apply", "-f", manifest), "network.tenant.io/"+name+" created")
			t.Cleanup(func() { u.kubectlRun(context.Background(), "delete", "--ignore-not-found", "-f", manifest) })
			mustContain(t, "wait", run("wait", "--for=condition=Ready", "networks.tenant.io/"+name, "--timeout=2m"), "network.tenant.io/"+name+" condition met")
			mustContain(t, "get", run("get", "networks.tenant.io", name), "TOPOLOGY", name, "Layer2")
			mustContain(t, "explain", run("explain", "networks.tenant.io.spec.topology"), "Layer2")
			mustContain(t, "apply (unchanged)", run("apply", "-f", manifest), "network.tenant.io/"+name+" unchanged")
			mustContain(t, "delete", run("delete", "-f", manifest), "network.tenant.io \""+name+"\" deleted")
		})
	}
}
