package stack

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// shProcess is a process of /bin/sh running script, logging under dir.
func shProcess(t *testing.T, name, script string, restart bool) *process {
	t.Helper()
	p := &process{
		name: name, path: "/bin/sh", args: []string{"-c", script},
		logPath: filepath.Join(t.TempDir(), name+".log"),
		restart: restart, restartBackoff: 10 * time.Millisecond,
	}
	t.Cleanup(func() { _ = p.stop(time.Second) })
	return p
}

// waitFor polls cond every 10 ms for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestProcessRestartsAfterExit runs a process that exits at once: with a
// restart policy it is started again each time, with a growing backoff,
// until it is stopped; after that nothing starts it again.
func TestProcessRestartsAfterExit(t *testing.T) {
	p := shProcess(t, "crasher", "exit 3", true)
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "three restarts", func() bool { return p.restartCount() >= 3 })
	if err := p.stop(time.Second); err != nil {
		t.Fatal(err)
	}
	stopped := p.restartCount()
	// Longer than any backoff pending when stop was called (10 ms doubled
	// a few times).
	time.Sleep(time.Second)
	if got := p.restartCount(); got != stopped {
		t.Errorf("restarted %d times after stop", got-stopped)
	}
	if pid := p.pid(); pid != 0 {
		t.Errorf("running as pid %d after stop", pid)
	}
	log := tailFile(p.logPath, 1000)
	for _, want := range []string{"crasher exited: exit status 3", "restarting crasher in 10ms", "restarting crasher in 20ms", "restarting crasher in 40ms"} {
		if !strings.Contains(log, want) {
			t.Errorf("log does not say %q:\n%s", want, log)
		}
	}
	// Started again by hand, it restarts from the first backoff.
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a restart after a new start", func() bool { return p.restartCount() > stopped })
	if n := strings.Count(tailFile(p.logPath, 1000), "restarting crasher in 10ms"); n != 2 {
		t.Errorf("the first backoff was logged %d times, want 2 (once per start by hand)", n)
	}
}

// TestProcessNotRestarted: a process without a restart policy that exits,
// and one with a policy that is stopped or killed, stay down.
func TestProcessNotRestarted(t *testing.T) {
	once := shProcess(t, "once", "exit 0", false)
	if err := once.start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "exit", func() bool { exited, _ := once.exitError(); return exited })
	for _, stop := range []struct {
		name string
		stop func(p *process) error
	}{
		{"stopped", func(p *process) error { return p.stop(time.Second) }},
		{"killed", func(p *process) error { return p.kill() }},
	} {
		p := shProcess(t, stop.name, "sleep 30", true)
		if err := p.start(); err != nil {
			t.Fatal(err)
		}
		if err := stop.stop(p); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // ten times the first backoff
		if n, pid := p.restartCount(), p.pid(); n != 0 || pid != 0 {
			t.Errorf("%s: restarted %d times, running as pid %d", stop.name, n, pid)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if n := once.restartCount(); n != 0 {
		t.Errorf("a process without a restart policy restarted %d times", n)
	}
}
