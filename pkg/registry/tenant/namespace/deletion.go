package namespace

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/base"
)

// Deletion refuses to delete a tenant Namespace that still holds
// FloatingIPs or LoadBalancers: they would otherwise outlive it, and come
// back with the next Namespace of that name.
type Deletion struct {
	// Contents are the storages of the kinds that live in tenant
	// Namespaces, by resource name.
	Contents map[string]*genericregistry.Store
}

// BeforeDelete answers 409 listing what the Namespace still holds.
func (d *Deletion) BeforeDelete(ctx context.Context, name string) (*metav1.Preconditions, error) {
	causes, err := base.Attached(genericapirequest.WithNamespace(ctx, name), d.Contents, "namespace "+name)
	if err != nil {
		return nil, err
	}
	if len(causes) > 0 {
		return nil, base.DeleteConflict(tenant.Resource("namespaces"), name,
			fmt.Sprintf("namespace %s still holds %d object(s); delete them first", name, len(causes)), causes)
	}
	return nil, nil
}
