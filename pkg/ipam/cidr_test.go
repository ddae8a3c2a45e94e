package ipam

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func pfx(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, 0, len(ss))
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

func TestRangeToCIDRs(t *testing.T) {
	for _, tc := range []struct {
		first, last string
		want        []netip.Prefix
		wantErr     bool
	}{
		{first: "203.0.113.10", last: "203.0.113.20", want: pfx("203.0.113.10/31", "203.0.113.12/30", "203.0.113.16/30", "203.0.113.20/32")},
		{first: "10.0.0.0", last: "10.0.0.0", want: pfx("10.0.0.0/32")},
		{first: "10.0.0.0", last: "10.0.0.255", want: pfx("10.0.0.0/24")},
		{first: "10.0.0.1", last: "10.0.1.0", want: pfx("10.0.0.1/32", "10.0.0.2/31", "10.0.0.4/30", "10.0.0.8/29", "10.0.0.16/28", "10.0.0.32/27", "10.0.0.64/26", "10.0.0.128/25", "10.0.1.0/32")},
		{first: "0.0.0.0", last: "255.255.255.255", want: pfx("0.0.0.0/0")},
		{first: "255.255.255.255", last: "255.255.255.255", want: pfx("255.255.255.255/32")},
		{first: "10.0.0.2", last: "10.0.0.1", wantErr: true},
		{first: "::1", last: "::2", wantErr: true},
		{first: "::ffff:10.0.0.1", last: "::ffff:10.0.0.2", wantErr: true},
	} {
		got, err := RangeToCIDRs(netip.MustParseAddr(tc.first), netip.MustParseAddr(tc.last))
		if tc.wantErr {
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%s-%s: err = %v, want ErrInvalid", tc.first, tc.last, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s-%s = %v, %v; want %v", tc.first, tc.last, got, err, tc.want)
		}
	}
}

func TestSetArithmetic(t *testing.T) {
	for _, tc := range []struct {
		name          string
		got, want     []netip.Prefix
		gotN, wantCap uint64
	}{
		{name: "normalize merges halves", got: Normalize(pfx("10.0.0.128/25", "10.0.0.0/25")), want: pfx("10.0.0.0/24")},
		{name: "normalize drops contained", got: Normalize(pfx("10.1.0.0/16", "10.0.0.0/8", "10.2.3.4/32")), want: pfx("10.0.0.0/8")},
		{name: "normalize keeps gaps", got: Normalize(pfx("10.0.0.0/24", "10.0.2.0/24")), want: pfx("10.0.0.0/24", "10.0.2.0/24")},
		{name: "normalize ignores ipv6", got: Normalize(pfx("10.0.0.0/24", "2001:db8::/32")), want: pfx("10.0.0.0/24")},
		{name: "normalize empty", got: Normalize(nil), want: nil},
		{name: "subtract one address", got: Subtract(pfx("10.0.0.0/24"), pfx("10.0.0.15/32")),
			want: pfx("10.0.0.0/29", "10.0.0.8/30", "10.0.0.12/31", "10.0.0.14/32", "10.0.0.16/28", "10.0.0.32/27", "10.0.0.64/26", "10.0.0.128/25")},
		{name: "subtract outside", got: Subtract(pfx("10.0.0.0/24"), pfx("192.168.0.0/16")), want: pfx("10.0.0.0/24")},
		{name: "subtract all", got: Subtract(pfx("10.0.0.0/24"), pfx("10.0.0.0/8")), want: nil},
		{name: "subtract from /0", got: Subtract(pfx("0.0.0.0/0"), pfx("128.0.0.0/1")), want: pfx("0.0.0.0/1")},
		{name: "intersect", got: Intersect(pfx("10.0.0.0/24", "10.0.2.0/24"), pfx("10.0.0.128/25", "10.0.2.0/23")), want: pfx("10.0.0.128/25", "10.0.2.0/24")},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   []netip.Prefix
		want uint64
	}{
		{pfx("0.0.0.0/0"), 1 << 32},
		{pfx("10.0.0.0/24", "10.0.0.0/25"), 256},
		{pfx("10.0.0.0/24", "10.0.1.0/32"), 257},
		{nil, 0},
	} {
		if got := Capacity(tc.in); got != tc.want {
			t.Errorf("Capacity(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestRelations(t *testing.T) {
	p := netip.MustParsePrefix("10.42.0.0/16")
	anc := Ancestors(p)
	if len(anc) != 16 || anc[0] != netip.MustParsePrefix("0.0.0.0/0") || anc[15] != netip.MustParsePrefix("10.42.0.0/15") {
		t.Errorf("Ancestors(%s) = %v", p, anc)
	}
	if par, ok := Parent(p); !ok || par != netip.MustParsePrefix("10.42.0.0/15") {
		t.Errorf("Parent(%s) = %v, %v", p, par, ok)
	}
	if _, ok := Parent(netip.MustParsePrefix("0.0.0.0/0")); ok {
		t.Error("Parent(/0) exists")
	}
	if lo, hi, ok := Children(p); !ok || lo != netip.MustParsePrefix("10.42.0.0/17") || hi != netip.MustParsePrefix("10.42.128.0/17") {
		t.Errorf("Children(%s) = %v %v %v", p, lo, hi, ok)
	}
	if _, _, ok := Children(netip.MustParsePrefix("10.0.0.1/32")); ok {
		t.Error("Children(/32) exist")
	}
	for _, tc := range []struct {
		outer, inner string
		want         bool
	}{
		{"10.0.0.0/8", "10.42.0.0/16", true},
		{"10.42.0.0/16", "10.42.0.0/16", true},
		{"10.42.0.0/16", "10.0.0.0/8", false},
		{"10.42.0.0/16", "10.43.0.0/16", false},
		{"0.0.0.0/0", "255.255.255.255/32", true},
		{"0.0.0.0/0", "::/0", false},
	} {
		if got := Contains(netip.MustParsePrefix(tc.outer), netip.MustParsePrefix(tc.inner)); got != tc.want {
			t.Errorf("Contains(%s, %s) = %v", tc.outer, tc.inner, got)
		}
	}
	if Size(netip.MustParsePrefix("10.0.0.0/20")) != 4096 || Size(netip.MustParsePrefix("2001:db8::/64")) != 0 {
		t.Error("Size")
	}
}

func TestBlockKey(t *testing.T) {
	for _, tc := range []struct{ block, key string }{
		{"10.42.0.0/16", "/ipam/blocks/v4/0000101000101010"},
		{"0.0.0.0/0", "/ipam/blocks/v4/"},
		{"203.0.113.15/32", "/ipam/blocks/v4/11001011000000000111000100001111"},
		{"128.0.0.0/1", "/ipam/blocks/v4/1"},
		{"2001:db8::/32", "/ipam/blocks/v6/00100000000000010000110110111000"},
	} {
		b := netip.MustParsePrefix(tc.block)
		if got := BlockKey("/ipam/", b); got != tc.key {
			t.Errorf("BlockKey(%s) = %q, want %q", b, got, tc.key)
		}
		if got, err := ParseBlockKey("/ipam", tc.key); err != nil || got != b {
			t.Errorf("ParseBlockKey(%q) = %v, %v", tc.key, got, err)
		}
	}
	for _, key := range []string{
		"/other/blocks/v4/0", "/ipam/blocks/v4/012", "/ipam/blocks/0101", "/ipam/blocks/v4/" + strings.Repeat("1", 33),
	} {
		if _, err := ParseBlockKey("/ipam", key); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseBlockKey(%q) err = %v, want ErrInvalid", key, err)
		}
	}
}

func TestPool(t *testing.T) {
	public := Pool{
		Name:    "public",
		Ranges:  []Range{{netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("203.0.113.20")}},
		Exclude: pfx("203.0.113.15/32"),
	}
	if err := public.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := public.Capacity(); got != 10 {
		t.Errorf("capacity = %d, want 10", got)
	}
	if got, want := public.Available(), pfx("203.0.113.10/31", "203.0.113.12/31", "203.0.113.14/32", "203.0.113.16/30", "203.0.113.20/32"); !slices.Equal(got, want) {
		t.Errorf("available = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		name string
		pool Pool
		want string
	}{
		{"no name", Pool{CIDRs: pfx("10.0.0.0/8")}, "no name"},
		{"no space", Pool{Name: "p"}, "neither"},
		{"not masked", Pool{Name: "p", CIDRs: []netip.Prefix{netip.MustParsePrefix("10.0.0.1/8")}}, "did you mean 10.0.0.0/8"},
		{"ipv6", Pool{Name: "p", CIDRs: pfx("2001:db8::/32")}, "not IPv4"},
		{"backwards range", Pool{Name: "p", Ranges: []Range{{netip.MustParseAddr("10.0.0.9"), netip.MustParseAddr("10.0.0.1")}}}, "ends before"},
		{"bad exclude", Pool{Name: "p", CIDRs: pfx("10.0.0.0/8"), Exclude: []netip.Prefix{netip.MustParsePrefix("10.0.0.1/24")}}, "exclude"},
	} {
		err := tc.pool.Validate()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate() = %v, want ErrInvalid mentioning %q", tc.name, err, tc.want)
		}
	}
}

func prefixOf(addr uint32, bits uint8) netip.Prefix {
	return netip.PrefixFrom(addrOf(uint64(addr)), int(bits%33)).Masked()
}

func FuzzBlockKey(f *testing.F) {
	f.Add(uint32(0x0a2a0000), uint8(16), uint32(0x0a2a0300), uint8(24), "/ipam/blocks/v4/0101")
	f.Add(uint32(0), uint8(0), uint32(0xffffffff), uint8(32), "/ipam/blocks/v6/1")
	f.Fuzz(func(t *testing.T, a uint32, abits uint8, b uint32, bbits uint8, key string) {
		p, q := prefixOf(a, abits), prefixOf(b, bbits)
		kp, kq := BlockKey("/ipam", p), BlockKey("/ipam", q)
		if got, err := ParseBlockKey("/ipam", kp); err != nil || got != p {
			t.Fatalf("%s: key %q parses to %v, %v", p, kp, got, err)
		}
		// q's key extends p's exactly when p contains q, and the keys are
		// related one way or the other exactly when the blocks overlap.
		if got, want := strings.HasPrefix(kq, kp), Contains(p, q); got != want {
			t.Fatalf("key(%s) has prefix key(%s) = %v, contains = %v", q, p, got, want)
		}
		if got, want := strings.HasPrefix(kq, kp) || strings.HasPrefix(kp, kq), p.Overlaps(q); got != want {
			t.Fatalf("keys of %s and %s related = %v, overlap = %v", p, q, got, want)
		}
		isAnc := slices.Contains(Ancestors(q), p)
		if want := Contains(p, q) && p != q; isAnc != want {
			t.Fatalf("%s in Ancestors(%s) = %v, want %v", p, q, isAnc, want)
		}
		if got, err := ParseBlockKey("/ipam", key); err == nil && BlockKey("/ipam", got) != key {
			t.Fatalf("key %q parses to %v whose key is %q", key, got, BlockKey("/ipam", got))
		}
	})
}

func FuzzRangeToCIDRs(f *testing.F) {
	f.Add(uint32(0xcb00710a), uint32(0xcb007114))
	f.Add(uint32(0), uint32(0xffffffff))
	f.Add(uint32(1), uint32(0xfffffffe))
	f.Fuzz(func(t *testing.T, first, last uint32) {
		if last < first {
			first, last = last, first
		}
		cidrs, err := RangeToCIDRs(addrOf(uint64(first)), addrOf(uint64(last)))
		if err != nil {
			t.Fatal(err)
		}
		if len(cidrs) == 0 || len(cidrs) > 62 {
			t.Fatalf("%d blocks", len(cidrs))
		}
		// The blocks are aligned, tile [first, last] in order without gaps
		// or overlaps, and no two neighbours could merge into one block.
		next := uint64(first)
		for i, c := range cidrs {
			if c.Masked() != c {
				t.Fatalf("%s is not aligned", c)
			}
			s := spanOf(c)
			if s.lo != next {
				t.Fatalf("block %d (%s) starts at %d, want %d", i, c, s.lo, next)
			}
			next = s.end
			if i > 0 {
				if par, ok := Parent(c); ok && Contains(par, cidrs[i-1]) && cidrs[i-1].Bits() == c.Bits() {
					t.Fatalf("%s and %s make %s", cidrs[i-1], c, par)
				}
			}
		}
		if next != uint64(last)+1 {
			t.Fatalf("blocks end at %d, want %d", next, uint64(last)+1)
		}
		if Capacity(cidrs) != uint64(last)-uint64(first)+1 || !slices.Equal(Normalize(cidrs), cidrs) {
			t.Fatalf("blocks %v are not a normal cover", cidrs)
		}
	})
}
