package ipam

import (
	"encoding/json"
	"net/netip"
	"testing"
	"time"
)

// BenchmarkDecodeAllocation measures the decoding of one stored value,
// which the periodic passes do for every allocation, side by side:
// encoding/json, which writes the values, and decodeAllocation.
func BenchmarkDecodeAllocation(b *testing.B) {
	value, err := json.Marshal(Allocation{
		Pool: "tenant-networks", Block: netip.MustParsePrefix("10.201.17.0/28"), Created: time.Now().UTC(), ClaimID: "5f0c9a6b2d4e8f13",
		Owner: Owner{Tenant: "apibench-01234", TenantUID: "2b1c4d7e-9f00-4a7b-8c11-3e5f6a7b8c9d", Purpose: "network/0d7e2c4a-51f3-4b8e-9a6d-7c1e3f5a2b90", Ref: "networks dev/net-1"},
	})
	if err != nil {
		b.Fatal(err)
	}
	kv := keyValue{value: value, modRev: 7}
	block := netip.MustParsePrefix("10.201.17.0/28")
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var alloc Allocation
			if err := json.Unmarshal(value, &alloc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decodeAllocation", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeAllocation(block, kv); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDecodeAllocation: decodeAllocation reads what encoding/json writes,
// every field, with the key's block and the revision winning.
func TestDecodeAllocation(t *testing.T) {
	want := Allocation{
		Pool: "p", Block: netip.MustParsePrefix("10.0.0.16/28"), Created: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), ClaimID: "c",
		Owner: Owner{Tenant: "t", TenantUID: "u", Purpose: "network/x", Ref: "networks ns/n"},
	}
	value, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeAllocation(netip.MustParsePrefix("10.0.0.32/28"), keyValue{value: value, modRev: 9})
	if err != nil {
		t.Fatal(err)
	}
	want.Block, want.Revision = netip.MustParsePrefix("10.0.0.32/28"), 9
	if got != want {
		t.Errorf("decoded %+v, want %+v", got, want)
	}
	if _, err := decodeAllocation(want.Block, keyValue{value: []byte(`{"pool":`)}); err == nil {
		t.Error("a truncated value decoded")
	}
}
