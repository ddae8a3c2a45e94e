// Package publicdns gives the public addresses of FloatingIPs and
// LoadBalancers their names in the provider's public DNS zone
// (tenant-apiserver --public-dns-zone, hostnames.PublicDNSName) and says
// how their statuses report them: status.dnsName, and the DNSNamed
// condition.
//
// An object is named while its status holds its address: a FloatingIP
// from the registry's claim until it is deleted, a LoadBalancer while
// MetalLB has assigned its address on the host. The name is written in
// the same status write as what the name rests on (a LoadBalancer's
// address, a FloatingIP's address as stored), so a status never names an
// address its object does not hold; the API refuses such a status anyway.
//
// A FloatingIP and a LoadBalancer of the same name in one Namespace would
// get the same name. The older one (by creation time, the LoadBalancer
// when both were created in the same second) holds it; the other reports
// DNSNamed=False, NameTaken, and gets it once the older one is deleted.
// So a name never moves to another object while its holder exists.
package publicdns

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// Reasons of the DNSNamed condition.
const (
	// ReasonNamed: status.dnsName names the address.
	ReasonNamed = "Named"
	// ReasonNameTooLong: the name would be longer than a DNS name may be
	// (253 characters). Object, Namespace and tenant names are DNS labels
	// and the zone is checked at start-up, so only the length of the whole
	// can be at fault, with a zone of more than 94 characters.
	ReasonNameTooLong = "NameTooLong"
	// ReasonNameTaken: an older object of the other kind, of the same name
	// in the same Namespace, holds the name.
	ReasonNameTaken = "NameTaken"
)

// Kind is a kind of object with a public address.
type Kind string

// The kinds named.
const (
	FloatingIP   Kind = "FloatingIP"
	LoadBalancer Kind = "LoadBalancer"
)

// Names names the addresses of FloatingIPs and LoadBalancers in Zone.
type Names struct {
	// Zone is the public DNS zone; empty, nothing is named.
	Zone string
	// FloatingIPs and LoadBalancers are the syncer's informers of the two
	// kinds: which of two objects of one name holds it.
	FloatingIPs, LoadBalancers cache.SharedIndexInformer
}

// New returns the Names of zone, reading src's informers.
func New(src *controller.Sources, zone string) *Names {
	return &Names{Zone: zone, FloatingIPs: src.FloatingIPs, LoadBalancers: src.LoadBalancers}
}

// Name is what a status says of an object's public DNS name: the name
// (status.dnsName, "" for none) and, when Reason is set, the DNSNamed
// condition (True with ReasonNamed).
type Name struct {
	Name            string
	Reason, Message string
}

// Of returns the Name of object o, of kind, whose key is key, while its
// status holds address ("" for none).
func (n *Names) Of(kind Kind, key queue.Key, o metav1.Object, address string) Name {
	if n.Zone == "" || address == "" {
		return Name{}
	}
	name, err := hostnames.PublicDNSName(n.Zone, key.Tenant, key.Namespace, key.Name)
	if err != nil {
		return Name{Reason: ReasonNameTooLong, Message: err.Error()}
	}
	if other, ok := n.olderOther(kind, key, o); ok {
		return Name{Reason: ReasonNameTaken, Message: fmt.Sprintf("%s is the name of the older %s %s/%s", name, kind.other(), key.Namespace, other.GetName())}
	}
	return Name{Name: name, Reason: ReasonNamed, Message: fmt.Sprintf("%s names %s in the public DNS zone %s", name, address, hostnames.CanonicalDNSName(n.Zone))}
}

// olderOther returns the object of the other kind with o's key when it
// holds the name before o.
func (n *Names) olderOther(kind Kind, key queue.Key, o metav1.Object) (metav1.Object, bool) {
	obj, exists, err := n.informer(kind.other()).GetStore().GetByKey(controller.ObjectKey(key.Tenant, key.Namespace, key.Name))
	if err != nil || !exists {
		return nil, false
	}
	other, err := meta.Accessor(obj)
	if err != nil || other.GetUID() == o.GetUID() {
		return nil, false
	}
	mine, theirs := o.GetCreationTimestamp(), other.GetCreationTimestamp()
	if theirs.Equal(&mine) {
		return other, kind.other() == LoadBalancer
	}
	return other, theirs.Before(&mine)
}

// Set records name in a status (its dnsName and conditions, of an object
// of generation gen), and says whether anything changed.
func Set(dnsName *string, conditions *[]metav1.Condition, gen int64, name Name) bool {
	changed := *dnsName != name.Name
	*dnsName = name.Name
	if name.Reason == "" {
		return meta.RemoveStatusCondition(conditions, tenant.ConditionDNSNamed) || changed
	}
	return controller.SetCondition(conditions, gen, tenant.ConditionDNSNamed, name.Name != "", name.Reason, name.Message) || changed
}

// Watch has w, the worker of kind's controller, queue an object of kind
// when an object of the other kind with its key is added or deleted:
// which of the two holds the name may change. Nothing is watched without
// a zone.
func (n *Names) Watch(w *controller.Worker, kind Kind) error {
	if n.Zone == "" {
		return nil
	}
	return w.Watch(n.informer(kind.other()), n.otherHandler(w.Queue, kind))
}

// otherHandler is the handler of the informer of kind's other kind that
// Watch adds.
func (n *Names) otherHandler(q *queue.Queue, kind Kind) cache.ResourceEventHandlerFuncs {
	own := n.informer(kind)
	enqueue := func(obj interface{}) {
		m, err := meta.Accessor(controller.Unwrap(obj))
		if err != nil {
			return
		}
		key := controller.CachedKey(m.GetLabels(), m.GetNamespace(), m.GetName())
		if _, exists, err := own.GetStore().GetByKey(controller.ObjectKey(key.Tenant, key.Namespace, key.Name)); err == nil && exists {
			q.Add(key)
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: enqueue, DeleteFunc: enqueue}
}

func (n *Names) informer(kind Kind) cache.SharedIndexInformer {
	if kind == FloatingIP {
		return n.FloatingIPs
	}
	return n.LoadBalancers
}

func (k Kind) other() Kind {
	if k == FloatingIP {
		return LoadBalancer
	}
	return FloatingIP
}
