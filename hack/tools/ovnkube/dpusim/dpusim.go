// Package dpusim stands in for OVN-Kubernetes' DPU simulator library, which
// the Go module proxy does not serve at the version go-controller requires.
// go-controller reads these names only in its simulated-DPU mode (Kind
// containers posing as DPUs), which the stack never runs: ovnkube runs as
// cluster-manager and as the data path node's ovnkube-controller. The values
// are the stack's own and need only be well-formed.
package dpusim

import "regexp"

const (
	// MacOUI prefixes the MACs the simulated mode derives.
	MacOUI = "02:00:00"
	// DPURepresentorFmt names a simulated representor by PF and function.
	DPURepresentorFmt = "sim%s-%s"
	// HostGatewayPeerInterface is the simulated host gateway's peer.
	HostGatewayPeerInterface = "simhgw0"
	// HostGatewayInterfaceIndex is the simulated host gateway's index.
	HostGatewayInterfaceIndex = 0
)

// ReSimulationNetdevFunc matches a simulated device ID "<pf>-<function>".
var ReSimulationNetdevFunc = regexp.MustCompile(`^.*?(\d+)-(\d+)$`)
