package dns

import (
	"context"
	"fmt"
	"net"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// benchServices is how many more Services the benchmark gives each of
// acme's and initech's namespaces, so that lookups are not in a near-empty
// cache.
const benchServices = 100

// BenchmarkQueries measures queries through the running tenant-dns,
// side by side in one run, in rounds that alternate the cases:
//   - tenant: a Hard tenant's pod asks for its Service by the name it
//     sees (web.dev.svc.cluster.local), answered by tenantdns;
//   - host: the host asks for a Soft tenant's Service by its host name,
//     answered by tenantdns's host view;
//   - baseline: the host asks the same process's second server, CoreDNS's
//     own kubernetes plugin, for the same Service by its host name, as a
//     cluster DNS answers today.
//
// Per case: p50 and p99 of one client's sequential queries over UDP, and
// queries per second with 8 clients at once.
func BenchmarkQueries(b *testing.B) {
	w := makeWorld(b)
	s := framework.Current()
	ctx := context.Background()
	kube, _, err := s.Clients(stack.AdminUser)
	if err != nil {
		b.Fatal(err)
	}
	for _, ns := range []string{w.acmeDevNS, w.initechWebNS} {
		for i := 0; i < benchServices; i++ {
			svc := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("bench-%03d", i)},
				Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "bench"}, Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}}},
			}
			if _, err := kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				b.Fatal(err)
			}
		}
	}
	cases := []struct {
		name, src, server, qname, want string
	}{
		{"tenant", acmeDev, s.TenantDNSAddr(), "web.dev.svc.cluster.local.", w.acmeWeb},
		{"host", hostSource, s.TenantDNSAddr(), "api." + w.initechWebNS + ".svc.cluster.local.", w.initechAPI},
		{"baseline", hostSource, s.TenantDNSBaselineAddr(), "api." + w.initechWebNS + ".svc.cluster.local.", w.initechAPI},
	}
	for _, c := range cases {
		waitAnswer(b, c.src, c.server, c.qname, c.want)
	}
	const rounds, sequential, parallel, clients = 5, 2000, 8000, 8
	lat := map[string][]time.Duration{}
	qps := map[string][]float64{}
	b.ResetTimer()
	for r := 0; r < rounds; r++ {
		for _, c := range cases {
			d, err := sequentialQueries(c.src, c.server, c.qname, sequential)
			if err != nil {
				b.Fatalf("%s: %v", c.name, err)
			}
			lat[c.name] = append(lat[c.name], d...)
			rate, err := parallelQueries(c.src, c.server, c.qname, parallel, clients)
			if err != nil {
				b.Fatalf("%s: %v", c.name, err)
			}
			qps[c.name] = append(qps[c.name], rate)
		}
	}
	b.StopTimer()
	for _, c := range cases {
		d := lat[c.name]
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		q := qps[c.name]
		sort.Float64s(q)
		b.ReportMetric(float64(d[len(d)/2].Microseconds()), c.name+"-p50-µs")
		b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), c.name+"-p99-µs")
		b.ReportMetric(q[len(q)/2], c.name+"-qps")
	}
}

func waitAnswer(b *testing.B, src, server, qname, want string) {
	deadline := time.Now().Add(time.Minute)
	for {
		m, err := exchange(dialUDP(src), server, qname)
		if err == nil && len(m.Answer) > 0 {
			if a, ok := m.Answer[0].(*dns.A); ok && a.A.String() == want {
				return
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s from %s at %s: %v %v, want %s", qname, src, server, m, err, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func dialUDP(src string) *dns.Client {
	return &dns.Client{Net: "udp", Timeout: 2 * time.Second, Dialer: &net.Dialer{LocalAddr: &net.UDPAddr{IP: net.ParseIP(src)}}}
}

func exchange(c *dns.Client, server, qname string) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(qname, dns.TypeA)
	resp, _, err := c.Exchange(m, server)
	if err == nil && (resp.Rcode != dns.RcodeSuccess || len(resp.Answer) == 0) {
		err = fmt.Errorf("%s: %s with %d answers", qname, dns.RcodeToString[resp.Rcode], len(resp.Answer))
	}
	return resp, err
}

// sequentialQueries times n queries sent one after the other over one
// connection.
func sequentialQueries(src, server, qname string, n int) ([]time.Duration, error) {
	c := dialUDP(src)
	conn, err := c.Dial(server)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	out := make([]time.Duration, 0, n)
	m := new(dns.Msg)
	m.SetQuestion(qname, dns.TypeA)
	for i := 0; i < n; i++ {
		start := time.Now()
		resp, _, err := c.ExchangeWithConn(m, conn)
		if err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
		if len(resp.Answer) == 0 {
			return nil, fmt.Errorf("%s: no answer", qname)
		}
	}
	return out, nil
}

// parallelQueries sends n queries from clients connections at once and
// returns the queries per second.
func parallelQueries(src, server, qname string, n, clients int) (float64, error) {
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	start := time.Now()
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dialUDP(src)
			conn, err := c.Dial(server)
			if err != nil {
				errs <- err
				return
			}
			defer func() { _ = conn.Close() }()
			m := new(dns.Msg)
			m.SetQuestion(qname, dns.TypeA)
			for j := 0; j < n/clients; j++ {
				if _, _, err := c.ExchangeWithConn(m, conn); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
