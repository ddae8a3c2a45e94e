package stack

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// EndpointStandIn stands in for the pods behind Services, for the
// gateway: no kubelet runs in the stack, so no pod has an address, and
// kube-apiserver refuses loopback addresses in EndpointSlices (and
// Endpoints). A test that publishes a loopback server 127.0.0.1:<port>
// writes an EndpointSlice with an address of the pod network
// (ClusterNetworkCIDR, e.g. 10.128.0.10) and that port. Traefik, which
// resolves Service backends through EndpointSlices, dials them through
// this SOCKS5 proxy (its HTTP_PROXY and HTTPS_PROXY, which Go's HTTP
// transport honours with a socks5:// URL), which connects a dial of
// <pod address>:<port> to 127.0.0.1:<port>. A SOCKS5 proxy rather than an
// HTTP one: an HTTP proxy is sent the request's Host (the route's
// hostname) in place of the address dialled, SOCKS5 the address itself,
// and it carries any protocol (HTTP, TLS, h2c). Nothing is ever dialled
// outside loopback: a dial of any other address, or of a name, is refused.
type EndpointStandIn struct {
	podNetwork netip.Prefix
	listener   net.Listener

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// startEndpointStandIn serves the stand-in on a loopback port until stop.
func startEndpointStandIn(podNetwork string) (*EndpointStandIn, error) {
	prefix, err := netip.ParsePrefix(podNetwork)
	if err != nil {
		return nil, fmt.Errorf("pod network %q: %w", podNetwork, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	e := &EndpointStandIn{podNetwork: prefix, listener: l, conns: map[net.Conn]struct{}{}}
	e.wg.Add(1)
	go e.serve()
	return e, nil
}

// URL is the proxy's address, socks5://127.0.0.1:<port>: the gateway's
// HTTP_PROXY and HTTPS_PROXY.
func (e *EndpointStandIn) URL() string { return "socks5://" + e.listener.Addr().String() }

func (e *EndpointStandIn) serve() {
	defer e.wg.Done()
	for {
		c, err := e.listener.Accept()
		if err != nil {
			return
		}
		if !e.track(c) {
			_ = c.Close()
			return
		}
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			defer e.untrack(c)
			e.handle(c)
		}()
	}
}

// track registers an open connection, unless the stand-in is stopping.
func (e *EndpointStandIn) track(c net.Conn) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return false
	}
	e.conns[c] = struct{}{}
	return true
}

func (e *EndpointStandIn) untrack(c net.Conn) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.conns, c)
	_ = c.Close()
}

// loopbackTarget maps a pod address of the pod network and a port to
// "127.0.0.1:<port>".
func (e *EndpointStandIn) loopbackTarget(ip netip.Addr, port uint16) (string, error) {
	if !e.podNetwork.Contains(ip.Unmap()) {
		return "", fmt.Errorf("%s is not an address of the pod network %s", ip, e.podNetwork)
	}
	if port == 0 {
		return "", errors.New("port 0")
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))), nil
}

// SOCKS5 (RFC 1928): the subset Go's HTTP transport uses, a CONNECT
// without authentication.
const (
	socksVersion        = 5
	socksNoAuth         = 0
	socksNoAcceptable   = 0xff
	socksConnect        = 1
	socksAddrIPv4       = 1
	socksAddrName       = 3
	socksAddrIPv6       = 4
	socksSucceeded      = 0
	socksNotAllowed     = 2
	socksConnRefused    = 5
	socksCmdUnsupported = 7
	socksAddrUnsupp     = 8
)

// handle runs one SOCKS5 connection: the handshake, then the bytes both
// ways between the client and the loopback server.
func (e *EndpointStandIn) handle(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	var hdr [2]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil || hdr[0] != socksVersion {
		return
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(r, methods); err != nil {
		return
	}
	method := byte(socksNoAcceptable)
	for _, m := range methods {
		if m == socksNoAuth {
			method = socksNoAuth
		}
	}
	if _, err := c.Write([]byte{socksVersion, method}); err != nil || method != socksNoAuth {
		return
	}
	var req [4]byte // version, command, reserved, address type
	if _, err := io.ReadFull(r, req[:]); err != nil || req[0] != socksVersion {
		return
	}
	reply := func(code byte) error {
		// Bound address and port: unspecified, as clients ignore them.
		_, err := c.Write([]byte{socksVersion, code, 0, socksAddrIPv4, 0, 0, 0, 0, 0, 0})
		return err
	}
	var ip netip.Addr
	switch req[3] {
	case socksAddrIPv4:
		var a [4]byte
		if _, err := io.ReadFull(r, a[:]); err != nil {
			return
		}
		ip = netip.AddrFrom4(a)
	case socksAddrIPv6:
		var a [16]byte
		if _, err := io.ReadFull(r, a[:]); err != nil {
			return
		}
		ip = netip.AddrFrom16(a)
	case socksAddrName:
		// A name would need resolving, maybe off the machine: refused.
		_ = reply(socksAddrUnsupp)
		return
	default:
		_ = reply(socksAddrUnsupp)
		return
	}
	var p [2]byte
	if _, err := io.ReadFull(r, p[:]); err != nil {
		return
	}
	if req[1] != socksConnect {
		_ = reply(socksCmdUnsupported)
		return
	}
	target, err := e.loopbackTarget(ip, binary.BigEndian.Uint16(p[:]))
	if err != nil {
		_ = reply(socksNotAllowed)
		return
	}
	backend, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		_ = reply(socksConnRefused)
		return
	}
	if !e.track(backend) {
		_ = backend.Close()
		return
	}
	defer e.untrack(backend)
	if err := reply(socksSucceeded); err != nil {
		return
	}
	_ = c.SetDeadline(time.Time{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(backend, r) // what the client sent after the request, buffered or not
		closeWrite(backend)
	}()
	_, _ = io.Copy(c, backend)
	closeWrite(c)
	<-done
}

// closeWrite half-closes a TCP connection, so the other side sees the end
// of what this one sends.
func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// stop closes the listener and every open connection, and waits for
// their goroutines.
func (e *EndpointStandIn) stop(timeout time.Duration) error {
	err := e.listener.Close()
	e.mu.Lock()
	e.closed = true
	for c := range e.conns {
		_ = c.Close()
	}
	e.mu.Unlock()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		return errors.New("the endpoint stand-in did not stop")
	}
	return err
}
