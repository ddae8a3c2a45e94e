// Package floatingip makes every tenant FloatingIP real on the host. A
// FloatingIP holds one of the tenant's public IPs (the registry claims it
// and records it in status.address); bound to a target (a VirtualMachine,
// whose pod KubeVirt labels vm.kubevirt.io/name, or a Pod, which the syncer
// labels tenant.io/pod with its name) it becomes a 1:1 NAT: a Service of
// type LoadBalancer on that address for the inbound ports, which MetalLB
// announces from the tenant's pool, and an EgressIP that sends the
// target's outbound traffic out from the same address. The EgressIP
// selects the target's pods by the label tenant.io/floatingip-target
// (the FloatingIP's UID) that the syncer gives them and takes back when
// the FloatingIP lets go; a NAT gateway selects only pods without it.
package floatingip

import (
	"fmt"
	"strings"

	egressipv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
)

// FloatingIPLabel names, on a host object, the tenant FloatingIP it realises.
const FloatingIPLabel = hostnames.KindLabelPrefix + "floatingip"

// namespaceNameLabel is the label the API server puts on every namespace,
// with its name.
const namespaceNameLabel = "kubernetes.io/metadata.name"

// Marks are the marks of the host objects of FloatingIP fip of Tenant t.
func Marks(t *tenant.Tenant, fip *tenant.FloatingIP) hostnames.Marks {
	return hostnames.Marks{Tenant: t.Name, TenantUID: t.UID, KindLabel: FloatingIPLabel, Name: fip.Name, OwnerUID: fip.UID, ChangedBy: hostnames.ChangedBy(fip)}
}

// TargetSelector selects the pod of fip's target in its host namespace,
// or is nil without a target.
func TargetSelector(fip *tenant.FloatingIP) map[string]string {
	switch tg := fip.Spec.Target; {
	case tg == nil:
		return nil
	case tg.Kind == tenant.FloatingIPTargetPod:
		return map[string]string{hostnames.PodLabel: tg.Name}
	default:
		return map[string]string{hostnames.VirtualMachineLabel: tg.Name}
	}
}

func labels(t *tenant.Tenant, fip *tenant.FloatingIP, ns string) map[string]string {
	l := Marks(t, fip).Labels()
	l[hostnames.NamespaceLabel] = ns
	return l
}

// Service is the host Service of FloatingIP fip (in tenant Namespace ns,
// host namespace hostNS) of Tenant t: type LoadBalancer on fip's address,
// out of the tenant's MetalLB pool, forwarding fip's ports to its target.
// It exists only for a FloatingIP with a target and ports.
func Service(t *tenant.Tenant, fip *tenant.FloatingIP, ns, hostNS string) *corev1.Service {
	annotations := Marks(t, fip).Annotations()
	annotations[hostkinds.MetalLBAddressPoolAnnotation] = hostnames.MetalLBPool(t.Name, t.UID)
	annotations[hostkinds.MetalLBIPsAnnotation] = fip.Status.Address
	ports := make([]corev1.ServicePort, 0, len(fip.Spec.Ports))
	for _, p := range fip.Spec.Ports {
		protocol := corev1.Protocol(p.Protocol)
		if protocol == "" {
			protocol = corev1.ProtocolTCP
		}
		ports = append(ports, corev1.ServicePort{
			Name:       fmt.Sprintf("%s-%d", strings.ToLower(string(protocol)), p.Port),
			Port:       p.Port,
			TargetPort: intstr.FromInt32(p.Port),
			Protocol:   protocol,
		})
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: hostnames.FloatingIPService(fip.Name), Namespace: hostNS, Labels: labels(t, fip, ns), Annotations: annotations},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: TargetSelector(fip),
			Ports:    ports,
		},
	}
}

// EgressPodSelector selects the pods FloatingIP fip binds: those the
// syncer labelled hostnames.FloatingIPTargetLabel with its UID (the NAT
// gateway of a Network selects the pods without that label).
func EgressPodSelector(fip *tenant.FloatingIP) metav1.LabelSelector {
	return metav1.LabelSelector{MatchLabels: map[string]string{hostnames.FloatingIPTargetLabel: string(fip.UID)}}
}

// EgressIP is the EgressIP of FloatingIP fip (in tenant Namespace ns, host
// namespace hostNS) of Tenant t: the target's pods, which the syncer
// labels with fip's UID, leave through fip's address. It exists only for
// a FloatingIP with a target.
func EgressIP(t *tenant.Tenant, fip *tenant.FloatingIP, ns, hostNS string) *egressipv1.EgressIP {
	return &egressipv1.EgressIP{
		ObjectMeta: metav1.ObjectMeta{
			Name: hostnames.FloatingIPEgressIP(t.UID, ns, fip.Name),
			// The UIDs as labels too: OVN-Kubernetes replaces an
			// EgressIP's annotations (hostnames.Marks.UIDLabels).
			Labels:      Marks(t, fip).WithUIDLabels(labels(t, fip, ns)),
			Annotations: Marks(t, fip).Annotations(),
		},
		Spec: egressipv1.EgressIPSpec{
			EgressIPs: []string{fip.Status.Address},
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{
				hostnames.TenantLabel: t.Name, namespaceNameLabel: hostNS,
			}},
			PodSelector: EgressPodSelector(fip),
		},
		// The EgressIP CRD has no status subresource and requires
		// status.items: an empty list, which OVN-Kubernetes fills.
		Status: egressipv1.EgressIPStatus{Items: []egressipv1.EgressIPStatusItem{}},
	}
}
