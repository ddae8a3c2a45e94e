package syncer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

const (
	// pollInterval is how often the tests look again.
	pollInterval = 200 * time.Millisecond
	// syncTimeout bounds what the syncer does on its own (onboarding, a
	// repair, a Namespace appearing on the host); generous, because the
	// machine running the tests may be slow.
	syncTimeout = 60 * time.Second
	// slowTimeout bounds what waits for a restart, a failover or a finalizer.
	slowTimeout = 2 * time.Minute

	// syncerLeaseNamespace and syncerLeaseName are the host Lease of the
	// syncer's leader election.
	syncerLeaseNamespace = stack.TenantAPIServerNamespace
	syncerLeaseName      = "tenant-apiserver-syncer"

	// finalizerOffboarding holds a Tenant until the syncer has removed its
	// host objects.
	finalizerOffboarding = "tenant.io/offboarding"
	// defaultNamespace is the tenant Namespace every Tenant is onboarded with.
	defaultNamespace = "default"
	// membersRoleBinding is the RoleBinding in each host namespace of a tenant.
	membersRoleBinding = hostnames.MembersRoleBinding
)

var (
	poolGVR = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "ipaddresspools"}
	l2GVR   = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "l2advertisements"}
)

// ---------------------------------------------------------------------------
// Clients and commands

func theStack() *stack.Stack { return framework.Current() }

// tenantClient is the generated clientset acting as user through the host
// kube-apiserver (the aggregator).
func tenantClient(t *testing.T, user string) clientset.Interface {
	t.Helper()
	return tenantClientFor(t, theStack().RESTConfig(user))
}

func tenantClientFor(t *testing.T, cfg *rest.Config) clientset.Interface {
	t.Helper()
	cs, err := clientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// hostClients are the host's typed and dynamic clients as the provider admin.
func hostClients(t *testing.T) (kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	return hostClientsAs(t, stack.AdminUser)
}

func hostClientsAs(t *testing.T, user string) (kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	c, d, err := theStack().Clients(user)
	if err != nil {
		t.Fatal(err)
	}
	return c, d
}

// kubectl runs kubectl as user and fails the test when it fails.
func kubectl(ctx context.Context, t *testing.T, user string, args ...string) string {
	t.Helper()
	out, _, err := theStack().Kubectl(ctx, user, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// kubectlCreate writes obj as JSON into a file and runs kubectl create -f as user.
func kubectlCreate(ctx context.Context, t *testing.T, user string, obj interface{}) {
	t.Helper()
	kubectl(ctx, t, user, "create", "-f", writeJSON(t, obj))
}

// writeJSON writes obj as JSON into a temporary file for kubectl -f.
func writeJSON(t *testing.T, obj interface{}) string {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(t.TempDir(), "manifest-*.json")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	return filepath.Clean(f.Name())
}

// uniqueName is a DNS label made of the test's name and a random suffix, so
// that a tenant of one run (or test) is never confused with another's.
func uniqueName(t *testing.T) string {
	t.Helper()
	base := strings.ToLower(strings.TrimPrefix(t.Name(), "Test"))
	base = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, base)
	if len(base) > 16 {
		base = base[:16]
	}
	base = strings.Trim(base, "-")
	return base + "-" + randomHex(t, 2)
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// randomUID is a UID no object has.
func randomUID(t *testing.T) types.UID {
	t.Helper()
	h := randomHex(t, 16)
	return types.UID(h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:])
}

// eventually polls check until it reports done and fails the test after
// timeout, with what and the last state check described.
func eventually(ctx context.Context, t *testing.T, timeout time.Duration, what string, check func(ctx context.Context) (done bool, state string)) {
	t.Helper()
	last := "(not checked)"
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		done, state := check(ctx)
		// A check cut short by the deadline says only that: keep what
		// the one before it saw.
		if done || ctx.Err() == nil {
			last = state
		}
		return done, nil
	})
	if err != nil {
		t.Fatalf("%s: not so after %s (%v); last seen: %s", what, timeout, err, last)
	}
}

// apiStatus returns the API status of err, failing the test when err is
// not an API error.
func apiStatus(t *testing.T, what string, err error) metav1.Status {
	t.Helper()
	var s apierrors.APIStatus
	if err == nil || !errors.As(err, &s) {
		t.Fatalf("%s: got %v, want an API error", what, err)
	}
	return s.Status()
}

// causeFields returns the Field of every cause of st.
func causeFields(st metav1.Status) []string {
	var fields []string
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			fields = append(fields, c.Field)
		}
	}
	return fields
}

// ---------------------------------------------------------------------------
// Tenants and their Namespaces

// tenantSpec is what a test onboards.
type tenantSpec struct {
	name      string
	users     []string
	groups    []string
	publicIPs int32
	// namespaces is the quota of Namespaces; 0 keeps the default.
	namespaces int32
	// prefixLength is the size of the tenant's block; 0 means /24.
	prefixLength int32
	// cidr, when set, is the tenant's block (of any TenantNetworks pool).
	cidr string
	// loadBalancers, floatingIPs and hostClaims are quotas; 0 keeps the default.
	loadBalancers, floatingIPs, hostClaims int32
	// isolation is spec.isolation; empty keeps the default (Soft).
	isolation tenantv1alpha1.TenantIsolation
}

// tenantObject is the Tenant of spec: a /24 block (or of
// spec.prefixLength) out of the demo TenantNetworks pool, and
// spec.publicIPs addresses out of the demo PublicIPs pool.
func tenantObject(spec tenantSpec) *tenantv1alpha1.Tenant {
	prefix := int32(24)
	if spec.prefixLength > 0 {
		prefix = spec.prefixLength
	}
	tn := &tenantv1alpha1.Tenant{
		TypeMeta:   metav1.TypeMeta{APIVersion: tenantv1alpha1.SchemeGroupVersion.String(), Kind: "Tenant"},
		ObjectMeta: metav1.ObjectMeta{Name: spec.name},
		Spec: tenantv1alpha1.TenantSpec{
			DisplayName: "Syncer test " + spec.name,
			Members:     tenantv1alpha1.TenantMembers{Users: spec.users, Groups: spec.groups},
			Network:     tenantv1alpha1.TenantNetwork{PrefixLength: &prefix},
			PublicIPs:   tenantv1alpha1.TenantPublicIPs{Count: spec.publicIPs},
			Isolation:   spec.isolation,
		},
	}
	if spec.cidr != "" {
		tn.Spec.Network = tenantv1alpha1.TenantNetwork{CIDR: spec.cidr}
	}
	if spec.namespaces > 0 {
		n := spec.namespaces
		tn.Spec.Quota.Namespaces = &n
	}
	if spec.loadBalancers > 0 {
		n := spec.loadBalancers
		tn.Spec.Quota.LoadBalancers = &n
	}
	if spec.floatingIPs > 0 {
		n := spec.floatingIPs
		tn.Spec.Quota.FloatingIPs = &n
	}
	if spec.hostClaims > 0 {
		n := spec.hostClaims
		tn.Spec.Quota.HostClaims = &n
	}
	return tn
}

// onboard creates the Tenant of spec as the provider admin with kubectl,
// deletes it when the test ends, waits until it is Ready and its members
// see it, and returns it.
func onboard(ctx context.Context, t *testing.T, spec tenantSpec) *tenantv1alpha1.Tenant {
	t.Helper()
	if theStack().PID("tenant-apiserver") == 0 {
		t.Fatalf("the stack's tenant-apiserver is not running (did it crash? see %s)", theStack().LogPath("tenant-apiserver"))
	}
	kubectlCreate(ctx, t, stack.AdminUser, tenantObject(spec))
	t.Cleanup(func() { offboardAtEnd(t, spec.name) })
	tn := waitTenantReady(ctx, t, tenantClient(t, stack.AdminUser), spec.name)
	for _, u := range spec.users {
		if err := theStack().WaitTenantVisible(ctx, u, spec.name); err != nil {
			t.Fatal(err)
		}
	}
	return tn
}

// offboardAtEnd deletes tenant name and waits until it is gone, so that the
// next test starts from pools and a host without it. Whether offboarding
// works is TestOffboarding's business: here a failure is only logged.
func offboardAtEnd(t *testing.T, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), slowTimeout)
	defer cancel()
	cs, err := clientset.NewForConfig(theStack().RESTConfig(stack.AdminUser))
	if err != nil {
		t.Logf("cleanup: %v", err)
		return
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		last = cs.TenantV1alpha1().Tenants().Delete(ctx, name, metav1.DeleteOptions{})
		if last != nil && !apierrors.IsNotFound(last) {
			return false, nil
		}
		_, last = cs.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(last), nil
	})
	if err != nil {
		t.Logf("cleanup: tenant %s is not gone: %v (last: %v)", name, err, last)
	}
}

func describeConditions(conds []metav1.Condition) string {
	var parts []string
	for _, c := range conds {
		parts = append(parts, fmt.Sprintf("%s=%s/%s(%q)", c.Type, c.Status, c.Reason, c.Message))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func conditionTrue(conds []metav1.Condition, typ string) bool {
	return meta.IsStatusConditionTrue(conds, typ)
}

// tenantReady reports whether tn is Ready with HostSynced and Ready True.
func tenantReady(tn *tenantv1alpha1.Tenant) bool {
	return tn.Status.Phase == tenantv1alpha1.TenantPhaseReady &&
		conditionTrue(tn.Status.Conditions, tenantv1alpha1.ConditionHostSynced) &&
		conditionTrue(tn.Status.Conditions, tenantv1alpha1.ConditionReady)
}

func describeTenant(tn *tenantv1alpha1.Tenant) string {
	return fmt.Sprintf("phase %q, finalizers %v, conditions %s, publicIPs %v, prefix %q",
		tn.Status.Phase, tn.Finalizers, describeConditions(tn.Status.Conditions), tn.Status.PublicIPs, tn.Status.NamespacePrefix)
}

// waitTenantReady waits until tenant name is Ready with HostSynced and
// Ready True, and returns it.
func waitTenantReady(ctx context.Context, t *testing.T, cs clientset.Interface, name string) *tenantv1alpha1.Tenant {
	t.Helper()
	var tn *tenantv1alpha1.Tenant
	eventually(ctx, t, syncTimeout, "tenant "+name+" Ready", func(ctx context.Context) (bool, string) {
		got, err := cs.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		tn = got
		return tenantReady(got), describeTenant(got)
	})
	return tn
}

func describeNamespace(ns *tenantv1alpha1.Namespace) string {
	return fmt.Sprintf("phase %q, hostNamespace %q, conditions %s", ns.Status.Phase, ns.Status.HostNamespace, describeConditions(ns.Status.Conditions))
}

// namespaceSynced reports whether tenant Namespace ns is Active on the
// host: HostSynced, and Ready unless it waits for OVN-Kubernetes alone
// (NetworkAttached, which TestNamespaceNetworkAttached covers). How soon
// cluster-manager renders a namespace's network is not the syncer's: it
// was seen to take a minute.
func namespaceSynced(ns *tenantv1alpha1.Namespace) bool {
	ready := meta.FindStatusCondition(ns.Status.Conditions, tenantv1alpha1.ConditionReady)
	return ns.Status.HostNamespace != "" && ns.Status.Phase == tenantv1alpha1.NamespacePhaseActive &&
		conditionTrue(ns.Status.Conditions, tenantv1alpha1.ConditionHostSynced) &&
		ready != nil && (ready.Status == metav1.ConditionTrue || ready.Reason == "NetworkNotAttached")
}

// waitNamespaceSynced waits until tenant Namespace name, as the member cs
// sees it, is synced (namespaceSynced) and has its host namespace in status.
func waitNamespaceSynced(ctx context.Context, t *testing.T, cs clientset.Interface, name string) *tenantv1alpha1.Namespace {
	t.Helper()
	return waitNamespace(ctx, t, cs, name, syncTimeout, "synced", namespaceSynced)
}

// waitNamespace waits up to timeout until tenant Namespace name, as the
// member cs sees it, is what done says (described by what), and returns
// it as last seen.
func waitNamespace(ctx context.Context, t *testing.T, cs clientset.Interface, name string, timeout time.Duration, what string,
	done func(*tenantv1alpha1.Namespace) bool) *tenantv1alpha1.Namespace {
	t.Helper()
	var ns *tenantv1alpha1.Namespace
	eventually(ctx, t, timeout, "tenant Namespace "+name+" "+what, func(ctx context.Context) (bool, string) {
		got, err := cs.TenantV1alpha1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ns = got
		return done(got), describeNamespace(got)
	})
	return ns
}

// namespaceObject is a tenant Namespace for kubectl.
func namespaceObject(name string) *tenantv1alpha1.Namespace {
	return &tenantv1alpha1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: tenantv1alpha1.SchemeGroupVersion.String(), Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}
}

// networkOf is the tenant Network a Namespace is attached to, defaulted.
func networkOf(ns *tenantv1alpha1.Namespace) string {
	if ns.Spec.Network == "" {
		return "default"
	}
	return ns.Spec.Network
}

// ---------------------------------------------------------------------------
// Host objects

// hostNamespaceProblems lists how host namespace hn differs from what the
// syncer must make of tenant Namespace ns of tenant tn.
func hostNamespaceProblems(hn *corev1.Namespace, tn *tenantv1alpha1.Tenant, ns *tenantv1alpha1.Namespace) []string {
	var p []string
	level := string(tn.Spec.PodSecurity.Level)
	if level == "" {
		level = string(tenantv1alpha1.PodSecurityLevelRestricted)
	}
	want := map[string]string{
		hostnames.TenantLabel:                   tn.Name,
		hostnames.NamespaceLabel:                ns.Name,
		hostnames.NetworkLabel:                  networkOf(ns),
		hostnames.PrimaryUDNLabel:               "",
		hostnames.PodSecurityEnforceLabel:       level,
		hostnames.PodSecurityAuditLabel:         level,
		hostnames.PodSecurityWarnLabel:          level,
		hostnames.OpenShiftPodSecurityLabelSync: "false",
	}
	for k, v := range want {
		if got, ok := hn.Labels[k]; !ok || got != v {
			p = append(p, fmt.Sprintf("host namespace %s: label %s=%q (present %v), want %q", hn.Name, k, got, ok, v))
		}
	}
	wantAnn := map[string]string{
		hostnames.OwnerUIDAnnotation:  string(ns.UID),
		hostnames.TenantUIDAnnotation: string(tn.UID),
	}
	for k, v := range wantAnn {
		if got := hn.Annotations[k]; got != v {
			p = append(p, fmt.Sprintf("host namespace %s: annotation %s=%q, want %q", hn.Name, k, got, v))
		}
	}
	if hn.DeletionTimestamp != nil {
		p = append(p, fmt.Sprintf("host namespace %s is being deleted", hn.Name))
	}
	return p
}

type subject struct{ kind, name string }

func subjectsOf(rb *rbacv1.RoleBinding) []subject {
	var out []subject
	for _, s := range rb.Subjects {
		out = append(out, subject{s.Kind, s.Name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].kind+"/"+out[i].name < out[j].kind+"/"+out[j].name })
	return out
}

// wantSubjects are the subjects of a tenant's members RoleBinding: its
// users, its groups and groups tenant.io:<tenant> and tenant.io-<tenant>.
func wantSubjects(tn *tenantv1alpha1.Tenant) []subject {
	var out []subject
	for _, u := range tn.Spec.Members.Users {
		out = append(out, subject{rbacv1.UserKind, u})
	}
	for _, g := range tn.Spec.Members.Groups {
		out = append(out, subject{rbacv1.GroupKind, g})
	}
	out = append(out, subject{rbacv1.GroupKind, "tenant.io:" + tn.Name}, subject{rbacv1.GroupKind, "tenant.io-" + tn.Name})
	sort.Slice(out, func(i, j int) bool { return out[i].kind+"/"+out[i].name < out[j].kind+"/"+out[j].name })
	return out
}

// roleBindingProblems lists how the members RoleBinding rb of host
// namespace hostNS differs from what the syncer must make for tenant
// Namespace ns of tn.
func roleBindingProblems(rb *rbacv1.RoleBinding, tn *tenantv1alpha1.Tenant, ns *tenantv1alpha1.Namespace) []string {
	var p []string
	where := rb.Namespace + "/" + rb.Name
	if rb.RoleRef.Kind != "ClusterRole" || rb.RoleRef.Name != "admin" || rb.RoleRef.APIGroup != rbacv1.GroupName {
		p = append(p, fmt.Sprintf("RoleBinding %s: roleRef %+v, want ClusterRole admin", where, rb.RoleRef))
	}
	if got, want := subjectsOf(rb), wantSubjects(tn); !slices.Equal(got, want) {
		p = append(p, fmt.Sprintf("RoleBinding %s: subjects %v, want %v", where, got, want))
	}
	if rb.Labels[hostnames.TenantLabel] != tn.Name || rb.Labels[hostnames.NamespaceLabel] != ns.Name {
		p = append(p, fmt.Sprintf("RoleBinding %s: labels %v, want %s=%s and %s=%s", where, rb.Labels,
			hostnames.TenantLabel, tn.Name, hostnames.NamespaceLabel, ns.Name))
	}
	if got := rb.Annotations[hostnames.OwnerUIDAnnotation]; got != string(ns.UID) {
		p = append(p, fmt.Sprintf("RoleBinding %s: owner UID %q, want %q", where, got, ns.UID))
	}
	return p
}

// wantAddresses are the spec.addresses of a tenant's MetalLB pool.
func wantAddresses(tn *tenantv1alpha1.Tenant) []string {
	var out []string
	for _, ip := range tn.Status.PublicIPs {
		out = append(out, netip.PrefixFrom(netip.MustParseAddr(ip), 32).String())
	}
	sort.Strings(out)
	return out
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

// poolProblems lists how MetalLB IPAddressPool pool differs from what the
// syncer must make for tn, whose host namespaces are hostNamespaces.
func poolProblems(pool *unstructured.Unstructured, tn *tenantv1alpha1.Tenant, hostNamespaces []string) []string {
	var p []string
	where := "IPAddressPool " + pool.GetNamespace() + "/" + pool.GetName()
	addrs, _, _ := unstructured.NestedStringSlice(pool.Object, "spec", "addresses")
	if got, want := sortedCopy(addrs), wantAddresses(tn); !slices.Equal(got, want) {
		p = append(p, fmt.Sprintf("%s: addresses %v, want %v", where, addrs, want))
	}
	if auto, found, _ := unstructured.NestedBool(pool.Object, "spec", "autoAssign"); !found || auto {
		p = append(p, fmt.Sprintf("%s: autoAssign %v (set %v), want false", where, auto, found))
	}
	nss, _, _ := unstructured.NestedStringSlice(pool.Object, "spec", "serviceAllocation", "namespaces")
	if want := sortedCopy(hostNamespaces); !slices.Equal(nss, want) {
		p = append(p, fmt.Sprintf("%s: serviceAllocation.namespaces %v, want exactly %v", where, nss, want))
	}
	if sel, found, _ := unstructured.NestedFieldNoCopy(pool.Object, "spec", "serviceAllocation", "namespaceSelectors"); found && sel != nil {
		p = append(p, fmt.Sprintf("%s: serviceAllocation.namespaceSelectors %v, want none", where, sel))
	}
	if pool.GetLabels()[hostnames.TenantLabel] != tn.Name {
		p = append(p, fmt.Sprintf("%s: labels %v, want %s=%s", where, pool.GetLabels(), hostnames.TenantLabel, tn.Name))
	}
	ann := pool.GetAnnotations()
	if ann[hostnames.OwnerUIDAnnotation] != string(tn.UID) || ann[hostnames.TenantUIDAnnotation] != string(tn.UID) {
		p = append(p, fmt.Sprintf("%s: annotations %v, want owner and tenant UID %s", where, ann, tn.UID))
	}
	return p
}

// advertisementProblems lists how L2Advertisement adv differs from what the
// syncer must make for tn.
func advertisementProblems(adv *unstructured.Unstructured, tn *tenantv1alpha1.Tenant) []string {
	var p []string
	where := "L2Advertisement " + adv.GetNamespace() + "/" + adv.GetName()
	pools, _, _ := unstructured.NestedStringSlice(adv.Object, "spec", "ipAddressPools")
	if want := []string{hostnames.MetalLBPool(tn.Name, tn.UID)}; !slices.Equal(pools, want) {
		p = append(p, fmt.Sprintf("%s: ipAddressPools %v, want %v", where, pools, want))
	}
	if adv.GetLabels()[hostnames.TenantLabel] != tn.Name {
		p = append(p, fmt.Sprintf("%s: labels %v, want %s=%s", where, adv.GetLabels(), hostnames.TenantLabel, tn.Name))
	}
	if got := adv.GetAnnotations()[hostnames.OwnerUIDAnnotation]; got != string(tn.UID) {
		p = append(p, fmt.Sprintf("%s: owner UID %q, want %q", where, got, tn.UID))
	}
	return p
}

// hostState checks everything the syncer must have made on the host for
// tenant tn with tenant Namespaces namespaces (as its member lists them):
// for each Namespace exactly one host namespace, with its labels,
// annotations and members RoleBinding; no other live host namespace with
// the tenant's label; and, with public IPs, the MetalLB pool over exactly
// the host namespaces of Namespace default and of the Namespaces in
// poolUsers (those that hold LoadBalancers or FloatingIPs), and its
// advertisement. It returns the problems found, none when all is well.
func hostState(ctx context.Context, host kubernetes.Interface, dyn dynamic.Interface, tn *tenantv1alpha1.Tenant, namespaces []tenantv1alpha1.Namespace, poolUsers map[string]bool) []string {
	var p []string
	byName := map[string]*tenantv1alpha1.Namespace{}
	var poolNames []string
	for i := range namespaces {
		ns := &namespaces[i]
		byName[ns.Name] = ns
		if ns.Name == defaultNamespace || poolUsers[ns.Name] {
			poolNames = append(poolNames, hostnames.Namespace(tn.Name, tn.UID, ns.Name))
		}
	}

	list, err := host.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: labels.Set{hostnames.TenantLabel: tn.Name}.String()})
	if err != nil {
		return []string{"listing host namespaces: " + err.Error()}
	}
	seen := map[string]int{}
	for i := range list.Items {
		hn := &list.Items[i]
		if hn.DeletionTimestamp != nil {
			continue // on its way out
		}
		nsName := hn.Labels[hostnames.NamespaceLabel]
		seen[nsName]++
		ns, ok := byName[nsName]
		switch {
		case !ok:
			p = append(p, fmt.Sprintf("host namespace %s (tenant Namespace %q, owner %q) has no live tenant Namespace", hn.Name, nsName, hn.Annotations[hostnames.OwnerUIDAnnotation]))
		case hn.Annotations[hostnames.OwnerUIDAnnotation] != string(ns.UID):
			p = append(p, fmt.Sprintf("host namespace %s: owner UID %q, but tenant Namespace %s has UID %s", hn.Name, hn.Annotations[hostnames.OwnerUIDAnnotation], nsName, ns.UID))
		}
	}
	for name, n := range seen {
		if n > 1 {
			p = append(p, fmt.Sprintf("%d live host namespaces for tenant Namespace %s", n, name))
		}
	}

	for _, ns := range byName {
		want := hostnames.Namespace(tn.Name, tn.UID, ns.Name)
		if ns.Status.HostNamespace != want {
			p = append(p, fmt.Sprintf("tenant Namespace %s: status.hostNamespace %q, want %q", ns.Name, ns.Status.HostNamespace, want))
		}
		hn, err := host.CoreV1().Namespaces().Get(ctx, want, metav1.GetOptions{})
		if err != nil {
			p = append(p, fmt.Sprintf("host namespace %s of tenant Namespace %s: %v", want, ns.Name, err))
			continue
		}
		p = append(p, hostNamespaceProblems(hn, tn, ns)...)
		rb, err := host.RbacV1().RoleBindings(want).Get(ctx, membersRoleBinding, metav1.GetOptions{})
		if err != nil {
			p = append(p, fmt.Sprintf("RoleBinding %s/%s: %v", want, membersRoleBinding, err))
			continue
		}
		p = append(p, roleBindingProblems(rb, tn, ns)...)
	}

	if len(tn.Status.PublicIPs) > 0 && len(poolNames) > 0 {
		name := hostnames.MetalLBPool(tn.Name, tn.UID)
		pool, err := dyn.Resource(poolGVR).Namespace(stack.MetalLBNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			p = append(p, fmt.Sprintf("IPAddressPool %s: %v", name, err))
		} else {
			p = append(p, poolProblems(pool, tn, poolNames)...)
		}
		adv, err := dyn.Resource(l2GVR).Namespace(stack.MetalLBNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			p = append(p, fmt.Sprintf("L2Advertisement %s: %v", name, err))
		} else {
			p = append(p, advertisementProblems(adv, tn)...)
		}
	}
	sort.Strings(p)
	return p
}

// publicIPUsers returns the tenant Namespaces that hold a LoadBalancer or
// a FloatingIP, as member lists them.
func publicIPUsers(ctx context.Context, member clientset.Interface) (map[string]bool, error) {
	users := map[string]bool{}
	lbs, err := member.TenantV1alpha1().LoadBalancers(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, lb := range lbs.Items {
		users[lb.Namespace] = true
	}
	fips, err := member.TenantV1alpha1().FloatingIPs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, f := range fips.Items {
		users[f.Namespace] = true
	}
	return users, nil
}

// waitHostState waits until the tenant (read with the admin client) and its
// Namespaces (read with member, a client of one of its members) are synced
// and hostState finds no problem.
func waitHostState(ctx context.Context, t *testing.T, admin, member clientset.Interface, name string, timeout time.Duration) (*tenantv1alpha1.Tenant, []tenantv1alpha1.Namespace) {
	t.Helper()
	host, dyn := hostClients(t)
	var tn *tenantv1alpha1.Tenant
	var nss []tenantv1alpha1.Namespace
	eventually(ctx, t, timeout, "host objects of tenant "+name, func(ctx context.Context) (bool, string) {
		var err error
		if tn, err = admin.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{}); err != nil {
			return false, err.Error()
		}
		list, err := member.TenantV1alpha1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		nss = list.Items
		poolUsers, err := publicIPUsers(ctx, member)
		if err != nil {
			return false, err.Error()
		}
		var p []string
		for i := range nss {
			if !namespaceSynced(&nss[i]) {
				p = append(p, "tenant Namespace "+nss[i].Name+": "+describeNamespace(&nss[i]))
			}
		}
		p = append(p, hostState(ctx, host, dyn, tn, nss, poolUsers)...)
		return len(p) == 0, strings.Join(p, "; ")
	})
	return tn, nss
}

// ---------------------------------------------------------------------------
// Leader election

// syncerLease reads the syncer's Lease: its holder and renew time.
func syncerLease(ctx context.Context, host kubernetes.Interface) (holder string, renewed time.Time, err error) {
	l, err := host.CoordinationV1().Leases(syncerLeaseNamespace).Get(ctx, syncerLeaseName, metav1.GetOptions{})
	if err != nil {
		return "", time.Time{}, err
	}
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	if l.Spec.RenewTime != nil {
		renewed = l.Spec.RenewTime.Time
	}
	return holder, renewed, nil
}

// waitLiveHolder waits until the syncer's Lease is held by someone other
// than notHolder and renewed by it (so it is alive), and returns the holder.
func waitLiveHolder(ctx context.Context, t *testing.T, host kubernetes.Interface, notHolder string, timeout time.Duration) string {
	t.Helper()
	var first, holder string
	var firstRenew time.Time
	eventually(ctx, t, timeout, fmt.Sprintf("a live holder of Lease %s/%s other than %q", syncerLeaseNamespace, syncerLeaseName, notHolder), func(ctx context.Context) (bool, string) {
		h, renewed, err := syncerLease(ctx, host)
		if err != nil {
			return false, err.Error()
		}
		holder = h
		if h == "" || h == notHolder {
			first = ""
			return false, fmt.Sprintf("holder %q renewed %s", h, renewed.Format(time.RFC3339Nano))
		}
		if first != h {
			first, firstRenew = h, renewed
			return false, fmt.Sprintf("holder %q renewed %s, waiting for a renewal", h, renewed.Format(time.RFC3339Nano))
		}
		return renewed.After(firstRenew), fmt.Sprintf("holder %q renewed %s", h, renewed.Format(time.RFC3339Nano))
	})
	return holder
}

// ---------------------------------------------------------------------------
// IPAM

// poolFree reads the free counts of the demo pools once their status agrees
// with the Tenants that exist: allocated is what the Tenants' status
// records (blocks and public IPs), i.e. no release or allocation is still
// on its way into the status.
func poolFree(ctx context.Context, t *testing.T, admin clientset.Interface) map[string]int64 {
	t.Helper()
	var free map[string]int64
	eventually(ctx, t, syncTimeout, "AddressPool status agreeing with the Tenants", func(ctx context.Context) (bool, string) {
		tenants, err := admin.TenantV1alpha1().Tenants().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		want := map[string]int64{}
		for _, tn := range tenants.Items {
			want["public"] += int64(len(tn.Status.PublicIPs))
			if tn.Status.Network != nil && tn.Status.Network.CIDR != "" {
				if p, err := netip.ParsePrefix(tn.Status.Network.CIDR); err == nil && netip.MustParsePrefix("10.0.0.0/8").Contains(p.Addr()) {
					want["tenant-networks"] += int64(1) << (32 - p.Bits())
				}
			}
		}
		free = map[string]int64{}
		var state []string
		done := true
		for _, name := range []string{"public", "tenant-networks"} {
			p, err := admin.TenantV1alpha1().AddressPools().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			free[name] = p.Status.Free
			state = append(state, fmt.Sprintf("%s: %+v (the Tenants hold %d)", name, p.Status, want[name]))
			// A pool's status is filled in by the IPAM loop after its creation.
			if p.Status.ObservedGeneration != p.Generation || p.Status.Capacity == 0 ||
				p.Status.Allocated != want[name] || p.Status.Free != p.Status.Capacity-p.Status.Allocated {
				done = false
			}
		}
		return done, strings.Join(state, "; ")
	})
	return free
}

// restrictedPod is a pod that the Pod Security Standard "restricted" admits,
// which every host namespace of a tenant enforces by default. Nothing runs
// it: no kubelet is part of the stack, so it stays Pending.
func restrictedPod(ns, name string) *corev1.Pod {
	no, yes := false, true
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   &yes,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "registry.invalid/app:1",
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: &no,
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}
