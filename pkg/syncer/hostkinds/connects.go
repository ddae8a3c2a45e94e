package hostkinds

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
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
