package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// user runs kubectl (and through it the plugin) as one stack user, with a
// kubeconfig of its own that commands such as `ns use` may change.
type user struct {
	name       string
	kubeconfig string
	kubectl    string
}

// newUser copies name's kubeconfig for this test.
func newUser(t *testing.T, name string) *user {
	t.Helper()
	s := framework.Current()
	data, err := os.ReadFile(s.KubeconfigPath(name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return &user{name: name, kubeconfig: path, kubectl: s.KubectlPath()}
}

// result is one command's outcome.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return "exit " + strconv.Itoa(r.code) + "\nstdout:\n" + r.stdout + "stderr:\n" + r.stderr
}

// environ is the environment of the user's commands: the plugin first on
// PATH, the user's kubeconfig, a discovery cache of the package's own.
func (u *user) environ() []string {
	// The built plugin first; no other kubectl-tenant (say a developer's
	// _output/bin) on PATH.
	path := []string{pluginDir}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "kubectl-tenant")); err != nil {
			path = append(path, dir)
		}
	}
	env := []string{
		"PATH=" + strings.Join(path, string(os.PathListSeparator)),
		"KUBECONFIG=" + u.kubeconfig,
		"KUBECACHEDIR=" + filepath.Join(pluginDir, "cache"),
		"HOME=" + os.Getenv("HOME"),
	}
	return env
}

// run runs program (a path, or a name looked up on the user's PATH) with
// args.
func (u *user) runProgram(ctx context.Context, program string, args ...string) result {
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Env = u.environ()
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errOut.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		r.code = -1
		r.stderr += err.Error()
	}
	return r
}

// kubectl runs the stack's kubectl as the user.
func (u *user) kubectlRun(ctx context.Context, args ...string) result {
	return u.runProgram(ctx, u.kubectl, args...)
}

// tenant runs `kubectl tenant args...` as the user: kubectl finds the
// plugin on PATH.
func (u *user) tenant(ctx context.Context, args ...string) result {
	return u.kubectlRun(ctx, append([]string{"tenant"}, args...)...)
}

// ok runs `kubectl tenant args...` and fails the test unless it exits 0.
func (u *user) ok(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	r := u.tenant(ctx, args...)
	if r.code != 0 {
		t.Fatalf("%s: kubectl tenant %s: %s", u.name, strings.Join(args, " "), r)
	}
	return r.stdout
}

// okJSON runs `kubectl tenant args... -o json` and decodes its output into v.
func (u *user) okJSON(ctx context.Context, t *testing.T, v any, args ...string) {
	t.Helper()
	out := u.ok(ctx, t, append(args, "-o", "json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("%s: kubectl tenant %s -o json: %v\n%s", u.name, strings.Join(args, " "), err, out)
	}
}

// fails runs `kubectl tenant args...`, fails the test unless it exits with
// code, and returns stderr.
func (u *user) fails(ctx context.Context, t *testing.T, code int, args ...string) result {
	t.Helper()
	r := u.tenant(ctx, args...)
	if r.code != code {
		t.Fatalf("%s: kubectl tenant %s: want exit %d, got %s", u.name, strings.Join(args, " "), code, r)
	}
	return r
}

// mustContain fails the test unless s contains every want.
func mustContain(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, s)
		}
	}
}

// mustNotContain fails the test if s contains any of unwanted.
func mustNotContain(t *testing.T, what, s string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(s, w) {
			t.Errorf("%s contains %q:\n%s", what, w, s)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// networkAttachments are the NetworkAttachmentDefinitions OVN-Kubernetes
// renders a network into a host namespace with.
var networkAttachments = schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}

// hostDynamic is the host's dynamic client as the provider admin.
func hostDynamic(t *testing.T) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(framework.Current().RESTConfig(stack.AdminUser))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
