package tenantdns

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// Resolver answers queries from a Store. It is the plugin without
// CoreDNS: what a query gets depends only on its sender's address, the
// query and the Store.
type Resolver struct {
	Store *Store
	// Domain is the cluster domain, canonical ("cluster.local.").
	Domain string
	// Reverse are the reverse zones served ("in-addr.arpa."), canonical.
	Reverse []string
	// Public is the provider's public zone, canonical; "" serves none.
	Public string
	// PublicNS are the public zone's name servers, canonical.
	PublicNS []string
	// TTL of every record and of negative answers.
	TTL uint32
	// Serial of the zones' SOA records: fixed while the server runs, so
	// that no answer tells when another tenant's objects last changed.
	Serial uint32
}

// Outcome is what Resolve decided.
type Outcome int

const (
	// Answered: the reply is complete.
	Answered Outcome = iota
	// Next: the query is not the plugin's (outside its zones, or a reverse
	// name of an address the sender's view does not hold); the next
	// plugin answers it.
	Next
	// Chase: the reply holds a CNAME to a name outside the plugin's zones
	// (an ExternalName Service); the caller appends what the target
	// resolves to.
	Chase
)

// view is what a sender may know: a Hard tenant's names, or the host's
// without any Hard tenant's.
type view struct {
	tenant string // "" for the host view
}

// ViewOf names the view of a query from src: the Hard tenant whose block
// or pod holds src, or "" for the host view.
func (r *Resolver) ViewOf(src netip.Addr) string {
	return r.viewOf(src).tenant
}

func (r *Resolver) viewOf(src netip.Addr) view {
	src = src.Unmap()
	if t := r.tenantOfBlock(src); t != "" {
		return r.viewFor(t)
	}
	if objs, _ := r.Store.Pods.ByIndex(byIP, src.String()); len(objs) > 0 {
		pod := objs[0].(*corev1.Pod)
		if obj, ok, _ := r.Store.Namespaces.GetByKey(pod.Namespace); ok {
			if t := obj.(*corev1.Namespace).Labels[hostnames.TenantLabel]; t != "" {
				return r.viewFor(t)
			}
		}
	}
	return view{}
}

// viewFor is tenant t's view when it is Hard (its host namespaces say so),
// else the host's.
func (r *Resolver) viewFor(t string) view {
	if objs, _ := r.Store.Namespaces.ByIndex(byHard, t); len(objs) > 0 {
		return view{tenant: t}
	}
	return view{}
}

// tenantOfBlock is the tenant one of whose networks' subnets holds a,
// trying each prefix length a subnet has (IPAM never lets two tenants'
// blocks overlap, so at most one tenant matches).
func (r *Resolver) tenantOfBlock(a netip.Addr) string {
	if !a.Is4() {
		return ""
	}
	lengths := r.Store.lengths.Load()
	for bits := 32; bits >= 0; bits-- {
		if lengths&(1<<bits) == 0 {
			continue
		}
		p, _ := a.Prefix(bits)
		if objs, _ := r.Store.Networks.ByIndex(byBlock, p.String()); len(objs) > 0 {
			return objs[0].(*unstructured.Unstructured).GetLabels()[hostnames.TenantLabel]
		}
	}
	return ""
}

// hidden says whether host namespace ns is out of the host view: it is a
// Hard tenant's.
func (r *Resolver) hidden(ns *corev1.Namespace) bool { return isHard(ns) }

// namespace resolves label x of a name (<svc>.<x>.svc.<domain>) in v to a
// host namespace, and the name the view gives that namespace.
func (r *Resolver) namespace(v view, x string) (hostNS, shown string, ok bool) {
	if v.tenant != "" {
		if objs, _ := r.Store.Namespaces.ByIndex(byTenantName, v.tenant+"/"+x); len(objs) > 0 {
			return objs[0].(*corev1.Namespace).Name, x, true
		}
	}
	obj, exists, _ := r.Store.Namespaces.GetByKey(x)
	if !exists {
		return "", "", false
	}
	ns := obj.(*corev1.Namespace)
	if v.tenant == "" {
		return x, x, !r.hidden(ns)
	}
	if ns.Labels[hostnames.TenantLabel] != v.tenant {
		return "", "", false
	}
	return x, ns.Labels[hostnames.NamespaceLabel], true
}

// offered says whether provider Service svc in namespace ns is offered to
// v's tenant: one of its host namespaces holds an alias naming it.
func (r *Resolver) offered(v view, ns, svc string) bool {
	if v.tenant == "" {
		return false
	}
	objs, _ := r.Store.Services.ByIndex(byAlias, v.tenant+"|"+svc+"."+ns)
	return len(objs) > 0
}

// service finds Service svc of the namespace named x in v.
func (r *Resolver) service(v view, svc, x string) *corev1.Service {
	hostNS, _, ok := r.namespace(v, x)
	if !ok {
		if !r.offered(v, x, svc) {
			return nil
		}
		hostNS = x
	}
	obj, exists, _ := r.Store.Services.GetByKey(hostNS + "/" + svc)
	if !exists {
		return nil
	}
	return obj.(*corev1.Service)
}

// Resolve answers req, sent from src. With Chase, the reply's last answer
// is the CNAME whose target the caller resolves.
func (r *Resolver) Resolve(src netip.Addr, req *dns.Msg) (*dns.Msg, Outcome) {
	m, outcome, _ := r.resolve(src, req)
	return m, outcome
}

// Views that answer, as the plugin's metrics name them.
const (
	viewTenant = "tenant"
	viewHost   = "host"
	viewPublic = "public"
)

// resolve is Resolve, also naming the view that answered.
func (r *Resolver) resolve(src netip.Addr, req *dns.Msg) (*dns.Msg, Outcome, string) {
	if len(req.Question) != 1 || req.Question[0].Qclass != dns.ClassINET {
		return nil, Next, ""
	}
	q := req.Question[0]
	name := canonical(q.Name)
	if r.Public != "" && dns.IsSubDomain(r.Public, name) {
		return r.public(req, q, name), Answered, viewPublic
	}
	zone := ""
	if dns.IsSubDomain(r.Domain, name) {
		zone = r.Domain
	} else {
		zone = r.reverseZone(name)
	}
	if zone == "" {
		return nil, Next, ""
	}
	v := r.viewOf(src)
	label := viewHost
	if v.tenant != "" {
		label = viewTenant
	}
	if isTransfer(q.Qtype) {
		return refused(req), Answered, label
	}
	if zone == r.Domain {
		m, outcome := r.cluster(v, req, q, name)
		return m, outcome, label
	}
	m, outcome := r.reverse(v, req, q, name)
	return m, outcome, label
}

func isTransfer(t uint16) bool { return t == dns.TypeAXFR || t == dns.TypeIXFR }

func refused(req *dns.Msg) *dns.Msg {
	m := new(dns.Msg)
	m.SetRcode(req, dns.RcodeRefused)
	return m
}

// cluster answers a name in the cluster domain.
func (r *Resolver) cluster(v view, req *dns.Msg, q dns.Question, name string) (*dns.Msg, Outcome) {
	labels := dns.SplitDomainName(strings.TrimSuffix(name, r.Domain))
	n := len(labels)
	switch {
	case n == 0:
		switch q.Qtype {
		case dns.TypeSOA:
			return r.reply(req, []dns.RR{r.soa(r.Domain)}), Answered
		case dns.TypeNS:
			return r.reply(req, []dns.RR{&dns.NS{Hdr: r.hdr(q.Name, dns.TypeNS), Ns: "ns.dns." + r.Domain}}), Answered
		}
		return r.noData(req, r.Domain), Answered
	case n == 1 && (labels[0] == "svc" || labels[0] == "pod"):
		return r.noData(req, r.Domain), Answered
	case n == 2 && (labels[1] == "svc" || labels[1] == "pod"):
		if _, _, ok := r.namespace(v, labels[0]); ok {
			return r.noData(req, r.Domain), Answered
		}
	case n == 3 && labels[2] == "svc":
		if svc := r.service(v, labels[0], labels[1]); svc != nil {
			return r.serviceAnswer(v, req, q, svc, "", "")
		}
	case n == 5 && labels[4] == "svc" && strings.HasPrefix(labels[0], "_") && strings.HasPrefix(labels[1], "_"):
		if svc := r.service(v, labels[2], labels[3]); svc != nil && q.Qtype == dns.TypeSRV {
			return r.serviceAnswer(v, req, q, svc, labels[0][1:], labels[1][1:])
		} else if svc != nil && hasPort(svc, labels[0][1:], labels[1][1:]) {
			return r.noData(req, r.Domain), Answered
		}
	case n == 3 && labels[2] == "pod":
		if a := r.pod(v, labels[0], labels[1]); a.IsValid() {
			return r.addresses(req, q, []netip.Addr{a}), Answered
		}
	}
	return r.nxdomain(req, r.Domain), Answered
}

// serviceAnswer answers a query for Service svc's name: its addresses,
// its ports (SRV; port and proto narrow them when set), or a CNAME for an
// ExternalName Service.
func (r *Resolver) serviceAnswer(v view, req *dns.Msg, q dns.Question, svc *corev1.Service, port, proto string) (*dns.Msg, Outcome) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		target := canonical(svc.Spec.ExternalName)
		cname := &dns.CNAME{Hdr: r.hdr(q.Name, dns.TypeCNAME), Target: target}
		if q.Qtype == dns.TypeCNAME {
			return r.reply(req, []dns.RR{cname}), Answered
		}
		if !dns.IsSubDomain(r.Domain, target) {
			return r.reply(req, []dns.RR{cname}), Chase
		}
		// A target in the cluster domain resolves in the same view, once
		// (an alias of an alias is not followed).
		labels := dns.SplitDomainName(strings.TrimSuffix(target, r.Domain))
		if len(labels) == 3 && labels[2] == "svc" {
			if t := r.service(v, labels[0], labels[1]); t != nil && t.Spec.Type != corev1.ServiceTypeExternalName {
				sub := q
				sub.Name = target
				m := r.addresses(req, sub, r.serviceAddrs(t))
				m.Answer = append([]dns.RR{cname}, m.Answer...)
				return m, Answered
			}
		}
		return r.reply(req, []dns.RR{cname}), Answered
	}
	switch q.Qtype {
	case dns.TypeSRV:
		var answer, extra []dns.RR
		addrs := r.serviceAddrs(svc)
		target := canonical(q.Name)
		if port != "" {
			// _port._proto.<svc>...: the target is the Service's name.
			target = canonical(strings.Join(dns.SplitDomainName(q.Name)[2:], "."))
		}
		for _, p := range svc.Spec.Ports {
			if port != "" && (!strings.EqualFold(p.Name, port) || !strings.EqualFold(string(p.Protocol), proto)) {
				continue
			}
			answer = append(answer, &dns.SRV{Hdr: r.hdr(q.Name, dns.TypeSRV), Priority: 0, Weight: 100, Port: uint16(p.Port), Target: target})
		}
		if len(answer) == 0 {
			return r.noData(req, r.Domain), Answered
		}
		for _, a := range addrs {
			extra = append(extra, r.addressRR(target, a))
		}
		m := r.reply(req, answer)
		m.Extra = append(m.Extra, extra...)
		return m, Answered
	}
	return r.addresses(req, q, r.serviceAddrs(svc)), Answered
}

func hasPort(svc *corev1.Service, port, proto string) bool {
	for _, p := range svc.Spec.Ports {
		if strings.EqualFold(p.Name, port) && strings.EqualFold(string(p.Protocol), proto) {
			return true
		}
	}
	return false
}

// serviceAddrs are a Service's cluster IPs, or a headless Service's ready
// endpoints.
func (r *Resolver) serviceAddrs(svc *corev1.Service) []netip.Addr {
	var out []netip.Addr
	headless := len(svc.Spec.ClusterIPs) == 0 || svc.Spec.ClusterIPs[0] == corev1.ClusterIPNone
	if !headless {
		for _, ip := range svc.Spec.ClusterIPs {
			if a, err := netip.ParseAddr(ip); err == nil {
				out = append(out, a)
			}
		}
		return out
	}
	objs, _ := r.Store.Slices.ByIndex(byService, svc.Namespace+"/"+svc.Name)
	for _, o := range objs {
		for _, e := range o.(*discoveryv1.EndpointSlice).Endpoints {
			for _, ip := range e.Addresses {
				if a, err := netip.ParseAddr(ip); err == nil {
					out = append(out, a)
				}
			}
		}
	}
	return out
}

// pod resolves <a-b-c-d>.<x>.pod: the address, when a pod of that
// namespace has it.
func (r *Resolver) pod(v view, dashed, x string) netip.Addr {
	hostNS, _, ok := r.namespace(v, x)
	if !ok {
		return netip.Addr{}
	}
	var a netip.Addr
	var err error
	if strings.Count(dashed, "-") == 3 {
		a, err = netip.ParseAddr(strings.ReplaceAll(dashed, "-", "."))
	} else {
		a, err = netip.ParseAddr(strings.ReplaceAll(dashed, "-", ":"))
	}
	if err != nil {
		return netip.Addr{}
	}
	objs, _ := r.Store.Pods.ByIndex(byIP, a.String())
	for _, o := range objs {
		if o.(*corev1.Pod).Namespace == hostNS {
			return a
		}
	}
	return netip.Addr{}
}

// reverse answers a reverse name: the Service or pod of the view that has
// the address, or the next plugin's answer, as for an address nobody has.
func (r *Resolver) reverse(v view, req *dns.Msg, q dns.Question, name string) (*dns.Msg, Outcome) {
	a, ok := addressOfReverse(name)
	if !ok {
		return nil, Next
	}
	var targets []string
	objs, _ := r.Store.Services.ByIndex(byIP, a.String())
	for _, o := range objs {
		svc := o.(*corev1.Service)
		if shown, ok := r.shownNamespace(v, svc.Namespace, svc.Name); ok {
			targets = append(targets, svc.Name+"."+shown+".svc."+r.Domain)
		}
	}
	if len(targets) == 0 {
		objs, _ = r.Store.Pods.ByIndex(byIP, a.String())
		for _, o := range objs {
			pod := o.(*corev1.Pod)
			if shown, ok := r.shownNamespace(v, pod.Namespace, ""); ok {
				targets = append(targets, dashedAddress(a)+"."+shown+".pod."+r.Domain)
				break
			}
		}
	}
	if len(targets) == 0 {
		return nil, Next
	}
	if q.Qtype != dns.TypePTR {
		return r.noData(req, r.reverseZone(name)), Answered
	}
	answer := make([]dns.RR, 0, len(targets))
	for _, t := range targets {
		answer = append(answer, &dns.PTR{Hdr: r.hdr(q.Name, dns.TypePTR), Ptr: t})
	}
	return r.reply(req, answer), Answered
}

// reverseZone is the reverse zone served that holds name.
func (r *Resolver) reverseZone(name string) string {
	for _, z := range r.Reverse {
		if dns.IsSubDomain(z, name) {
			return z
		}
	}
	return ""
}

// shownNamespace is the name v gives host namespace hostNS, when v holds
// it (or, for a provider namespace, Service svc of it).
func (r *Resolver) shownNamespace(v view, hostNS, svc string) (string, bool) {
	obj, exists, _ := r.Store.Namespaces.GetByKey(hostNS)
	if !exists {
		return "", false
	}
	ns := obj.(*corev1.Namespace)
	if v.tenant == "" {
		return hostNS, !r.hidden(ns)
	}
	if ns.Labels[hostnames.TenantLabel] == v.tenant {
		return ns.Labels[hostnames.NamespaceLabel], true
	}
	if svc != "" && r.offered(v, hostNS, svc) {
		return hostNS, true
	}
	return "", false
}

// public answers a name in the provider's public zone, the same for every
// sender.
func (r *Resolver) public(req *dns.Msg, q dns.Question, name string) *dns.Msg {
	if isTransfer(q.Qtype) {
		return refused(req)
	}
	if name == r.Public {
		switch q.Qtype {
		case dns.TypeSOA:
			return r.reply(req, []dns.RR{r.soa(r.Public)})
		case dns.TypeNS:
			var answer []dns.RR
			for _, ns := range r.PublicNS {
				answer = append(answer, &dns.NS{Hdr: r.hdr(q.Name, dns.TypeNS), Ns: ns})
			}
			return r.reply(req, answer)
		}
		return r.noData(req, r.Public)
	}
	objs := r.publicByName(name)
	var addrs []netip.Addr
	for _, o := range objs {
		s, _, _ := unstructured.NestedString(o.(*unstructured.Unstructured).Object, "status", "address")
		if a, err := netip.ParseAddr(s); err == nil {
			addrs = append(addrs, a)
		}
	}
	if len(addrs) > 0 {
		m := r.addresses(req, q, addrs)
		if len(m.Ns) > 0 {
			m.Ns = []dns.RR{r.soa(r.Public)}
		}
		return m
	}
	if len(r.publicByName(entKey(name))) > 0 {
		return r.noData(req, r.Public)
	}
	return r.nxdomain(req, r.Public)
}

func (r *Resolver) publicByName(key string) []interface{} {
	var out []interface{}
	for _, idx := range r.Store.Public {
		objs, _ := idx.ByIndex(byDNSName, key)
		out = append(out, objs...)
	}
	return out
}

// entKey indexes a name that exists only because names below it do.
func entKey(name string) string { return "~" + name }

// addresses answers A or AAAA with the addresses of that family, NODATA
// when there are none (or for any other type).
func (r *Resolver) addresses(req *dns.Msg, q dns.Question, addrs []netip.Addr) *dns.Msg {
	var answer []dns.RR
	for _, a := range addrs {
		if (q.Qtype == dns.TypeA && a.Is4()) || (q.Qtype == dns.TypeAAAA && a.Is6() && !a.Is4In6()) {
			answer = append(answer, r.addressRR(q.Name, a))
		}
	}
	if len(answer) == 0 {
		return r.noData(req, r.Domain)
	}
	return r.reply(req, answer)
}

func (r *Resolver) addressRR(name string, a netip.Addr) dns.RR {
	if a.Is4() {
		return &dns.A{Hdr: r.hdr(name, dns.TypeA), A: a.AsSlice()}
	}
	return &dns.AAAA{Hdr: r.hdr(name, dns.TypeAAAA), AAAA: a.AsSlice()}
}

func (r *Resolver) hdr(name string, t uint16) dns.RR_Header {
	return dns.RR_Header{Name: name, Rrtype: t, Class: dns.ClassINET, Ttl: r.TTL}
}

func (r *Resolver) reply(req *dns.Msg, answer []dns.RR) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	m.Answer = answer
	return m
}

// noData is the answer for a name that exists without records of the
// type asked; zone "" is the cluster domain.
func (r *Resolver) noData(req *dns.Msg, zone string) *dns.Msg {
	if zone == "" {
		zone = r.Domain
	}
	m := r.reply(req, nil)
	m.Ns = []dns.RR{r.soa(zone)}
	return m
}

// nxdomain is the answer for a name that does not exist, and for any
// name the sender's view does not hold.
func (r *Resolver) nxdomain(req *dns.Msg, zone string) *dns.Msg {
	m := r.noData(req, zone)
	m.Rcode = dns.RcodeNameError
	return m
}

func (r *Resolver) soa(zone string) dns.RR {
	return &dns.SOA{
		Hdr:     dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: r.TTL},
		Ns:      "ns.dns." + zone,
		Mbox:    "hostmaster." + zone,
		Serial:  r.Serial,
		Refresh: 7200,
		Retry:   1800,
		Expire:  86400,
		Minttl:  r.TTL,
	}
}

// addressOfReverse parses an in-addr.arpa or ip6.arpa name.
func addressOfReverse(name string) (netip.Addr, bool) {
	labels := dns.SplitDomainName(name)
	n := len(labels)
	switch {
	case n == 6 && labels[4] == "in-addr" && labels[5] == "arpa":
		var b [4]byte
		for i := 0; i < 4; i++ {
			v, err := strconv.ParseUint(labels[3-i], 10, 8)
			if err != nil || (len(labels[3-i]) > 1 && labels[3-i][0] == '0') {
				return netip.Addr{}, false
			}
			b[i] = byte(v)
		}
		return netip.AddrFrom4(b), true
	case n == 34 && labels[32] == "ip6" && labels[33] == "arpa":
		var b [16]byte
		for i := 0; i < 32; i++ {
			l := labels[31-i]
			if len(l) != 1 {
				return netip.Addr{}, false
			}
			v, err := strconv.ParseUint(l, 16, 8)
			if err != nil {
				return netip.Addr{}, false
			}
			if i%2 == 0 {
				b[i/2] = byte(v) << 4
			} else {
				b[i/2] |= byte(v)
			}
		}
		return netip.AddrFrom16(b), true
	}
	return netip.Addr{}, false
}

// dashedAddress is an address as a pod name's first label: 10-1-2-3.
func dashedAddress(a netip.Addr) string {
	if a.Is4() {
		return strings.ReplaceAll(a.String(), ".", "-")
	}
	return strings.ReplaceAll(a.StringExpanded(), ":", "-")
}
