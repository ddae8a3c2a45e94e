package ipam

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

const (
	blocksDir = "/blocks/"
	ownersDir = "/owners/"
	// familyV4 keeps room for an IPv6 keyspace next to the IPv4 one: without
	// it, the bit strings of the two families would be prefixes of each other.
	familyV4 = "v4/"
	familyV6 = "v6/"
)

// BlockKey returns the etcd key of block b under prefix:
// <prefix>/blocks/v4/<the network bits of b as '0' and '1'>. The keys of the
// blocks inside b are exactly the keys that start with BlockKey(b), and the
// blocks that contain b are exactly those whose keys are prefixes of it.
func BlockKey(prefix string, b netip.Prefix) string {
	return strings.TrimSuffix(prefix, "/") + blocksDir + blockSuffix(b)
}

// ParseBlockKey returns the block whose BlockKey under prefix is key.
func ParseBlockKey(prefix, key string) (netip.Prefix, error) {
	rest, ok := strings.CutPrefix(key, strings.TrimSuffix(prefix, "/")+blocksDir)
	if !ok {
		return netip.Prefix{}, fmt.Errorf("%w: key %q is not under %q", ErrInvalid, key, prefix)
	}
	return parseBlockSuffix(rest)
}

func blockSuffix(b netip.Prefix) string {
	family := familyV4
	if !b.Addr().Is4() {
		family = familyV6
	}
	raw := b.Addr().AsSlice()
	var sb strings.Builder
	sb.Grow(len(family) + b.Bits())
	sb.WriteString(family)
	for i := 0; i < b.Bits(); i++ {
		sb.WriteByte('0' + (raw[i/8]>>(7-i%8))&1)
	}
	return sb.String()
}

func parseBlockSuffix(s string) (netip.Prefix, error) {
	var raw []byte
	switch {
	case strings.HasPrefix(s, familyV4):
		raw = make([]byte, 4)
	case strings.HasPrefix(s, familyV6):
		raw = make([]byte, 16)
	default:
		return netip.Prefix{}, fmt.Errorf("%w: block key %q has no address family", ErrInvalid, s)
	}
	digits := s[len(familyV4):]
	if len(digits) > len(raw)*8 {
		return netip.Prefix{}, fmt.Errorf("%w: block key %q is too long", ErrInvalid, s)
	}
	for i := 0; i < len(digits); i++ {
		switch digits[i] {
		case '0':
		case '1':
			raw[i/8] |= 1 << (7 - i%8)
		default:
			return netip.Prefix{}, fmt.Errorf("%w: block key %q is not binary", ErrInvalid, s)
		}
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.PrefixFrom(addr, len(digits)), nil
}

// ownerDir is the directory of the owner index of tenantUID: one empty key
// per block the owner holds, written and deleted in the same transaction as
// the block, so that ReleaseOwner and ListOwner read only that owner's keys.
func ownerDir(prefix, tenantUID string) string {
	return strings.TrimSuffix(prefix, "/") + ownersDir + url.PathEscape(tenantUID) + "/"
}

func ownerKey(prefix, tenantUID string, b netip.Prefix) string {
	return ownerDir(prefix, tenantUID) + blockSuffix(b)
}
