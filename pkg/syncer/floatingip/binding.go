package floatingip

import (
	"context"
	"encoding/json"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// findTarget says whether fip's target exists in hostNS, and if not, why
// (a message); and which pods it runs as, to bind: a Pod target is its
// own pod, which also gets the label its Service selects it by (its
// name); a VirtualMachine's are the launcher pods KubeVirt labels with
// the VM's name (none while it is stopped).
func (c *Controller) findTarget(ctx context.Context, fip *tenant.FloatingIP, hostNS string) (found bool, notFound string, pods []string, err error) {
	tg := fip.Spec.Target
	if tg.Kind == tenant.FloatingIPTargetVirtualMachine {
		if !c.src.VirtualMachinesKnown() {
			return false, "VirtualMachine " + tg.Name + " is not known: the host serves no kubevirt.io/v1 VirtualMachines (is KubeVirt installed?)", nil, nil
		}
		obj, exists, err := c.src.HostVirtualMachines.GetIndexer().GetByKey(hostNS + "/" + tg.Name)
		if err != nil {
			return false, "", nil, err
		}
		if m, ok := obj.(metav1.Object); !exists || !ok || m.GetDeletionTimestamp() != nil {
			return false, "VirtualMachine " + tg.Name + " does not exist", nil, nil
		}
		return true, "", c.launcherPods(hostNS, tg.Name), nil
	}
	client := c.src.Host.CoreV1().Pods(hostNS)
	pod, err := client.Get(ctx, tg.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && pod.DeletionTimestamp != nil) {
		return false, "Pod " + tg.Name + " does not exist", nil, nil
	}
	if err != nil {
		return false, "", nil, err
	}
	if pod.Labels[hostnames.PodLabel] != pod.Name {
		if err := patchLabel(ctx, c, hostNS, pod.Name, "", hostnames.PodLabel, pod.Name); err != nil {
			return false, "", nil, err
		}
	}
	return true, "", []string{pod.Name}, nil
}

// launcherPods names the pods of VirtualMachine vm in hostNS, as cached.
func (c *Controller) launcherPods(hostNS, vm string) []string {
	objs, err := c.src.HostLauncherPods.GetIndexer().ByIndex("namespace", hostNS)
	if err != nil {
		return nil
	}
	var names []string
	for _, obj := range objs {
		if m, ok := obj.(metav1.Object); ok && m.GetLabels()[hostnames.VirtualMachineLabel] == vm && m.GetDeletionTimestamp() == nil {
			names = append(names, m.GetName())
		}
	}
	return names
}

// bindPods gives the pods of fip's target (in hostNS) the label
// hostnames.FloatingIPTargetLabel with fip's UID, which its EgressIP
// selects them by, and takes it from the pods fip no longer binds.
func (c *Controller) bindPods(ctx context.Context, fip *tenant.FloatingIP, hostNS string, pods []string) error {
	uid := string(fip.UID)
	bound := map[string]bool{}
	for _, obj := range c.labelled(hostNS) {
		if obj.GetLabels()[hostnames.FloatingIPTargetLabel] == uid {
			bound[obj.GetName()] = true
		}
	}
	keep := map[string]bool{}
	for _, name := range pods {
		keep[name] = true
		if bound[name] {
			continue
		}
		if err := patchLabel(ctx, c, hostNS, name, "", hostnames.FloatingIPTargetLabel, uid); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		klog.FromContext(ctx).V(2).Info("Bound a pod to its FloatingIP's EgressIP", "pod", hostNS+"/"+name)
	}
	return c.unbindPods(ctx, hostNS, func(v string) bool { return v == uid }, keep)
}

// unbindPods takes the label hostnames.FloatingIPTargetLabel from the
// pods of hostNS whose value release says to, but those in keep: they
// leave through the NAT gateway again (if their Network has one).
func (c *Controller) unbindPods(ctx context.Context, hostNS string, release func(uid string) bool, keep map[string]bool) error {
	for _, obj := range c.labelled(hostNS) {
		uid := obj.GetLabels()[hostnames.FloatingIPTargetLabel]
		if keep[obj.GetName()] || !release(uid) {
			continue
		}
		err := patchLabel(ctx, c, hostNS, obj.GetName(), uid, hostnames.FloatingIPTargetLabel, "")
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) && !apierrors.IsConflict(err) {
			return err
		}
		klog.FromContext(ctx).V(2).Info("Released a pod from a FloatingIP's EgressIP", "pod", hostNS+"/"+obj.GetName())
	}
	return nil
}

// labelled returns the cached pods of hostNS that a FloatingIP binds.
func (c *Controller) labelled(hostNS string) []metav1.Object {
	objs, err := c.src.HostTargetPods.GetIndexer().ByIndex("namespace", hostNS)
	if err != nil {
		return nil
	}
	out := make([]metav1.Object, 0, len(objs))
	for _, obj := range objs {
		if m, ok := obj.(metav1.Object); ok {
			out = append(out, m)
		}
	}
	return out
}

// patchLabel sets label key of pod hostNS/name to value, or removes it
// when value is "" and it still is was (a JSON patch that tests it first:
// a pod another FloatingIP has bound since is left alone; the failed test
// is a 422).
func patchLabel(ctx context.Context, c *Controller, hostNS, name, was, key, value string) error {
	pods := c.src.Host.CoreV1().Pods(hostNS)
	if value != "" {
		patch, err := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{"labels": map[string]string{key: value}}})
		if err != nil {
			return err
		}
		_, err = pods.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: controller.FieldManager})
		return countPatchError(err)
	}
	path := "/metadata/labels/" + strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
	patch, err := json.Marshal([]map[string]interface{}{{"op": "test", "path": path, "value": was}, {"op": "remove", "path": path}})
	if err != nil {
		return err
	}
	_, err = pods.Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: controller.FieldManager})
	return countPatchError(err)
}

// countPatchError counts a failed label patch of a pod as a host write
// error, unless the pod is gone or no longer as the patch expected.
func countPatchError(err error) error {
	if !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) && !apierrors.IsConflict(err) {
		controller.CountHostWriteError("Pod", err)
	}
	return err
}
