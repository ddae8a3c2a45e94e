package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	udnclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1/apis/clientset/versioned"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// dpSizes are the sizes of BenchmarkDataPath. The defaults are the goal's
// (SPEC section 7: 1,000 Networks); BENCH_DP_* environment variables
// change them (e.g. BENCH_DP_NETWORKS=20 for a quick run).
type dpSizes struct {
	networks int           // BENCH_DP_NETWORKS: tenant Networks, and as many CUDNs created directly
	tenants  int           // BENCH_DP_TENANTS: Tenants the tenant Networks are spread over (at most the Networks)
	workers  int           // BENCH_DP_WORKERS: concurrent creates of each side
	timeout  time.Duration // BENCH_DP_TIMEOUT: how long every network may take to deliver its packet
	// BENCH_DP_ORDER: "apart" (the default) runs each side with its own
	// workers as fast as it goes; "paired" starts the k-th network of both
	// sides at the same moment (as BENCH_NET_ORDER does), so that the
	// quicker direct creates do not put their networks ahead of the
	// tenant's in cluster-manager's queue. Both still start at once, and
	// cluster-manager takes the networks in the order they reach the host:
	// "paced" starts the k-th pair BENCH_DP_INTERVAL (default 1s) after
	// the one before, which cluster-manager keeps up with, so that each
	// network's times are its path's, not its place in that queue.
	order    string
	interval time.Duration
}

// netOrderPaced is BenchmarkDataPath's paired order at a fixed rate
// (BENCH_DP_ORDER).
const netOrderPaced = "paced"

func dpSizesFromEnv() (dpSizes, error) {
	z := dpSizes{networks: 1000, tenants: 50, workers: 20, timeout: time.Hour, order: netOrderApart, interval: time.Second}
	switch o := os.Getenv("BENCH_DP_ORDER"); o {
	case "":
	case netOrderPaired, netOrderApart, netOrderPaced:
		z.order = o
	default:
		return z, fmt.Errorf("BENCH_DP_ORDER=%q: want %q, %q or %q", o, netOrderApart, netOrderPaired, netOrderPaced)
	}
	if s := os.Getenv("BENCH_DP_INTERVAL"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return z, fmt.Errorf("BENCH_DP_INTERVAL=%q: want a positive duration", s)
		}
		z.interval = d
	}
	if err := intsFromEnv(
		intSetting{"BENCH_DP_NETWORKS", &z.networks, 1},
		intSetting{"BENCH_DP_TENANTS", &z.tenants, 1},
		intSetting{"BENCH_DP_WORKERS", &z.workers, 1},
	); err != nil {
		return z, err
	}
	if s := os.Getenv("BENCH_DP_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return z, fmt.Errorf("BENCH_DP_TIMEOUT: %w", err)
		}
		z.timeout = d
	}
	z.tenants = min(z.tenants, z.networks)
	switch {
	case z.tenants > 252:
		return z, fmt.Errorf("BENCH_DP_TENANTS=%d: the tenant pool holds 252 blocks of /16", z.tenants)
	case z.perTenant() > 254:
		return z, fmt.Errorf("%d Networks over %d Tenants: a /16 block holds 254 /24s besides the default Network's", z.networks, z.tenants)
	case z.networks > 3584:
		// Beyond, the direct /24s would reach the service network 172.30.0.0/16.
		return z, fmt.Errorf("BENCH_DP_NETWORKS=%d: at most 3584 direct /24s below the service network", z.networks)
	}
	return z, nil
}

// perTenant is how many Networks the tenant with the most creates.
func (z dpSizes) perTenant() int { return (z.networks + z.tenants - 1) / z.tenants }

// The stages of a network from its create's start, each keyed by stage
// and host network name; cudnKey and createdKey (the host CUDN seen, and
// cluster-manager's NetworkCreated) are the first two.
const (
	stageNAD    = "nad"    // the NetworkAttachmentDefinition in the network's namespace
	stageSwitch = "switch" // the network's logical switch in the northbound database
	stagePorts  = "ports"  // both pods' logical switch ports, with addresses, in the northbound database
	stageBound  = "bound"  // both ports' Port_Bindings in the southbound database
	stageTrace  = "trace"  // ovn-trace delivers a packet from one pod to the other
)

func stageKey(stage, host string) string { return stage + "/" + host }

// dpStages are every stage of a network, in order, with their row titles.
var dpStages = []struct{ key, what string }{
	{"cudn", "host CUDN seen"},
	{"created", "CUDN NetworkCreated"},
	{stageNAD, "NAD in its namespace"},
	{stageSwitch, "(a) logical switch in NB"},
	{stagePorts, "both pod ports in NB"},
	{stageBound, "both Port_Bindings in SB"},
	{stageTrace, "(b) ovn-trace delivers"},
}

// dpPods are the two pods of every network's namespace; ovn-trace sends
// from the first to the second.
var dpPods = [2]string{"src", "dst"}

// dpNet is one network of the burst, of either side.
type dpNet struct {
	direct bool
	host   string // the ClusterUserDefinedNetwork
	ns     string // the host namespace it selects, where its pods are
	lsp    [2]string

	// Under dpRun.mu:
	addrs       [2]string // each port's "MAC IP" in the northbound database
	bound       [2]bool   // each port's Port_Binding seen
	podsQueued  bool
	traces      int    // ovn-trace calls made
	lastTrace   string // its last output, when it did not deliver
	lastTraceAt time.Time
}

// switchName is the logical switch OVN-Kubernetes makes for a Layer2
// network (one for the whole network, on every node of the zone).
func (n *dpNet) switchName() string { return "cluster_udn_" + n.host + "_ovn_layer2_switch" }

// udnPortName is the logical switch port OVN-Kubernetes names pod pod of
// namespace ns on the network of NetworkAttachmentDefinition nad
// ("<ns>/<name>"): the NAD's key with '-' and '/' made '.', then
// "_<ns>_<pod>".
func udnPortName(nad, ns, pod string) string {
	return strings.NewReplacer("-", ".", "/", ".").Replace(nad) + "_" + ns + "_" + pod
}

// BenchmarkDataPath measures, on a stack of its own with OVN's databases,
// ovn-northd and ovnkube-controller (docs/datapath.md), how long a
// network takes from its create to carrying packets, for tenant Networks
// and, side by side in the same burst, for ClusterUserDefinedNetworks of
// the syncer's shape written directly to the host. Tenants (a /16 each)
// are onboarded first. Then, started together, each side with its own 20
// workers: each tenant member creates a Network (Layer2, the syncer's
// default topology, with an explicit /24) and a Namespace on it, through
// the aggregator; the host admin creates a CUDN of the same shape (as
// BenchmarkNetworkSync's) and a host namespace it selects. When
// cluster-manager's NetworkAttachmentDefinition appears in a network's
// namespace, two pods scheduled to worker-0 are created there (no kubelet:
// ovnkube-controller gives them their addresses and ports). Every network
// is timed from the start of its create request to (a) its logical switch
// appearing in the northbound database and (b) ovn-trace, run as a daemon
// on the southbound database, delivering a new TCP connection from one pod
// to the other (its verdict must output to the destination pod's port),
// with the stages in between; the databases are watched with OVSDB
// monitors, every sighting timestamped as it arrives. The benchmark then
// reports ovn-northd's CPU time and engine counters over the burst per
// network, and the databases' size (compacted files, rows of the main
// tables, rows per network of each side). It fails if a network never
// delivers its packet within BENCH_DP_TIMEOUT. See dpSizes for the BENCH_DP_*
// variables; BENCH_DP_TENANT_APISERVER_ARGS adds tenant-apiserver flags and
// BENCH_DP_DUMP writes every key's start and first sighting as CSV.
func BenchmarkDataPath(b *testing.B) {
	if b.N > 1 {
		b.Fatal("BenchmarkDataPath fills its stack: run it once (-benchtime 1x)")
	}
	z, err := dpSizesFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	s, stop := benchStack(ctx, b, "BENCH_DP_TENANT_APISERVER_ARGS", z.tenants, nil)
	defer stop()
	dp := s.DataPath()
	if dp == nil {
		b.Fatal("the stack runs without its data path")
	}
	b.Logf("data path stack in %s: %d networks per side over %d Tenants, %d workers, order %s (interval %s), timeout %s",
		s.WorkDir(), z.networks, z.tenants, z.workers, z.order, z.interval, z.timeout)
	nsQuota := int32(max(10, z.perTenant()+2))
	r := &dpRun{
		netRun: netRun{syncRun: syncRun{b: b, z: syncSizes{tenants: z.tenants, workers: z.workers}, s: s, seen: newFirstSeen()},
			nz: netSizes{tenants: z.tenants, perTenant: z.perTenant(), workers: z.workers}, namespaceQuota: &nsQuota},
		z: z, dp: dp, ovnDir: filepath.Join(s.WorkDir(), "ovn"),
		byHost: map[string]*dpNet{}, bySwitch: map[string]*dpNet{}, byNS: map[string]*dpNet{}, byLSP: map[string]dpPort{},
	}
	r.clients()
	if r.udn, err = udnclientset.NewForConfig(framework.Unthrottled(s.RESTConfig(stack.AdminUser))); err != nil {
		b.Fatal(err)
	}
	tenantsCtx, stopTenants := context.WithCancel(ctx)
	cudnSynced := watchHostCUDNs(ctx, r.udn, r.seen, newCUDNVersions())
	_, tenantsSynced := watchTenantsReady(tenantsCtx, r.admin, r.seen)
	if !cache.WaitForCacheSync(ctx.Done(), cudnSynced, tenantsSynced) {
		b.Fatal("the watches never synced")
	}

	b.ResetTimer()
	r.t0 = time.Now()
	r.onboard(ctx)
	stopTenants()
	r.plan()
	r.watchData(ctx)
	defer r.stopData()
	before := r.takeCosts(ctx)
	r.burst(ctx)
	b.StopTimer()
	r.costs(ctx, before)
	r.report()
	if path := os.Getenv("BENCH_DP_DUMP"); path != "" {
		if err := r.seen.dump(path, r.t0); err != nil {
			b.Error(err)
		}
	}
}

// dpPort is a pod's port: its network and which of the two pods.
type dpPort struct {
	net *dpNet
	i   int
}

// dpRun is the state of one BenchmarkDataPath run.
type dpRun struct {
	netRun
	z      dpSizes
	dp     *stack.DataPath
	ovnDir string // the stack's OVN directory: the databases and their control sockets

	tracer tracerStats

	// Filled by plan; the maps are only read after it.
	nets                        []*dpNet // tenant side first, then the direct side
	byHost, bySwitch, byNS      map[string]*dpNet
	byLSP                       map[string]dpPort
	tenantKeys, directKeys      []string // the networks' host names, by side
	tenantJobs, directJobs      []job
	netReqs, nsReqs, cudnReqs   durations
	hostNSReqs, podReqs         durations
	pods                        chan *dpNet
	podRetries                  int // pod creates refused and retried (under mu)
	burstStart, createsReturned time.Time
	stopWatches                 []func() // the monitors' and the tracer's stops
}

// stopData stops the tracer and the monitors.
func (r *dpRun) stopData() {
	for _, stop := range r.stopWatches {
		stop()
	}
}

// plan names every network of the burst and its pods' ports, and makes
// each side's create jobs.
func (r *dpRun) plan() {
	r.pods = make(chan *dpNet, 2*r.z.networks)
	for k := 0; k < r.z.networks; k++ {
		i, j := k%r.z.tenants, k/r.z.tenants+1
		name := benchNetworkName(j)
		nsName := fmt.Sprintf("pods-%03d", j)
		n := &dpNet{host: hostnames.ClusterUserDefinedNetwork(r.tenantUIDs[i], name), ns: hostnames.Namespace(syncTenantName(i), r.tenantUIDs[i], nsName)}
		r.add(n)
		r.tenantKeys = append(r.tenantKeys, n.host)
		network := &tenantv1alpha1.Network{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       tenantv1alpha1.NetworkSpec{Topology: tenantv1alpha1.NetworkTopologyLayer2, Subnets: []string{nthSubnet(r.blocks[i], j)}},
		}
		namespace := &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName}, Spec: tenantv1alpha1.NamespaceSpec{Network: name}}
		c := r.members[i]
		r.tenantJobs = append(r.tenantJobs, func(ctx context.Context) error {
			r.startStages(n.host)
			t := time.Now()
			if _, err := c.TenantV1alpha1().Networks().Create(ctx, network, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("%s Network %s: %w", syncTenantName(i), name, err)
			}
			r.netReqs.add(time.Since(t))
			t = time.Now()
			if _, err := c.TenantV1alpha1().Namespaces().Create(ctx, namespace, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("%s Namespace %s: %w", syncTenantName(i), nsName, err)
			}
			r.nsReqs.add(time.Since(t))
			return nil
		})
	}
	for k := 0; k < r.z.networks; k++ {
		cudn := directCUDN(k)
		n := &dpNet{direct: true, host: cudn.Name, ns: cudn.Name + "-pods"}
		r.add(n)
		r.directKeys = append(r.directKeys, n.host)
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n.ns, Labels: map[string]string{
			hostnames.PrimaryUDNLabel:         "",
			hostnames.PodSecurityEnforceLabel: "restricted",
		}}}
		for k, v := range cudn.Spec.NamespaceSelector.MatchLabels {
			ns.Labels[k] = v
		}
		r.directJobs = append(r.directJobs, func(ctx context.Context) error {
			r.startStages(n.host)
			t := time.Now()
			if _, err := r.udn.K8sV1().ClusterUserDefinedNetworks().Create(ctx, cudn, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("CUDN %s: %w", cudn.Name, err)
			}
			r.cudnReqs.add(time.Since(t))
			t = time.Now()
			if _, err := r.host.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("namespace %s: %w", ns.Name, err)
			}
			r.hostNSReqs.add(time.Since(t))
			return nil
		})
	}
}

func (r *dpRun) add(n *dpNet) {
	for i, pod := range dpPods {
		n.lsp[i] = udnPortName(n.ns+"/"+n.host, n.ns, pod)
		r.byLSP[n.lsp[i]] = dpPort{n, i}
	}
	r.nets = append(r.nets, n)
	r.byHost[n.host], r.bySwitch[n.switchName()], r.byNS[n.ns] = n, n, n
}

// startStages starts the clock of every stage of network host.
func (r *dpRun) startStages(host string) {
	r.seen.start(cudnKey(host))
	for _, st := range dpStages[1:] {
		r.seen.alias(cudnKey(host), stageKey(st.key, host))
	}
}

// watchData starts what follows the networks from the host's API to OVN's
// verdict: a watch of NetworkAttachmentDefinitions, which queues each
// network's pods when its own appears, the pods' creators, monitors of the
// northbound switches and ports and of the southbound port bindings, and
// the tracer's loop.
func (r *dpRun) watchData(ctx context.Context) {
	record := func(obj interface{}) {
		now := time.Now()
		m, ok := obj.(*metav1.PartialObjectMetadata)
		if !ok {
			return
		}
		n := r.byNS[m.Namespace]
		if n == nil || m.Name != n.host {
			return
		}
		r.seen.saw(stageKey(stageNAD, n.host), now)
		r.mu.Lock()
		queue := !n.podsQueued
		n.podsQueued = true
		r.mu.Unlock()
		if queue {
			r.pods <- n
		}
	}
	_, nadSynced := recordWatch(ctx, &metav1.PartialObjectMetadata{},
		r.meta.Resource(nadResource).Namespace(metav1.NamespaceAll).List, r.meta.Resource(nadResource).Namespace(metav1.NamespaceAll).Watch, record)
	if !cache.WaitForCacheSync(ctx.Done(), nadSynced) {
		r.b.Fatal("the watch of NetworkAttachmentDefinitions never synced")
	}
	for w := 0; w < r.z.workers; w++ {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case n := <-r.pods:
					for _, pod := range dpPods {
						r.createPod(ctx, n.ns, pod)
					}
				}
			}
		}()
	}
	stopNB, err := monitorOVSDB(ctx, r.dp.NBSocket, "OVN_Northbound", map[string][]string{
		"Logical_Switch":      {"name"},
		"Logical_Switch_Port": {"name", "addresses"},
	}, r.northbound)
	if err != nil {
		r.b.Fatal(err)
	}
	stopSB, err := monitorOVSDB(ctx, r.dp.SBSocket, "OVN_Southbound", map[string][]string{"Port_Binding": {"logical_port"}}, r.southbound)
	if err != nil {
		stopNB()
		r.b.Fatal(err)
	}
	traceCtx, stopTracing := context.WithCancel(ctx)
	traced := make(chan struct{})
	go func() {
		defer close(traced)
		r.traceLoop(traceCtx)
	}()
	r.stopWatches = append(r.stopWatches, func() { stopTracing(); <-traced }, stopNB, stopSB)
}

// createPod creates pod name in namespace ns, retrying for a minute as
// a workload controller would: a namespace's first pods are refused until
// kube-controller-manager has made its default ServiceAccount.
func (r *dpRun) createPod(ctx context.Context, ns, name string) {
	deadline := time.Now().Add(time.Minute)
	for {
		t := time.Now()
		_, err := r.host.CoreV1().Pods(ns).Create(ctx, dpPod(ns, name), metav1.CreateOptions{})
		if err == nil {
			r.podReqs.add(time.Since(t))
			return
		}
		if ctx.Err() != nil {
			return
		}
		if time.Now().After(deadline) {
			r.b.Errorf("creating pod %s/%s: %v", ns, name, err)
			return
		}
		r.mu.Lock()
		r.podRetries++
		r.mu.Unlock()
		time.Sleep(200 * time.Millisecond)
	}
}

// northbound notes switches and pod ports as the northbound monitor
// reports them.
func (r *dpRun) northbound(at time.Time, u ovsdbTableUpdates) {
	for _, row := range u["Logical_Switch"] {
		if n := r.bySwitch[ovsdbString(row.New["name"])]; n != nil {
			r.seen.saw(stageKey(stageSwitch, n.host), at)
		}
	}
	for _, row := range u["Logical_Switch_Port"] {
		p, ok := r.byLSP[ovsdbString(row.New["name"])]
		if !ok {
			continue
		}
		for _, a := range ovsdbStrings(row.New["addresses"]) {
			if len(strings.Fields(a)) != 2 {
				continue
			}
			r.mu.Lock()
			p.net.addrs[p.i] = a
			both := p.net.addrs[0] != "" && p.net.addrs[1] != ""
			r.mu.Unlock()
			if both {
				r.seen.saw(stageKey(stagePorts, p.net.host), at)
			}
		}
	}
}

// southbound notes the pods' port bindings as the southbound monitor
// reports them.
func (r *dpRun) southbound(at time.Time, u ovsdbTableUpdates) {
	for _, row := range u["Port_Binding"] {
		p, ok := r.byLSP[ovsdbString(row.New["logical_port"])]
		if !ok {
			continue
		}
		r.mu.Lock()
		p.net.bound[p.i] = true
		both := p.net.bound[0] && p.net.bound[1]
		r.mu.Unlock()
		if both {
			r.seen.saw(stageKey(stageBound, p.net.host), at)
		}
	}
}

// dpPod is a pod of the benchmark: scheduled to the data path's node,
// restricted, never run.
func dpPod(ns, name string) *corev1.Pod {
	no, yes := false, true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName: stack.DataPathNode,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   &yes,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.invalid/app:1",
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: &no,
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}

// burst runs both sides' creates at once, then waits until every network
// has delivered its packet.
func (r *dpRun) burst(ctx context.Context) {
	var traceKeys []string
	for _, n := range r.nets {
		traceKeys = append(traceKeys, stageKey(stageTrace, n.host))
	}
	r.burstStart = time.Now()
	var ends [2]time.Time
	switch r.z.order {
	case netOrderPaired:
		ends = runPaired(ctx, r.b, r.z.workers, 0, r.tenantJobs, r.directJobs)
	case netOrderPaced:
		ends = runPaired(ctx, r.b, r.z.workers, r.z.interval, r.tenantJobs, r.directJobs)
	default:
		ends = runSides(ctx, r.b, r.z.workers, r.tenantJobs, r.directJobs)
	}
	r.createsReturned = time.Now()
	r.notef("burst: creates done after %s (tenant side) and %s (direct side)",
		ends[0].Sub(r.burstStart).Round(time.Millisecond), ends[1].Sub(r.burstStart).Round(time.Millisecond))
	if err := r.waitDelivered(ctx, traceKeys); err != nil {
		r.b.Fatal(err)
	}
}

// waitDelivered waits until every network's trace has delivered, logging
// progress every 30 s; its error says how far the missing networks got.
func (r *dpRun) waitDelivered(ctx context.Context, traceKeys []string) error {
	deadline := time.Now().Add(r.z.timeout)
	next := time.Now().Add(30 * time.Second)
	for {
		n, _ := r.seen.missing(traceKeys)
		if n == 0 {
			return nil
		}
		if time.Now().After(next) {
			next = time.Now().Add(30 * time.Second)
			// On stderr as it happens: a benchmark's log only shows at its end.
			fmt.Fprintf(os.Stderr, "BenchmarkDataPath: %s after the burst's start: %s\n", time.Since(r.burstStart).Round(time.Second), r.progress())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d networks did not deliver ovn-trace's packet within %s: %s\n%s", n, len(traceKeys), r.z.timeout, r.progress(), r.diagnose(3))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// progress counts, by side, the networks that reached each stage.
func (r *dpRun) progress() string {
	var parts []string
	for _, side := range []struct {
		name string
		keys []string
	}{{"tenant", r.tenantKeys}, {"direct", r.directKeys}} {
		var stages []string
		for _, st := range dpStages {
			var keys []string
			for _, h := range side.keys {
				keys = append(keys, stageKey(st.key, h))
			}
			missing, _ := r.seen.missing(keys)
			stages = append(stages, fmt.Sprintf("%s %d", st.key, len(keys)-missing))
		}
		parts = append(parts, side.name+": "+strings.Join(stages, ", "))
	}
	return strings.Join(parts, "; ")
}

// diagnose describes up to max networks that have not delivered: the
// stages they reached and ovn-trace's last answer.
func (r *dpRun) diagnose(max int) string {
	var out []string
	for _, n := range r.nets {
		if len(out) == max {
			break
		}
		if missing, _ := r.seen.missing([]string{stageKey(stageTrace, n.host)}); missing == 0 {
			continue
		}
		var reached []string
		for _, st := range dpStages {
			if missing, _ := r.seen.missing([]string{stageKey(st.key, n.host)}); missing == 0 {
				reached = append(reached, st.key)
			}
		}
		r.mu.Lock()
		out = append(out, fmt.Sprintf("network %s (namespace %s, switch %s, ports %v, addresses %q): reached %v; %d traces, the last: %s",
			n.host, n.ns, n.switchName(), n.lsp, n.addrs, reached, n.traces, n.lastTrace))
		r.mu.Unlock()
	}
	return strings.Join(out, "\n")
}

// report prints the summary table.
func (r *dpRun) report() {
	printTable(os.Stdout, fmt.Sprintf("BenchmarkDataPath: create start -> each stage (%d tenant Networks over %d Tenants, %d CUDNs created directly, %d workers per side)",
		r.z.networks, r.z.tenants, r.z.networks, r.z.workers), r.rows)
	for _, line := range r.summary {
		fmt.Fprintf(os.Stdout, "  %s\n", line)
	}
	fmt.Fprintln(os.Stdout)
}

// measureStages adds the rows of every stage of both sides, the create
// requests' own durations, and the ratios of (a) and (b).
func (r *dpRun) measureStages() {
	keysOf := func(stage string, hosts []string) []string {
		var out []string
		for _, h := range hosts {
			out = append(out, stageKey(stage, h))
		}
		return out
	}
	lat := map[string][2][]time.Duration{}
	for _, st := range dpStages {
		t := r.measure("dp-tenant-"+st.key, "tenant Network: "+st.what, keysOf(st.key, r.tenantKeys))
		d := r.measure("dp-direct-"+st.key, "direct CUDN: "+st.what, keysOf(st.key, r.directKeys))
		lat[st.key] = [2][]time.Duration{t, d}
	}
	r.requests("   tenant Network create request (aggregated)", &r.netReqs)
	r.requests("   tenant Namespace create request (aggregated)", &r.nsReqs)
	r.requests("   host CUDN create request", &r.cudnReqs)
	r.requests("   host namespace create request", &r.hostNSReqs)
	r.requests("   pod create request (both sides)", &r.podReqs)
	r.mu.Lock()
	r.notef("pod creates refused and retried 200 ms later: %d (a new namespace's pods wait for its default ServiceAccount)", r.podRetries)
	r.mu.Unlock()
	for _, st := range []string{stageSwitch, stageTrace} {
		t, d := lat[st][0], lat[st][1]
		p50 := float64(percentile(t, 50)) / float64(percentile(d, 50))
		p99 := float64(percentile(t, 99)) / float64(percentile(d, 99))
		r.b.ReportMetric(p50, st+"-tenant/direct-p50")
		r.b.ReportMetric(p99, st+"-tenant/direct-p99")
		r.notef("%s: tenant p50 %.0f ms, p99 %.0f ms; direct p50 %.0f ms, p99 %.0f ms; ratio tenant/direct p50 %.2f, p99 %.2f",
			st, pctl(t, 50), pctl(t, 99), pctl(d, 50), pctl(d, 99), p50, p99)
	}
	all := append(append([]string(nil), keysOf(stageTrace, r.tenantKeys)...), keysOf(stageTrace, r.directKeys)...)
	r.notef("last packet delivered %s after the burst's start (creates returned after %s)",
		r.seen.lastSeen(all).Sub(r.burstStart).Round(time.Millisecond), r.createsReturned.Sub(r.burstStart).Round(time.Millisecond))
	traces, repeats := 0, 0
	r.mu.Lock()
	for _, n := range r.nets {
		traces += n.traces
		if n.traces > 1 {
			repeats++
		}
	}
	r.mu.Unlock()
	r.notef("ovn-trace calls: %d for %d networks (%d networks traced more than once before delivering); %s", traces, len(r.nets), repeats, r.traceRounds())
}
