package onboarding

import (
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// publicIPsInUse counts the distinct public addresses that tenant t's
// FloatingIPs, LoadBalancers and NAT gateways hold, as their status
// reports them (status.usage.publicIPs): the provider's list of Tenants
// then shows what is in use without reading every tenant's objects.
func publicIPsInUse(src *controller.Sources, t string) int32 {
	held := map[string]bool{}
	for _, inf := range []cache.SharedIndexInformer{src.FloatingIPs, src.LoadBalancers, src.Networks} {
		objs, _ := inf.GetIndexer().ByIndex(controller.ByTenant, t)
		for _, obj := range objs {
			if a := heldAddress(obj); a != "" {
				held[a] = true
			}
		}
	}
	return int32(len(held))
}

// heldAddress is the public address a FloatingIP, a LoadBalancer or a
// Network's NAT gateway holds: "" for none, or for another kind.
func heldAddress(obj interface{}) string {
	switch o := controller.Unwrap(obj).(type) {
	case *tenant.FloatingIP:
		return o.Status.Address
	case *tenant.LoadBalancer:
		return o.Status.Address
	case *tenant.Network:
		return o.Status.NATGatewayIP
	}
	return ""
}
