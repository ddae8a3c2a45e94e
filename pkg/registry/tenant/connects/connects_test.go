package connects_test

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/registry/registrytest"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/connects"
)

func int32p(i int32) *int32 { return &i }

// TestClaimsNeverShared has 12 tenants claim connect subnets at once for
// one provider network through two replicas, from a pool of 8 and a
// TenantNetworks pool beside it: 8 get one, all different and inside the
// ConnectSubnets pool, the others are refused; claiming again returns the
// same subnet; a subnet given back goes to the next tenant that claims.
func TestClaimsNeverShared(t *testing.T) {
	url := registrytest.StartEtcd(t)
	r1, r2 := registrytest.NewReplica(t, url, true), registrytest.NewReplica(t, url, true)
	pool := netip.MustParsePrefix("100.72.0.0/21")
	for _, p := range []*tenant.AddressPool{
		{ObjectMeta: metav1.ObjectMeta{Name: "tenant-networks"}, Spec: tenant.AddressPoolSpec{
			Purpose: tenant.AddressPoolPurposeTenantNetworks, CIDRs: []string{"100.80.0.0/13"}, DefaultPrefixLength: int32p(24)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "connects"}, Spec: tenant.AddressPoolSpec{
			Purpose: tenant.AddressPoolPurposeConnectSubnets, CIDRs: []string{pool.String()}, DefaultPrefixLength: int32p(24)}},
	} {
		if _, err := r1.Storage.AddressPools.Main.Create(registrytest.As(registrytest.Admin), p, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	replicas := []*connects.Connects{
		{Allocator: r1.IPAM.Allocator, Storages: r1.Storage},
		{Allocator: r2.IPAM.Allocator, Storages: r2.Storage},
	}
	ctx := context.Background()
	type got struct {
		tenant string
		block  netip.Prefix
		bits   int
		err    error
	}
	results := make(chan got, 12)
	var wg sync.WaitGroup
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("t%d", i)
			block, bits, err := replicas[i%2].Claim(ctx, name, "uid-"+name, "infra")
			results <- got{name, block, bits, err}
		}()
	}
	wg.Wait()
	close(results)
	held := map[netip.Prefix]string{}
	var refused []string
	whyRefused := map[string]string{}
	for g := range results {
		if g.err != nil {
			refused = append(refused, g.tenant)
			whyRefused[g.tenant] = g.err.Error()
			continue
		}
		if other, ok := held[g.block]; ok {
			t.Fatalf("%s and %s both hold %s", other, g.tenant, g.block)
		}
		if !pool.Contains(g.block.Addr()) || g.block.Bits() != 24 || g.bits != 28 {
			t.Fatalf("%s got %s (slices /%d), want a /24 of %s with /28 slices", g.tenant, g.block, g.bits, pool)
		}
		held[g.block] = g.tenant
	}
	if len(held) != 8 || len(refused) != 4 {
		t.Fatalf("%d claims held, %d refused (%v), want 8 and 4", len(held), len(refused), whyRefused)
	}
	// Claiming again is the same subnet, on either replica.
	for block, name := range held {
		again, _, err := replicas[1].Claim(ctx, name, "uid-"+name, "infra")
		if err != nil || again != block {
			t.Fatalf("%s claims again: %s (%v), want %s", name, again, err, block)
		}
		h, err := replicas[0].Held(ctx, "uid-"+name)
		if err != nil || h["infra"] != block || len(h) != 1 {
			t.Fatalf("%s holds %v (%v), want infra: %s", name, h, err, block)
		}
	}
	// One given back goes to a refused tenant.
	var freed netip.Prefix
	for block, name := range held {
		if err := replicas[0].Release(ctx, name, "uid-"+name, "infra", block); err != nil {
			t.Fatal(err)
		}
		freed = block
		break
	}
	block, _, err := replicas[1].Claim(ctx, refused[0], "uid-"+refused[0], "infra")
	if err != nil || block != freed {
		t.Fatalf("%s claims after a release: %s (%v), want %s", refused[0], block, err, freed)
	}
	// A tenant that does not exist holds nothing for the sweeper.
	rec := connects.Recorder{Connects: replicas[0]}
	allocs, err := r1.IPAM.Allocator.ListOwner(ctx, "uid-"+refused[0])
	if err != nil || len(allocs) != 1 || !rec.Names(allocs[0]) {
		t.Fatalf("allocations of %s: %+v (%v)", refused[0], allocs, err)
	}
	if kept, err := rec.Recorded(allocs[0]); err != nil || kept {
		t.Fatalf("the sweeper keeps the subnet of a tenant that does not exist: %v (%v)", kept, err)
	}
	if n, err := ipam.SweepUnused(ctx, r1.IPAM.Allocator, ipam.KeepRecorded([]ipam.Recorder{rec}), ipam.MinAge(0)); err != nil || n < 8 {
		t.Fatalf("swept %d (%v), want the 8 subnets of tenants that do not exist", n, err)
	}
}

// TestServiceNetworkSubnet has one tenant hold the subnets of a provider
// network's connection, of a provider network named "service-network",
// and of its own service network, from a pool of three: all different,
// the service network's never among the provider networks' (Held) nor
// theirs its own (HeldServiceNetwork); a fourth claim, another tenant's
// service network, is refused while the pool is full, and gets the
// subnet given back.
func TestServiceNetworkSubnet(t *testing.T) {
	url := registrytest.StartEtcd(t)
	r := registrytest.NewReplica(t, url, true)
	if _, err := r.Storage.AddressPools.Main.Create(registrytest.As(registrytest.Admin), &tenant.AddressPool{
		ObjectMeta: metav1.ObjectMeta{Name: "connects"}, Spec: tenant.AddressPoolSpec{
			Purpose: tenant.AddressPoolPurposeConnectSubnets, CIDRs: []string{"100.72.0.0/24"}, DefaultPrefixLength: int32p(26)}},
		rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := &connects.Connects{Allocator: r.IPAM.Allocator, Storages: r.Storage}
	ctx := context.Background()
	infra, _, err := c.Claim(ctx, "acme", "uid-acme", "infra")
	if err != nil {
		t.Fatal(err)
	}
	named, _, err := c.Claim(ctx, "acme", "uid-acme", "service-network")
	if err != nil {
		t.Fatal(err)
	}
	own, bits, err := c.ClaimServiceNetwork(ctx, "acme", "uid-acme")
	if err != nil {
		t.Fatal(err)
	}
	if own == infra || own == named || infra == named || own.Bits() != 26 || bits != 30 {
		t.Fatalf("subnets infra %s, provider network service-network %s, service network %s (/%d slices)", infra, named, own, bits)
	}
	if again, _, err := c.ClaimServiceNetwork(ctx, "acme", "uid-acme"); err != nil || again != own {
		t.Fatalf("claiming again: %s (%v), want %s", again, err, own)
	}
	held, err := c.Held(ctx, "uid-acme")
	if err != nil || len(held) != 2 || held["infra"] != infra || held["service-network"] != named {
		t.Fatalf("held for provider networks: %v (%v)", held, err)
	}
	if got, ok, err := c.HeldServiceNetwork(ctx, "uid-acme"); err != nil || !ok || got != own {
		t.Fatalf("held service network: %s %v (%v), want %s", got, ok, err, own)
	}
	// A pool of four /26s, three held: one left, for globex.
	other, _, err := c.ClaimServiceNetwork(ctx, "globex", "uid-globex")
	if err != nil || other == own {
		t.Fatalf("globex's service network: %s (%v)", other, err)
	}
	if _, _, err := c.ClaimServiceNetwork(ctx, "initech", "uid-initech"); err == nil {
		t.Fatal("a claim from a full pool was granted")
	}
	if err := c.ReleaseServiceNetwork(ctx, "acme", "uid-acme", own); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.HeldServiceNetwork(ctx, "uid-acme"); err != nil || ok {
		t.Fatalf("acme still holds its service network's subnet (%v)", err)
	}
	if held, err := c.Held(ctx, "uid-acme"); err != nil || len(held) != 2 {
		t.Fatalf("releasing the service network's subnet changed the provider networks': %v (%v)", held, err)
	}
	if got, _, err := c.ClaimServiceNetwork(ctx, "initech", "uid-initech"); err != nil || got != own {
		t.Fatalf("initech after the release: %s (%v), want %s", got, err, own)
	}
}
