package integration

// Isolation across the life of tenants: tenant names that prefix others,
// concurrent quota charges, membership changes, a tenant name reused.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// isoPrefixTenant is one side of a pair of tenants whose names, joined
// naively with the names of their objects, give the same keys.
type isoPrefixTenant struct {
	tenant, cidr, user string
	// network and namespace are names of this tenant's objects; a
	// FloatingIP "x" lives in namespace.
	network, namespace string
}

// TestIsolationPrefixTenantNames pairs tenants whose names are prefixes of
// each other (t1, t10; ab, ab-c) with object names chosen so that a key
// scheme without separators would file both tenants' objects under one key
// ("t1"+"0x" == "t10"+"x"): neither sees the other's.
func TestIsolationPrefixTenantNames(t *testing.T) {
	pairs := []struct {
		name string
		a, b isoPrefixTenant
	}{
		{"t1 and t10",
			isoPrefixTenant{tenant: "t1", cidr: "10.51.0.0/16", user: "t1user", network: "0x", namespace: "0dev"},
			isoPrefixTenant{tenant: "t10", cidr: "10.52.0.0/16", user: "t10user", network: "x", namespace: "dev"}},
		{"ab and ab-c",
			isoPrefixTenant{tenant: "ab", cidr: "10.53.0.0/16", user: "abuser", network: "c-x", namespace: "c-dev"},
			isoPrefixTenant{tenant: "ab-c", cidr: "10.54.0.0/16", user: "abcuser", network: "x", namespace: "dev"}},
	}
	nsKind, netKind, fipKind := isoKind(t, "Namespace"), isoKind(t, "Network"), isoKind(t, "FloatingIP")
	for _, pair := range pairs {
		t.Run(pair.name, func(t *testing.T) {
			ctx := framework.Context(t, 2*time.Minute)
			sides := []isoPrefixTenant{pair.a, pair.b}
			for _, s := range sides {
				isoTenant(ctx, t, s.tenant, s.cidr, tenantv1alpha1.TenantQuota{}, s.user)
				ensurePublicIPs(ctx, t, s.tenant, 2) // for FloatingIPs x and sentinel
			}
			before := map[string]string{}
			for _, s := range sides {
				list, err := isoAs(s.user).resource(t, netKind, "").List(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				before[s.tenant] = list.GetResourceVersion()
			}
			// uids[tenant] are the UIDs of the tenant's objects: the
			// Namespace "default" the syncer created in each (isoTenant
			// waited for it), and those created here.
			uids := map[string]isoForeign{}
			for _, s := range sides {
				c := isoAs(s.user)
				uids[s.tenant] = isoForeign{}
				def, err := c.resource(t, nsKind, "").Get(ctx, "default", metav1.GetOptions{})
				if err != nil {
					t.Fatalf("%s get namespace default: %v", c, err)
				}
				isoCheckObject(t, c.String()+" get namespace default", def, s.tenant, isoForeign{})
				uids[s.tenant].add(def)
				uids[s.tenant].add(isoCreate(ctx, t, c, nsKind, "", s.namespace, nil))
				uids[s.tenant].add(isoCreate(ctx, t, c, netKind, "", s.network, nil))
				uids[s.tenant].add(isoCreate(ctx, t, c, fipKind, s.namespace, "x", nil))
			}

			for i, s := range sides {
				other := sides[1-i]
				foreign := uids[other.tenant]
				for _, c := range []isoCaller{isoAs(s.user), isoGroupMember(s.tenant)} {
					t.Run(s.tenant+" "+c.as, func(t *testing.T) {
						for _, l := range []struct {
							k    kindCase
							want []string
						}{
							{nsKind, isoSorted("default", s.namespace)},
							{netKind, isoSorted("default", s.network)},
							{fipKind, []string{s.namespace + "/x"}},
						} {
							for _, rv := range []string{"", "0"} {
								list, err := c.resource(t, l.k, "").List(ctx, metav1.ListOptions{ResourceVersion: rv})
								if err != nil {
									t.Fatal(err)
								}
								isoCheckList(t, fmt.Sprintf("%s lists %s rv=%q", c, l.k.resource, rv), list, s.tenant, foreign)
								if got := isoNames(list); fmt.Sprint(got) != fmt.Sprint(l.want) {
									t.Errorf("%s lists %s %v, want %v", c, l.k.resource, got, l.want)
								}
							}
						}
						// The other tenant's names: not found, whatever the way in.
						if _, err := c.resource(t, netKind, "").Get(ctx, other.network, metav1.GetOptions{}); other.network != s.network {
							isoWantErr(t, c.String()+" get network "+other.network, err, 404)
						}
						if _, err := c.resource(t, nsKind, "").Get(ctx, other.namespace, metav1.GetOptions{}); other.namespace != s.namespace {
							isoWantErr(t, c.String()+" get namespace "+other.namespace, err, 404)
						}
						// Both tenants have a Namespace "default": the one
						// read is the caller's.
						def, err := c.resource(t, nsKind, "").Get(ctx, "default", metav1.GetOptions{})
						if err != nil {
							t.Fatal(err)
						}
						isoCheckObject(t, c.String()+" get namespace default", def, s.tenant, foreign)
						_, err = c.resource(t, fipKind, other.namespace).Get(ctx, "x", metav1.GetOptions{})
						isoWantErr(t, c.String()+" get floatingip in "+other.namespace, err, 404, other.namespace)
						_, err = c.resource(t, fipKind, other.namespace).List(ctx, metav1.ListOptions{})
						isoWantErr(t, c.String()+" list floatingips in "+other.namespace, err, 404, other.namespace)
						list, err := c.resource(t, netKind, "").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + other.network})
						if err != nil {
							t.Fatal(err)
						}
						isoCheckList(t, c.String()+" field-selects "+other.network, list, s.tenant, foreign)
						out, _, err := c.kubectl(ctx, "get", "networks.tenant.io", "-o", "name")
						if err != nil {
							t.Fatal(err)
						}
						if want := strings.Join(isoSorted("network.tenant.io/default", "network.tenant.io/"+s.network), "\n"); strings.TrimSpace(out) != want {
							t.Errorf("%s kubectl get networks: %q, want only default and %s", c, out, s.network)
						}
						// Watches from before either tenant wrote.
						opts := metav1.ListOptions{ResourceVersion: before[s.tenant]}
						isoWatchSeesOnlyOwn(ctx, t, c, s.tenant, netKind, "", opts, "", "sentinel", foreign)
						isoWatchSeesOnlyOwn(ctx, t, c, s.tenant, nsKind, "", opts, "", "sentinel", foreign)
						isoWatchSeesOnlyOwn(ctx, t, c, s.tenant, fipKind, "", opts, s.namespace, "sentinel", foreign)
						isoWatchSeesOnlyOwn(ctx, t, c, s.tenant, fipKind, s.namespace, opts, s.namespace, "sentinel", foreign)
					})
				}
			}
		})
	}
}

// TestIsolationTenantNamedLikeAHostPrefix: a Tenant named after another
// tenant's host namespace prefix ("acme-<6 hex>"), or starting with one,
// is refused with a 422 naming metadata.name: the guard policies tell a
// tenant's host namespaces by that prefix, so its namespaces would read
// as acme's.
func TestIsolationTenantNamedLikeAHostPrefix(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	admin := isoAdmin.clientset(t)
	acme, err := admin.TenantV1alpha1().Tenants().Get(ctx, "acme", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prefix := hostnames.NamespacePrefix(acme.Name, acme.UID)
	if acme.Status.NamespacePrefix != "" && acme.Status.NamespacePrefix != prefix {
		t.Fatalf("acme's namespace prefix %q, computed %q", acme.Status.NamespacePrefix, prefix)
	}
	for _, name := range []string{prefix, prefix + "-web"} {
		tn := &tenantv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}
		_, err := admin.TenantV1alpha1().Tenants().Create(ctx, tn, metav1.CreateOptions{})
		var status *apierrors.StatusError
		if !errors.As(err, &status) || status.ErrStatus.Code != 422 || !strings.Contains(status.ErrStatus.Message, "metadata.name") ||
			!strings.Contains(status.ErrStatus.Message, "another tenant's prefix") {
			t.Errorf("creating Tenant %s: %v, want 422 naming metadata.name and why", name, err)
		}
		if _, err := admin.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("Tenant %s stored after a refused create: %v", name, err)
		}
	}
}

// TestIsolationQuotaConcurrentCreates fires concurrent creates at a quota:
// exactly the quota is admitted, and the usage is exact.
func TestIsolationQuotaConcurrentCreates(t *testing.T) {
	isoDemoTenants(t)
	ctx := framework.Context(t, 2*time.Minute)
	const tenant, limit, attempts = "quota-t", 10, 50
	isoTenant(ctx, t, tenant, "10.50.0.0/16", tenantv1alpha1.TenantQuota{Namespaces: ptr.To[int32](limit)}, "quota-user")
	member := isoAs("quota-user")
	nsKind := isoKind(t, "Namespace")
	tenants := isoAdmin.clientset(t).TenantV1alpha1().Tenants()
	usage := func() int32 {
		t.Helper()
		tn, err := tenants.Get(ctx, tenant, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tn.Status.Usage.Namespaces
	}
	acmeTenant, err := tenants.Get(ctx, "acme", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	acmeUsage := acmeTenant.Status.Usage
	used := usage()
	if used != 0 {
		t.Logf("tenant %s starts with %d namespaces in use", tenant, used)
	}
	want := limit - int(used)

	res := member.resource(t, nsKind, "")
	type result struct {
		name string
		obj  *unstructured.Unstructured
		err  error
	}
	results := make([]result, attempts)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			name := fmt.Sprintf("q-%02d", i)
			<-start
			obj, err := res.Create(ctx, isoObject(nsKind, "", name, nil), metav1.CreateOptions{})
			results[i] = result{name, obj, err}
		}(i)
	}
	close(start)
	wg.Wait()

	var admitted []string
	refused := 0
	exceeded := fmt.Sprintf("exceeded quota: namespaces, requested 1, used %d, limited %d", limit, limit)
	for _, r := range results {
		switch {
		case r.err == nil:
			admitted = append(admitted, r.name)
			isoDeleteAtEnd(t, member, nsKind, r.obj)
		case apierrors.IsForbidden(r.err) && strings.Contains(r.err.Error(), exceeded):
			refused++
		default:
			t.Errorf("create %s: %v, want success or 403 %q", r.name, r.err, exceeded)
		}
	}
	if len(admitted) != want || refused != attempts-want {
		t.Errorf("%d concurrent creates: %d admitted, %d refused for quota; want %d and %d", attempts, len(admitted), refused, want, attempts-want)
	}
	if got := usage(); got != limit {
		t.Errorf("status.usage.namespaces = %d after the burst, want %d", got, limit)
	}
	list, err := res.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != limit {
		t.Errorf("tenant %s has %d namespaces after the burst, want %d", tenant, len(list.Items), limit)
	}
	if len(admitted) == 0 {
		t.FailNow()
	}

	// One out, one in.
	if err := res.Delete(ctx, admitted[0], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := usage(); got != limit-1 {
		t.Errorf("status.usage.namespaces = %d after a delete, want %d", got, limit-1)
	}
	isoCreate(ctx, t, member, nsKind, "", "q-again", nil)
	if got := usage(); got != limit {
		t.Errorf("status.usage.namespaces = %d after the create that took the freed unit, want %d", got, limit)
	}
	_, err = res.Create(ctx, isoObject(nsKind, "", "q-over", nil), metav1.CreateOptions{})
	isoWantErr(t, "create past the quota", err, 403, exceeded)
	// Other tenants' quotas are their own.
	if acme, err := tenants.Get(ctx, "acme", metav1.GetOptions{}); err != nil || !apiequality.Semantic.DeepEqual(acme.Status.Usage, acmeUsage) {
		t.Errorf("acme's usage changed from %+v to %+v (%v) by another tenant's burst", acmeUsage, acme.Status.Usage, err)
	}
}

// TestIsolationMembershipChange removes a member from its tenant while it
// watches: its watches end within a second, and its next requests see
// nothing of the tenant.
func TestIsolationMembershipChange(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	const tenant = "memb"
	isoTenant(ctx, t, tenant, "10.55.0.0/16", tenantv1alpha1.TenantQuota{}, "dave")
	dave := isoAs("dave")
	netKind, tenantKind := isoKind(t, "Network"), isoKind(t, "Tenant")

	netW, err := dave.resource(t, netKind, "").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer netW.Stop()
	tenantW, err := dave.resource(t, tenantKind, "").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tenantW.Stop()
	isoEventsUntil(t, "dave watching tenants", tenantW, func(ev watch.Event) bool {
		o, err := meta.Accessor(ev.Object)
		return err == nil && ev.Type == watch.Added && o.GetName() == tenant
	})
	net, err := dave.resource(t, netKind, "").Create(ctx, isoObject(netKind, "", "dave-net", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// dave will not be able to delete it: a member by group will.
	isoDeleteAtEnd(t, isoGroupMember(tenant), netKind, net)
	isoEventsUntil(t, "dave watching networks", netW, isoIs(watch.Added, net.GetUID()))

	tenants := isoAdmin.clientset(t).TenantV1alpha1().Tenants()
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		tn, err := tenants.Get(ctx, tenant, metav1.GetOptions{})
		if err != nil {
			return err
		}
		tn.Spec.Members.Users = nil
		_, err = tenants.Update(ctx, tn, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	removed := time.Now()

	// Both watches end within a second of the update's answer. Whatever
	// they deliver until then must not be the network dave's tenant writes
	// next.
	deadline := time.NewTimer(time.Second)
	defer deadline.Stop()
	ends := map[string]time.Duration{}
	for name, w := range map[string]watch.Interface{"networks": netW, "tenants": tenantW} {
	drain:
		for {
			select {
			case _, ok := <-w.ResultChan():
				if !ok {
					ends[name] = time.Since(removed)
					break drain
				}
			case <-deadline.C:
				break drain
			}
		}
	}
	for _, name := range []string{"networks", "tenants"} {
		if d, ok := ends[name]; !ok {
			t.Errorf("dave's watch of %s is still open 1s after his removal from %s", name, tenant)
		} else {
			t.Logf("dave's watch of %s ended %s after his removal", name, d.Round(time.Millisecond))
		}
	}

	_, err = dave.resource(t, netKind, "").Get(ctx, "dave-net", metav1.GetOptions{})
	isoWantErr(t, "dave get of his former tenant's network", err, 404)
	list, err := dave.resource(t, netKind, "").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("dave lists networks %v after his removal", isoNames(list))
	}
	_, err = dave.resource(t, tenantKind, "").Get(ctx, tenant, metav1.GetOptions{})
	isoWantErr(t, "dave get of his former tenant", err, 404)
	_, err = dave.resource(t, netKind, "").Create(ctx, isoObject(netKind, "", "dave-net-2", nil), metav1.CreateOptions{})
	isoWantErr(t, "dave create after his removal", err, 403, "not a member of any tenant")
	// A new watch of dave's sees nothing of memb.
	foreign := isoForeign{}
	foreign.add(net)
	w, err := dave.resource(t, netKind, "").Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Errorf("dave's new watch after removal received %s %v", ev.Type, ev.Object)
		}
	case <-time.After(500 * time.Millisecond):
	}
}

// TestIsolationTenantNameReuse deletes a Tenant that still owns objects and
// gives its name to another customer: the provider may not delete a tenant
// with FloatingIPs attached (409), and a new tenant of a former tenant's
// name must not inherit the former tenant's objects. Once the FloatingIP is
// gone the delete is accepted, the syncer removes the tenant's Namespaces,
// Networks and host namespaces, and only then does the Tenant disappear.
func TestIsolationTenantNameReuse(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	const tenant = "reuse-t"
	nsKind, netKind, fipKind := isoKind(t, "Namespace"), isoKind(t, "Network"), isoKind(t, "FloatingIP")
	// isoTenant waits until the syncer has onboarded it: it has its
	// Namespace "default" and the finalizer tenant.io/offboarding.
	isoTenant(ctx, t, tenant, "10.58.0.0/16", tenantv1alpha1.TenantQuota{}, "old-owner")
	ensurePublicIPs(ctx, t, tenant, 1) // for FloatingIP dev/web
	old := isoAs("old-owner")
	tenants := isoAdmin.clientset(t).TenantV1alpha1().Tenants()
	oldTenant, err := tenants.Get(ctx, tenant, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// foreign is everything of the former tenant, history is a
	// resourceVersion from before the former tenant's objects were written.
	foreign := isoForeign{}
	def, err := old.resource(t, nsKind, "").Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s get namespace default: %v", old, err)
	}
	foreign.add(def)
	netList, err := old.resource(t, netKind, "").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	history := netList.GetResourceVersion()
	// Whoever is a member of the tenant by then removes these at the end.
	cleaner := isoGroupMember(tenant)
	var fip *unstructured.Unstructured
	for _, o := range []struct {
		k        kindCase
		ns, name string
	}{{nsKind, "", "dev"}, {netKind, "", "net"}, {fipKind, "dev", "web"}} {
		created, err := old.resource(t, o.k, o.ns).Create(ctx, isoObject(o.k, o.ns, o.name, nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		isoDeleteAtEnd(t, cleaner, o.k, created)
		foreign.add(created)
		if o.k.kind == "FloatingIP" {
			fip = created
		}
	}

	// A tenant with a FloatingIP attached cannot be deleted (409 listing
	// it). Its Namespace and Network do not block: the tenant carries the
	// finalizer, and the syncer deletes them once the delete is accepted.
	err = tenants.Delete(ctx, tenant, metav1.DeleteOptions{})
	isoWantErr(t, "deleting a tenant that owns a Namespace, a Network and a FloatingIP", err, 409)
	var status *apierrors.StatusError
	if errors.As(err, &status) && status.ErrStatus.Details != nil {
		var blockers []string
		for _, c := range status.ErrStatus.Details.Causes {
			blockers = append(blockers, c.Field)
		}
		want := []string{"floatingips dev/web"}
		if fmt.Sprint(blockers) != fmt.Sprint(want) {
			t.Errorf("409 causes %v, want %v", blockers, want)
		}
	} else {
		t.Errorf("409 without causes: %v", err)
	}
	if got, err := tenants.Get(ctx, tenant, metav1.GetOptions{}); err != nil {
		t.Errorf("the refused delete removed the tenant: %v", err)
	} else if got.DeletionTimestamp != nil {
		t.Errorf("the refused delete marked the tenant deleted at %s", got.DeletionTimestamp)
	}
	// The refused delete removed nothing of the tenant.
	for _, l := range []struct {
		k    kindCase
		ns   string
		want []string
	}{{nsKind, "", []string{"default", "dev"}}, {netKind, "", []string{"default", "net"}}, {fipKind, "dev", []string{"dev/web"}}} {
		list, err := old.resource(t, l.k, l.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := isoNames(list); fmt.Sprint(got) != fmt.Sprint(l.want) {
			t.Errorf("after the refused delete %s lists %s %v, want %v", old, l.k.resource, got, l.want)
		}
	}

	// Without the FloatingIP the delete is accepted; the Tenant stays,
	// being deleted, until the syncer has removed what it had. Nothing new
	// may be created in it meanwhile.
	fipUID := fip.GetUID()
	if err := old.resource(t, fipKind, "dev").Delete(ctx, "web", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &fipUID}}); err != nil {
		t.Fatal(err)
	}
	if err := tenants.Delete(ctx, tenant, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting tenant %s without its FloatingIP: %v", tenant, err)
	}
	late, err := old.resource(t, netKind, "").Create(ctx, isoObject(netKind, "", "late", nil), metav1.CreateOptions{})
	switch _, getErr := tenants.Get(ctx, tenant, metav1.GetOptions{}); {
	case err == nil:
		isoDeleteAtEnd(t, cleaner, netKind, late)
		foreign.add(late)
		t.Errorf("%s created network late in tenant %s after its delete was accepted", old, tenant)
	case apierrors.IsNotFound(getErr):
		t.Logf("tenant %s was gone before the create in it (%v)", tenant, err)
	default:
		isoWantErr(t, "create in a tenant being deleted", err, 403, "tenant "+tenant+" is being deleted")
	}
	last := oldTenant
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := tenants.Get(ctx, tenant, metav1.GetOptions{})
		if err == nil {
			last = got
		}
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("tenant %s still there a minute after its delete was accepted: %v (last: deletionTimestamp %v, finalizers %v, status %+v)",
			tenant, err, last.DeletionTimestamp, last.Finalizers, last.Status)
	}
	host, _, err := framework.Current().Clients(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	hostNamespaces := func() []string {
		t.Helper()
		list, err := host.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: isoTenantLabel + "=" + tenant})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, ns := range list.Items {
			names = append(names, ns.Name+" (tenant uid "+ns.Annotations["tenant.io/tenant-uid"]+")")
		}
		sort.Strings(names)
		return names
	}
	if left := hostNamespaces(); len(left) != 0 {
		t.Errorf("host namespaces of tenant %s left after it was deleted: %v", tenant, left)
	}

	// The name goes to another customer: the new tenant has only what the
	// syncer gives every tenant (its own Network and Namespace "default"),
	// nothing of the former one's, through any way in.
	isoTenant(ctx, t, tenant, "10.58.0.0/16", tenantv1alpha1.TenantQuota{}, "new-owner")
	ensurePublicIPs(ctx, t, tenant, 1) // for FloatingIP sentinel
	newTenant, err := tenants.Get(ctx, tenant, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if newTenant.UID == oldTenant.UID {
		t.Fatalf("the new tenant %s has the former one's UID %s", tenant, oldTenant.UID)
	}
	if newTenant.Status.NamespacePrefix == oldTenant.Status.NamespacePrefix {
		t.Errorf("the new tenant has the former one's namespace prefix %s", oldTenant.Status.NamespacePrefix)
	}
	if u := newTenant.Status.Usage; !apiequality.Semantic.DeepEqual(u, tenantv1alpha1.TenantUsage{Namespaces: 1, Networks: 1}) {
		t.Errorf("the new tenant's usage is %+v, want its Network and Namespace default only", u)
	}
	// On the host, the tenant of that name has the new default's host
	// namespace only, owned by the new tenant.
	newDef, err := isoAs("new-owner").clientset(t).TenantV1alpha1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{newDef.Status.HostNamespace + " (tenant uid " + string(newTenant.UID) + ")"}
	if got := hostNamespaces(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("host namespaces of tenant %s: %v, want %v", tenant, got, want)
	}
	for _, c := range []isoCaller{isoAs("new-owner"), cleaner} {
		for _, l := range []struct {
			k    kindCase
			ns   string
			want []string
		}{{nsKind, "", []string{"default"}}, {netKind, "", []string{"default"}}, {fipKind, "", nil}, {fipKind, "default", nil}} {
			for _, rv := range []string{"", "0"} {
				list, err := c.resource(t, l.k, l.ns).List(ctx, metav1.ListOptions{ResourceVersion: rv})
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("%s lists %s in %q rv=%q", c, l.k.resource, l.ns, rv)
				isoCheckList(t, what, list, tenant, foreign)
				if got := isoNames(list); fmt.Sprint(got) != fmt.Sprint(l.want) {
					t.Errorf("%s: %v, want %v", what, got, l.want)
				}
			}
		}
		_, err := c.resource(t, nsKind, "").Get(ctx, "dev", metav1.GetOptions{})
		isoWantErr(t, c.String()+" get the former tenant's namespace dev", err, 404)
		_, err = c.resource(t, netKind, "").Get(ctx, "net", metav1.GetOptions{})
		isoWantErr(t, c.String()+" get the former tenant's network net", err, 404)
		_, err = c.resource(t, fipKind, "dev").Get(ctx, "web", metav1.GetOptions{})
		isoWantErr(t, c.String()+" get the former tenant's floatingip dev/web", err, 404)
		newDef, err := c.resource(t, nsKind, "").Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		isoCheckObject(t, c.String()+" get namespace default", newDef, tenant, foreign)
		// Watches, however they start, and from a resourceVersion from
		// before the former tenant wrote its objects: its history is not
		// the new tenant's either.
		for _, w := range []struct {
			name string
			opts metav1.ListOptions
		}{
			{"resourceVersion unset", metav1.ListOptions{}},
			{"resourceVersion 0", metav1.ListOptions{ResourceVersion: "0"}},
			{"resourceVersion of the former tenant", metav1.ListOptions{ResourceVersion: history}},
		} {
			t.Run(c.as+" watch "+w.name, func(t *testing.T) {
				isoWatchSeesOnlyOwn(ctx, t, c, tenant, nsKind, "", w.opts, "", "sentinel", foreign)
				isoWatchSeesOnlyOwn(ctx, t, c, tenant, netKind, "", w.opts, "", "sentinel", foreign)
				isoWatchSeesOnlyOwn(ctx, t, c, tenant, fipKind, "", w.opts, "default", "sentinel", foreign)
			})
		}
	}
	// The former owner is nobody's member now.
	_, err = old.resource(t, isoKind(t, "Tenant"), "").Get(ctx, tenant, metav1.GetOptions{})
	isoWantErr(t, "the former owner get of the tenant of its former tenant's name", err, 404)
}
