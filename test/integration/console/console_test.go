package console

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

func tenantClient(t *testing.T, user string) versioned.Interface {
	t.Helper()
	c, err := framework.Current().TenantClient(user)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSignIn: a wrong token is refused with the API's 401, alice's token
// opens her Overview, which shows acme as the API holds it, and the
// session cookie is out of reach of scripts and other sites.
func TestSignIn(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	w := openWindow(t, "carol") // signed in as carol; then a wrong token
	w.open("/signin")
	w.screenshot("signin")
	w.signIn("not-a-token")
	if got := w.text("#signin-problem"); !strings.Contains(got, "401") {
		t.Errorf("a wrong token: the page says %q, want the API's 401", got)
	}

	alice := openWindow(t, "alice")
	acme, err := tenantClient(t, "alice").TenantV1alpha1().Tenants().Get(ctx, "acme", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	alice.open("/overview")
	if got := alice.text("#tenant-name"); got != "acme" {
		t.Errorf("alice's tenant: %q, want acme", got)
	}
	if got := alice.text("#private-block"); got != acme.Status.Network.CIDR {
		t.Errorf("private block: %q, want %q", got, acme.Status.Network.CIDR)
	}
	var ips []string
	alice.eval(`Array.from(document.querySelectorAll("#public-ips tbody tr[data-key]")).map(function(r){return r.dataset.key})`, &ips)
	if fmt.Sprint(ips) != fmt.Sprint(acme.Status.PublicIPs) {
		t.Errorf("public IPs on the Overview: %v, the API's %v", ips, acme.Status.PublicIPs)
	}
	if got := alice.text(`#provider-services tbody tr td`); got != "resolver" {
		t.Errorf("provider service offered to acme: %q, want its alias resolver", got)
	}
	if got := alice.text("nav"); strings.Contains(got, "Address pools") {
		t.Errorf("alice is shown the provider pages: %q", got)
	}
	alice.screenshot("overview")

	var sessions int
	for _, c := range alice.cookies() {
		if c.Name != "tenant_console_session" {
			continue
		}
		sessions++
		if !c.HTTPOnly || !c.Secure || c.SameSite != network.CookieSameSiteStrict {
			t.Errorf("session cookie: HttpOnly %v, Secure %v, SameSite %s; want true, true, Strict", c.HTTPOnly, c.Secure, c.SameSite)
		}
	}
	if sessions != 1 {
		t.Errorf("alice's browser holds %d session cookies, want 1", sessions)
	}
	var visible string
	alice.eval(`document.cookie`, &visible)
	if visible != "" {
		t.Errorf("scripts can read cookies: %q", visible)
	}
}

// TestTenantJourney: alice creates a Network, a LoadBalancer whose address
// MetalLB assigns while she watches, and a FloatingIP she attaches to a
// pod; the API's refusals show as the API states them. bob, signed in at
// the same time with the same pages open, never sees any of it, and his
// forged requests for alice's objects get the API's 404.
func TestTenantJourney(t *testing.T) {
	ctx := framework.Context(t, 8*time.Minute)
	s := framework.Current()
	api := tenantClient(t, "alice").TenantV1alpha1()
	names := []string{"shop-net", "shop-lb", "shop-ip", "shop-pod"}

	alice := openWindow(t, "alice")
	bob := openWindow(t, "bob")
	// bob keeps the three live lists open in tabs of his own.
	bobTabs := map[string]*window{}
	for _, page := range []string{"networks", "loadbalancers", "floatingips"} {
		tab := bob.tab()
		tab.open("/" + page)
		tab.waitFor("bob's live "+page, `document.querySelector("tbody[data-live]").dataset.liveState === "live"`, 30*time.Second)
		bobTabs[page] = tab
	}

	// A Network, typed in with the keyboard; its row turns Ready live.
	alice.open("/networks")
	alice.markPage()
	alice.run(
		chromedp.Click("details.create summary", chromedp.ByQuery),
		chromedp.SendKeys("#name", "shop-net", chromedp.ByID),
		chromedp.Focus("#nat", chromedp.ByID),
		chromedp.KeyEvent(" "),
		chromedp.Focus("#sharedServices", chromedp.ByID),
		chromedp.KeyEvent(" "),
		chromedp.SendKeys("#name", kb.Enter, chromedp.ByID),
	)
	alice.waitNewPage()
	if got := alice.text("#notice"); got != "Network shop-net created." {
		t.Errorf("after create: notice %q", got)
	}
	alice.markPage()
	alice.waitFor("shop-net Ready", cell("networks", "shop-net", 5)+` === "True"`, 2*time.Minute)
	alice.stillSamePage("shop-net turning Ready")
	net, err := api.Networks().Get(ctx, "shop-net", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if net.Spec.ServiceNetwork != "Shared" {
		t.Errorf("shop-net, created with Shared services ticked: spec.serviceNetwork %q", net.Spec.ServiceNetwork)
	}
	var subnets string
	alice.eval(cell("networks", "shop-net", 3), &subnets)
	if subnets != strings.Join(net.Status.Subnets, ", ") {
		t.Errorf("shop-net's subnets on the page %q, the API's %v", subnets, net.Status.Subnets)
	}
	alice.waitFor("shop-net's NAT gateway address", cell("networks", "shop-net", 4)+`.startsWith("203.0.113.")`, time.Minute)
	alice.screenshot("networks")

	// 422: the field error next to its field.
	alice.fill("create-form", map[string]string{"name": "bad-net", "subnets": "192.168.7.0/24"})
	if code := alice.errorCode(); code != 422 {
		t.Errorf("a subnet outside the block: the page shows %d, want 422", code)
	}
	if got := alice.text("#subnets-errors"); !strings.Contains(got, "spec.subnets[0]") {
		t.Errorf("the subnets field's error: %q, want the API's spec.subnets[0] cause", got)
	}
	if got := alice.eval2(`document.getElementById("subnets").value`); got != "192.168.7.0/24" {
		t.Errorf("the refused form lost its value: %q", got)
	}
	alice.screenshot("networks-invalid")

	// 403 for quota: acme may have 4 Networks.
	acme, err := api.Tenants().Get(ctx, "acme", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	limit := int(*acme.Spec.Quota.Networks)
	var extra []string
	for i := int(acme.Status.Usage.Networks); i < limit; i++ {
		name := fmt.Sprintf("quota-net-%d", i)
		extra = append(extra, name)
		alice.fill("create-form", map[string]string{"name": name, "subnets": "", "nat": ""})
		if code := alice.errorCode(); code != 0 {
			t.Fatalf("creating %s within the quota: %s", name, alice.text("#api-error"))
		}
	}
	alice.fill("create-form", map[string]string{"name": "one-too-many"})
	if code, msg := alice.errorCode(), alice.text("#api-error"); code != 403 || !strings.Contains(msg, "exceeded quota: networks") {
		t.Errorf("a Network beyond the quota: %d %q, want the API's 403", code, msg)
	}
	alice.screenshot("networks-quota")
	for _, name := range extra {
		if err := api.Networks().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	}

	// A LoadBalancer: MetalLB's address appears without a reload.
	alice.open("/loadbalancers")
	alice.fill("create-form", map[string]string{"namespace": "dev", "name": "shop-lb", "selector": "app=shop", "ports": "80:8080/tcp, 443:8443/tcp"})
	if code := alice.errorCode(); code != 0 {
		t.Fatalf("creating shop-lb: the page shows an error: %s", alice.text("#api-error"))
	}
	alice.markPage()
	alice.waitFor("MetalLB's address for shop-lb", cell("loadbalancers", "dev/shop-lb", 3)+`.startsWith("203.0.113.")`, 2*time.Minute)
	alice.stillSamePage("shop-lb's address")
	lb, err := api.LoadBalancers("dev").Get(ctx, "shop-lb", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var shown string
	alice.eval(cell("loadbalancers", "dev/shop-lb", 3), &shown)
	if shown != lb.Status.Address {
		t.Errorf("shop-lb's address on the page %q, the API's %q", shown, lb.Status.Address)
	}
	// Its name in the public DNS zone, written with the address.
	lbName := "shop-lb.dev.acme." + stack.PublicDNSZone
	alice.waitFor("shop-lb's DNS name", cell("loadbalancers", "dev/shop-lb", 4)+` === "`+lbName+`"`, time.Minute)
	alice.screenshot("loadbalancers")
	alice.open("/loadbalancers/dev/shop-lb")
	if got := alice.text("#public-dns-name"); got != lbName {
		t.Errorf("shop-lb's page shows the DNS name %q, want %s", got, lbName)
	}

	// A FloatingIP attached to a pod.
	dev, err := api.Namespaces().Get(ctx, "dev", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kube, _, err := s.Clients("alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Pods(dev.Status.HostNamespace).Create(ctx, restrictedPod("shop-pod"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	alice.open("/floatingips")
	alice.fill("create-form", map[string]string{"namespace": "dev", "name": "shop-ip"})
	if code := alice.errorCode(); code != 0 {
		t.Fatalf("creating shop-ip: %s", alice.text("#api-error"))
	}
	alice.open("/floatingips/dev/shop-ip")
	alice.fill("attach-form", map[string]string{"target-kind": "Pod", "target-name": "shop-pod", "ports": "22/tcp"})
	if code := alice.errorCode(); code != 0 {
		t.Fatalf("attaching shop-ip: %s", alice.text("#api-error"))
	}
	alice.screenshot("floatingip")
	alice.open("/floatingips")
	alice.markPage()
	alice.waitFor("shop-ip Associated", cell("floatingips", "dev/shop-ip", 7)+` === "Associated"`, 2*time.Minute)
	alice.stillSamePage("shop-ip's phase")
	if got := alice.eval2(cell("floatingips", "dev/shop-ip", 5)); got != "Pod/shop-pod" {
		t.Errorf("shop-ip's target on the page: %q", got)
	}
	if got, want := alice.eval2(cell("floatingips", "dev/shop-ip", 4)), "shop-ip.dev.acme."+stack.PublicDNSZone; got != want {
		t.Errorf("shop-ip's DNS name on the page: %q, want %s", got, want)
	}
	alice.screenshot("floatingips")

	// 409: the namespace's delete, refused with every blocker listed.
	alice.open("/namespaces")
	alice.screenshot("namespaces")
	alice.run(chromedp.Click(`#namespaces-table tr[data-key="dev"] details summary`, chromedp.ByQuery))
	alice.markPage()
	alice.run(chromedp.Click(`#namespaces-table tr[data-key="dev"] details button`, chromedp.ByQuery))
	alice.waitNewPage()
	if code := alice.errorCode(); code != 409 {
		t.Errorf("deleting dev: the page shows %d, want 409", code)
	}
	causes := alice.text("#api-causes")
	for _, want := range []string{"shop-ip", "shop-lb", "shop-pod"} {
		if !strings.Contains(causes, want) {
			t.Errorf("the 409's causes %q do not name %s", causes, want)
		}
	}
	alice.screenshot("namespaces-delete-refused")

	alice.open("/offboarding")
	if got := alice.text("#blockers"); !strings.Contains(got, "shop-ip") {
		t.Errorf("the offboarding report does not list shop-ip: %q", got)
	}
	alice.screenshot("offboarding")

	// bob, meanwhile: his live tables updated (his own Network appears),
	// never with acme's objects.
	bobAPI := tenantClient(t, "bob").TenantV1alpha1()
	if _, err := bobAPI.Networks().Create(ctx, &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: "bob-net"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bobAPI.Networks().Delete(context.Background(), "bob-net", metav1.DeleteOptions{}) }()
	bobTabs["networks"].waitFor("bob-net in bob's live list", cell("networks", "bob-net", 1)+` === "bob-net"`, time.Minute)
	for page, tab := range bobTabs {
		var updates int
		tab.eval(`Number(document.querySelector("tbody[data-live]").dataset.updates)`, &updates)
		body := tab.html("main")
		for _, n := range names {
			if strings.Contains(body, n) {
				t.Errorf("bob's %s page shows acme's %s after %d live updates", page, n, updates)
			}
		}
	}

	// bob's forged requests for acme's objects: the API's 404.
	for _, path := range []string{"/networks/shop-net", "/loadbalancers/dev/shop-lb", "/floatingips/dev/shop-ip"} {
		bob.open(path)
		if code := bob.errorCode(); code != 404 {
			t.Errorf("bob GET %s: the page shows %d (%s), want the API's 404", path, code, bob.text("main"))
		}
	}
	bob.screenshot("not-found")
	bob.open("/networks")
	var status int
	bob.run(chromedp.Evaluate(`fetch("/loadbalancers/dev/shop-lb/delete", {method: "POST", body: new URLSearchParams({_csrf: document.querySelector("input[name=_csrf]").value})}).then(function(r){return r.status})`,
		&status, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if status != 404 {
		t.Errorf("bob's forged delete of acme's shop-lb: %d, want 404", status)
	}
	if _, err := api.LoadBalancers("dev").Get(ctx, "shop-lb", metav1.GetOptions{}); err != nil {
		t.Errorf("acme's shop-lb after bob's forged delete: %v", err)
	}

	// Clean up through the pages: detach, then delete.
	alice.open("/floatingips/dev/shop-ip")
	alice.fill("detach-form", nil)
	if got := alice.eval2(`document.getElementById("fip-phase").textContent`); got == "" {
		t.Errorf("the detached floating IP's page shows no phase")
	}
	for _, path := range []string{"/floatingips/dev/shop-ip", "/loadbalancers/dev/shop-lb", "/networks/shop-net"} {
		alice.open(path)
		alice.run(chromedp.Click("main > details summary", chromedp.ByQuery))
		alice.markPage()
		alice.run(chromedp.Click("main > details button", chromedp.ByQuery))
		alice.waitNewPage()
		if got := alice.text("#notice"); !strings.HasSuffix(got, "deleted.") {
			t.Errorf("deleting %s: notice %q, error %q", path, got, alice.text("#api-error"))
		}
	}
	if err := kube.CoreV1().Pods(dev.Status.HostNamespace).Delete(ctx, "shop-pod", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
	}
}

// eval2 evaluates a JavaScript expression to a string.
func (w *window) eval2(expr string) string {
	w.t.Helper()
	var s string
	w.eval(expr, &s)
	return s
}

// restrictedPod is a pod the restricted Pod Security Standard admits.
func restrictedPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "shop"}},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.example/shop:1",
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			}},
		},
	}
}

// TestNoTenant: carol, a member of no tenant, sees an empty tenant view
// and the API's 403 for the provider pages.
func TestNoTenant(t *testing.T) {
	carol := openWindow(t, "carol")
	carol.open("/overview")
	if got := carol.text("#no-tenant"); !strings.Contains(got, "not a member of any tenant") {
		t.Errorf("carol's overview: %q", got)
	}
	carol.screenshot("no-tenant")
	for _, page := range []string{"networks", "namespaces", "floatingips", "loadbalancers"} {
		carol.open("/" + page)
		carol.waitFor(page+" live", `document.querySelector("tbody[data-live]").dataset.liveState === "live"`, 30*time.Second)
		var rows int
		carol.eval(`document.querySelectorAll("tbody[data-live] tr[data-key]").length`, &rows)
		if rows != 0 || carol.text("tbody tr.empty") == "" {
			t.Errorf("carol's %s: %d rows, want the empty state", page, rows)
		}
	}
	carol.open("/admin/pools")
	if code := carol.errorCode(); code != 403 || !strings.Contains(carol.text("#api-error"), `cannot list resource "addresspools"`) {
		t.Errorf("carol on the pools page: %d %q, want the API's 403", code, carol.text("#api-error"))
	}
	carol.screenshot("provider-page-forbidden")
}

// TestProviderOnboarding: the admin sees the tenants and pools as the API
// holds them, onboards a tenant through the form and watches it become
// Ready; an overlapping block is refused next to its field.
func TestProviderOnboarding(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	api := tenantClient(t, "admin").TenantV1alpha1()
	admin := openWindow(t, "admin")
	admin.open("/")
	if got := admin.eval2(`location.pathname`); got != "/admin/tenants" {
		t.Errorf("the admin's home: %s, want /admin/tenants", got)
	}
	tenants, err := api.Tenants().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range tenants.Items {
		if got := admin.eval2(cell("tenants", tn.Name, 3)); got != tn.Status.Network.CIDR {
			t.Errorf("tenant %s's block on the page %q, the API's %q", tn.Name, got, tn.Status.Network.CIDR)
		}
		if got, want := admin.eval2(cell("tenants", tn.Name, 4)), fmt.Sprintf("%d/%d", tn.Status.Usage.PublicIPs, len(tn.Status.PublicIPs)); got != want {
			t.Errorf("tenant %s's public IPs in use on the page %q, the API's %q", tn.Name, got, want)
		}
	}

	admin.fill("onboard-form", map[string]string{"name": "overlap", "users": newcomer, "cidr": "10.42.0.0/24"})
	if code := admin.errorCode(); code != 422 || !strings.Contains(admin.text("#cidr-errors"), "spec.network.cidr") {
		t.Errorf("an overlapping block: %d, field error %q", code, admin.text("#cidr-errors"))
	}
	if _, err := api.Tenants().Get(ctx, "overlap", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused tenant: %v, want NotFound", err)
	}
	admin.screenshot("admin-onboard-invalid")

	admin.fill("onboard-form", map[string]string{"name": "initech", "displayName": "Initech", "users": newcomer, "cidr": "", "prefixLength": "24", "publicIPs": "1",
		"quota-namespaces": "3", "quota-requests.cpu": "4", "isolation": "Hard"})
	defer func() { _ = api.Tenants().Delete(context.Background(), "initech", metav1.DeleteOptions{}) }()
	if got := admin.eval2(`location.pathname`); got != "/admin/tenants/initech" {
		t.Fatalf("after onboarding: %s (%s)", got, admin.text("#api-error"))
	}
	admin.markPage()
	admin.waitFor("initech Ready", `document.querySelector('#tenant-table tr[data-key="0"] td:nth-child(2)').textContent === "Ready"`, 3*time.Minute)
	admin.stillSamePage("initech's progress")
	admin.screenshot("admin-tenant")
	tn, err := api.Tenants().Get(ctx, "initech", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tn.Status.Phase != tenantv1alpha1.TenantPhaseReady || *tn.Spec.Quota.Namespaces != 3 || len(tn.Status.PublicIPs) != 1 || tn.Spec.Isolation != tenantv1alpha1.TenantIsolationHard {
		t.Errorf("initech as the API holds it: phase %s, quota %v, public IPs %v, isolation %s", tn.Status.Phase, tn.Spec.Quota, tn.Status.PublicIPs, tn.Spec.Isolation)
	}

	// What initech holds, read-only, kept live: its default Namespace and
	// Network, then a Namespace its member creates.
	admin.waitFor("initech's default network on its page", cell("admin-networks", "default", 1)+` === "default"`, time.Minute)
	if got := admin.eval2(cell("admin-namespaces", "default", 1)); got != "default" {
		t.Errorf("initech's namespaces on its page: row default %q", got)
	}
	if n := admin.eval2(`String(document.querySelectorAll('#tenant-objects form, #tenant-objects a[href^="/networks"]').length)`); n != "0" {
		t.Errorf("initech's objects on the provider's page offer %s links or forms, want none (read-only)", n)
	}
	member := framework.Current().RESTConfig("admin")
	member.Impersonate = rest.ImpersonationConfig{UserName: newcomer, Groups: []string{"tenant.io:initech"}}
	initech, err := versioned.NewForConfig(member)
	if err != nil {
		t.Fatal(err)
	}
	extra := &tenantv1alpha1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "extra"}}
	if _, err := initech.TenantV1alpha1().Namespaces().Create(ctx, extra, metav1.CreateOptions{}); err != nil {
		t.Fatalf("%s creating initech's namespace extra: %v", newcomer, err)
	}
	admin.waitFor("initech's namespace extra on its page", cell("admin-namespaces", "extra", 1)+` === "extra"`, time.Minute)
	admin.stillSamePage("initech's objects")
	// Another tenant's same-named objects are not on initech's page.
	if got := admin.eval2(`String(document.querySelectorAll('#admin-networks-table tr[data-key="default"]').length)`); got != "1" {
		t.Errorf("initech's page lists %s networks named default, want its own only", got)
	}
	// A tenant member reading its own Tenant's provider page sees none of it.
	alice := openWindow(t, "alice")
	alice.open("/admin/tenants/acme")
	if got := alice.text("#tenant-objects #api-error"); !strings.Contains(got, "403") {
		t.Errorf("alice on /admin/tenants/acme: the tenant's objects say %q, want the API's 403", got)
	}
	if n := alice.eval2(`String(document.querySelectorAll('#tenant-objects table').length)`); n != "0" {
		t.Errorf("alice on /admin/tenants/acme sees %s tables of the provider's views", n)
	}
	admin.open("/admin/tenants")
	admin.screenshot("admin-tenants")

	admin.open("/admin/pools")
	pools, err := api.AddressPools().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pools.Items {
		if got, want := admin.eval2(cell("addresspools", p.Name, 6)), fmt.Sprint(p.Status.Free); got != want {
			t.Errorf("pool %s: free %s on the page, %s in the API", p.Name, got, want)
		}
	}
	admin.screenshot("admin-pools")

	if err := api.Tenants().Delete(ctx, "initech", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestAccessible: every page has a language, one heading of level 1, a
// labelled navigation, and a label for each form control; tables name
// their columns.
func TestAccessible(t *testing.T) {
	for user, pages := range map[string][]string{
		"alice": {"/overview", "/namespaces", "/networks", "/floatingips", "/loadbalancers", "/hostclaims", "/routes", "/offboarding", "/networks/default"},
		"admin": {"/admin/tenants", "/admin/tenants/acme", "/admin/pools"},
	} {
		w := openWindow(t, user)
		for _, page := range pages {
			w.open(page)
			var problems []string
			w.eval(`(function(){
var p = [];
if (!document.documentElement.lang) p.push("no lang");
if (document.querySelectorAll("h1").length !== 1) p.push("not one h1");
if (!document.querySelector("nav[aria-label]")) p.push("no labelled nav");
document.querySelectorAll("input:not([type=hidden]), select, textarea").forEach(function(e){
  if (!e.labels || e.labels.length === 0) p.push("unlabelled " + e.tagName + " " + (e.name || e.id));
});
document.querySelectorAll("table").forEach(function(t){
  if (t.querySelectorAll("thead th[scope=col]").length === 0) p.push("table without column headers: " + t.id);
});
document.querySelectorAll("button").forEach(function(b){
  if (!b.textContent.trim() && !b.getAttribute("aria-label")) p.push("button without a name");
});
return p;
})()`, &problems)
			if len(problems) > 0 {
				t.Errorf("%s's %s: %v", user, page, problems)
			}
		}
	}
	w := openWindow(t, "alice")
	w.open("/networks")
	// The create form opens and submits from the keyboard alone.
	w.run(chromedp.Focus("details.create summary", chromedp.ByQuery), chromedp.KeyEvent(kb.Enter))
	var open bool
	w.eval(`document.querySelector("details.create").open`, &open)
	if !open {
		t.Errorf("Enter on the create form's summary does not open it")
	}
}
