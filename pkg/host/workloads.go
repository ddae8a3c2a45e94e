// Package host reads what the tenant API needs to know of the host cluster
// at request time (not through the syncer's informers): a consistent answer
// for decisions such as refusing a delete while pods or VMs run.
package host

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// The resources of host workloads, as named in blockers.
const (
	ResourcePods                    = "pods"
	ResourceVirtualMachines         = "virtualmachines"
	ResourceVirtualMachineInstances = "virtualmachineinstances"
	ResourcePersistentVolumeClaims  = "persistentvolumeclaims"
	ResourceDataVolumes             = "datavolumes"
)

// The host resources of KubeVirt and CDI that hold a tenant's VMs and
// their disks. A host that does not serve them (no KubeVirt) has none.
var (
	VirtualMachines         = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: ResourceVirtualMachines}
	VirtualMachineInstances = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: ResourceVirtualMachineInstances}
	DataVolumes             = schema.GroupVersionResource{Group: "cdi.kubevirt.io", Version: "v1beta1", Resource: ResourceDataVolumes}
	pods                    = schema.GroupVersionResource{Version: "v1", Resource: ResourcePods}
	persistentVolumeClaims  = schema.GroupVersionResource{Version: "v1", Resource: ResourcePersistentVolumeClaims}
)

// State says what deleting a workload would destroy.
type State string

const (
	// Running: a pod, a VirtualMachineInstance, or a VirtualMachine whose
	// instance exists.
	Running State = "Running"
	// Stopped: a VirtualMachine without an instance; its disks are kept.
	Stopped State = "Stopped"
	// Disk: a PersistentVolumeClaim or DataVolume, which holds data.
	Disk State = "Disk"
)

// Workload is an object in a host namespace that the deletion of the
// namespace would destroy.
type Workload struct {
	// Resource is one of the Resource* names.
	Resource string
	Name     string
	State    State
}

// Workloads reads what runs or is stored in a host namespace. Deletes that
// would pull the network or the storage out from under it (a tenant
// Namespace, a whole Tenant) ask it first.
type Workloads interface {
	// Workloads returns the workloads of hostNamespace, sorted by resource
	// and name; none when the namespace does not exist or was not made for
	// owner (the tenant Namespace's UID): what is in someone else's
	// namespace that happens to have the would-be name is neither the
	// tenant's to see nor to block.
	Workloads(ctx context.Context, hostNamespace string, owner types.UID) ([]Workload, error)
}

// Kube is the Workloads of a host cluster, read through its clients.
type Kube struct {
	// Client reads namespaces; Metadata lists the workloads (only their
	// names are needed).
	Client   kubernetes.Interface
	Metadata metadata.Interface
}

var _ Workloads = &Kube{}

// NewWorkloads returns the Workloads of the host the clients reach.
func NewWorkloads(client kubernetes.Interface, md metadata.Interface) *Kube {
	return &Kube{Client: client, Metadata: md}
}

// Workloads implements Workloads with plain LISTs: consistent reads, since
// a pod or disk the cache has not seen yet must still block the delete.
func (h *Kube) Workloads(ctx context.Context, hostNamespace string, owner types.UID) ([]Workload, error) {
	ns, err := h.Client.CoreV1().Namespaces().Get(ctx, hostNamespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading host namespace %s: %w", hostNamespace, err)
	}
	if !hostnames.OwnedBy(ns, owner) {
		return nil, nil
	}
	names := map[schema.GroupVersionResource][]string{}
	for _, gvr := range []schema.GroupVersionResource{pods, VirtualMachines, VirtualMachineInstances, persistentVolumeClaims, DataVolumes} {
		list, err := h.Metadata.Resource(gvr).Namespace(hostNamespace).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) && gvr.Group != "" {
			continue // not served: the host runs no KubeVirt or CDI
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s in host namespace %s: %w", gvr.Resource, hostNamespace, err)
		}
		for i := range list.Items {
			names[gvr] = append(names[gvr], list.Items[i].Name)
		}
	}
	instances := map[string]bool{}
	for _, name := range names[VirtualMachineInstances] {
		instances[name] = true
	}
	var out []Workload
	add := func(gvr schema.GroupVersionResource, state func(name string) State) {
		for _, name := range names[gvr] {
			out = append(out, Workload{Resource: gvr.Resource, Name: name, State: state(name)})
		}
	}
	always := func(s State) func(string) State { return func(string) State { return s } }
	add(pods, always(Running))
	add(VirtualMachineInstances, always(Running))
	add(VirtualMachines, func(name string) State {
		if instances[name] {
			return Running
		}
		return Stopped
	})
	add(persistentVolumeClaims, always(Disk))
	add(DataVolumes, always(Disk))
	Sort(out)
	return out, nil
}

// Sort orders workloads by resource, then name.
func Sort(ws []Workload) {
	sort.Slice(ws, func(i, j int) bool {
		if ws[i].Resource != ws[j].Resource {
			return ws[i].Resource < ws[j].Resource
		}
		return ws[i].Name < ws[j].Name
	})
}

// In returns the workloads of hostNamespace, sorted. A failure to ask the
// host is a 503: the delete that asked may succeed once the host answers.
func In(ctx context.Context, w Workloads, hostNamespace string, owner types.UID) ([]Workload, error) {
	ws, err := w.Workloads(ctx, hostNamespace, owner)
	if err != nil {
		return nil, apierrors.NewServiceUnavailable("cannot check the host for workloads: " + err.Error())
	}
	ws = append([]Workload(nil), ws...)
	Sort(ws)
	return ws, nil
}

// Describe says, for a blocker's message, why w blocks the deletion of
// what holds it (where: "namespace dev", "tenant acme").
func (w Workload) Describe(ref, where string) string {
	switch w.State {
	case Stopped:
		return fmt.Sprintf("%s %s is stopped in %s; deleting would destroy its disks", w.Resource, ref, where)
	case Disk:
		return fmt.Sprintf("%s %s holds a disk in %s; deleting would destroy its data", w.Resource, ref, where)
	default:
		return fmt.Sprintf("%s %s is running in %s", w.Resource, ref, where)
	}
}
