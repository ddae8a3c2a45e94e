package console

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// browserOnlyEnv makes TestMain start the browser only, print its process
// ID and wait: the child process of TestBrowserEndsWithTheTests.
const browserOnlyEnv = "TENANT_CONSOLE_BROWSER_ONLY"

// TestBrowserEndsWithTheTests runs this test binary again as a child that
// only starts the browser, kills the child as a test timeout or a signal
// would end it (no deferred call runs), and checks that no process of the
// browser's (the browser, its zygote, renderers and GPU process) outlives
// it.
func TestBrowserEndsWithTheTests(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), browserOnlyEnv+"=1")
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill() //nolint:errcheck
	var pid int
	scanner := bufio.NewScanner(out)
	for scanner.Scan() {
		if v, ok := strings.CutPrefix(scanner.Text(), "browser "); ok {
			if pid, err = strconv.Atoi(v); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if pid == 0 {
		t.Fatal("the child started no browser")
	}
	// The browser runs, and has started processes of its own.
	if procs := groupProcesses(t, pid); len(procs) < 2 {
		t.Fatalf("browser group %d: processes %v, want the browser and its children", pid, procs)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	var left []string
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		left = groupProcesses(t, pid)
		return len(left) == 0, nil
	}); err != nil {
		t.Errorf("processes of the browser still running 10 s after the test process was killed: %v", left)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// groupProcesses lists the live processes of process group pgid, as
// "<pid> <command>".
func groupProcesses(t *testing.T, pgid int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces.
		s := string(stat)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			out = append(out, fmt.Sprintf("%d %s", pid, s[strings.IndexByte(s, '(')+1:end]))
		}
	}
	return out
}
