package controller

import (
	"context"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// HostObjects is one kind of host object as the periodic orphan check
// sees it: the objects the syncer made (its informer), and how to delete
// one.
type HostObjects struct {
	Kind     string
	Informer cache.SharedIndexInformer
	Delete   func(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error
}

// Objects returns k as the orphan check sees it.
func (k HostKind[T]) Objects() HostObjects {
	return HostObjects{Kind: k.Kind, Informer: k.Informer, Delete: k.Delete}
}

// Owners are where the tenant objects are that own the host objects
// marked with one kind label: their storage (the truth) and their
// informer (read first). Namespaced owners live in tenant Namespaces, and
// their host objects say which in the Namespace kind label.
type Owners struct {
	Store      Store
	Informer   cache.SharedIndexInformer
	Namespaced bool
}

// Orphans is what the orphan check looks at, registered by the
// controllers as they are built: which kinds of host objects each kind of
// tenant object makes, and where those owners are. Host objects marked
// with no kind label ("") are owned by their Tenant.
type Orphans struct {
	mu     sync.Mutex
	kinds  []HostObjects
	labels map[string][]string // owner kind labels, by host kind
	owners map[string]Owners   // by owner kind label
}

// Register says that the tenant objects in owners, whose host objects
// carry ownerLabel, make host objects of the kinds made.
func (o *Orphans) Register(ownerLabel string, owners Owners, made ...HostObjects) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.owners == nil {
		o.owners, o.labels = map[string]Owners{}, map[string][]string{}
	}
	o.owners[ownerLabel] = owners
	for _, h := range made {
		if !slices.ContainsFunc(o.kinds, func(k HostObjects) bool { return k.Kind == h.Kind }) {
			o.kinds = append(o.kinds, h)
		}
		if !slices.Contains(o.labels[h.Kind], ownerLabel) {
			o.labels[h.Kind] = append(o.labels[h.Kind], ownerLabel)
		}
	}
}

// Kinds returns the registered kinds of host objects.
func (o *Orphans) Kinds() []HostObjects {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.kinds)
}

// OwnerLabel returns the kind label that names the owner of obj, a host
// object of kind: of the owner labels registered for the kind, one obj
// carries, the owners that live in tenant Namespaces first (a Service in a
// host namespace carries the Namespace label too, but its owner is the
// LoadBalancer or FloatingIP); the first registered when obj carries none.
// A label with an empty value names no owner, and counts as not carried.
func (o *Orphans) OwnerLabel(kind string, obj metav1.Object) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	labels := o.labels[kind]
	if len(labels) == 0 {
		return ""
	}
	best, found := labels[0], false
	for _, l := range labels {
		if l != "" && hostnames.Label(obj, l) == "" {
			continue
		}
		if !found || (o.owners[l].Namespaced && !o.owners[best].Namespaced) {
			best, found = l, true
		}
	}
	return best
}

// Owners returns where the owners marked with ownerLabel are.
func (o *Orphans) Owners(ownerLabel string) (Owners, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	owners, ok := o.owners[ownerLabel]
	return owners, ok
}
