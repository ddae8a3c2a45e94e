package plugin

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tenant.io/tenant-apiserver/pkg/tenantview"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/plugin"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// api is user's generated client, to compare the plugin's output with
// what the API holds.
func api(t *testing.T, user string) clientset.Interface {
	t.Helper()
	c, err := framework.Current().TenantClient(user)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPluginDiscovered: kubectl finds the plugin on PATH, as `kubectl plugin
// list` shows, and runs it as `kubectl tenant`.
func TestPluginDiscovered(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	alice := newUser(t, "alice")
	r := alice.kubectlRun(ctx, "plugin", "list")
	mustContain(t, "kubectl plugin list", r.stdout, filepath.Join(pluginDir, "kubectl-tenant")+"\n")
	if r.code != 0 {
		t.Errorf("kubectl plugin list: %s", r)
	}
	out := alice.ok(ctx, t, "--help")
	mustContain(t, "kubectl tenant --help", out, "kubectl tenant [command]", "whoami", "offboarding", "admin")
}

func TestWhoami(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	acme, err := api(t, stack.AdminUser).TenantV1alpha1().Tenants().Get(ctx, "acme", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// alice is listed as a member of acme and is in the host group tenant.io:acme.
	want := []string{"host group tenant.io:acme"}
	if slices.Contains(acme.Spec.Members.Users, "alice") {
		want = []string{"member", "host group tenant.io:acme"}
	}
	var id plugin.Identity
	newUser(t, "alice").okJSON(ctx, t, &id, "whoami")
	if id.User != "alice" || id.Provider || len(id.Tenants) != 1 || id.Tenants[0].Tenant != "acme" || !slices.Equal(id.Tenants[0].Via, want) {
		t.Errorf("alice's whoami: %+v, want tenant acme via %v", id, want)
	}
	out := newUser(t, "alice").ok(ctx, t, "whoami")
	mustContain(t, "alice's whoami", out, "User:     alice\n", "Tenant:   acme ("+strings.Join(want, ", ")+")\n")

	out = newUser(t, "carol").ok(ctx, t, "whoami")
	mustContain(t, "carol's whoami", out, "User:     carol\n", "Tenant:   <none>\n")
	mustNotContain(t, "carol's whoami", out, "Provider")

	// kubectl's impersonation flags reach the plugin: the provider as alice.
	id = plugin.Identity{}
	newUser(t, stack.AdminUser).okJSON(ctx, t, &id, "whoami", "--as", "alice", "--as-group", "tenant.io:acme")
	if id.User != "alice" || id.Provider || len(id.Tenants) != 1 || id.Tenants[0].Tenant != "acme" {
		t.Errorf("admin's whoami --as alice: %+v", id)
	}

	id = plugin.Identity{}
	newUser(t, stack.AdminUser).okJSON(ctx, t, &id, "whoami")
	if id.User != stack.AdminUser || !id.Provider || len(id.Tenants) != 0 {
		t.Errorf("admin's whoami: %+v, want a provider of no tenant", id)
	}
}

// TestInfo compares `kubectl tenant info` with what the API holds for the
// tenant, in its structured and its human form.
func TestInfo(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	alice := newUser(t, "alice")
	var info tenantview.Info
	alice.okJSON(ctx, t, &info, "info")

	c := api(t, "alice").TenantV1alpha1()
	acme, err := c.Tenants().Get(ctx, "acme", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Tenant != "acme" || info.Phase != "Ready" || info.PrivateBlock != acme.Status.Network.CIDR || info.NamespacePrefix != acme.Status.NamespacePrefix {
		t.Errorf("info: tenant %s phase %s block %s prefix %s; the API: Ready %s %s", info.Tenant, info.Phase, info.PrivateBlock, info.NamespacePrefix, acme.Status.Network.CIDR, acme.Status.NamespacePrefix)
	}
	var addrs []string
	for _, p := range info.PublicIPs {
		addrs = append(addrs, p.Address)
	}
	want := append([]string(nil), acme.Status.PublicIPs...)
	slices.Sort(want)
	slices.Sort(addrs)
	if len(want) != 4 || !slices.Equal(addrs, want) {
		t.Errorf("info's public IPs %v, the tenant's %v (4 expected)", addrs, want)
	}
	nss, err := c.Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Namespaces) != len(nss.Items) {
		t.Errorf("info has %d namespaces, the API %d", len(info.Namespaces), len(nss.Items))
	}
	for _, n := range nss.Items {
		i := slices.IndexFunc(info.Namespaces, func(x tenantview.NamespaceInfo) bool { return x.Name == n.Name })
		if i < 0 || info.Namespaces[i].HostNamespace != n.Status.HostNamespace || n.Status.HostNamespace == "" {
			t.Errorf("namespace %s (host %q) is not in info as it is in the API: %+v", n.Name, n.Status.HostNamespace, info.Namespaces)
		}
	}
	if i := slices.IndexFunc(info.Networks, func(n tenantview.NetworkInfo) bool { return n.Name == "default" }); i < 0 || info.Networks[i].Ready != "True" {
		t.Errorf("info's networks lack a ready default: %+v", info.Networks)
	}
	if len(info.ProviderServices) != 1 || info.ProviderServices[0].Alias != "resolver" || info.ProviderServices[0].Name != "dns" {
		t.Errorf("acme is offered the provider's dns as resolver; info says %+v", info.ProviderServices)
	}
	if len(info.Quota) < 4 {
		t.Errorf("info's quota: %+v", info.Quota)
	}

	// A VRF peering the provider makes for acme's network default shows in
	// acme's info.
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	peering := filepath.Join(root, "artifacts", "examples", "vrfpeering.yaml")
	if r := newUser(t, stack.AdminUser).kubectlRun(ctx, "apply", "-f", peering); r.code != 0 {
		t.Fatalf("applying %s: %s", peering, r)
	}
	t.Cleanup(func() { newUser(t, stack.AdminUser).kubectlRun(context.Background(), "delete", "-f", peering) })
	var withPeering tenantview.Info
	alice.okJSON(ctx, t, &withPeering, "info")
	if len(withPeering.VRFPeerings) != 1 || withPeering.VRFPeerings[0].Name != "acme-default" || withPeering.VRFPeerings[0].Network != "default" ||
		!slices.Equal(withPeering.VRFPeerings[0].Neighbors, []string{"192.0.2.1 AS65000", "192.0.2.2 AS65000"}) {
		t.Errorf("info's VRF peerings: %+v", withPeering.VRFPeerings)
	}

	human := alice.ok(ctx, t, "info")
	t.Logf("info:\n%s", human)
	dev := slices.IndexFunc(info.Namespaces, func(x tenantview.NamespaceInfo) bool { return x.Name == "dev" })
	mustContain(t, "info", human, "Tenant:         acme\n", "Private block:  "+acme.Status.Network.CIDR+"\n", "Public IPs (4, ",
		info.Namespaces[dev].HostNamespace, "resolver", "VRF peerings:", "acme-default")
	for _, line := range strings.Split(human, "\n") {
		if len(line) > 80 {
			t.Errorf("info line wider than 80 columns (%d): %q", len(line), line)
		}
	}

	// bob's tenant is offered nothing, and his info shows nothing of acme's.
	var bobs tenantview.Info
	newUser(t, "bob").okJSON(ctx, t, &bobs, "info")
	if bobs.Tenant != "globex" || len(bobs.ProviderServices) != 0 || bobs.PrivateBlock == info.PrivateBlock {
		t.Errorf("bob's info: %+v", bobs)
	}

	r := newUser(t, "carol").fails(ctx, t, 1, "info")
	mustContain(t, "carol's info", r.stderr, "error: user carol is not a member of any tenant")
	r = newUser(t, stack.AdminUser).fails(ctx, t, 1, "info")
	mustContain(t, "admin's info", r.stderr, "name one with --tenant")
	var asAdmin tenantview.Info
	newUser(t, stack.AdminUser).okJSON(ctx, t, &asAdmin, "info", "--tenant", "acme")
	if asAdmin.Tenant != "acme" || asAdmin.PrivateBlock != info.PrivateBlock || len(asAdmin.Namespaces) != len(info.Namespaces) {
		t.Errorf("the provider's info on acme: %+v", asAdmin)
	}
	r = newUser(t, "bob").fails(ctx, t, 1, "info", "--tenant", "acme")
	mustContain(t, "bob's info on acme", r.stderr, "tenant acme: not found")
}

// TestNewTenantJourney is a new tenant's first hour: the provider onboards
// it with the plugin; its member, given only a kubeconfig, finds its block
// and addresses in `info`, creates a namespace, runs plain kubectl in it
// after `ns use`, attaches a floating IP to a pod, sees why its tenancy
// cannot be deleted yet, cleans up, and the provider offboards it.
func TestNewTenantJourney(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	admin, ida := newUser(t, stack.AdminUser), newUser(t, newcomer)

	r := admin.tenant(ctx, "admin", "onboard", "initech", "--member", newcomer, "--prefix-length", "24", "--public-ips", "2",
		"--quota", "namespaces=4,floatingips=2,pods=10", "--display-name", "Initech", "--isolation", "hard")
	if r.code != 0 {
		t.Fatalf("admin onboard: %s", r)
	}
	t.Cleanup(func() {
		_ = api(t, stack.AdminUser).TenantV1alpha1().Tenants().Delete(context.Background(), "initech", metav1.DeleteOptions{})
	})
	tnt, err := api(t, stack.AdminUser).TenantV1alpha1().Tenants().Get(ctx, "initech", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tnt.Spec.Isolation != tenantv1alpha1.TenantIsolationHard {
		t.Errorf("onboard --isolation hard: spec.isolation %q", tnt.Spec.Isolation)
	}
	mustContain(t, "onboard's report", r.stdout, "Tenant:         initech (Initech)\n", "Phase:          Ready\n",
		"Private block:  "+tnt.Status.Network.CIDR+"\n", "Public IPs (2, 2 free):", tnt.Status.PublicIPs[0], tnt.Status.PublicIPs[1])
	t.Logf("admin onboard:\n%s%s", r.stderr, r.stdout)
	mustContain(t, "onboard's progress", r.stderr, "tenant.tenant.io/initech created", "phase Ready")
	if !strings.HasSuffix(tnt.Status.Network.CIDR, "/24") {
		t.Errorf("block %s, want a /24", tnt.Status.Network.CIDR)
	}

	var id plugin.Identity
	ida.okJSON(ctx, t, &id, "whoami")
	if len(id.Tenants) != 1 || id.Tenants[0].Tenant != "initech" || !slices.Equal(id.Tenants[0].Via, []string{"member"}) {
		t.Errorf("ida's whoami: %+v", id)
	}
	var info tenantview.Info
	ida.okJSON(ctx, t, &info, "info")
	if info.PrivateBlock != tnt.Status.Network.CIDR || len(info.PublicIPs) != 2 || info.PublicIPs[0].UsedBy != "" {
		t.Errorf("ida's info: block %s, public IPs %+v", info.PrivateBlock, info.PublicIPs)
	}

	out := ida.ok(ctx, t, "ns", "create", "web")
	ns, err := api(t, newcomer).TenantV1alpha1().Namespaces().Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	host := ns.Status.HostNamespace
	// It returns once web is Ready: OVN-Kubernetes has rendered web's
	// network into its host namespace, so pods can start there.
	mustContain(t, "ns create", out, "namespace.tenant.io/web created\n",
		"namespace web is ready: host namespace "+host+", attached to network default: kubectl tenant ns use web\n")
	if c := meta.FindStatusCondition(ns.Status.Conditions, tenantv1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("ns create returned before web was Ready: %+v", ns.Status.Conditions)
	}
	if net, err := api(t, newcomer).TenantV1alpha1().Networks().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if _, err := hostDynamic(t).Resource(networkAttachments).Namespace(host).Get(ctx, net.Status.HostNetwork, metav1.GetOptions{}); err != nil {
		t.Errorf("ns create said web's network is attached; its attachment %s/%s on the host: %v", host, net.Status.HostNetwork, err)
	}
	if got := strings.TrimSpace(ida.ok(ctx, t, "ns", "host", "web")); got != host || host == "" {
		t.Errorf("ns host web: %q, the API: %q", got, host)
	}
	out = ida.ok(ctx, t, "ns", "list")
	mustContain(t, "ns list", out, "NAME", "HOST NAMESPACE", "READY", "web", host, "Active")
	webRow := ""
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "web ") {
			webRow = line
		}
	}
	if f := strings.Fields(webRow); len(f) != 6 || f[4] != "True" {
		t.Errorf("ns list: web's row %q, want READY True (ns create waited for it):\n%s", webRow, out)
	}
	mustContain(t, "ns list -o name", ida.ok(ctx, t, "ns", "list", "-o", "name"), "namespace.tenant.io/default\nnamespace.tenant.io/web\n")
	out = ida.ok(ctx, t, "ns", "use", "web")
	mustContain(t, "ns use", out, "now uses namespace web (host namespace "+host+")")

	// Plain kubectl now works in the tenant's own words.
	r = ida.kubectlRun(ctx, "config", "view", "--minify", "-o", "jsonpath={.contexts[0].context.namespace}")
	if strings.TrimSpace(r.stdout) != host {
		t.Errorf("the context's namespace is %q, want %q (%s)", r.stdout, host, r)
	}
	r = ida.kubectlRun(ctx, "get", "pods")
	if r.code != 0 || !strings.Contains(r.stderr, "No resources found in "+host+" namespace.") {
		t.Errorf("kubectl get pods after ns use: %s", r)
	}
	if r = ida.kubectlRun(ctx, "apply", "-f", filepath.Join(root, "artifacts", "examples", "pod.yaml")); r.code != 0 {
		t.Fatalf("kubectl apply -f pod.yaml: %s", r)
	}
	if r = ida.kubectlRun(ctx, "get", "pod", "web", "-o", "name"); strings.TrimSpace(r.stdout) != "pod/web" {
		t.Errorf("kubectl get pod web: %s", r)
	}

	// A floating IP for the pod: the plugin maps the context's host
	// namespace back to the tenant namespace web.
	out = ida.ok(ctx, t, "fip", "create", "web-ip")
	mustContain(t, "fip create", out, "floatingip.tenant.io/web-ip created\n")
	out = ida.ok(ctx, t, "fip", "attach", "web-ip", "--pod", "web", "--port", "22/tcp", "--port", "53/udp")
	mustContain(t, "fip attach", out, "floatingip.tenant.io/web-ip attached to Pod/web\n")
	fips := api(t, newcomer).TenantV1alpha1().FloatingIPs("web")
	var fip *tenantv1alpha1.FloatingIP
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		fip, err = fips.Get(ctx, "web-ip", metav1.GetOptions{})
		return err == nil && fip.Status.Phase == tenantv1alpha1.FloatingIPPhaseAssociated, nil
	}); err != nil {
		t.Fatalf("floating IP web-ip not Associated: %+v", fip)
	}
	if fip.Spec.Target == nil || *fip.Spec.Target != (tenantv1alpha1.FloatingIPTarget{Kind: "Pod", Name: "web"}) ||
		len(fip.Spec.Ports) != 2 || fip.Spec.Ports[1] != (tenantv1alpha1.FloatingIPPort{Port: 53, Protocol: "UDP"}) {
		t.Errorf("web-ip's spec: %+v", fip.Spec)
	}
	out = ida.ok(ctx, t, "fip", "list")
	mustContain(t, "fip list", out, "web-ip", fip.Status.Address, "Pod/web", "22/TCP,53/UDP", "Associated")
	// The address is counted in use in initech's status: the provider's
	// list of Tenants shows it without reading initech's objects.
	adminTenantsRow(ctx, t, admin, "initech", func(row []string) bool {
		held := publicIPsHeld(ctx, t, newcomer)
		return held >= 1 && len(row) >= 4 && row[3] == itoa(held)+"/2"
	})
	// The address's name in the stack's public DNS zone, in the status, the
	// wide list and both forms of info.
	dnsName := "web-ip.web.initech." + stack.PublicDNSZone
	if fip.Status.DNSName != dnsName {
		t.Errorf("web-ip's status.dnsName %q, want %s", fip.Status.DNSName, dnsName)
	}
	mustContain(t, "fip list -o wide", ida.ok(ctx, t, "fip", "list", "-o", "wide"), "DNS NAME", dnsName)
	info = tenantview.Info{}
	ida.okJSON(ctx, t, &info, "info")
	if i := slices.IndexFunc(info.PublicIPs, func(p tenantview.PublicIP) bool { return p.Address == fip.Status.Address }); i < 0 ||
		info.PublicIPs[i] != (tenantview.PublicIP{Address: fip.Status.Address, UsedBy: "FloatingIP", Namespace: "web", Name: "web-ip", DNSName: dnsName}) {
		t.Errorf("info does not show %s used by FloatingIP web/web-ip, named %s: %+v", fip.Status.Address, dnsName, info.PublicIPs)
	}
	human := ida.ok(ctx, t, "info")
	t.Logf("info:\n%s", human)
	mustContain(t, "info", human, "Public DNS names:\n")
	if !slices.ContainsFunc(strings.Split(human, "\n"), func(line string) bool {
		f := strings.Fields(line)
		return len(f) == 3 && f[0] == dnsName && f[1] == fip.Status.Address && f[2] == "FloatingIP"
	}) {
		t.Errorf("info has no line %s %s FloatingIP", dnsName, fip.Status.Address)
	}

	// A floating IP for a VM that does not exist says why it waits.
	out = ida.ok(ctx, t, "fip", "create", "vm-ip", "--vm", "ghost", "--port", "22")
	mustContain(t, "fip create --vm ghost", out, "floatingip.tenant.io/vm-ip created\n", "target VirtualMachine/ghost, phase Pending (TargetNotFound: ")
	ida.ok(ctx, t, "fip", "delete", "vm-ip")

	// Why the tenancy cannot be deleted yet: the refusals name each blocker.
	r = ida.fails(ctx, t, 1, "ns", "delete", "web")
	t.Logf("ns delete web:\n%s", r.stderr)
	mustContain(t, "ns delete web", r.stderr, "Error from server (Conflict): ", "blocked by")
	if lines := strings.Count(r.stderr, "\n"); lines < 3 {
		t.Errorf("ns delete web: want the message and a line per blocker:\n%s", r.stderr)
	}
	mustContain(t, "ns delete web's causes", r.stderr, "web-ip", "web")
	r = ida.fails(ctx, t, plugin.ExitBlocked, "offboarding")
	t.Logf("offboarding:\n%s", r.stdout)
	mustContain(t, "offboarding", r.stdout, "Tenant initech cannot be deleted yet", "floatingips", "web-ip", "pods", "Running")
	var report tenantv1alpha1.OffboardingReport
	r = ida.fails(ctx, t, plugin.ExitBlocked, "offboarding", "-o", "json")
	if err := jsonUnmarshal(r.stdout, &report); err != nil || report.Ready || len(report.Blockers) < 2 {
		t.Errorf("offboarding -o json: %v %+v", err, report)
	}
	r = admin.fails(ctx, t, plugin.ExitBlocked, "admin", "offboard", "initech")
	mustContain(t, "admin offboard (blocked)", r.stdout, "cannot be deleted yet", "web-ip")
	if _, err := api(t, stack.AdminUser).TenantV1alpha1().Tenants().Get(ctx, "initech", metav1.GetOptions{}); err != nil {
		t.Fatalf("a blocked offboard deleted the tenant: %v", err)
	}

	// Clean up as the tenant, then the provider offboards it.
	out = ida.ok(ctx, t, "fip", "detach", "web-ip")
	mustContain(t, "fip detach", out, "floatingip.tenant.io/web-ip detached\n")
	ida.ok(ctx, t, "fip", "delete", "web-ip")
	if r = ida.kubectlRun(ctx, "delete", "pod", "web", "--wait=false"); r.code != 0 {
		t.Fatalf("kubectl delete pod web: %s", r)
	}
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return ida.tenant(ctx, "ns", "delete", "web").code == 0, nil
	}); err != nil {
		t.Fatalf("ns delete web never accepted: %s", ida.tenant(ctx, "ns", "delete", "web"))
	}
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return ida.tenant(ctx, "offboarding").code == 0, nil
	}); err != nil {
		t.Fatalf("offboarding still blocked: %s", ida.tenant(ctx, "offboarding"))
	}
	mustContain(t, "offboarding", ida.ok(ctx, t, "offboarding"), "Tenant initech can be deleted: nothing blocks it.")
	out = admin.ok(ctx, t, "admin", "offboard", "initech", "--wait")
	mustContain(t, "admin offboard --wait", out, `tenant.tenant.io "initech" deleted`, "tenant initech is gone")
	if _, err := api(t, stack.AdminUser).TenantV1alpha1().Tenants().Get(ctx, "initech", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("tenant initech after offboard --wait: %v", err)
	}
}

// TestAdminCommands: tenants and pools as the provider sees them, and
// refused to tenants.
func TestAdminCommands(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	admin := newUser(t, stack.AdminUser)

	// acme's public IPs in use, as alice's own view counts them, in the
	// Tenant's status and so in the provider's one list of Tenants.
	acmeRow := adminTenantsRow(ctx, t, admin, "acme", func(row []string) bool {
		return len(row) >= 4 && row[3] == itoa(publicIPsHeld(ctx, t, "alice"))+"/4"
	})
	if acmeRow[1] != "Ready" || acmeRow[2] != "10.42.0.0/16" {
		t.Errorf("admin tenants: acme's row %v, want Ready 10.42.0.0/16", acmeRow)
	}
	globexRow := adminTenantsRow(ctx, t, admin, "globex", func(row []string) bool { return len(row) >= 4 })
	if globexRow[2] != "10.43.0.0/16" || !strings.HasSuffix(globexRow[3], "/2") {
		t.Errorf("admin tenants: globex's row %v", globexRow)
	}
	mustContain(t, "admin tenants -o name", admin.ok(ctx, t, "admin", "tenants", "-o", "name"), "tenant.tenant.io/acme\n", "tenant.tenant.io/globex\n")

	pools, err := api(t, stack.AdminUser).TenantV1alpha1().AddressPools().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := admin.ok(ctx, t, "admin", "pools")
	t.Logf("admin pools:\n%s", out)
	for _, p := range pools.Items {
		want := strings.Join([]string{p.Name, string(p.Spec.Purpose), itoa64(p.Status.Capacity), itoa64(p.Status.Allocated), itoa64(p.Status.Free)}, " ")
		found := false
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.Join(strings.Fields(line), " "), want+" [") {
				found = true
			}
		}
		if !found {
			t.Errorf("admin pools has no row %q:\n%s", want, out)
		}
	}

	// A refused onboarding is the server's 422 naming the field, and leaves
	// no tenant behind.
	r := admin.fails(ctx, t, 1, "admin", "onboard", "clash", "--member", "carol", "--cidr", "10.42.128.0/24")
	mustContain(t, "admin onboard into acme's block", r.stderr, "Error from server (Invalid): ", "spec.network.cidr")
	if _, err := api(t, stack.AdminUser).TenantV1alpha1().Tenants().Get(ctx, "clash", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused onboarding left tenant clash: %v", err)
	}
	r = admin.fails(ctx, t, 1, "admin", "onboard", "clash", "--member", "carol", "--prefix-length", "24", "--isolation", "sideways")
	mustContain(t, "admin onboard --isolation sideways", r.stderr, `error: --isolation "sideways": must be hard or soft`)
	r = admin.fails(ctx, t, 1, "admin", "onboard", "clash", "--member", "carol", "--prefix-length", "24", "--quota", "gpus=1")
	mustContain(t, "admin onboard with a quota the server does not know", r.stderr, "Error from server (Invalid): ", "spec.quota.compute[gpus]")

	for _, u := range []string{"alice", "carol"} {
		r := newUser(t, u).fails(ctx, t, 1, "admin", "tenants")
		mustContain(t, u+"'s admin tenants", r.stderr, "error: user "+u+" may not manage tenants")
	}
	r = newUser(t, "alice").fails(ctx, t, 1, "admin", "onboard", "evil", "--member", "alice", "--prefix-length", "24")
	mustContain(t, "alice's admin onboard", r.stderr, "may not manage tenants")
}

// TestNetworksAndLoadBalancers: bob's networks and load balancers through
// the plugin; bad input is the server's 422 naming the field.
func TestNetworksAndLoadBalancers(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	bob := newUser(t, "bob")
	c := api(t, "bob").TenantV1alpha1()

	out := bob.ok(ctx, t, "net", "create", "blue", "--topology", "layer2", "--nat", "--shared-services")
	t.Cleanup(func() { _ = c.Networks().Delete(context.Background(), "blue", metav1.DeleteOptions{}) })
	mustContain(t, "net create", out, "network.tenant.io/blue created\n")
	n, err := c.Networks().Get(ctx, "blue", metav1.GetOptions{})
	if err != nil || n.Spec.NATGateway == nil || !n.Spec.NATGateway.Enabled || n.Spec.Topology != "Layer2" || n.Spec.ServiceNetwork != tenantv1alpha1.ServiceNetworkShared {
		t.Fatalf("network blue: %v %+v", err, n)
	}
	mustContain(t, "net list -o name", bob.ok(ctx, t, "net", "list", "-o", "name"), "network.tenant.io/blue\n", "network.tenant.io/default\n")
	mustNotContain(t, "alice's net list", newUser(t, "alice").ok(ctx, t, "net", "list", "-o", "name"), "network.tenant.io/blue\n")

	r := bob.fails(ctx, t, 1, "net", "create", "bad", "--subnet", "192.168.0.0/24")
	mustContain(t, "net create outside the block", r.stderr, "Error from server (Invalid): ", "spec.subnets")
	r = bob.fails(ctx, t, 1, "net", "create", "bad", "--topology", "ring")
	mustContain(t, "net create --topology ring", r.stderr, `error: --topology "ring": must be layer2 or layer3`)
	if _, err := c.Networks().Get(ctx, "bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused network exists: %v", err)
	}

	out = bob.ok(ctx, t, "lb", "create", "web", "-n", "dev", "--selector", "app=web", "--port", "80:8080/tcp", "--port", "443:8443")
	t.Cleanup(func() { _ = c.LoadBalancers("dev").Delete(context.Background(), "web", metav1.DeleteOptions{}) })
	mustContain(t, "lb create", out, "loadbalancer.tenant.io/web created\n")
	lb, err := c.LoadBalancers("dev").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lb.Spec.Ports) != 2 || lb.Spec.Ports[0].Name != "tcp-80" || lb.Spec.Ports[1].TargetPort.IntValue() != 8443 || lb.Spec.Selector["app"] != "web" {
		t.Errorf("load balancer web's spec: %+v", lb.Spec)
	}
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		lb, err = c.LoadBalancers("dev").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && lb.Status.Address != "", nil
	}); err != nil {
		t.Fatalf("load balancer web got no address: %+v", lb.Status)
	}
	mustContain(t, "lb list", bob.ok(ctx, t, "lb", "list", "-n", "dev"), "web", lb.Status.Address, "80:8080/TCP,443:8443/TCP", "app=web")
	mustContain(t, "lb list -A", bob.ok(ctx, t, "lb", "list", "-A"), "NAMESPACE", "dev")
	mustNotContain(t, "alice's lb list -A", newUser(t, "alice").ok(ctx, t, "lb", "list", "-A", "-o", "name"), lb.Status.Address)

	r = bob.fails(ctx, t, 1, "lb", "create", "noports", "-n", "dev", "--selector", "app=web")
	mustContain(t, "lb create without ports", r.stderr, "Error from server (Invalid): ", "spec.ports")
	r = bob.fails(ctx, t, 1, "lb", "create", "x", "-n", "nowhere", "--port", "80")
	mustContain(t, "lb create in a namespace bob does not have", r.stderr, "Error from server (NotFound)")

	bob.ok(ctx, t, "lb", "delete", "web", "-n", "dev")
	bob.ok(ctx, t, "net", "delete", "blue")
	if _, err := c.LoadBalancers("dev").Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("load balancer web after lb delete: %v", err)
	}
}

// TestCompletion: the shells' completion scripts, and kubectl's completion
// of plugins (kubectl_complete-tenant) completing the tenant's own names.
func TestCompletion(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	alice := newUser(t, "alice")
	plug := filepath.Join(pluginDir, "kubectl-tenant")
	mustContain(t, "completion bash", alice.runProgram(ctx, plug, "completion", "bash").stdout, "__start_kubectl-tenant")
	mustContain(t, "completion zsh", alice.runProgram(ctx, plug, "completion", "zsh").stdout, "#compdef kubectl-tenant")

	r := alice.kubectlRun(ctx, "__complete", "tenant", "ns", "use", "")
	mustContain(t, "kubectl's completion of kubectl tenant ns use", r.stdout, "default\n", "dev\n")
	r = alice.kubectlRun(ctx, "__complete", "tenant", "n")
	mustContain(t, "kubectl's completion of kubectl tenant n", r.stdout, "ns\t", "net\t")
	mustNotContain(t, "bob's completion", newUser(t, "bob").runProgram(ctx, filepath.Join(pluginDir, "kubectl_complete-tenant"), "net", "delete", "").stdout, "acme")
}

// TestAdminViewCommands: the provider reads every tenant's objects through
// the plugin (admin.tenant.io): same-named objects of two tenants apart,
// what is not Ready and why, and which tenant holds an address.
func TestAdminViewCommands(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	admin := newUser(t, stack.AdminUser)

	out := admin.ok(ctx, t, "admin", "networks")
	t.Logf("admin networks:\n%s", out)
	header := strings.Fields(strings.SplitN(out, "\n", 2)[0])
	if len(header) < 2 || header[0] != "NAME" || header[1] != "TENANT" {
		t.Errorf("admin networks: header %v, want NAME TENANT ...", header)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n")[1:] {
		if f := strings.Fields(line); len(f) > 1 {
			rows[f[0]] = f
		}
	}
	if rows["acme.default"] == nil || rows["acme.default"][1] != "acme" || rows["globex.default"] == nil || rows["globex.default"][1] != "globex" {
		t.Errorf("admin networks: want acme.default of acme and globex.default of globex:\n%s", out)
	}
	if got := admin.ok(ctx, t, "admin", "networks", "--tenant", "globex", "-o", "name"); !strings.Contains(got, "network.admin.tenant.io/globex.default\n") || strings.Contains(got, "acme.") {
		t.Errorf("admin networks --tenant globex -o name: got\n%s", got)
	}
	var list struct {
		Items []struct {
			APIVersion string                `json:"apiVersion"`
			Metadata   struct{ Name string } `json:"metadata"`
		} `json:"items"`
	}
	admin.okJSON(ctx, t, &list, "admin", "networks", "--tenant", "acme")
	if len(list.Items) == 0 || list.Items[0].APIVersion != "admin.tenant.io/v1alpha1" || !strings.HasPrefix(list.Items[0].Metadata.Name, "acme.") {
		t.Errorf("admin networks --tenant acme -o json: %+v", list.Items)
	}

	// A FloatingIP whose target does not exist is not Ready, and says why.
	bob := api(t, "bob").TenantV1alpha1()
	fip := &tenantv1alpha1.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: "ghost", Namespace: "default"},
		Spec: tenantv1alpha1.FloatingIPSpec{Target: &tenantv1alpha1.FloatingIPTarget{Kind: tenantv1alpha1.FloatingIPTargetPod, Name: "no-such-pod"}}}
	if _, err := bob.FloatingIPs("default").Create(ctx, fip, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bob.FloatingIPs("default").Delete(context.Background(), "ghost", metav1.DeleteOptions{}) })
	var address string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		f, err := bob.FloatingIPs("default").Get(ctx, "ghost", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		address = f.Status.Address
		c := meta.FindStatusCondition(f.Status.Conditions, "Ready")
		return address != "" && c != nil && c.Reason == "TargetNotFound", nil
	})
	if err != nil {
		t.Fatalf("FloatingIP ghost never held an address with Ready reason TargetNotFound: %v", err)
	}
	out = admin.ok(ctx, t, "admin", "fips", "--not-ready", "-o", "wide")
	t.Logf("admin fips --not-ready -o wide:\n%s", out)
	found := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && f[0] == "globex.default" && f[1] == "ghost" {
			found = f[2] == "globex" && f[3] == address && strings.Contains(line, "TargetNotFound")
		}
		if len(f) > 0 && strings.HasPrefix(f[0], "acme.") && strings.Contains(line, " True ") {
			t.Errorf("admin fips --not-ready lists a Ready FloatingIP: %s", line)
		}
	}
	if !found {
		t.Errorf("admin fips --not-ready -o wide: no row globex.default ghost globex %s ... TargetNotFound", address)
	}
	mustNotContain(t, "admin fips --tenant acme", admin.ok(ctx, t, "admin", "fips", "--tenant", "acme"), "ghost")

	// Which tenant holds an address: the public IP, and an address of a block.
	out = admin.ok(ctx, t, "admin", "whois", address)
	t.Logf("admin whois %s:\n%s", address, out)
	mustContain(t, "admin whois "+address, out, "globex   Tenant", "public IP", "FloatingIP   globex.default/ghost")
	out = admin.ok(ctx, t, "admin", "whois", "10.43.0.9")
	mustContain(t, "admin whois 10.43.0.9", out, "private block 10.43.0.0/16", "globex.default")
	mustNotContain(t, "admin whois 10.43.0.9", out, "acme")
	r := admin.fails(ctx, t, 1, "admin", "whois", "192.0.2.250")
	mustContain(t, "admin whois of a free address", r.stderr, "no tenant holds 192.0.2.250")
	r = admin.fails(ctx, t, 1, "admin", "whois", "not-an-ip")
	mustContain(t, "admin whois not-an-ip", r.stderr, `"not-an-ip" is not an IPv4 address`)

	// Tenant members are refused, by host RBAC.
	r = newUser(t, "alice").fails(ctx, t, 1, "admin", "networks")
	mustContain(t, "alice's admin networks", r.stderr, "Forbidden", "networks.admin.tenant.io")
}

// publicIPsHeld counts the public addresses user's tenant's FloatingIPs,
// LoadBalancers and NAT gateways hold, as the tenant's own view shows them.
func publicIPsHeld(ctx context.Context, t *testing.T, user string) int {
	t.Helper()
	c := api(t, user).TenantV1alpha1()
	held := map[string]bool{}
	fips, err := c.FloatingIPs("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fips.Items {
		held[f.Status.Address] = true
	}
	lbs, err := c.LoadBalancers("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, lb := range lbs.Items {
		held[lb.Status.Address] = true
	}
	nets, err := c.Networks().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nets.Items {
		held[n.Status.NATGatewayIP] = true
	}
	delete(held, "")
	return len(held)
}

// adminTenantsRow runs `admin tenants` until tenant's row is as want
// says (the syncer counts public IPs in use a moment after they change),
// and returns the row; after a minute the test fails with the last output.
func adminTenantsRow(ctx context.Context, t *testing.T, admin *user, tenant string, want func(row []string) bool) []string {
	t.Helper()
	var out string
	var row []string
	if err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		out, row = admin.ok(ctx, t, "admin", "tenants"), nil
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == tenant {
				row = f
			}
		}
		return row != nil && want(row), nil
	}); err != nil {
		t.Fatalf("admin tenants: %s's row %v is not as expected:\n%s", tenant, row, out)
	}
	t.Logf("admin tenants:\n%s", out)
	return row
}
