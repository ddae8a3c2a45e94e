package tenant

import (
	"context"
	"fmt"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// metallbObject is one MetalLB object of a tenant: what it should be, or
// nil spec when it should not exist.
type metallbObject struct {
	gvr  schema.GroupVersionResource
	kind string
	spec interface{} // a pointer to the typed spec
}

// syncMetalLB makes the tenant's MetalLB pool and advertisement match: the
// pool holds its public IPs, is never assigned automatically, and serves
// exactly the tenant's host namespaces (PoolAllocation); with no host
// namespace there is no pool.
func (c *Controller) syncMetalLB(ctx context.Context, t *tenant.Tenant, anyNamespace bool, unlabelled []string) ([]string, error) {
	name := hostnames.MetalLBPool(t.Name, t.UID)
	want := len(t.Status.PublicIPs) > 0 && anyNamespace
	var pool, l2, bgp interface{}
	if want {
		addresses := make([]string, 0, len(t.Status.PublicIPs))
		for _, ip := range t.Status.PublicIPs {
			addresses = append(addresses, ip+"/32")
		}
		pool = &metallbv1beta1.IPAddressPoolSpec{
			Addresses:  addresses,
			AutoAssign: ptr.To(false),
			AllocateTo: PoolAllocation(name, t.UID, unlabelled),
		}
		if c.Advertise == AdvertiseBGP {
			bgp = &metallbv1beta1.BGPAdvertisementSpec{IPAddressPools: []string{name}}
		} else {
			l2 = &metallbv1beta1.L2AdvertisementSpec{IPAddressPools: []string{name}}
		}
	}
	marks := hostnames.Marks{Tenant: t.Name, TenantUID: t.UID, OwnerUID: t.UID, ChangedBy: hostnames.ChangedBy(t)}
	var problems []string
	for _, o := range []metallbObject{
		{controller.IPAddressPools, "IPAddressPool", pool},
		{controller.L2Advertisements, "L2Advertisement", l2},
		{controller.BGPAdvertisements, "BGPAdvertisement", bgp},
	} {
		problem, err := c.ensureMetalLB(ctx, o, name, marks)
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", o.kind, c.src.MetalLBNamespace, name, err)
		}
		if problem != "" {
			problems = append(problems, problem)
		}
	}
	return problems, nil
}

// PoolAllocation is the serviceAllocation of the MetalLB pool named pool of
// the tenant with UID uid: its host namespaces, selected by the tenant UID
// label, so that the pool stays the same however many namespaces come and
// go (listed by name, it was written, and MetalLB reloaded, with each).
// MetalLB resolves the selector against the namespaces it has seen and
// serves every namespace when the result is empty (a new tenant's
// namespace it has not seen yet, the last one deleted before the pool):
// the pool's own name, which the syncer never gives a namespace, keeps
// the list of names from ever being empty. Host namespaces made before
// they had the label (unlabelled) are listed by name until relabelled.
func PoolAllocation(pool string, uid types.UID, unlabelled []string) *metallbv1beta1.ServiceAllocation {
	return &metallbv1beta1.ServiceAllocation{
		Namespaces:         append([]string{pool}, unlabelled...),
		NamespaceSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{hostnames.TenantUIDLabel: string(uid)}}},
	}
}

// ensureMetalLB creates, repairs or deletes one MetalLB object. A problem
// is a state the syncer may not fix (the name is someone else's) or waits
// for (an object of the name being deleted).
func (c *Controller) ensureMetalLB(ctx context.Context, o metallbObject, name string, marks hostnames.Marks) (string, error) {
	ns := c.src.MetalLBNamespace
	kind := c.src.MetalLBKind(o.gvr, o.kind, o.spec)
	if o.spec == nil {
		_, err := kind.Remove(ctx, ns, name, marks)
		return "", err
	}
	want, err := controller.NewMetalLBObject(o.gvr, o.kind, ns, name, o.spec)
	if err != nil {
		return "", err
	}
	marks.Apply(want)
	got, err := kind.Ensure(ctx, want, marks)
	if err != nil || got.Synced {
		return "", err
	}
	return got.Message, nil
}
