package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"

	"tenant.io/tenant-apiserver/pkg/stack"
)

// netAuditPolicy has the host kube-apiserver log every request but
// watches at Metadata level: who (user and program) did what to which
// object, when, and with what status. BenchmarkNetworkSync counts from it
// the requests each side's networks cost, cluster-manager's above all.
const netAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: None
  verbs: ["watch"]
- level: None
  nonResourceURLs: ["*"]
- level: Metadata
`

// netAudit is the host kube-apiserver's audit log of one
// BenchmarkNetworkSync run (BENCH_NET_AUDIT=<dir>).
type netAudit struct{ dir string }

// args are the kube-apiserver flags that write the log, after writing its
// policy into the audit's directory.
func (a netAudit) args() ([]string, error) {
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		return nil, err
	}
	policy := filepath.Join(a.dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(netAuditPolicy), 0o644); err != nil {
		return nil, err
	}
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + a.log(), "--audit-log-maxsize=0"}, nil
}

func (a netAudit) log() string { return filepath.Join(a.dir, "kube-apiserver-audit.log") }

// auditEvent is the part of an audit.k8s.io/v1 Event the summary reads.
type auditEvent struct {
	Stage     string `json:"stage"`
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	User      struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
	StageTimestamp           time.Time `json:"stageTimestamp"`
}

// actor names who sent a request: the tenant-apiserver, the benchmark
// (its own program, as the admin), cluster-manager (the admin's other
// program: ovnkube names itself in no user agent of its own) or another
// component, by user and program.
func (e *auditEvent) actor() string {
	program, _, _ := strings.Cut(e.UserAgent, "/")
	switch {
	case e.User.Username == stack.TenantAPIServerUser:
		return "tenant-apiserver"
	case e.User.Username == stack.AdminUser && program == filepath.Base(os.Args[0]):
		return "benchmark"
	case e.User.Username == stack.AdminUser:
		return "cluster-manager"
	}
	return e.User.Username + " " + program
}

// summarizeNetAudit reads the audit log and describes, for the networks
// of each side (the syncer's CUDNs and the direct ones, by name), the
// requests made on their CUDNs and NetworkAttachmentDefinitions by each
// actor, verb and status code, per network; when cluster-manager first
// wrote each CUDN after its create (its queue wait); and how many
// requests cluster-manager made during the burst in all and per second.
func summarizeNetAudit(path string, sides map[string][]string, start time.Time) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	sideOf := map[string]string{}
	for side, names := range sides {
		for _, n := range names {
			sideOf[n] = side
		}
	}
	type countKey struct{ side, actor, what string }
	counts := map[countKey]int{}
	created := map[string]time.Time{}
	firstCM := map[string]time.Time{}
	var cmTimes []time.Time
	cmByResource := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if e.Stage != "ResponseComplete" && e.Stage != "Panic" {
			continue
		}
		actor := e.actor()
		if actor == "cluster-manager" && !e.RequestReceivedTimestamp.Before(start) {
			cmTimes = append(cmTimes, e.RequestReceivedTimestamp)
			res := "(none)"
			if e.ObjectRef != nil {
				res = e.ObjectRef.Resource
				if e.ObjectRef.Subresource != "" {
					res += "/" + e.ObjectRef.Subresource
				}
			}
			cmByResource[e.Verb+" "+res]++
		}
		if e.ObjectRef == nil {
			continue
		}
		side, ok := sideOf[e.ObjectRef.Name]
		if !ok || (e.ObjectRef.Resource != "clusteruserdefinednetworks" && e.ObjectRef.Resource != "network-attachment-definitions") {
			continue
		}
		code := 0
		if e.ResponseStatus != nil {
			code = e.ResponseStatus.Code
		}
		res := e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			res += "/" + e.ObjectRef.Subresource
		}
		counts[countKey{side, actor, fmt.Sprintf("%s %s %d", e.Verb, res, code)}]++
		name := e.ObjectRef.Name
		if e.ObjectRef.Resource == "clusteruserdefinednetworks" && e.Verb == "create" && code < 300 {
			created[name] = e.StageTimestamp
		}
		if actor == "cluster-manager" && e.ObjectRef.Resource == "clusteruserdefinednetworks" && e.Verb != "get" && e.Verb != "list" {
			if _, ok := firstCM[name]; !ok {
				firstCM[name] = e.RequestReceivedTimestamp
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var keys []countKey
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.side != b.side {
			return a.side < b.side
		}
		if a.actor != b.actor {
			return a.actor < b.actor
		}
		return a.what < b.what
	})
	var out []string
	out = append(out, "host requests on each side's CUDNs and NADs (audit log), by actor, verb and code: total, per network")
	for _, k := range keys {
		out = append(out, fmt.Sprintf("  %-7s %-28s %-50s %5d  %.2f", k.side, k.actor, k.what, counts[k], float64(counts[k])/float64(len(sides[k.side]))))
	}
	sideNames := make([]string, 0, len(sides))
	for side := range sides {
		sideNames = append(sideNames, side)
	}
	sort.Strings(sideNames)
	for _, side := range sideNames {
		var waits []time.Duration
		var firsts []time.Duration
		for _, n := range sides[side] {
			c, ok1 := created[n]
			w, ok2 := firstCM[n]
			if ok1 && ok2 {
				waits = append(waits, w.Sub(c))
				firsts = append(firsts, w.Sub(start))
			}
		}
		if len(waits) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("  %s: CUDN create -> cluster-manager's first write on it: p50 %s, p99 %s (%d networks); first write after the burst start: p50 %s, last %s",
			side, percentile(waits, 50).Round(time.Millisecond), percentile(waits, 99).Round(time.Millisecond), len(waits),
			percentile(firsts, 50).Round(time.Millisecond), percentile(firsts, 100).Round(time.Millisecond)))
	}
	if len(cmTimes) > 1 {
		sort.Slice(cmTimes, func(i, j int) bool { return cmTimes[i].Before(cmTimes[j]) })
		span := cmTimes[len(cmTimes)-1].Sub(cmTimes[0])
		var parts []string
		for k, v := range cmByResource {
			parts = append(parts, fmt.Sprintf("%s %d", k, v))
		}
		sort.Strings(parts)
		out = append(out, fmt.Sprintf("  cluster-manager from the burst start: %d requests over %s (%.1f a second): %s",
			len(cmTimes), span.Round(time.Millisecond), float64(len(cmTimes))/span.Seconds(), strings.Join(parts, ", ")))
	}
	return out, nil
}

// cudnVersions counts, per host CUDN, the versions a watch delivered: the
// create and every write after it, whoever made it.
type cudnVersions struct {
	mu sync.Mutex
	rv map[string]map[string]bool
}

func newCUDNVersions() *cudnVersions { return &cudnVersions{rv: map[string]map[string]bool{}} }

func (v *cudnVersions) saw(c *udnv1.ClusterUserDefinedNetwork) {
	v.mu.Lock()
	defer v.mu.Unlock()
	m := v.rv[c.Name]
	if m == nil {
		m = map[string]bool{}
		v.rv[c.Name] = m
	}
	m[c.ResourceVersion] = true
}

// writes describes, over names, how many writes after its create each
// CUDN had in the watch.
func (v *cudnVersions) writes(names []string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	hist := map[int]int{}
	total := 0
	for _, n := range names {
		w := len(v.rv[n]) - 1
		hist[w]++
		total += w
	}
	var ks []int
	for k := range hist {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%d writes: %d", k, hist[k]))
	}
	return fmt.Sprintf("mean %.2f (%s)", float64(total)/float64(len(names)), strings.Join(parts, ", "))
}
