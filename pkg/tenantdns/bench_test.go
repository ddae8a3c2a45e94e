package tenantdns

import (
	"fmt"
	"net/netip"
	"runtime"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
)

// Scale of the benchmark stores: per tenant, namespaces x (Services, pods).
const (
	benchNamespaces = 5
	benchServices   = 10
	benchPods       = 10
)

// benchStore fills a store with tenants tenants' names, every other
// tenant Hard, as the informers would (through the transforms).
func benchStore(tb testing.TB, tenants int) *Store {
	s := NewStore()
	for t := 0; t < tenants; t++ {
		name := fmt.Sprintf("t%05d", t)
		if t%2 == 0 {
			isolation[name] = "Hard"
		} else {
			isolation[name] = "Soft"
		}
		add(tb, s, KindNetworks, network("tn-"+name, name, "layer2", fmt.Sprintf("10.%d.%d.0/24", 64+t/256, t%256)))
		for n := 0; n < benchNamespaces; n++ {
			ns := fmt.Sprintf("%s-abcdef-ns%d", name, n)
			add(tb, s, KindNamespaces, hostNamespace(ns, name, fmt.Sprintf("ns%d", n)))
			for i := 0; i < benchServices; i++ {
				ip := fmt.Sprintf("172.%d.%d.%d", 16+t/256, t%256, n*benchServices+i+1)
				add(tb, s, KindServices, service(ns, fmt.Sprintf("svc%d", i), ip, corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}))
			}
			for i := 0; i < benchPods; i++ {
				add(tb, s, KindPods, pod(ns, fmt.Sprintf("pod%d", i), fmt.Sprintf("100.%d.%d.%d", 64+t/256, t%256, n*benchPods+i+1)))
			}
		}
	}
	return s
}

// BenchmarkResolve answers one query of a Hard tenant's pod for its own
// Service by the name it sees (tenant), and one of the host for a Soft
// tenant's Service by its host name (host), from the same store of 1,000
// tenants' names: what the plugin adds to a query over a plain lookup.
func BenchmarkResolve(b *testing.B) {
	r := &Resolver{Store: benchStore(b, 1000), Domain: "cluster.local.", Reverse: []string{"in-addr.arpa."}, TTL: 5, Serial: 1}
	for _, bc := range []struct {
		name, qname, want string
		src               netip.Addr
	}{
		{"tenant", "svc3.ns2.svc.cluster.local.", "172.17.244.24", netip.MustParseAddr("10.65.244.9")},
		{"tenant-pod-source", "svc3.ns2.svc.cluster.local.", "172.17.244.24", netip.MustParseAddr("100.65.244.5")},
		{"host", "svc3.t00501-abcdef-ns2.svc.cluster.local.", "172.17.245.24", netip.MustParseAddr("192.168.0.1")},
		{"hidden", "svc3.t00500-abcdef-ns2.svc.cluster.local.", "", netip.MustParseAddr("192.168.0.1")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := new(dns.Msg)
			req.SetQuestion(bc.qname, dns.TypeA)
			m, _ := r.Resolve(bc.src, req)
			if got := answerAddress(m); got != bc.want {
				b.Fatalf("%s from %s: %q, want %q", bc.qname, bc.src, got, bc.want)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.Resolve(bc.src, req)
			}
		})
	}
}

func answerAddress(m *dns.Msg) string {
	if m == nil || len(m.Answer) == 0 {
		return ""
	}
	if a, ok := m.Answer[0].(*dns.A); ok {
		return a.A.String()
	}
	return ""
}

// BenchmarkStoreMemory reports the heap the plugin's store takes per 1,000
// tenants' names (each tenant: 5 namespaces, 50 Services, 50 pods, one
// network), as the informers' caches hold them after the transforms.
func BenchmarkStoreMemory(b *testing.B) {
	const tenants = 1000
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s := benchStore(b, tenants)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB/1000tenants")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(tenants*benchNamespaces*(benchServices+benchPods)), "B/object")
		runtime.KeepAlive(s)
	}
}
