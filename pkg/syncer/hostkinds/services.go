package hostkinds

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// MetalLB annotations of the Services the syncer makes.
const (
	MetalLBAddressPoolAnnotation = "metallb.io/address-pool"
	MetalLBIPsAnnotation         = "metallb.io/loadBalancerIPs"
)

// newServices is the host kind of the LoadBalancer Services the syncer makes.
// What it owns of them: the type, selector, ports (nodePorts are the
// host's), source ranges and MetalLB annotations.
func newServices(s *controller.Sources) controller.HostKind[*corev1.Service] {
	client := s.Host.CoreV1()
	return controller.HostKind[*corev1.Service]{
		Kind:     "Service",
		Informer: s.HostServices,
		Written:  s.WrittenOf(s.HostServices),
		Create: func(ctx context.Context, obj *corev1.Service) (*corev1.Service, error) {
			return client.Services(obj.Namespace).Create(ctx, obj, metav1.CreateOptions{FieldManager: controller.FieldManager})
		},
		Get: func(ctx context.Context, ns, name string) (*corev1.Service, error) {
			return client.Services(ns).Get(ctx, name, metav1.GetOptions{})
		},
		Update: func(ctx context.Context, obj *corev1.Service) (*corev1.Service, error) {
			return client.Services(obj.Namespace).Update(ctx, obj, metav1.UpdateOptions{FieldManager: controller.FieldManager})
		},
		Delete: func(ctx context.Context, ns, name string, opts metav1.DeleteOptions) error {
			return client.Services(ns).Delete(ctx, name, opts)
		},
		Matches: func(have, want *corev1.Service) bool {
			return have.Spec.Type == want.Spec.Type &&
				apiequality.Semantic.DeepEqual(have.Spec.Selector, want.Spec.Selector) &&
				portsMatch(have.Spec.Ports, want.Spec.Ports) &&
				slices.Equal(have.Spec.LoadBalancerSourceRanges, want.Spec.LoadBalancerSourceRanges) &&
				annotationsMatch(have.Annotations, want.Annotations)
		},
		Repair: func(have, want *corev1.Service) *corev1.Service {
			out := have.DeepCopy()
			out.Spec.Type = want.Spec.Type
			out.Spec.Selector = want.Spec.Selector
			out.Spec.LoadBalancerSourceRanges = want.Spec.LoadBalancerSourceRanges
			ports := make([]corev1.ServicePort, len(want.Spec.Ports))
			for i, p := range want.Spec.Ports {
				ports[i] = p
				for _, h := range have.Spec.Ports {
					if h.Port == p.Port && h.Protocol == p.Protocol {
						ports[i].NodePort = h.NodePort
					}
				}
			}
			out.Spec.Ports = ports
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			for _, k := range []string{MetalLBAddressPoolAnnotation, MetalLBIPsAnnotation} {
				if v, ok := want.Annotations[k]; ok {
					out.Annotations[k] = v
				} else {
					delete(out.Annotations, k)
				}
			}
			return out
		},
	}
}

// portsMatch compares the ports the syncer sets, ignoring the host's nodePorts.
func portsMatch(have, want []corev1.ServicePort) bool {
	if len(have) != len(want) {
		return false
	}
	for i := range want {
		h, w := have[i], want[i]
		if h.Name != w.Name || h.Port != w.Port || h.Protocol != w.Protocol || h.TargetPort != w.TargetPort {
			return false
		}
	}
	return true
}

// annotationsMatch compares the MetalLB annotations.
func annotationsMatch(have, want map[string]string) bool {
	for _, k := range []string{MetalLBAddressPoolAnnotation, MetalLBIPsAnnotation} {
		hv, hok := have[k]
		wv, wok := want[k]
		if hok != wok || hv != wv {
			return false
		}
	}
	return true
}

// AssignedAddress is the address the host's load balancer (MetalLB)
// assigned to svc, or "".
func AssignedAddress(svc *corev1.Service) string {
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			return in.IP
		}
	}
	return ""
}
