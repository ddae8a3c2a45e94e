package hostkinds

import (
	"context"

	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// newClusterUserDefinedNetworks is the host kind of the networks the syncer
// makes (tenant Networks): the namespace selector and the labels that
// other host objects select the network by are repaired (the service
// network label removed where the network is not to carry it), and a
// network whose spec changed (immutable) is replaced.
func newClusterUserDefinedNetworks(s *controller.Sources) controller.HostKind[*udnv1.ClusterUserDefinedNetwork] {
	client := s.HostUDN.K8sV1().ClusterUserDefinedNetworks()
	return controller.HostKind[*udnv1.ClusterUserDefinedNetwork]{
		Kind:     "ClusterUserDefinedNetwork",
		Informer: s.HostCUDNs,
		Written:  s.WrittenOf(s.HostCUDNs),
		Create: func(ctx context.Context, obj *udnv1.ClusterUserDefinedNetwork) (*udnv1.ClusterUserDefinedNetwork, error) {
			return client.Create(ctx, obj, metav1.CreateOptions{FieldManager: controller.FieldManager})
		},
		Get: func(ctx context.Context, _, name string) (*udnv1.ClusterUserDefinedNetwork, error) {
			return client.Get(ctx, name, metav1.GetOptions{})
		},
		Update: func(ctx context.Context, obj *udnv1.ClusterUserDefinedNetwork) (*udnv1.ClusterUserDefinedNetwork, error) {
			return client.Update(ctx, obj, metav1.UpdateOptions{FieldManager: controller.FieldManager})
		},
		Delete: func(ctx context.Context, _, name string, opts metav1.DeleteOptions) error {
			return client.Delete(ctx, name, opts)
		},
		Matches: func(have, want *udnv1.ClusterUserDefinedNetwork) bool {
			return apiequality.Semantic.DeepEqual(have.Spec.NamespaceSelector, want.Spec.NamespaceSelector) &&
				have.Labels[hostnames.HostNetworkLabel] == want.Labels[hostnames.HostNetworkLabel] &&
				have.Labels[hostnames.ConnectGroupLabel] == want.Labels[hostnames.ConnectGroupLabel] &&
				have.Labels[hostnames.ServiceNetworkLabel] == want.Labels[hostnames.ServiceNetworkLabel]
		},
		Repair: func(have, want *udnv1.ClusterUserDefinedNetwork) *udnv1.ClusterUserDefinedNetwork {
			out := have.DeepCopy()
			out.Spec.NamespaceSelector = want.Spec.NamespaceSelector
			if out.Labels == nil {
				out.Labels = map[string]string{}
			}
			out.Labels[hostnames.HostNetworkLabel] = want.Labels[hostnames.HostNetworkLabel]
			out.Labels[hostnames.ConnectGroupLabel] = want.Labels[hostnames.ConnectGroupLabel]
			if v, ok := want.Labels[hostnames.ServiceNetworkLabel]; ok {
				out.Labels[hostnames.ServiceNetworkLabel] = v
			} else {
				delete(out.Labels, hostnames.ServiceNetworkLabel)
			}
			return out
		},
		Replace: func(have, want *udnv1.ClusterUserDefinedNetwork) bool {
			return !apiequality.Semantic.DeepEqual(have.Spec.Network, want.Spec.Network)
		},
	}
}
