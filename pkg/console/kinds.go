package console

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/watch"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	tenantclient "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned/typed/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/tenantview"
)

// row is one line of a table.
type row struct {
	// Key orders the rows and names the line in the page (data-key).
	Key string
	// Link is the object's page.
	Link  string
	Cells []string
	// Meter, when Max > 0, draws a bar after the cells.
	Meter *meter
	// Delete, when set, is the URL a delete form posts to.
	Delete string
	Name   string
}

// meter is a use against a limit.
type meter struct {
	Value, Max float64
	Label      string
}

// kind is one kind the console lists: how to read it with the caller's
// clients and how it shows.
type kind struct {
	// Resource is the API resource and the page's path.
	Resource   string
	Title      string
	Singular   string
	Namespaced bool
	Headers    []string
	// Empty is what an empty table says.
	Empty string
	// Provider kinds live under /admin.
	Provider bool
	// NameColumn is the cell that links to the object's page.
	NameColumn int
	// HasMeter adds a column of bars.
	HasMeter bool

	list  func(ctx context.Context, c *caller, opts metav1.ListOptions) (runtime.Object, error)
	watch func(ctx context.Context, c *caller, opts metav1.ListOptions) (watch.Interface, error)
	rows  func(obj runtime.Object) []row

	// Tenant kinds only.
	get    func(ctx context.Context, api tenantclient.TenantV1alpha1Interface, namespace, name string) (runtime.Object, error)
	delete func(ctx context.Context, api tenantclient.TenantV1alpha1Interface, namespace, name string) error
	// patch merge-patches an object (the detail pages' buttons).
	patch func(ctx context.Context, api tenantclient.TenantV1alpha1Interface, namespace, name string, patch []byte) error
	// create builds the object from a form and creates it; a form error
	// is a *apiError.
	create func(ctx context.Context, api tenantclient.TenantV1alpha1Interface, f url.Values) (string, error)
	// fields maps API field paths to the create form's fields.
	fields map[string]string
}

// Deletable says whether rows offer a delete.
func (k *kind) Deletable() bool { return k.delete != nil }

// objectLink is an object's page.
func (k *kind) objectLink(namespace, name string) string {
	if k.Namespaced {
		return "/" + k.Resource + "/" + url.PathEscape(namespace) + "/" + url.PathEscape(name)
	}
	return "/" + k.Resource + "/" + url.PathEscape(name)
}

// baseRow fills in the key, link and delete URL of an object's row.
func (k *kind) baseRow(o metav1.Object, cells ...string) row {
	link := k.objectLink(o.GetNamespace(), o.GetName())
	name := o.GetName()
	if k.Namespaced {
		name = o.GetNamespace() + "/" + name
	}
	return row{Key: name, Link: link, Cells: cells, Delete: link + "/delete", Name: name}
}

func age(o metav1.Object) string {
	t := o.GetCreationTimestamp()
	if t.IsZero() {
		return ""
	}
	return duration.HumanDuration(metav1.Now().Sub(t.Time))
}

// formError is a refusal of a form before it reached the API.
func formError(field, msg string) *apiError {
	return &apiError{Code: 422, Reason: string(metav1.StatusReasonInvalid), Message: "The form is not valid: " + field + ": " + msg,
		Fields: map[string][]string{field: {msg}}}
}

// splitList splits a comma- or space-separated form value.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' })
}

var networks = &kind{
	Resource: "networks", Title: "Networks", Singular: "Network",
	Headers: []string{"Name", "Topology", "Subnets", "NAT gateway", "Ready", "Age"},
	Empty:   "No networks.",
	fields:  map[string]string{"metadata.name": "name", "spec.topology": "topology", "spec.subnets": "subnets", "spec.natGateway": "nat", "spec.serviceNetwork": "sharedServices"},
	create: func(ctx context.Context, api tenantclient.TenantV1alpha1Interface, f url.Values) (string, error) {
		n := &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: f.Get("name")},
			Spec: tenantv1alpha1.NetworkSpec{Topology: tenantv1alpha1.NetworkTopology(f.Get("topology")), Subnets: splitList(f.Get("subnets"))}}
		if f.Get("nat") != "" {
			n.Spec.NATGateway = &tenantv1alpha1.NATGateway{Enabled: true}
		}
		if f.Get("sharedServices") != "" {
			n.Spec.ServiceNetwork = tenantv1alpha1.ServiceNetworkShared
		}
		created, err := api.Networks().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		return created.Name, nil
	},
}

var namespaces = &kind{
	Resource: "namespaces", Title: "Namespaces", Singular: "Namespace",
	Headers: []string{"Name", "Host namespace", "Network", "Phase", "Ready", "Age"},
	Empty:   "No namespaces.",
	fields:  map[string]string{"metadata.name": "name", "spec.network": "network"},
	create: func(ctx context.Context, api tenantclient.TenantV1alpha1Interface, f url.Values) (string, error) {
		n := &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.Get("name")}, Spec: tenantv1alpha1.NamespaceSpec{Network: f.Get("network")}}
		created, err := api.Namespaces().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		return created.Name, nil
	},
}

var floatingIPs = &kind{
	Resource: "floatingips", Title: "Floating IPs", Singular: "FloatingIP", Namespaced: true, NameColumn: 1,
	Headers: []string{"Namespace", "Name", "Address", "DNS name", "Target", "Ports", "Phase", "Ready", "Age"},
	Empty:   "No floating IPs.",
	fields:  map[string]string{"metadata.name": "name", "metadata.namespace": "namespace", "spec.address": "address", "spec.target": "target", "spec.ports": "ports"},
	create: func(ctx context.Context, api tenantclient.TenantV1alpha1Interface, f url.Values) (string, error) {
		fip := &tenantv1alpha1.FloatingIP{ObjectMeta: metav1.ObjectMeta{Namespace: f.Get("namespace"), Name: f.Get("name")},
			Spec: tenantv1alpha1.FloatingIPSpec{Address: f.Get("address")}}
		target, ports, ferr := targetFromForm(f)
		if ferr != nil {
			return "", ferr
		}
		fip.Spec.Target, fip.Spec.Ports = target, ports
		if fip.Namespace == "" {
			return "", formError("namespace", "choose a namespace")
		}
		created, err := api.FloatingIPs(fip.Namespace).Create(ctx, fip, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		return created.Name, nil
	},
}

// targetFromForm reads a FloatingIP's target and ports: target-kind (Pod or
// VirtualMachine), target-name, ports ("22/tcp, 53/udp").
func targetFromForm(f url.Values) (*tenantv1alpha1.FloatingIPTarget, []tenantv1alpha1.FloatingIPPort, *apiError) {
	var ports []tenantv1alpha1.FloatingIPPort
	for _, p := range splitList(f.Get("ports")) {
		port, proto, err := tenantview.ParsePort(p)
		if err != nil {
			return nil, nil, formError("ports", err.Error())
		}
		ports = append(ports, tenantv1alpha1.FloatingIPPort{Port: port, Protocol: proto})
	}
	name := strings.TrimSpace(f.Get("target-name"))
	if name == "" {
		if len(ports) > 0 {
			return nil, nil, formError("target", "ports need a target")
		}
		return nil, nil, nil
	}
	return &tenantv1alpha1.FloatingIPTarget{Kind: tenantv1alpha1.FloatingIPTargetKind(f.Get("target-kind")), Name: name}, ports, nil
}

var loadBalancers = &kind{
	Resource: "loadbalancers", Title: "Load balancers", Singular: "LoadBalancer", Namespaced: true, NameColumn: 1,
	Headers: []string{"Namespace", "Name", "Address", "DNS name", "Ports", "Selector", "Ready", "Age"},
	Empty:   "No load balancers.",
	fields:  map[string]string{"metadata.name": "name", "metadata.namespace": "namespace", "spec.address": "address", "spec.selector": "selector", "spec.ports": "ports", "spec.sourceRanges": "sourceRanges"},
	create: func(ctx context.Context, api tenantclient.TenantV1alpha1Interface, f url.Values) (string, error) {
		lb := &tenantv1alpha1.LoadBalancer{ObjectMeta: metav1.ObjectMeta{Namespace: f.Get("namespace"), Name: f.Get("name")},
			Spec: tenantv1alpha1.LoadBalancerSpec{Address: f.Get("address"), SourceRanges: splitList(f.Get("sourceRanges"))}}
		for _, kv := range splitList(f.Get("selector")) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return "", formError("selector", fmt.Sprintf("%q is not key=value", kv))
			}
			if lb.Spec.Selector == nil {
				lb.Spec.Selector = map[string]string{}
			}
			lb.Spec.Selector[k] = v
		}
		for _, p := range splitList(f.Get("ports")) {
			port, err := tenantview.ParseLBPort(p)
			if err != nil {
				return "", formError("ports", err.Error())
			}
			lb.Spec.Ports = append(lb.Spec.Ports, port)
		}
		if len(lb.Spec.Ports) > 1 {
			for i := range lb.Spec.Ports {
				p := &lb.Spec.Ports[i]
				p.Name = strings.ToLower(string(p.Protocol)) + "-" + strconv.Itoa(int(p.Port))
			}
		}
		if lb.Namespace == "" {
			return "", formError("namespace", "choose a namespace")
		}
		created, err := api.LoadBalancers(lb.Namespace).Create(ctx, lb, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		return created.Name, nil
	},
}

var hostClaims = &kind{
	Resource: "hostclaims", Title: "Hosts", Singular: "HostClaim", Namespaced: true, NameColumn: 1,
	Headers: []string{"Namespace", "Name", "Phase", "Class", "Address", "Power", "Online", "Age"},
	Empty:   "No host claims.",
	fields: map[string]string{"metadata.name": "name", "metadata.namespace": "namespace", "spec.hostClass": "hostClass", "spec.hostSelector": "selector",
		"spec.image": "image", "spec.image.checksum": "checksum", "spec.userData": "userData", "spec.online": "online"},
	create: func(ctx context.Context, api tenantclient.TenantV1alpha1Interface, f url.Values) (string, error) {
		h, ferr := hostClaimFromForm(f)
		if ferr != nil {
			return "", ferr
		}
		created, err := api.HostClaims(h.Namespace).Create(ctx, h, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		return created.Name, nil
	},
}

// hostClaimFromForm reads a HostClaim: namespace, name, hostClass,
// selector (label selector syntax), image and checksum, userData (a
// Secret's name), online.
func hostClaimFromForm(f url.Values) (*tenantv1alpha1.HostClaim, *apiError) {
	h := &tenantv1alpha1.HostClaim{ObjectMeta: metav1.ObjectMeta{Namespace: f.Get("namespace"), Name: strings.TrimSpace(f.Get("name"))},
		Spec: tenantv1alpha1.HostClaimSpec{HostClass: f.Get("hostClass"), Online: f.Get("online") != ""}}
	if h.Namespace == "" {
		return nil, formError("namespace", "choose a namespace")
	}
	if h.Spec.HostClass == "" {
		return nil, formError("hostClass", "choose a class; none is offered to your tenant yet")
	}
	if s := strings.TrimSpace(f.Get("selector")); s != "" {
		sel, err := metav1.ParseToLabelSelector(s)
		if err != nil {
			return nil, formError("selector", err.Error())
		}
		h.Spec.HostSelector = sel
	}
	image, checksum := strings.TrimSpace(f.Get("image")), strings.TrimSpace(f.Get("checksum"))
	switch {
	case image != "":
		h.Spec.Image = &tenantv1alpha1.HostImage{URL: image, Checksum: checksum}
	case checksum != "":
		return nil, formError("image", "a checksum needs the image's URL")
	}
	if s := strings.TrimSpace(f.Get("userData")); s != "" {
		h.Spec.UserData = &tenantv1alpha1.HostDataSecret{Name: s}
	}
	return h, nil
}

// tenantKinds are the kinds of the tenant pages, in navigation order.
var tenantKinds = []*kind{namespaces, networks, floatingIPs, loadBalancers, hostClaims}

// reader is the part of a generated typed client that lists and watches.
type reader[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// readWriter is the part of a generated typed client the tenant pages use.
type readWriter[T, L runtime.Object] interface {
	reader[L]
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
}

// readsFrom sets k's list and watch to client's (all namespaces).
func readsFrom[L runtime.Object](k *kind, client func(api tenantclient.TenantV1alpha1Interface) reader[L]) {
	k.list = func(ctx context.Context, c *caller, opts metav1.ListOptions) (runtime.Object, error) {
		return client(c.api).List(ctx, opts)
	}
	k.watch = func(ctx context.Context, c *caller, opts metav1.ListOptions) (watch.Interface, error) {
		return client(c.api).Watch(ctx, opts)
	}
}

// readsAndWritesFrom sets k's list, watch, get, delete and patch to the typed
// client of a namespace ("" to list all the tenant's namespaces; ignored
// by kinds that have none).
func readsAndWritesFrom[T, L runtime.Object](k *kind, client func(api tenantclient.TenantV1alpha1Interface, namespace string) readWriter[T, L]) {
	readsFrom(k, func(api tenantclient.TenantV1alpha1Interface) reader[L] { return client(api, metav1.NamespaceAll) })
	k.get = func(ctx context.Context, api tenantclient.TenantV1alpha1Interface, namespace, name string) (runtime.Object, error) {
		return client(api, namespace).Get(ctx, name, metav1.GetOptions{})
	}
	k.delete = func(ctx context.Context, api tenantclient.TenantV1alpha1Interface, namespace, name string) error {
		return client(api, namespace).Delete(ctx, name, metav1.DeleteOptions{})
	}
	k.patch = func(ctx context.Context, api tenantclient.TenantV1alpha1Interface, namespace, name string, patch []byte) error {
		_, err := client(api, namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}
}

func init() {
	readsAndWritesFrom(networks, func(api tenantclient.TenantV1alpha1Interface, _ string) readWriter[*tenantv1alpha1.Network, *tenantv1alpha1.NetworkList] {
		return api.Networks()
	})
	readsAndWritesFrom(namespaces, func(api tenantclient.TenantV1alpha1Interface, _ string) readWriter[*tenantv1alpha1.Namespace, *tenantv1alpha1.NamespaceList] {
		return api.Namespaces()
	})
	readsAndWritesFrom(floatingIPs, func(api tenantclient.TenantV1alpha1Interface, ns string) readWriter[*tenantv1alpha1.FloatingIP, *tenantv1alpha1.FloatingIPList] {
		return api.FloatingIPs(ns)
	})
	readsAndWritesFrom(loadBalancers, func(api tenantclient.TenantV1alpha1Interface, ns string) readWriter[*tenantv1alpha1.LoadBalancer, *tenantv1alpha1.LoadBalancerList] {
		return api.LoadBalancers(ns)
	})
	readsAndWritesFrom(hostClaims, func(api tenantclient.TenantV1alpha1Interface, ns string) readWriter[*tenantv1alpha1.HostClaim, *tenantv1alpha1.HostClaimList] {
		return api.HostClaims(ns)
	})
	networks.rows = func(obj runtime.Object) []row {
		n := obj.(*tenantv1alpha1.Network)
		return []row{networks.baseRow(n, n.Name, string(n.Spec.Topology), strings.Join(tenantview.Subnets(n), ", "), tenantview.NAT(n), tenantview.Ready(n.Status.Conditions), age(n))}
	}
	namespaces.rows = func(obj runtime.Object) []row {
		n := obj.(*tenantv1alpha1.Namespace)
		return []row{namespaces.baseRow(n, n.Name, n.Status.HostNamespace, orDash(n.Spec.Network), string(n.Status.Phase), tenantview.Ready(n.Status.Conditions), age(n))}
	}
	floatingIPs.rows = func(obj runtime.Object) []row {
		f := obj.(*tenantv1alpha1.FloatingIP)
		return []row{floatingIPs.baseRow(f, f.Namespace, f.Name, f.Status.Address, orDash(f.Status.DNSName), tenantview.Target(f.Spec.Target), tenantview.FIPPorts(f.Spec.Ports), string(f.Status.Phase), tenantview.Ready(f.Status.Conditions), age(f))}
	}
	loadBalancers.rows = func(obj runtime.Object) []row {
		lb := obj.(*tenantv1alpha1.LoadBalancer)
		return []row{loadBalancers.baseRow(lb, lb.Namespace, lb.Name, lb.Status.Address, orDash(lb.Status.DNSName), tenantview.LBPorts(lb.Spec.Ports), tenantview.Selector(lb.Spec.Selector), tenantview.Ready(lb.Status.Conditions), age(lb))}
	}
	hostClaims.rows = func(obj runtime.Object) []row {
		h := obj.(*tenantv1alpha1.HostClaim)
		return []row{hostClaims.baseRow(h, h.Namespace, h.Name, string(h.Status.Phase), h.Spec.HostClass, orDash(tenantview.HostAddress(h)), orDash(string(h.Status.Power)), onOff(h.Spec.Online), age(h))}
	}
}

// onOff is a HostClaim's spec.online as the page says it.
func onOff(online bool) string {
	if online {
		return "on"
	}
	return "off"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// table lists k with the caller's credentials and renders it as a table
// kept live from live.
func table(ctx context.Context, c *caller, k *kind, opts metav1.ListOptions, live string) (*tableData, error) {
	list, err := k.list(ctx, c, opts)
	if err != nil {
		return nil, err
	}
	items, _, err := itemsOf(list)
	if err != nil {
		return nil, err
	}
	return &tableData{Kind: k, Rows: sortedRows(k, items), CSRF: c.CSRF, Live: live}, nil
}

// itemsOf returns a list's items and resourceVersion.
func itemsOf(list runtime.Object) ([]runtime.Object, string, error) {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, "", err
	}
	acc, err := meta.ListAccessor(list)
	if err != nil {
		return nil, "", err
	}
	return items, acc.GetResourceVersion(), nil
}
