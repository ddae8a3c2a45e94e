package providerservice

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// Reasons of a ProviderService's conditions and of its tenants' entries.
const (
	ReasonServiceNotFound           = "ServiceNotFound"
	ReasonNotProviderNamespace      = "NotProviderNamespace"
	ReasonNoProviderNetwork         = "NoProviderNetwork"
	ReasonAmbiguousProviderNetwork  = "AmbiguousProviderNetwork"
	ReasonResolved                  = "Resolved"
	ReasonNoNetwork                 = "NoNetwork"
	ReasonNoConnectSubnet           = "NoConnectSubnet"
	ReasonConnectFailed             = "ConnectFailed"
	ReasonAliasTaken                = "AliasTaken"
	ReasonAliasesMade               = "AliasesMade"
	ReasonAliasesPending            = "AliasesPending"
	ReasonNoNamespace               = "NoNamespace"
	ReasonConnectPending            = "ConnectPending"
	ReasonProviderServiceUnresolved = "ServiceUnresolved"
)

// offer is a ProviderService resolved on the host: its Service exists, in
// a namespace of the provider served by provider network pn.
type offer struct {
	ps      *tenant.ProviderService
	alias   string
	service *corev1.Service
	pn      string
}

func (o *offer) same(p *offer) bool {
	return o != nil && p != nil && o.ps.UID == p.ps.UID && o.ps.Generation == p.ps.Generation &&
		apiequality.Semantic.DeepEqual(o.ps.Status.Offers, p.ps.Status.Offers) &&
		o.pn == p.pn && apiequality.Semantic.DeepEqual(o.service.Spec.Ports, p.service.Spec.Ports)
}

// outcome is what resolving a ProviderService found; Details are the
// offer it makes, when resolved.
type outcome = controller.Outcome[*offer]

// removeService forgets ProviderService key.Name, gone, and queues the
// tenants it concerned.
func (c *Controller) removeService(ctx context.Context, _ *tenant.Tenant, key queue.Key) error {
	name := key.Name
	c.provider.release(name)
	c.mu.Lock()
	old := c.offers[name]
	delete(c.offers, name)
	concerned := c.results[name]
	delete(c.results, name)
	c.mu.Unlock()
	for t := range concerned {
		c.Queue.Add(queue.Key{Tenant: t})
	}
	c.enqueueOffered(old)
	return c.releaseNetworks(ctx)
}

// syncService resolves ProviderService ps and queues the tenants a change
// concerns; the status reports what it found, and ps is resolved again
// after Resync, following the labels of the provider's namespace.
func (c *Controller) syncService(ctx context.Context, _ *tenant.Tenant, ps *tenant.ProviderService, _ queue.Key) (outcome, error) {
	name := ps.Name
	resolved, reason, message, err := c.resolve(ctx, ps)
	if err != nil {
		return outcome{}, err
	}
	c.mu.Lock()
	c.resolved.Insert(name)
	old := c.offers[name]
	if resolved != nil {
		c.offers[name] = resolved
	} else {
		delete(c.offers, name)
	}
	c.mu.Unlock()
	if !old.same(resolved) {
		c.enqueueOffered(old)
		c.enqueueOffered(resolved)
		c.mu.Lock()
		concerned := c.results[name]
		c.mu.Unlock()
		for t := range concerned {
			c.Queue.Add(queue.Key{Tenant: t})
		}
	}
	return outcome{Synced: resolved != nil, Reason: reason, Message: message, Details: resolved, RequeueAfter: Resync, Background: true}, nil
}

// releaseNetworksAfter releases the provider networks no offer is on once
// a ProviderService's status is written.
func (c *Controller) releaseNetworksAfter(ctx context.Context, _ *tenant.ProviderService, _ outcome) error {
	return c.releaseNetworks(ctx)
}

// releaseNetworks removes the connection group label from the provider's
// networks that no offer made to some tenant is on any more, once every
// ProviderService has been resolved since the syncer started (before,
// an offer not resolved yet may still be on one).
func (c *Controller) releaseNetworks(ctx context.Context) error {
	inUse := map[string]bool{}
	c.mu.Lock()
	for _, o := range c.offers {
		if o.ps.Spec.AllTenants || len(o.ps.Spec.Tenants) > 0 {
			inUse[o.pn] = true
		}
	}
	for _, name := range c.src.ProviderServices.GetStore().ListKeys() {
		if !c.resolved.Has(name) {
			c.mu.Unlock()
			return nil
		}
	}
	c.mu.Unlock()
	networks, err := c.provider.providerNetworks(ctx)
	if err != nil {
		return err
	}
	for _, n := range networks {
		if inUse[n.Name] || n.Labels[hostnames.ConnectGroupLabel] != hostnames.ProviderConnectGroup(n.Name) {
			continue
		}
		patch := []byte(`{"metadata":{"labels":{"` + hostnames.ConnectGroupLabel + `":null}}}`)
		if _, err := c.src.HostUDN.K8sV1().ClusterUserDefinedNetworks().Patch(ctx, n.Name, types.MergePatchType, patch,
			metav1.PatchOptions{FieldManager: controller.FieldManager}); err != nil && !apierrors.IsNotFound(err) {
			controller.CountHostWriteError("ClusterUserDefinedNetwork", err)
			return err
		}
		klog.FromContext(ctx).Info("Removed the connection group of a provider network no offer is on", "network", n.Name)
	}
	return nil
}

// enqueueOffered queues the tenants o is offered to.
func (c *Controller) enqueueOffered(o *offer) {
	if o == nil {
		return
	}
	if o.ps.Spec.AllTenants {
		for _, obj := range c.src.Tenants.GetStore().List() {
			c.enqueueTenantObject(obj)
		}
		return
	}
	for _, t := range o.ps.Spec.Tenants {
		c.Queue.Add(queue.Key{Tenant: t})
	}
}

// resolve finds ps's Service and the provider network of its namespace,
// and marks that network for the connections to select. It returns nil
// and why when there is none.
func (c *Controller) resolve(ctx context.Context, ps *tenant.ProviderService) (*offer, string, string, error) {
	ref := ps.Spec.Service
	svc, err := c.provider.service(ctx, ps)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, "", "", err
		}
		svc = nil
	}
	if svc == nil {
		return nil, ReasonServiceNotFound, fmt.Sprintf("Service %s/%s does not exist on the host; nothing is written for the tenants until it does", ref.Namespace, ref.Name), nil
	}
	ns, err := c.src.Host.CoreV1().Namespaces().Get(ctx, ref.Namespace, metav1.GetOptions{})
	if err != nil {
		return nil, "", "", err
	}
	if t := ns.Labels[hostnames.TenantLabel]; t != "" {
		return nil, ReasonNotProviderNamespace, fmt.Sprintf("namespace %s belongs to a tenant; only Services of the provider's own namespaces can be offered", ref.Namespace), nil
	}
	cudns, err := c.provider.providerNetworks(ctx)
	if err != nil {
		return nil, "", "", err
	}
	var networks []*udnv1.ClusterUserDefinedNetwork
	for _, n := range cudns {
		if n.Labels[hostnames.TenantLabel] != "" || !primary(n) {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(&n.Spec.NamespaceSelector)
		if err != nil || !sel.Matches(labels.Set(ns.Labels)) {
			continue
		}
		networks = append(networks, n)
	}
	switch len(networks) {
	case 0:
		return nil, ReasonNoProviderNetwork, fmt.Sprintf("namespace %s is on no provider network: a ClusterNetworkConnect cannot connect the cluster's default network; serve the namespace with a primary ClusterUserDefinedNetwork of the provider's", ref.Namespace), nil
	case 1:
	default:
		names := make([]string, len(networks))
		for i, n := range networks {
			names[i] = n.Name
		}
		sort.Strings(names)
		return nil, ReasonAmbiguousProviderNetwork, fmt.Sprintf("namespace %s is selected by several primary ClusterUserDefinedNetworks (%s)", ref.Namespace, strings.Join(names, ", ")), nil
	}
	pn := networks[0]
	offered := ps.Spec.AllTenants || len(ps.Spec.Tenants) > 0
	if group := hostnames.ProviderConnectGroup(pn.Name); offered && pn.Labels[hostnames.ConnectGroupLabel] != group {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{hostnames.ConnectGroupLabel: group}}})
		if _, err := c.src.HostUDN.K8sV1().ClusterUserDefinedNetworks().Patch(ctx, pn.Name, types.MergePatchType, patch,
			metav1.PatchOptions{FieldManager: controller.FieldManager}); err != nil {
			controller.CountHostWriteError("ClusterUserDefinedNetwork", err)
			return nil, "", "", err
		}
	}
	return &offer{ps: ps, alias: AliasOf(ps), service: svc, pn: pn.Name}, ReasonResolved, fmt.Sprintf(
		"Service %s/%s is on provider network %s", ref.Namespace, ref.Name, pn.Name), nil
}

func primary(n *udnv1.ClusterUserDefinedNetwork) bool {
	switch {
	case n.Spec.Network.Layer3 != nil:
		return n.Spec.Network.Layer3.Role == udnv1.NetworkRolePrimary
	case n.Spec.Network.Layer2 != nil:
		return n.Spec.Network.Layer2.Role == udnv1.NetworkRolePrimary
	}
	return false
}

// AliasOf returns the name of ps's Service in the tenants' namespaces.
func AliasOf(ps *tenant.ProviderService) string {
	if ps.Spec.Alias != "" {
		return ps.Spec.Alias
	}
	return ps.Name
}

// OfferedTo says whether ps is offered to tenant t of UID uid: to all
// tenants, or to t by name while t is the tenant that was named.
func OfferedTo(ps *tenant.ProviderService, t string, uid types.UID) bool {
	if ps.Spec.AllTenants {
		return true
	}
	if !slices.Contains(ps.Spec.Tenants, t) {
		return false
	}
	for _, o := range ps.Status.Offers {
		if o.Tenant == t {
			return o.UID == uid
		}
	}
	return false
}

// setStatus writes what ps's tenants' reconciles found, for the tenants it
// is offered to now.
func (c *Controller) setStatus(_ *tenant.Tenant, _ queue.Key, ps *tenant.ProviderService, out outcome) func(*tenant.ProviderService) bool {
	resolved, reason, message := out.Details, out.Reason, out.Message
	var entries []tenant.ProviderServiceTenant
	c.mu.Lock()
	for t, e := range c.results[ps.Name] {
		obj, exists, _ := c.src.Tenants.GetStore().GetByKey(t)
		if exists && OfferedTo(ps, t, obj.(*tenant.Tenant).UID) {
			entries = append(entries, e)
		}
	}
	c.mu.Unlock()
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	pn := ""
	if resolved != nil {
		pn = resolved.pn
	}
	return func(live *tenant.ProviderService) bool {
		s, gen := &live.Status, live.Generation
		changed := s.ProviderNetwork != pn || !apiequality.Semantic.DeepEqual(s.Tenants, entries) || s.ObservedGeneration != gen
		s.ProviderNetwork, s.Tenants, s.ObservedGeneration = pn, entries, gen
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionHostSynced, resolved != nil, reason, message) || changed
		return controller.SetCondition(&s.Conditions, gen, tenant.ConditionReady, resolved != nil, reason, message) || changed
	}
}

// connection is what became of a tenant's connection with one provider network.
type connection struct {
	ok              bool
	subnet          string
	reason, message string
}

// syncTenant makes tenant t's connections and aliases for every service
// offered to it, removes the rest, and records what it found.
// tn is nil when the Tenant is gone or being deleted.
func (c *Controller) syncTenant(ctx context.Context, t string, tn *tenant.Tenant) error {
	var mine []*offer
	if tn != nil {
		c.mu.Lock()
		for _, o := range c.offers {
			if OfferedTo(o.ps, t, tn.UID) {
				mine = append(mine, o)
			}
		}
		c.mu.Unlock()
	}
	// The older offer of an alias keeps it.
	sort.Slice(mine, func(i, j int) bool {
		a, b := mine[i].ps, mine[j].ps
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})

	networks := 0
	if tn != nil {
		objs, err := c.src.Networks.GetIndexer().ByIndex(controller.ByTenant, t)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			if n := obj.(*tenant.Network); n.Status.HostNetwork != "" && n.DeletionTimestamp == nil {
				networks++
			}
		}
	}
	wanted := map[string]bool{} // provider network -> PodNetwork connectivity
	if networks > 0 {
		for _, o := range mine {
			wanted[o.pn] = wanted[o.pn] || o.ps.Spec.PodNetwork
		}
	}
	connections := map[string]connection{}
	retry := false
	for pn, podNetwork := range wanted {
		conn, err := c.connect(ctx, tn, pn, podNetwork)
		if err != nil {
			return err
		}
		retry = retry || conn.reason == ReasonNoConnectSubnet
		connections[pn] = conn
	}
	if err := c.disconnect(ctx, t, tn, wanted); err != nil {
		return err
	}

	results, err := c.aliases(ctx, t, tn, mine, networks, connections)
	if err != nil {
		return err
	}
	c.record(t, results)
	if retry {
		return controller.Requeue(Resync, "no connect subnet for tenant %s", t)
	}
	return nil
}

// connect makes the ClusterNetworkConnect of tn with provider network pn.
func (c *Controller) connect(ctx context.Context, tn *tenant.Tenant, pn string, podNetwork bool) (connection, error) {
	if c.src.Storage.ConnectSubnets == nil {
		return connection{reason: ReasonNoConnectSubnet, message: "this server runs without IPAM: connections have no subnets"}, nil
	}
	block, networkPrefix, err := c.src.Storage.ConnectSubnets.Claim(ctx, tn.Name, string(tn.UID), pn)
	if err != nil {
		return connection{reason: ReasonNoConnectSubnet, message: "no connect subnet for provider network " + pn + ": " + err.Error()}, nil
	}
	spec := ConnectSpec(tn.Name, pn, block, networkPrefix, podNetwork)
	marks := ConnectMarks(tn.Name, tn.UID, pn, hostnames.ChangedBy(tn))
	want, err := NewConnect(tn.UID, pn, spec, marks)
	if err != nil {
		return connection{}, err
	}
	ensured, err := c.kinds.ClusterNetworkConnects(&spec).Ensure(ctx, want, marks)
	if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
		// Trying again changes nothing: say why in the status.
		return connection{subnet: block.String(), reason: controller.ReasonHostError,
			message: "the host refused ClusterNetworkConnect " + want.GetName() + ": " + err.Error()}, nil
	}
	if err != nil {
		return connection{}, err
	}
	conn := connection{subnet: block.String()}
	if !ensured.Synced {
		conn.reason, conn.message = ensured.Reason, ensured.Message
		return conn, nil
	}
	if failed, msg := connectFailed(ensured.Obj); failed {
		conn.reason, conn.message = ReasonConnectFailed, "OVN-Kubernetes reports ClusterNetworkConnect "+want.GetName()+" failed"+msg
		return conn, nil
	}
	conn.ok = true
	return conn, nil
}

// connectFailed says whether OVN-Kubernetes reports that it could not
// apply ClusterNetworkConnect u (hostkinds.ReadConnectReport), and its
// reason (": <message>").
func connectFailed(u *unstructured.Unstructured) (bool, string) {
	report, msg := hostkinds.ReadConnectReport(u)
	if report != hostkinds.ConnectRefused {
		return false, ""
	}
	if msg != "" {
		msg = ": " + msg
	}
	return true, msg
}

// disconnect removes tenant t's connections with provider networks not in
// wanted, and gives back the subnets of those that are gone.
// (wanted maps each provider network to its PodNetwork connectivity).
func (c *Controller) disconnect(ctx context.Context, t string, tn *tenant.Tenant, wanted map[string]bool) error {
	objs, err := c.src.HostClusterNetworkConnects.GetIndexer().ByIndex(controller.ByTenant, t)
	if err != nil {
		return err
	}
	present := map[string]bool{}
	kind := c.kinds.ClusterNetworkConnects(nil)
	for _, obj := range objs {
		u := obj.(*unstructured.Unstructured)
		found, ours := hostnames.MarksOf(u, hostnames.ConnectLabel)
		if !ours {
			continue
		}
		if tn != nil && found.TenantUID == tn.UID {
			present[found.Name] = true
		}
		if _, want := wanted[found.Name]; tn != nil && found.TenantUID == tn.UID && want && u.GetName() == hostnames.ClusterNetworkConnect(tn.UID, found.Name) {
			continue
		}
		if _, err := kind.Remove(ctx, "", u.GetName(), found); err != nil {
			return err
		}
	}
	if tn == nil || c.src.Storage.ConnectSubnets == nil {
		return nil // a deleted Tenant gives back everything it held
	}
	held, err := c.src.Storage.ConnectSubnets.Held(ctx, string(tn.UID))
	if err != nil {
		return err
	}
	for pn, block := range held {
		// Given back once the connection is gone from the host, so that
		// no other connection gets the subnet while this one holds it.
		if _, want := wanted[pn]; want || present[pn] {
			continue
		}
		if err := c.src.Storage.ConnectSubnets.Release(ctx, tn.Name, string(tn.UID), pn, block); err != nil {
			return err
		}
	}
	return nil
}

// aliases makes the alias of every offer in each of tenant t's host
// namespaces, removes the aliases of services no longer offered, and
// returns each offer's entry for its status.
func (c *Controller) aliases(ctx context.Context, t string, tn *tenant.Tenant, mine []*offer, networks int, connections map[string]connection) (map[string]tenant.ProviderServiceTenant, error) {
	type hostNS struct {
		name, virtual string
		obj           *tenant.Namespace
	}
	var namespaces []hostNS
	if tn != nil {
		objs, err := c.src.Namespaces.GetIndexer().ByIndex(controller.ByTenant, t)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			ns := obj.(*tenant.Namespace)
			if h := ns.Status.HostNamespace; h != "" && ns.DeletionTimestamp == nil && c.src.HostNamespaceNotReady(tn, ns.Name, h) == "" {
				namespaces = append(namespaces, hostNS{h, ns.Name, ns})
			}
		}
		sort.Slice(namespaces, func(i, j int) bool { return namespaces[i].name < namespaces[j].name })
	}
	services := c.kinds.AliasServices
	wanted := map[string]string{}  // host namespace/alias -> ProviderService
	made := map[string][]string{}  // virtual namespace -> aliases in place
	taken := map[string][]string{} // virtual namespace -> why aliases are not
	results := map[string]tenant.ProviderServiceTenant{}
	for _, o := range mine {
		entry := tenant.ProviderServiceTenant{Name: t}
		conn, connected := connections[o.pn]
		entry.Connected, entry.ConnectSubnet = conn.ok, conn.subnet
		switch {
		case networks == 0:
			entry.Reason, entry.Message = ReasonNoNetwork, "the tenant has no Network on the host to connect"
		case !connected:
			entry.Reason, entry.Message = ReasonConnectPending, "the connection is not made yet"
		case conn.reason != "":
			entry.Reason, entry.Message = conn.reason, conn.message
		}
		var clashes []string
		for _, ns := range namespaces {
			key := ns.name + "/" + o.alias
			if other, ok := wanted[key]; ok && other != o.ps.Name {
				clashes = append(clashes, fmt.Sprintf("%s (alias of ProviderService %s)", ns.virtual, other))
				taken[ns.virtual] = append(taken[ns.virtual], fmt.Sprintf("%s (ProviderService %s: the alias of %s)", o.alias, o.ps.Name, other))
				continue
			}
			want := Alias(ns.name, o.alias, o.service, c.ClusterDomain, AliasMarks(t, tn.UID, o.ps.Name, o.ps.UID, hostnames.ChangedBy(o.ps)))
			ensured, err := services.Ensure(ctx, want, AliasMarks(t, tn.UID, o.ps.Name, o.ps.UID, hostnames.ChangedBy(o.ps)))
			if err != nil {
				return nil, err
			}
			switch {
			case ensured.Synced:
				wanted[key] = o.ps.Name
				entry.Aliases++
				made[ns.virtual] = append(made[ns.virtual], o.alias)
			case ensured.Reason == controller.ReasonHostNameTaken:
				clashes = append(clashes, ns.virtual)
				taken[ns.virtual] = append(taken[ns.virtual], fmt.Sprintf("%s (ProviderService %s: a Service of that name is the tenant's own)", o.alias, o.ps.Name))
			default:
				wanted[key] = o.ps.Name // on its way
			}
		}
		if len(clashes) > 0 && entry.Reason == "" {
			entry.Reason = ReasonAliasTaken
			entry.Message = fmt.Sprintf("a Service named %s already exists in namespace %s; it is left untouched", o.alias, strings.Join(clashes, ", "))
		}
		if len(namespaces) == 0 && entry.Reason == "" {
			entry.Reason, entry.Message = ReasonNoNamespace, "the tenant has no namespace on the host for the alias"
		}
		results[o.ps.Name] = entry
	}
	for _, ns := range namespaces {
		if err := c.namespaceCondition(ctx, t, ns.obj, len(mine) > 0, made[ns.virtual], taken[ns.virtual]); err != nil {
			return nil, err
		}
	}
	objs, err := c.src.HostServices.GetIndexer().ByIndex(controller.ByTenant, t)
	if err != nil {
		return nil, err
	}
	for _, obj := range objs {
		svc := obj.(*corev1.Service)
		found, ours := hostnames.MarksOf(svc, hostnames.ProviderServiceLabel)
		if !ours || wanted[svc.Namespace+"/"+svc.Name] == found.Name {
			continue
		}
		if _, err := services.Remove(ctx, svc.Namespace, svc.Name, found); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// namespaceCondition sets the ProviderServices condition of tenant t's
// Namespace ns: the aliases made there, or those that a Service of the
// tenant's own (or an older offer's alias) keeps out; without offers, none.
func (c *Controller) namespaceCondition(ctx context.Context, t string, ns *tenant.Namespace, offered bool, made, taken []string) error {
	set := func(live *tenant.Namespace) bool {
		conds := &live.Status.Conditions
		switch {
		case !offered:
			return meta.RemoveStatusCondition(conds, tenant.ConditionProviderServices)
		case len(taken) > 0:
			return controller.SetCondition(conds, live.Generation, tenant.ConditionProviderServices, false, ReasonAliasTaken,
				"not made here, a Service of that name exists: "+strings.Join(taken, "; "))
		case len(made) == 0:
			return controller.SetCondition(conds, live.Generation, tenant.ConditionProviderServices, false, ReasonAliasesPending,
				"the aliases of the provider services offered are not made yet")
		default:
			sort.Strings(made)
			return controller.SetCondition(conds, live.Generation, tenant.ConditionProviderServices, true, ReasonAliasesMade,
				"aliases of provider services: "+strings.Join(made, ", "))
		}
	}
	return c.namespaces.Write(ctx, t, "", ns, set)
}

// namespaceProbe is the copy of a tenant Namespace that its
// ProviderServices condition is tried on first: no deep copy, since the
// condition reads the UID and generation, and changes the conditions
// alone.
func namespaceProbe(ns *tenant.Namespace) *tenant.Namespace {
	probe := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{UID: ns.UID, Generation: ns.Generation}}
	probe.Status.Conditions = slices.Clone(ns.Status.Conditions)
	return probe
}

// record keeps tenant t's entries and queues the ProviderServices whose
// entry for t changed.
func (c *Controller) record(t string, results map[string]tenant.ProviderServiceTenant) {
	var changed []string
	c.mu.Lock()
	for ps, byTenant := range c.results {
		if _, ok := results[ps]; !ok {
			if _, had := byTenant[t]; had {
				delete(byTenant, t)
				changed = append(changed, ps)
			}
		}
	}
	for ps, e := range results {
		if c.results[ps] == nil {
			c.results[ps] = map[string]tenant.ProviderServiceTenant{}
		}
		if old, ok := c.results[ps][t]; !ok || old != e {
			c.results[ps][t] = e
			changed = append(changed, ps)
		}
	}
	c.mu.Unlock()
	for _, ps := range changed {
		c.Queue.Add(queue.Key{Name: ps})
	}
}
