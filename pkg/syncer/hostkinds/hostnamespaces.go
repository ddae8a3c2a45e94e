package hostkinds

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// hostNamespaceKind names host namespaces in messages, apart from tenant
// Namespaces.
const hostNamespaceKind = "host namespace"

// newHostNamespaces is the host kind of the host namespaces the syncer makes
// (tenant Namespaces). Only the labels and annotations the syncer wants
// are its own: they are repaired, and those that others add (OpenShift's,
// a provider's) are left; of the annotations it sets on some tenants' host
// namespaces only (withdrawnAnnotations), those it does not want are
// removed.
func newHostNamespaces(s *controller.Sources) controller.HostKind[*corev1.Namespace] {
	client := s.Host.CoreV1().Namespaces()
	return controller.HostKind[*corev1.Namespace]{
		Kind:       hostNamespaceKind,
		MetricKind: "Namespace",
		Informer:   s.HostNamespaces,
		Written:    s.WrittenOf(s.HostNamespaces),
		Held:       host.HeldNamespaceOf,
		Create: func(ctx context.Context, obj *corev1.Namespace) (*corev1.Namespace, error) {
			return client.Create(ctx, obj, metav1.CreateOptions{FieldManager: controller.FieldManager})
		},
		Get: func(ctx context.Context, _, name string) (*corev1.Namespace, error) {
			return client.Get(ctx, name, metav1.GetOptions{})
		},
		Update: func(ctx context.Context, obj *corev1.Namespace) (*corev1.Namespace, error) {
			return client.Update(ctx, obj, metav1.UpdateOptions{FieldManager: controller.FieldManager})
		},
		Delete: func(ctx context.Context, _, name string, opts metav1.DeleteOptions) error {
			return deleteHostNamespace(ctx, s, name, opts)
		},
		Matches: func(have, want *corev1.Namespace) bool {
			for _, k := range withdrawnAnnotations {
				if unwanted(k, have, want) {
					return false
				}
			}
			return hasAll(have.Labels, want.Labels) && hasAll(have.Annotations, want.Annotations)
		},
		Repair: func(have, want *corev1.Namespace) *corev1.Namespace {
			out := have.DeepCopy()
			if out.Labels == nil {
				out.Labels = map[string]string{}
			}
			for k, v := range want.Labels {
				out.Labels[k] = v
			}
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			for k, v := range want.Annotations {
				out.Annotations[k] = v
			}
			for _, k := range withdrawnAnnotations {
				if unwanted(k, have, want) {
					delete(out.Annotations, k)
				}
			}
			return out
		},
	}
}

// withdrawnAnnotations are the syncer's annotations of host namespaces
// that it removes when it does not want them: the tenant DNS server and
// search path of a tenant of Hard isolation, gone when it is Soft.
var withdrawnAnnotations = [...]string{hostnames.DNSNameserverAnnotation, hostnames.DNSSearchesAnnotation}

// unwanted says whether annotation k is on have and not wanted.
func unwanted(k string, have, want *corev1.Namespace) bool {
	_, on := have.Annotations[k]
	_, wanted := want.Annotations[k]
	return on && !wanted
}

// hasAll says whether have holds every key of want with its value.
func hasAll(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// How a host namespace attached to a network is removed: detached first,
// deleted once OVN-Kubernetes has removed the attachment, or after
// DetachTimeout whatever it did.
const (
	// DetachTimeout bounds the wait for OVN-Kubernetes to remove a
	// detached namespace's NetworkAttachmentDefinition (it cannot while
	// a pod still uses it, or while cluster-manager is down); the
	// namespace is then deleted as it is, and waits for its attachment
	// there instead.
	DetachTimeout = 30 * time.Second
	// detachRecheck is how soon a detaching namespace is looked at again
	// when no event brings it back sooner (the attachment going does).
	detachRecheck = 2 * time.Second
)

// deleteHostNamespace deletes host namespace name, detaching it from its
// network first.
//
// OVN-Kubernetes' cluster-manager keeps a finalizer on the
// NetworkAttachmentDefinition it renders into every namespace a
// ClusterUserDefinedNetwork selects, and removes the attachment, finalizer
// first, when it reconciles the network and finds the namespace no longer
// selected, or terminating. It reconciles the network on a namespace's
// label changes, but a namespace that only starts terminating is found so
// by the next reconcile of the network for another reason: until then
// (minutes, or a relist of its informers) the namespace's content
// deletion stops at the attachment, the namespace stays Terminating, and
// the network reports NetworkCreated=False (NetworkAttachmentDefinitionDeleted)
// for every namespace it serves. Removing the label the network selects the
// namespace by is the change cluster-manager acts on at once: it deletes
// the attachment in milliseconds, the network stays created, and the
// namespace is deleted next, with nothing left to wait for.
//
// A first call removes the label (recording the network and the time in
// hostnames.DetachedAnnotation) and returns a RequeueError; a call while
// the attachment is still there, within DetachTimeout, returns one too;
// any other call deletes the namespace.
func deleteHostNamespace(ctx context.Context, s *controller.Sources, name string, opts metav1.DeleteOptions) error {
	client := s.Host.CoreV1().Namespaces()
	obj, exists, err := s.HostNamespaces.GetStore().GetByKey(name)
	if err != nil {
		return err
	}
	if exists {
		ns, err := host.HeldNamespaceOf(obj)
		if err != nil {
			return err
		}
		if opts.Preconditions != nil && opts.Preconditions.UID != nil && *opts.Preconditions.UID != ns.UID {
			return client.Delete(ctx, name, opts) // not this one: the server answers
		}
		if cudn := ns.Labels[hostnames.HostNetworkLabel]; cudn != "" && renderedInto(s, name, cudn) {
			// The informer holds part of the namespace: the update is
			// made on the host's whole object.
			detached, err := client.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			if detached.UID != ns.UID || detached.DeletionTimestamp != nil {
				return client.Delete(ctx, name, opts) // replaced or going: the server answers
			}
			delete(detached.Labels, hostnames.HostNetworkLabel)
			if detached.Annotations == nil {
				detached.Annotations = map[string]string{}
			}
			detached.Annotations[hostnames.DetachedAnnotation] = cudn + " " + time.Now().UTC().Format(time.RFC3339)
			if _, err := client.Update(ctx, detached, metav1.UpdateOptions{FieldManager: controller.FieldManager}); err != nil {
				return err
			}
			klog.FromContext(ctx).Info("Detached host namespace from its network before deleting it", "hostNamespace", name, "network", cudn)
			return controller.Requeue(detachRecheck, "host namespace %s is detached from network %s before it is deleted", name, cudn)
		}
		if cudn, at, ok := detachedFrom(ns); ok && renderedInto(s, name, cudn) {
			if left := DetachTimeout - time.Since(at); left > 0 {
				return controller.Requeue(min(left, detachRecheck), "host namespace %s waits for OVN-Kubernetes to remove its attachment to network %s", name, cudn)
			}
			klog.FromContext(ctx).Info("Deleting host namespace still attached to its network", "hostNamespace", name, "network", cudn, "detachedFor", DetachTimeout)
		}
	}
	return client.Delete(ctx, name, opts)
}

// detachedFrom reads hostnames.DetachedAnnotation.
func detachedFrom(ns *corev1.Namespace) (cudn string, at time.Time, ok bool) {
	cudn, when, found := strings.Cut(ns.Annotations[hostnames.DetachedAnnotation], " ")
	if !found {
		return "", time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339, when)
	return cudn, at, err == nil
}

// renderedInto says whether OVN-Kubernetes' attachment of network cudn is
// in namespace ns, being deleted or not.
func renderedInto(s *controller.Sources, ns, cudn string) bool {
	_, exists, err := s.HostNetworkAttachments.GetStore().GetByKey(ns + "/" + cudn)
	return err == nil && exists
}
