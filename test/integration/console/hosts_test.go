package console

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestHostClaims: the provider offers acme a class of servers and room for
// one; alice finds the class on the Hosts page, claims a server through
// the form, sees it listed (Pending: no syncer binds servers here), powers
// it off and asks for a reboot from its page with the keyboard, is refused
// a second claim with the quota's 403, and deletes it. bob does not see
// acme's class.
func TestHostClaims(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	admin := tenantClient(t, stack.AdminUser).TenantV1alpha1()
	class := &tenantv1alpha1.HostClass{ObjectMeta: metav1.ObjectMeta{Name: "metal-console"},
		Spec: tenantv1alpha1.HostClassSpec{HostNamespace: "metal-console-inventory", TenantLabels: []string{"rack"}, Tenants: []string{"acme"}}}
	if _, err := admin.HostClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.HostClasses().Delete(context.Background(), class.Name, metav1.DeleteOptions{}) })
	if _, err := admin.Tenants().Patch(ctx, "acme", types.MergePatchType, []byte(`{"spec":{"quota":{"hostClaims":1}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = tenantClient(t, "alice").TenantV1alpha1().HostClaims("dev").Delete(context.Background(), "shop-host", metav1.DeleteOptions{})
		_, _ = admin.Tenants().Patch(context.Background(), "acme", types.MergePatchType, []byte(`{"spec":{"quota":{"hostClaims":0}}}`), metav1.PatchOptions{})
	})
	claims := tenantClient(t, "alice").TenantV1alpha1().HostClaims("dev")

	alice := openWindow(t, "alice")
	alice.open("/hostclaims")
	if got := alice.eval2(`document.querySelector("#hostclasses-table tr[data-key='metal-console'] td:nth-child(2)").textContent`); got != "rack" {
		t.Errorf("the classes offered: metal-console's labels %q, want rack", got)
	}
	mustNotContain(t, "alice's Hosts page", alice.text("main"), "metal-console-inventory")
	if got := alice.eval2(`document.getElementById("hostClass").value`); got != "metal-console" {
		t.Errorf("the form's class select: %q, want metal-console", got)
	}

	const checksum = "3f79bb7b435b05321651daefd374cdc681dc06faa65e374e38337b88ca046dea"
	alice.fill("create-form", map[string]string{"namespace": "dev", "name": "shop-host", "hostClass": "metal-console", "selector": "rack=r1",
		"image": "https://images.example.net/debian-13.qcow2", "checksum": checksum, "userData": "shop-init", "online": "on"})
	if got := alice.text("#notice"); got != "HostClaim shop-host created." {
		t.Fatalf("after create: notice %q, error %q", got, alice.text("#api-error"))
	}
	alice.waitFor("shop-host listed", cell("hostclaims", "dev/shop-host", 3)+` === "Pending"`, 30*time.Second)
	if got := alice.eval2(cell("hostclaims", "dev/shop-host", 4)); got != "metal-console" {
		t.Errorf("shop-host's class on the page %q", got)
	}
	if got := alice.eval2(cell("hostclaims", "dev/shop-host", 7)); got != "on" {
		t.Errorf("shop-host's online on the page %q, want on", got)
	}
	h, err := claims.Get(ctx, "shop-host", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !h.Spec.Online || h.Spec.Image == nil || h.Spec.Image.Checksum != checksum || h.Spec.UserData == nil || h.Spec.UserData.Name != "shop-init" ||
		h.Spec.HostSelector == nil || h.Spec.HostSelector.MatchLabels["rack"] != "r1" {
		t.Errorf("shop-host's spec as the form made it: %+v", h.Spec)
	}
	alice.screenshot("hostclaims")

	// The quota's 403, as the API states it.
	alice.fill("create-form", map[string]string{"namespace": "dev", "name": "one-too-many", "hostClass": "metal-console", "image": "", "checksum": "", "userData": "", "online": ""})
	if code, msg := alice.errorCode(), alice.text("#api-error"); code != 403 || !strings.Contains(msg, "exceeded quota: hostClaims") {
		t.Errorf("a second claim: %d %q, want the API's 403", code, msg)
	}

	// Power off and reboot, from the keyboard.
	alice.open("/hostclaims/dev/shop-host")
	alice.markPage()
	alice.run(chromedp.Focus("#power-off", chromedp.ByID), chromedp.KeyEvent(kb.Enter))
	alice.waitNewPage()
	if got := alice.text("#notice"); got != "HostClaim updated." {
		t.Errorf("after power off: notice %q, error %q", got, alice.text("#api-error"))
	}
	if h, err = claims.Get(ctx, "shop-host", metav1.GetOptions{}); err != nil || h.Spec.Online {
		t.Errorf("shop-host after Power off: %v, spec.online %v", err, h.Spec.Online)
	}
	before := time.Now().Add(-time.Second)
	alice.markPage()
	alice.run(chromedp.Focus("#reboot", chromedp.ByID), chromedp.KeyEvent(kb.Enter))
	alice.waitNewPage()
	if h, err = claims.Get(ctx, "shop-host", metav1.GetOptions{}); err != nil || h.Spec.RebootRequestedAt == nil || h.Spec.RebootRequestedAt.Time.Before(before) {
		t.Errorf("shop-host after Reboot: %v, spec.rebootRequestedAt %v", err, h.Spec.RebootRequestedAt)
	}
	if got := alice.text("#host-reboot-requested"); got == "never" || got == "" {
		t.Errorf("the page's reboot request after Reboot: %q", got)
	}
	if alice.text("#power-on") != "Power on" {
		t.Errorf("a powered-off claim's page offers no Power on")
	}
	alice.screenshot("hostclaim")

	// bob sees neither the class nor the claim.
	bob := openWindow(t, "bob")
	bob.open("/hostclaims")
	mustNotContain(t, "bob's Hosts page", bob.text("main"), "metal-console", "shop-host")

	// Delete from its page.
	alice.run(chromedp.Click("main > details summary", chromedp.ByQuery))
	alice.markPage()
	alice.run(chromedp.Click("main > details button", chromedp.ByQuery))
	alice.waitNewPage()
	if got := alice.text("#notice"); got != "HostClaim dev/shop-host deleted." {
		t.Errorf("after delete: notice %q, error %q", got, alice.text("#api-error"))
	}
	if _, err := claims.Get(ctx, "shop-host", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("shop-host after delete: %v", err)
	}
}

// mustNotContain fails the test if s contains any of unwanted.
func mustNotContain(t *testing.T, what, s string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(s, w) {
			t.Errorf("%s contains %q:\n%s", what, w, s)
		}
	}
}
