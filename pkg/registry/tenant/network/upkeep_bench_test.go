package network_test

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/registry/rest"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/ipam/upkeep"
)

// upkeepNetworks is how many Networks BenchmarkUpkeepPass stores: at
// 10,000 tenants with five objects each the tenant keyspace holds about
// 60,000 allocations; this many shows the same costs per allocation.
const upkeepNetworks = 5000

// BenchmarkUpkeepPass measures one pass of IPAM's upkeep over the tenant
// keyspace, with the real recorders on real watch caches, when
// upkeepNetworks Networks each record a subnet, side by side: asking the
// object of each allocation (one read of the watch cache per allocation,
// and of etcd where that does not record it), and reading the objects
// once per pass (what the upkeep does).
func BenchmarkUpkeepPass(b *testing.B) {
	r, _ := setup(b)
	member := &user.DefaultInfo{Name: "mona", Groups: []string{"tenant.io:many"}}
	many := &tenant.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: "many"},
		Spec: tenant.TenantSpec{
			Members: tenant.TenantMembers{Users: []string{member.Name}},
			Network: tenant.TenantNetwork{CIDR: "10.128.0.0/12"},
			Quota:   tenant.TenantQuota{Namespaces: int32p(1), Networks: int32p(upkeepNetworks)},
		},
	}
	if _, err := r.Storage.Tenants.Main.Create(as(admin), many, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < upkeepNetworks; i += 8 {
				subnet := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 128 + byte(i>>12), byte(i >> 4), byte(i << 4)}), 28)
				if _, err := r.createNetwork(member, net(fmt.Sprintf("n-%d", i), subnet.String()), false); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	c := &upkeep.Controller{}
	for _, rec := range r.IPAM.Recorders {
		if rec.Space() == r.TenantSpace {
			c.Recorders = append(c.Recorders, rec)
		}
	}
	ctx := context.Background()
	held, err := ipam.HeldIn(ctx, r.TenantSpace)
	if err != nil || len(held) < upkeepNetworks {
		b.Fatalf("the tenant keyspace holds %d allocations (%v), want at least %d", len(held), err, upkeepNetworks)
	}
	b.Run("a-read-per-allocation", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if n, err := ipam.SweepUnused(ctx, r.TenantSpace, c.Keep(r.TenantSpace), ipam.MinAge(0)); err != nil || n != 0 {
				b.Fatalf("sweep released %d: %v", n, err)
			}
			if n, err := c.Reclaim(ctx); err != nil || n != 0 {
				b.Fatalf("reclaim claimed %d: %v", n, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(len(held)), "µs/allocation")
	})
	b.Run("one-read-per-pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if released, claimed, err := c.Pass(ctx); err != nil || released != 0 || claimed != 0 {
				b.Fatalf("pass released %d, claimed %d: %v", released, claimed, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(len(held)), "µs/allocation")
	})
}
