package controller

import (
	"fmt"
	"slices"

	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// PriorityClassesAllowed are the PriorityClasses t's pods and VMs may
// name, sorted: those its provider granted, and the host's default class
// (a pod that names none gets that one's name from the host's Priority
// admission before the guard policies see it).
func (s *Sources) PriorityClassesAllowed(t *tenant.Tenant) []string {
	out := slices.Clone(t.Spec.PriorityClasses)
	for _, obj := range s.HostPriorityClasses.GetStore().List() {
		if pc, ok := obj.(*schedulingv1.PriorityClass); ok && pc.GlobalDefault && !slices.Contains(out, pc.Name) {
			out = append(out, pc.Name)
		}
	}
	slices.Sort(out)
	return out
}

// VirtualMachinesKnown says whether HostVirtualMachines holds the host's
// VirtualMachines: the host serves them and the informer has synced.
func (s *Sources) VirtualMachinesKnown() bool { return s.HostVirtualMachines.HasSynced() }

// GroupsKnown says whether HostGroups holds the tenants' OpenShift Groups:
// the host serves user.openshift.io Groups and the informer has synced.
// Until then (forever on a host without them) no Group is written.
func (s *Sources) GroupsKnown() bool { return s.HostGroups.HasSynced() }

// Attached says whether OVN-Kubernetes has rendered the host network
// named cudn into host namespace ns, and the attachment is not being
// deleted.
func (s *Sources) Attached(ns, cudn string) bool {
	obj, exists, err := s.HostNetworkAttachments.GetStore().GetByKey(ns + "/" + cudn)
	if err != nil || !exists {
		return false
	}
	m, err := meta.Accessor(obj)
	return err == nil && m.GetDeletionTimestamp() == nil
}

// HostNamespaceNotReady says why the host namespace hostNS of tenant
// Namespace ns of t cannot hold host objects yet, or "" when it can.
func (src *Sources) HostNamespaceNotReady(t *tenant.Tenant, ns, hostNS string) string {
	obj, exists, err := src.Namespaces.GetStore().GetByKey(ObjectKey(t.Name, "", ns))
	if err != nil || !exists {
		return fmt.Sprintf("tenant Namespace %s does not exist", ns)
	}
	tns := obj.(*tenant.Namespace)
	h, exists, err := src.HostNamespaces.GetStore().GetByKey(hostNS)
	if err != nil || !exists {
		return fmt.Sprintf("host namespace %s does not exist yet", hostNS)
	}
	host := h.(metav1.Object)
	if !hostnames.OwnedBy(host, tns.UID) || host.GetDeletionTimestamp() != nil {
		return fmt.Sprintf("host namespace %s is not Namespace %s's yet", hostNS, ns)
	}
	return ""
}
