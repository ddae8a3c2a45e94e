package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// How BenchmarkDataPath asks ovn-trace for its verdicts. ovn-trace reads
// the whole southbound database when it starts; as a daemon (--detach) it
// reads it once and answers any number of traces on that snapshot, but
// never reads it again. So the benchmark traces in rounds: each round
// starts a daemon, which loads the database as it is then, traces every
// network whose two ports were bound before the round began and has not
// delivered yet, and stops the daemon. A network delivers in the first
// round whose snapshot lets its packet through, and is timestamped with
// the moment that snapshot was taken: the daemon's start, when it sends
// the database server the monitor request whose reply is the snapshot
// (loading it then takes seconds: ovn-trace parses every logical flow).
// Between two rounds, a network that becomes able to deliver waits for
// the next snapshot: the sighting is late by at most a round's load and
// the rest after it (tracePace), which the benchmark reports. The stage
// before it, both ports bound in the southbound database, is seen by a
// monitor as it happens.

// traceOutputs finds the logical ports an ovn-trace answer outputs to.
var traceOutputs = regexp.MustCompile(`output\("([^"]+)"\)`)

// tracerStats is what the rounds cost.
type tracerStats struct {
	mu     sync.Mutex
	rounds int
	loads  []time.Duration // from a daemon's start to its snapshot loaded
	cpu    float64         // seconds, of the daemons that have exited
}

func (t *tracerStats) cpuSeconds() float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cpu
}

// traceSnapshot is one round's ovn-trace daemon.
type traceSnapshot struct {
	ctl    string
	pid    int
	taken  time.Time // the daemon's start: its snapshot is of the database then
	loaded time.Time
	conn   *jsonRPC
}

// ctNextPerTrace bounds the ct_next actions one trace of the benchmark
// goes through (the switch's ACL stages, each way, and the load
// balancing stages), with room to spare.
const ctNextPerTrace = 16

// snapshot starts round's ovn-trace daemon for traces new TCP
// connections, and returns once it has loaded the southbound database.
// The daemon takes the connection tracking states of ct_next actions from
// its command line, in order, across all its traces (after them: est): it
// gets a --ct=new for every ct_next of traces traces.
func (r *dpRun) snapshot(ctx context.Context, round, traces int) (*traceSnapshot, error) {
	start := time.Now()
	name := fmt.Sprintf("bench-ovn-trace-%d", round)
	ts := &traceSnapshot{ctl: filepath.Join(r.ovnDir, name+".ctl"), taken: start}
	pidfile := filepath.Join(r.ovnDir, name+".pid")
	// The database's unix socket (see stack.DataPath.SBSocket): ovn-trace
	// answers no probe while it parses the flows it loaded.
	args := []string{"--db=" + r.dp.SBSocket, "--detach", "--no-chdir", "--minimal",
		"--pidfile=" + pidfile, "--unixctl=" + ts.ctl, "--log-file=" + filepath.Join(r.s.LogDir(), "bench-ovn-trace.log")}
	for i := 0; i < traces*ctNextPerTrace; i++ {
		args = append(args, "--ct=new")
	}
	cmd := exec.CommandContext(ctx, filepath.Join(r.dp.Bin, "ovn-trace"), args...)
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+r.ovnDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("starting ovn-trace's daemon: %w: %s", err, out)
	}
	ts.loaded = time.Now()
	data, err := os.ReadFile(pidfile)
	if err == nil {
		ts.pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
	}
	if err != nil {
		return nil, fmt.Errorf("ovn-trace's pidfile: %w", err)
	}
	if ts.conn, err = dialJSONRPC("unix", ts.ctl, nil); err != nil {
		ts.kill()
		return nil, fmt.Errorf("connecting to ovn-trace's daemon: %w", err)
	}
	r.tracer.mu.Lock()
	r.tracer.rounds++
	r.tracer.loads = append(r.tracer.loads, ts.loaded.Sub(start))
	r.tracer.mu.Unlock()
	return ts, nil
}

func (ts *traceSnapshot) kill() {
	if p, err := os.FindProcess(ts.pid); err == nil {
		_ = p.Kill()
	}
}

// stop notes the daemon's CPU and makes it exit.
func (r *dpRun) stopSnapshot(ts *traceSnapshot) {
	cpu := cpuSeconds(ts.pid)
	r.tracer.mu.Lock()
	r.tracer.cpu += cpu
	r.tracer.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := unixctlCall(ctx, ts.conn, "exit"); err != nil {
		ts.kill()
	}
	_ = ts.conn.Close()
	for i := 0; i < 50; i++ {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", ts.pid)); err != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = os.Remove(ts.ctl)
}

// tracePace is how long the tracer rests after a round, as a multiple of
// the round's load: loading the southbound database costs ovn-trace and
// the database server CPU that grows with the networks, and the tracer
// must leave most of the machine to what it measures.
const tracePace = 1

// traceLoop runs rounds until ctx ends, whenever a network waits for its
// verdict: one whose two ports are bound and that has not delivered.
func (r *dpRun) traceLoop(ctx context.Context) {
	type candidate struct {
		n     *dpNet
		bound time.Time
	}
	var rest time.Duration
	failures := 0
	for round := 1; ctx.Err() == nil; {
		select {
		case <-ctx.Done():
			return
		case <-time.After(rest):
		}
		rest = 0
		var todo []candidate
		r.mu.Lock()
		for _, n := range r.nets {
			if n.bound[0] && n.bound[1] && n.addrs[0] != "" && n.addrs[1] != "" {
				todo = append(todo, candidate{n: n})
			}
		}
		r.mu.Unlock()
		todo = slices.DeleteFunc(todo, func(c candidate) bool {
			missing, _ := r.seen.missing([]string{stageKey(stageTrace, c.n.host)})
			return missing == 0
		})
		if len(todo) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		for i := range todo {
			todo[i].bound = r.seen.lastSeen([]string{stageKey(stageBound, todo[i].n.host)})
		}
		slices.SortFunc(todo, func(a, b candidate) int { return a.bound.Compare(b.bound) })
		ts, err := r.snapshot(ctx, round, len(todo))
		round++
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// Retried: the networks wait, and the benchmark fails if
			// they never deliver.
			failures++
			fmt.Fprintf(os.Stderr, "BenchmarkDataPath: tracer round %d: %v\n", round-1, err)
			if failures == 5 {
				r.b.Errorf("the tracer failed 5 times in a row, the last: round %d: %v", round-1, err)
				return
			}
			rest = time.Second
			continue
		}
		failures = 0
		for _, cand := range todo {
			if ctx.Err() != nil {
				break
			}
			ok, out, err := r.traceOnce(ctx, ts.conn, cand.n)
			if strings.Contains(out, "use --ct to customize") {
				r.b.Errorf("ovn-trace ran out of --ct=new states (more than %d ct_next actions per trace): %s", ctNextPerTrace, out)
			}
			if ok {
				r.seen.saw(stageKey(stageTrace, cand.n.host), ts.taken)
			}
			r.mu.Lock()
			cand.n.traces++
			if !ok {
				cand.n.lastTrace, cand.n.lastTraceAt = out, ts.loaded
				if err != nil {
					cand.n.lastTrace = err.Error()
				}
			}
			r.mu.Unlock()
		}
		r.stopSnapshot(ts)
		rest = tracePace * ts.loaded.Sub(ts.taken)
	}
}

// traceOnce asks ovn-trace whether a new TCP connection from n's first pod
// to its second is delivered to the second's port, as the trace's output
// actions say.
func (r *dpRun) traceOnce(ctx context.Context, c *jsonRPC, n *dpNet) (bool, string, error) {
	r.mu.Lock()
	src, dst := strings.Fields(n.addrs[0]), strings.Fields(n.addrs[1])
	r.mu.Unlock()
	flow := fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip4.src == %s && ip4.dst == %s && ip.ttl == 64 && tcp && tcp.src == 40000 && tcp.dst == 8080`,
		n.lsp[0], src[0], dst[0], src[1], dst[1])
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := unixctlCall(ctx, c, "trace", "--minimal", n.switchName(), flow)
	if err != nil {
		return false, out, err
	}
	for _, m := range traceOutputs.FindAllStringSubmatch(out, -1) {
		if m[1] == n.lsp[1] {
			return true, out, nil
		}
	}
	return false, out, nil
}

// traceRounds describes the rounds: how many, and how long their daemons
// took to load the database.
func (r *dpRun) traceRounds() string {
	r.tracer.mu.Lock()
	defer r.tracer.mu.Unlock()
	if r.tracer.rounds == 0 {
		return "no rounds"
	}
	return fmt.Sprintf("%d rounds; ovn-trace loaded the southbound database in p50 %s, max %s (a delivery is timestamped late by at most a load and the rest after it, %dx the load); %.1f s of CPU in all",
		r.tracer.rounds, percentile(r.tracer.loads, 50).Round(time.Millisecond), percentile(r.tracer.loads, 100).Round(time.Millisecond), tracePace, r.tracer.cpu)
}
