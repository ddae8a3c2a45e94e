package framework

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	engine "tenant.io/tenant-apiserver/pkg/ipam"
)

// IPAMPrefix is where the stack's tenant-apiserver (--etcd-prefix=/tenant.io)
// keeps its address allocations.
const IPAMPrefix = "/tenant.io/ipam"

// IPAMReport is what IPAMProblems counted.
type IPAMReport struct {
	// Allocations and Tenants are how many allocations are in etcd and how
	// many Tenants exist.
	Allocations, Tenants int
	// Duplicates are overlapping allocations or addresses recorded by two
	// Tenants; Leaks are allocations no live Tenant records; Missing are
	// addresses a Tenant records that etcd does not allocate to it.
	Duplicates, Leaks, Missing int
}

// IPAMProblems checks the IPAM invariants over every allocation in the
// stack's etcd (read through client) and every Tenant in tenants: no two
// allocations overlap and no two Tenants record the same address (no
// duplicate); every allocation belongs to a Tenant that exists with the
// owner's UID and records it in its status (no leak); every Tenant's
// status.network and status.publicIPs are allocated to it; and the owner
// index matches the allocations one to one. It returns the problems found,
// none when all is well; err is a failure to read etcd.
func IPAMProblems(ctx context.Context, client *clientv3.Client, tenants []tenantv1alpha1.Tenant) (problems []string, rep IPAMReport, err error) {
	allocs, err := engine.New(client, IPAMPrefix).ListAll(ctx)
	if err != nil {
		return nil, rep, fmt.Errorf("reading the allocations from etcd: %w", err)
	}
	byName := map[string]*tenantv1alpha1.Tenant{}
	for i := range tenants {
		byName[tenants[i].Name] = &tenants[i]
	}
	rep = IPAMReport{Allocations: len(allocs), Tenants: len(tenants)}
	problem := func(counter *int, format string, args ...interface{}) {
		if counter != nil {
			*counter++
		}
		problems = append(problems, fmt.Sprintf(format, args...))
	}

	// No overlap: sorted by first address, a block overlaps an earlier one
	// exactly when it starts before the furthest end seen so far.
	sorted := slices.Clone(allocs)
	slices.SortFunc(sorted, func(x, y engine.Allocation) int {
		if c := x.Block.Addr().Compare(y.Block.Addr()); c != 0 {
			return c
		}
		return x.Block.Bits() - y.Block.Bits()
	})
	var reach engine.Allocation
	var reachEnd uint64
	for i, a := range sorted {
		start := addrValue(a.Block.Addr())
		if i > 0 && start <= reachEnd {
			problem(&rep.Duplicates, "overlapping allocations: %s (tenant %s %s) and %s (tenant %s %s)",
				reach.Block, reach.Owner.Tenant, reach.Owner.TenantUID, a.Block, a.Owner.Tenant, a.Owner.TenantUID)
		}
		if end := start + engine.Size(a.Block) - 1; i == 0 || end > reachEnd {
			reach, reachEnd = a, end
		}
	}

	// Every allocation is recorded by its live owner.
	byBlock := map[netip.Prefix]engine.Allocation{}
	for _, a := range allocs {
		byBlock[a.Block] = a
		tn := byName[a.Owner.Tenant]
		switch {
		case tn == nil:
			problem(&rep.Leaks, "leak: %s (%s) is allocated to tenant %s (uid %s), which does not exist", a.Block, a.Owner.Purpose, a.Owner.Tenant, a.Owner.TenantUID)
			continue
		case string(tn.UID) != a.Owner.TenantUID:
			problem(&rep.Leaks, "leak: %s (%s) is allocated to tenant %s uid %s, but tenant %s has uid %s", a.Block, a.Owner.Purpose, a.Owner.Tenant, a.Owner.TenantUID, tn.Name, tn.UID)
			continue
		}
		recorded := false
		switch a.Owner.Purpose {
		case engine.PurposeTenantNetwork:
			recorded = tn.Status.Network != nil && tn.Status.Network.CIDR == a.Block.String()
		case engine.PurposePublicIP:
			recorded = a.Block.Bits() == 32 && slices.Contains(tn.Status.PublicIPs, a.Block.Addr().String())
		}
		if !recorded {
			problem(&rep.Leaks, "leak: %s (%s) is allocated to tenant %s, whose status does not record it (network %+v, publicIPs %v)",
				a.Block, a.Owner.Purpose, tn.Name, tn.Status.Network, tn.Status.PublicIPs)
		}
	}

	// Every tenant's addresses are allocated to it.
	for _, tn := range byName {
		owns := func(block netip.Prefix, purpose string) {
			a, ok := byBlock[block]
			switch {
			case !ok:
				problem(&rep.Missing, "tenant %s: %s in its status is not allocated in etcd", tn.Name, block)
			case a.Owner.TenantUID != string(tn.UID) || a.Owner.Tenant != tn.Name || a.Owner.Purpose != purpose:
				problem(&rep.Duplicates, "tenant %s (uid %s): %s in its status is allocated to %+v", tn.Name, tn.UID, block, a.Owner)
			}
		}
		if tn.Status.Network == nil {
			problem(&rep.Missing, "tenant %s has no status.network", tn.Name)
		} else if b, err := netip.ParsePrefix(tn.Status.Network.CIDR); err != nil {
			problem(nil, "tenant %s: status.network.cidr %q: %v", tn.Name, tn.Status.Network.CIDR, err)
		} else {
			owns(b, engine.PurposeTenantNetwork)
		}
		seen := map[string]bool{}
		for _, ip := range tn.Status.PublicIPs {
			if seen[ip] {
				problem(&rep.Duplicates, "tenant %s: public IP %s twice in its status", tn.Name, ip)
			}
			seen[ip] = true
			addr, err := netip.ParseAddr(ip)
			if err != nil {
				problem(nil, "tenant %s: public IP %q: %v", tn.Name, ip, err)
				continue
			}
			owns(netip.PrefixFrom(addr, 32), engine.PurposePublicIP)
		}
		if len(tn.Status.PublicIPs) != int(tn.Spec.PublicIPs.Count) {
			problem(&rep.Missing, "tenant %s: %d public IPs in status, spec asks for %d", tn.Name, len(tn.Status.PublicIPs), tn.Spec.PublicIPs.Count)
		}
	}

	// No two tenants record the same address (whatever etcd says).
	holder := map[string]string{}
	var blocks []netip.Prefix
	blockOf := map[netip.Prefix]string{}
	for _, tn := range byName {
		for _, ip := range tn.Status.PublicIPs {
			if h, dup := holder[ip]; dup && h != tn.Name {
				problem(&rep.Duplicates, "duplicate: public IP %s is in the status of tenants %s and %s", ip, h, tn.Name)
			}
			holder[ip] = tn.Name
		}
		if tn.Status.Network != nil {
			if b, err := netip.ParsePrefix(tn.Status.Network.CIDR); err == nil {
				for _, o := range blocks {
					if o.Overlaps(b) {
						problem(&rep.Duplicates, "duplicate: the blocks of tenants %s (%s) and %s (%s) overlap", blockOf[o], o, tn.Name, b)
					}
				}
				blocks = append(blocks, b)
				blockOf[b] = tn.Name
			}
		}
	}

	// The owner index has one key per allocation, no more, no fewer.
	want := map[string]bool{}
	for _, a := range allocs {
		suffix := strings.TrimPrefix(engine.BlockKey(IPAMPrefix, a.Block), IPAMPrefix+"/blocks/")
		want[IPAMPrefix+"/owners/"+a.Owner.TenantUID+"/"+suffix] = true
	}
	resp, err := client.Get(ctx, IPAMPrefix+"/owners/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, rep, fmt.Errorf("reading the owner index: %w", err)
	}
	for _, kv := range resp.Kvs {
		if !want[string(kv.Key)] {
			problem(&rep.Leaks, "owner index key %s has no allocation", kv.Key)
		}
		delete(want, string(kv.Key))
	}
	for k := range want {
		problem(&rep.Missing, "allocation without owner index key %s", k)
	}
	slices.Sort(problems)
	return problems, rep, nil
}

func addrValue(a netip.Addr) uint64 {
	b := a.As4()
	return uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
}
