package providerservice

import (
	"context"
	"sync"
	"time"

	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	udninformers "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1/apis/informers/externalversions/userdefinednetwork/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/sets"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// syncWait bounds how long a resolve waits for a new watch of a Service
// to list it.
const syncWait = 10 * time.Second

// providerObjects watches the provider's host objects that ProviderServices
// name, so that a change of one resolves them again at once: each offered
// Service (a watch of that one Service, opened when a ProviderService first
// names it and closed when none does) and the provider's networks (the
// ClusterUserDefinedNetworks without the tenant label).
type providerObjects struct {
	src *controller.Sources
	// changed queues the ProviderServices named; all, when none are.
	changed func(names ...string)

	mu       sync.Mutex
	networks cache.SharedIndexInformer
	services map[string]*watchedService // by "<namespace>/<name>"
	refs     map[string]string          // a ProviderService's Service, by its name
}

type watchedService struct {
	informer cache.SharedIndexInformer
	stop     context.CancelFunc
	users    sets.Set[string] // ProviderService names
}

func newProviderObjects(src *controller.Sources, changed func(names ...string)) *providerObjects {
	return &providerObjects{src: src, changed: changed, services: map[string]*watchedService{}, refs: map[string]string{}}
}

// providerNetworks returns the provider's ClusterUserDefinedNetworks, from
// a watch started on first use with ctx (the syncer's, which ends it).
func (p *providerObjects) providerNetworks(ctx context.Context) ([]*udnv1.ClusterUserDefinedNetwork, error) {
	p.mu.Lock()
	if p.networks == nil {
		p.networks = udninformers.NewFilteredClusterUserDefinedNetworkInformer(p.src.HostUDN, 0, cache.Indexers{},
			func(o *metav1.ListOptions) { o.LabelSelector = "!" + hostnames.TenantLabel })
		if _, err := p.networks.AddEventHandler(controller.OnEvery(func(interface{}) { p.changed() })); err != nil {
			p.mu.Unlock()
			return nil, err
		}
		go p.networks.RunWithContext(ctx)
	}
	inf := p.networks
	p.mu.Unlock()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, ctx.Err()
	}
	var out []*udnv1.ClusterUserDefinedNetwork
	for _, obj := range inf.GetStore().List() {
		out = append(out, obj.(*udnv1.ClusterUserDefinedNetwork))
	}
	return out, nil
}

// service returns ps's Service, from the watch of it (opened with ctx
// when ps first names it, and the watch of the Service ps named before
// closed if no other ProviderService names that one); nil if it does not
// exist.
func (p *providerObjects) service(ctx context.Context, ps *tenant.ProviderService) (*corev1.Service, error) {
	ref := ps.Spec.Service
	key := ref.Namespace + "/" + ref.Name
	p.mu.Lock()
	if old, ok := p.refs[ps.Name]; ok && old != key {
		p.releaseLocked(ps.Name, old)
	}
	p.refs[ps.Name] = key
	w := p.services[key]
	if w == nil {
		wctx, stop := context.WithCancel(ctx)
		inf := coreinformers.NewFilteredServiceInformer(p.src.Host, ref.Namespace, 0, cache.Indexers{}, func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", ref.Name).String()
		})
		w = &watchedService{informer: inf, stop: stop, users: sets.New[string]()}
		if _, err := inf.AddEventHandler(controller.OnEvery(func(interface{}) { p.changed(p.usersOf(key)...) })); err != nil {
			stop()
			p.mu.Unlock()
			return nil, err
		}
		p.services[key] = w
		go inf.RunWithContext(wctx)
	}
	w.users.Insert(ps.Name)
	p.mu.Unlock()

	syncCtx, cancel := context.WithTimeout(ctx, syncWait)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), w.informer.HasSynced) {
		// The watch has not listed yet: read the Service directly.
		svc, err := p.src.Host.CoreV1().Services(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return svc, nil
	}
	obj, exists, err := w.informer.GetStore().GetByKey(key)
	if err != nil || !exists {
		return nil, err
	}
	return obj.(*corev1.Service), nil
}

// usersOf are the ProviderServices that name the Service key.
func (p *providerObjects) usersOf(key string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w := p.services[key]; w != nil {
		return sets.List(w.users)
	}
	return nil
}

// release forgets ProviderService name: the watch of its Service is closed
// if no other ProviderService names that Service.
func (p *providerObjects) release(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if key, ok := p.refs[name]; ok {
		p.releaseLocked(name, key)
		delete(p.refs, name)
	}
}

func (p *providerObjects) releaseLocked(name, key string) {
	w := p.services[key]
	if w == nil {
		return
	}
	w.users.Delete(name)
	if w.users.Len() == 0 {
		w.stop()
		delete(p.services, key)
	}
}

// watchedServices is how many Services are watched.
func (p *providerObjects) watchedServices() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.services)
}
