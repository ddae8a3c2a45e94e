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
	"strconv"
	"syscall"
	"testing"

	"github.com/chromedp/chromedp"

	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// Users of the tests besides the stack's alice (acme), bob (globex), carol
// (no tenant) and admin.
const (
	newcomer = "ida" // TestProviderOnboarding (the tenant the admin onboards in the browser) and the benchmarks
	router   = "gia" // TestRoutes: the member of a tenant publishing HTTP routes
)

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
			// Chromium and every process it forks (zygote, renderers, GPU)
			// in a process group of their own, which reapBrowser kills.
			// chromedp's own default, that the kernel kills the browser
			// process when this one ends, is kept; it reaches only that one
			// process, and its children outlived it.
			chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
			}),
		)
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		defer cancelAlloc()
		ctx, cancel := chromedp.NewContext(allocCtx)
		defer cancel()
		if err := chromedp.Run(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: starting %s: %v\n", path, err)
			return 1
		}
		browser := chromedp.FromContext(ctx).Browser.Process()
		reap, err := reapBrowser(browser)
		if err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
			return 1
		}
		defer reap()
		if os.Getenv(browserOnlyEnv) != "" {
			// TestBrowserEndsWithTheTests' child: say which browser, and
			// wait to be killed.
			fmt.Printf("browser %d\n", browser.Pid)
			select {}
		}
		browserCtx = ctx
		return framework.RunMain(m, stack.Options{
			Console:    true,
			ExtraUsers: []stack.User{{Name: newcomer}, {Name: router}},
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

// reapBrowser makes sure that browser's process group (the browser and
// every process it started) ends with this test process, however that
// ends: the returned function kills it, for the ends that run deferred
// calls; a watchdog, a shell outside this process, kills it for those that
// do not (a test timeout's panic, a signal, a crash), within a second.
func reapBrowser(browser *os.Process) (func(), error) {
	if browser == nil {
		return nil, errors.New("chromedp started no browser process")
	}
	group := strconv.Itoa(browser.Pid) // Setpgid: the browser leads its group
	watchdog := exec.Command("sh", "-c", `while kill -0 "$1" 2>/dev/null; do sleep 1; done; kill -s KILL -- "-$2" 2>/dev/null`,
		"reap-chromium", strconv.Itoa(os.Getpid()), group)
	// Not in this process' group, so that a signal to it (Ctrl-C) leaves
	// the watchdog to do its work.
	watchdog.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := watchdog.Start(); err != nil {
		return nil, fmt.Errorf("starting the watchdog of the browser's processes: %w", err)
	}
	return func() {
		_ = syscall.Kill(-browser.Pid, syscall.SIGKILL)
		_ = watchdog.Process.Kill()
		_ = watchdog.Wait()
	}, nil
}
