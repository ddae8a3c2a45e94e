package publicdns

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

const zone = "tenants.example.net"

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func objectMeta(name string, uid types.UID, created time.Time) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "dev", UID: uid, CreationTimestamp: metav1.NewTime(created),
		Labels: map[string]string{hostnames.TenantLabel: "acme"}}
}

func fip(name string, created time.Time) *tenant.FloatingIP {
	return &tenant.FloatingIP{ObjectMeta: objectMeta(name, types.UID("fip-"+name), created)}
}

func lb(name string, created time.Time) *tenant.LoadBalancer {
	return &tenant.LoadBalancer{ObjectMeta: objectMeta(name, types.UID("lb-"+name), created)}
}

// TestOf: an address is named in the zone; nothing without a zone or an
// address; no name that would not be a DNS name; and of a FloatingIP and a
// LoadBalancer of one name, the older holds it, the LoadBalancer when
// they are as old.
func TestOf(t *testing.T) {
	src, _ := controllertest.NewSources(t)
	names := New(src, zone)
	web := queue.Key{Tenant: "acme", Namespace: "dev", Name: "web"}

	if got := names.Of(FloatingIP, web, fip("web", t0), "203.0.113.9"); got.Name != "web.dev.acme.tenants.example.net" || got.Reason != ReasonNamed ||
		!strings.Contains(got.Message, "203.0.113.9") {
		t.Errorf("a held address: %+v", got)
	}
	if got := names.Of(FloatingIP, web, fip("web", t0), ""); got != (Name{}) {
		t.Errorf("no address: %+v, want no name and no condition", got)
	}
	if got := New(src, "").Of(LoadBalancer, web, lb("web", t0), "203.0.113.9"); got != (Name{}) {
		t.Errorf("no zone: %+v, want no name and no condition", got)
	}
	long := New(src, strings.Repeat("z", 60)+"."+strings.Repeat("y", 60))
	longKey := queue.Key{Tenant: strings.Repeat("t", 30), Namespace: strings.Repeat("n", 63), Name: strings.Repeat("w", 63)}
	if got := long.Of(LoadBalancer, longKey, lb(longKey.Name, t0), "203.0.113.9"); got.Name != "" || got.Reason != ReasonNameTooLong ||
		!strings.Contains(got.Message, "more than the 253 a DNS name may have") {
		t.Errorf("a name of 280 characters: %+v", got)
	}

	for _, c := range []struct {
		what              string
		fipAge, lbAge     time.Time
		fipNamed, lbNamed bool
	}{
		{"the FloatingIP is older", t0, t0.Add(time.Second), true, false},
		{"the LoadBalancer is older", t0.Add(time.Second), t0, false, true},
		{"as old", t0, t0, false, true},
	} {
		f, l := fip("web", c.fipAge), lb("web", c.lbAge)
		controllertest.Cache(t, src.FloatingIPs, "acme", "dev", f)
		controllertest.Cache(t, src.LoadBalancers, "acme", "dev", l)
		gotF := names.Of(FloatingIP, web, f, "203.0.113.9")
		gotL := names.Of(LoadBalancer, web, l, "203.0.113.10")
		if (gotF.Name != "") != c.fipNamed || (gotL.Name != "") != c.lbNamed {
			t.Errorf("%s: the FloatingIP's %+v, the LoadBalancer's %+v", c.what, gotF, gotL)
		}
		for _, got := range []Name{gotF, gotL} {
			if got.Name == "" && (got.Reason != ReasonNameTaken || !strings.Contains(got.Message, "web.dev.acme.tenants.example.net is the name of the older")) {
				t.Errorf("%s: the one without the name says %+v", c.what, got)
			}
		}
		controllertest.Uncache(t, src.FloatingIPs, "acme", "dev", "web")
		controllertest.Uncache(t, src.LoadBalancers, "acme", "dev", "web")
	}
	// Other names, other namespaces and other tenants take nothing.
	controllertest.Cache(t, src.LoadBalancers, "acme", "prod", lb("web", t0))
	controllertest.Cache(t, src.LoadBalancers, "globex", "dev", lb("web", t0))
	controllertest.Cache(t, src.LoadBalancers, "acme", "dev", lb("api", t0))
	if got := names.Of(FloatingIP, web, fip("web", t0.Add(time.Hour)), "203.0.113.9"); got.Name == "" {
		t.Errorf("a FloatingIP with no LoadBalancer of its name: %+v", got)
	}
}

// TestSet: the name goes into the status with DNSNamed, and both go when
// there is nothing to name (the address released, the zone removed).
func TestSet(t *testing.T) {
	var s tenant.LoadBalancerStatus
	named := Name{Name: "web.dev.acme.tenants.example.net", Reason: ReasonNamed, Message: "m"}
	if !Set(&s.DNSName, &s.Conditions, 2, named) || s.DNSName != named.Name {
		t.Fatalf("named: %+v", s)
	}
	if c := meta.FindStatusCondition(s.Conditions, tenant.ConditionDNSNamed); c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonNamed || c.ObservedGeneration != 2 {
		t.Errorf("DNSNamed %+v, want True, Named, generation 2", c)
	}
	if Set(&s.DNSName, &s.Conditions, 2, named) {
		t.Error("the same name again reported a change")
	}
	taken := Name{Reason: ReasonNameTaken, Message: "m"}
	if !Set(&s.DNSName, &s.Conditions, 2, taken) || s.DNSName != "" {
		t.Fatalf("taken: %+v", s)
	}
	if c := meta.FindStatusCondition(s.Conditions, tenant.ConditionDNSNamed); c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonNameTaken {
		t.Errorf("DNSNamed %+v, want False, NameTaken", c)
	}
	Set(&s.DNSName, &s.Conditions, 2, named)
	if !Set(&s.DNSName, &s.Conditions, 3, Name{}) || s.DNSName != "" || meta.FindStatusCondition(s.Conditions, tenant.ConditionDNSNamed) != nil {
		t.Errorf("nothing to name: %+v, want no name and no DNSNamed", s)
	}
}

// TestWatch: an object of the other kind appearing or going queues the
// object of its key, if there is one.
func TestWatch(t *testing.T) {
	src, _ := controllertest.NewSources(t)
	w := controller.NewWorker("test", nil)
	w.Queue.Release() // as the workers' start does
	h := New(src, zone).otherHandler(w.Queue, FloatingIP)
	controllertest.Cache(t, src.FloatingIPs, "acme", "dev", fip("web", t0))
	cached := func(l *tenant.LoadBalancer) interface{} {
		controllertest.Cache(t, src.LoadBalancers, "acme", "dev", l)
		obj, _, _ := src.LoadBalancers.GetStore().GetByKey(controller.ObjectKey("acme", "dev", l.Name))
		return obj
	}
	web, api := cached(lb("web", t0)), cached(lb("api", t0))
	h.OnAdd(api, false)
	if got := w.Queue.Len(); got != 0 {
		t.Errorf("LoadBalancer api (no FloatingIP of its name) queued %d keys", got)
	}
	h.OnAdd(web, false)
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "acme/dev/web", Obj: web})
	if got := w.Queue.Len(); got != 1 {
		t.Fatalf("%d keys queued, want FloatingIP web's", got)
	}
	if key, _ := w.Queue.Get(); key != (queue.Key{Tenant: "acme", Namespace: "dev", Name: "web"}) {
		t.Errorf("queued %+v, want acme dev/web", key)
	}
	// Without a zone nothing is watched.
	none := controller.NewWorker("no-zone", nil)
	if err := New(src, "").Watch(none, FloatingIP); err != nil || len(none.HandlersSynced) != 0 {
		t.Errorf("without a zone: %v, %d handlers", err, len(none.HandlersSynced))
	}
}
