// Package framework is what the integration tests share: one stack per
// test package (RunMain, Current), contexts and clients.
package framework

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"tenant.io/tenant-apiserver/pkg/stack"
)

// KeepEnv names the environment variable that, set to any non-empty value,
// keeps the work dir (logs, etcd data, kubeconfigs) of a test package's stack.
// A package whose tests fail keeps it too.
const KeepEnv = "TENANT_STACK_KEEP"

var current *stack.Stack

// RunMain starts one stack for a test package, runs its tests and stops the
// stack. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(framework.RunMain(m, stack.Options{})) }
//
// Tests reach the stack through Current. Progress goes to stderr unless
// opts.Log is set.
func RunMain(m *testing.M, opts stack.Options) int {
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	if os.Getenv(KeepEnv) != "" {
		opts.KeepWorkDir = true
	}
	s, err := stack.Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: starting the test stack: %v\n", err)
		return 1
	}
	current = s
	if opts.Setup != nil {
		if err := opts.Setup(context.Background(), s); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: setting up the test stack: %v\n", err)
			s.KeepWorkDir()
			_ = s.Stop()
			return 1
		}
	}

	// An interrupted test binary stops its stack before dying. (A killed
	// one takes its processes with it: they die with their parent.)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig, ok := <-signals
		if !ok {
			return
		}
		fmt.Fprintf(os.Stderr, "%v: stopping the test stack\n", sig)
		_ = s.Stop()
		os.Exit(1)
	}()

	code := m.Run()

	signal.Stop(signals)
	close(signals)
	if code != 0 {
		s.KeepWorkDir()
		fmt.Fprintf(os.Stderr, "tests failed: the stack's logs are kept in %s\n", s.LogDir())
	}
	if err := s.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the test stack: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Current is the stack RunMain started for this test package; nil outside
// RunMain.
func Current() *stack.Stack {
	return current
}
