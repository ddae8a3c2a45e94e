// Package host reads what the tenant API needs to know of the host cluster
// at request time (not through the syncer's informers): a consistent answer
// for decisions such as refusing a delete while pods run.
package host

import (
	"context"
	"fmt"
	"slices"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// Pods reads which pods run in a host namespace. Deletes that would pull
// the network out from under running pods (a tenant Namespace, a whole
// Tenant) ask it first.
type Pods interface {
	// Pods returns the names of the pods in hostNamespace; none when the
	// namespace does not exist or was not made for owner (the tenant
	// Namespace's UID): pods in someone else's namespace that happens to
	// have the would-be name are neither the tenant's to see nor to block.
	Pods(ctx context.Context, hostNamespace string, owner types.UID) ([]string, error)
}

// KubePods is the Pods of a host cluster, read through its client.
type KubePods struct {
	// Client is the host's.
	Client kubernetes.Interface
}

var _ Pods = &KubePods{}

// NewPods returns the Pods of the host client reaches.
func NewPods(client kubernetes.Interface) *KubePods {
	return &KubePods{Client: client}
}

// Pods implements Pods with a plain LIST: a consistent read, since a
// pod the cache has not seen yet must still block the delete.
func (h *KubePods) Pods(ctx context.Context, hostNamespace string, owner types.UID) ([]string, error) {
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
	list, err := h.Client.CoreV1().Pods(hostNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pods in host namespace %s: %w", hostNamespace, err)
	}
	names := make([]string, 0, len(list.Items))
	for i := range list.Items {
		names = append(names, list.Items[i].Name)
	}
	sort.Strings(names)
	return names, nil
}

// PodsIn returns the names of the pods in hostNamespace, sorted. A failure to ask
// the host is a 503: the delete that asked may succeed once the host
// answers.
func PodsIn(ctx context.Context, pods Pods, hostNamespace string, owner types.UID) ([]string, error) {
	names, err := pods.Pods(ctx, hostNamespace, owner)
	if err != nil {
		return nil, apierrors.NewServiceUnavailable("cannot check the host for pods: " + err.Error())
	}
	names = slices.Clone(names)
	sort.Strings(names)
	return names, nil
}
