package stack

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// inNetNS runs fn on an OS thread that has entered network namespace
// name: the sockets fn opens belong to that namespace for their whole
// life, whichever goroutine uses them afterwards. The thread goes back to
// the machine's namespace before the Go scheduler may use it again. It
// must not end instead: the stack's processes die with the thread that
// started them (Pdeathsig), and any thread may have.
func inNetNS(name string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer func() { _ = own.Close() }()
		f, err := os.Open(filepath.Join("/run/netns", name))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer func() { _ = f.Close() }()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("entering network namespace %s: %w", name, err)
			return
		}
		err = fn()
		if back := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); back != nil {
			// Still locked: the thread ends with this goroutine rather
			// than serve others in the pod's namespace.
			errc <- errors.Join(err, fmt.Errorf("leaving network namespace %s: %w", name, back))
			return
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// ethtoolValue and ifreqData are the kernel's struct ethtool_value and an
// ifreq whose union holds a pointer to it (SIOCETHTOOL).
type ethtoolValue struct{ cmd, data uint32 }

type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// ethtoolSetTxCsum is ETHTOOL_STXCSUM.
const ethtoolSetTxCsum = 0x17

// disableTxChecksumOffload turns off dev's transmit checksum offload, as
// "ethtool -K dev tx off" does.
func disableTxChecksumOffload(dev string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(fd) }()
	val := &ethtoolValue{cmd: ethtoolSetTxCsum}
	ifr := &ifreqData{data: unsafe.Pointer(val)}
	copy(ifr.name[:unix.IFNAMSIZ-1], dev)
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(ifr))); errno != 0 {
		return fmt.Errorf("turning off the transmit checksum offload of %s: %w", dev, errno)
	}
	runtime.KeepAlive(val)
	return nil
}

// Ping sends one ICMP echo request from h to dst and reports whether a
// reply from dst came back within timeout.
func (h *PodHost) Ping(dst string, timeout time.Duration) (bool, error) {
	ip := net.ParseIP(dst).To4()
	if ip == nil {
		return false, fmt.Errorf("ping: %q is not an IPv4 address", dst)
	}
	var got bool
	err := inNetNS(h.NetNS, func() error {
		c, err := net.ListenPacket("ip4:icmp", "0.0.0.0")
		if err != nil {
			return err
		}
		defer func() { _ = c.Close() }()
		id, seq := uint16(os.Getpid()), uint16(time.Now().UnixNano())
		msg := make([]byte, 8+32)
		msg[0] = 8 // echo request
		binary.BigEndian.PutUint16(msg[4:], id)
		binary.BigEndian.PutUint16(msg[6:], seq)
		copy(msg[8:], "tenant-apiserver data path probe")
		binary.BigEndian.PutUint16(msg[2:], icmpChecksum(msg))
		if _, err := c.WriteTo(msg, &net.IPAddr{IP: ip}); err != nil {
			return err
		}
		deadline := time.Now().Add(timeout)
		buf := make([]byte, 1500)
		for {
			if err := c.SetReadDeadline(deadline); err != nil {
				return err
			}
			n, from, err := c.ReadFrom(buf)
			if err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) {
					return nil
				}
				return err
			}
			if n >= 8 && buf[0] == 0 && binary.BigEndian.Uint16(buf[4:]) == id && binary.BigEndian.Uint16(buf[6:]) == seq &&
				from.(*net.IPAddr).IP.Equal(ip) {
				got = true
				return nil
			}
		}
	})
	return got, err
}

func icmpChecksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum>>16 + sum&0xffff
	}
	return ^uint16(sum)
}

// Listen opens a listener in h's network namespace ("tcp" or "udp",
// address as for net.Listen, e.g. ":8080").
func (h *PodHost) Listen(network, address string) (net.Listener, net.PacketConn, error) {
	var l net.Listener
	var pc net.PacketConn
	err := inNetNS(h.NetNS, func() error {
		var err error
		if network == "udp" {
			pc, err = net.ListenPacket("udp4", address)
		} else {
			l, err = net.Listen("tcp4", address)
		}
		return err
	})
	return l, pc, err
}

// Dial connects from h to address ("tcp" or "udp"), from source address
// src when it is set (which h must hold: see IPCmd).
func (h *PodHost) Dial(ctx context.Context, network, src, address string) (net.Conn, error) {
	var c net.Conn
	err := inNetNS(h.NetNS, func() error {
		d := net.Dialer{}
		if src != "" {
			ip := net.ParseIP(src)
			if network == "udp" {
				d.LocalAddr = &net.UDPAddr{IP: ip}
			} else {
				d.LocalAddr = &net.TCPAddr{IP: ip}
			}
		}
		var err error
		c, err = d.DialContext(ctx, network+"4", address)
		return err
	})
	return c, err
}
