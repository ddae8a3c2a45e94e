package controllertest

import (
	"context"
	"errors"
	"net/netip"
	"sync"

	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// serviceNetwork is where Subnets keeps a tenant's service network's
// subnet among its provider networks': no provider network has an empty name.
const serviceNetwork = ""

// Subnets is an in-memory controller.ConnectSubnets: it hands out the /24s
// of 100.72.0.0/16 in order, each with /28 slices, never one twice.
type Subnets struct {
	mu   sync.Mutex
	held map[string]map[string]netip.Prefix // uid -> provider network ("" the service network) -> block
	next int
	// Full refuses every new claim, as a full pool does.
	Full bool
}

var _ controller.ConnectSubnets = &Subnets{}

// NewSubnets returns Subnets that hold nothing.
func NewSubnets() *Subnets { return &Subnets{held: map[string]map[string]netip.Prefix{}} }

// Holds returns how many subnets the tenant of UID uid holds.
func (f *Subnets) Holds(uid string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.held[uid])
}

// Held implements controller.ConnectSubnets.
func (f *Subnets) Held(_ context.Context, uid string) (map[string]netip.Prefix, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]netip.Prefix{}
	for pn, b := range f.held[uid] {
		if pn != serviceNetwork {
			out[pn] = b
		}
	}
	return out, nil
}

// Claim implements controller.ConnectSubnets.
func (f *Subnets) Claim(_ context.Context, _, uid, pn string) (netip.Prefix, int, error) {
	return f.claim(uid, pn)
}

// Release implements controller.ConnectSubnets.
func (f *Subnets) Release(_ context.Context, _, uid, pn string, block netip.Prefix) error {
	f.release(uid, pn, block)
	return nil
}

// HeldServiceNetwork implements controller.ConnectSubnets.
func (f *Subnets) HeldServiceNetwork(_ context.Context, uid string) (netip.Prefix, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.held[uid][serviceNetwork]
	return b, ok, nil
}

// ClaimServiceNetwork implements controller.ConnectSubnets.
func (f *Subnets) ClaimServiceNetwork(_ context.Context, _, uid string) (netip.Prefix, int, error) {
	return f.claim(uid, serviceNetwork)
}

// ReleaseServiceNetwork implements controller.ConnectSubnets.
func (f *Subnets) ReleaseServiceNetwork(_ context.Context, _, uid string, block netip.Prefix) error {
	f.release(uid, serviceNetwork, block)
	return nil
}

func (f *Subnets) claim(uid, key string) (netip.Prefix, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b, ok := f.held[uid][key]; ok {
		return b, 28, nil
	}
	if f.Full {
		return netip.Prefix{}, 0, errors.New("pool connects: no free block of /24")
	}
	b := netip.PrefixFrom(netip.AddrFrom4([4]byte{100, 72, byte(f.next), 0}), 24)
	f.next++
	if f.held[uid] == nil {
		f.held[uid] = map[string]netip.Prefix{}
	}
	f.held[uid][key] = b
	return b, 28, nil
}

func (f *Subnets) release(uid, key string, block netip.Prefix) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held[uid][key] == block {
		delete(f.held[uid], key)
	}
}
