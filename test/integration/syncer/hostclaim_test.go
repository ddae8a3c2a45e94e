package syncer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
)

// TestHostClaims takes servers through a claim's whole life on the real
// host's BareMetalHost CRD, with the baremetal-operator's part played on
// the servers' status by the stack's stand-in (stack.BareMetalOperatorStandIn):
// claim -> bound -> provisioned -> online -> rebooted -> released ->
// cleaned -> claimed by another tenant, each step seen by the tenants only
// through their HostClaims.
func TestHostClaims(t *testing.T) {
	ctx, cancelAll := context.WithTimeout(context.Background(), 4*slowTimeout)
	defer cancelAll()
	_, dyn := hostClients(t)
	host, _ := hostClients(t)
	admin := tenantClient(t, stack.AdminUser)
	pool := "metal3-" + uniqueName(t)
	if len(pool) > 63 {
		pool = pool[:63]
	}
	// server-001 and server-002 are medium, server-003 large.
	if err := stack.CreateDemoBareMetalHosts(ctx, dyn, pool, 3, func(i int) map[string]string {
		kind := "medium"
		if i == 3 {
			kind = "large"
		}
		return map[string]string{"infra-kind": kind, "rack": "r1"}
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = host.CoreV1().Namespaces().Delete(context.Background(), pool, metav1.DeleteOptions{})
	})

	alice := onboard(ctx, t, tenantSpec{name: uniqueName(t) + "a", users: []string{hostUserA}, hostClaims: 1})
	bob := onboard(ctx, t, tenantSpec{name: uniqueName(t) + "b", users: []string{hostUserB}, hostClaims: 2})
	mira, moss := tenantClient(t, hostUserA), tenantClient(t, hostUserB)

	className, privateClass := "bm-"+randomHex(t, 4), "solo-"+randomHex(t, 4)
	for _, hc := range []*tenantv1alpha1.HostClass{
		{ObjectMeta: metav1.ObjectMeta{Name: className}, Spec: tenantv1alpha1.HostClassSpec{
			HostNamespace: pool, TenantLabels: []string{"infra-kind"}, Tenants: []string{alice.Name, bob.Name}}},
		{ObjectMeta: metav1.ObjectMeta{Name: privateClass}, Spec: tenantv1alpha1.HostClassSpec{
			HostNamespace: pool, HostSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"infra-kind": "medium"}},
			TenantLabels: []string{"infra-kind"}, Tenants: []string{alice.Name}}},
	} {
		if _, err := admin.TenantV1alpha1().HostClasses().Create(ctx, hc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		name := hc.Name
		t.Cleanup(func() {
			_ = admin.TenantV1alpha1().HostClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	// The class counts its servers once the stand-in has inspected them.
	eventually(ctx, t, syncTimeout, "HostClass "+className+" counts 3 available servers", func(ctx context.Context) (bool, string) {
		c, err := admin.TenantV1alpha1().HostClasses().Get(ctx, className, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return c.Status.Hosts == 3 && c.Status.Available == 3, fmt.Sprintf("%+v", c.Status)
	})

	t.Run("TenantsSeeTheClassesOfferedRedacted", func(t *testing.T) {
		list, err := moss.TenantV1alpha1().HostClasses().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].Name != className {
			t.Fatalf("bob lists HostClasses %v, want only %s", names(list.Items), className)
		}
		c := list.Items[0]
		if c.Spec.HostNamespace != "" || c.Spec.HostSelector != nil || c.Status.Hosts != 0 || c.Status.Claimed != 0 || len(c.Spec.Tenants) != 1 {
			t.Errorf("bob reads more of the class than the offer: %+v", c)
		}
		if got := fmt.Sprint(c.Status.Labels); !strings.Contains(got, "large") || !strings.Contains(got, "medium") {
			t.Errorf("the class shows its tenant label values %s, want medium and large", got)
		}
		if _, err := moss.TenantV1alpha1().HostClasses().Get(ctx, privateClass, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("bob reads HostClass %s offered to alice alone: %v", privateClass, err)
		}
	})

	t.Run("BadClaimsAreRefused", func(t *testing.T) {
		claims := moss.TenantV1alpha1().HostClaims(defaultNamespace)
		_, err := claims.Create(ctx, hostClaim("other", privateClass, nil), metav1.CreateOptions{})
		wantStatus(t, "a claim of a class offered to another tenant", err, 422, "spec.hostClass")
		_, err = claims.Create(ctx, hostClaim("nope", "no-such-class", nil), metav1.CreateOptions{})
		wantStatus(t, "a claim of a class that does not exist", err, 422, "spec.hostClass")
		_, err = claims.Create(ctx, hostClaim("rack", className, map[string]string{"rack": "r1"}), metav1.CreateOptions{})
		wantStatus(t, "a selector on a label the class does not publish", err, 422, "spec.hostSelector.matchLabels[rack]")
		bad := hostClaim("bad", className, nil)
		bad.Spec.Image = &tenantv1alpha1.HostImage{URL: "file:///etc/passwd", Checksum: "abc"}
		bad.Spec.UserData = &tenantv1alpha1.HostDataSecret{Name: "../other/secret"}
		_, err = claims.Create(ctx, bad, metav1.CreateOptions{})
		wantStatus(t, "a local image URL and a Secret path", err, 422, "spec.image.url", "spec.userData.name")
	})

	aliceNS := hostnames.Namespace(alice.Name, alice.UID, defaultNamespace)
	miraHost, _ := hostClientsAs(t, hostUserA)

	// Alice claims the large server, and provisions it.
	aliceClaims := mira.TenantV1alpha1().HostClaims(defaultNamespace)
	c1 := hostClaim("web", className, map[string]string{"infra-kind": "large"})
	c1.Spec.UserData = &tenantv1alpha1.HostDataSecret{Name: "boot"}
	c1, err := aliceClaims.Create(ctx, c1, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = aliceClaims.Delete(context.Background(), "web", metav1.DeleteOptions{}) })
	bound := waitClaim(ctx, t, mira, "web", "bound", func(c *tenantv1alpha1.HostClaim) bool {
		return c.Status.Phase == tenantv1alpha1.HostClaimBound && conditionTrue(c.Status.Conditions, "Associated")
	})
	server := consumerOf(ctx, t, dyn, pool, c1.UID)
	if server != "server-003" {
		t.Fatalf("claim web is bound to %s, want server-003 (the large one)", server)
	}
	if bound.Status.BootMACAddress == "" || len(bound.Status.NICs) == 0 || bound.Status.Hardware == nil || bound.Status.Hardware.CPUCount == 0 {
		t.Errorf("the bound claim does not describe its server: %+v", bound.Status)
	}
	wantNothingOfTheServer(t, bound, pool, server)
	// Its user data Secret does not exist yet: the claim says so, and
	// notices when it appears.
	if r := findCondition(bound.Status.Conditions, "Ready"); r == nil || r.Reason != "DataNotFound" || !strings.Contains(r.Message, `Secret "boot" not found`) {
		t.Errorf("Ready before the user data exists: %+v", r)
	}
	if _, err := miraHost.CoreV1().Secrets(aliceNS).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "boot"},
		StringData: map[string]string{"userData": "#cloud-config\nhostname: alice-web\n"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClaim(ctx, t, mira, "web", "user data found, no image yet", func(c *tenantv1alpha1.HostClaim) bool {
		r := findCondition(c.Status.Conditions, "Ready")
		return r != nil && r.Reason == "NoImage"
	})

	// Data larger than a config drive takes is not copied, and no image
	// is written with it.
	if _, err := miraHost.CoreV1().Secrets(aliceNS).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "huge"},
		Data:       map[string][]byte{"userData": []byte(strings.Repeat("#", 70<<10))},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := aliceClaims.Patch(ctx, "web", types.MergePatchType,
		[]byte(`{"spec":{"online":true,"userData":{"name":"huge"},"image":{"url":"https://images.example.net/fedora.qcow2","checksum":"https://images.example.net/fedora.qcow2.sha256sum","format":"qcow2"}}}`),
		metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClaim(ctx, t, mira, "web", "refusing 70 KiB of user data", func(c *tenantv1alpha1.HostClaim) bool {
		r := findCondition(c.Status.Conditions, "Ready")
		return c.Status.ObservedGeneration == c.Generation && r != nil && r.Reason == "DataInvalid" && strings.Contains(r.Message, "at most 65536")
	})
	if img, found, _ := unstructured.NestedMap(getHost(ctx, t, dyn, pool, server).Object, "spec", "image"); found {
		t.Errorf("the server got image %v with user data that was refused", img)
	}
	if _, err := aliceClaims.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"userData":{"name":"boot"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClaim(ctx, t, mira, "web", "provisioned and on", func(c *tenantv1alpha1.HostClaim) bool {
		return c.Status.Phase == tenantv1alpha1.HostClaimProvisioned && c.Status.Power == tenantv1alpha1.HostPowerOn && conditionTrue(c.Status.Conditions, "Ready")
	})
	bmh := getHost(ctx, t, dyn, pool, server)
	if ref, _, _ := unstructured.NestedString(bmh.Object, "spec", "userData", "name"); ref == "" {
		t.Errorf("the server has no userData reference: %v", bmh.Object["spec"])
	} else if copied, err := host.CoreV1().Secrets(pool).Get(ctx, ref, metav1.GetOptions{}); err != nil {
		t.Errorf("the copy of the user data: %v", err)
	} else if !strings.Contains(string(copied.Data["userData"]), "alice-web") {
		t.Errorf("the copy of the user data holds %q", copied.Data)
	}

	// A reboot through the API, carried out once.
	standIn := theStack().BareMetalOperator()
	before := standIn.Reboots(pool, server)
	at := metav1.NewTime(time.Now().Truncate(time.Second))
	if _, err := aliceClaims.Patch(ctx, "web", types.MergePatchType,
		fmt.Appendf(nil, `{"spec":{"rebootRequestedAt":%q}}`, at.UTC().Format(time.RFC3339)), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClaim(ctx, t, mira, "web", "reboot carried out", func(c *tenantv1alpha1.HostClaim) bool {
		return c.Status.LastRebootRequest != nil && !c.Status.LastRebootRequest.Before(&at) && standIn.Reboots(pool, server) == before+1 &&
			c.Status.Power == tenantv1alpha1.HostPowerOn
	})

	// Removing the image deprovisions and cleans the server, which stays
	// alice's.
	cleanedBefore := standIn.Cleanings(pool, server)
	if _, err := aliceClaims.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"image":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClaim(ctx, t, mira, "web", "deprovisioned, still bound", func(c *tenantv1alpha1.HostClaim) bool {
		return c.Status.Phase == tenantv1alpha1.HostClaimBound && conditionTrue(c.Status.Conditions, "Associated")
	})
	if got := consumerOf(ctx, t, dyn, pool, c1.UID); got != server || standIn.Cleanings(pool, server) <= cleanedBefore {
		t.Errorf("after the image went: bound to %q (want %s), cleanings %d (before %d)", got, server, standIn.Cleanings(pool, server), cleanedBefore)
	}

	// And a new image provisions it again: what bob's claim must not get.
	if _, err := aliceClaims.Patch(ctx, "web", types.MergePatchType,
		[]byte(`{"spec":{"image":{"url":"https://images.example.net/debian.qcow2","checksum":"0123456789abcdef0123456789abcdef","checksumType":"md5"}}}`),
		metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClaim(ctx, t, mira, "web", "provisioned with the second image", func(c *tenantv1alpha1.HostClaim) bool {
		return c.Status.Phase == tenantv1alpha1.HostClaimProvisioned && conditionTrue(c.Status.Conditions, "Ready")
	})

	// Alice's quota is one claim.
	_, err = aliceClaims.Create(ctx, hostClaim("second", className, nil), metav1.CreateOptions{})
	wantStatus(t, "alice's second claim", err, 403, "exceeded quota: hostClaims")

	// Bob wants a large server too: none is free, and he is told so.
	bobClaims := moss.TenantV1alpha1().HostClaims(defaultNamespace)
	c2, err := bobClaims.Create(ctx, hostClaim("db", className, map[string]string{"infra-kind": "large"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bobClaims.Delete(context.Background(), "db", metav1.DeleteOptions{}) })
	waitClaim(ctx, t, moss, "db", "pending, no server free", func(c *tenantv1alpha1.HostClaim) bool {
		a := findCondition(c.Status.Conditions, "Associated")
		return c.Status.Phase == tenantv1alpha1.HostClaimPending && a != nil && a.Status == metav1.ConditionFalse && a.Reason == "NoHostAvailable"
	})

	t.Run("BobSeesNothingOfAlice", func(t *testing.T) {
		if _, err := moss.TenantV1alpha1().HostClaims(defaultNamespace).Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("bob gets alice's claim: %v", err)
		}
		list, err := moss.TenantV1alpha1().HostClaims(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range list.Items {
			if c.Name != "db" {
				t.Errorf("bob lists claim %s/%s", c.Namespace, c.Name)
			}
		}
		_, mossDyn := hostClientsAs(t, hostUserB)
		if _, err := mossDyn.Resource(stack.BareMetalHostResource).Namespace(pool).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("bob lists the provider's BareMetalHosts: %v", err)
		}
		mossHost, _ := hostClientsAs(t, hostUserB)
		if _, err := mossHost.CoreV1().Secrets(pool).Get(ctx, server+"-bmc", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("bob reads a BMC Secret: %v", err)
		}
	})

	// The Tenant cannot go while it holds a claim.
	err = admin.TenantV1alpha1().Tenants().Delete(ctx, bob.Name, metav1.DeleteOptions{})
	wantStatus(t, "deleting bob's Tenant with a HostClaim", err, 409, "hostclaims default/db")
	report := &tenantv1alpha1.OffboardingReport{}
	if err := admin.TenantV1alpha1().RESTClient().Get().Resource("tenants").Name(bob.Name).SubResource("offboarding").Do(ctx).Into(report); err != nil {
		t.Fatal(err)
	}
	if report.Ready || len(report.Blockers) != 1 || report.Blockers[0].Resource != "hostclaims" || report.Blockers[0].Name != "db" {
		t.Errorf("bob's offboarding report: ready %v, blockers %+v; want the HostClaim db alone", report.Ready, report.Blockers)
	}

	// Alice lets the server go: it is cleaned, then bound to bob's claim.
	cleanings := standIn.Cleanings(pool, server)
	if err := aliceClaims.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClaim(ctx, t, moss, "db", "bound to the released server", func(c *tenantv1alpha1.HostClaim) bool {
		return c.Status.Phase == tenantv1alpha1.HostClaimBound
	})
	if got := consumerOf(ctx, t, dyn, pool, c2.UID); got != server {
		t.Errorf("bob's claim is bound to %s, want %s, the server alice released", got, server)
	}
	if standIn.Cleanings(pool, server) <= cleanings {
		t.Errorf("the server was bound again without being cleaned")
	}
	if list, err := host.CoreV1().Secrets(pool).List(ctx, metav1.ListOptions{LabelSelector: "tenant.io/host-claim=" + string(c1.UID)}); err != nil {
		t.Error(err)
	} else if len(list.Items) != 0 {
		t.Errorf("alice's data copies outlive her claim: %d Secrets", len(list.Items))
	}
	// Every server has at most one claim.
	consumers := map[string]string{}
	hosts, err := dyn.Resource(stack.BareMetalHostResource).Namespace(pool).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts.Items {
		uid, _, _ := unstructured.NestedString(h.Object, "spec", "consumerRef", "uid")
		if uid == "" {
			continue
		}
		if other, dup := consumers[uid]; dup {
			t.Errorf("claim %s holds %s and %s", uid, other, h.GetName())
		}
		consumers[uid] = h.GetName()
	}
}

func hostClaim(name, class string, sel map[string]string) *tenantv1alpha1.HostClaim {
	c := &tenantv1alpha1.HostClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: tenantv1alpha1.HostClaimSpec{HostClass: class}}
	if sel != nil {
		c.Spec.HostSelector = &metav1.LabelSelector{MatchLabels: sel}
	}
	return c
}

func names(classes []tenantv1alpha1.HostClass) []string {
	out := make([]string, 0, len(classes))
	for _, c := range classes {
		out = append(out, c.Name)
	}
	return out
}

func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

func waitClaim(ctx context.Context, t *testing.T, cs clientset.Interface, name, what string, ok func(*tenantv1alpha1.HostClaim) bool) *tenantv1alpha1.HostClaim {
	t.Helper()
	var got *tenantv1alpha1.HostClaim
	eventually(ctx, t, slowTimeout, "HostClaim "+name+": "+what, func(ctx context.Context) (bool, string) {
		c, err := cs.TenantV1alpha1().HostClaims(defaultNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		got = c
		return ok(c), fmt.Sprintf("phase %s power %q lastReboot %v conditions %s", c.Status.Phase, c.Status.Power, c.Status.LastRebootRequest, describeConditions(c.Status.Conditions))
	})
	return got
}

func getHost(ctx context.Context, t *testing.T, dyn dynamic.Interface, ns, name string) *unstructured.Unstructured {
	t.Helper()
	h, err := dyn.Resource(stack.BareMetalHostResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// consumerOf returns the name of the server in ns whose consumerRef is claim uid.
func consumerOf(ctx context.Context, t *testing.T, dyn dynamic.Interface, ns string, uid types.UID) string {
	t.Helper()
	list, err := dyn.Resource(stack.BareMetalHostResource).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := ""
	for _, h := range list.Items {
		if got, _, _ := unstructured.NestedString(h.Object, "spec", "consumerRef", "uid"); got == string(uid) {
			if found != "" {
				t.Errorf("claim %s is the consumer of %s and %s", uid, found, h.GetName())
			}
			found = h.GetName()
		}
	}
	return found
}

// wantNothingOfTheServer fails if claim c names its server, the provider's
// namespace or the server's BMC.
func wantNothingOfTheServer(t *testing.T, c *tenantv1alpha1.HostClaim, pool, server string) {
	t.Helper()
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{pool, server, "redfish", "bmc"} {
		if strings.Contains(string(data), s) {
			t.Errorf("the tenant's claim mentions %q: %s", s, data)
		}
	}
}
