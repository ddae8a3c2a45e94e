package hostbinding_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"tenant.io/tenant-apiserver/pkg/hostbinding"
)

func TestBind(t *testing.T) {
	url := startEtcd(t)
	prefix := freshPrefix()
	clock := clocktesting.NewFakePassiveClock(time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC))
	l := newLedger(t, url, prefix, hostbinding.WithClock(clock))
	ctx := context.Background()
	c := claim(1, "a")

	b, err := l.Bind(ctx, c, host(0))
	if err != nil {
		t.Fatal(err)
	}
	want := hostbinding.Binding{Host: host(0), Claim: c, Since: clock.Now()}
	if b != want {
		t.Fatalf("Bind = %+v, want %+v", b, want)
	}
	for name, get := range map[string]func() (hostbinding.Binding, bool, error){
		"ByClaim": func() (hostbinding.Binding, bool, error) { return l.ByClaim(ctx, c.UID) },
		"ByHost":  func() (hostbinding.Binding, bool, error) { return l.ByHost(ctx, host(0)) },
	} {
		if got, ok, err := get(); err != nil || !ok || got != want {
			t.Errorf("%s = %+v, %v, %v; want %+v", name, got, ok, err, want)
		}
	}
	if _, ok, err := l.ByHost(ctx, host(1)); err != nil || ok {
		t.Errorf("ByHost of a free host = %v, %v", ok, err)
	}
	if _, ok, err := l.ByClaim(ctx, "no-such-claim"); err != nil || ok {
		t.Errorf("ByClaim of an unbound claim = %v, %v", ok, err)
	}

	// Idempotent: the same claim binding again, to the same host or any
	// other, gets its binding back, from any replica.
	other := newLedger(t, url, prefix, hostbinding.WithClock(clocktesting.NewFakePassiveClock(clock.Now().Add(time.Hour))))
	for _, h := range []hostbinding.Host{host(0), host(1)} {
		if got, err := other.Bind(ctx, c, h); err != nil || got != want {
			t.Errorf("binding again to %s = %+v, %v; want %+v", h, got, err, want)
		}
	}
	if _, ok, _ := l.ByHost(ctx, host(1)); ok {
		t.Errorf("a claim that holds a host bound a second one")
	}

	// The host is taken: the loser learns nothing about the winner.
	rival := claim(2, "b")
	_, err = other.Bind(ctx, rival, host(0))
	if !errors.Is(err, hostbinding.ErrHostTaken) {
		t.Fatalf("binding a taken host: %v, want ErrHostTaken", err)
	}
	for _, secret := range []string{string(c.UID), c.Name, c.Tenant, string(c.TenantUID)} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error %q names %q of the winning claim", err, secret)
		}
	}

	// Someone else's claim UID does not reveal its binding.
	impostor := c
	impostor.TenantUID, impostor.Tenant = "tenant-uid-2", "tenant-2"
	if _, err := other.Bind(ctx, impostor, host(5)); !errors.Is(err, hostbinding.ErrInvalid) {
		t.Errorf("binding with another tenant's claim UID: %v, want ErrInvalid", err)
	}

	if _, err := l.Bind(ctx, rival, host(1)); err != nil {
		t.Fatal(err)
	}
	all, err := l.List(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("List = %v, %v; want 2 bindings", all, err)
	}
	for tenant, want := range map[types.UID]int{"tenant-uid-1": 1, "tenant-uid-2": 1, "tenant-uid-3": 0} {
		if got, err := l.ListTenant(ctx, tenant); err != nil || len(got) != want || (want == 1 && got[0].Claim.TenantUID != tenant) {
			t.Errorf("ListTenant(%s) = %v, %v; want %d of its bindings", tenant, got, err, want)
		}
	}
	checkStore(t, newClient(t, url), prefix)
}

func TestInvalid(t *testing.T) {
	l := hostbinding.New(nil, "/nowhere") // never reaches etcd
	ctx := context.Background()
	good := claim(1, "a")
	for name, mutate := range map[string]func(*hostbinding.Claim){
		"tenant UID": func(c *hostbinding.Claim) { c.TenantUID = "" },
		"tenant":     func(c *hostbinding.Claim) { c.Tenant = "" },
		"namespace":  func(c *hostbinding.Claim) { c.Namespace = "" },
		"name":       func(c *hostbinding.Claim) { c.Name = "" },
		"UID":        func(c *hostbinding.Claim) { c.UID = "" },
	} {
		c := good
		mutate(&c)
		if _, err := l.Bind(ctx, c, host(0)); !errors.Is(err, hostbinding.ErrInvalid) {
			t.Errorf("claim without %s: %v, want ErrInvalid", name, err)
		}
		if _, err := l.BindFirstFree(ctx, c, hosts(2)); !errors.Is(err, hostbinding.ErrInvalid) {
			t.Errorf("BindFirstFree, claim without %s: %v, want ErrInvalid", name, err)
		}
		if err := l.Release(ctx, hostbinding.Binding{Host: host(0), Claim: c}); !errors.Is(err, hostbinding.ErrInvalid) {
			t.Errorf("Release, claim without %s: %v, want ErrInvalid", name, err)
		}
	}
	for _, h := range []hostbinding.Host{{Name: "server"}, {Namespace: "provider"}, {}} {
		if _, err := l.Bind(ctx, good, h); !errors.Is(err, hostbinding.ErrInvalid) {
			t.Errorf("host %+v: %v, want ErrInvalid", h, err)
		}
		if _, _, err := l.ByHost(ctx, h); !errors.Is(err, hostbinding.ErrInvalid) {
			t.Errorf("ByHost(%+v): %v, want ErrInvalid", h, err)
		}
		if _, err := l.BindFirstFree(ctx, good, []hostbinding.Host{host(0), h}); !errors.Is(err, hostbinding.ErrInvalid) {
			t.Errorf("BindFirstFree with candidate %+v: %v, want ErrInvalid", h, err)
		}
	}
	if _, _, err := l.ByClaim(ctx, ""); !errors.Is(err, hostbinding.ErrInvalid) {
		t.Errorf("ByClaim(\"\"): %v, want ErrInvalid", err)
	}
	if _, err := l.ListTenant(ctx, ""); !errors.Is(err, hostbinding.ErrInvalid) {
		t.Errorf("ListTenant(\"\"): %v, want ErrInvalid", err)
	}
	if _, err := l.Orphans(ctx, nil); !errors.Is(err, hostbinding.ErrInvalid) {
		t.Errorf("Orphans(nil): %v, want ErrInvalid", err)
	}
}

// TestNamesAreEscaped binds hosts whose names would share a key if '/' were
// written as is.
func TestNamesAreEscaped(t *testing.T) {
	url := startEtcd(t)
	prefix := freshPrefix()
	l := newLedger(t, url, prefix)
	ctx := context.Background()
	if _, err := l.Bind(ctx, claim(1, "a"), hostbinding.Host{Namespace: "a/b", Name: "c"}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Bind(ctx, claim(1, "b"), hostbinding.Host{Namespace: "a", Name: "b/c"}); err != nil {
		t.Fatal(err)
	}
	if got := checkStore(t, newClient(t, url), prefix); len(got) != 2 {
		t.Errorf("etcd holds %d bindings, want 2", len(got))
	}
}

func TestRelease(t *testing.T) {
	url := startEtcd(t)
	prefix := freshPrefix()
	clock := clocktesting.NewFakePassiveClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	l := newLedger(t, url, prefix, hostbinding.WithClock(clock))
	client := newClient(t, url)
	ctx := context.Background()
	c, rival := claim(1, "a"), claim(2, "b")

	b1, err := l.Bind(ctx, c, host(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, b1); err != nil {
		t.Fatal(err)
	}
	if got := checkStore(t, client, prefix); len(got) != 0 {
		t.Fatalf("etcd holds %v after the release", got)
	}
	if err := l.Release(ctx, b1); err != nil {
		t.Errorf("releasing a released binding: %v", err)
	}

	// The same claim binds the same host again: a new binding, which the
	// old one's release must leave alone.
	clock.SetTime(clock.Now().Add(time.Second))
	b2, err := l.Bind(ctx, c, host(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, b1); err != nil {
		t.Errorf("releasing a replaced binding: %v", err)
	}
	if got, ok, err := l.ByClaim(ctx, c.UID); err != nil || !ok || got != b2 {
		t.Fatalf("after releasing the replaced binding the claim holds %+v, %v, %v; want %+v", got, ok, err, b2)
	}

	// The host goes to another claim, the claim to another host: releasing
	// b2 must not touch either.
	if err := l.Release(ctx, b2); err != nil {
		t.Fatal(err)
	}
	b3, err := l.Bind(ctx, rival, host(0))
	if err != nil {
		t.Fatal(err)
	}
	b4, err := l.Bind(ctx, c, host(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, stale := range []hostbinding.Binding{b1, b2} {
		if err := l.Release(ctx, stale); err != nil {
			t.Errorf("releasing a replaced binding: %v", err)
		}
	}
	sameBindings(t, "after stale releases", checkStore(t, client, prefix), map[types.UID]hostbinding.Binding{rival.UID: b3, c.UID: b4})

	// A binding read back (its time in another location) is still the same
	// binding.
	read, _, err := l.ByHost(ctx, host(1))
	if err != nil {
		t.Fatal(err)
	}
	read.Since = read.Since.In(time.FixedZone("elsewhere", 3600))
	if err := l.Release(ctx, read); err != nil {
		t.Fatal(err)
	}
	sameBindings(t, "after releasing one", checkStore(t, client, prefix), map[types.UID]hostbinding.Binding{rival.UID: b3})

	// Half a binding is never written by the ledger; it is reported, not
	// deleted.
	if _, err := client.Delete(ctx, prefix+"/claims/"+string(rival.UID)); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, b3); !errors.Is(err, hostbinding.ErrInconsistent) {
		t.Errorf("releasing half a binding: %v, want ErrInconsistent", err)
	}
}

func TestOrphans(t *testing.T) {
	url := startEtcd(t)
	prefix := freshPrefix()
	l := newLedger(t, url, prefix)
	ctx := context.Background()
	live := map[types.UID]bool{}
	var want []hostbinding.Binding
	for i := range 10 {
		c := claim(i%3, string(rune('a'+i)))
		b, err := l.Bind(ctx, c, host(i))
		if err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 {
			want = append(want, b)
		} else {
			live[c.UID] = true
		}
	}
	orphans, err := l.Orphans(ctx, func(uid types.UID) bool { return live[uid] })
	if err != nil {
		t.Fatal(err)
	}
	sameBindings(t, "Orphans", byClaim(t, orphans), byClaim(t, want))
	for _, o := range orphans {
		if err := l.Release(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if orphans, err := l.Orphans(ctx, func(uid types.UID) bool { return live[uid] }); err != nil || len(orphans) != 0 {
		t.Errorf("Orphans after releasing them = %v, %v", orphans, err)
	}
	if got := checkStore(t, newClient(t, url), prefix); len(got) != len(live) {
		t.Errorf("etcd holds %d bindings, want the %d live ones", len(got), len(live))
	}
}

func TestListPages(t *testing.T) {
	url := startEtcd(t)
	prefix := freshPrefix()
	l := newLedger(t, url, prefix)
	hostbinding.SetPageSize(l, 3)
	ctx := context.Background()
	// 150 claims of one tenant: more than one transaction's worth of reads
	// for ListTenant.
	for i := range 150 {
		if _, err := l.Bind(ctx, claim(7, string(rune('A'+i/26))+string(rune('a'+i%26))), host(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Bind(ctx, claim(8, "other"), host(150)); err != nil {
		t.Fatal(err)
	}
	stored := checkStore(t, newClient(t, url), prefix)
	all, err := l.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameBindings(t, "List", byClaim(t, all), stored)
	mine, err := l.ListTenant(ctx, "tenant-uid-7")
	if err != nil {
		t.Fatal(err)
	}
	if len(mine) != 150 {
		t.Errorf("ListTenant returned %d bindings, want 150", len(mine))
	}
	for uid, b := range byClaim(t, mine) {
		if stored[uid] != b || b.Claim.TenantUID != "tenant-uid-7" {
			t.Errorf("ListTenant returned %+v", b)
		}
	}
}

func TestBindFirstFree(t *testing.T) {
	url := startEtcd(t)
	prefix := freshPrefix()
	l := newLedger(t, url, prefix)
	ctx := context.Background()
	candidates := hosts(3)

	// Without races, the first free candidate, in the caller's order.
	if _, err := l.Bind(ctx, claim(1, "x"), candidates[0]); err != nil {
		t.Fatal(err)
	}
	b, err := l.BindFirstFree(ctx, claim(1, "a"), candidates)
	if err != nil || b.Host != candidates[1] {
		t.Fatalf("BindFirstFree = %+v, %v; want %s", b, err, candidates[1])
	}
	// A claim that holds a host gets it back, even if it is no candidate.
	if got, err := l.BindFirstFree(ctx, claim(1, "a"), candidates[2:]); err != nil || got != b {
		t.Errorf("BindFirstFree of a bound claim = %+v, %v; want %+v", got, err, b)
	}
	if got, err := l.BindFirstFree(ctx, claim(1, "a"), nil); err != nil || got != b {
		t.Errorf("BindFirstFree of a bound claim without candidates = %+v, %v; want %+v", got, err, b)
	}
	if _, err := l.BindFirstFree(ctx, claim(2, "b"), candidates); err != nil {
		t.Fatal(err)
	}
	_, err = l.BindFirstFree(ctx, claim(3, "c"), candidates)
	if !errors.Is(err, hostbinding.ErrNoHost) {
		t.Fatalf("BindFirstFree with every candidate bound: %v, want ErrNoHost", err)
	}
	if strings.Contains(err.Error(), "claim-uid-") {
		t.Errorf("the error %q names another claim", err)
	}
	if _, err := l.BindFirstFree(ctx, claim(3, "c"), nil); !errors.Is(err, hostbinding.ErrNoHost) {
		t.Errorf("BindFirstFree without candidates: %v, want ErrNoHost", err)
	}
	// More candidates than one transaction reads.
	many := hosts(300)
	for i := range 299 {
		if _, err := l.Bind(ctx, claim(4, "many-"+many[i].Name), many[i]); err != nil && !errors.Is(err, hostbinding.ErrHostTaken) {
			t.Fatal(err)
		}
	}
	if b, err := l.BindFirstFree(ctx, claim(3, "c"), many); err != nil || b.Host != many[299] {
		t.Errorf("BindFirstFree among 300 with one free = %+v, %v; want %s", b, err, many[299])
	}
	checkStore(t, newClient(t, url), prefix)
}
