package tenants

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/client-go/util/workqueue"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/providerservice"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Resources a Tenant owns, as named in blockers.
const (
	ResourceNamespaces    = "namespaces"
	ResourceNetworks      = "networks"
	ResourceFloatingIPs   = "floatingips"
	ResourceLoadBalancers = "loadbalancers"
	ResourceHostClaims    = "hostclaims"
	// ResourceVRFPeerings and ResourceProviderServices name the provider's
	// objects that block a Tenant's delete.
	ResourceVRFPeerings      = "vrfpeerings"
	ResourceProviderServices = "providerservices"
)

// cleanedUpBySyncer are the kinds the syncer deletes itself when it
// offboards a Tenant that carries tenant.FinalizerOffboarding. The others
// hold public IPs or servers a tenant must give up on purpose: they
// always block.
var cleanedUpBySyncer = map[string]bool{ResourceNamespaces: true, ResourceNetworks: true}

// Offboarding decides whether a Tenant may be deleted: only when nothing is
// attached to it. FloatingIPs, LoadBalancers and the workloads in its host
// namespaces (pods, VMs, their instances, PVCs and DataVolumes) always
// block: deleting the Tenant would take their addresses and networks away
// under them, and destroy the VMs' disks. Its Namespaces and Networks block only
// while the Tenant lacks tenant.FinalizerOffboarding: without it nobody
// would delete them, and objects that outlived their Tenant would be
// inherited by the next Tenant of the same name.
type Offboarding struct {
	// Storages are the server's: Tenants, and the tenant-owned kinds
	// (Namespaces, Networks, FloatingIPs, LoadBalancers).
	Storages *kindstore.Storages
	// HostWorkloads reads the workloads of the tenant's host namespaces;
	// nil: they are not checked.
	HostWorkloads host.Workloads
}

// owned returns the storages of tenant-owned kinds, by resource name
// (Resource*).
func (o *Offboarding) owned() map[string]*genericregistry.Store {
	s := o.Storages
	return kindstore.Stores(s.Namespaces, s.Networks, s.FloatingIPs, s.LoadBalancers, s.HostClaims)
}

// Blockers reads Tenant name and lists what keeps it from being deleted,
// sorted by resource, namespace and name.
func (o *Offboarding) Blockers(ctx context.Context, name string) (*tenant.Tenant, []tenant.OffboardingBlocker, error) {
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	obj, err := o.Storages.Tenants.Store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	t, ok := obj.(*tenant.Tenant)
	if !ok {
		return nil, nil, apierrors.NewInternalError(fmt.Errorf("tenants store returned a %T", obj))
	}
	blockers, err := o.blockersOf(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	provider, err := o.providerBlockersOf(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	return t, append(blockers, provider...), nil
}

// providerBlockersOf lists the provider's objects made for t alone: the
// VRFPeerings of its Networks and the ProviderServices offered to it
// alone. The provider deletes them (or offers the service elsewhere);
// the tenant cannot. A Tenant already being deleted has none.
func (o *Offboarding) providerBlockersOf(ctx context.Context, t *tenant.Tenant) ([]tenant.OffboardingBlocker, error) {
	if t.DeletionTimestamp != nil {
		return nil, nil
	}
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	var blockers []tenant.OffboardingBlocker
	if s := o.Storages.VRFPeerings; s != nil {
		list, err := s.Store.List(ctx, &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.tenant", t.Name)})
		if err != nil {
			return nil, err
		}
		err = meta.EachListItem(list, func(item runtime.Object) error {
			if p, ok := item.(*tenant.VRFPeering); ok && p.Spec.Tenant == t.Name && p.Status.TenantUID == t.UID {
				blockers = append(blockers, tenant.OffboardingBlocker{
					Resource: ResourceVRFPeerings, Name: p.Name,
					Message: fmt.Sprintf("vrfpeerings %s peers network %s of tenant %s with provider routers; the provider must delete it", p.Name, p.Spec.Network, t.Name),
				})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if s := o.Storages.ProviderServices; s != nil {
		list, err := s.Store.List(ctx, &metainternalversion.ListOptions{})
		if err != nil {
			return nil, err
		}
		err = meta.EachListItem(list, func(item runtime.Object) error {
			// An offer bound to a former tenant of the same name is not
			// this one's (status.offers).
			if p, ok := item.(*tenant.ProviderService); ok && !p.Spec.AllTenants && len(p.Spec.Tenants) == 1 && providerservice.OfferedTo(t.Name, t.UID, p) {
				blockers = append(blockers, tenant.OffboardingBlocker{
					Resource: ResourceProviderServices, Name: p.Name,
					Message: fmt.Sprintf("providerservices %s is offered to tenant %s alone; the provider must delete it or offer it to others", p.Name, t.Name),
				})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(blockers, func(i, j int) bool {
		if blockers[i].Resource != blockers[j].Resource {
			return blockers[i].Resource < blockers[j].Resource
		}
		return blockers[i].Name < blockers[j].Name
	})
	return blockers, nil
}

// blockersOf lists what keeps t from being deleted. A Tenant already being
// deleted has none: its delete was accepted.
func (o *Offboarding) blockersOf(ctx context.Context, t *tenant.Tenant) ([]tenant.OffboardingBlocker, error) {
	if t.DeletionTimestamp != nil {
		return nil, nil
	}
	ctx = tenancy.WithTenant(genericapirequest.WithNamespace(ctx, metav1.NamespaceNone), t.Name)
	finalized := slices.Contains(t.Finalizers, tenant.FinalizerOffboarding)
	owner := "tenant " + t.Name
	var blockers []tenant.OffboardingBlocker
	stored := map[string]int32{}
	var namespaces []string
	var namespaceUIDs []types.UID
	owned := o.owned()
	for resource, store := range owned {
		list, err := store.List(ctx, &metainternalversion.ListOptions{})
		if err != nil {
			return nil, err
		}
		err = meta.EachListItem(list, func(item runtime.Object) error {
			m, err := meta.Accessor(item)
			if err != nil {
				return err
			}
			stored[resource]++
			if resource == ResourceNamespaces {
				namespaces = append(namespaces, m.GetName())
				namespaceUIDs = append(namespaceUIDs, m.GetUID())
			}
			if finalized && cleanedUpBySyncer[resource] {
				return nil
			}
			ref := objectRef(m.GetNamespace(), m.GetName())
			blockers = append(blockers, tenant.OffboardingBlocker{
				Resource: resource, Namespace: m.GetNamespace(), Name: m.GetName(),
				Message: fmt.Sprintf("%s %s is attached to %s", resource, ref, owner),
			})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}

	// Charged but not stored yet: a create in flight, which would be
	// stored after the Tenant is gone. (The delete's resourceVersion
	// precondition catches the creates charged after this read.)
	u := t.Status.Usage
	for resource, used := range map[string]int32{
		ResourceNamespaces: u.Namespaces, ResourceNetworks: u.Networks,
		ResourceFloatingIPs: u.FloatingIPs, ResourceLoadBalancers: u.LoadBalancers,
		ResourceHostClaims: u.HostClaims,
	} {
		if _, ok := owned[resource]; !ok || (finalized && cleanedUpBySyncer[resource]) {
			continue
		}
		if inFlight := used - stored[resource]; inFlight > 0 {
			blockers = append(blockers, tenant.OffboardingBlocker{
				Resource: resource,
				Message: fmt.Sprintf("%s has %d %s create(s) in flight (usage %d, stored %d)",
					owner, inFlight, resource, used, stored[resource]),
			})
		}
	}

	if o.HostWorkloads != nil {
		workloads, err := o.workloadsIn(ctx, t, namespaces, namespaceUIDs)
		if err != nil {
			return nil, err
		}
		for i, ns := range namespaces {
			for _, w := range workloads[i] {
				blockers = append(blockers, tenant.OffboardingBlocker{
					Resource: w.Resource, Namespace: ns, Name: w.Name, State: tenant.WorkloadState(w.State),
					Message: w.Describe(ns+"/"+w.Name, owner),
				})
			}
		}
	}

	sort.Slice(blockers, func(i, j int) bool {
		a, b := blockers[i], blockers[j]
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return blockers, nil
}

// hostListWorkers bounds the host namespaces one check reads at once.
const hostListWorkers = 8

// workloadsIn reads the workloads of the host namespaces of t's
// namespaces, a few at a time: a tenant may have hundreds of Namespaces.
func (o *Offboarding) workloadsIn(ctx context.Context, t *tenant.Tenant, namespaces []string, uids []types.UID) ([][]host.Workload, error) {
	workloads := make([][]host.Workload, len(namespaces))
	var (
		mu       sync.Mutex
		firstErr error
	)
	listCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	workqueue.ParallelizeUntil(listCtx, hostListWorkers, len(namespaces), func(i int) {
		found, err := host.In(listCtx, o.HostWorkloads, hostnames.Namespace(t.Name, t.UID, namespaces[i]), uids[i])
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if firstErr == nil {
				firstErr = err
				cancel()
			}
			return
		}
		workloads[i] = found
	})
	if firstErr != nil {
		return nil, firstErr
	}
	// A request that ended left namespaces unchecked.
	return workloads, ctx.Err()
}

// Report is the OffboardingReport of t.
func (o *Offboarding) Report(ctx context.Context, t *tenant.Tenant) (*tenant.OffboardingReport, error) {
	blockers, err := o.blockersOf(ctx, t)
	if err != nil {
		return nil, err
	}
	provider, err := o.providerBlockersOf(ctx, t)
	if err != nil {
		return nil, err
	}
	return &tenant.OffboardingReport{
		ObjectMeta: metav1.ObjectMeta{
			Name:              t.Name,
			UID:               t.UID,
			ResourceVersion:   t.ResourceVersion,
			CreationTimestamp: t.CreationTimestamp,
			DeletionTimestamp: t.DeletionTimestamp,
		},
		Tenant:           t.Name,
		Ready:            len(blockers) == 0 && len(provider) == 0,
		Blockers:         blockers,
		ProviderBlockers: provider,
	}, nil
}

// Causes are blockers as the causes of a refused delete: Field is
// "<resource> [<namespace>/]<name>" (kindstore.Attached's form), or the
// resource alone for creates in flight.
func Causes(blockers []tenant.OffboardingBlocker) []metav1.StatusCause {
	causes := make([]metav1.StatusCause, 0, len(blockers))
	for _, b := range blockers {
		field := b.Resource
		if b.Name != "" {
			field += " " + objectRef(b.Namespace, b.Name)
		}
		causes = append(causes, metav1.StatusCause{Type: kindstore.CauseTypeAttached, Field: field, Message: b.Message})
	}
	return causes
}

// BeforeDelete refuses with 409 the delete of a Tenant that anything is
// attached to, listing every blocker, and otherwise lets it happen only if
// the Tenant is unchanged since it was checked: every create charges the
// Tenant's quota first, so a create racing with the delete changes its
// resourceVersion. The delete of a Tenant already being deleted goes
// through: it was accepted once.
func (o *Offboarding) BeforeDelete(ctx context.Context, name string) (*metav1.Preconditions, error) {
	t, blockers, err := o.Blockers(ctx, name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	if t.DeletionTimestamp != nil {
		return nil, nil
	}
	if len(blockers) > 0 {
		return nil, kindstore.DeleteConflict(tenant.Resource("tenants"), name,
			fmt.Sprintf("%d object(s) or creates in flight are attached to tenant %s; delete them first (GET tenants/%s/offboarding lists them)",
				len(blockers), name, name), Causes(blockers))
	}
	uid, rv := t.UID, t.ResourceVersion
	return &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}, nil
}

// objectRef names an object as "[namespace/]name", as kindstore.ObjectRef does.
func objectRef(namespace, name string) string {
	if namespace != "" {
		return namespace + "/" + name
	}
	return name
}
