package stack

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The network configuration the host's OVN-Kubernetes runs with: OpenShift's
// defaults. Tenant networks must stay clear of both (the demo pool
// tenant-networks excludes the cluster network), or OVN-Kubernetes refuses
// them.
const (
	// ClusterNetworkCIDR is the default network's pod subnet, split into a
	// /23 per node (--cluster-subnets).
	ClusterNetworkCIDR = "10.128.0.0/14"
	// ServiceNetworkCIDR is kube-apiserver's --service-cluster-ip-range and
	// OVN-Kubernetes' --k8s-service-cidrs.
	ServiceNetworkCIDR = "172.30.0.0/16"
	// TenantDNSAddress is the cluster IP of the Service of the provider's
	// tenant DNS server, out of ServiceNetworkCIDR (OpenShift's cluster DNS
	// is 172.30.0.10): the stack's tenant-apiserver runs with
	// --tenant-dns-address set to it, so that tenants of Hard isolation
	// can be made, and a tenant DNS Service the stack runs takes it.
	TenantDNSAddress = "172.30.0.53"
)

// OVNKubernetesNamespace holds cluster-manager's leader-election Lease.
const OVNKubernetesNamespace = "ovn-kubernetes"

// SimulatedNode is a host Node that no kubelet and no ovnkube-node run
// on: the stack creates it with what those two would have written, so that
// OVN-Kubernetes' cluster-manager can do its part for it.
type SimulatedNode struct {
	Name string
	// PrimaryIP is the node's address on the machine network (CIDR
	// notation), the interface OVN-Kubernetes' gateway uses.
	PrimaryIP string
	// PublicIP is its address on the provider's public VLAN, on which
	// EgressIPs from the public pool are hosted.
	PublicIP string
}

// SimulatedNodes are the stack's Nodes: three workers, each on the machine
// network 192.0.2.0/24 and on the public VLAN 203.0.113.0/24 (whose
// addresses .251-.253 the demo pool public excludes), all egress-assignable.
var SimulatedNodes = []SimulatedNode{
	{Name: "worker-0", PrimaryIP: "192.0.2.10/24", PublicIP: "203.0.113.251/24"},
	{Name: "worker-1", PrimaryIP: "192.0.2.11/24", PublicIP: "203.0.113.252/24"},
	{Name: "worker-2", PrimaryIP: "192.0.2.12/24", PublicIP: "203.0.113.253/24"},
}

// Node labels and annotations that ovnkube-node and the kubelet would set.
const (
	// EgressAssignableLabel marks a node that may host EgressIPs (set by the
	// provider's admin on real clusters).
	EgressAssignableLabel = "k8s.ovn.org/egress-assignable"
	// annotations ovnkube-node writes from the node's interfaces.
	nodePrimaryIfAddrAnnotation = "k8s.ovn.org/node-primary-ifaddr"
	hostCIDRsAnnotation         = "k8s.ovn.org/host-cidrs"
)

// ensureSimulatedNodes creates SimulatedNodes, as an upstream controller test
// does: the Node object with the labels and annotations the kubelet and
// ovnkube-node would set, and a Ready status condition.
func ensureSimulatedNodes(ctx context.Context, client kubernetes.Interface) error {
	for i, n := range SimulatedNodes {
		ip := strings.SplitN(n.PrimaryIP, "/", 2)[0]
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name: n.Name,
				Labels: map[string]string{
					corev1.LabelHostname:             n.Name,
					corev1.LabelOSStable:             "linux",
					"node-role.kubernetes.io/worker": "",
					EgressAssignableLabel:            "",
				},
				Annotations: map[string]string{
					nodePrimaryIfAddrAnnotation: fmt.Sprintf(`{"ipv4":%q}`, n.PrimaryIP),
					hostCIDRsAnnotation:         fmt.Sprintf(`[%q,%q]`, n.PrimaryIP, n.PublicIP),
					zoneNameAnnotation:          n.Name,
					// Its OVS chassis and tunnel endpoint, from which the
					// data path node's controller makes it a remote chassis.
					nodeChassisIDAnnotation: chassisID(i),
					nodeEncapIPsAnnotation:  fmt.Sprintf(`[%q]`, ip),
				},
			},
		}
		created, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{FieldManager: fieldManager})
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("creating node %s: %w", n.Name, err)
		}
		now := metav1.Now()
		created.Status = corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message:           "simulated node: no kubelet runs on the test host",
				LastHeartbeatTime: now, LastTransitionTime: now,
			}},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: ip},
				{Type: corev1.NodeHostName, Address: n.Name},
			},
		}
		if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
			return fmt.Errorf("setting the status of node %s: %w", n.Name, err)
		}
	}
	return nil
}

// ovnkubeReadyMetric is set once cluster-manager's controllers have started
// (after its informers synced).
var ovnkubeReadyMetric = regexp.MustCompile(`(?m)^ovnkube_clustermanager_ready_duration_seconds ([0-9.e+-]+)$`)

// startOVNKube runs OVN-Kubernetes' cluster-manager (ovnkube
// --init-cluster-manager) against the host as the admin, in interconnect
// mode with user-defined networks and EgressIPs: it renders
// ClusterUserDefinedNetworks into NetworkAttachmentDefinitions and reports
// their NetworkCreated condition, allocates the simulated nodes' subnets
// and IDs, and assigns EgressIPs to egress-assignable nodes.
func (s *Stack) startOVNKube(ctx context.Context) (*process, error) {
	client, _, err := s.Clients(AdminUser)
	if err != nil {
		return nil, err
	}
	if err := applyNamespace(ctx, client, OVNKubernetesNamespace); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", OVNKubernetesNamespace, err)
	}
	if err := ensureSimulatedNodes(ctx, client); err != nil {
		return nil, err
	}
	if s.ovnkubePort, err = freePort(); err != nil {
		return nil, err
	}
	// ovnkube looks the OVS and OVN command-line tools up on PATH when it
	// starts (cluster-manager never runs them): Debian's, unpacked by
	// hack/build-tools.sh.
	ovsCLI := s.bin("ovs-cli")
	if err := requireDir(filepath.Join(ovsCLI, "usr", "bin")); err != nil {
		return nil, err
	}
	path := filepath.Join(ovsCLI, "usr", "bin") + string(os.PathListSeparator) + filepath.Join(ovsCLI, "usr", "sbin") + string(os.PathListSeparator) + os.Getenv("PATH")
	s.ovnkube = &process{
		name: "ovnkube-cluster-manager",
		path: s.bin("ovnkube"),
		args: append([]string{
			"--init-cluster-manager=" + SimulatedNodes[0].Name,
			"--k8s-kubeconfig=" + s.KubeconfigPath(AdminUser),
			"--enable-multi-network",
			"--enable-network-segmentation",
			"--enable-egress-ip",
			"--enable-route-advertisements",
			// Provider services connect tenant networks with ClusterNetworkConnects.
			"--enable-network-connect",
			// The reachability probe dials each node's management address,
			// which is not on this machine: the simulated nodes are taken
			// as reachable, as OVN-Kubernetes does with the probe off.
			"--egressip-reachability-total-timeout=0",
			"--cluster-subnets=" + ClusterNetworkCIDR + "/23",
			"--k8s-service-cidrs=" + ServiceNetworkCIDR,
			"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(s.ovnkubePort),
			// No /etc/openvswitch/ovn_k8s.conf of the machine's is read.
			"--config-file=" + os.DevNull,
		}, s.opts.OVNKubeArgs...),
		env:     []string{"PATH=" + path},
		logPath: s.LogPath("ovnkube-cluster-manager"),
		restart: true,
	}
	t := time.Now()
	if err := s.ovnkube.start(); err != nil {
		return s.ovnkube, err
	}
	httpClient := &http.Client{Timeout: 5 * time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", s.ovnkubePort)
	err = s.ovnkube.waitReady(ctx, s.opts.StartTimeout, func(ctx context.Context) error {
		body, err := httpGet(ctx, httpClient, url, "")
		if err != nil {
			return err
		}
		if m := ovnkubeReadyMetric.FindStringSubmatch(body); m == nil || m[1] == "0" {
			return fmt.Errorf("cluster-manager has not started its controllers yet")
		}
		return nil
	})
	if err == nil {
		s.logf("ovnkube cluster-manager ready, %d simulated nodes, metrics on 127.0.0.1:%d (%s)", len(SimulatedNodes), s.ovnkubePort, time.Since(t).Round(100*time.Millisecond))
	}
	return s.ovnkube, err
}

// requireDir returns an error that says how to build dir if it is missing.
func requireDir(dir string) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s is missing: run hack/build-tools.sh (make tools) first", dir)
	}
	return nil
}
