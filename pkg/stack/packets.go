package stack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// Packets is the data path's second tier: the data path node's chassis
// really forwards packets. Open vSwitch runs with its userspace datapath
// (no kernel module), ovn-controller turns the zone's southbound logical
// flows into its OpenFlow tables, and pods scheduled to DataPathNode get a
// network namespace each, plugged into the integration bridge by a veth as
// ovnkube-node's CNI would plug a container. Packets only ever travel
// between the namespaces plugged here: nothing is bridged to a device of
// the machine, and the gateway routers' external ports have no bridge.
type Packets struct {
	dp  *DataPath
	dir string
	// id makes the names this tier gives devices and network namespaces
	// of the machine (which all stacks share) its own.
	id string
	// Bridge is the integration bridge ovn-controller manages.
	Bridge string
	db     string

	ovsdb, vswitchd, controller *process

	mu    sync.Mutex
	hosts []*PodHost
}

// PodHost is a pod plugged into the data path: a network namespace with
// the pod's primary network interface (eth0) on its logical switch port.
type PodHost struct {
	// NetNS is the network namespace's name (ip netns).
	NetNS string
	// Pod is the pod's "<namespace>/<name>".
	Pod string
	// Port is the logical switch port the interface is bound to.
	Port string
	// IP, Prefix, MAC and Gateway are the pod's address on its primary
	// network, as ovnkube-controller assigned it.
	IP      netip.Addr
	Prefix  netip.Prefix
	MAC     string
	Gateway netip.Addr

	veth string
}

// PacketsUnavailable says why this machine cannot run the real-packet
// tier, or "" when it can: it needs root (network namespaces, veths and
// the userspace datapath's tap device), /dev/net/tun and iproute2's ip.
func PacketsUnavailable() string {
	if os.Geteuid() != 0 {
		return "real packets need root (network namespaces, veth pairs, a tap device); this process runs as uid " + fmt.Sprint(os.Geteuid())
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return "real packets need /dev/net/tun for the userspace datapath's bridge: " + err.Error()
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "real packets need iproute2's ip: " + err.Error()
	}
	return ""
}

// Packets returns the real-packet tier once StartPackets has started it.
func (s *Stack) Packets() *Packets {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.packets
}

// StartPackets starts the real-packet tier on the data path node: an Open
// vSwitch database and ovs-vswitchd (userspace datapath) and ovn-controller
// as the node's chassis (the chassis ID ovnkube-controller was told), and
// waits until ovn-controller is connected to the southbound database and
// has made the integration bridge. A second call returns the running tier.
// Stop stops it, and removes the namespaces and devices it made.
func (s *Stack) StartPackets(ctx context.Context) (*Packets, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.packets != nil {
		return s.packets, nil
	}
	if s.dataPath == nil {
		return nil, errors.New("the stack runs without its data path (Options.SkipDataPath)")
	}
	if why := PacketsUnavailable(); why != "" {
		return nil, errors.New(why)
	}
	start := time.Now()
	sum := sha256.Sum256([]byte(s.workDir))
	id := hex.EncodeToString(sum[:])[:4]
	p := &Packets{dp: s.dataPath, dir: s.path("ovs"), id: id, Bridge: "tkbr" + id}
	p.db = "unix:" + filepath.Join(p.dir, "db.sock")
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return nil, err
	}
	bin := s.dataPath.Bin
	root := filepath.Join(filepath.Dir(bin), "root")
	env := []string{"OVS_RUNDIR=" + p.dir, "OVS_DBDIR=" + p.dir, "OVN_RUNDIR=" + p.dir, "OVS_LOGDIR=" + s.LogDir()}
	if _, err := p.run(ctx, "ovsdb-tool", "create", filepath.Join(p.dir, "conf.db"), filepath.Join(root, "usr", "share", "openvswitch", "vswitch.ovsschema")); err != nil {
		return nil, err
	}
	p.ovsdb = &process{
		name: "ovsdb-server-ovs", path: filepath.Join(bin, "ovsdb-server"),
		args: []string{filepath.Join(p.dir, "conf.db"), "--remote=punix:" + filepath.Join(p.dir, "db.sock"),
			"--unixctl=" + filepath.Join(p.dir, "ovsdb-server.ctl"), "--no-chdir"},
		env: env, logPath: s.LogPath("ovsdb-server-ovs"),
	}
	// The node's chassis: ovn-controller registers under the chassis ID
	// ovnkube-controller was given, so the gateway routers it bound to that
	// chassis are this node's. The encapsulation address is loopback: this
	// zone has no remote chassis to tunnel to.
	chassis := chassisID(0)
	p.vswitchd = &process{
		name: "ovs-vswitchd", path: filepath.Join(bin, "ovs-vswitchd"),
		args: []string{p.db, "--disable-system", "--unixctl=" + filepath.Join(p.dir, "ovs-vswitchd.ctl"), "--no-chdir"},
		env:  env, logPath: s.LogPath("ovs-vswitchd"),
	}
	p.controller = &process{
		name: "ovn-controller", path: filepath.Join(bin, "ovn-controller"),
		args: []string{p.db, "--unixctl=" + filepath.Join(p.dir, "ovn-controller.ctl"), "--no-chdir"},
		env:  env, logPath: s.LogPath("ovn-controller"),
	}
	s.packets = p // Stop cleans up whatever of it started
	if err := p.ovsdb.start(); err != nil {
		return nil, err
	}
	if err := p.ovsdb.waitReady(ctx, s.opts.StartTimeout, func(ctx context.Context) error {
		_, err := p.vsctl(ctx, "--no-wait", "init")
		return err
	}); err != nil {
		return nil, err
	}
	if err := p.vswitchd.start(); err != nil {
		return nil, err
	}
	// Without --no-wait, ovs-vsctl returns once ovs-vswitchd has applied
	// the change: it is running.
	if err := p.vswitchd.waitReady(ctx, s.opts.StartTimeout, func(ctx context.Context) error {
		_, err := p.vsctl(ctx, "set", "Open_vSwitch", ".",
			"external_ids:system-id="+chassis, "external_ids:hostname="+DataPathNode,
			"external_ids:ovn-remote="+s.dataPath.SB, "external_ids:ovn-encap-type=geneve",
			"external_ids:ovn-encap-ip=127.0.0.1", "external_ids:ovn-bridge="+p.Bridge,
			"external_ids:ovn-bridge-datapath-type=netdev")
		return err
	}); err != nil {
		return nil, err
	}
	if err := p.controller.start(); err != nil {
		return nil, err
	}
	if err := p.controller.waitReady(ctx, s.opts.StartTimeout, func(ctx context.Context) error {
		out, err := p.run(ctx, "ovn-appctl", "-t", filepath.Join(p.dir, "ovn-controller.ctl"), "connection-status")
		if err != nil {
			return err
		}
		if strings.TrimSpace(out) != "connected" {
			return fmt.Errorf("ovn-controller: %s", strings.TrimSpace(out))
		}
		_, err = p.vsctl(ctx, "br-exists", p.Bridge)
		return err
	}); err != nil {
		return nil, err
	}
	s.logf("real packets ready: ovs-vswitchd (userspace datapath) and ovn-controller as chassis %s of node %s, bridge %s (%s)",
		chassis, DataPathNode, p.Bridge, time.Since(start).Round(100*time.Millisecond))
	return p, nil
}

// packetProcesses are the real-packet tier's processes, if it runs.
func (s *Stack) packetProcesses() []*process {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.packets == nil {
		return nil
	}
	return s.packets.processes()
}

// processes are the tier's processes, for Stop and PID.
func (p *Packets) processes() []*process {
	return []*process{p.controller, p.vswitchd, p.ovsdb}
}

// stop removes the pods' namespaces and devices, stops the processes and
// removes the bridge's tap device (the userspace datapath makes it
// persistent).
func (p *Packets) stop(timeout time.Duration) error {
	var errs []error
	p.mu.Lock()
	hosts := p.hosts
	p.hosts = nil
	p.mu.Unlock()
	for _, h := range hosts {
		errs = append(errs, h.remove())
	}
	for _, proc := range p.processes() {
		if proc != nil {
			errs = append(errs, proc.stop(timeout))
		}
	}
	if linkExists(p.Bridge) {
		errs = append(errs, ipCmd("link", "del", p.Bridge))
	}
	return errors.Join(errs...)
}

func (p *Packets) vsctl(ctx context.Context, args ...string) (string, error) {
	return p.run(ctx, "ovs-vsctl", append([]string{"--db=" + p.db, "--timeout=10"}, args...)...)
}

func (p *Packets) run(ctx context.Context, prog string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(p.dp.Bin, prog), args...)
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+p.dir, "OVN_RUNDIR="+p.dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", prog, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// podNetwork is the part of a pod's k8s.ovn.org/pod-networks entry the
// plug reads.
type podNetwork struct {
	IPAddress string `json:"ip_address"`
	MAC       string `json:"mac_address"`
	Gateway   string `json:"gateway_ip"`
	Role      string `json:"role"`
}

// Plug gives pod namespace/name, which must be scheduled to DataPathNode,
// a network namespace with its primary network's interface, as
// ovnkube-node's CNI plugs a container: a veth whose pod end is eth0 with
// the pod's MAC and address and a default route through its network's
// gateway, and whose other end is bound to the pod's logical switch port
// (iface-id, and iface-id-ver the pod's UID, which OVN-Kubernetes checks).
// It waits until ovn-controller has claimed the port.
func (p *Packets) Plug(ctx context.Context, kube kubernetes.Interface, namespace, name string) (*PodHost, error) {
	var nw podNetwork
	var uid string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pod, err := kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if pod.Spec.NodeName != DataPathNode {
			return false, fmt.Errorf("pod %s/%s is scheduled to %q, not %s", namespace, name, pod.Spec.NodeName, DataPathNode)
		}
		var nets map[string]podNetwork
		if err := json.Unmarshal([]byte(pod.Annotations["k8s.ovn.org/pod-networks"]), &nets); err != nil {
			return false, nil // not annotated yet
		}
		for _, n := range nets {
			if n.Role == "primary" {
				nw, uid = n, string(pod.UID)
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s has no primary network address: %w", namespace, name, err)
	}
	prefix, err := netip.ParsePrefix(nw.IPAddress)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: address %q: %w", namespace, name, nw.IPAddress, err)
	}
	gw, err := netip.ParseAddr(nw.Gateway)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: gateway %q: %w", namespace, name, nw.Gateway, err)
	}
	// The pod's logical switch port on that network: the one of its UID
	// with its primary MAC.
	var lsp string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		out, err := p.dp.NBCtl(ctx, "--format=csv", "--data=bare", "--no-headings", "--columns=name,addresses",
			"find", "Logical_Switch_Port", "options:iface-id-ver="+uid)
		if err != nil {
			return false, err
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			n, addrs, _ := strings.Cut(line, ",")
			if f := strings.Fields(addrs); len(f) > 0 && f[0] == nw.MAC {
				lsp = n
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s has no logical switch port with MAC %s: %w", namespace, name, nw.MAC, err)
	}

	p.mu.Lock()
	n := len(p.hosts)
	h := &PodHost{
		NetNS: fmt.Sprintf("tk-%s-%d", p.id, n), Pod: namespace + "/" + name, Port: lsp,
		IP: prefix.Addr(), Prefix: prefix.Masked(), MAC: nw.MAC, Gateway: gw,
		veth: fmt.Sprintf("tk%s%d", p.id, n),
	}
	p.hosts = append(p.hosts, h)
	p.mu.Unlock()
	peer := h.veth + "p"
	steps := [][]string{
		{"netns", "add", h.NetNS},
		{"link", "add", h.veth, "type", "veth", "peer", "name", peer},
	}
	for _, s := range steps {
		if err := ipCmd(s...); err != nil {
			return nil, err
		}
	}
	// The machine's side of the veth only carries frames to and from the
	// bridge: no address, no IPv6, no ARP answers for the machine's own.
	if err := disableHostStack(h.veth); err != nil {
		return nil, err
	}
	// Checksums are computed by the sender, not left to an offload that a
	// userspace datapath reading the veth by AF_PACKET never completes
	// (TCP would be dropped by the receiver). Set on both ends before the
	// pod's moves: the setting moves with the device.
	for _, dev := range []string{h.veth, peer} {
		if err := disableTxChecksumOffload(dev); err != nil {
			return nil, err
		}
	}
	steps = [][]string{
		{"link", "set", peer, "netns", h.NetNS},
		{"-n", h.NetNS, "link", "set", peer, "name", "eth0"},
		{"-n", h.NetNS, "link", "set", "eth0", "address", nw.MAC},
		{"-n", h.NetNS, "addr", "add", prefix.String(), "dev", "eth0"},
		{"-n", h.NetNS, "link", "set", "lo", "up"},
		{"-n", h.NetNS, "link", "set", "eth0", "up"},
		{"-n", h.NetNS, "route", "add", "default", "via", gw.String(), "dev", "eth0"},
		{"link", "set", h.veth, "up"},
	}
	for _, s := range steps {
		if err := ipCmd(s...); err != nil {
			return nil, err
		}
	}
	if _, err := p.vsctl(ctx, "add-port", p.Bridge, h.veth, "--", "set", "Interface", h.veth,
		"external_ids:iface-id="+lsp, "external_ids:iface-id-ver="+uid); err != nil {
		return nil, err
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		out, err := p.dp.SBCtl(ctx, "--format=csv", "--data=bare", "--no-headings", "--columns=up", "find", "Port_Binding", "logical_port="+lsp)
		if err != nil {
			return false, err
		}
		return strings.TrimSpace(out) == "true", nil
	})
	if err != nil {
		return nil, fmt.Errorf("ovn-controller did not bind port %s of pod %s/%s: %w", lsp, namespace, name, err)
	}
	return h, nil
}

// Unplug removes h's namespace and veth, and its port from the bridge.
func (p *Packets) Unplug(ctx context.Context, h *PodHost) error {
	p.mu.Lock()
	for i, x := range p.hosts {
		if x == h {
			p.hosts = append(p.hosts[:i], p.hosts[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	_, err := p.vsctl(ctx, "--if-exists", "del-port", p.Bridge, h.veth)
	return errors.Join(err, h.remove())
}

// IPCmd runs ip with the arguments in h's network namespace (e.g. "neigh",
// "add", ...), for a test that shapes what the pod sends.
func (h *PodHost) IPCmd(args ...string) error {
	return ipCmd(append([]string{"-n", h.NetNS}, args...)...)
}

func (h *PodHost) String() string { return h.Pod + " (" + h.IP.String() + ")" }

func (h *PodHost) remove() error {
	var errs []error
	if linkExists(h.veth) {
		errs = append(errs, ipCmd("link", "del", h.veth))
	}
	if _, err := os.Stat(filepath.Join("/run/netns", h.NetNS)); err == nil {
		errs = append(errs, ipCmd("netns", "del", h.NetNS))
	}
	return errors.Join(errs...)
}

func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func linkExists(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", name))
	return err == nil
}

// disableHostStack keeps the machine's own network stack off a device
// that only carries a pod's frames to the bridge.
func disableHostStack(dev string) error {
	for file, value := range map[string]string{
		"/proc/sys/net/ipv6/conf/" + dev + "/disable_ipv6": "1",
		"/proc/sys/net/ipv4/conf/" + dev + "/arp_ignore":   "8",
	} {
		if err := os.WriteFile(file, []byte(value), 0o644); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	return nil
}
