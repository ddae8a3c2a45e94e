package bench

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"tenant.io/tenant-apiserver/pkg/stack"
)

// serverMetrics reads the /metrics of the host kube-apiserver and of
// tenant-apiserver.
func serverMetrics(ctx context.Context, s *stack.Stack) (host, tenantServer string, err error) {
	hostClient, _, err := s.Clients(stack.AdminUser)
	if err != nil {
		return "", "", err
	}
	raw, err := hostClient.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return "", "", err
	}
	tenantServer, err = s.TenantMetrics(ctx)
	return string(raw), tenantServer, err
}

// stage names a latency histogram of one server that a step's breakdown
// reports: the series of metric whose labels include every pair of where.
type stage struct {
	what   string
	server string // "kube-apiserver" or "tenant-apiserver"
	metric string // the histogram's name, without _bucket, _sum or _count
	where  map[string]string
}

// createStages are where a tenant Namespace's create and its sync spend
// their time, and the host namespace creates they are compared with.
var createStages = []stage{
	{"kube-apiserver: tenant.io request queued in APF (tenant-io level)", "kube-apiserver", "apiserver_flowcontrol_request_wait_duration_seconds",
		map[string]string{"priority_level": "tenant-io", "execute": "true"}},
	{"kube-apiserver: tenant.io request holding a seat (proxied, non-watch)", "kube-apiserver", "apiserver_flowcontrol_request_execution_seconds",
		map[string]string{"priority_level": "tenant-io", "type": "regular"}},
	{"tenant-apiserver: authentication filter (every request)", "tenant-apiserver", "apiserver_request_filter_duration_seconds",
		map[string]string{"filter": "authentication"}},
	{"tenant-apiserver: authorization filter (every request)", "tenant-apiserver", "apiserver_request_filter_duration_seconds",
		map[string]string{"filter": "authorization"}},
	{"tenant-apiserver: SubjectAccessReview to the host (misses, refreshes)", "tenant-apiserver", "apiserver_delegated_authz_request_duration_seconds",
		map[string]string{}},
	{"tenant-apiserver: request queued in its own APF (every level)", "tenant-apiserver", "apiserver_flowcontrol_request_wait_duration_seconds",
		map[string]string{"execute": "true"}},
	{"tenant-apiserver: POST namespaces (the create, behind the front door)", "tenant-apiserver", "apiserver_request_duration_seconds",
		map[string]string{"verb": "POST", "group": "tenant.io", "resource": "namespaces"}},
	{"tenant-apiserver: etcd update of a Tenant (quota charges, status)", "tenant-apiserver", "etcd_request_duration_seconds",
		map[string]string{"operation": "update", "group": "tenant.io", "resource": "tenants"}},
	{"tenant-apiserver: etcd create of a Namespace", "tenant-apiserver", "etcd_request_duration_seconds",
		map[string]string{"operation": "create", "group": "tenant.io", "resource": "namespaces"}},
	{"tenant-apiserver: etcd update of a Namespace (status)", "tenant-apiserver", "etcd_request_duration_seconds",
		map[string]string{"operation": "update", "group": "tenant.io", "resource": "namespaces"}},
	{"syncer: Namespace key queued -> picked up", "tenant-apiserver", "workqueue_queue_duration_seconds",
		map[string]string{"name": "tenant-namespaces"}},
	{"syncer: Namespace reconcile", "tenant-apiserver", "workqueue_work_duration_seconds",
		map[string]string{"name": "tenant-namespaces"}},
	{"kube-apiserver: POST namespaces (direct and the syncer's)", "kube-apiserver", "apiserver_request_duration_seconds",
		map[string]string{"verb": "POST", "group": "", "resource": "namespaces"}},
	{"kube-apiserver: etcd create of a namespace", "kube-apiserver", "etcd_request_duration_seconds",
		map[string]string{"operation": "create", "group": "", "resource": "namespaces"}},
	{"kube-apiserver: POST rolebindings (the syncer's)", "kube-apiserver", "apiserver_request_duration_seconds",
		map[string]string{"verb": "POST", "group": "rbac.authorization.k8s.io", "resource": "rolebindings"}},
}

// bucketHistogram is one stage's buckets (upper bound -> cumulative count), sum
// and count, summed over the series that match it.
type bucketHistogram struct {
	buckets    map[float64]float64
	sum, count float64
}

type stageSnapshot []bucketHistogram // by index in the stages

// takeStages reads stages from both servers' metrics.
func takeStages(ctx context.Context, s *stack.Stack, stages []stage) (stageSnapshot, error) {
	host, tenantServer, err := serverMetrics(ctx, s)
	if err != nil {
		return nil, err
	}
	out := make(stageSnapshot, len(stages))
	for i, st := range stages {
		text := host
		if st.server == "tenant-apiserver" {
			text = tenantServer
		}
		out[i] = readHistogram(text, st.metric, st.where)
	}
	return out, nil
}

// readHistogram sums the series of metric in text whose labels include where.
func readHistogram(text, metric string, where map[string]string) bucketHistogram {
	h := bucketHistogram{buckets: map[float64]float64{}}
	for _, line := range strings.Split(text, "\n") {
		name, rest, ok := strings.Cut(line, "{")
		if !ok || !strings.HasPrefix(name, metric+"_") {
			continue
		}
		suffix := name[len(metric)+1:]
		if suffix != "bucket" && suffix != "sum" && suffix != "count" {
			continue
		}
		matches := true
		for k, v := range where {
			if !strings.Contains(rest, k+`="`+v+`"`) || label(line, k) != v {
				matches = false
				break
			}
		}
		if !matches {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			continue
		}
		switch suffix {
		case "sum":
			h.sum += v
		case "count":
			h.count += v
		case "bucket":
			le, err := strconv.ParseFloat(label(line, "le"), 64)
			if err == nil {
				h.buckets[le] += v
			}
		}
	}
	return h
}

// quantile estimates the q quantile of the observations between b and h
// (h later), interpolating within a bucket the way Prometheus'
// histogram_quantile does.
func (h bucketHistogram) quantile(b bucketHistogram, q float64) float64 {
	bounds := make([]float64, 0, len(h.buckets))
	for le := range h.buckets {
		bounds = append(bounds, le)
	}
	sort.Float64s(bounds)
	total := h.count - b.count
	if total <= 0 || len(bounds) == 0 {
		return math.NaN()
	}
	rank, lower, below := q*total, 0.0, 0.0
	for _, le := range bounds {
		n := h.buckets[le] - b.buckets[le]
		if n >= rank {
			if math.IsInf(le, 1) {
				return lower
			}
			return lower + (le-lower)*(rank-below)/math.Max(n-below, 1e-9)
		}
		lower, below = le, n
	}
	return lower
}

// since describes each stage between s and now: how many observations,
// their mean and estimated p50 and p99, in milliseconds; stages with no
// observation are left out.
func (s stageSnapshot) since(now stageSnapshot, stages []stage) []string {
	var lines []string
	for i, st := range stages {
		n := now[i].count - s[i].count
		if n < 1 {
			continue
		}
		mean := (now[i].sum - s[i].sum) / n
		lines = append(lines, fmt.Sprintf("%-72s n %6.0f  mean %7.1f  p50 ~%7.1f  p99 ~%7.1f ms", st.what, n,
			mean*1000, now[i].quantile(s[i], 0.5)*1000, now[i].quantile(s[i], 0.99)*1000))
	}
	return lines
}

// afterReturn returns, for keys, the time from the end of their create
// request to their first sighting (negative: seen before the response).
func (f *firstSeen) afterReturn(keys []string) []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]time.Duration, 0, len(keys))
	for _, k := range keys {
		ret, ok1 := f.returned[k]
		seen, ok2 := f.seen[k]
		if ok1 && ok2 {
			out = append(out, seen.Sub(ret))
		}
	}
	return out
}

func TestBucketQuantile(t *testing.T) {
	text := `# HELP x_seconds a histogram
x_seconds_bucket{verb="POST",le="0.1"} 10
x_seconds_bucket{verb="POST",le="0.2"} 60
x_seconds_bucket{verb="POST",le="+Inf"} 100
x_seconds_sum{verb="POST"} 20
x_seconds_count{verb="POST"} 100
x_seconds_bucket{verb="GET",le="0.1"} 1000
x_seconds_bucket{verb="GET",le="0.2"} 1000
x_seconds_bucket{verb="GET",le="+Inf"} 1000
x_seconds_sum{verb="GET"} 1
x_seconds_count{verb="GET"} 1000
`
	before := readHistogram("", "x_seconds", map[string]string{"verb": "POST"})
	h := readHistogram(text, "x_seconds", map[string]string{"verb": "POST"})
	if h.count != 100 || h.sum != 20 {
		t.Fatalf("count %v sum %v, want the POST series only (100, 20)", h.count, h.sum)
	}
	// The 50th of 100 observations is the 40th of the 50 in (0.1, 0.2].
	if q := h.quantile(before, 0.5); math.Abs(q-0.18) > 1e-9 {
		t.Errorf("p50 = %v, want 0.18", q)
	}
	// Above the last finite bound the estimate is that bound.
	if q := h.quantile(before, 0.99); q != 0.2 {
		t.Errorf("p99 = %v, want 0.2", q)
	}
	// Only what was observed since the earlier snapshot counts.
	r := strings.NewReplacer(`le="0.1"} 10`, `le="0.1"} 60`, `le="0.2"} 60`, `le="0.2"} 110`,
		`le="+Inf"} 100`, `le="+Inf"} 150`, `count{verb="POST"} 100`, `count{verb="POST"} 150`)
	later := readHistogram(r.Replace(text), "x_seconds", map[string]string{"verb": "POST"})
	if q := later.quantile(h, 0.5); math.Abs(q-0.05) > 1e-9 {
		t.Errorf("p50 of the 50 observations (all below 0.1) since = %v, want 0.05", q)
	}
}
