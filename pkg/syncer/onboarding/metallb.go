package onboarding

import (
	"context"
	"fmt"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
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
// exactly hostNamespaces, host namespaces of the tenant listed by name (an
// empty list would mean every namespace, so with none there is no pool).
func (c *Controller) syncMetalLB(ctx context.Context, t *tenant.Tenant, hostNamespaces []string) ([]string, error) {
	name := hostnames.MetalLBPool(t.Name, t.UID)
	want := len(t.Status.PublicIPs) > 0 && len(hostNamespaces) > 0
	var pool, l2, bgp interface{}
	if want {
		addresses := make([]string, 0, len(t.Status.PublicIPs))
		for _, ip := range t.Status.PublicIPs {
			addresses = append(addresses, ip+"/32")
		}
		pool = &metallbv1beta1.IPAddressPoolSpec{
			Addresses:  addresses,
			AutoAssign: ptr.To(false),
			AllocateTo: &metallbv1beta1.ServiceAllocation{Namespaces: hostNamespaces},
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

// ensureMetalLB creates, repairs or deletes one MetalLB object. A problem
// is a state the syncer may not fix (the name is someone else's) or waits
// for (an object of the name being deleted).
func (c *Controller) ensureMetalLB(ctx context.Context, o metallbObject, name string, marks hostnames.Marks) (string, error) {
	ns := c.src.MetalLBNamespace
	kind := c.kinds.MetalLB(o.gvr, o.kind, o.spec)
	if o.spec == nil {
		_, err := kind.Remove(ctx, ns, name, marks)
		return "", err
	}
	want, err := hostkinds.NewMetalLBObject(o.gvr, o.kind, ns, name, o.spec)
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
