package stack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// Replica is one more tenant-apiserver process of a stack: the same flags as
// the stack's own (same etcd and prefix, same host identity and serving
// certificate) on a loopback port of its own. The APIService does not point
// at it; reach it with DirectConfig. Stack.Stop stops it too.
type Replica struct {
	stack *Stack
	port  int
	proc  *process
}

// StartTenantAPIServerReplica starts a replica named name (its process name
// for PID and LogPath, e.g. "tenant-apiserver-2"), with extraArgs after the
// flags of the stack's tenant-apiserver, Options.TenantAPIServerArgs
// included, and waits for its /readyz. A name may be reused once the
// replica that had it is no longer running; its log is appended to.
func (s *Stack) StartTenantAPIServerReplica(ctx context.Context, name string, extraArgs ...string) (*Replica, error) {
	if name == "" || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("invalid replica name %q", name)
	}
	switch name {
	case "etcd", "kube-apiserver", "kube-controller-manager", "metallb-controller", "ovnkube-cluster-manager", "tenant-apiserver":
		return nil, fmt.Errorf("replica name %q is taken by a process of the stack", name)
	}
	if s.tenantAPIServer == nil {
		return nil, fmt.Errorf("the stack runs no tenant-apiserver")
	}
	r := &Replica{stack: s, proc: &process{name: name, path: s.tenantAPIServer.path, env: s.opts.TenantAPIServerEnv, logPath: s.LogPath(name)}}
	if err := s.addReplica(r); err != nil {
		return nil, err
	}
	t := time.Now()
	err := s.retryOnPortClash(ctx, func(ctx context.Context) (*process, error) {
		var err error
		if r.port, err = freePort(); err != nil {
			return nil, err
		}
		r.proc.args = s.tenantAPIServerArgs(r.port, extraArgs...)
		if err := s.startReplicaProcess(r.proc); err != nil {
			return r.proc, err
		}
		return r.proc, s.waitTenantReady(ctx, r.proc, r.URL())
	})
	if err != nil {
		return nil, errors.Join(err, r.Stop())
	}
	s.logf("%s ready on %s (%s)", name, r.URL(), time.Since(t).Round(100*time.Millisecond))
	return r, nil
}

// addReplica registers r so that Stop stops it, unless a running replica
// already has its name.
func (s *Stack) addReplica(r *Replica) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return fmt.Errorf("the stack is stopped")
	}
	for i, other := range s.replicas {
		if other.proc.name != r.proc.name {
			continue
		}
		if other.proc.pid() != 0 {
			return fmt.Errorf("replica %s is already running (pid %d)", r.proc.name, other.proc.pid())
		}
		s.replicas[i] = r
		return nil
	}
	s.replicas = append(s.replicas, r)
	return nil
}

// startReplicaProcess starts p unless the stack is stopped; holding the
// stack's lock, Stop cannot miss it.
func (s *Stack) startReplicaProcess(p *process) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return fmt.Errorf("the stack is stopped")
	}
	return p.start()
}

// replicaProcesses returns the processes of the replicas.
func (s *Stack) replicaProcesses() []*process {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*process, 0, len(s.replicas))
	for _, r := range s.replicas {
		out = append(out, r.proc)
	}
	return out
}

// Name is the replica's process name.
func (r *Replica) Name() string { return r.proc.name }

// URL is the replica itself, https://127.0.0.1:<port>.
func (r *Replica) URL() string { return fmt.Sprintf("https://127.0.0.1:%d", r.port) }

// PID is the replica's process id, or 0 when it is not running.
func (r *Replica) PID() int { return r.proc.pid() }

// LogPath is the replica's log file, logs/<name>.log.
func (r *Replica) LogPath() string { return r.proc.logPath }

// Args returns the flags the replica runs with.
func (r *Replica) Args() []string { return append([]string(nil), r.proc.args...) }

// Stop stops the replica gracefully (SIGTERM, then SIGKILL after
// Options.StopTimeout). Stopping a stopped replica is a no-op.
func (r *Replica) Stop() error { return r.proc.stop(r.stack.opts.StopTimeout) }

// Kill SIGKILLs the replica, as a crash would: it releases nothing it holds,
// such as the syncer's Lease.
func (r *Replica) Kill() error { return r.proc.kill() }

// Start starts a stopped or killed replica again with the same flags and
// port and waits for its /readyz.
func (r *Replica) Start(ctx context.Context) error {
	if err := r.stack.startReplicaProcess(r.proc); err != nil {
		return err
	}
	return r.stack.waitTenantReady(ctx, r.proc, r.URL())
}

// DirectConfig is a client configuration for this replica, bypassing the
// aggregator, as Stack.DirectTenantConfig.
func (r *Replica) DirectConfig(user string, groups ...string) *rest.Config {
	return r.stack.directTenantConfig(r.URL(), user, groups)
}
