package tenantdns

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// add puts obj into s as its informer would: through the transform.
func add(t testing.TB, s *Store, k Kind, obj interface{}) {
	t.Helper()
	out, err := Transform(k)(obj)
	if err != nil {
		t.Fatal(err)
	}
	idx := map[Kind]func() error{
		KindNetworks:   func() error { return s.Networks.Add(out) },
		KindNamespaces: func() error { return s.Namespaces.Add(out) },
		KindServices:   func() error { return s.Services.Add(out) },
		KindPods:       func() error { return s.Pods.Add(out) },
		KindSlices:     func() error { return s.Slices.Add(out) },
		KindPublic:     func() error { return s.Public[0].Add(out) },
	}[k]
	if err := idx(); err != nil {
		t.Fatal(err)
	}
}

// network is a tenant's ClusterUserDefinedNetwork as the syncer writes it.
func network(name, tenant, topology string, subnets ...interface{}) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "k8s.ovn.org/v1", "kind": "ClusterUserDefinedNetwork",
		"spec": map[string]interface{}{"network": map[string]interface{}{topology: map[string]interface{}{"subnets": subnets}}},
	}}
	u.SetName(name)
	u.SetLabels(map[string]string{hostnames.TenantLabel: tenant})
	return u
}

var isolation = map[string]v1alpha1.TenantIsolation{"acme": v1alpha1.TenantIsolationHard, "globex": v1alpha1.TenantIsolationHard, "initech": v1alpha1.TenantIsolationSoft}

func hostNamespace(name, tenant, tenantNS string) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if tenant != "" {
		ns.Labels = map[string]string{hostnames.TenantLabel: tenant, hostnames.NamespaceLabel: tenantNS, hostnames.IsolationLabel: string(isolation[tenant]), "other": "dropped"}
	}
	return ns
}

func service(ns, name, ip string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{ClusterIPs: []string{ip}, ClusterIP: ip, Ports: ports, Type: corev1.ServiceTypeClusterIP},
	}
}

func pod(ns, name string, ips ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, ip := range ips {
		p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: ip})
	}
	return p
}

// fixture: acme and globex are Hard, initech Soft. acme's Namespace dev is
// host namespace acme-1-dev, globex's dev is globex-2-dev; the provider's
// Service dns in prov is offered to acme.
func fixture(t testing.TB) *Resolver {
	s := NewStore()
	add(t, s, KindNetworks, network("tn-acme-1", "acme", "layer2", "10.10.3.0/24"))
	add(t, s, KindNetworks, network("tn-acme-2", "acme", "layer3", map[string]interface{}{"cidr": "10.10.4.0/23", "hostSubnet": int64(24)}))
	add(t, s, KindNetworks, network("tn-globex-1", "globex", "layer2", "10.20.3.0/24"))
	add(t, s, KindNetworks, network("tn-initech-1", "initech", "layer2", "10.30.3.0/24"))
	for _, ns := range []*corev1.Namespace{
		hostNamespace("acme-1-dev", "acme", "dev"), hostNamespace("globex-2-dev", "globex", "dev"),
		hostNamespace("initech-3-web", "initech", "web"), hostNamespace("default", "", ""), hostNamespace("prov", "", ""),
	} {
		add(t, s, KindNamespaces, ns)
	}
	http := corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}
	add(t, s, KindServices, service("acme-1-dev", "web", "10.96.0.10", http))
	add(t, s, KindServices, service("globex-2-dev", "web", "10.96.0.20", http))
	add(t, s, KindServices, service("globex-2-dev", "secret", "10.96.0.21", http))
	add(t, s, KindServices, service("initech-3-web", "api", "10.96.0.30", http))
	add(t, s, KindServices, service("default", "kubernetes", "10.96.0.1"))
	add(t, s, KindServices, service("prov", "dns", "10.96.0.53", corev1.ServicePort{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53}))
	add(t, s, KindServices, service("prov", "billing", "10.96.0.54", http))
	headless := service("acme-1-dev", "db", corev1.ClusterIPNone)
	add(t, s, KindServices, headless)
	ready, notReady := true, false
	add(t, s, KindSlices, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "acme-1-dev", Name: "db-x", Labels: map[string]string{discoveryv1.LabelServiceName: "db"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.10.1.7"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}},
			{Addresses: []string{"10.10.1.8"}, Conditions: discoveryv1.EndpointConditions{Ready: &notReady}},
		},
	})
	alias := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "acme-1-dev", Name: "dns", Labels: map[string]string{hostnames.TenantLabel: "acme", hostnames.ProviderServiceLabel: "dns"}},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "dns.prov.svc.cluster.local"},
	}
	add(t, s, KindServices, alias)
	add(t, s, KindServices, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "acme-1-dev", Name: "ext"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "www.example.com"},
	})
	add(t, s, KindPods, pod("acme-1-dev", "web-1", "127.1.0.5"))
	add(t, s, KindPods, pod("globex-2-dev", "web-1", "127.2.0.5"))
	udn := pod("acme-1-dev", "web-2", "10.128.0.9")
	udn.Annotations = map[string]string{ovnPodNetworksAnnotation: `{"default":{"ip_addresses":["10.128.0.9/23"],"role":"infrastructure-locked"},"acme-1-dev/tn1":{"ip_addresses":["10.10.4.9/24"],"role":"primary"}}`}
	add(t, s, KindPods, udn)
	fip := &unstructured.Unstructured{Object: map[string]interface{}{}}
	fip.SetNamespace("acme.dev")
	fip.SetName("web")
	_ = unstructured.SetNestedField(fip.Object, "web.dev.acme.tenants.example.net", "status", "dnsName")
	_ = unstructured.SetNestedField(fip.Object, "203.0.113.5", "status", "address")
	add(t, s, KindPublic, fip)
	return &Resolver{
		Store: s, Domain: "cluster.local.", Reverse: []string{"in-addr.arpa.", "ip6.arpa."},
		Public: "tenants.example.net.", PublicNS: []string{"ns1.example.net."}, TTL: 5, Serial: 42,
	}
}

var (
	acmePod     = netip.MustParseAddr("10.10.3.4")
	acmeKubelet = netip.MustParseAddr("127.1.0.5")
	globexPod   = netip.MustParseAddr("10.20.3.4")
	initechPod  = netip.MustParseAddr("10.30.3.4")
	hostPod     = netip.MustParseAddr("192.168.7.7")
)

func ask(t *testing.T, r *Resolver, src netip.Addr, name string, qtype uint16) (*dns.Msg, Outcome) {
	t.Helper()
	req := new(dns.Msg)
	req.SetQuestion(name, qtype)
	return r.Resolve(src, req)
}

func answers(m *dns.Msg) []string {
	var out []string
	for _, rr := range m.Answer {
		f := strings.Fields(rr.String())
		out = append(out, f[3]+" "+strings.Join(f[4:], " "))
	}
	return out
}

func TestViews(t *testing.T) {
	r := fixture(t)
	for _, tc := range []struct {
		src  netip.Addr
		want string
	}{
		{acmePod, "acme"}, {acmeKubelet, "acme"}, {netip.MustParseAddr("10.10.4.9"), "acme"},
		{globexPod, "globex"}, {initechPod, ""}, {hostPod, ""}, {netip.MustParseAddr("127.2.0.5"), "globex"},
		{netip.MustParseAddr("::ffff:10.10.3.4"), "acme"},
	} {
		if got := r.ViewOf(tc.src); got != tc.want {
			t.Errorf("view of %s = %q, want %q", tc.src, got, tc.want)
		}
	}
}

func TestResolve(t *testing.T) {
	r := fixture(t)
	for _, tc := range []struct {
		src     netip.Addr
		name    string
		qtype   uint16
		rcode   int
		outcome Outcome
		want    []string
	}{
		// A Hard tenant's own names, by the namespace name it sees and by the host's.
		{acmePod, "web.dev.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, Answered, []string{"A 10.96.0.10"}},
		{acmePod, "WEB.Dev.svc.Cluster.Local.", dns.TypeA, dns.RcodeSuccess, Answered, []string{"A 10.96.0.10"}},
		{acmeKubelet, "web.acme-1-dev.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, Answered, []string{"A 10.96.0.10"}},
		{acmePod, "web.dev.svc.cluster.local.", dns.TypeAAAA, dns.RcodeSuccess, Answered, nil},
		{acmePod, "web.dev.svc.cluster.local.", dns.TypeSRV, dns.RcodeSuccess, Answered, []string{"SRV 0 100 80 web.dev.svc.cluster.local."}},
		{acmePod, "_http._tcp.web.dev.svc.cluster.local.", dns.TypeSRV, dns.RcodeSuccess, Answered, []string{"SRV 0 100 80 web.dev.svc.cluster.local."}},
		{acmePod, "db.dev.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, Answered, []string{"A 10.10.1.7"}},
		{acmePod, "dev.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, Answered, nil},
		{acmePod, "127-1-0-5.dev.pod.cluster.local.", dns.TypeA, dns.RcodeSuccess, Answered, []string{"A 127.1.0.5"}},
		{acmePod, "5.0.1.127.in-addr.arpa.", dns.TypePTR, dns.RcodeSuccess, Answered, []string{"PTR 127-1-0-5.dev.pod.cluster.local."}},
		{acmePod, "10.0.96.10.in-addr.arpa.", dns.TypePTR, dns.RcodeSuccess, Answered, []string{"PTR web.dev.svc.cluster.local."}},
		// The provider service offered to it, by its alias and the provider's name.
		{acmePod, "dns.dev.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, Answered, []string{"CNAME dns.prov.svc.cluster.local.", "A 10.96.0.53"}},
		{acmePod, "dns.prov.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, Answered, []string{"A 10.96.0.53"}},
		{acmePod, "53.0.96.10.in-addr.arpa.", dns.TypePTR, dns.RcodeSuccess, Answered, []string{"PTR dns.prov.svc.cluster.local."}},
		{acmePod, "ext.dev.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, Chase, []string{"CNAME www.example.com."}},
		// Everything else in the cluster domain does not exist for it.
		{acmePod, "web.globex-2-dev.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, Answered, nil},
		{acmePod, "globex-2-dev.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, Answered, nil},
		{acmePod, "kubernetes.default.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, Answered, nil},
		{acmePod, "billing.prov.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, Answered, nil},
		{acmePod, "api.initech-3-web.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, Answered, nil},
		{acmePod, "*.dev.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, Answered, nil},
		{acmePod, "127-2-0-5.globex-2-dev.pod.cluster.local.", dns.TypeA, dns.RcodeNameError, Answered, nil},
		{acmePod, "127-2-0-5.dev.pod.cluster.local.", dns.TypeA, dns.RcodeNameError, Answered, nil},
		{acmePod, "20.0.96.10.in-addr.arpa.", dns.TypePTR, 0, Next, nil},
		{acmePod, "cluster.local.", dns.TypeAXFR, dns.RcodeRefused, Answered, nil},
		{acmePod, "in-addr.arpa.", dns.TypeIXFR, dns.RcodeRefused, Answered, nil},
		{acmePod, "www.example.com.", dns.TypeA, 0, Next, nil},
		// globex sees its own web, not acme's.
		{globexPod, "web.dev.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, Answered, []string{"A 10.96.0.20"}},
		{globexPod, "dns.dev.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, Answered, nil},
		// A Soft tenant and the host see host names, without the Hard tenants'.
		{initechPod, "api.initech-3-web.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, Answered, []string{"A 10.96.0.30"}},
		{initechPod, "kubernetes.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, Answered, []string{"A 10.96.0.1"}},
		{initechPod, "web.acme-1-dev.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, Answered, nil},
		{initechPod, "acme-1-dev.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, Answered, nil},
		{initechPod, "web.dev.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, Answered, nil},
		{initechPod, "10.0.96.10.in-addr.arpa.", dns.TypePTR, 0, Next, nil},
		{hostPod, "30.0.96.10.in-addr.arpa.", dns.TypePTR, dns.RcodeSuccess, Answered, []string{"PTR api.initech-3-web.svc.cluster.local."}},
		{hostPod, "billing.prov.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, Answered, []string{"A 10.96.0.54"}},
		// The public zone, the same for everyone.
		{hostPod, "web.dev.acme.tenants.example.net.", dns.TypeA, dns.RcodeSuccess, Answered, []string{"A 203.0.113.5"}},
		{globexPod, "web.dev.acme.tenants.example.net.", dns.TypeA, dns.RcodeSuccess, Answered, []string{"A 203.0.113.5"}},
		{hostPod, "dev.acme.tenants.example.net.", dns.TypeA, dns.RcodeSuccess, Answered, nil},
		{hostPod, "nope.tenants.example.net.", dns.TypeA, dns.RcodeNameError, Answered, nil},
		{hostPod, "tenants.example.net.", dns.TypeNS, dns.RcodeSuccess, Answered, []string{"NS ns1.example.net."}},
		{hostPod, "tenants.example.net.", dns.TypeAXFR, dns.RcodeRefused, Answered, nil},
	} {
		m, outcome := ask(t, r, tc.src, tc.name, tc.qtype)
		what := tc.src.String() + " " + dns.TypeToString[tc.qtype] + " " + tc.name
		if outcome != tc.outcome {
			t.Errorf("%s: outcome %d, want %d", what, outcome, tc.outcome)
			continue
		}
		if outcome == Next {
			continue
		}
		if m.Rcode != tc.rcode {
			t.Errorf("%s: rcode %s, want %s", what, dns.RcodeToString[m.Rcode], dns.RcodeToString[tc.rcode])
		}
		if got := answers(m); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: answers %q, want %q", what, got, tc.want)
		}
	}
}

// TestHiddenIsNonexistent: what a view hides gets the very answer of a
// name nobody has, byte for byte but for the question.
func TestHiddenIsNonexistent(t *testing.T) {
	r := fixture(t)
	for _, tc := range []struct {
		src            netip.Addr
		hidden, absent string
		qtype          uint16
	}{
		{acmePod, "web.globex-2-dev.svc.cluster.local.", "web.nosuch-ns.svc.cluster.local.", dns.TypeA},
		{acmePod, "secret.globex-2-dev.svc.cluster.local.", "zzzzzz.globex-9-dev.svc.cluster.local.", dns.TypeSRV},
		{acmePod, "_http._tcp.web.globex-2-dev.svc.cluster.local.", "_http._tcp.web.nosuch.svc.cluster.local.", dns.TypeSRV},
		{acmePod, "globex-2-dev.svc.cluster.local.", "nosuch.svc.cluster.local.", dns.TypeTXT},
		{acmePod, "127-2-0-5.globex-2-dev.pod.cluster.local.", "127-9-0-5.nosuch.pod.cluster.local.", dns.TypeA},
		{globexPod, "web.acme-1-dev.svc.cluster.local.", "web.acme-9-dev.svc.cluster.local.", dns.TypeAAAA},
		{initechPod, "web.acme-1-dev.svc.cluster.local.", "web.acme-9-dev.svc.cluster.local.", dns.TypeA},
		{hostPod, "acme-1-dev.svc.cluster.local.", "acme-9-dev.svc.cluster.local.", dns.TypeSOA},
	} {
		h, ho := ask(t, r, tc.src, tc.hidden, tc.qtype)
		a, ao := ask(t, r, tc.src, tc.absent, tc.qtype)
		if ho != ao {
			t.Errorf("%s %s: outcome %d, a name nobody has %d", tc.src, tc.hidden, ho, ao)
			continue
		}
		h.Question, a.Question, h.Id, a.Id = nil, nil, 0, 0
		hb, _ := h.Pack()
		ab, _ := a.Pack()
		if string(hb) != string(ab) {
			t.Errorf("%s %s differs from a name nobody has:\n%s\n%s", tc.src, tc.hidden, h, a)
		}
	}
}

func TestAddressOfReverse(t *testing.T) {
	for name, want := range map[string]string{
		"4.3.2.1.in-addr.arpa.": "1.2.3.4",
		"b.a.9.8.7.6.5.0.4.0.0.0.3.0.0.0.2.0.0.0.1.0.0.0.0.0.0.0.1.2.3.4.ip6.arpa.": "4321:0:1:2:3:4:567:89ab",
		"04.3.2.1.in-addr.arpa.":  "",
		"3.2.1.in-addr.arpa.":     "",
		"256.3.2.1.in-addr.arpa.": "",
	} {
		a, ok := addressOfReverse(name)
		if got := ""; ok {
			got = a.String()
			if got != want {
				t.Errorf("%s: %s, want %s", name, got, want)
			}
		} else if want != "" {
			t.Errorf("%s: not parsed, want %s", name, want)
		}
	}
}
