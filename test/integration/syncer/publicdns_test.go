package syncer

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestPublicDNSNames follows the names of public addresses in the stack's
// public DNS zone (--public-dns-zone): a LoadBalancer's appears with the
// address MetalLB assigns, never before it, and a FloatingIP's while it
// holds its address; kubectl shows them with -o wide; a FloatingIP named
// like an older LoadBalancer of its Namespace waits for the name, and gets
// it once the LoadBalancer is deleted; and a deleted object's name goes
// with it.
func TestPublicDNSNames(t *testing.T) {
	ctx := framework.Context(t, 4*slowTimeout)
	tn := onboard(ctx, t, tenantSpec{name: uniqueName(t), users: []string{publicDNSUser}, publicIPs: 3, loadBalancers: 2, floatingIPs: 2})
	dana := tenantClient(t, publicDNSUser)
	deletePublicIPUsersAtEnd(t, dana)
	lbs, fips := dana.TenantV1alpha1().LoadBalancers(defaultNamespace), dana.TenantV1alpha1().FloatingIPs(defaultNamespace)
	nameOf := func(name string) string {
		t.Helper()
		n, err := hostnames.PublicDNSName(stack.PublicDNSZone, tn.Name, defaultNamespace, name)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	webName := nameOf("web")
	if want := "web." + defaultNamespace + "." + tn.Name + "." + stack.PublicDNSZone; webName != want {
		t.Fatalf("PublicDNSName: %q, want %q", webName, want)
	}

	// LoadBalancer web: every status it ever shows names only the address
	// it holds, and the name comes with MetalLB's address.
	watchCtx, cancel := context.WithTimeout(ctx, 2*syncTimeout)
	defer cancel()
	w, err := lbs.Watch(watchCtx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "web").String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := lbs.Create(ctx, lbObject("web", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for named := false; !named; {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("the watch of LoadBalancer web ended before it was named; it showed %v", seen)
			}
			lb, isLB := e.Object.(*tenantv1alpha1.LoadBalancer)
			if !isLB || e.Type == watch.Error {
				t.Fatalf("watch event %s %+v", e.Type, e.Object)
			}
			seen = append(seen, fmt.Sprintf("%q/%q", lb.Status.Address, lb.Status.DNSName))
			if lb.Status.DNSName != "" && lb.Status.Address == "" {
				t.Fatalf("LoadBalancer web named %s without an address: %s", lb.Status.DNSName, describeLB(lb))
			}
			named = lb.Status.DNSName != ""
		case <-watchCtx.Done():
			t.Fatalf("LoadBalancer web never named; it showed (address/dnsName) %v", seen)
		}
	}
	w.Stop()
	waitLB(ctx, t, dana, defaultNamespace, "web", "assigned and named "+webName, func(lb *tenantv1alpha1.LoadBalancer) bool {
		return lbAssigned(lb) && lb.Status.DNSName == webName &&
			conditionIs(lb.Status.Conditions, tenantv1alpha1.ConditionDNSNamed, metav1.ConditionTrue, "Named")
	})
	t.Logf("LoadBalancer web, (address/dnsName) as watched: %v", seen)
	out := kubectl(ctx, t, publicDNSUser, "-n", defaultNamespace, "get", "loadbalancers", "-o", "wide")
	if !strings.Contains(out, "DNS NAME") || !strings.Contains(out, webName) {
		t.Errorf("kubectl get loadbalancers -o wide shows no DNS NAME %s:\n%s", webName, out)
	}
	if out := kubectl(ctx, t, publicDNSUser, "-n", defaultNamespace, "get", "loadbalancers"); strings.Contains(out, "DNS NAME") {
		t.Errorf("kubectl get loadbalancers shows the DNS NAME column without -o wide:\n%s", out)
	}
	if got := kubectl(ctx, t, publicDNSUser, "-n", defaultNamespace, "get", "loadbalancer", "web", "-o", "jsonpath={.status.dnsName}"); got != webName {
		t.Errorf("kubectl's jsonpath {.status.dnsName}: %q, want %s", got, webName)
	}

	// FloatingIP web, younger than LoadBalancer web: it holds an address,
	// and the name stays the LoadBalancer's.
	if _, err := fips.Create(ctx, &tenantv1alpha1.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFIP(ctx, t, dana, defaultNamespace, "web", "not named: the name is the older LoadBalancer's", func(f *tenantv1alpha1.FloatingIP) bool {
		return f.Status.Address != "" && f.Status.DNSName == "" &&
			conditionIs(f.Status.Conditions, tenantv1alpha1.ConditionDNSNamed, metav1.ConditionFalse, "NameTaken")
	})
	if lb, err := lbs.Get(ctx, "web", metav1.GetOptions{}); err != nil || lb.Status.DNSName != webName {
		t.Errorf("LoadBalancer web lost its name to a younger FloatingIP: %v %+v", err, lb)
	}

	// FloatingIP ssh: named while it holds its address.
	if _, err := fips.Create(ctx, &tenantv1alpha1.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: "ssh"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sshName := nameOf("ssh")
	ssh := waitFIP(ctx, t, dana, defaultNamespace, "ssh", "named "+sshName, func(f *tenantv1alpha1.FloatingIP) bool {
		return f.Status.Address != "" && f.Status.DNSName == sshName &&
			conditionIs(f.Status.Conditions, tenantv1alpha1.ConditionDNSNamed, metav1.ConditionTrue, "Named")
	})
	out = kubectl(ctx, t, publicDNSUser, "-n", defaultNamespace, "get", "floatingips", "-o", "wide")
	if !strings.Contains(out, "DNS NAME") || !strings.Contains(out, sshName) {
		t.Errorf("kubectl get floatingips -o wide shows no DNS NAME %s:\n%s", sshName, out)
	}

	// LoadBalancer web deleted: the FloatingIP of its name gets the name.
	if err := lbs.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFIP(ctx, t, dana, defaultNamespace, "web", "named "+webName+" once LoadBalancer web is gone", func(f *tenantv1alpha1.FloatingIP) bool {
		return f.Status.DNSName == webName && conditionIs(f.Status.Conditions, tenantv1alpha1.ConditionDNSNamed, metav1.ConditionTrue, "Named")
	})

	// Released: a deleted FloatingIP's name is gone with it, and the
	// address is free for another object, which gets its own name.
	if err := fips.Delete(ctx, "ssh", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, syncTimeout, "a LoadBalancer api takes "+ssh.Status.Address, func(ctx context.Context) (bool, string) {
		_, err := lbs.Create(ctx, lbObject("api", ssh.Status.Address), metav1.CreateOptions{})
		return err == nil, fmt.Sprint(err)
	})
	apiName := nameOf("api")
	waitLB(ctx, t, dana, defaultNamespace, "api", "assigned "+ssh.Status.Address+" and named "+apiName, func(lb *tenantv1alpha1.LoadBalancer) bool {
		return lbAssigned(lb) && lb.Status.Address == ssh.Status.Address && lb.Status.DNSName == apiName
	})
	list, err := fips.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range list.Items {
		if f.Status.DNSName == sshName {
			t.Errorf("FloatingIP %s holds the deleted ssh's name %s", f.Name, sshName)
		}
	}
}
