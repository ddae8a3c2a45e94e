package server

import (
	"io"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
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

// TestDNSNameFlags: --public-dns-zone and --route-domain take a DNS name
// (any case, with or without its trailing dot) and refuse anything else at
// start-up, with the syncer on or off; a route domain leaves room for a
// tenant's name and a name of its own in front.
func TestDNSNameFlags(t *testing.T) {
	type flagCase struct {
		value string
		error string // part of the refusal; "" when accepted
	}
	cases := []flagCase{
		{value: ""},
		{value: "tenants.example.net"},
		{value: "Tenants.Example.NET."},
		{value: "example"},
		{value: ".", error: "must not be empty"},
		{value: "tenants..example.net", error: `label ""`},
		{value: "tenants_example.net", error: `label "tenants_example"`},
		{value: "-tenants.example.net", error: `label "-tenants"`},
		{value: strings.Repeat("a", 64) + ".net", error: "more than the 63 a DNS label may have"},
		{value: strings.Repeat("a.", 126) + "net", error: "more than the 253 a DNS name may have"},
		{value: "https://tenants.example.net", error: "is not a DNS name"},
	}
	routeCases := append(cases,
		flagCase{value: strings.Repeat("a.", 61) + "net"},
		flagCase{value: strings.Repeat("a.", 61) + "nets", error: "more than 125"},
	)
	for flag, cases := range map[string][]flagCase{"--public-dns-zone": cases, "--route-domain": routeCases} {
		for _, c := range cases {
			for _, syncer := range []bool{true, false} {
				o := NewOptions(io.Discard, io.Discard)
				fss := o.Flags()
				fs := fss.FlagSet("syncer")
				if err := fs.Parse([]string{flag + "=" + c.value, "--syncer=" + strconv.FormatBool(syncer)}); err != nil {
					t.Fatal(err)
				}
				var refusal error
				for _, err := range o.Syncer.Validate() {
					if strings.Contains(err.Error(), flag) {
						refusal = err
					}
				}
				switch {
				case c.error == "" && refusal != nil:
					t.Errorf("%s %q (syncer %v): refused: %v", flag, c.value, syncer, refusal)
				case c.error != "" && (refusal == nil || !strings.Contains(refusal.Error(), c.error)):
					t.Errorf("%s %q (syncer %v): refusal %v, want one saying %q", flag, c.value, syncer, refusal, c.error)
				}
			}
		}
	}
	// It reaches the syncer's configuration.
	o := NewOptions(io.Discard, io.Discard)
	fss := o.Flags()
	if err := fss.FlagSet("syncer").Parse([]string{"--public-dns-zone=tenants.example.net"}); err != nil {
		t.Fatal(err)
	}
	c, err := o.Syncer.ApplyTo(&rest.Config{Host: "https://host.example"})
	if err != nil || c.PublicDNSZone != "tenants.example.net" {
		t.Errorf("syncer configuration %+v, %v; want zone tenants.example.net", c, err)
	}
}
