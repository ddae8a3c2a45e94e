package tenant

import (
	"context"
	"fmt"
	"reflect"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
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
// exactly the tenant's host namespaces, listed by name (an empty list
// would mean every namespace, so with no namespace there is no pool).
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
	marks := hostnames.Marks{Tenant: t.Name, TenantUID: t.UID, OwnerUID: t.UID}
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
// is a state the syncer may not fix (the name is someone else's).
func (c *Controller) ensureMetalLB(ctx context.Context, o metallbObject, name string, marks hostnames.Marks) (string, error) {
	ns := c.src.MetalLBNamespace
	client := c.src.HostDynamic.Resource(o.gvr).Namespace(ns)
	cached, exists, err := c.src.HostMetalLB[o.gvr].GetStore().GetByKey(ns + "/" + name)
	if err != nil {
		return "", err
	}
	var have *unstructured.Unstructured
	if exists {
		have = cached.(*unstructured.Unstructured)
	}
	if o.spec == nil {
		if have == nil || !hostnames.OwnedBy(have, marks.OwnerUID) {
			return "", nil
		}
		uid := have.GetUID()
		err := client.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return "", err
		}
		return "", nil
	}
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o.spec)
	if err != nil {
		return "", err
	}
	if have == nil {
		u := &unstructured.Unstructured{Object: map[string]interface{}{"spec": spec}}
		u.SetGroupVersionKind(o.gvr.GroupVersion().WithKind(o.kind))
		u.SetName(name)
		u.SetNamespace(ns)
		marks.Apply(u)
		_, err := client.Create(ctx, u, metav1.CreateOptions{FieldManager: controller.FieldManager})
		if err == nil {
			klog.FromContext(ctx).V(2).Info("Created MetalLB object", "kind", o.kind, "name", name)
			return "", nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return "", err
		}
		if have, err = client.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return "", err
		}
	}
	if !hostnames.OwnedBy(have, marks.OwnerUID) {
		return fmt.Sprintf("%s %s/%s exists and was not made for this tenant; it is left untouched", o.kind, ns, name), nil
	}
	same, err := sameSpec(have, o.spec)
	if err != nil {
		return "", err
	}
	if same && marks.On(have) {
		return "", nil
	}
	repaired := have.DeepCopy()
	repaired.Object["spec"] = spec
	marks.Apply(repaired)
	if _, err := client.Update(ctx, repaired, metav1.UpdateOptions{FieldManager: controller.FieldManager}); err != nil {
		return "", err
	}
	klog.FromContext(ctx).Info("Repaired MetalLB object", "kind", o.kind, "name", name)
	return "", nil
}

// sameSpec compares the spec of have with want in want's typed form, so
// that fields the CRD defaults (avoidBuggyIPs: false) do not count as drift.
func sameSpec(have *unstructured.Unstructured, want interface{}) (bool, error) {
	raw, _, err := unstructured.NestedMap(have.Object, "spec")
	if err != nil {
		return false, err
	}
	typed := reflect.New(reflect.TypeOf(want).Elem()).Interface()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, typed); err != nil {
		return false, nil // not even our shape: rewrite it
	}
	return reflect.DeepEqual(typed, want), nil
}
