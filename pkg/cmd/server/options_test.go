package server

import (
	"io"
	"strings"
	"testing"
)

// TestStorageMediaType: tenant.io objects are stored as JSON, and a flag
// asking for another encoding is refused instead of ignored.
func TestStorageMediaType(t *testing.T) {
	for _, c := range []struct {
		mediaType string
		refused   bool
	}{
		{"application/json", false},
		{"application/yaml", true},
		{"application/vnd.kubernetes.protobuf", true},
		{"application/cbor", true},
	} {
		o := NewOptions(io.Discard, io.Discard)
		o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList = []string{"http://127.0.0.1:2379"}
		o.RecommendedOptions.Etcd.DefaultStorageMediaType = c.mediaType
		err := o.Validate(nil)
		refused := err != nil && strings.Contains(err.Error(), "--storage-media-type")
		if refused != c.refused {
			t.Errorf("--storage-media-type=%s: refused %v, want %v (%v)", c.mediaType, refused, c.refused, err)
		}
	}
}

// TestDefaultObjectQuotaFlag: --default-object-quota takes what
// spec.quota.objects takes (the shipped Deployment's value among them),
// and refuses the rest at start-up, naming the key.
func TestDefaultObjectQuotaFlag(t *testing.T) {
	for _, c := range []struct {
		value string
		want  int    // keys parsed
		error string // part of the refusal
	}{
		{value: "", want: 0},
		{value: "services=100,secrets=500,configmaps=500,persistentvolumeclaims=100", want: 4},
		{value: "count/deployments.apps=20", want: 1},
		{value: "pods=10", error: "pods"},
		{value: "services=-1", error: "must not be negative"},
		{value: "secrets=lots", error: "secrets=lots"},
	} {
		o := NewOptions(io.Discard, io.Discard)
		fss := o.Flags()
		fs := fss.FlagSet("tenancy")
		var args []string
		if c.value != "" {
			args = []string{"--default-object-quota=" + c.value}
		}
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		got, err := o.defaultObjectQuota()
		switch {
		case c.error == "" && err != nil:
			t.Errorf("%q: refused: %v", c.value, err)
		case c.error != "" && (err == nil || !strings.Contains(err.Error(), c.error)):
			t.Errorf("%q: refusal %v, want one saying %q", c.value, err, c.error)
		case c.error == "" && len(got) != c.want:
			t.Errorf("%q: %d keys, want %d: %v", c.value, len(got), c.want, got)
		}
	}
}

// TestTenantDNSAddressFlag: --tenant-dns-address is one IPv4 address a pod
// can query, or nothing; it reaches the registry whether the syncer runs
// or not.
func TestTenantDNSAddressFlag(t *testing.T) {
	for _, c := range []struct {
		args    []string
		refused bool
	}{
		{args: nil},
		{args: []string{"--tenant-dns-address=172.30.0.53"}},
		{args: []string{"--tenant-dns-address=172.30.0.53", "--syncer=false"}},
		{args: []string{"--tenant-dns-address=169.254.20.10"}},
		{args: []string{"--tenant-dns-address=fd00::53"}, refused: true},
		{args: []string{"--tenant-dns-address=::ffff:172.30.0.53"}, refused: true},
		{args: []string{"--tenant-dns-address=dns.example.org"}, refused: true},
		{args: []string{"--tenant-dns-address=172.30.0.0/16"}, refused: true},
		{args: []string{"--tenant-dns-address=0.0.0.0"}, refused: true},
		{args: []string{"--tenant-dns-address=127.0.0.53", "--syncer=false"}, refused: true},
	} {
		o := NewOptions(io.Discard, io.Discard)
		o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList = []string{"http://127.0.0.1:2379"}
		fss := o.Flags()
		if err := fss.FlagSet("syncer").Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := o.Validate(nil)
		refused := err != nil && strings.Contains(err.Error(), "--tenant-dns-address")
		if refused != c.refused {
			t.Errorf("%v: refused %v, want %v (%v)", c.args, refused, c.refused, err)
		}
	}
}
