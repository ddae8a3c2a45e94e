package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The stack's logical data path: OVN's northbound and southbound databases
// and ovn-northd (OVN 26.03, hack/build-tools.sh's ovn), and OVN-Kubernetes'
// ovnkube-controller for the zone of DataPathNode. As in OpenShift's
// interconnect deployments every node is a zone of its own
// (k8s.ovn.org/zone-name); the controller builds, in the zone's
// northbound database, the logical switches of the tenants' networks, the
// ports of the pods scheduled to its node, and their ACLs; ovn-northd
// compiles them into the southbound database's logical flows, which
// ovn-trace evaluates; with the gateway facts ovnkube-node would write for
// the node (dataPathNodeFacts), it also builds the node's gateway routers.
// Open vSwitch and ovn-controller, which forward packets, run only when a
// test asks for them (StartPackets, packets.go).
//
// DataPathNode is the simulated node whose zone the data path serves: pods
// the tests trace are scheduled there (spec.nodeName).
var DataPathNode = SimulatedNodes[0].Name

// zoneNameAnnotation is the zone of a node, which ovnkube-node writes in
// interconnect mode: its own name, one node per zone.
const zoneNameAnnotation = "k8s.ovn.org/zone-name"

// The node facts ovnkube-node writes from the node's gateway bridge and
// its OVS chassis, which ovnkube-controller builds the node's gateway
// routers from: the default network's and each user-defined network's
// GR_<network>_<node>, their external switch and SNAT.
const (
	l3GatewayConfigAnnotation = "k8s.ovn.org/l3-gateway-config"
	nodeChassisIDAnnotation   = "k8s.ovn.org/node-chassis-id"
	nodeEncapIPsAnnotation    = "k8s.ovn.org/node-encap-ips"
)

// chassisID is the OVS chassis (system-id) of the i-th simulated node.
func chassisID(i int) string { return fmt.Sprintf("5e3f1c2a-0000-4000-8000-%012x", 10+i) }

// dataPathNodeFacts are the annotations of DataPathNode that ovnkube-node
// would write besides those every simulated node has (its chassis, its
// tunnel endpoint): a shared gateway on bridge breth0 with the node's
// primary address and the machine network's router as next hop.
func dataPathNodeFacts() map[string]string {
	n := SimulatedNodes[0]
	return map[string]string{
		l3GatewayConfigAnnotation: fmt.Sprintf(`{"default":{"mode":"shared","bridge-id":"breth0","interface-id":"breth0_%s",`+
			`"mac-address":"52:54:00:c0:02:0a","ip-addresses":[%q],"ip-address":%q,"next-hops":["192.0.2.1"],"next-hop":"192.0.2.1",`+
			`"node-port-enable":"true","vlan-id":"0"}}`, n.Name, n.PrimaryIP, n.PrimaryIP),
	}
}

// ovnkubeControllerReadyMetric is set once ovnkube-controller's network
// controllers have started.
var ovnkubeControllerReadyMetric = regexp.MustCompile(`(?m)^ovnkube_controller_ready_duration_seconds ([0-9.e+-]+)$`)

// DataPath says where the stack's OVN databases are; nil without them.
type DataPath struct {
	// NB and SB are the ovsdb addresses of the zone's northbound and
	// southbound databases ("tcp:127.0.0.1:<port>").
	NB, SB string
	// NBSocket and SBSocket are the same databases' unix sockets
	// ("unix:<path>"). The servers send TCP clients an inactivity probe
	// and hang up on one that has not answered within 5 s; they probe no
	// unix client. A client that can be busy longer than that (ovn-northd
	// recomputing every logical flow of a large database, ovn-trace
	// loading one) connects here.
	NBSocket, SBSocket string
	// Bin holds ovn-nbctl, ovn-sbctl and ovn-trace (wrappers that run OVN
	// 25.03 through its own loader).
	Bin string
	// Zone is the zone, and node, the databases serve.
	Zone string
}

// NBCtl runs ovn-nbctl against the northbound database.
func (d *DataPath) NBCtl(ctx context.Context, args ...string) (string, error) {
	return d.run(ctx, "ovn-nbctl", append([]string{"--db=" + d.NB}, args...)...)
}

// SBCtl runs ovn-sbctl against the southbound database.
func (d *DataPath) SBCtl(ctx context.Context, args ...string) (string, error) {
	return d.run(ctx, "ovn-sbctl", append([]string{"--db=" + d.SB}, args...)...)
}

// Trace runs ovn-trace against the southbound database.
func (d *DataPath) Trace(ctx context.Context, args ...string) (string, error) {
	return d.run(ctx, "ovn-trace", append([]string{"--db=" + d.SB}, args...)...)
}

func (d *DataPath) run(ctx context.Context, prog string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(d.Bin, prog), args...)
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+os.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", prog, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// DataPath returns where the stack's OVN databases are, or nil when the
// stack runs without them.
func (s *Stack) DataPath() *DataPath { return s.dataPath }

// startDataPath starts the zone's OVN databases, ovn-northd and
// ovnkube-controller, in that order, each waited for.
func (s *Stack) startDataPath(ctx context.Context) (*process, error) {
	t := time.Now()
	ovn := s.bin("ovn")
	bin := filepath.Join(ovn, "bin")
	if err := requireDir(bin); err != nil {
		return nil, err
	}
	dir := s.path("ovn")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	env := []string{"OVS_RUNDIR=" + dir, "OVS_LOGDIR=" + s.LogDir(), "OVS_DBDIR=" + dir}
	dp := &DataPath{Bin: bin, Zone: DataPathNode}
	for _, db := range []struct {
		name, schema string
		addr, socket *string
		proc         **process
	}{
		{"nb", "ovn-nb.ovsschema", &dp.NB, &dp.NBSocket, &s.ovnNB},
		{"sb", "ovn-sb.ovsschema", &dp.SB, &dp.SBSocket, &s.ovnSB},
	} {
		file := filepath.Join(dir, db.name+".db")
		_ = os.Remove(file)
		create := exec.CommandContext(ctx, filepath.Join(bin, "ovsdb-tool"), "create", file, filepath.Join(ovn, "root", "usr", "share", "ovn", db.schema))
		if out, err := create.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("creating the %s database: %w: %s", db.name, err, out)
		}
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		*db.addr = "tcp:127.0.0.1:" + strconv.Itoa(port)
		socket := filepath.Join(dir, "ovn"+db.name+"_db.sock")
		*db.socket = "unix:" + socket
		p := &process{
			name: "ovsdb-server-" + db.name,
			path: filepath.Join(bin, "ovsdb-server"),
			// TCP on loopback for the tools and ovn-controller; the unix
			// socket for ovn-northd, and for ovnkube-controller, which finds
			// it in its run dir (--nb-run-dir, --sb-run-dir), as beside
			// OVN's databases on a node.
			args: []string{file, "--remote=ptcp:" + strconv.Itoa(port) + ":127.0.0.1",
				"--remote=punix:" + socket,
				"--unixctl=" + filepath.Join(dir, db.name+".ctl"), "--no-chdir"},
			env: env, logPath: s.LogPath("ovsdb-server-" + db.name), restart: true,
		}
		*db.proc = p
		if err := p.start(); err != nil {
			return p, err
		}
		ctl := "ovn-nbctl"
		if db.name == "sb" {
			ctl = "ovn-sbctl"
		}
		addr := *db.addr
		if err := p.waitReady(ctx, s.opts.StartTimeout, func(ctx context.Context) error {
			_, err := dp.run(ctx, ctl, "--db="+addr, "--timeout=2", "show")
			return err
		}); err != nil {
			return p, err
		}
	}
	// ovnkube-controller serves the zone its northbound database names
	// itself after, as OVN-Kubernetes' start-up scripts name it.
	if _, err := dp.NBCtl(ctx, "--timeout=10", "init", "--", "set", "NB_Global", ".", "name="+dp.Zone, "options:name="+dp.Zone); err != nil {
		return s.ovnNB, err
	}
	s.ovnNorthd = &process{
		name: "ovn-northd",
		path: filepath.Join(bin, "ovn-northd"),
		// On the unix sockets: with some 1,500 networks written, a full
		// recompute kept ovn-northd from answering the servers' probe on
		// TCP for 12-14 s; they hung up, the commit it had made failed,
		// and it recomputed again on reconnecting: it never wrote the
		// southbound database again.
		args: []string{"--ovnnb-db=" + dp.NBSocket, "--ovnsb-db=" + dp.SBSocket, "--unixctl=" + filepath.Join(dir, "northd.ctl"), "--no-chdir"},
		env:  env, logPath: s.LogPath("ovn-northd"), restart: true,
	}
	if err := s.ovnNorthd.start(); err != nil {
		return s.ovnNorthd, err
	}

	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s.ovnkubeController = &process{
		name: "ovnkube-controller",
		path: s.bin("ovnkube"),
		args: []string{
			"--init-ovnkube-controller=" + DataPathNode,
			"--zone=" + DataPathNode,
			"--k8s-kubeconfig=" + s.KubeconfigPath(AdminUser),
			"--enable-multi-network",
			"--enable-network-segmentation",
			// Provider services connect tenant networks with ClusterNetworkConnects.
			"--enable-network-connect",
			// NAT gateways and FloatingIPs are EgressIPs.
			"--enable-egress-ip",
			"--gateway-mode=shared",
			// Room for a masquerade address per user-defined network's
			// gateway router, as OVN-Kubernetes sets up with them.
			"--gateway-v4-masquerade-subnet=169.254.0.0/17",
			"--nb-run-dir=" + dir,
			"--sb-run-dir=" + dir,
			"--cluster-subnets=" + ClusterNetworkCIDR + "/23",
			"--k8s-service-cidrs=" + ServiceNetworkCIDR,
			// Its own namespace for its leader election: the default one
			// holds cluster-manager's.
			"--ovn-config-namespace=" + OVNKubernetesNamespace + "-" + DataPathNode,
			"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(port),
			"--config-file=" + os.DevNull,
		},
		// It runs ovn-nbctl without --db.
		env:     append([]string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "OVN_NB_DB=" + dp.NB, "OVN_SB_DB=" + dp.SB}, env...),
		logPath: s.LogPath("ovnkube-controller"),
		restart: true,
	}
	client, _, err := s.Clients(AdminUser)
	if err != nil {
		return nil, err
	}
	if err := applyNamespace(ctx, client, OVNKubernetesNamespace+"-"+DataPathNode); err != nil {
		return nil, err
	}
	patch, err := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{"annotations": dataPathNodeFacts()}})
	if err != nil {
		return nil, err
	}
	if _, err := client.CoreV1().Nodes().Patch(ctx, DataPathNode, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
		return nil, fmt.Errorf("writing the gateway facts of node %s: %w", DataPathNode, err)
	}
	if err := s.ovnkubeController.start(); err != nil {
		return s.ovnkubeController, err
	}
	httpClient := &http.Client{Timeout: 5 * time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	err = s.ovnkubeController.waitReady(ctx, s.opts.StartTimeout, func(ctx context.Context) error {
		body, err := httpGet(ctx, httpClient, url, "")
		if err != nil {
			return err
		}
		if m := ovnkubeControllerReadyMetric.FindStringSubmatch(body); m == nil || m[1] == "0" {
			return fmt.Errorf("ovnkube-controller has not started its controllers yet")
		}
		return nil
	})
	if err != nil {
		return s.ovnkubeController, err
	}
	s.dataPath = dp
	s.logf("OVN data path ready: zone %s, northbound %s, southbound %s, ovn-nbctl/ovn-sbctl/ovn-trace in %s (%s)",
		dp.Zone, dp.NB, dp.SB, bin, time.Since(t).Round(100*time.Millisecond))
	return s.ovnkubeController, nil
}
