package ipam

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"net/netip"
	"slices"
)

// The arithmetic below works on IPv4 only: pools are IPv4 (SPEC section 1),
// and 64-bit integers then hold every address count, including the 2^32 of
// 0.0.0.0/0. Functions that take prefixes ignore anything that is not a
// valid IPv4 prefix; Pool.Validate is where such input is refused.

// Size returns the number of addresses in the IPv4 prefix p, or 0 if p is
// not a valid IPv4 prefix.
func Size(p netip.Prefix) uint64 {
	if !isV4(p) {
		return 0
	}
	return 1 << (32 - p.Bits())
}

// Contains reports whether inner lies wholly inside outer (equal counts).
func Contains(outer, inner netip.Prefix) bool {
	return outer.IsValid() && inner.IsValid() && outer.Addr().Is4() == inner.Addr().Is4() &&
		outer.Bits() <= inner.Bits() && outer.Contains(inner.Addr())
}

// Ancestors returns every aligned block that strictly contains p, from the
// /0 down to p's parent.
func Ancestors(p netip.Prefix) []netip.Prefix {
	if !p.IsValid() {
		return nil
	}
	out := make([]netip.Prefix, 0, p.Bits())
	for b := 0; b < p.Bits(); b++ {
		out = append(out, netip.PrefixFrom(p.Addr(), b).Masked())
	}
	return out
}

// RangeToCIDRs decomposes the inclusive IPv4 range first-last into the
// fewest aligned blocks that cover exactly that range, in address order.
func RangeToCIDRs(first, last netip.Addr) ([]netip.Prefix, error) {
	if !first.Is4() || !last.Is4() {
		return nil, fmt.Errorf("%w: range %s-%s is not IPv4", ErrInvalid, first, last)
	}
	if last.Less(first) {
		return nil, fmt.Errorf("%w: range %s-%s ends before it starts", ErrInvalid, first, last)
	}
	return spanCIDRs(span{addrValue(first), addrValue(last) + 1}, nil), nil
}

// Normalize returns the fewest aligned blocks that cover exactly the union
// of ps, in address order and without overlaps.
func Normalize(ps []netip.Prefix) []netip.Prefix {
	return spansCIDRs(toSpans(ps))
}

// Subtract returns the blocks of space not covered by any of remove, as
// Normalize would write them.
func Subtract(space, remove []netip.Prefix) []netip.Prefix {
	return spansCIDRs(subtractSpans(toSpans(space), toSpans(remove)))
}

// Intersect returns the addresses in both a and b, as Normalize would write
// them.
func Intersect(a, b []netip.Prefix) []netip.Prefix {
	sa := toSpans(a)
	return spansCIDRs(subtractSpans(sa, subtractSpans(sa, toSpans(b))))
}

// Capacity returns the number of distinct addresses in the union of ps.
func Capacity(ps []netip.Prefix) uint64 {
	var n uint64
	for _, s := range toSpans(ps) {
		n += s.end - s.lo
	}
	return n
}

// span is the half-open interval [lo, end) of IPv4 addresses as integers.
type span struct{ lo, end uint64 }

func isV4(p netip.Prefix) bool { return p.IsValid() && p.Addr().Is4() }

func addrValue(a netip.Addr) uint64 {
	b := a.As4()
	return uint64(binary.BigEndian.Uint32(b[:]))
}

func addrOf(v uint64) netip.Addr {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(v))
	return netip.AddrFrom4(b)
}

func spanOf(p netip.Prefix) span {
	lo := addrValue(p.Masked().Addr())
	return span{lo, lo + Size(p)}
}

// toSpans returns the union of the IPv4 prefixes in ps as sorted, disjoint,
// non-adjacent spans.
func toSpans(ps []netip.Prefix) []span {
	spans := make([]span, 0, len(ps))
	for _, p := range ps {
		if isV4(p) {
			spans = append(spans, spanOf(p))
		}
	}
	slices.SortFunc(spans, func(a, b span) int {
		switch {
		case a.lo < b.lo:
			return -1
		case a.lo > b.lo:
			return 1
		}
		return 0
	})
	out := spans[:0]
	for _, s := range spans {
		if n := len(out); n > 0 && s.lo <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}

// subtractSpans returns a minus b; both sorted and disjoint.
func subtractSpans(a, b []span) []span {
	var out []span
	j := 0
	for _, s := range a {
		lo := s.lo
		for j < len(b) && b[j].end <= lo {
			j++
		}
		for k := j; k < len(b) && b[k].lo < s.end; k++ {
			if b[k].lo > lo {
				out = append(out, span{lo, b[k].lo})
			}
			lo = max(lo, b[k].end)
		}
		if lo < s.end {
			out = append(out, span{lo, s.end})
		}
	}
	return out
}

func spansCIDRs(spans []span) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range spans {
		out = spanCIDRs(s, out)
	}
	return out
}

// spanCIDRs appends to out the largest aligned blocks that tile s, in order.
func spanCIDRs(s span, out []netip.Prefix) []netip.Prefix {
	for lo := s.lo; lo < s.end; {
		// The block at lo may be no larger than lo's alignment allows and
		// than what is left of the span.
		k := bits.Len64(s.end-lo) - 1
		if lo != 0 {
			k = min(k, bits.TrailingZeros64(lo))
		}
		out = append(out, netip.PrefixFrom(addrOf(lo), 32-k))
		lo += 1 << k
	}
	return out
}
