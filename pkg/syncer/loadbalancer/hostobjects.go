// Package loadbalancer makes every tenant LoadBalancer real on the host: a
// Service of type LoadBalancer in the host namespace of its tenant
// Namespace, which the MetalLB controller gives the LoadBalancer's address
// out of the tenant's own MetalLB pool; the address MetalLB assigned flows
// back into the LoadBalancer's status.
package loadbalancer

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
)

// LoadBalancerLabel names, on a host object, the tenant LoadBalancer it realises.
const LoadBalancerLabel = hostnames.KindLabelPrefix + "loadbalancer"

// Marks are the marks of the host objects of LoadBalancer lb (in tenant
// Namespace ns) of Tenant t.
func Marks(t *tenant.Tenant, lb *tenant.LoadBalancer) hostnames.Marks {
	return hostnames.Marks{Tenant: t.Name, TenantUID: t.UID, KindLabel: LoadBalancerLabel, Name: lb.Name, OwnerUID: lb.UID, ChangedBy: hostnames.ChangedBy(lb)}
}

// Service is the host Service of LoadBalancer lb of Tenant t, in hostNS
// (the host namespace of lb's tenant Namespace ns): type LoadBalancer over
// lb's selector and ports, open to lb's source ranges, on lb's address
// (spec.address, which the registry fills in and keeps unique in the
// tenant) out of the tenant's MetalLB pool. The selector selects pods of
// that host namespace only.
func Service(t *tenant.Tenant, lb *tenant.LoadBalancer, ns, hostNS string) *corev1.Service {
	marks := Marks(t, lb)
	labels := marks.Labels()
	labels[hostnames.NamespaceLabel] = ns
	annotations := marks.Annotations()
	annotations[hostkinds.MetalLBAddressPoolAnnotation] = hostnames.MetalLBPool(t.Name, t.UID)
	if lb.Spec.Address != "" {
		annotations[hostkinds.MetalLBIPsAnnotation] = lb.Spec.Address
	}
	ports := make([]corev1.ServicePort, 0, len(lb.Spec.Ports))
	for _, p := range lb.Spec.Ports {
		sp := corev1.ServicePort{Name: p.Name, Port: p.Port, TargetPort: p.TargetPort, Protocol: corev1.Protocol(p.Protocol)}
		if sp.Protocol == "" {
			sp.Protocol = corev1.ProtocolTCP
		}
		if sp.TargetPort.IntVal == 0 && sp.TargetPort.StrVal == "" {
			sp.TargetPort.IntVal = p.Port
		}
		ports = append(ports, sp)
	}
	selector := make(map[string]string, len(lb.Spec.Selector))
	for k, v := range lb.Spec.Selector {
		selector[k] = v
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: hostnames.LoadBalancerService(lb.Name), Namespace: hostNS, Labels: labels, Annotations: annotations},
		Spec: corev1.ServiceSpec{
			Type:                     corev1.ServiceTypeLoadBalancer,
			Selector:                 selector,
			Ports:                    ports,
			LoadBalancerSourceRanges: append([]string(nil), lb.Spec.SourceRanges...),
		},
	}
}
