package onboarding

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// offboardWait is how often offboarding looks whether the host objects it
// deleted are gone (host namespaces take a while to terminate).
const offboardWait = time.Second

// offboard removes everything of a Tenant being deleted: its tenant
// objects, then every host object made for it; once the host objects are
// gone it removes the finalizer, the Tenant goes, and its addresses
// return to their pools. The DELETE was only accepted when nothing was
// attached (see the registry's Offboarding), and nothing new can be
// created in a terminating tenant.
func (c *Controller) offboard(ctx context.Context, t *tenant.Tenant) error {
	if !hasFinalizer(t) {
		return nil
	}
	logger := klog.FromContext(ctx)
	if err := c.deleteTenantObjects(ctx, t); err != nil {
		return err
	}
	left, err := c.deleteHostObjects(ctx, t)
	if err != nil {
		if serr := c.writeStatus(ctx, t, false, controller.ReasonOffboarding, "removing host objects: "+err.Error()); serr != nil {
			return serr
		}
		return err
	}
	if len(left) > 0 {
		msg := fmt.Sprintf("waiting for %d host object(s) to go: %s", len(left), summarize(left))
		if err := c.writeStatus(ctx, t, false, controller.ReasonOffboarding, msg); err != nil {
			return err
		}
		return controller.Requeue(offboardWait, "%s", msg)
	}
	logger.Info("Offboarded tenant: every host object is gone, removing the finalizer")
	return c.updateTenant(ctx, t, func(live *tenant.Tenant) bool {
		kept := live.Finalizers[:0]
		for _, f := range live.Finalizers {
			if f != tenant.FinalizerOffboarding {
				kept = append(kept, f)
			}
		}
		changed := len(kept) != len(live.Finalizers)
		live.Finalizers = kept
		return changed
	})
}

// deleteTenantObjects deletes the tenant's objects from storage.
func (c *Controller) deleteTenantObjects(ctx context.Context, t *tenant.Tenant) error {
	scoped := tenancy.WithTenant(genericapirequest.WithNamespace(ctx, metav1.NamespaceAll), t.Name)
	// Contents first.
	s := c.src.Storage
	for _, st := range []controller.KindStorage{s.FloatingIPs, s.LoadBalancers, s.Networks, s.Namespaces} {
		resource, store := st.Resource, st.Store
		list, err := store.List(scoped, &metainternalversion.ListOptions{})
		if err != nil {
			return err
		}
		err = meta.EachListItem(list, func(obj runtime.Object) error {
			m, err := meta.Accessor(obj)
			if err != nil {
				return err
			}
			uid := m.GetUID()
			_, _, err = store.Delete(genericapirequest.WithNamespace(scoped, m.GetNamespace()), m.GetName(), rest.ValidateAllObjectFunc,
				&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return fmt.Errorf("deleting %s %s: %w", resource, m.GetName(), err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// metalLBKinds are the kinds of controller.MetalLBResources.
var metalLBKinds = map[schema.GroupVersionResource]string{
	controller.IPAddressPools:    "IPAddressPool",
	controller.L2Advertisements:  "L2Advertisement",
	controller.BGPAdvertisements: "BGPAdvertisement",
}

// deleteHostObjects deletes every host object made for the Tenant (by its
// UID) and returns those still there.
func (c *Controller) deleteHostObjects(ctx context.Context, t *tenant.Tenant) ([]string, error) {
	type hostKind struct {
		kind     string
		informer cache.SharedIndexInformer
		delete   func(ctx context.Context, ns, name string, opts metav1.DeleteOptions) error
	}
	kinds := []hostKind{
		{"Namespace", c.src.HostNamespaces, func(ctx context.Context, _, name string, opts metav1.DeleteOptions) error {
			return c.src.Host.CoreV1().Namespaces().Delete(ctx, name, opts)
		}},
		{"RoleBinding", c.src.HostRoleBindings, func(ctx context.Context, ns, name string, opts metav1.DeleteOptions) error {
			return c.src.Host.RbacV1().RoleBindings(ns).Delete(ctx, name, opts)
		}},
	}
	kinds = append(kinds,
		hostKind{"ClusterUserDefinedNetwork", c.src.HostCUDNs, func(ctx context.Context, _, name string, opts metav1.DeleteOptions) error {
			return c.src.HostUDN.K8sV1().ClusterUserDefinedNetworks().Delete(ctx, name, opts)
		}},
		hostKind{"EgressIP", c.src.HostEgressIPs, func(ctx context.Context, _, name string, opts metav1.DeleteOptions) error {
			return c.src.HostEgressIP.K8sV1().EgressIPs().Delete(ctx, name, opts)
		}},
		hostKind{"FlowSchema", c.src.HostFlowSchemas, c.kinds.FlowSchemas.Delete},
		// Its Group in the identity layer (none where the host serves no Groups).
		hostKind{"Group", c.src.HostGroups, c.kinds.Groups.Delete},
		// Its service network's and its provider services' connections.
		hostKind{"ClusterNetworkConnect", c.src.HostClusterNetworkConnects, c.kinds.ClusterNetworkConnects(nil).Delete},
	)
	for _, gvr := range controller.MetalLBResources {
		client := c.src.HostDynamic.Resource(gvr)
		kinds = append(kinds, hostKind{metalLBKinds[gvr], c.src.HostMetalLB[gvr], func(ctx context.Context, ns, name string, opts metav1.DeleteOptions) error {
			return client.Namespace(ns).Delete(ctx, name, opts)
		}})
	}
	var left []string
	for _, k := range kinds {
		objs, err := k.informer.GetIndexer().ByIndex(controller.ByTenant, t.Name)
		if err != nil {
			return nil, err
		}
		for _, m := range ours(objs, t) {
			ref := k.kind + " " + m.GetName()
			if m.GetNamespace() != "" {
				ref = k.kind + " " + m.GetNamespace() + "/" + m.GetName()
			}
			left = append(left, ref)
			if m.GetDeletionTimestamp() != nil {
				continue
			}
			uid := m.GetUID()
			err := k.delete(ctx, m.GetNamespace(), m.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				controller.CountHostWriteError(k.kind, err)
				return nil, fmt.Errorf("deleting %s: %w", ref, err)
			}
		}
	}
	sort.Strings(left)
	return left, nil
}
