package hostkinds

import (
	"encoding/json"
	"slices"

	cncv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/clusternetworkconnect/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// ClusterNetworkConnects is the host kind of the ClusterNetworkConnects
// the syncer makes, whose spec compares in its typed form spec. Their
// connect subnets cannot change on the host: a connect whose subnets
// differ is replaced.
func (c *Catalogue) ClusterNetworkConnects(spec interface{}) controller.HostKind[*unstructured.Unstructured] {
	return withSpec(c.connects, spec)
}

func newClusterNetworkConnects(s *controller.Sources) controller.HostKind[*unstructured.Unstructured] {
	k := dynamicKind(s, controller.ClusterNetworkConnects, "ClusterNetworkConnect", s.HostClusterNetworkConnects)
	k.Replace = func(have, want *unstructured.Unstructured) bool {
		h, _, _ := unstructured.NestedFieldNoCopy(have.Object, "spec", "connectSubnets")
		w, _, _ := unstructured.NestedFieldNoCopy(want.Object, "spec", "connectSubnets")
		return !apiequality.Semantic.DeepEqual(h, w)
	}
	return k
}

// ConnectReport is OVN-Kubernetes' verdict on a ClusterNetworkConnect.
type ConnectReport int

// The verdicts of ReadConnectReport.
const (
	// ConnectUnreported: OVN-Kubernetes has not reported on it yet.
	ConnectUnreported ConnectReport = iota
	// ConnectAccepted: cluster-manager validated it and allocated what it
	// needs (Accepted=True, or status Success).
	ConnectAccepted
	// ConnectRefused: OVN-Kubernetes could not apply it (Accepted=False,
	// or status Failure).
	ConnectRefused
)

// ConnectAcceptedCondition is the condition OVN-Kubernetes' cluster-manager
// reports a ClusterNetworkConnect with.
const ConnectAcceptedCondition = "Accepted"

// ReadConnectReport reads OVN-Kubernetes' report on ClusterNetworkConnect
// u: cluster-manager's condition Accepted (it validates the connect
// subnets against the selected networks and the other connections that
// select them, and allocates their slices and tunnel key), or the API's
// status field. A refusal comes with the message of Accepted=False, else
// of the first False condition ("" when there is none).
func ReadConnectReport(u *unstructured.Unstructured) (ConnectReport, string) {
	status, _, _ := unstructured.NestedString(u.Object, "status", "status")
	refused, accepted := status == string(cncv1.Failure), status == string(cncv1.Success)
	var msg string
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]interface{})
		if m["type"] == ConnectAcceptedCondition {
			switch m["status"] {
			case string(metav1.ConditionTrue):
				accepted = true
			case string(metav1.ConditionFalse):
				refused = true
				msg, _ = m["message"].(string)
			}
			continue
		}
		if s, _ := m["message"].(string); msg == "" && m["status"] == string(metav1.ConditionFalse) {
			msg = s
		}
	}
	switch {
	case refused:
		return ConnectRefused, msg
	case accepted:
		return ConnectAccepted, ""
	}
	return ConnectUnreported, ""
}

// ConnectSubnetAnnotation is where OVN-Kubernetes' cluster-manager
// records, on a ClusterNetworkConnect, the slice of the connect subnets it
// gave each network it connects: a JSON object keyed by network
// ("layer2_<id>", "layer3_<id>"). A network it has not found (a
// ClusterUserDefinedNetwork rendered into no namespace yet) has none.
const ConnectSubnetAnnotation = "k8s.ovn.org/network-connect-subnet"

// ConnectedNetworks is how many networks OVN-Kubernetes' cluster-manager
// connects through ClusterNetworkConnect u (ConnectSubnetAnnotation); 0
// when it has not said, or said something unreadable.
func ConnectedNetworks(u *unstructured.Unstructured) int {
	var given map[string]json.RawMessage
	if err := json.Unmarshal([]byte(u.GetAnnotations()[ConnectSubnetAnnotation]), &given); err != nil {
		return 0
	}
	return len(given)
}

// newAliasServices is the host kind of the alias Services of provider
// services in tenants' host namespaces: ExternalName Services. What the
// syncer owns of them: the type, the external name and the ports.
func newAliasServices(s *controller.Sources) controller.HostKind[*corev1.Service] {
	k := newServices(s)
	k.Kind = "alias Service"
	k.Matches = func(have, want *corev1.Service) bool {
		return have.Spec.Type == want.Spec.Type && have.Spec.ExternalName == want.Spec.ExternalName &&
			len(have.Spec.Selector) == 0 && slices.EqualFunc(have.Spec.Ports, want.Spec.Ports, func(h, w corev1.ServicePort) bool {
			return h.Name == w.Name && h.Port == w.Port && h.Protocol == w.Protocol && h.TargetPort == w.TargetPort
		})
	}
	k.Repair = func(have, want *corev1.Service) *corev1.Service {
		out := have.DeepCopy()
		out.Spec = want.Spec
		return out
	}
	return k
}
