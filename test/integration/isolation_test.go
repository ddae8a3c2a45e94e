package integration

// The isolation suite: what one tenant can learn about, or do to, another
// tenant's objects, through the real stack. Every request goes through the
// host kube-apiserver and its aggregator to the tenant-apiserver, as a tenant
// member (alice of acme, bob of globex, or an identity the admin
// impersonates), as a caller of no tenant (carol), as a caller of several
// tenants, or as the provider admin.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
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
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
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
	isoAdmin = isoCaller{user: framework.AdminUser}
)

// isoAs is the admin acting as user with groups.
func isoAs(user string, groups ...string) isoCaller {
	return isoCaller{user: framework.AdminUser, as: user, groups: groups}
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

// isoOfferedTo says whether the ProviderService obj is offered to tenant.
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
// MODIFIED event and no event of an object visible refuses.
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
	for _, name := range touch {
		if _, err := isoAdmin.resource(t, k, "").Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
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
			got = err == nil && ev.Type == watch.Modified && o.GetName() == own && o.GetAnnotations()["iso/touched"] == stamp
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

// TestIsolationSameNames has acme and globex own objects of the same names
// of every tenant kind: each member sees only its own, through kubectl and
// the dynamic client.
func TestIsolationSameNames(t *testing.T) {
	isoDemoTenants(t)
	ctx := testContext(t)
	members := []struct {
		c      isoCaller
		tenant string
	}{{isoAlice, "acme"}, {isoBob, "globex"}}
	objects := []struct {
		kind, ns, name string
	}{
		{"Namespace", "", "shared-ns"},
		{"Network", "", "shared"},
		{"FloatingIP", "dev", "shared"},
		{"LoadBalancer", "dev", "shared"},
	}

	// created[tenant][kind] is the object the tenant's member created.
	created := map[string]map[string]*unstructured.Unstructured{}
	for _, m := range members {
		created[m.tenant] = map[string]*unstructured.Unstructured{}
		for _, o := range objects {
			k := isoKind(t, o.kind)
			var obj unstructured.Unstructured
			m.c.kubectlJSON(ctx, t, &obj, "create", "-f", writeManifest(t, isoObject(k, o.ns, o.name, nil).Object))
			isoDeleteAtEnd(t, m.c, k, &obj)
			created[m.tenant][o.kind] = &obj
		}
	}

	for _, m := range members {
		foreign := isoForeign{}
		for tn, objs := range created {
			if tn != m.tenant {
				for _, o := range objs {
					foreign.add(o)
				}
			}
		}
		for _, o := range objects {
			k := isoKind(t, o.kind)
			own := created[m.tenant][o.kind]
			what := fmt.Sprintf("%s: %s", m.c, isoRef(k, o.ns, o.name))
			if own.GetLabels()[isoTenantLabel] != m.tenant {
				t.Errorf("%s: created with labels %v, want %s=%s", what, own.GetLabels(), isoTenantLabel, m.tenant)
			}
			var ns []string
			if k.namespaced {
				ns = []string{"-n", o.ns}
			}

			var got unstructured.Unstructured
			m.c.kubectlJSON(ctx, t, &got, append([]string{"get", k.qualified(), o.name}, ns...)...)
			if got.GetUID() != own.GetUID() {
				t.Errorf("%s: kubectl get returns uid %s, want its own %s", what, got.GetUID(), own.GetUID())
			}
			isoCheckObject(t, what+" kubectl get", &got, m.tenant, foreign)

			var list unstructured.UnstructuredList
			m.c.kubectlJSON(ctx, t, &list, append([]string{"get", k.qualified()}, ns...)...)
			isoCheckList(t, what+" kubectl list", &list, m.tenant, foreign)
			if !isoHasUID(&list, own.GetUID()) {
				t.Errorf("%s: kubectl list %v lacks its own object", what, isoNames(&list))
			}
			table, _, err := m.c.kubectl(ctx, append([]string{"get", k.qualified(), o.name, "-L", isoTenantLabel, "--no-headers"}, ns...)...)
			if err != nil {
				t.Fatal(err)
			}
			if fields := strings.Fields(table); len(fields) == 0 || fields[len(fields)-1] != m.tenant {
				t.Errorf("%s: kubectl get -L %s: %q, want the last column %s", what, isoTenantLabel, table, m.tenant)
			}

			dyn, err := m.c.resource(t, k, o.ns).Get(ctx, o.name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if dyn.GetUID() != own.GetUID() {
				t.Errorf("%s: dynamic get returns uid %s, want its own %s", what, dyn.GetUID(), own.GetUID())
			}
			dlist, err := m.c.resource(t, k, o.ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			isoCheckList(t, what+" dynamic list", dlist, m.tenant, foreign)
			if !isoHasUID(dlist, own.GetUID()) {
				t.Errorf("%s: dynamic list %v lacks its own object", what, isoNames(dlist))
			}
		}
	}
	for _, o := range objects {
		a, g := created["acme"][o.kind], created["globex"][o.kind]
		if a.GetUID() == g.GetUID() {
			t.Errorf("%s %s: acme and globex objects share uid %s", o.kind, o.name, a.GetUID())
		}
	}
}

// TestIsolationEveryVerb has bob use every verb on the name of an object
// only alice has, for every tenant kind: each is answered as if the object
// did not exist, and alice's object is untouched.
func TestIsolationEveryVerb(t *testing.T) {
	isoDemoTenants(t)
	// Alice's (and bob's own) FloatingIP and LoadBalancer each hold one of
	// their tenant's public IPs.
	ensurePublicIPs(testContext(t), t, "acme", 2)
	ensurePublicIPs(testContext(t), t, "globex", 2)
	for _, k := range isoTenantKinds() {
		t.Run(k.kind, func(t *testing.T) {
			ctx := testContext(t)
			const name, ns, missing = "alice-only", "dev", "never-existed"
			labels := map[string]string{"iso": "verbs"}
			selector := "iso=verbs"
			aliceRes := isoAlice.resource(t, k, ns)
			bobRes := isoBob.resource(t, k, ns)
			isoCreate(ctx, t, isoAlice, k, ns, name, labels)
			foreign := isoForeign{}
			// The syncer writes the object's status (and, for a
			// LoadBalancer, MetalLB's address) after the create: wait until
			// it has, so that only bob could change it from here on.
			isoSettled(ctx, t, aliceRes, name)

			var mine *unstructured.Unstructured
			reread := func() {
				t.Helper()
				var err error
				if mine, err = aliceRes.Get(ctx, name, metav1.GetOptions{}); err != nil {
					t.Fatalf("alice lost her %s: %v", isoRef(k, ns, name), err)
				}
				foreign.add(mine)
			}
			reread()
			// intact checks that nothing bob did changed alice's object.
			intact := func(after string) {
				t.Helper()
				got, err := aliceRes.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatalf("after bob's %s, alice's %s: %v", after, isoRef(k, ns, name), err)
				}
				if got.GetUID() != mine.GetUID() || got.GetResourceVersion() != mine.GetResourceVersion() || got.GetLabels()[isoTenantLabel] != "acme" {
					t.Errorf("after bob's %s, alice's object changed: uid %s rv %s labels %v, was uid %s rv %s",
						after, got.GetUID(), got.GetResourceVersion(), got.GetLabels(), mine.GetUID(), mine.GetResourceVersion())
				}
			}

			t.Run("get", func(t *testing.T) {
				for _, opts := range []metav1.GetOptions{{}, {ResourceVersion: "0"}} {
					_, err := bobRes.Get(ctx, name, opts)
					_, errMissing := bobRes.Get(ctx, missing, opts)
					isoSameAsMissing(t, fmt.Sprintf("bob get rv=%q", opts.ResourceVersion), err, name, errMissing, missing)
				}
				_, err := bobRes.Get(ctx, name, metav1.GetOptions{}, "status")
				_, errMissing := bobRes.Get(ctx, missing, metav1.GetOptions{}, "status")
				isoSameAsMissing(t, "bob get status", err, name, errMissing, missing)
			})

			t.Run("list", func(t *testing.T) {
				for _, opts := range []metav1.ListOptions{{}, {ResourceVersion: "0"}, {LabelSelector: selector}} {
					list, err := bobRes.List(ctx, opts)
					if err != nil {
						t.Fatal(err)
					}
					isoCheckList(t, fmt.Sprintf("bob list %+v", opts), list, "globex", foreign)
				}
			})

			t.Run("watch", func(t *testing.T) {
				w, err := bobRes.Watch(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Stop()
				// Alice writes her object while bob watches; then bob's own
				// write. Bob must see his own and nothing of alice's before it.
				patch := `{"metadata":{"annotations":{"iso/touched":"by-alice"}}}`
				if _, err := aliceRes.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
				s := isoCreate(ctx, t, isoBob, k, ns, "bob-sentinel", labels)
				events := isoEventsUntil(t, "bob watch", w, isoIs(watch.Added, s.GetUID()))
				isoCheckEvents(t, "bob watch", events, "globex", foreign)
				reread()
			})

			t.Run("update", func(t *testing.T) {
				// Alice's object as alice read it, resourceVersion and all.
				obj := mine.DeepCopy()
				obj.SetAnnotations(map[string]string{"iso/by": "bob"})
				_, err := bobRes.Update(ctx, obj, metav1.UpdateOptions{})
				isoWantErr(t, "bob update", err, 404)
				obj.SetResourceVersion("")
				_, err = bobRes.Update(ctx, obj, metav1.UpdateOptions{})
				isoWantErr(t, "bob unconditional update", err, 404)
				intact("update")
			})

			t.Run("patch", func(t *testing.T) {
				for _, p := range []struct {
					typ  types.PatchType
					body string
				}{
					{types.MergePatchType, `{"metadata":{"annotations":{"iso/by":"bob"}}}`},
					{types.JSONPatchType, `[{"op":"add","path":"/metadata/annotations","value":{"iso/by":"bob"}}]`},
				} {
					_, err := bobRes.Patch(ctx, name, p.typ, []byte(p.body), metav1.PatchOptions{})
					_, errMissing := bobRes.Patch(ctx, missing, p.typ, []byte(p.body), metav1.PatchOptions{})
					isoSameAsMissing(t, "bob "+string(p.typ), err, name, errMissing, missing)
				}
				intact("patch")
			})

			t.Run("delete", func(t *testing.T) {
				err := bobRes.Delete(ctx, name, metav1.DeleteOptions{})
				errMissing := bobRes.Delete(ctx, missing, metav1.DeleteOptions{})
				isoSameAsMissing(t, "bob delete", err, name, errMissing, missing)
				uid := mine.GetUID()
				err = bobRes.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
				isoWantErr(t, "bob delete with alice's uid as precondition", err, 404)
				intact("delete")
			})

			t.Run("kubectl", func(t *testing.T) {
				nsArgs := nsArgs(k)
				for _, args := range [][]string{
					{"get", k.qualified(), name},
					{"describe", k.qualified(), name},
					{"label", k.qualified(), name, "iso/by=bob"},
					{"annotate", k.qualified(), name, "iso/by=bob"},
					{"patch", k.qualified(), name, "--type=merge", "-p", `{"metadata":{"labels":{"iso-by":"bob"}}}`},
					{"delete", k.qualified(), name},
				} {
					_, stderr, err := isoBob.kubectl(ctx, append(args, nsArgs...)...)
					if args[0] == "describe" {
						// kubectl describe words its 404 in its own way.
						if err == nil || !strings.Contains(stderr, "not found") {
							t.Errorf("bob kubectl describe: err=%v %s", err, stderr)
						}
						continue
					}
					isoWantKubectlErr(t, "bob kubectl "+args[0], stderr, err, "NotFound", `"`+name+`" not found`)
				}
				intact("kubectl")
			})

			t.Run("create", func(t *testing.T) {
				bobs := isoCreate(ctx, t, isoBob, k, ns, name, labels)
				if bobs.GetUID() == mine.GetUID() || bobs.GetLabels()[isoTenantLabel] != "globex" {
					t.Errorf("bob's create of %s: uid %s labels %v, want his own object of globex", name, bobs.GetUID(), bobs.GetLabels())
				}
				got, err := bobRes.Get(ctx, name, metav1.GetOptions{})
				if err != nil || got.GetUID() != bobs.GetUID() {
					t.Errorf("bob reads %v (%v), want his own uid %s", got, err, bobs.GetUID())
				}
				intact("create")
				uid := bobs.GetUID()
				if err := bobRes.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil {
					t.Fatalf("bob deleting his own %s: %v", name, err)
				}
				intact("delete of his own object of the same name")
			})

			t.Run("apply", func(t *testing.T) {
				// Server-side apply creates what does not exist: bob's own object.
				body, err := json.Marshal(isoObject(k, ns, name, map[string]string{"iso": "verbs", "applied": "bob"}).Object)
				if err != nil {
					t.Fatal(err)
				}
				applied, err := bobRes.Patch(ctx, name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "iso-bob"})
				if err != nil {
					t.Fatalf("bob apply: %v", err)
				}
				isoDeleteAtEnd(t, isoBob, k, applied)
				if applied.GetUID() == mine.GetUID() || applied.GetLabels()[isoTenantLabel] != "globex" {
					t.Errorf("bob's apply of %s: uid %s labels %v, want his own object of globex", name, applied.GetUID(), applied.GetLabels())
				}
				intact("apply")
			})

			t.Run("deletecollection", func(t *testing.T) {
				// Bob owns an object of alice's name and another one; each
				// deletecollection removes his and leaves alice's.
				bobsSame := isoCreate(ctx, t, isoBob, k, ns, name, labels)
				bobsOther := isoCreate(ctx, t, isoBob, k, ns, "bob-dc", labels)
				for _, c := range []struct {
					opts metav1.ListOptions
					gone *unstructured.Unstructured
				}{
					{metav1.ListOptions{FieldSelector: "metadata.name=" + name}, bobsSame},
					{metav1.ListOptions{LabelSelector: selector}, bobsOther},
				} {
					if err := bobRes.DeleteCollection(ctx, metav1.DeleteOptions{}, c.opts); err != nil {
						t.Fatalf("bob deletecollection %+v: %v", c.opts, err)
					}
					intact(fmt.Sprintf("deletecollection %+v", c.opts))
					if _, err := bobRes.Get(ctx, c.gone.GetName(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
						t.Errorf("bob's %s after his deletecollection %+v: %v, want it gone", c.gone.GetName(), c.opts, err)
					}
				}
				left, err := bobRes.List(ctx, metav1.ListOptions{LabelSelector: selector})
				if err != nil {
					t.Fatal(err)
				}
				if len(left.Items) != 0 {
					t.Errorf("bob's deletecollection left his %v", isoNames(left))
				}
				list, err := aliceRes.List(ctx, metav1.ListOptions{LabelSelector: selector})
				if err != nil {
					t.Fatal(err)
				}
				if names := isoNames(list); len(names) != 1 || !isoHasUID(list, mine.GetUID()) {
					t.Errorf("alice's objects after bob's deletecollection: %v, want her %s", names, name)
				}
			})
		})
	}
}

// TestIsolationSelectorsAndPagination checks that no selector, resource
// version or continue token brings another tenant's objects into a list.
func TestIsolationSelectorsAndPagination(t *testing.T) {
	isoDemoTenants(t)
	for _, k := range isoTenantKinds() {
		t.Run(k.kind, func(t *testing.T) {
			ctx := testContext(t)
			const ns = "dev"
			labels := map[string]string{"iso": "page"}
			foreign := isoForeign{}
			for _, n := range []string{"page-a", "page-b", "page-c"} {
				foreign.add(isoCreate(ctx, t, isoAlice, k, ns, n, labels))
			}
			bobsB := isoCreate(ctx, t, isoBob, k, ns, "page-b", labels)

			type scope struct{ name, ns string }
			scopes := []scope{{"cluster", ""}}
			if k.namespaced {
				scopes = []scope{{"namespace " + ns, ns}, {"all namespaces", ""}}
			}
			for _, scope := range scopes {
				t.Run(scope.name, func(t *testing.T) {
					aliceRes, bobRes := isoAlice.resource(t, k, scope.ns), isoBob.resource(t, k, scope.ns)
					aliceList, err := aliceRes.List(ctx, metav1.ListOptions{})
					if err != nil {
						t.Fatal(err)
					}
					for _, rv := range []string{"", "0"} {
						for _, c := range []struct {
							opts metav1.ListOptions
							want []types.UID // of bob's objects, nil: nothing
						}{
							{opts: metav1.ListOptions{LabelSelector: isoTenantLabel + "=acme"}},
							{opts: metav1.ListOptions{LabelSelector: isoTenantLabel + " in (acme,globex),iso=page"}, want: []types.UID{bobsB.GetUID()}},
							{opts: metav1.ListOptions{LabelSelector: isoTenantLabel + "!=globex"}},
							{opts: metav1.ListOptions{FieldSelector: "metadata.name=page-a"}},
							{opts: metav1.ListOptions{FieldSelector: "metadata.name=page-c", LabelSelector: "iso=page"}},
							{opts: metav1.ListOptions{FieldSelector: "metadata.name=page-b"}, want: []types.UID{bobsB.GetUID()}},
							{opts: metav1.ListOptions{LabelSelector: "iso=page"}, want: []types.UID{bobsB.GetUID()}},
						} {
							c.opts.ResourceVersion = rv
							what := fmt.Sprintf("bob list %+v", c.opts)
							list, err := bobRes.List(ctx, c.opts)
							if err != nil {
								t.Fatalf("%s: %v", what, err)
							}
							isoCheckList(t, what, list, "globex", foreign)
							var got []types.UID
							for _, it := range list.Items {
								got = append(got, it.GetUID())
							}
							if fmt.Sprint(got) != fmt.Sprint(c.want) {
								t.Errorf("%s: got %v, want bob's %v", what, isoNames(list), c.want)
							}
						}
					}
					for _, match := range []metav1.ResourceVersionMatch{metav1.ResourceVersionMatchNotOlderThan, metav1.ResourceVersionMatchExact} {
						opts := metav1.ListOptions{ResourceVersion: aliceList.GetResourceVersion(), ResourceVersionMatch: match}
						list, err := bobRes.List(ctx, opts)
						if err != nil {
							t.Fatalf("bob list %+v: %v", opts, err)
						}
						isoCheckList(t, fmt.Sprintf("bob list %+v", opts), list, "globex", foreign)
					}

					// Alice pages through her objects one at a time.
					var aliceNames []string
					var tokens []string
					opts := metav1.ListOptions{LabelSelector: "iso=page", Limit: 1}
					for i := 0; ; i++ {
						page, err := aliceRes.List(ctx, opts)
						if err != nil {
							t.Fatal(err)
						}
						aliceNames = append(aliceNames, isoNames(page)...)
						if page.GetContinue() == "" || i > 10 {
							break
						}
						tokens = append(tokens, page.GetContinue())
						opts.Continue = page.GetContinue()
					}
					if len(aliceNames) != 3 || len(tokens) != 2 {
						t.Fatalf("alice's pages: %v with %d continue tokens, want her 3 objects", aliceNames, len(tokens))
					}
					// Without a selector, the count of what is left is alice's alone.
					first, err := aliceRes.List(ctx, metav1.ListOptions{Limit: 1})
					if err != nil {
						t.Fatal(err)
					}
					if n := first.GetRemainingItemCount(); n != nil && *n != int64(len(aliceList.Items)-1) {
						t.Errorf("alice's first page of one says %d items remain, want %d: the count includes other tenants' objects", *n, len(aliceList.Items)-1)
					}

					// Bob continues alice's lists with her tokens: he gets
					// nothing of hers (an error would do too).
					for i, token := range tokens {
						for _, sel := range []string{"iso=page", ""} {
							opts := metav1.ListOptions{LabelSelector: sel, Limit: 1, Continue: token}
							for page := 0; page < 10; page++ {
								what := fmt.Sprintf("bob continuing alice's token %d (selector %q)", i, sel)
								list, err := bobRes.List(ctx, opts)
								if err != nil {
									t.Logf("%s: refused: %v", what, err)
									break
								}
								isoCheckList(t, what, list, "globex", foreign)
								if list.GetContinue() == "" {
									break
								}
								opts.Continue = list.GetContinue()
							}
						}
					}

					// Bob pages through his own: only his page-b.
					var bobNames []string
					opts = metav1.ListOptions{LabelSelector: "iso=page", Limit: 1}
					for i := 0; i < 10; i++ {
						page, err := bobRes.List(ctx, opts)
						if err != nil {
							t.Fatal(err)
						}
						isoCheckList(t, "bob's own pages", page, "globex", foreign)
						bobNames = append(bobNames, isoNames(page)...)
						if page.GetContinue() == "" {
							break
						}
						opts.Continue = page.GetContinue()
					}
					if len(bobNames) != 1 || !strings.HasSuffix(bobNames[0], "page-b") {
						t.Errorf("bob's pages: %v, want only his page-b", bobNames)
					}
				})
			}
		})
	}
}

// TestIsolationWatchFromOldResourceVersion has bob watch from a
// resourceVersion older than alice's writes, and in every other way a watch
// can start: he sees his own events and none of alice's.
func TestIsolationWatchFromOldResourceVersion(t *testing.T) {
	isoDemoTenants(t)
	for _, k := range isoTenantKinds() {
		t.Run(k.kind, func(t *testing.T) {
			ctx := testContext(t)
			const ns = "dev"
			bobList, err := isoBob.resource(t, k, ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			old := bobList.GetResourceVersion()

			// Alice's history after old: ADDED, MODIFIED of a; ADDED, DELETED of b.
			aliceRes := isoAlice.resource(t, k, ns)
			foreign := isoForeign{}
			a := isoCreate(ctx, t, isoAlice, k, ns, "old-rv-a", nil)
			foreign.add(a)
			if _, err := aliceRes.Patch(ctx, a.GetName(), types.MergePatchType, []byte(`{"metadata":{"labels":{"iso":"modified"}}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			b, err := aliceRes.Create(ctx, isoObject(k, ns, "old-rv-b", nil), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			foreign.add(b)
			if err := aliceRes.Delete(ctx, b.GetName(), metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}

			// The control: alice, from the same resourceVersion, sees her history.
			w, err := aliceRes.Watch(ctx, metav1.ListOptions{ResourceVersion: old})
			if err != nil {
				t.Fatal(err)
			}
			events := isoEventsUntil(t, "alice watching from "+old, w, isoIs(watch.Deleted, b.GetUID()))
			w.Stop()
			// The syncer's writes of a Namespace's status are not alice's:
			// a MODIFIED that changes nothing but what the syncer writes
			// (syncerWrite) is left out of her history.
			var seen []string
			last := map[string]*unstructured.Unstructured{}
			for _, ev := range events {
				o, ok := ev.Object.(*unstructured.Unstructured)
				if !ok || !strings.HasPrefix(o.GetName(), "old-rv-") {
					continue
				}
				prev := last[o.GetName()]
				last[o.GetName()] = o
				if ev.Type == watch.Modified && prev != nil && syncerWrite(prev, o) {
					continue
				}
				seen = append(seen, string(ev.Type)+" "+o.GetName())
			}
			if want := "[ADDED old-rv-a MODIFIED old-rv-a ADDED old-rv-b DELETED old-rv-b]"; fmt.Sprint(seen) != want {
				t.Errorf("alice watching from %s sees %v, want %s", old, seen, want)
			}

			for _, c := range []struct {
				name     string
				opts     metav1.ListOptions
				sentinel string
			}{
				{name: "old resourceVersion", opts: metav1.ListOptions{ResourceVersion: old}},
				{name: "old resourceVersion with bookmarks", opts: metav1.ListOptions{ResourceVersion: old, AllowWatchBookmarks: true}},
				{name: "resourceVersion 0", opts: metav1.ListOptions{ResourceVersion: "0"}},
				{name: "resourceVersion 0 with bookmarks", opts: metav1.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: true}},
				{name: "resourceVersion unset", opts: metav1.ListOptions{}},
				{name: "initial events", opts: metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}},
				{name: "old resourceVersion and alice's label", opts: metav1.ListOptions{ResourceVersion: old, LabelSelector: "iso in (modified,sentinel)"}},
				// Bob's sentinel has the name of alice's object: the watch of
				// one name is bob's name, not alice's.
				{name: "old resourceVersion and alice's name", opts: metav1.ListOptions{ResourceVersion: old, FieldSelector: "metadata.name=old-rv-a"}, sentinel: "old-rv-a"},
				{name: "old resourceVersion and alice's deleted name", opts: metav1.ListOptions{ResourceVersion: old, FieldSelector: "metadata.name=old-rv-b", AllowWatchBookmarks: true}, sentinel: "old-rv-b"},
			} {
				t.Run(c.name, func(t *testing.T) {
					sentinel := c.sentinel
					if sentinel == "" {
						sentinel = "bob-sentinel"
					}
					isoWatchSeesOnlyOwn(ctx, t, isoBob, "globex", k, ns, c.opts, ns, sentinel, foreign)
					if k.namespaced {
						isoWatchSeesOnlyOwn(ctx, t, isoBob, "globex", k, "", c.opts, ns, sentinel, foreign)
					}
				})
			}
		})
	}
}

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
			ctx := testContext(t)
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

// TestIsolationTenantLabel checks that a tenant cannot put its objects, at
// create or later, into another tenant by the tenant label.
func TestIsolationTenantLabel(t *testing.T) {
	isoDemoTenants(t)
	for _, k := range isoTenantKinds() {
		t.Run(k.kind, func(t *testing.T) {
			ctx := testContext(t)
			const ns = "dev"
			aliceRes, bobRes := isoAlice.resource(t, k, ns), isoBob.resource(t, k, ns)
			nsArgs := nsArgs(k)

			// On create, through the API and through kubectl.
			_, err := aliceRes.Create(ctx, isoObject(k, ns, "label-create", map[string]string{isoTenantLabel: "globex"}), metav1.CreateOptions{})
			isoWantErr(t, "alice creating with tenant globex", err, 422, isoTenantLabel)
			_, stderr, err := isoAlice.kubectl(ctx, "create", "-f", writeManifest(t, isoObject(k, ns, "label-create", map[string]string{isoTenantLabel: "globex"}).Object))
			isoWantKubectlErr(t, "alice kubectl create with tenant globex", stderr, err, "Invalid", isoTenantLabel)
			_, err = aliceRes.Get(ctx, "label-create", metav1.GetOptions{})
			isoWantErr(t, "alice get of the refused object", err, 404)
			_, err = bobRes.Get(ctx, "label-create", metav1.GetOptions{})
			isoWantErr(t, "bob get of alice's refused object", err, 404)

			mine := isoCreate(ctx, t, isoAlice, k, ns, "label-update", nil)
			name := mine.GetName()
			// The syncer may write the object (a Namespace's status) after
			// it was read: that 409 is no answer to the relabel, which is
			// sent again on the object read anew.
			err = retry.OnError(retry.DefaultRetry, isoModifiedConflict, func() error {
				cur, err := aliceRes.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				relabelled := cur.DeepCopy()
				relabelled.SetLabels(map[string]string{isoTenantLabel: "globex"})
				_, err = aliceRes.Update(ctx, relabelled, metav1.UpdateOptions{})
				return err
			})
			isoWantErr(t, "alice update to tenant globex", err, 422, isoTenantLabel)
			for _, value := range []string{"globex", "", "acme-2"} {
				_, err = aliceRes.Patch(ctx, name, types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, isoTenantLabel, value)), metav1.PatchOptions{})
				isoWantErr(t, fmt.Sprintf("alice merge patch to tenant %q", value), err, 422, isoTenantLabel)
			}
			_, err = aliceRes.Patch(ctx, name, types.JSONPatchType, []byte(`[{"op":"replace","path":"/metadata/labels/tenant.io~1tenant","value":"globex"}]`), metav1.PatchOptions{})
			isoWantErr(t, "alice json patch to tenant globex", err, 422, isoTenantLabel)
			body, _ := json.Marshal(isoObject(k, ns, name, map[string]string{isoTenantLabel: "globex"}).Object)
			_, err = aliceRes.Patch(ctx, name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "iso-alice", Force: ptr.To(true)})
			isoWantErr(t, "alice apply of tenant globex", err, 422, isoTenantLabel)
			_, stderr, err = isoAlice.kubectl(ctx, append([]string{"label", k.qualified(), name, "--overwrite", isoTenantLabel + "=globex"}, nsArgs...)...)
			isoWantKubectlErr(t, "alice kubectl label tenant globex", stderr, err, "Invalid", isoTenantLabel)
			// Dropping the label cannot move the object out of acme either.
			if _, _, err := isoAlice.kubectl(ctx, append([]string{"label", k.qualified(), name, isoTenantLabel + "-"}, nsArgs...)...); err != nil {
				t.Logf("alice kubectl label %s-: %v", isoTenantLabel, err)
			}
			// The provider acting in acme writes status; labels are not status.
			statusPatch := fmt.Sprintf(`{"metadata":{"labels":{%q:"globex"}}}`, isoTenantLabel)
			if _, _, err := isoAdmin.kubectl(ctx, append(append([]string{"patch", k.qualified(), name, "--subresource=status", "--type=merge", "-p", statusPatch}, nsArgs...), providerInTenant...)...); err != nil {
				t.Logf("admin in acme patching status labels: %v", err)
			}

			got, err := aliceRes.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("alice lost her object: %v", err)
			}
			if got.GetUID() != mine.GetUID() || got.GetLabels()[isoTenantLabel] != "acme" {
				t.Errorf("alice's object after the relabel attempts: uid %s labels %v, want uid %s in acme", got.GetUID(), got.GetLabels(), mine.GetUID())
			}
			_, err = bobRes.Get(ctx, name, metav1.GetOptions{})
			isoWantErr(t, "bob get of alice's object", err, 404)
			foreign := isoForeign{}
			foreign.add(mine)
			for _, sel := range []string{isoTenantLabel + "=acme", isoTenantLabel + "=globex", ""} {
				list, err := bobRes.List(ctx, metav1.ListOptions{LabelSelector: sel})
				if err != nil {
					t.Fatal(err)
				}
				isoCheckList(t, "bob list "+sel, list, "globex", foreign)
			}
			list, err := aliceRes.List(ctx, metav1.ListOptions{LabelSelector: isoTenantLabel + "=globex"})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 0 {
				t.Errorf("alice lists %v labelled globex", isoNames(list))
			}
		})
	}
}

// TestIsolationProviderScope checks who sees and writes the provider kinds,
// and what callers of no tenant and of several tenants get.
func TestIsolationProviderScope(t *testing.T) {
	isoDemoTenants(t)
	ctx := testContext(t)
	tenantKind, poolKind, psvcKind, peeringKind := isoKind(t, "Tenant"), isoKind(t, "AddressPool"), isoKind(t, "ProviderService"), isoKind(t, "VRFPeering")
	netKind := isoKind(t, "Network")

	// Provider objects of every kind, by the admin.
	createPsvc := func(name string, extra map[string]interface{}) *unstructured.Unstructured {
		spec := map[string]interface{}{"service": map[string]interface{}{"namespace": "infra", "name": "dns"}}
		for k, v := range extra {
			spec[k] = v
		}
		obj := &unstructured.Unstructured{Object: manifest(psvcKind, name, spec)}
		created, err := isoAdmin.resource(t, psvcKind, "").Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		isoDeleteAtEnd(t, isoAdmin, psvcKind, created)
		return created
	}
	offerAcme := createPsvc("iso-offer-acme", map[string]interface{}{"tenants": []interface{}{"acme"}})
	offerGlobex := createPsvc("iso-offer-globex", map[string]interface{}{"tenants": []interface{}{"globex"}})
	offerAll := createPsvc("iso-offer-all", map[string]interface{}{"allTenants": true})
	pool := isoCreate(ctx, t, isoAdmin, poolKind, "", "iso-pool", nil)
	peering := isoCreate(ctx, t, isoAdmin, peeringKind, "", "iso-peering", nil)
	acmeTenant, err := isoAdmin.resource(t, tenantKind, "").Get(ctx, "acme", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	existing := map[string]*unstructured.Unstructured{
		"Tenant": acmeTenant, "AddressPool": pool, "ProviderService": offerAcme, "VRFPeering": peering,
	}

	t.Run("tenant members may not write provider kinds", func(t *testing.T) {
		for _, k := range []kindCase{tenantKind, poolKind, psvcKind, peeringKind} {
			target := existing[k.kind]
			for _, c := range []struct {
				caller isoCaller
				// guard: the host's RBAC lets the caller write, the
				// tenant-apiserver refuses it.
				guard bool
			}{
				{isoAlice, false},
				{isoBob, false},
				{isoAs("admin", "tenant.io:acme", "system:masters"), true},
			} {
				res := c.caller.resource(t, k, "")
				what := func(verb string) string { return fmt.Sprintf("%s %s %s", c.caller, verb, k.resource) }
				var contains []string
				if c.guard {
					contains = []string{"managed by the provider"}
				}
				newName := "iso-by-member-" + strings.ToLower(k.kind)
				_, err := res.Create(ctx, &unstructured.Unstructured{Object: manifest(k, newName, runtime.DeepCopyJSON(k.spec))}, metav1.CreateOptions{})
				isoWantErr(t, what("create"), err, 403, contains...)
				upd := target.DeepCopy()
				upd.SetAnnotations(map[string]string{"iso/by": "member"})
				_, err = res.Update(ctx, upd, metav1.UpdateOptions{})
				isoWantErr(t, what("update"), err, 403, contains...)
				_, err = res.Patch(ctx, target.GetName(), types.MergePatchType, []byte(`{"metadata":{"annotations":{"iso/by":"member"}}}`), metav1.PatchOptions{})
				isoWantErr(t, what("patch"), err, 403, contains...)
				body, _ := json.Marshal(map[string]interface{}{"apiVersion": "tenant.io/v1alpha1", "kind": k.kind, "metadata": map[string]interface{}{"name": target.GetName(), "annotations": map[string]interface{}{"iso/by": "member"}}})
				_, err = res.Patch(ctx, target.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "iso-member"})
				isoWantErr(t, what("apply"), err, 403, contains...)
				err = res.Delete(ctx, target.GetName(), metav1.DeleteOptions{})
				isoWantErr(t, what("delete"), err, 403, contains...)
				err = res.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "metadata.name=" + target.GetName()})
				isoWantErr(t, what("deletecollection"), err, 403, contains...)

				got, err := isoAdmin.resource(t, k, "").Get(ctx, target.GetName(), metav1.GetOptions{})
				if err != nil || got.GetUID() != target.GetUID() || got.GetAnnotations()["iso/by"] != "" {
					t.Errorf("%s: %s %s after the refused writes: %v %v", c.caller, k.kind, target.GetName(), err, got)
				}
				if _, err := isoAdmin.resource(t, k, "").Get(ctx, newName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("%s created %s %s: %v", c.caller, k.kind, newName, err)
				}
			}
		}
		_, stderr, err := isoAlice.kubectl(ctx, "create", "-f", writeManifest(t, manifest(tenantKind, "iso-alice-tenant", tenantKind.spec)))
		isoWantKubectlErr(t, "alice kubectl create tenant", stderr, err, "Forbidden")
		_, stderr, err = isoAlice.kubectl(ctx, "delete", "tenant", "acme")
		isoWantKubectlErr(t, "alice kubectl delete tenant acme", stderr, err, "Forbidden")
		_, stderr, err = isoAlice.kubectl(ctx, "label", "tenant", "acme", "iso=alice")
		isoWantKubectlErr(t, "alice kubectl label tenant acme", stderr, err, "Forbidden")
	})

	t.Run("members read only their own tenant", func(t *testing.T) {
		for _, m := range []struct {
			c           isoCaller
			own, others string
		}{{isoAlice, "acme", "globex"}, {isoBob, "globex", "acme"}} {
			out, _, err := m.c.kubectl(ctx, "get", "tenants", "-o", "name")
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(out) != "tenant.tenant.io/"+m.own {
				t.Errorf("%s kubectl get tenants: %q, want only %s", m.c, out, m.own)
			}
			_, stderr, err := m.c.kubectl(ctx, "get", "tenant", m.others)
			isoWantKubectlErr(t, m.c.String()+" kubectl get tenant "+m.others, stderr, err, "NotFound", `"`+m.others+`" not found`)
			res := m.c.resource(t, tenantKind, "")
			for _, opts := range []metav1.ListOptions{{}, {ResourceVersion: "0"}, {FieldSelector: "metadata.name=" + m.others}, {LabelSelector: "kubernetes.io/metadata.name=" + m.others}} {
				list, err := res.List(ctx, opts)
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range list.Items {
					if it.GetName() != m.own {
						t.Errorf("%s lists tenants %+v: LEAK: %s", m.c, opts, it.GetName())
					}
				}
			}
			_, err = res.Get(ctx, m.others, metav1.GetOptions{})
			_, errMissing := res.Get(ctx, "no-such-tenant", metav1.GetOptions{})
			isoSameAsMissing(t, m.c.String()+" get tenant "+m.others, err, m.others, errMissing, "no-such-tenant")
			_, err = res.Get(ctx, m.others, metav1.GetOptions{ResourceVersion: "0"})
			isoWantErr(t, m.c.String()+" get tenant rv=0 "+m.others, err, 404)
			_, err = res.Get(ctx, m.others, metav1.GetOptions{}, "status")
			isoWantErr(t, m.c.String()+" get tenant status "+m.others, err, 404)
			if _, err := res.Get(ctx, m.own, metav1.GetOptions{}, "status"); err != nil {
				t.Errorf("%s cannot read the status of its own tenant: %v", m.c, err)
			}

			// A watch of tenants: the provider touches the other tenant,
			// then this one; the member sees only its own.
			t.Run(m.c.user+" watches", func(t *testing.T) {
				isoProviderWatch(ctx, t, m.c, tenantKind, metav1.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: true},
					[]string{m.others, m.own}, func(name string) bool { return name == m.own })
			})
		}
		t.Cleanup(func() {
			for _, tn := range []string{"acme", "globex"} {
				isoAdmin.resource(t, tenantKind, "").Patch(context.Background(), tn, types.MergePatchType, //nolint:errcheck
					[]byte(`{"metadata":{"annotations":{"iso/touched":null}}}`), metav1.PatchOptions{})
			}
		})
	})

	t.Run("provider services offered", func(t *testing.T) {
		for _, m := range []struct {
			c            isoCaller
			tenant       string
			want, hidden *unstructured.Unstructured
		}{{isoAlice, "acme", offerAcme, offerGlobex}, {isoBob, "globex", offerGlobex, offerAcme}} {
			res := m.c.resource(t, psvcKind, "")
			list, err := res.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, it := range list.Items {
				seen[it.GetName()] = true
				if !isoOfferedTo(&it, m.tenant) {
					t.Errorf("%s lists ProviderService %s not offered to %s: LEAK", m.c, it.GetName(), m.tenant)
				}
			}
			if !seen[m.want.GetName()] || !seen[offerAll.GetName()] {
				t.Errorf("%s lists ProviderServices %v, want %s and %s among them", m.c, isoNames(list), m.want.GetName(), offerAll.GetName())
			}
			for _, name := range []string{m.want.GetName(), offerAll.GetName()} {
				if _, err := res.Get(ctx, name, metav1.GetOptions{}); err != nil {
					t.Errorf("%s get providerservice %s: %v", m.c, name, err)
				}
			}
			_, err = res.Get(ctx, m.hidden.GetName(), metav1.GetOptions{})
			_, errMissing := res.Get(ctx, "no-such-service", metav1.GetOptions{})
			isoSameAsMissing(t, m.c.String()+" get providerservice "+m.hidden.GetName(), err, m.hidden.GetName(), errMissing, "no-such-service")
			_, stderr, err := m.c.kubectl(ctx, "get", "providerservice", m.hidden.GetName())
			isoWantKubectlErr(t, m.c.String()+" kubectl get providerservice "+m.hidden.GetName(), stderr, err, "NotFound")

			t.Run(m.c.user+" watches", func(t *testing.T) {
				isoProviderWatch(ctx, t, m.c, psvcKind, metav1.ListOptions{}, []string{m.hidden.GetName(), m.want.GetName()},
					func(name string) bool { return name == m.want.GetName() || name == offerAll.GetName() })
			})
		}
		// carol is offered nothing.
		list, err := isoCarol.resource(t, psvcKind, "").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 0 {
			t.Errorf("carol lists ProviderServices %v", isoNames(list))
		}
	})

	t.Run("a caller of no tenant", func(t *testing.T) {
		for _, k := range kinds {
			if k.kind == "AddressPool" || k.kind == "VRFPeering" {
				continue // not even readable by tenant members (host RBAC)
			}
			for _, rv := range []string{"", "0"} {
				list, err := isoCarol.resource(t, k, "").List(ctx, metav1.ListOptions{ResourceVersion: rv})
				if err != nil {
					t.Fatalf("carol lists %s: %v", k.resource, err)
				}
				if len(list.Items) != 0 {
					t.Errorf("carol lists %s rv=%q: %v", k.resource, rv, isoNames(list))
				}
			}
			out, stderr, err := isoCarol.kubectl(ctx, "get", k.qualified(), "-A")
			if err != nil || strings.TrimSpace(out) != "" || !strings.Contains(stderr, "No resources found") {
				t.Errorf("carol kubectl get %s -A: %v %q %q", k.qualified(), err, out, stderr)
			}
		}
		_, err := isoCarol.resource(t, tenantKind, "").Get(ctx, "acme", metav1.GetOptions{})
		isoWantErr(t, "carol get tenant acme", err, 404)
		for _, k := range isoTenantKinds() {
			_, err := isoCarol.resource(t, k, "dev").Create(ctx, isoObject(k, "dev", "carols", nil), metav1.CreateOptions{})
			isoWantErr(t, "carol create "+k.resource, err, 403, "not a member of any tenant")
		}
		_, stderr, err := isoCarol.kubectl(ctx, "create", "-f", writeManifest(t, isoObject(netKind, "", "carols", nil).Object))
		isoWantKubectlErr(t, "carol kubectl create network", stderr, err, "Forbidden", "not a member of any tenant")
		_, stderr, err = isoCarol.kubectl(ctx, "create", "-f", writeManifest(t, manifest(tenantKind, "carols", tenantKind.spec)))
		isoWantKubectlErr(t, "carol kubectl create tenant", stderr, err, "Forbidden")

		// A watch of carol's from before alice writes: nothing comes. The
		// control is alice's watch, opened at the same point.
		before, err := isoAlice.resource(t, netKind, "").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		opts := metav1.ListOptions{ResourceVersion: before.GetResourceVersion()}
		carolW, err := isoCarol.resource(t, netKind, "").Watch(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer carolW.Stop()
		aliceW, err := isoAlice.resource(t, netKind, "").Watch(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer aliceW.Stop()
		net := isoCreate(ctx, t, isoAlice, netKind, "", "iso-carol-probe", nil)
		isoEventsUntil(t, "alice's control watch", aliceW, isoIs(watch.Added, net.GetUID()))
		select {
		case ev, ok := <-carolW.ResultChan():
			if ok {
				t.Errorf("carol's watch received %s %v", ev.Type, ev.Object)
			}
		case <-time.After(time.Second):
		}
	})

	t.Run("a caller of several tenants", func(t *testing.T) {
		for _, c := range []isoCaller{
			isoAs("mallory", "tenant.io:acme", "tenant.io:globex"),
			// alice is a member of acme by name, and of globex by group.
			isoAs("alice", "tenant.io:globex"),
		} {
			for _, k := range []kindCase{netKind, isoKind(t, "Namespace"), tenantKind, psvcKind} {
				_, err := c.resource(t, k, "").List(ctx, metav1.ListOptions{})
				isoWantErr(t, c.String()+" list "+k.resource, err, 403, "acme", "globex")
				_, err = c.resource(t, k, "").Get(ctx, "acme", metav1.GetOptions{})
				isoWantErr(t, c.String()+" get "+k.resource, err, 403, "acme", "globex")
				_, err = c.resource(t, k, "").Watch(ctx, metav1.ListOptions{})
				isoWantErr(t, c.String()+" watch "+k.resource, err, 403, "acme", "globex")
			}
			for _, k := range isoTenantKinds() {
				_, err := c.resource(t, k, "dev").Create(ctx, isoObject(k, "dev", "mallorys", nil), metav1.CreateOptions{})
				isoWantErr(t, c.String()+" create "+k.resource, err, 403, "acme", "globex")
			}
			_, stderr, err := c.kubectl(ctx, "get", "networks.tenant.io")
			isoWantKubectlErr(t, c.String()+" kubectl get networks", stderr, err, "Forbidden", "acme", "globex")
		}
	})
}

// TestIsolationProviderListPagination checks that paging through a list
// of a provider kind reveals nothing a tenant member may not see: not in
// the items, not in the count of remaining items, not in the continue
// tokens.
func TestIsolationProviderListPagination(t *testing.T) {
	isoDemoTenants(t)
	ctx := testContext(t)
	tenantKind, psvcKind := isoKind(t, "Tenant"), isoKind(t, "ProviderService")
	// Objects alice may not see, named to sort before and after hers.
	isoTenant(ctx, t, "aaa-hidden", "10.56.0.0/16", tenantv1alpha1.TenantQuota{})
	isoTenant(ctx, t, "zzz-hidden", "10.57.0.0/16", tenantv1alpha1.TenantQuota{})
	for _, name := range []string{"aaa-hidden-svc", "iso-page-svc", "zzz-hidden-svc"} {
		tenants := []interface{}{"globex"}
		if name == "iso-page-svc" {
			tenants = []interface{}{"acme"}
		}
		obj := &unstructured.Unstructured{Object: manifest(psvcKind, name, map[string]interface{}{
			"service": map[string]interface{}{"namespace": "infra", "name": "dns"}, "tenants": tenants,
		})}
		created, err := isoAdmin.resource(t, psvcKind, "").Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		isoDeleteAtEnd(t, isoAdmin, psvcKind, created)
	}

	for _, c := range []struct {
		k       kindCase
		visible func(*unstructured.Unstructured) bool
	}{
		{tenantKind, func(o *unstructured.Unstructured) bool { return o.GetName() == "acme" }},
		{psvcKind, func(o *unstructured.Unstructured) bool { return isoOfferedTo(o, "acme") }},
	} {
		t.Run(c.k.kind, func(t *testing.T) {
			all, err := isoAdmin.resource(t, c.k, "").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			hidden := map[string]bool{}
			for i := range all.Items {
				if c.visible(&all.Items[i]) {
					want = append(want, all.Items[i].GetName())
				} else {
					hidden[all.Items[i].GetName()] = true
				}
			}
			sort.Strings(want)

			var items, leaks []string
			opts := metav1.ListOptions{Limit: 1}
			for page := 0; page < len(all.Items)+2; page++ {
				list, err := isoAlice.resource(t, c.k, "").List(ctx, opts)
				if err != nil {
					t.Fatal(err)
				}
				for i := range list.Items {
					if !c.visible(&list.Items[i]) {
						t.Errorf("page %d: LEAK: %s", page, list.Items[i].GetName())
					}
				}
				items = append(items, isoNames(list)...)
				// What remains to be listed is at most what alice has not had yet.
				if n := list.GetRemainingItemCount(); n != nil && *n > int64(len(want)-len(items)) {
					leaks = append(leaks, fmt.Sprintf("page %d (items %v): remainingItemCount %d", page, isoNames(list), *n))
				}
				if list.GetContinue() == "" {
					break
				}
				var token struct {
					Start string `json:"start"`
				}
				if err := json.Unmarshal([]byte(isoDecodeContinue(list.GetContinue())), &token); err == nil {
					if name := strings.Trim(token.Start, "/\x00"); hidden[name] {
						leaks = append(leaks, fmt.Sprintf("page %d (items %v): continue token starts after %q", page, isoNames(list), name))
					}
				}
				opts.Continue = list.GetContinue()
			}
			if fmt.Sprint(items) != fmt.Sprint(want) {
				t.Errorf("alice's pages of %s: %v, want %v", c.k.resource, items, want)
			}
			if len(leaks) > 0 {
				t.Errorf("a tenant member's paged LIST of %s reveals objects it may not see: %s", c.k.resource, strings.Join(leaks, "; "))
			}
		})
	}
}

// TestIsolationAdminImpersonation checks the provider admin acting inside a
// tenant by impersonation: it sees and writes that tenant's objects only.
func TestIsolationAdminImpersonation(t *testing.T) {
	isoDemoTenants(t)
	ctx := testContext(t)
	netKind := isoKind(t, "Network")
	acmeNet := isoCreate(ctx, t, isoAlice, netKind, "", "imp-acme", nil)
	globexNet := isoCreate(ctx, t, isoBob, netKind, "", "imp-globex", nil)
	inAcme := isoAs("admin", "tenant.io:acme")
	inGlobex := isoAs("admin", "tenant.io:globex")

	var list unstructured.UnstructuredList
	inAcme.kubectlJSON(ctx, t, &list, "get", "networks.tenant.io")
	isoCheckList(t, "admin in acme lists networks", &list, "acme", isoForeign{globexNet.GetUID(): "globex imp-globex"})
	if !isoHasUID(&list, acmeNet.GetUID()) {
		t.Errorf("admin in acme lists %v, without acme's imp-acme", isoNames(&list))
	}
	var created unstructured.Unstructured
	inAcme.kubectlJSON(ctx, t, &created, "create", "-f", writeManifest(t, isoObject(netKind, "", "imp-by-admin", nil).Object))
	isoDeleteAtEnd(t, isoAlice, netKind, &created)
	if created.GetLabels()[isoTenantLabel] != "acme" {
		t.Errorf("admin in acme created a network labelled %v", created.GetLabels())
	}
	if got, err := isoAlice.resource(t, netKind, "").Get(ctx, "imp-by-admin", metav1.GetOptions{}); err != nil || got.GetUID() != created.GetUID() {
		t.Errorf("alice reads the admin's network: %v %v", got, err)
	}
	_, err := isoBob.resource(t, netKind, "").Get(ctx, "imp-by-admin", metav1.GetOptions{})
	isoWantErr(t, "bob get of the network the admin created in acme", err, 404)
	out, _, err := inAcme.kubectl(ctx, "get", "tenants", "-o", "name")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out) != "tenant.tenant.io/acme" {
		t.Errorf("admin in acme lists tenants %q, want only acme", out)
	}

	inGlobex.kubectlJSON(ctx, t, &list, "get", "networks.tenant.io")
	isoCheckList(t, "admin in globex lists networks", &list, "globex",
		isoForeign{acmeNet.GetUID(): "acme imp-acme", created.GetUID(): "acme imp-by-admin"})
	if !isoHasUID(&list, globexNet.GetUID()) {
		t.Errorf("admin in globex lists %v, without globex's imp-globex", isoNames(&list))
	}
	_, stderr, err := inGlobex.kubectl(ctx, "get", "networks.tenant.io", "imp-acme")
	isoWantKubectlErr(t, "admin in globex get imp-acme", stderr, err, "NotFound")

	// Without impersonation the admin is in no tenant.
	out, _, err = isoAdmin.kubectl(ctx, "get", "networks.tenant.io", "-o", "name")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out) != "" {
		t.Errorf("admin outside any tenant lists networks %q", out)
	}
}

// TestIsolationVirtualNamespaces checks the virtual namespaces of tenants:
// a namespace the tenant does not have is not found, whoever else has it.
func TestIsolationVirtualNamespaces(t *testing.T) {
	isoDemoTenants(t)
	ctx := testContext(t)
	nsKind, fipKind, lbKind := isoKind(t, "Namespace"), isoKind(t, "FloatingIP"), isoKind(t, "LoadBalancer")
	isoCreate(ctx, t, isoAlice, nsKind, "", "iso-ns-both", nil)
	isoCreate(ctx, t, isoAlice, nsKind, "", "iso-ns-alice", nil)
	isoCreate(ctx, t, isoBob, nsKind, "", "iso-ns-both", nil)
	aliceFIPs := isoForeign{}
	for _, ns := range []string{"dev", "iso-ns-both", "iso-ns-alice"} {
		aliceFIPs.add(isoCreate(ctx, t, isoAlice, fipKind, ns, "web", nil))
	}
	bobFIPs := isoForeign{}
	for _, ns := range []string{"dev", "iso-ns-both"} {
		bobFIPs.add(isoCreate(ctx, t, isoBob, fipKind, ns, "web", nil))
	}
	aliceLB := isoCreate(ctx, t, isoAlice, lbKind, "iso-ns-alice", "web", nil)

	t.Run("a namespace nobody has", func(t *testing.T) {
		_, stderr, err := isoAlice.kubectl(ctx, "get", "floatingips", "-n", "nosuch")
		isoWantKubectlErr(t, "alice kubectl -n nosuch get floatingips", stderr, err, "NotFound", `"nosuch"`, "namespaces")
		res := isoAlice.resource(t, fipKind, "nosuch")
		_, err = res.List(ctx, metav1.ListOptions{})
		isoWantErr(t, "alice list in nosuch", err, 404, `"nosuch"`)
		if st := isoStatus(t, "alice list in nosuch", err); st.Details == nil || st.Details.Kind != "namespaces" || st.Details.Name != "nosuch" {
			t.Errorf("alice list in nosuch: details %+v, want namespaces nosuch", st.Details)
		}
		_, err = res.Get(ctx, "web", metav1.GetOptions{})
		isoWantErr(t, "alice get in nosuch", err, 404, `"nosuch"`)
		_, err = res.Watch(ctx, metav1.ListOptions{})
		isoWantErr(t, "alice watch in nosuch", err, 404, `"nosuch"`)
		_, err = res.Create(ctx, isoObject(fipKind, "nosuch", "web", nil), metav1.CreateOptions{})
		isoWantErr(t, "alice create in nosuch", err, 404, `"nosuch"`)
	})

	t.Run("all namespaces", func(t *testing.T) {
		var list unstructured.UnstructuredList
		isoAlice.kubectlJSON(ctx, t, &list, "get", "floatingips", "-A")
		isoCheckList(t, "alice kubectl get floatingips -A", &list, "acme", bobFIPs)
		for uid, desc := range aliceFIPs {
			if !isoHasUID(&list, uid) {
				t.Errorf("alice kubectl get floatingips -A: %v lacks her %s", isoNames(&list), desc)
			}
		}
		dlist, err := isoAlice.resource(t, fipKind, "").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		isoCheckList(t, "alice lists floatingips in all namespaces", dlist, "acme", bobFIPs)
		blist, err := isoBob.resource(t, fipKind, "").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		isoCheckList(t, "bob lists floatingips in all namespaces", blist, "globex", aliceFIPs)
		for _, ns := range []string{"iso-ns-alice", "iso-ns-both", "dev"} {
			sel, err := isoBob.resource(t, fipKind, "").List(ctx, metav1.ListOptions{FieldSelector: "metadata.namespace=" + ns})
			if err != nil {
				t.Fatal(err)
			}
			isoCheckList(t, "bob field-selects namespace "+ns, sel, "globex", aliceFIPs)
		}
	})

	t.Run("another tenant's namespace", func(t *testing.T) {
		for _, k := range []kindCase{fipKind, lbKind} {
			res := isoBob.resource(t, k, "iso-ns-alice")
			_, err := res.List(ctx, metav1.ListOptions{})
			_, errMissing := isoBob.resource(t, k, "iso-ns-never").List(ctx, metav1.ListOptions{})
			isoSameAsMissing(t, "bob list "+k.resource+" in iso-ns-alice", err, "iso-ns-alice", errMissing, "iso-ns-never")
			_, err = res.Get(ctx, "web", metav1.GetOptions{})
			isoWantErr(t, "bob get "+k.resource+" in iso-ns-alice", err, 404, `"iso-ns-alice"`)
			_, err = res.Watch(ctx, metav1.ListOptions{})
			isoWantErr(t, "bob watch "+k.resource+" in iso-ns-alice", err, 404, `"iso-ns-alice"`)
			_, err = res.Create(ctx, isoObject(k, "iso-ns-alice", "bobs", nil), metav1.CreateOptions{})
			isoWantErr(t, "bob create "+k.resource+" in iso-ns-alice", err, 404, `"iso-ns-alice"`)
			err = res.Delete(ctx, "web", metav1.DeleteOptions{})
			isoWantErr(t, "bob delete "+k.resource+" in iso-ns-alice", err, 404)
			err = res.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
			isoWantErr(t, "bob deletecollection "+k.resource+" in iso-ns-alice", err, 404)
			_, err = res.Patch(ctx, "web", types.MergePatchType, []byte(`{"metadata":{"labels":{"iso":"bob"}}}`), metav1.PatchOptions{})
			isoWantErr(t, "bob patch "+k.resource+" in iso-ns-alice", err, 404)
			_, stderr, err := isoBob.kubectl(ctx, "get", k.qualified(), "-n", "iso-ns-alice")
			isoWantKubectlErr(t, "bob kubectl get "+k.resource+" -n iso-ns-alice", stderr, err, "NotFound", `"iso-ns-alice"`)
		}
		_, err := isoBob.resource(t, nsKind, "").Get(ctx, "iso-ns-alice", metav1.GetOptions{})
		isoWantErr(t, "bob get namespace iso-ns-alice", err, 404)
		// Alice's objects there are untouched.
		if got, err := isoAlice.resource(t, lbKind, "iso-ns-alice").Get(ctx, "web", metav1.GetOptions{}); err != nil || got.GetUID() != aliceLB.GetUID() {
			t.Errorf("alice's LoadBalancer in iso-ns-alice: %v %v", got, err)
		}
		list, err := isoAlice.resource(t, fipKind, "iso-ns-alice").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 {
			t.Errorf("alice's FloatingIPs in iso-ns-alice: %v", isoNames(list))
		}
	})

	t.Run("a namespace both tenants have", func(t *testing.T) {
		for _, m := range []struct {
			c            isoCaller
			tenant       string
			own, foreign isoForeign
		}{{isoAlice, "acme", aliceFIPs, bobFIPs}, {isoBob, "globex", bobFIPs, aliceFIPs}} {
			res := m.c.resource(t, fipKind, "iso-ns-both")
			list, err := res.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			isoCheckList(t, m.c.String()+" lists floatingips in iso-ns-both", list, m.tenant, m.foreign)
			got, err := res.Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := m.own[got.GetUID()]; !ok {
				t.Errorf("%s gets iso-ns-both/web uid %s, not its own", m.c, got.GetUID())
			}
		}
	})
}

// TestIsolationQuotaConcurrentCreates fires concurrent creates at a quota:
// exactly the quota is admitted, and the usage is exact.
func TestIsolationQuotaConcurrentCreates(t *testing.T) {
	isoDemoTenants(t)
	ctx := testContext(t)
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
	if acme, err := tenants.Get(ctx, "acme", metav1.GetOptions{}); err != nil || acme.Status.Usage != acmeUsage {
		t.Errorf("acme's usage changed from %+v to %+v (%v) by another tenant's burst", acmeUsage, acme.Status.Usage, err)
	}
}

// TestIsolationMembershipChange removes a member from its tenant while it
// watches: its watches end within a second, and its next requests see
// nothing of the tenant.
func TestIsolationMembershipChange(t *testing.T) {
	ctx := testContext(t)
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
	ctx := testContext(t)
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
	host, _, err := framework.Current().Clients(framework.AdminUser)
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
	if u := newTenant.Status.Usage; u != (tenantv1alpha1.TenantUsage{Namespaces: 1, Networks: 1}) {
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
