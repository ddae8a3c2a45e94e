package hostbinding_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/types"

	"tenant.io/tenant-apiserver/pkg/hostbinding"
	"tenant.io/tenant-apiserver/pkg/registry/registrytest"
)

// The tests live outside package hostbinding so that they may use
// registrytest even once the API server (which registrytest imports) uses
// the ledger.

func startEtcd(t testing.TB) string { return registrytest.StartEtcd(t) }

func newClient(t testing.TB, url string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

var prefixes atomic.Int64

func freshPrefix() string { return fmt.Sprintf("/hostbinding-%d", prefixes.Add(1)) }

// newLedger returns a ledger with its own etcd client, as a separate
// replica of the server would have.
func newLedger(t testing.TB, url, prefix string, opts ...hostbinding.Option) *hostbinding.Ledger {
	t.Helper()
	return hostbinding.New(newClient(t, url), prefix, opts...)
}

func host(i int) hostbinding.Host {
	return hostbinding.Host{Namespace: fmt.Sprintf("provider-%d", i%4), Name: fmt.Sprintf("server-%03d", i)}
}

func hosts(n int) []hostbinding.Host {
	hs := make([]hostbinding.Host, n)
	for i := range hs {
		hs[i] = host(i)
	}
	return hs
}

// claim returns claim number i of tenant number tenant.
func claim(tenant int, id string) hostbinding.Claim {
	return hostbinding.Claim{
		TenantUID: types.UID(fmt.Sprintf("tenant-uid-%d", tenant)),
		Tenant:    fmt.Sprintf("tenant-%d", tenant),
		Namespace: fmt.Sprintf("tenant-%d", tenant),
		Name:      "claim-" + id,
		UID:       types.UID("claim-uid-" + id),
		Class:     "large",
	}
}

// checkStore reads every key under prefix straight from etcd and fails the
// test unless it holds only whole bindings: each host key with the claim
// key of the same binding and its owner index key, each claim key with its
// host key, no index key without its claim, no host held by two claims. It
// returns the bindings, by claim UID.
func checkStore(t testing.TB, client *clientv3.Client, prefix string) map[types.UID]hostbinding.Binding {
	t.Helper()
	resp, err := client.Get(context.Background(), prefix+"/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	values := map[string][]byte{}
	var hostKeys, claimKeys, indexKeys []string
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		values[key] = kv.Value
		switch rest := strings.TrimPrefix(key, prefix+"/"); {
		case strings.HasPrefix(rest, "hosts/"):
			hostKeys = append(hostKeys, key)
		case strings.HasPrefix(rest, "claims/"):
			claimKeys = append(claimKeys, key)
		case strings.HasPrefix(rest, "tenants/"):
			indexKeys = append(indexKeys, key)
		default:
			t.Errorf("unexpected key %s", key)
		}
	}
	decode := func(key string) hostbinding.Binding {
		var b hostbinding.Binding
		if err := json.Unmarshal(values[key], &b); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		return b
	}
	hostKey := func(h hostbinding.Host) string {
		return prefix + "/hosts/" + url.PathEscape(h.Namespace) + "/" + url.PathEscape(h.Name)
	}
	claimKey := func(uid types.UID) string { return prefix + "/claims/" + url.PathEscape(string(uid)) }
	indexKey := func(c hostbinding.Claim) string {
		return prefix + "/tenants/" + url.PathEscape(string(c.TenantUID)) + "/" + url.PathEscape(string(c.UID))
	}

	for _, key := range hostKeys {
		b := decode(key)
		if key != hostKey(b.Host) {
			t.Errorf("%s holds the binding of host %s", key, b.Host)
		}
		if v, ok := values[claimKey(b.Claim.UID)]; !ok || !bytes.Equal(v, values[key]) {
			t.Errorf("half a binding: host %s is bound to claim %s, whose key holds %q", b.Host, b.Claim.UID, v)
		}
	}
	bindings := map[types.UID]hostbinding.Binding{}
	byHost := map[hostbinding.Host]types.UID{}
	for _, key := range claimKeys {
		b := decode(key)
		if key != claimKey(b.Claim.UID) {
			t.Errorf("%s holds the binding of claim %s", key, b.Claim.UID)
		}
		if v, ok := values[hostKey(b.Host)]; !ok || !bytes.Equal(v, values[key]) {
			t.Errorf("half a binding: claim %s holds host %s, whose key holds %q", b.Claim.UID, b.Host, v)
		}
		if other, dup := byHost[b.Host]; dup {
			t.Errorf("host %s bound to both %s and %s", b.Host, other, b.Claim.UID)
		}
		byHost[b.Host] = b.Claim.UID
		if _, ok := values[indexKey(b.Claim)]; !ok {
			t.Errorf("claim %s of tenant %s is missing from the owner index", b.Claim.UID, b.Claim.TenantUID)
		}
		bindings[b.Claim.UID] = b
	}
	for _, key := range indexKeys {
		uid := types.UID(key[strings.LastIndex(key, "/")+1:])
		if b, ok := bindings[uid]; !ok || key != indexKey(b.Claim) {
			t.Errorf("owner index key %s names no binding of its tenant", key)
		}
	}
	if len(indexKeys) != len(claimKeys) || len(hostKeys) != len(claimKeys) {
		t.Errorf("%d host keys, %d claim keys, %d owner index keys", len(hostKeys), len(claimKeys), len(indexKeys))
	}
	return bindings
}

// sameBindings fails the test unless got and want hold the same bindings.
func sameBindings(t testing.TB, what string, got, want map[types.UID]hostbinding.Binding) {
	t.Helper()
	for uid, w := range want {
		if g, ok := got[uid]; !ok || g.Host != w.Host || g.Claim != w.Claim || !g.Since.Equal(w.Since) {
			t.Errorf("%s: claim %s holds %+v, want %+v", what, uid, g, w)
		}
	}
	for uid, g := range got {
		if _, ok := want[uid]; !ok {
			t.Errorf("%s: claim %s holds %s, want nothing", what, uid, g.Host)
		}
	}
}

// byClaim indexes bs by claim UID, failing on a claim listed twice.
func byClaim(t testing.TB, bs []hostbinding.Binding) map[types.UID]hostbinding.Binding {
	t.Helper()
	m := make(map[types.UID]hostbinding.Binding, len(bs))
	for _, b := range bs {
		if _, dup := m[b.Claim.UID]; dup {
			t.Errorf("claim %s listed twice", b.Claim.UID)
		}
		m[b.Claim.UID] = b
	}
	if !slices.IsSortedFunc(bs, func(x, y hostbinding.Binding) int { return strings.Compare(string(x.Claim.UID), string(y.Claim.UID)) }) {
		t.Errorf("bindings not ordered by claim UID")
	}
	return m
}
