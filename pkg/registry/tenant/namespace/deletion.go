package namespace

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Deletion refuses to delete a tenant Namespace that still holds
// FloatingIPs or LoadBalancers, or whose host namespace still runs pods or
// VMs or holds disks (PVCs, DataVolumes): the objects would otherwise
// outlive it, and come back with the next Namespace of that name; the
// pods would lose their network, and deleting the host namespace would
// destroy the VMs and their data.
type Deletion struct {
	// Storages are the server's: the Namespaces, their Tenants (whose UID
	// names the host namespace), and the kinds that live in Namespaces.
	Storages *kindstore.Storages
	// HostWorkloads reads the workloads of host namespaces; nil: they are
	// not checked.
	HostWorkloads host.Workloads
}

// BeforeDelete answers 409 listing what the Namespace still holds and the
// workloads of its host namespace (Field "<resource> <namespace>/<name>",
// e.g. "virtualmachines dev/web").
func (d *Deletion) BeforeDelete(ctx context.Context, name string) (*metav1.Preconditions, error) {
	causes, err := kindstore.Attached(genericapirequest.WithNamespace(ctx, name), kindstore.Stores(d.Storages.FloatingIPs, d.Storages.LoadBalancers), "namespace "+name)
	if err != nil {
		return nil, err
	}
	workloads, err := d.workloads(ctx, name)
	if err != nil {
		return nil, err
	}
	causes = append(causes, workloads...)
	if len(causes) > 0 {
		return nil, kindstore.DeleteConflict(tenant.Resource("namespaces"), name,
			fmt.Sprintf("namespace %s still holds %d object(s), workload(s) or disk(s); delete them first", name, len(causes)), causes)
	}
	return nil, nil
}

// workloads lists the workloads of the host namespace of Namespace name
// as causes. A Namespace that does not exist has none (the delete answers
// 404), nor does one whose Tenant is being deleted: the Tenant's delete
// was accepted once nothing ran, and the syncer removing its Namespaces
// must not be held up by workloads started since.
func (d *Deletion) workloads(ctx context.Context, name string) ([]metav1.StatusCause, error) {
	tenantName, _ := tenancy.TenantFrom(ctx)
	if d.HostWorkloads == nil || tenantName == "" {
		return nil, nil
	}
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	nsObj, err := d.Storages.Namespaces.Store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	nsMeta, err := meta.Accessor(nsObj)
	if err != nil {
		return nil, err
	}
	obj, err := d.Storages.Tenants.Store.Get(ctx, tenantName, &metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	t, ok := obj.(*tenant.Tenant)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("tenants store returned a %T", obj))
	}
	if t.DeletionTimestamp != nil {
		return nil, nil
	}
	workloads, err := host.In(ctx, d.HostWorkloads, hostnames.Namespace(t.Name, t.UID, name), nsMeta.GetUID())
	if err != nil {
		return nil, err
	}
	causes := make([]metav1.StatusCause, 0, len(workloads))
	for _, w := range workloads {
		ref := name + "/" + w.Name
		causes = append(causes, metav1.StatusCause{
			Type:    kindstore.CauseTypeAttached,
			Field:   w.Resource + " " + ref,
			Message: w.Describe(ref, "namespace "+name),
		})
	}
	return causes, nil
}
