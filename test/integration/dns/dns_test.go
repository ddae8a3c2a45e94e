// Package dns tests tenant-dns, the provider's DNS server for tenants, in
// the real stack: CoreDNS built with the tenantdns plugin (cmd/tenant-dns),
// watching kube-apiserver and tenant-apiserver as its own ServiceAccount
// with the ClusterRole of artifacts/deploy/base/90-tenant-dns.yaml, and
// asked real DNS queries over UDP and TCP.
//
// No kubelet runs here: the test plays its part and reports each source
// pod's address in the pod's status, in 127.0.0.0/8 so that the queries,
// sent from those addresses, never leave loopback. The server learns a
// query's pod from that address exactly as on a real cluster. The upstream
// resolver is a stand-in too: a DNS server on loopback that knows
// www.example.com and nothing else.
package dns

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// Where the test's pods send from: the addresses it reports for them.
const (
	acmeDev    = "127.42.0.5" // acme's pod in Namespace dev
	acmeProd   = "127.42.1.5" // acme's pod in Namespace prod
	globexDev  = "127.43.0.5" // globex's pod in Namespace dev
	initechWeb = "127.44.0.5" // initech's (a Soft tenant's) pod in Namespace web
	hostSource = "127.0.0.1"  // anyone else: a node, a provider pod
)

const publicZone = stack.PublicDNSZone

// upstreamAnswer is what the stand-in upstream resolver knows.
const upstreamAnswer = "192.0.2.80"

var upstreamAddr string

func TestMain(m *testing.M) {
	stop, err := startUpstream()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: starting the stand-in upstream resolver: %v\n", err)
		os.Exit(1)
	}
	code := framework.RunMain(m, stack.Options{
		Setup: setup, TenantDNS: true, DNSUpstream: upstreamAddr,
		SkipDataPath: true, DNSBaseline: true,
	})
	stop()
	os.Exit(code)
}

// startUpstream runs the stand-in upstream resolver on loopback: it knows
// www.example.com; every other name does not exist (with the root's SOA,
// or in-addr.arpa's for reverse names).
func startUpstream() (func(), error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	upstreamAddr = pc.LocalAddr().String()
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		if strings.EqualFold(q.Name, "www.example.com.") && q.Qtype == dns.TypeA {
			rr, _ := dns.NewRR("www.example.com. 60 IN A " + upstreamAnswer)
			m.Answer = []dns.RR{rr}
		} else {
			zone := "."
			if dns.IsSubDomain("in-addr.arpa.", strings.ToLower(q.Name)) {
				zone = "in-addr.arpa."
			}
			soa, _ := dns.NewRR(zone + " 60 IN SOA a.upstream.test. hostmaster.upstream.test. 1 7200 1800 86400 60")
			m.Ns = []dns.RR{soa}
			m.Rcode = dns.RcodeNameError
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	return func() { _ = srv.Shutdown() }, nil
}

// setup: make run's demo (acme and globex with public IPs, the provider's
// resolver offered to acme), a second Namespace of acme, a Soft tenant
// initech, then acme and globex made Hard.
func setup(ctx context.Context, s *stack.Stack) error {
	if err := stack.Demo(ctx, s); err != nil {
		return err
	}
	if err := s.EnsureNamespace(ctx, "alice", "prod"); err != nil {
		return err
	}
	if err := s.EnsureTenant(ctx, "initech", "10.44.0.0/16", "carol"); err != nil {
		return err
	}
	if err := s.EnsureNetwork(ctx, "carol", "default"); err != nil {
		return err
	}
	if err := s.EnsureNamespace(ctx, "carol", "web"); err != nil {
		return err
	}
	for _, t := range []string{"acme", "globex"} {
		if err := setIsolation(ctx, s, t, tenantv1alpha1.TenantIsolationHard); err != nil {
			return err
		}
	}
	return nil
}

func setIsolation(ctx context.Context, s *stack.Stack, tenant string, iso tenantv1alpha1.TenantIsolation) error {
	admin, err := s.TenantClient(stack.AdminUser)
	if err != nil {
		return err
	}
	patch := fmt.Sprintf(`{"spec":{"isolation":%q}}`, iso)
	if _, err := admin.TenantV1alpha1().Tenants().Patch(ctx, tenant, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("making tenant %s %s: %w", tenant, iso, err)
	}
	return nil
}

// world is what the tests made on the host, found once.
type world struct {
	acmeDevNS, acmeProdNS, globexDevNS, initechWebNS string
	acmeWeb, globexWeb, initechAPI, resolver         string // cluster IPs
}

var (
	once   sync.Once
	shared world
	errW   error
)

func hostNamespace(ctx context.Context, kube kubernetes.Interface, tenant, name string) (string, error) {
	var found string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: hostnames.TenantLabel + "=" + tenant + "," + hostnames.NamespaceLabel + "=" + name})
		if err != nil || len(l.Items) != 1 {
			return false, nil
		}
		found = l.Items[0].Name
		return true, nil
	})
	if err != nil {
		return "", fmt.Errorf("host namespace of %s's Namespace %s: %w", tenant, name, err)
	}
	return found, nil
}

// makeWorld creates, as the provider, the Services and the pods the
// queries come from, and reports the pods' addresses as kubelet would.
func makeWorld(t testing.TB) world {
	once.Do(func() { shared, errW = buildWorld(context.Background()) })
	if errW != nil {
		t.Fatal(errW)
	}
	return shared
}

func buildWorld(ctx context.Context) (world, error) {
	s := framework.Current()
	kube, _, err := s.Clients(stack.AdminUser)
	if err != nil {
		return world{}, err
	}
	var w world
	for _, x := range []struct {
		dst          *string
		tenant, name string
	}{
		{&w.acmeDevNS, "acme", "dev"}, {&w.acmeProdNS, "acme", "prod"},
		{&w.globexDevNS, "globex", "dev"}, {&w.initechWebNS, "initech", "web"},
	} {
		if *x.dst, err = hostNamespace(ctx, kube, x.tenant, x.name); err != nil {
			return w, err
		}
	}
	http := corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}
	for _, x := range []struct {
		dst      *string
		ns, name string
	}{
		{&w.acmeWeb, w.acmeDevNS, "web"}, {&w.globexWeb, w.globexDevNS, "web"},
		{nil, w.globexDevNS, "secret"}, {&w.initechAPI, w.initechWebNS, "api"},
	} {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: x.ns, Name: x.name},
			Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": x.name}, Ports: []corev1.ServicePort{http}},
		}
		got, err := kube.CoreV1().Services(x.ns).Create(ctx, svc, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			got, err = kube.CoreV1().Services(x.ns).Get(ctx, x.name, metav1.GetOptions{})
		}
		if err != nil {
			return w, fmt.Errorf("service %s/%s: %w", x.ns, x.name, err)
		}
		if x.dst != nil {
			*x.dst = got.Spec.ClusterIP
		}
	}
	// A headless Service whose endpoints the provider lists by hand.
	headless := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.acmeDevNS, Name: "db"},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Name: "pg", Protocol: corev1.ProtocolTCP, Port: 5432}}},
	}
	if _, err := kube.CoreV1().Services(w.acmeDevNS).Create(ctx, headless, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return w, err
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: w.acmeDevNS, Name: "db-1", Labels: map[string]string{discoveryv1.LabelServiceName: "db", discoveryv1.LabelManagedBy: "tenant-dns-test"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.42.0.77"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
	}
	if _, err := kube.DiscoveryV1().EndpointSlices(w.acmeDevNS).Create(ctx, slice, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return w, err
	}
	resolver, err := kube.CoreV1().Services("infra").Get(ctx, "resolver", metav1.GetOptions{})
	if err != nil {
		return w, err
	}
	w.resolver = resolver.Spec.ClusterIP
	for _, p := range []struct{ ns, ip string }{
		{w.acmeDevNS, acmeDev}, {w.acmeProdNS, acmeProd}, {w.globexDevNS, globexDev}, {w.initechWebNS, initechWeb},
	} {
		if err := runPod(ctx, kube, p.ns, "client", p.ip); err != nil {
			return w, err
		}
	}
	return w, nil
}

// runPod creates a pod and reports it running at ip, as kubelet would.
func runPod(ctx context.Context, kube kubernetes.Interface, ns, name, ip string) error {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "client"}},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				Name: "c", Image: "registry.example/client:1",
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			}},
		},
	}
	if _, err := kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("pod %s/%s: %w", ns, name, err)
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP = ip
		p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
		_, err = kube.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err == nil, nil
	})
}

// query sends one query from src over net ("udp" or "tcp").
func query(t *testing.T, src, network, name string, qtype uint16, edns bool) *dns.Msg {
	t.Helper()
	var local net.Addr = &net.UDPAddr{IP: net.ParseIP(src)}
	if network == "tcp" {
		local = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	c := &dns.Client{Net: network, Timeout: 3 * time.Second, Dialer: &net.Dialer{LocalAddr: local, Timeout: 3 * time.Second}}
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	if edns {
		m.SetEdns0(1232, true)
	}
	var resp *dns.Msg
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if resp, _, err = c.Exchange(m, framework.Current().TenantDNSAddr()); err == nil {
			return resp
		}
	}
	t.Fatalf("%s %s %s from %s: %v", network, dns.TypeToString[qtype], name, src, err)
	return nil
}

// answer is "<rcode> <records...>" of a response, the records without
// owner and TTL.
func answer(m *dns.Msg) string {
	parts := []string{dns.RcodeToString[m.Rcode]}
	for _, rr := range m.Answer {
		f := strings.Fields(rr.String())
		parts = append(parts, f[3]+" "+strings.Join(f[4:], " "))
	}
	return strings.Join(parts, " ")
}

// eventually asks until the answer is want: the server learns the
// cluster's objects through watches.
func eventually(t *testing.T, src, name string, qtype uint16, want string) {
	t.Helper()
	var got string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		got = answer(query(t, src, "udp", name, qtype, false))
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("%s %s from %s: %q, want %q", dns.TypeToString[qtype], name, src, got, want)
	}
}

func TestTenantNames(t *testing.T) {
	w := makeWorld(t)
	admin, err := framework.Current().TenantClient(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"acme", "globex"} {
		tn, err := admin.TenantV1alpha1().Tenants().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tn.Spec.Isolation != tenantv1alpha1.TenantIsolationHard {
			t.Fatalf("tenant %s: spec.isolation %q, want Hard", name, tn.Spec.Isolation)
		}
	}
	cl := ".svc.cluster.local."
	// acme resolves its own Services by the namespace names it sees, from
	// any of its namespaces (the search path svc.cluster.local makes
	// "web.dev" this name), and by their host names.
	eventually(t, acmeDev, "web.dev"+cl, dns.TypeA, "NOERROR A "+w.acmeWeb)
	eventually(t, acmeProd, "web.dev"+cl, dns.TypeA, "NOERROR A "+w.acmeWeb)
	eventually(t, acmeDev, "web."+w.acmeDevNS+cl, dns.TypeA, "NOERROR A "+w.acmeWeb)
	eventually(t, acmeDev, "_http._tcp.web.dev"+cl, dns.TypeSRV, "NOERROR SRV 0 100 80 web.dev"+cl)
	eventually(t, acmeDev, "db.dev"+cl, dns.TypeA, "NOERROR A 10.42.0.77")
	// The reverse name of its Service and of its pod.
	rev, _ := dns.ReverseAddr(w.acmeWeb)
	eventually(t, acmeDev, rev, dns.TypePTR, "NOERROR PTR web.dev"+cl)
	rev, _ = dns.ReverseAddr(acmeProd)
	eventually(t, acmeDev, rev, dns.TypePTR, "NOERROR PTR 127-42-1-5.prod.pod.cluster.local.")
	// The provider's resolver, offered to acme as "resolver".
	eventually(t, acmeDev, "resolver.dev"+cl, dns.TypeA, "NOERROR CNAME resolver.infra"+cl+" A "+w.resolver)
	eventually(t, acmeDev, "resolver.infra"+cl, dns.TypeA, "NOERROR A "+w.resolver)
	// globex's web.dev is its own.
	eventually(t, globexDev, "web.dev"+cl, dns.TypeA, "NOERROR A "+w.globexWeb)
	// Names outside the cluster are forwarded, for everyone.
	for _, src := range []string{acmeDev, globexDev, initechWeb, hostSource} {
		eventually(t, src, "www.example.com.", dns.TypeA, "NOERROR A "+upstreamAnswer)
	}
	// A Soft tenant and the host see host names, but none of a Hard tenant's.
	eventually(t, initechWeb, "api."+w.initechWebNS+cl, dns.TypeA, "NOERROR A "+w.initechAPI)
	eventually(t, hostSource, "resolver.infra"+cl, dns.TypeA, "NOERROR A "+w.resolver)
	eventually(t, initechWeb, "web."+w.acmeDevNS+cl, dns.TypeA, "NXDOMAIN")
	eventually(t, hostSource, "web."+w.globexDevNS+cl, dns.TypeA, "NXDOMAIN")
	eventually(t, initechWeb, "web.dev"+cl, dns.TypeA, "NXDOMAIN")
}

// probe is one query form, for a name that exists (of acme's) and its
// twin, the same form naming nothing.
type probe struct {
	name, twin string
	qtype      uint16
	// provider: the name is of a provider Service offered to acme, which
	// the host's view holds too.
	provider bool
}

func probes(w world) []probe {
	cl := ".svc.cluster.local."
	nobody := "acme-0f0f0f-dev"
	var out []probe
	for _, qt := range []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeSRV, dns.TypeTXT, dns.TypeANY, dns.TypeCNAME, dns.TypeMX, dns.TypeNS, dns.TypeSOA, dns.TypeCAA} {
		out = append(out,
			probe{name: "web." + w.acmeDevNS + cl, twin: "web." + nobody + cl, qtype: qt},
			probe{name: w.acmeDevNS + cl, twin: nobody + cl, qtype: qt},
			probe{name: "db." + w.acmeDevNS + cl, twin: "db." + nobody + cl, qtype: qt},
			probe{name: "resolver." + w.acmeDevNS + cl, twin: "resolver." + nobody + cl, qtype: qt},
			probe{name: "resolver.infra" + cl, twin: "resolverx.infra" + cl, qtype: qt, provider: true},
			probe{name: "127-42-0-5." + w.acmeDevNS + ".pod.cluster.local.", twin: "127-42-0-5." + nobody + ".pod.cluster.local.", qtype: qt},
			probe{name: w.acmeDevNS + ".pod.cluster.local.", twin: nobody + ".pod.cluster.local.", qtype: qt},
		)
	}
	out = append(out, []probe{
		{"_http._tcp.web." + w.acmeDevNS + cl, "_http._tcp.web." + nobody + cl, dns.TypeSRV, false},
		{"_pg._tcp.db." + w.acmeDevNS + cl, "_pg._tcp.db." + nobody + cl, dns.TypeSRV, false},
		{"*." + w.acmeDevNS + cl, "*." + nobody + cl, dns.TypeA, false},
		{"*." + w.acmeDevNS + cl, "*." + nobody + cl, dns.TypeSRV, false},
		{"web.*.svc.cluster.local.", "web.*.svc.cluster.local.", dns.TypeA, false},
		{"any." + w.acmeDevNS + cl, "any." + nobody + cl, dns.TypeA, false},
		{"WEB." + strings.ToUpper(w.acmeDevNS) + ".SVC.Cluster.Local.", "WEB." + strings.ToUpper(nobody) + ".SVC.Cluster.Local.", dns.TypeA, false},
		{"web.prod" + cl, "nosuch.prod" + cl, dns.TypeA, false},
		{"x.web." + w.acmeDevNS + cl, "x.web." + nobody + cl, dns.TypeA, false},
	}...)
	// Reverse names of acme's addresses: its Services, its pods, the
	// provider Service only acme is offered, its private block.
	for _, ip := range [][2]string{{w.acmeWeb, "10.255.255.254"}, {acmeDev, "127.42.0.250"}, {acmeProd, "127.42.1.250"}, {w.resolver, "10.255.255.253"}, {"10.42.0.77", "10.41.0.77"}} {
		a, _ := dns.ReverseAddr(ip[0])
		b, _ := dns.ReverseAddr(ip[1])
		provider := ip[0] == w.resolver
		out = append(out, probe{name: a, twin: b, qtype: dns.TypePTR, provider: provider}, probe{name: a, twin: b, qtype: dns.TypeA, provider: provider})
	}
	return out
}

// TestNoLeak: nothing globex asks (or initech, a Soft tenant, or the host)
// about acme's names gets an answer that differs from the answer for the
// same form naming nothing, in any form, over UDP and TCP, with and
// without EDNS.
func TestNoLeak(t *testing.T) {
	w := makeWorld(t)
	// The server knows acme's world before anything is compared.
	eventually(t, acmeDev, "db.dev.svc.cluster.local.", dns.TypeA, "NOERROR A 10.42.0.77")
	eventually(t, acmeDev, "resolver.dev.svc.cluster.local.", dns.TypeA, "NOERROR CNAME resolver.infra.svc.cluster.local. A "+w.resolver)
	strip := func(m *dns.Msg) string {
		c := m.Copy()
		c.Id, c.Question = 0, nil
		b, err := c.Pack()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	checked := 0
	for _, src := range []string{globexDev, initechWeb, hostSource} {
		for _, p := range probes(w) {
			if src != globexDev && p.provider {
				continue // the host's view holds the provider's Services
			}
			for _, network := range []string{"udp", "tcp"} {
				for _, edns := range []bool{false, true} {
					got := query(t, src, network, p.name, p.qtype, edns)
					twin := query(t, src, network, p.twin, p.qtype, edns)
					if strip(got) != strip(twin) {
						t.Errorf("%s %s %s from %s (edns %v) differs from %s:\n%s\n---\n%s", network, dns.TypeToString[p.qtype], p.name, src, edns, p.twin, got, twin)
					}
					checked++
				}
			}
		}
	}
	t.Logf("%d query forms compared with their twins", checked)
}

func TestZoneTransfersRefused(t *testing.T) {
	w := makeWorld(t)
	for _, src := range []string{acmeDev, globexDev, hostSource} {
		for _, zone := range []string{"cluster.local.", "svc.cluster.local.", w.acmeDevNS + ".svc.cluster.local.", "in-addr.arpa.", publicZone + "."} {
			for _, qt := range []uint16{dns.TypeAXFR, dns.TypeIXFR} {
				tr := &dns.Transfer{}
				m := new(dns.Msg)
				if qt == dns.TypeAXFR {
					m.SetAxfr(zone)
				} else {
					m.SetIxfr(zone, 0, "ns.dns."+zone, "hostmaster."+zone)
				}
				conn, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 3 * time.Second}).Dial("tcp", framework.Current().TenantDNSAddr())
				if err != nil {
					t.Fatal(err)
				}
				tr.Conn = &dns.Conn{Conn: conn}
				env, err := tr.In(m, "")
				if err != nil {
					t.Fatal(err)
				}
				var records int
				var lastErr error
				for e := range env {
					records += len(e.RR)
					lastErr = e.Error
				}
				_ = conn.Close()
				if records != 0 || lastErr == nil {
					t.Errorf("%s of %s from %s: %d records (error %v), want refused", dns.TypeToString[qt], zone, src, records, lastErr)
				}
			}
		}
	}
}

// TestIsolationChange: a tenant set back to Soft is answered from the
// host's view at once, and Hard again hides it again.
func TestIsolationChange(t *testing.T) {
	w := makeWorld(t)
	ctx := context.Background()
	s := framework.Current()
	cl := ".svc.cluster.local."
	eventually(t, hostSource, "web."+w.globexDevNS+cl, dns.TypeA, "NXDOMAIN")
	if err := setIsolation(ctx, s, "globex", tenantv1alpha1.TenantIsolationSoft); err != nil {
		t.Fatal(err)
	}
	eventually(t, hostSource, "web."+w.globexDevNS+cl, dns.TypeA, "NOERROR A "+w.globexWeb)
	eventually(t, globexDev, "web.dev"+cl, dns.TypeA, "NXDOMAIN")
	eventually(t, globexDev, "web."+w.globexDevNS+cl, dns.TypeA, "NOERROR A "+w.globexWeb)
	if err := setIsolation(ctx, s, "globex", tenantv1alpha1.TenantIsolationHard); err != nil {
		t.Fatal(err)
	}
	eventually(t, hostSource, "web."+w.globexDevNS+cl, dns.TypeA, "NXDOMAIN")
	eventually(t, globexDev, "web.dev"+cl, dns.TypeA, "NOERROR A "+w.globexWeb)
}

// TestMetrics: the server's Prometheus endpoint counts the plugin's
// answers by view.
func TestMetrics(t *testing.T) {
	w := makeWorld(t)
	eventually(t, acmeDev, "web.dev.svc.cluster.local.", dns.TypeA, "NOERROR A "+w.acmeWeb)
	resp, err := http.Get(framework.Current().TenantDNSMetricsURL())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`coredns_tenantdns_requests_total{rcode="NOERROR",server="dns://127.0.0.1:`, `view="tenant"}`, "coredns_dns_requests_total"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestClientSubnetIgnored: a query that claims another sender in an EDNS
// client-subnet option is still answered from the view of the address it
// comes from.
func TestClientSubnetIgnored(t *testing.T) {
	w := makeWorld(t)
	eventually(t, globexDev, "web.dev.svc.cluster.local.", dns.TypeA, "NOERROR A "+w.globexWeb)
	for _, network := range []string{"udp", "tcp"} {
		c := &dns.Client{Net: network, Timeout: 3 * time.Second, Dialer: &net.Dialer{LocalAddr: localAddr(network, globexDev)}}
		m := new(dns.Msg)
		m.SetQuestion("web.dev.svc.cluster.local.", dns.TypeA)
		m.SetEdns0(1232, false)
		opt := m.IsEdns0()
		opt.Option = append(opt.Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 32, Address: net.ParseIP(acmeDev).To4()})
		resp, _, err := c.Exchange(m, framework.Current().TenantDNSAddr())
		if err != nil {
			t.Fatal(err)
		}
		if got := answer(resp); got != "NOERROR A "+w.globexWeb {
			t.Errorf("%s: globex claiming acme's address in client-subnet got %q, want its own %q", network, got, "NOERROR A "+w.globexWeb)
		}
	}
}

func localAddr(network, ip string) net.Addr {
	if network == "tcp" {
		return &net.TCPAddr{IP: net.ParseIP(ip)}
	}
	return &net.UDPAddr{IP: net.ParseIP(ip)}
}
