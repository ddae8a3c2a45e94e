package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// probePort is the port the packet tests listen on in the pods' network
// namespaces.
const probePort = 9000

// udpReceived sends n datagrams from h (from source address src when set)
// to dst:probePort, and returns how many of them listener l received.
func udpReceived(ctx context.Context, t *testing.T, h *stack.PodHost, src, dst string, l net.PacketConn, n int) int {
	t.Helper()
	token := fmt.Sprintf("probe-%d-%s-%s", time.Now().UnixNano(), h.IP, dst)
	c, err := h.Dial(ctx, "udp", src, net.JoinHostPort(dst, fmt.Sprint(probePort)))
	if err != nil {
		t.Fatalf("%s: dialing udp %s: %v", h, dst, err)
	}
	defer func() { _ = c.Close() }()
	for i := 0; i < n; i++ {
		// A write may fail once the pod's kernel has learnt the address is
		// unreachable; that is a packet not delivered.
		_, _ = c.Write([]byte(token))
	}
	got := 0
	buf := make([]byte, 256)
	deadline := time.Now().Add(time.Second)
	for {
		if err := l.SetReadDeadline(deadline); err != nil {
			t.Fatal(err)
		}
		m, _, err := l.ReadFrom(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		if string(buf[:m]) == token {
			got++
		}
	}
}

// tcpExchange connects from h to dst:probePort, where an echo server
// runs, and reports whether a message came back.
func tcpExchange(ctx context.Context, h *stack.PodHost, dst string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := h.Dial(ctx, "tcp", "", net.JoinHostPort(dst, fmt.Sprint(probePort)))
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	msg := "hello from " + h.Pod
	if _, err := io.WriteString(c, msg); err != nil {
		return err
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil {
		return err
	}
	if string(buf) != msg {
		return fmt.Errorf("echo %q, want %q", buf, msg)
	}
	return nil
}

// echoServer serves TCP echo on l until it is closed.
func echoServer(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer func() { _ = c.Close() }()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			_, _ = io.Copy(c, c)
		}()
	}
}

// TestDataPathPackets sends real packets through the data path node's
// chassis (userspace Open vSwitch and ovn-controller running the zone's
// logical flows) between pods plugged in as network namespaces: within a
// tenant's Network ping, TCP and UDP get through; to another tenant's pod
// not one packet arrives, by route, by its MAC, by broadcast, or from a
// spoofed source; the tenant's NetworkPolicy stops TCP and lifting it lets
// it through again. Packets only travel between the namespaces the test
// plugged.
func TestDataPathPackets(t *testing.T) {
	if why := stack.PacketsUnavailable(); why != "" {
		t.Skip("this machine cannot send real packets: " + why)
	}
	isoDemoTenants(t)
	ctx := framework.Context(t, 4*time.Minute)
	dp := dataPath(t)
	kube, _, err := framework.Current().Clients(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := framework.Current().StartPackets(ctx)
	if err != nil {
		t.Fatalf("starting Open vSwitch and ovn-controller: %v", err)
	}
	for _, name := range []string{"ovsdb-server-ovs", "ovs-vswitchd", "ovn-controller"} {
		t.Logf("%s: %s", name, vmRSS(framework.Current().PID(name)))
	}
	acmeNS, globexNS := hostNamespaceOf(ctx, t, alice, "dev"), hostNamespaceOf(ctx, t, "bob", "dev")
	plug := func(ns, name string) *stack.PodHost {
		t.Helper()
		placePod(ctx, t, kube, dp, ns, name)
		h, err := pk.Plug(ctx, kube, ns, name)
		if err != nil {
			t.Fatalf("plugging %s/%s: %v", ns, name, err)
		}
		t.Cleanup(func() { _ = pk.Unplug(context.Background(), h) })
		return h
	}
	a1, a2, g1 := plug(acmeNS, "pk-a1"), plug(acmeNS, "pk-a2"), plug(globexNS, "pk-g1")
	t.Logf("plugged %s, %s (acme) and %s (globex) into bridge %s", a1, a2, g1, pk.Bridge)

	listeners := map[*stack.PodHost]net.PacketConn{}
	for _, h := range []*stack.PodHost{a1, a2, g1} {
		l, _, err := h.Listen("tcp", fmt.Sprintf(":%d", probePort))
		if err != nil {
			t.Fatal(err)
		}
		go echoServer(l)
		t.Cleanup(func() { _ = l.Close() })
		_, pc, err := h.Listen("udp", fmt.Sprintf(":%d", probePort))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = pc.Close() })
		listeners[h] = pc
	}

	ping := func(from, to *stack.PodHost) bool {
		t.Helper()
		ok, err := from.Ping(to.IP.String(), time.Second)
		if err != nil {
			t.Fatalf("ping %s -> %s: %v", from, to, err)
		}
		return ok
	}
	// Within acme's Network. The first packets may wait for ARP and for
	// ovn-controller's flows of a port just bound: poll.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return ping(a1, a2), nil
	}); err != nil {
		t.Fatalf("ping %s -> %s within acme's Network: no reply", a1, a2)
	}
	if !ping(a2, a1) {
		t.Errorf("ping %s -> %s within acme's Network: no reply", a2, a1)
	}
	for _, c := range [][2]*stack.PodHost{{a1, a2}, {a2, a1}} {
		if err := tcpExchange(ctx, c[0], c[1].IP.String()); err != nil {
			t.Errorf("TCP %s -> %s within acme's Network: %v", c[0], c[1], err)
		}
	}
	if got := udpReceived(ctx, t, a1, "", a2.IP.String(), listeners[a2], 10); got != 10 {
		t.Errorf("UDP %s -> %s within acme's Network: %d of 10 datagrams arrived", a1, a2, got)
	}

	// Across tenants: nothing, either way.
	if ping(a1, g1) {
		t.Errorf("ping %s -> %s (globex) answered", a1, g1)
	}
	if ping(g1, a1) {
		t.Errorf("ping %s -> %s (acme) answered", g1, a1)
	}
	if err := tcpExchange(ctx, a1, g1.IP.String()); err == nil {
		t.Errorf("TCP %s -> %s (globex) connected", a1, g1)
	}
	if got := udpReceived(ctx, t, a1, "", g1.IP.String(), listeners[g1], 10); got != 0 {
		t.Errorf("UDP %s -> %s (globex) through acme's gateway: %d datagrams arrived", a1, g1, got)
	}
	if got := udpReceived(ctx, t, g1, "", a1.IP.String(), listeners[a1], 10); got != 0 {
		t.Errorf("UDP %s -> %s (acme) through globex's gateway: %d datagrams arrived", g1, a1, got)
	}
	// Straight to globex's MAC, as if on one segment.
	if err := a1.IPCmd("neigh", "replace", g1.IP.String(), "lladdr", g1.MAC, "dev", "eth0", "nud", "permanent"); err != nil {
		t.Fatal(err)
	}
	if err := a1.IPCmd("route", "replace", g1.IP.String()+"/32", "dev", "eth0"); err != nil {
		t.Fatal(err)
	}
	if got := udpReceived(ctx, t, a1, "", g1.IP.String(), listeners[g1], 10); got != 0 {
		t.Errorf("UDP %s -> %s (globex) to its MAC %s: %d datagrams arrived", a1, g1, g1.MAC, got)
	}
	if err := a1.IPCmd("route", "del", g1.IP.String()+"/32", "dev", "eth0"); err != nil {
		t.Fatal(err)
	}
	// Broadcast: acme's own pod hears it, globex's does not.
	if err := a1.IPCmd("route", "replace", "255.255.255.255/32", "dev", "eth0"); err != nil {
		t.Fatal(err)
	}
	heard := udpBroadcast(ctx, t, a1, map[string]net.PacketConn{"a2": listeners[a2], "g1": listeners[g1]})
	if heard["a2"] == 0 {
		t.Errorf("UDP broadcast from %s: acme's %s heard nothing (the probe proves nothing)", a1, a2)
	}
	if heard["g1"] != 0 {
		t.Errorf("UDP broadcast from %s: globex's %s heard %d datagrams", a1, g1, heard["g1"])
	}
	// A spoofed source: a1 sends to a2 as globex's pod.
	if err := a1.IPCmd("addr", "add", g1.IP.String()+"/32", "dev", "eth0"); err != nil {
		t.Fatal(err)
	}
	if got := udpReceived(ctx, t, a1, g1.IP.String(), a2.IP.String(), listeners[a2], 10); got != 0 {
		t.Errorf("UDP %s -> %s with globex's address %s as source: %d datagrams arrived, want dropped by port security", a1, a2, g1.IP, got)
	}
	if err := a1.IPCmd("addr", "del", g1.IP.String()+"/32", "dev", "eth0"); err != nil {
		t.Fatal(err)
	}
	if got := udpReceived(ctx, t, a1, "", a2.IP.String(), listeners[a2], 10); got != 10 {
		t.Errorf("UDP %s -> %s with its own address again: %d of 10 arrived", a1, a2, got)
	}

	// acme's NetworkPolicy: no ingress to pk-a2; pk-a2's own egress is free.
	deny := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "pk-deny-a2", Namespace: acmeNS},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "pk-a2"}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
	if _, err := kube.NetworkingV1().NetworkPolicies(acmeNS).Create(ctx, deny, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.NetworkingV1().NetworkPolicies(acmeNS).Delete(context.Background(), deny.Name, metav1.DeleteOptions{})
	})
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return tcpExchange(ctx, a1, a2.IP.String()) != nil, nil
	}); err != nil {
		t.Errorf("acme's NetworkPolicy denying ingress to %s: TCP from %s still connects", a2, a1)
	}
	if err := tcpExchange(ctx, a2, a1.IP.String()); err != nil {
		t.Errorf("acme's NetworkPolicy denying ingress to %s also stops its TCP to %s: %v", a2, a1, err)
	}
	if err := kube.NetworkingV1().NetworkPolicies(acmeNS).Delete(ctx, deny.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return tcpExchange(ctx, a1, a2.IP.String()) == nil, nil
	}); err != nil {
		t.Errorf("after the NetworkPolicy's delete: TCP %s -> %s still refused", a1, a2)
	}
}

// udpBroadcast sends datagrams from h to the limited broadcast address and
// returns how many each listener received.
func udpBroadcast(ctx context.Context, t *testing.T, h *stack.PodHost, listeners map[string]net.PacketConn) map[string]int {
	t.Helper()
	token := fmt.Sprintf("broadcast-%d-%s", time.Now().UnixNano(), h.IP)
	c, err := h.Dial(ctx, "udp", "", net.JoinHostPort("255.255.255.255", fmt.Sprint(probePort)))
	if err != nil {
		t.Fatalf("%s: dialing the broadcast address: %v", h, err)
	}
	defer func() { _ = c.Close() }()
	for i := 0; i < 10; i++ {
		if _, err := c.Write([]byte(token)); err != nil {
			t.Fatalf("%s: broadcasting: %v", h, err)
		}
	}
	got := map[string]int{}
	buf := make([]byte, 256)
	for name, l := range listeners {
		deadline := time.Now().Add(time.Second)
		for {
			if err := l.SetReadDeadline(deadline); err != nil {
				t.Fatal(err)
			}
			m, _, err := l.ReadFrom(buf)
			if err != nil {
				break
			}
			if string(buf[:m]) == token {
				got[name]++
			}
		}
	}
	return got
}

// vmRSS is the resident memory of process pid, as /proc says it.
func vmRSS(pid int) string {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "not running"
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			return strings.Join(strings.Fields(line)[1:], " ")
		}
	}
	return "unknown"
}
