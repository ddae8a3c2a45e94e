package stack

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// tenantEtcdProcess is the etcd the tenant-apiserver stores into: its own
// (Options.TenantEtcd) or the host's.
func (s *Stack) tenantEtcdProcess() (*process, error) {
	p := s.etcd
	if s.opts.TenantEtcd {
		p = s.tenantEtcd
	}
	if p == nil {
		return nil, fmt.Errorf("the stack runs no etcd")
	}
	return p, nil
}

// KillTenantEtcd SIGKILLs the etcd the tenant-apiserver stores into, as a
// crash or an OOM kill would. Its data dir stays: StartTenantEtcd brings
// the same member back.
func (s *Stack) KillTenantEtcd() error {
	p, err := s.tenantEtcdProcess()
	if err != nil {
		return err
	}
	return p.kill()
}

// StartTenantEtcd starts the killed etcd of KillTenantEtcd again with the
// same flags, ports and data dir, and waits until it reports itself
// healthy.
func (s *Stack) StartTenantEtcd(ctx context.Context) error {
	p, err := s.tenantEtcdProcess()
	if err != nil {
		return err
	}
	if err := p.start(); err != nil {
		return err
	}
	t := time.Now()
	err = p.waitReady(ctx, s.opts.StartTimeout, func(ctx context.Context) error {
		return etcdHealthy(ctx, s.TenantEtcdURL())
	})
	if err == nil {
		s.logf("%s ready on %s (%s)", p.name, s.TenantEtcdURL(), time.Since(t).Round(100*time.Millisecond))
	}
	return err
}

// PauseTenantEtcd SIGSTOPs the process group of the etcd the
// tenant-apiserver stores into: etcd keeps its sockets open and accepts
// connections, but answers nothing until ResumeTenantEtcd, like a member
// stalled on a dying disk or starved of CPU.
func (s *Stack) PauseTenantEtcd() error {
	return s.signalTenantEtcd(syscall.SIGSTOP)
}

// ResumeTenantEtcd SIGCONTs that process group after PauseTenantEtcd.
func (s *Stack) ResumeTenantEtcd() error {
	return s.signalTenantEtcd(syscall.SIGCONT)
}

// signalTenantEtcd sends sig to the process group of the running etcd of
// the tenant-apiserver.
func (s *Stack) signalTenantEtcd(sig syscall.Signal) error {
	p, err := s.tenantEtcdProcess()
	if err != nil {
		return err
	}
	pid := p.pid()
	if pid == 0 {
		return fmt.Errorf("%s is not running", p.name)
	}
	// The process was started as the leader of its own group (see
	// process.start), so -pid is its group.
	if err := syscall.Kill(-pid, sig); err != nil {
		return fmt.Errorf("sending %v to %s (pgid %d): %w", sig, p.name, pid, err)
	}
	return nil
}

// etcdHealthy asks etcd at url for its /health.
func etcdHealthy(ctx context.Context, url string) error {
	body, err := httpGet(ctx, &http.Client{Timeout: 5 * time.Second}, url+"/health", "")
	if err == nil && !strings.Contains(body, `"health":"true"`) {
		err = fmt.Errorf("unhealthy: %s", body)
	}
	return err
}
