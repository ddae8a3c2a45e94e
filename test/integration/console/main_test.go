// Package console tests the web console the way its users meet it: a real
// headless Chromium signs in as the stack's users and works through the
// pages of a console in front of the host kube-apiserver, against a stack
// set up as `make run` sets it up (acme for alice, globex for bob, carol of
// no tenant, the provider admin). What the pages show is compared with what
// the API holds; screenshots of every page go to
// _output/console/screenshots.
package console

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// newcomer is the member of the tenant the admin onboards in the browser.
const newcomer = "ida"

// browserCtx is the Chromium every test opens its users' windows in.
var browserCtx context.Context

func TestMain(m *testing.M) {
	code := func() int {
		path, err := chromiumPath()
		if err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
			return 1
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path),
			chromedp.NoSandbox, // root in CI containers; the pages are our own
			// The console's certificate is signed by the stack's own CA,
			// which Chromium's trust store does not hold.
			chromedp.Flag("ignore-certificate-errors", true),
			chromedp.WindowSize(1280, 900),
		)
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		defer cancelAlloc()
		ctx, cancel := chromedp.NewContext(allocCtx)
		defer cancel()
		if err := chromedp.Run(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: starting %s: %v\n", path, err)
			return 1
		}
		browserCtx = ctx
		return framework.RunMain(m, stack.Options{
			Console:    true,
			ExtraUsers: []stack.User{{Name: newcomer}},
			Setup:      stack.Demo,
		})
	}()
	os.Exit(code)
}

// chromiumPath finds the browser hack/install-test-deps.sh installs
// (Debian's chromium-headless-shell), or $CHROMIUM.
func chromiumPath() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium-headless-shell", "chromium", "headless_shell", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found: `make test-deps` (hack/install-test-deps.sh) installs Debian's chromium-headless-shell; or set CHROMIUM")
}

// screenshotDir is where the tests leave a screenshot of each page.
func screenshotDir() (string, error) {
	root, err := stack.RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "_output", "console", "screenshots")
	return dir, os.MkdirAll(dir, 0o755)
}
