package integration

// The isolation suite: what one tenant can learn about, or do to, another
// tenant's objects, through the real stack. Every request goes through the
// host kube-apiserver and its aggregator to the tenant-apiserver, as a tenant
// member (alice of acme, bob of globex, or an identity the admin
// impersonates), as a caller of no tenant (carol), as a caller of several
// tenants, or as the provider admin.
//
// This file holds the suite's callers, fixtures and checks; the tests are
// in isolation_*_test.go by concern.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// isoTenantLabel is the label the server sets on every tenant-owned object.
const isoTenantLabel = "tenant.io/tenant"

// isoCaller is who sends a request: a framework user's token and, for the
// admin, the identity it impersonates. Impersonated identities get the
// host's RBAC of that identity (plus system:authenticated, and with it the
// tenant member role).
type isoCaller struct {
	user   string
	as     string
	groups []string
}

var (
	isoAlice = isoCaller{user: alice}
	isoBob   = isoCaller{user: "bob"}
	isoCarol = isoCaller{user: "carol"}
	isoAdmin = isoCaller{user: stack.AdminUser}
)

// isoAs is the admin acting as user with groups.
func isoAs(user string, groups ...string) isoCaller {
	return isoCaller{user: stack.AdminUser, as: user, groups: groups}
}

// isoGroupMember is an identity that is a member of tenant only through the
// host group tenant.io:<tenant>.
func isoGroupMember(tenant string) isoCaller {
	return isoAs("member-of-"+tenant, "tenant.io:"+tenant)
}

func (c isoCaller) String() string {
	if c.as == "" {
		return c.user
	}
	return fmt.Sprintf("%s (as %s %v)", c.user, c.as, c.groups)
}

func (c isoCaller) config() *rest.Config {
	cfg := framework.Current().RESTConfig(c.user)
	if c.as != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: c.as, Groups: c.groups}
	}
	return cfg
}

func (c isoCaller) kubectl(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	if c.as != "" {
		args = append(args, "--as="+c.as)
		for _, g := range c.groups {
			args = append(args, "--as-group="+g)
		}
	}
	return framework.Current().Kubectl(ctx, c.user, args...)
}

// kubectlJSON runs kubectl -o json as c and decodes the output into out.
func (c isoCaller) kubectlJSON(ctx context.Context, t *testing.T, out interface{}, args ...string) {
	t.Helper()
	stdout, _, err := c.kubectl(ctx, append(args, "-o", "json")...)
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	var decode func([]byte) error
	switch o := out.(type) {
	case *unstructured.Unstructured:
		decode = o.UnmarshalJSON
	case *unstructured.UnstructuredList:
		decode = o.UnmarshalJSON
	default:
		decode = func(b []byte) error { return json.Unmarshal(b, out) }
	}
	if err := decode([]byte(stdout)); err != nil {
		t.Fatalf("decoding kubectl %v: %v\n%s", args, err, stdout)
	}
}

func (c isoCaller) clientset(t *testing.T) clientset.Interface {
	t.Helper()
	cs, err := clientset.NewForConfig(c.config())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// resource is k as c sees it: in namespace ns for namespaced kinds, or in
// all namespaces when ns is "".
func (c isoCaller) resource(t *testing.T, k kindCase, ns string) dynamic.ResourceInterface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(c.config())
	if err != nil {
		t.Fatal(err)
	}
	if k.namespaced && ns != "" {
		return dyn.Resource(k.gvr()).Namespace(ns)
	}
	return dyn.Resource(k.gvr())
}

func isoKind(t *testing.T, kind string) kindCase {
	t.Helper()
	for _, k := range kinds {
		if k.kind == kind {
			return k
		}
	}
	t.Fatalf("no kind %s", kind)
	return kindCase{}
}

func isoTenantKinds() []kindCase {
	var out []kindCase
	for _, k := range kinds {
		if k.tenantOwned {
			out = append(out, k)
		}
	}
	return out
}

// isoSpec is a valid spec of k that fits any tenant (no addresses of a
// particular tenant block).
func isoSpec(k kindCase) map[string]interface{} {
	if k.kind == "Network" {
		return map[string]interface{}{"topology": "Layer2"}
	}
	return runtime.DeepCopyJSON(k.spec)
}

// isoObject is an object of k named name, in namespace ns for namespaced kinds.
func isoObject(k kindCase, ns, name string, labels map[string]string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: manifest(k, name, isoSpec(k))}
	if k.namespaced {
		obj.SetNamespace(ns)
	}
	if labels != nil {
		obj.SetLabels(labels)
	}
	return obj
}

// isoRef names an object in messages: namespace/name or name.
func isoRef(k kindCase, ns, name string) string {
	if k.namespaced {
		return k.kind + " " + ns + "/" + name
	}
	return k.kind + " " + name
}

// isoCreate creates an object of k as c and deletes it as c when the test ends.
func isoCreate(ctx context.Context, t *testing.T, c isoCaller, k kindCase, ns, name string, labels map[string]string) *unstructured.Unstructured {
	t.Helper()
	created, err := c.resource(t, k, ns).Create(ctx, isoObject(k, ns, name, labels), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("%s creating %s: %v", c, isoRef(k, ns, name), err)
	}
	isoDeleteAtEnd(t, c, k, created)
	return created
}

// isoDeleteAtEnd deletes obj (that very object: by UID) as c when the test ends.
func isoDeleteAtEnd(t *testing.T, c isoCaller, k kindCase, obj *unstructured.Unstructured) {
	t.Helper()
	name, ns, uid := obj.GetName(), obj.GetNamespace(), obj.GetUID()
	res := c.resource(t, k, ns)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := res.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: %s deleting %s: %v", c, isoRef(k, ns, name), err)
		}
	})
}

// isoDemoTenants makes sure the demo tenants acme and globex, with their
// members and Namespaces dev, exist: tests that run before may have removed
// them (TestExamples' cleanup deletes Tenant acme and its Namespace dev).
func isoDemoTenants(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := demoTenants(ctx, framework.Current()); err != nil {
		t.Fatalf("restoring the demo tenants: %v", err)
	}
}

// isoDemoPublicIPs gives the demo tenants acme and globex at least n
// public IPs each, for the tests whose FloatingIPs and LoadBalancers hold
// them.
func isoDemoPublicIPs(t *testing.T, n int32) {
	t.Helper()
	ensurePublicIPs(framework.Context(t, 2*time.Minute), t, "acme", n)
	ensurePublicIPs(framework.Context(t, 2*time.Minute), t, "globex", n)
}

// isoTenant creates Tenant name as the admin, with block cidr, optional
// quota and users as members, waits until every member sees it and the
// syncer has onboarded it (phase Ready: its Network and Namespace "default"
// exist and it carries the finalizer tenant.io/offboarding), and deletes it
// when the test ends (after the objects the test created in it). It makes
// sure of the Network "default" itself too, as onboarding does: the
// Namespaces of the tests name it.
func isoTenant(ctx context.Context, t *testing.T, name, cidr string, quota tenantv1alpha1.TenantQuota, users ...string) {
	t.Helper()
	admin := isoAdmin.clientset(t)
	tn := &tenantv1alpha1.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: tenantv1alpha1.TenantSpec{
			Members: tenantv1alpha1.TenantMembers{Users: users},
			Network: tenantv1alpha1.TenantNetwork{CIDR: cidr},
			Quota:   quota,
		},
	}
	if _, err := admin.TenantV1alpha1().Tenants().Create(ctx, tn, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating tenant %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := admin.TenantV1alpha1().Tenants().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: deleting tenant %s: %v", name, err)
		}
	})
	for _, u := range users {
		isoWaitTenantVisible(ctx, t, isoAs(u), name)
	}
	isoWaitTenantVisible(ctx, t, isoGroupMember(name), name)
	ensureTenantNetwork(ctx, t, name, "default")
	isoWaitTenantReady(ctx, t, name)
}

// isoWaitTenantReady waits until the syncer has onboarded Tenant name: its
// Namespace "default" is created (and charged to its quota) and its delete
// no longer waits for its Namespaces and Networks to be deleted first.
func isoWaitTenantReady(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	if err := framework.Current().WaitTenantReady(ctx, name, time.Minute); err != nil {
		t.Fatal(err)
	}
}

// isoWaitTenantVisible waits until c reads Tenant name: from then on the
// server resolves c to that tenant.
func isoWaitTenantVisible(ctx context.Context, t *testing.T, c isoCaller, name string) {
	t.Helper()
	tenants := c.clientset(t).TenantV1alpha1().Tenants()
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, last = tenants.Get(ctx, name, metav1.GetOptions{})
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s does not see tenant %s: %v (last error: %v)", c, name, err, last)
	}
}

// isoStatus returns the API status of err, or fails the test.
func isoStatus(t *testing.T, what string, err error) metav1.Status {
	t.Helper()
	var s apierrors.APIStatus
	if err == nil || !errors.As(err, &s) {
		t.Fatalf("%s: got %v, want an API error", what, err)
	}
	return s.Status()
}

// isoWantErr checks that err is an API error with code whose message
// contains every string of contains.
func isoWantErr(t *testing.T, what string, err error, code int32, contains ...string) {
	t.Helper()
	var s apierrors.APIStatus
	if err == nil || !errors.As(err, &s) {
		t.Errorf("%s: got %v, want %d", what, err, code)
		return
	}
	if s.Status().Code != code {
		t.Errorf("%s: got %d %v, want %d", what, s.Status().Code, err, code)
		return
	}
	for _, c := range contains {
		if !strings.Contains(s.Status().Message, c) {
			t.Errorf("%s: message %q lacks %q", what, s.Status().Message, c)
		}
	}
}

// isoWantKubectlErr checks that kubectl failed with a server error of reason
// whose text contains every string of contains.
func isoWantKubectlErr(t *testing.T, what, stderr string, err error, reason string, contains ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: kubectl succeeded, want %s", what, reason)
		return
	}
	ok := strings.Contains(stderr, "("+reason+")")
	if reason == "Invalid" {
		ok = ok || strings.Contains(stderr, "is invalid")
	}
	if !ok {
		t.Errorf("%s: kubectl failed with %q, want %s", what, strings.TrimSpace(stderr), reason)
	}
	for _, c := range contains {
		if !strings.Contains(stderr, c) {
			t.Errorf("%s: kubectl error %q lacks %q", what, strings.TrimSpace(stderr), c)
		}
	}
}

// isoSameAsMissing checks that the error about name (another tenant's
// object) is the error about missing (a name that never existed): the
// caller cannot tell them apart.
func isoSameAsMissing(t *testing.T, what string, err error, name string, errMissing error, missing string) {
	t.Helper()
	got, want := isoStatus(t, what, err), isoStatus(t, what+" (never existed)", errMissing)
	if got.Code != 404 || got.Reason != metav1.StatusReasonNotFound {
		t.Errorf("%s: %d %s %q, want 404 NotFound", what, got.Code, got.Reason, got.Message)
		return
	}
	norm := func(s metav1.Status, name string) string {
		s.Message = strings.ReplaceAll(s.Message, `"`+name+`"`, `"NAME"`)
		if s.Details != nil {
			d := *s.Details
			d.Name = "NAME"
			s.Details = &d
		}
		b, _ := json.Marshal(s)
		return string(b)
	}
	if g, w := norm(got, name), norm(want, missing); g != w {
		t.Errorf("%s: the 404 differs from a missing object's:\n got %s\nwant %s", what, g, w)
	}
}

// isoForeign maps the UIDs of objects a caller must never see to a description.
type isoForeign map[types.UID]string

func (f isoForeign) add(obj metav1.Object) {
	f[obj.GetUID()] = obj.GetLabels()[isoTenantLabel] + ":" + obj.GetNamespace() + "/" + obj.GetName()
}

// isoCheckObject checks that an object a caller of tenant owner received is
// owner's and not foreign.
func isoCheckObject(t *testing.T, what string, obj metav1.Object, owner string, foreign isoForeign) {
	t.Helper()
	if desc, ok := foreign[obj.GetUID()]; ok {
		t.Errorf("%s: LEAK: received %s (uid %s)", what, desc, obj.GetUID())
	}
	if got := obj.GetLabels()[isoTenantLabel]; got != owner {
		t.Errorf("%s: received %s/%s of tenant %q, want only tenant %q's", what, obj.GetNamespace(), obj.GetName(), got, owner)
	}
}

func isoCheckList(t *testing.T, what string, list *unstructured.UnstructuredList, owner string, foreign isoForeign) {
	t.Helper()
	for i := range list.Items {
		isoCheckObject(t, what, &list.Items[i], owner, foreign)
	}
}

// isoNames returns the namespace/name of the items of list, sorted.
func isoNames(list *unstructured.UnstructuredList) []string {
	var out []string
	for _, it := range list.Items {
		if it.GetNamespace() != "" {
			out = append(out, it.GetNamespace()+"/"+it.GetName())
		} else {
			out = append(out, it.GetName())
		}
	}
	sort.Strings(out)
	return out
}

func isoHasUID(list *unstructured.UnstructuredList, uid types.UID) bool {
	for _, it := range list.Items {
		if it.GetUID() == uid {
			return true
		}
	}
	return false
}

// isoEventsUntil reads w until done says an event is the last one wanted,
// and returns every event read, that one included. It fails the test when
// the watch ends, reports an error or stays silent for 30s first.
func isoEventsUntil(t *testing.T, what string, w watch.Interface, done func(watch.Event) bool) []watch.Event {
	t.Helper()
	var events []watch.Event
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("%s: watch ended after %d events, before the one awaited", what, len(events))
			}
			if ev.Type == watch.Error {
				t.Fatalf("%s: watch error: %v", what, apierrors.FromObject(ev.Object))
			}
			events = append(events, ev)
			if done(ev) {
				return events
			}
		case <-timeout.C:
			var read []string
			for _, ev := range events {
				if o, err := meta.Accessor(ev.Object); err == nil {
					read = append(read, fmt.Sprintf("%s %s/%s rv=%s annotations=%v", ev.Type, o.GetNamespace(), o.GetName(), o.GetResourceVersion(), o.GetAnnotations()))
				}
			}
			t.Fatalf("%s: no awaited event within 30s; read %q", what, read)
		}
	}
}

// isoIs says whether ev is of type typ about the object uid.
func isoIs(typ watch.EventType, uid types.UID) func(watch.Event) bool {
	return func(ev watch.Event) bool {
		o, err := meta.Accessor(ev.Object)
		return err == nil && ev.Type == typ && o.GetUID() == uid
	}
}

// isoCheckEvents checks that the events a caller of tenant owner received
// are about owner's objects only; bookmarks carry no object.
func isoCheckEvents(t *testing.T, what string, events []watch.Event, owner string, foreign isoForeign) {
	t.Helper()
	for _, ev := range events {
		o, err := meta.Accessor(ev.Object)
		if err != nil {
			t.Errorf("%s: %s event with %T", what, ev.Type, ev.Object)
			continue
		}
		if ev.Type == watch.Bookmark {
			if o.GetName() != "" || o.GetUID() != "" || len(o.GetLabels()) != 0 {
				t.Errorf("%s: LEAK: bookmark carries object %s/%s uid %s labels %v", what, o.GetNamespace(), o.GetName(), o.GetUID(), o.GetLabels())
			}
			continue
		}
		isoCheckObject(t, fmt.Sprintf("%s (%s event)", what, ev.Type), o, owner, foreign)
	}
}

// isoWatchSeesOnlyOwn opens a watch of k as c (tenant owner) with opts, then
// creates a sentinel object as c named sentinel in sentinelNS, reads every
// event up to the sentinel's ADDED and checks that none is foreign. Events
// come in resourceVersion order, so a foreign event written before the
// sentinel would have arrived before it. The sentinel is deleted again.
func isoWatchSeesOnlyOwn(ctx context.Context, t *testing.T, c isoCaller, owner string, k kindCase, watchNS string, opts metav1.ListOptions, sentinelNS, sentinel string, foreign isoForeign) []watch.Event {
	t.Helper()
	what := fmt.Sprintf("%s watching %s (ns %q, %+v)", c, k.resource, watchNS, opts)
	w, err := c.resource(t, k, watchNS).Watch(ctx, opts)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer w.Stop()
	res := c.resource(t, k, sentinelNS)
	s, err := res.Create(ctx, isoObject(k, sentinelNS, sentinel, map[string]string{"iso": "sentinel"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("%s creating sentinel: %v", c, err)
	}
	defer func() {
		uid := s.GetUID()
		if err := res.Delete(ctx, sentinel, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting sentinel: %v", err)
		}
	}()
	events := isoEventsUntil(t, what, w, isoIs(watch.Added, s.GetUID()))
	isoCheckEvents(t, what, events, owner, foreign)
	return events
}

// isoDecodeContinue returns the JSON inside a continue token, or the token
// itself when it is not base64.
func isoDecodeContinue(token string) string {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return token
	}
	return string(b)
}

// isoOfferedTo says whether the ProviderService or HostClass obj is offered to tenant.
func isoOfferedTo(obj *unstructured.Unstructured, tenant string) bool {
	if all, _, _ := unstructured.NestedBool(obj.Object, "spec", "allTenants"); all {
		return true
	}
	tenants, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "tenants")
	for _, tn := range tenants {
		if tn == tenant {
			return true
		}
	}
	return false
}

// isoProviderWatch opens a watch of the provider kind k as the tenant member
// c, has the admin annotate the objects named by touch in that order (the
// last one is visible to c), and checks that c receives the last one's
// MODIFIED event (known by its resourceVersion: a tenant's copy of a
// redacted kind carries no annotations) and no event of an object visible
// refuses.
func isoProviderWatch(ctx context.Context, t *testing.T, c isoCaller, k kindCase, opts metav1.ListOptions, touch []string, visible func(name string) bool) {
	t.Helper()
	what := fmt.Sprintf("%s watching %s", c, k.resource)
	w, err := c.resource(t, k, "").Watch(ctx, opts)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer w.Stop()
	stamp := fmt.Sprint(time.Now().UnixNano())
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"iso/touched":%q}}}`, stamp)
	var touched *unstructured.Unstructured
	for _, name := range touch {
		var err error
		if touched, err = isoAdmin.resource(t, k, "").Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	own := touch[len(touch)-1]
	var events []watch.Event
	got := false
	timeout := time.NewTimer(5 * time.Second)
	defer timeout.Stop()
read:
	for !got {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				break read
			}
			events = append(events, ev)
			o, err := meta.Accessor(ev.Object)
			got = err == nil && ev.Type == watch.Modified && o.GetName() == own && o.GetResourceVersion() == touched.GetResourceVersion()
		case <-timeout.C:
			break read
		}
	}
	for _, ev := range events {
		if ev.Type == watch.Error {
			t.Errorf("%s: watch error %v", what, apierrors.FromObject(ev.Object))
			continue
		}
		if o, err := meta.Accessor(ev.Object); err == nil && ev.Type != watch.Bookmark && !visible(o.GetName()) {
			t.Errorf("%s: LEAK: %s %s", what, ev.Type, o.GetName())
		}
	}
	if !got {
		t.Errorf("%s: no MODIFIED event of its own %s within 5s (%d events read)", what, own, len(events))
	}
}

// isoModifiedConflict says whether err is the 409 of an update sent with a
// resourceVersion another writer (the syncer) has moved past.
func isoModifiedConflict(err error) bool {
	return apierrors.IsConflict(err) && strings.Contains(err.Error(), "the object has been modified")
}

// isoSorted returns names sorted, as isoNames lists them.
func isoSorted(names ...string) []string {
	sort.Strings(names)
	return names
}

// isoSettled waits until the syncer has written the status of tenant
// object name (HostSynced True for its generation) and its
// resourceVersion has then stayed the same for a second and a half.
func isoSettled(ctx context.Context, t *testing.T, res dynamic.ResourceInterface, name string) {
	t.Helper()
	lastRV, since := "", time.Now()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		obj, err := res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		synced := false
		for _, c := range conds {
			m, _ := c.(map[string]interface{})
			gen, _, _ := unstructured.NestedInt64(m, "observedGeneration")
			if m["type"] == "HostSynced" && m["status"] == "True" && gen == obj.GetGeneration() {
				synced = true
			}
		}
		if !synced || obj.GetResourceVersion() != lastRV {
			lastRV, since = obj.GetResourceVersion(), time.Now()
			return false, nil
		}
		return time.Since(since) >= 1500*time.Millisecond, nil
	})
	if err != nil {
		t.Fatalf("%s never settled (HostSynced, then no write for 1.5 s): %v", name, err)
	}
}
