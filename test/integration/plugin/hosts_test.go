package plugin

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/pkg/tenantview"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestHosts: the provider onboards tenant hostco with room for two
// servers and offers it a HostClass; its member hana sees the class (not
// the provider's inventory namespace), claims servers, powers one on,
// reboots it, removes its image, is refused a third by the quota with the
// server's 403, and deletes them. bob (globex) sees neither the class nor
// the claims. No syncer binds servers here: the claims stay Pending, and
// the test checks what the API records.
func TestHosts(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	admin, hana, bob := newUser(t, stack.AdminUser), newUser(t, hoster), newUser(t, "bob")
	adminAPI := api(t, stack.AdminUser).TenantV1alpha1()

	r := admin.tenant(ctx, "admin", "onboard", "hostco", "--member", hoster, "--prefix-length", "24", "--quota", "namespaces=2,hostclaims=2")
	if r.code != 0 {
		t.Fatalf("admin onboard hostco: %s", r)
	}
	t.Cleanup(func() { _ = adminAPI.Tenants().Delete(context.Background(), "hostco", metav1.DeleteOptions{}) })
	tnt, err := adminAPI.Tenants().Get(ctx, "hostco", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q := tnt.Spec.Quota.HostClaims; q == nil || *q != 2 {
		t.Fatalf("onboard --quota hostclaims=2: spec.quota.hostClaims %v", q)
	}

	for _, c := range []*tenantv1alpha1.HostClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "metal-hostco"}, Spec: tenantv1alpha1.HostClassSpec{
			HostNamespace: "metal-inventory", TenantLabels: []string{"rack"}, Tenants: []string{"hostco"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "metal-globex"}, Spec: tenantv1alpha1.HostClassSpec{
			HostNamespace: "metal-inventory-globex", Hardware: tenantv1alpha1.HostHardwareNone, Tenants: []string{"globex"}}},
	} {
		if _, err := adminAPI.HostClasses().Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		name := c.Name
		t.Cleanup(func() { _ = adminAPI.HostClasses().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}

	out := hana.ok(ctx, t, "ns", "create", "dev")
	mustContain(t, "ns create dev", out, "namespace.tenant.io/dev created\n")

	// The classes offered: hostco's own, without the provider's namespace.
	out = hana.ok(ctx, t, "host", "classes")
	t.Logf("host classes:\n%s", out)
	mustContain(t, "hana's host classes", out, "NAME", "LABELS", "AVAILABLE", "HARDWARE", "metal-hostco", "rack", "Summary")
	mustNotContain(t, "hana's host classes", out, "metal-globex", "metal-inventory")
	mustNotContain(t, "hana's host classes -o yaml", hana.ok(ctx, t, "host", "classes", "-o", "yaml"), "metal-inventory", "globex")
	out = bob.ok(ctx, t, "host", "classes")
	mustContain(t, "bob's host classes", out, "metal-globex", "None")
	mustNotContain(t, "bob's host classes", out, "metal-hostco", "metal-inventory")

	// Claims.
	const checksum = "3f79bb7b435b05321651daefd374cdc681dc06faa65e374e38337b88ca046dea"
	out = hana.ok(ctx, t, "host", "create", "db-1", "-n", "dev", "--class", "metal-hostco", "--selector", "rack=r1",
		"--image", "https://images.example.net/debian-13.qcow2", "--checksum", checksum, "--checksum-type", "sha256", "--format", "qcow2",
		"--user-data", "db-cloud-init", "--network-data", "db-net")
	mustContain(t, "host create db-1", out, "hostclaim.tenant.io/db-1 created (phase Pending")
	claims := api(t, hoster).TenantV1alpha1().HostClaims("dev")
	db1, err := claims.Get(ctx, "db-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := db1.Spec; s.HostClass != "metal-hostco" || s.Kind != tenantv1alpha1.HostClaimBareMetal || s.HostSelector == nil || s.HostSelector.MatchLabels["rack"] != "r1" ||
		s.Online || s.Image == nil || s.Image.Checksum != checksum || s.Image.Format != "qcow2" || s.UserData == nil || s.UserData.Name != "db-cloud-init" ||
		s.NetworkData == nil || s.NetworkData.Name != "db-net" || s.MetaData != nil {
		t.Errorf("db-1's spec: %+v", s)
	}
	hana.ok(ctx, t, "host", "create", "db-2", "-n", "dev", "--class", "metal-hostco", "--online")

	out = hana.ok(ctx, t, "host", "list", "-n", "dev")
	t.Logf("host list:\n%s", out)
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = f
		}
	}
	if h := rows["NAME"]; strings.Join(h, " ") != "NAME PHASE CLASS ADDRESS POWER AGE" {
		t.Errorf("host list's header: %v", h)
	}
	for _, n := range []string{"db-1", "db-2"} {
		if f := rows[n]; len(f) < 5 || f[1] != "Pending" || f[2] != "metal-hostco" || f[3] != "<none>" || f[4] != "<none>" {
			t.Errorf("host list: %s's row %v, want Pending metal-hostco <none> <none>", n, f)
		}
	}
	mustContain(t, "host list -A -o wide", hana.ok(ctx, t, "host", "list", "-A", "-o", "wide"), "NAMESPACE", "ONLINE", "IMAGE", "dev", "https://images.example.net/debian-13.qcow2")
	mustContain(t, "host list -o name", hana.ok(ctx, t, "host", "list", "-n", "dev", "-o", "name"), "hostclaim.tenant.io/db-1\nhostclaim.tenant.io/db-2\n")

	// Power, reboot, image.
	out = hana.ok(ctx, t, "host", "power", "db-1", "on", "-n", "dev")
	mustContain(t, "host power db-1 on", out, "hostclaim.tenant.io/db-1 powered on\n")
	if db1, err = claims.Get(ctx, "db-1", metav1.GetOptions{}); err != nil || !db1.Spec.Online {
		t.Errorf("db-1 after power on: %v, spec.online %v", err, db1.Spec.Online)
	}
	before := time.Now().Add(-time.Second)
	out = hana.ok(ctx, t, "host", "reboot", "db-1", "-n", "dev")
	mustContain(t, "host reboot db-1", out, "hostclaim.tenant.io/db-1 reboot requested\n")
	if db1, err = claims.Get(ctx, "db-1", metav1.GetOptions{}); err != nil || db1.Spec.RebootRequestedAt == nil || db1.Spec.RebootRequestedAt.Time.Before(before) {
		t.Errorf("db-1 after reboot: %v, spec.rebootRequestedAt %v (asked after %s)", err, db1.Spec.RebootRequestedAt, before)
	}
	r = hana.fails(ctx, t, 1, "host", "power", "db-1", "sideways", "-n", "dev")
	mustContain(t, "host power sideways", r.stderr, `error: power "sideways": must be on or off`)
	r = hana.fails(ctx, t, 1, "host", "image", "db-1", "-n", "dev", "--image", "https://images.example.net/other.qcow2", "--checksum", checksum)
	mustContain(t, "host image over another image", r.stderr, "Error from server (Invalid): ", "spec.image", "remove the image first")
	out = hana.ok(ctx, t, "host", "image", "db-1", "-n", "dev", "--remove")
	mustContain(t, "host image --remove", out, "hostclaim.tenant.io/db-1 image removed\n")
	if db1, err = claims.Get(ctx, "db-1", metav1.GetOptions{}); err != nil || db1.Spec.Image != nil {
		t.Errorf("db-1 after image --remove: %v, spec.image %+v", err, db1.Spec.Image)
	}
	hana.ok(ctx, t, "host", "power", "db-2", "off", "-n", "dev")
	if db2, err := claims.Get(ctx, "db-2", metav1.GetOptions{}); err != nil || db2.Spec.Online {
		t.Errorf("db-2 after power off: %v", err)
	}

	// Refusals are the server's: the quota's 403, a class not offered or
	// a label the class does not let tenants select on.
	r = hana.fails(ctx, t, 1, "host", "create", "db-3", "-n", "dev", "--class", "metal-hostco")
	t.Logf("a third claim:\n%s", r.stderr)
	mustContain(t, "a third claim", r.stderr, "Error from server (Forbidden): ", "exceeded quota: hostClaims, requested 1, used 2, limited 2")
	hana.ok(ctx, t, "host", "delete", "db-2", "-n", "dev")
	r = hana.fails(ctx, t, 1, "host", "create", "db-3", "-n", "dev", "--class", "metal-globex")
	mustContain(t, "a claim of globex's class", r.stderr, "Error from server (Invalid): ", "spec.hostClass: Not found")
	r = hana.fails(ctx, t, 1, "host", "create", "db-3", "-n", "dev", "--class", "metal-hostco", "--selector", "serial=x1")
	mustContain(t, "a claim selecting on another label", r.stderr, "Error from server (Invalid): ", "spec.hostSelector.matchLabels[serial]", "may be selected on rack")
	r = hana.fails(ctx, t, 1, "host", "create", "db-3", "-n", "dev")
	mustContain(t, "host create without --class", r.stderr, "--class is required")

	// info and the provider's tenants count them.
	var info tenantview.Info
	hana.okJSON(ctx, t, &info, "info")
	if len(info.Hosts) != 1 || info.Hosts[0] != (tenantview.HostInfo{Name: "db-1", Namespace: "dev", HostClass: "metal-hostco", Phase: "Pending"}) {
		t.Errorf("info's hosts: %+v", info.Hosts)
	}
	found := false
	for _, q := range info.Quota {
		if q.Resource == "hostclaims" {
			found = q == tenantview.QuotaLine{Resource: "hostclaims", Used: "1", Limit: "2"}
		}
	}
	if !found {
		t.Errorf("info's quota: no line hostclaims 1/2: %+v", info.Quota)
	}
	mustContain(t, "info", hana.ok(ctx, t, "info"), "Hosts (kubectl tenant host list -A):", "db-1")
	out = admin.ok(ctx, t, "admin", "tenants")
	mustContain(t, "admin tenants", out, "HOSTS")
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 8 && f[0] == "hostco" && f[8] != "1/2" {
			t.Errorf("admin tenants: hostco's HOSTS %q, want 1/2:\n%s", f[8], out)
		}
	}
	// The provider's view of every tenant's claims.
	out = admin.ok(ctx, t, "admin", "hosts", "--tenant", "hostco", "-o", "wide")
	mustContain(t, "admin hosts --tenant hostco -o wide", out, "NAMESPACE", "TENANT", "CLASS", "ONLINE", "BOOT MAC")
	if !slices.ContainsFunc(strings.Split(out, "\n"), func(line string) bool {
		f := strings.Fields(line)
		return len(f) > 4 && f[0] == "hostco.dev" && f[1] == "db-1" && f[2] == "hostco" && f[4] == "metal-hostco"
	}) {
		t.Errorf("admin hosts --tenant hostco -o wide: no row hostco.dev db-1 hostco <phase> metal-hostco:\n%s", out)
	}
	mustNotContain(t, "admin hosts --tenant globex", admin.ok(ctx, t, "admin", "hosts", "--tenant", "globex"), "db-1")

	// Completion of claim names.
	r = hana.kubectlRun(ctx, "__complete", "tenant", "host", "reboot", "-n", "dev", "")
	mustContain(t, "completion of host reboot", r.stdout, "db-1\n")
	r = hana.kubectlRun(ctx, "__complete", "tenant", "host", "create", "x", "--class", "")
	mustContain(t, "completion of host create --class", r.stdout, "metal-hostco\n")

	// Another tenant's member: none of it.
	mustNotContain(t, "bob's host list -A", bob.ok(ctx, t, "host", "list", "-A", "-o", "name"), "db-1")
	if _, err := api(t, "bob").TenantV1alpha1().HostClaims("dev").Get(ctx, "db-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("bob's get of hostco's db-1: %v, want 404", err)
	}
	r = bob.fails(ctx, t, 1, "host", "power", "db-1", "off", "-n", "dev")
	mustContain(t, "bob's host power db-1", r.stderr, "Error from server (NotFound): ")
	r = bob.fails(ctx, t, 1, "host", "delete", "db-1", "-n", "dev")
	mustContain(t, "bob's host delete db-1", r.stderr, "Error from server (NotFound): ")

	out = hana.ok(ctx, t, "host", "delete", "db-1", "-n", "dev")
	mustContain(t, "host delete db-1", out, `hostclaim.tenant.io "db-1" deleted`)
	if _, err := claims.Get(ctx, "db-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("db-1 after host delete: %v", err)
	}
}
