package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What BenchmarkDataPath reports beside the latencies: ovn-northd's work
// over the burst and what the networks cost the databases.

// dpProcesses are the processes whose CPU BenchmarkDataPath reports.
var dpProcesses = []string{"ovn-northd", "ovsdb-server-nb", "ovsdb-server-sb", "ovnkube-controller", "ovnkube-cluster-manager",
	"kube-apiserver", "etcd", "tenant-apiserver", "kube-controller-manager"}

// nbTables and sbTables are the tables whose rows BenchmarkDataPath counts.
var (
	nbTables = []string{"Logical_Switch", "Logical_Switch_Port", "Logical_Router", "Logical_Router_Port", "ACL", "Load_Balancer",
		"Logical_Router_Policy", "Logical_Router_Static_Route", "NAT", "Address_Set", "Port_Group"}
	sbTables = []string{"Datapath_Binding", "Port_Binding", "Logical_Flow", "Logical_DP_Group", "Multicast_Group", "MAC_Binding"}
)

// dpCosts is what the stack's processes and databases had used at one
// moment.
type dpCosts struct {
	at    time.Time
	pid   map[string]int
	cpu   map[string]float64 // seconds
	files map[string]int64   // "NB", "SB": the database file's size after compaction
	rows  map[string]int     // "NB <table>", "SB <table>"
}

// takeCosts waits until the onboarding's networks are built, compacts
// both databases and reads their sizes and row counts, then the
// processes' CPU time, and resets ovn-northd's stopwatches and engine
// counters: the burst's figures start there.
func (r *dpRun) takeCosts(ctx context.Context) dpCosts {
	r.notef("onboarding: the data path was quiet %s after the Tenants were Ready", r.settle().Round(time.Second))
	c := dpCosts{files: map[string]int64{}, rows: map[string]int{}}
	r.sizes(ctx, &c)
	northd := filepath.Join(r.ovnDir, "northd.ctl")
	for _, cmd := range []string{"stopwatch/reset", "inc-engine/clear-stats"} {
		if _, err := unixctl(ctx, northd, cmd); err != nil {
			r.b.Fatalf("ovn-northd %s: %v", cmd, err)
		}
	}
	r.cpu(&c)
	return c
}

func (r *dpRun) cpu(c *dpCosts) {
	c.at, c.pid, c.cpu = time.Now(), map[string]int{}, map[string]float64{}
	for _, name := range dpProcesses {
		if pid := r.s.PID(name); pid != 0 {
			c.pid[name], c.cpu[name] = pid, cpuSeconds(pid)
		}
	}
	c.pid["ovn-trace (the benchmark's)"], c.cpu["ovn-trace (the benchmark's)"] = -1, r.tracer.cpuSeconds()
	c.pid["bench clients"], c.cpu["bench clients"] = 0, cpuSeconds(0)
}

// sizes compacts each database, waits until its file stops changing, and
// notes the file's size and the rows of the main tables.
func (r *dpRun) sizes(ctx context.Context, c *dpCosts) {
	for _, db := range []struct {
		name, file, ctl, addr, schema string
		tables                        []string
	}{
		{"NB", "nb.db", "nb.ctl", r.dp.NBSocket, "OVN_Northbound", nbTables},
		{"SB", "sb.db", "sb.ctl", r.dp.SBSocket, "OVN_Southbound", sbTables},
	} {
		if _, err := unixctl(ctx, filepath.Join(r.ovnDir, db.ctl), "ovsdb-server/compact"); err != nil {
			r.b.Fatalf("compacting the %s database: %v", db.name, err)
		}
		last, stable := int64(-1), 0
		for stable < 5 {
			st, err := os.Stat(filepath.Join(r.ovnDir, db.file))
			if err != nil {
				r.b.Fatal(err)
			}
			if st.Size() == last {
				stable++
			} else {
				last, stable = st.Size(), 0
			}
			time.Sleep(200 * time.Millisecond)
		}
		c.files[db.name] = last
		for _, t := range db.tables {
			rows, err := ovsdbSelect(ctx, db.addr, db.schema, t, []string{"_uuid"})
			if err != nil {
				r.b.Fatal(err)
			}
			c.rows[db.name+" "+t] = len(rows)
		}
	}
}

// settle waits until ovn-northd, ovnkube-controller and the databases have
// used less than 5 % of a core over 2 s (at most 2 minutes), so that
// the burst's costs include the work that trails its last packet.
func (r *dpRun) settle() time.Duration {
	start := time.Now()
	names := []string{"ovn-northd", "ovnkube-controller", "ovsdb-server-nb", "ovsdb-server-sb"}
	for time.Since(start) < 2*time.Minute {
		before := map[string]float64{}
		for _, n := range names {
			before[n] = cpuSeconds(r.s.PID(n))
		}
		time.Sleep(2 * time.Second)
		busy := false
		for _, n := range names {
			if cpuSeconds(r.s.PID(n))-before[n] > 0.1 {
				busy = true
			}
		}
		if !busy {
			break
		}
	}
	return time.Since(start)
}

// costs reports, from before to now: the processes' CPU, ovn-northd's
// engine and loop, the databases' growth per network, and the rows each
// side's networks own.
func (r *dpRun) costs(ctx context.Context, before dpCosts) {
	// A delivered packet implies every earlier stage; their sightings may
	// still be on their way from the watches.
	var keys []string
	for _, n := range r.nets {
		for _, st := range dpStages {
			keys = append(keys, stageKey(st.key, n.host))
		}
	}
	if err := r.seen.waitSeen(ctx, keys, 2*time.Minute); err != nil {
		r.b.Fatalf("a network delivered its packet without every earlier stage seen: %v", err)
	}
	r.measureStages()
	delivered := dpCosts{}
	r.cpu(&delivered)
	settled := r.settle()
	after := dpCosts{files: map[string]int64{}, rows: map[string]int{}}
	r.cpu(&after)
	nets := float64(2 * r.z.networks)

	describe := func(to dpCosts) string {
		wall := to.at.Sub(before.at).Seconds()
		var parts []string
		total := 0.0
		for _, name := range append(append([]string(nil), dpProcesses...), "ovn-trace (the benchmark's)", "bench clients") {
			d := to.cpu[name]
			if to.pid[name] == before.pid[name] {
				d -= before.cpu[name]
			}
			total += d
			parts = append(parts, fmt.Sprintf("%s %.1f s (%.2f cores)", name, d, d/wall))
		}
		return fmt.Sprintf("over %.0f s: %s; total %.2f cores", wall, strings.Join(parts, ", "), total/wall)
	}
	r.notef("CPU until the last packet was delivered, %s", describe(delivered))
	r.notef("CPU until the data path was quiet (%s later), %s", settled.Round(time.Second), describe(after))
	northdCPU := after.cpu["ovn-northd"] - before.cpu["ovn-northd"]
	if after.pid["ovn-northd"] != before.pid["ovn-northd"] {
		r.b.Errorf("ovn-northd restarted during the burst: its CPU time is not the burst's")
	}
	r.b.ReportMetric(northdCPU/nets*1000, "northd-cpu-ms/network")
	r.b.ReportMetric((after.cpu["ovnkube-controller"]-before.cpu["ovnkube-controller"])/nets*1000, "ovnkube-controller-cpu-ms/network")
	r.notef("ovn-northd: %.1f s of CPU over the burst, %.1f ms per network (%d networks, both sides)", northdCPU, northdCPU/nets*1000, int(nets))
	northd := filepath.Join(r.ovnDir, "northd.ctl")
	if out, err := unixctl(ctx, northd, "stopwatch/show"); err == nil {
		r.notef("ovn-northd's loop over the burst: %s", stopwatchSummary(out))
		r.dumpText("northd-stopwatch.txt", out)
	} else {
		r.b.Errorf("ovn-northd stopwatch/show: %v", err)
	}
	if out, err := unixctl(ctx, northd, "inc-engine/show-stats"); err == nil {
		r.notef("ovn-northd's engine over the burst: %s", engineSummary(out))
		r.dumpText("northd-inc-engine.txt", out)
	} else {
		r.b.Errorf("ovn-northd inc-engine/show-stats: %v", err)
	}

	r.sizes(ctx, &after)
	for _, db := range []string{"NB", "SB"} {
		grew := float64(after.files[db] - before.files[db])
		r.b.ReportMetric(grew/nets/1024, db+"-KiB/network")
		r.notef("%s database, compacted: %.1f MiB before the burst, %.1f MiB after, %.1f KiB per network", db,
			float64(before.files[db])/(1<<20), float64(after.files[db])/(1<<20), grew/nets/1024)
		var parts []string
		for _, t := range append(append([]string(nil), nbTables...), sbTables...) {
			k := db + " " + t
			if _, ok := after.rows[k]; !ok {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %d -> %d (%.1f)", t, before.rows[k], after.rows[k], float64(after.rows[k]-before.rows[k])/nets))
		}
		r.notef("  %s rows before -> after (per network): %s", db, strings.Join(parts, ", "))
	}
	r.sides(ctx)
}

// dumpText writes ovn-northd's raw statistics into the stack's log
// directory.
func (r *dpRun) dumpText(name, text string) {
	if err := os.WriteFile(filepath.Join(r.s.LogDir(), name), []byte(text), 0o644); err != nil {
		r.b.Log(err)
	}
}

// sides counts, per side, the rows that belong to the burst's networks:
// in the northbound database the rows OVN-Kubernetes marks with the
// network (external_ids k8s.ovn.org/network), in the southbound database
// the datapaths named after the network, their port bindings, and the
// logical flows of those datapaths (flows that a datapath group shares
// between several datapaths are counted apart).
func (r *dpRun) sides(ctx context.Context) {
	side := map[string]int{} // "cluster_udn_<host>" -> 0 tenant, 1 direct
	for _, n := range r.nets {
		side["cluster_udn_"+n.host] = map[bool]int{false: 0, true: 1}[n.direct]
	}
	var perSide [2][]string
	for _, t := range nbTables {
		rows, err := ovsdbSelect(ctx, r.dp.NBSocket, "OVN_Northbound", t, []string{"external_ids"})
		if err != nil {
			r.b.Logf("counting %s by network: %v", t, err)
			continue
		}
		var count [2]int
		for _, row := range rows {
			if s, ok := side[ovsdbMap(row["external_ids"])["k8s.ovn.org/network"]]; ok {
				count[s]++
			}
		}
		for s := range count {
			perSide[s] = append(perSide[s], fmt.Sprintf("%s %.1f", t, float64(count[s])/float64(r.z.networks)))
		}
	}
	dps, err := ovsdbSelect(ctx, r.dp.SBSocket, "OVN_Southbound", "Datapath_Binding", []string{"_uuid", "external_ids"})
	if err != nil {
		r.b.Fatal(err)
	}
	dpSide := map[string]int{}
	for _, row := range dps {
		name := ovsdbMap(row["external_ids"])["name"]
		if m := udnDatapathName.FindStringSubmatch(name); m != nil {
			if s, ok := side["cluster_udn_"+m[1]]; ok {
				if u := ovsdbUUIDs(row["_uuid"]); len(u) == 1 {
					dpSide[u[0]] = s
				}
			}
		}
	}
	var datapaths [2]int
	for _, s := range dpSide {
		datapaths[s]++
	}
	pbs, err := ovsdbSelect(ctx, r.dp.SBSocket, "OVN_Southbound", "Port_Binding", []string{"datapath"})
	if err != nil {
		r.b.Fatal(err)
	}
	var bindings [2]int
	for _, row := range pbs {
		if u := ovsdbUUIDs(row["datapath"]); len(u) == 1 {
			if s, ok := dpSide[u[0]]; ok {
				bindings[s]++
			}
		}
	}
	flows, err := ovsdbSelect(ctx, r.dp.SBSocket, "OVN_Southbound", "Logical_Flow", []string{"logical_datapath", "logical_dp_group"})
	if err != nil {
		r.b.Fatal(err)
	}
	var own [2]int
	grouped := 0
	for _, row := range flows {
		if u := ovsdbUUIDs(row["logical_datapath"]); len(u) == 1 {
			if s, ok := dpSide[u[0]]; ok {
				own[s]++
			}
		} else if len(ovsdbUUIDs(row["logical_dp_group"])) == 1 {
			grouped++
		}
	}
	n := float64(r.z.networks)
	for s, name := range []string{"tenant Networks", "direct CUDNs"} {
		r.notef("  rows per network, %s: NB %s; SB Datapath_Binding %.1f, Port_Binding %.1f, Logical_Flow of its own datapaths %.1f",
			name, strings.Join(perSide[s], ", "), float64(datapaths[s])/n, float64(bindings[s])/n, float64(own[s])/n)
		r.b.ReportMetric(float64(own[s])/n, []string{"tenant", "direct"}[s]+"-lflows/network")
	}
	r.notef("  SB: %d logical flows in all, %d of them shared by a datapath group", len(flows), grouped)
}

// udnDatapathName finds the network in the name of a user-defined
// network's switch or router ("cluster_udn_<name>_ovn_layer2_switch",
// "GR_cluster_udn_<name>_worker-0", ...).
var udnDatapathName = regexp.MustCompile(`cluster_udn_([a-z0-9]+)_`)

// northdStopwatches and northdNodes are what the benchmark reports of
// ovn-northd's stopwatches (of its whole loop, and of its engine's two
// main nodes: the northd data and the logical flows) and of its engine.
var (
	northdStopwatches = []string{"ovn-northd-loop", "northd", "lflow"}
	northdNodes       = []string{"northd", "lflow"}
)

// stopwatchSummary picks northdStopwatches out of stopwatch/show:
// samples, maximum, 95th percentile, long-term average.
func stopwatchSummary(out string) string {
	var parts []string
	var cur string
	fields := map[string]string{}
	flush := func() {
		if slices.Contains(northdStopwatches, cur) {
			parts = append(parts, fmt.Sprintf("%s: %s samples, max %s, p95 %s, long-term mean %s", cur,
				fields["Total samples"], fields["Maximum"], fields["95th percentile"], fields["Long term average"]))
		}
		cur, fields = "", map[string]string{}
	}
	for _, line := range strings.Split(out, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "Statistics for '"); ok {
			flush()
			cur = strings.TrimSuffix(name, "'")
			continue
		}
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && cur != "" {
			fields[k] = strings.TrimSpace(v)
		}
	}
	flush()
	return strings.Join(parts, "; ")
}

// engineSummary picks the recomputes and incremental computes of
// northdNodes out of inc-engine/show-stats.
func engineSummary(out string) string {
	var parts []string
	var node string
	stats := map[string]int{}
	flush := func() {
		if slices.Contains(northdNodes, node) {
			parts = append(parts, fmt.Sprintf("%s %d recomputes, %d computes", node, stats["recompute"], stats["compute"]))
		}
		node, stats = "", map[string]int{}
	}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if name, ok := strings.CutPrefix(line, "Node:"); ok {
			flush()
			node = strings.TrimSpace(name)
			continue
		}
		if k, v, ok := strings.Cut(strings.TrimPrefix(line, "- "), ":"); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				stats[strings.TrimSpace(k)] += n
			}
		}
	}
	flush()
	return strings.Join(parts, "; ")
}
