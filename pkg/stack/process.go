package stack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// logTailLines is how many lines of a process log a start-up error carries.
const logTailLines = 40

// process is one long-running binary of the stack. Each start puts it in its
// own process group, so that stopping it also stops anything it spawned, and
// asks the kernel to SIGKILL it when the starting thread dies, so that a
// killed test binary leaves nothing behind.
type process struct {
	name    string
	path    string
	args    []string
	env     []string
	logPath string

	// restart, when set, starts the process again when it exits without
	// being stopped, as a kubelet restarts a crashed container: after
	// restartBackoff (a second when zero), doubled for each exit within
	// restartResetAfter of its start, up to restartBackoffMax.
	restart        bool
	restartBackoff time.Duration

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{} // closed when cmd.Wait returns
	err      error         // cmd.Wait's result, valid after done is closed
	stopped  bool          // stop was called since the last start: no restart
	restarts int           // restarts after exits
	backoff  time.Duration // the wait before the next restart
}

// Restart backoff bounds, as a kubelet's: it doubles up to five minutes
// there, and is reset once a container has run for ten; the stack's
// processes start in seconds.
const (
	restartBackoffMax = 30 * time.Second
	restartResetAfter = time.Minute
)

// start launches the process, appending its stdout and stderr to logPath.
func (p *process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = false
	p.backoff = 0
	return p.startLocked()
}

// startLocked is start with p.mu held.
func (p *process) startLocked() error {
	if p.cmd != nil && !isClosed(p.done) {
		return fmt.Errorf("%s is already running (pid %d)", p.name, p.cmd.Process.Pid)
	}
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening log of %s: %w", p.name, err)
	}
	fmt.Fprintf(logFile, "=== %s: starting %s %s\n", time.Now().Format(time.RFC3339Nano), p.path, strings.Join(p.args, " "))

	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), p.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return fmt.Errorf("starting %s: %w", p.name, err)
	}
	done := make(chan struct{})
	p.cmd, p.done, p.err = cmd, done, nil
	started := time.Now()
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(logFile, "=== %s: %s exited: %v\n", time.Now().Format(time.RFC3339Nano), p.name, exitDescription(err))
		p.mu.Lock()
		p.err = err
		wait, restart := p.nextBackoff(started)
		p.mu.Unlock()
		if restart {
			fmt.Fprintf(logFile, "=== %s: restarting %s in %s\n", time.Now().Format(time.RFC3339Nano), p.name, wait)
		}
		_ = logFile.Close()
		close(done)
		if restart {
			time.AfterFunc(wait, p.restartAfterExit)
		}
	}()
	return nil
}

// nextBackoff says whether the process, started at started and just
// exited, is to be restarted, and after how long. p.mu is held.
func (p *process) nextBackoff(started time.Time) (time.Duration, bool) {
	if !p.restart || p.stopped {
		return 0, false
	}
	base := p.restartBackoff
	if base <= 0 {
		base = time.Second
	}
	switch {
	case p.backoff == 0 || time.Since(started) >= restartResetAfter:
		p.backoff = base
	default:
		p.backoff = min(2*p.backoff, restartBackoffMax)
	}
	return p.backoff, true
}

// restartAfterExit starts the exited process again, unless it was stopped
// (or started) meanwhile.
func (p *process) restartAfterExit() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || !isClosed(p.done) {
		return
	}
	p.restarts++
	if err := p.startLocked(); err != nil {
		// Nothing is running and nothing will restart it: say so where
		// its exit was logged.
		if f, ferr := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); ferr == nil {
			fmt.Fprintf(f, "=== %s: restarting %s failed: %v\n", time.Now().Format(time.RFC3339Nano), p.name, err)
			_ = f.Close()
		}
	}
}

// restartCount is how many times the process was restarted after exiting.
func (p *process) restartCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.restarts
}

// exitError reports whether the process has exited, and how.
func (p *process) exitError() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return true, errors.New("never started")
	}
	if !isClosed(p.done) {
		return false, nil
	}
	return true, fmt.Errorf("%s exited: %s", p.name, exitDescription(p.err))
}

// pid returns the process id of the running process, or 0.
func (p *process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || isClosed(p.done) {
		return 0
	}
	return p.cmd.Process.Pid
}

// stop sends SIGTERM to the process group, waits up to grace for the process
// to exit, then SIGKILLs the group. Stopping a stopped process is a no-op.
func (p *process) stop(grace time.Duration) error {
	p.mu.Lock()
	p.stopped = true
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	if isClosed(done) {
		// Exited earlier: its process group id may belong to someone else by now.
		return nil
	}
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
	}
	// Kill whatever is left in the group, including children of an exited leader.
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing %s (pgid %d): %w", p.name, pgid, err)
	}
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, pgid)
	}
}

// kill SIGKILLs the process group at once, like a crash or an OOM kill.
func (p *process) kill() error {
	return p.stop(0)
}

// tail returns the last n lines of the process log.
func (p *process) tail(n int) string {
	return tailFile(p.logPath, n)
}

// withLog decorates err with the tail of the process log.
func (p *process) withLog(err error) error {
	return fmt.Errorf("%w\n--- last %d lines of %s ---\n%s", err, logTailLines, p.logPath, p.tail(logTailLines))
}

// waitReady polls check until it succeeds, the process exits, ctx is done or
// timeout passes. Errors carry the tail of the process log.
func (p *process) waitReady(ctx context.Context, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var lastErr error
	ticker := time.NewTicker(200 * time.Millisecond)
	defer ticker.Stop()
	for {
		if exited, err := p.exitError(); exited {
			return p.withLog(fmt.Errorf("%s is not running: %w", p.name, err))
		}
		checkCtx, checkCancel := context.WithTimeout(ctx, 5*time.Second)
		lastErr = check(checkCtx)
		checkCancel()
		if lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return p.withLog(fmt.Errorf("%s not ready after %s: %w (last check: %v)", p.name, timeout, ctx.Err(), lastErr))
		case <-ticker.C:
		}
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func exitDescription(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// tailFile returns the last n lines of a file, reading at most its last 64 KiB.
func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	defer func() { _ = f.Close() }()
	const maxRead = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > maxRead {
		_, _ = f.Seek(st.Size()-maxRead, io.SeekStart)
	}
	data, _ := io.ReadAll(f)
	data = bytes.TrimRight(data, "\n")
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
