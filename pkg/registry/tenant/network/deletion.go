package network

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/vrfpeering"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Deletion refuses to delete a Network that tenant Namespaces are attached
// to (spec.network): their host namespaces would lose their primary
// network, and spec.network is immutable, so the Namespaces go first.
//
// A Namespace created while its Network is being deleted can still end up
// attached to a Network that no longer exists: the Namespace's create finds
// the Network (see namespace.Attachment) just before the delete, which
// found no Namespace just before the create, removes it. Closing that race
// would take a write to the Network by every Namespace create; instead, the
// Namespace waits (HostSynced=False) until a Network of that name exists
// again, and deleting it is never blocked.
type Deletion struct {
	// Storages are the server's; Deletion reads their Namespaces, and the
	// VRFPeerings, which the provider deletes before the Network.
	Storages *kindstore.Storages
}

// BeforeDelete answers 409 listing the Namespaces attached to Network name
// (cause Field "namespaces <name>").
func (d *Deletion) BeforeDelete(ctx context.Context, name string) (*metav1.Preconditions, error) {
	if d.Storages == nil || d.Storages.Namespaces == nil {
		return nil, nil // built alone: no Namespaces
	}
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	list, err := d.Storages.Namespaces.Store.List(ctx, &metainternalversion.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.network", name),
	})
	if err != nil {
		return nil, err
	}
	var causes []metav1.StatusCause
	err = meta.EachListItem(list, func(item runtime.Object) error {
		ns, ok := item.(*tenant.Namespace)
		if !ok || ns.Spec.Network != name {
			return nil
		}
		causes = append(causes, metav1.StatusCause{
			Type:    kindstore.CauseTypeAttached,
			Field:   "namespaces " + ns.Name,
			Message: fmt.Sprintf("namespaces %s is attached to network %s", ns.Name, name),
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	peerings, err := d.peerings(ctx, name)
	if err != nil {
		return nil, err
	}
	switch {
	case len(peerings) > 0 && len(causes) > 0:
		causes = append(causes, peerings...)
		return nil, kindstore.DeleteConflict(tenant.Resource(Resource), name,
			fmt.Sprintf("network %s is the network of %d namespace(s) and is peered by %d VRFPeering(s); delete the namespaces, and have the provider delete the peerings, first",
				name, len(causes)-len(peerings), len(peerings)), causes)
	case len(peerings) > 0:
		return nil, kindstore.DeleteConflict(tenant.Resource(Resource), name,
			fmt.Sprintf("network %s is peered by %d VRFPeering(s) with provider routers; the provider must delete them first", name, len(peerings)), peerings)
	case len(causes) > 0:
		return nil, kindstore.DeleteConflict(tenant.Resource(Resource), name,
			fmt.Sprintf("network %s is the network of %d namespace(s); delete them first", name, len(causes)), causes)
	}
	return nil, nil
}

// peerings lists, as causes (Field "vrfpeerings <name>"), the VRFPeerings
// bound to Network name of the request's tenant. Peerings of a former
// Network or Tenant of these names do not count.
func (d *Deletion) peerings(ctx context.Context, name string) ([]metav1.StatusCause, error) {
	t, _ := tenancy.TenantFrom(ctx)
	if d.Storages.VRFPeerings == nil || d.Storages.Networks == nil || t == "" {
		return nil, nil
	}
	obj, err := d.Storages.Networks.Store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	peerings, err := vrfpeering.PeeringsOf(ctx, d.Storages.VRFPeerings.Store, t, obj.(*tenant.Network))
	if err != nil {
		return nil, err
	}
	causes := make([]metav1.StatusCause, 0, len(peerings))
	for _, p := range peerings {
		causes = append(causes, metav1.StatusCause{
			Type:    kindstore.CauseTypeAttached,
			Field:   "vrfpeerings " + p.Name,
			Message: fmt.Sprintf("vrfpeerings %s peers the VRF of network %s with provider routers", p.Name, name),
		})
	}
	return causes, nil
}
