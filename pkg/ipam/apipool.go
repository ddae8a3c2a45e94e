package ipam

import (
	"fmt"
	"net/netip"
	"strings"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

// PoolFromAPI turns an AddressPool into the Pool the allocator takes.
func PoolFromAPI(p *tenant.AddressPool) (Pool, error) {
	pool := Pool{Name: p.Name}
	for _, c := range p.Spec.CIDRs {
		prefix, err := netip.ParsePrefix(c)
		if err != nil {
			return Pool{}, fmt.Errorf("pool %s: cidr %q: %w", p.Name, c, err)
		}
		pool.CIDRs = append(pool.CIDRs, prefix)
	}
	for _, r := range p.Spec.Ranges {
		first, last, ok := strings.Cut(r, "-")
		if !ok {
			return Pool{}, fmt.Errorf("pool %s: range %q is not first-last", p.Name, r)
		}
		f, err := netip.ParseAddr(strings.TrimSpace(first))
		if err != nil {
			return Pool{}, fmt.Errorf("pool %s: range %q: %w", p.Name, r, err)
		}
		l, err := netip.ParseAddr(strings.TrimSpace(last))
		if err != nil {
			return Pool{}, fmt.Errorf("pool %s: range %q: %w", p.Name, r, err)
		}
		pool.Ranges = append(pool.Ranges, Range{First: f, Last: l})
	}
	for _, e := range p.Spec.Exclude {
		if !strings.Contains(e, "/") {
			a, err := netip.ParseAddr(e)
			if err != nil {
				return Pool{}, fmt.Errorf("pool %s: exclude %q: %w", p.Name, e, err)
			}
			pool.Exclude = append(pool.Exclude, netip.PrefixFrom(a, 32))
			continue
		}
		prefix, err := netip.ParsePrefix(e)
		if err != nil {
			return Pool{}, fmt.Errorf("pool %s: exclude %q: %w", p.Name, e, err)
		}
		pool.Exclude = append(pool.Exclude, prefix.Masked())
	}
	return pool, pool.Validate()
}
