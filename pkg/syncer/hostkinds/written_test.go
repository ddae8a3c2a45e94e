package hostkinds_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	flowcontrolclient "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"
	clienttesting "k8s.io/client-go/testing"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/onboarding"
)

// heldWatch passes its source's events on one at a time, as the test lets
// them through: an informer that lags behind the host by as many events
// as the test holds back.
type heldWatch struct {
	src    watch.Interface
	out    chan watch.Event
	pass   chan struct{}
	stop   chan struct{}
	closed sync.Once
}

func (w *heldWatch) run() {
	defer close(w.out)
	for ev := range w.src.ResultChan() {
		select {
		case <-w.pass:
		case <-w.stop:
			return
		}
		select {
		case w.out <- ev:
		case <-w.stop:
			return
		}
	}
}

func (w *heldWatch) ResultChan() <-chan watch.Event { return w.out }
func (w *heldWatch) Stop() {
	w.closed.Do(func() { close(w.stop); w.src.Stop() })
}

// laggingHost returns Sources whose informer of gvr shows an event only
// once the test sends on pass, over a fake host that answers an update of
// gvr on a stale resourceVersion 409, as kube-apiserver does.
func laggingHost(t *testing.T, gvr schema.GroupVersionResource) (src *controller.Sources, f *controllertest.Fakes, pass chan struct{}) {
	pass = make(chan struct{})
	src, f = controllertest.NewSources(t, func(_ *controller.HostClients, f *controllertest.Fakes) {
		var mu sync.Mutex
		version := 0
		stamp := func(obj runtime.Object) {
			version++
			m, _ := meta.Accessor(obj)
			m.SetResourceVersion(strconv.Itoa(version))
		}
		f.Kube.PrependReactor("create", gvr.Resource, func(a clienttesting.Action) (bool, runtime.Object, error) {
			mu.Lock()
			defer mu.Unlock()
			stamp(a.(clienttesting.CreateAction).GetObject())
			return false, nil, nil
		})
		f.Kube.PrependReactor("update", gvr.Resource, func(a clienttesting.Action) (bool, runtime.Object, error) {
			mu.Lock()
			defer mu.Unlock()
			obj := a.(clienttesting.UpdateAction).GetObject()
			m, _ := meta.Accessor(obj)
			have, err := f.Kube.Tracker().Get(gvr, m.GetNamespace(), m.GetName())
			if err != nil {
				return true, nil, err
			}
			hm, _ := meta.Accessor(have)
			if hm.GetResourceVersion() != m.GetResourceVersion() {
				return true, nil, apierrors.NewConflict(gvr.GroupResource(), m.GetName(),
					errStale{have: hm.GetResourceVersion(), sent: m.GetResourceVersion()})
			}
			stamp(obj)
			return false, nil, nil
		})
		f.Kube.PrependWatchReactor(gvr.Resource, func(a clienttesting.Action) (bool, watch.Interface, error) {
			inner, err := f.Kube.Tracker().Watch(gvr, a.GetNamespace())
			if err != nil {
				return true, nil, err
			}
			w := &heldWatch{src: inner, out: make(chan watch.Event), pass: pass, stop: make(chan struct{})}
			go w.run()
			return true, w, nil
		})
	})
	return src, f, pass
}

// TestRewrittenKindsKeepWhatTheyWrote: a FlowSchema the syncer changes
// twice before its informer shows the first change is changed on the
// version the syncer wrote, not the informer's older one. The host
// answers an update on a stale resourceVersion 409, as kube-apiserver
// does; without what the syncer wrote, each such change failed and was
// retried.
func TestRewrittenKindsKeepWhatTheyWrote(t *testing.T) {
	src, _, pass := laggingHost(t, flowSchemas)
	kind := hostkinds.New(src).FlowSchemas
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"}}
	marks := hostnames.Marks{Tenant: tn.Name, TenantUID: tn.UID, OwnerUID: tn.UID}
	ctx := context.Background()
	cachedVersion := func() string {
		obj, exists, _ := src.HostFlowSchemas.GetStore().GetByKey(onboarding.FlowSchemaName(tn.Name))
		if !exists {
			return ""
		}
		return obj.(*flowcontrolv1.FlowSchema).ResourceVersion
	}
	ensure := func(hostNamespaces ...string) *flowcontrolv1.FlowSchema {
		t.Helper()
		got, err := kind.Ensure(ctx, onboarding.FlowSchema(tn, hostNamespaces), marks)
		if err != nil {
			t.Fatalf("ensure with host namespaces %q: %v", hostNamespaces, err)
		}
		if !got.Synced {
			t.Fatalf("ensure with host namespaces %q: not synced: %s", hostNamespaces, got.Message)
		}
		return got.Obj
	}

	created := ensure("t-acme-default")
	pass <- struct{}{} // the informer shows the create, and nothing after it
	controllertest.Eventually(t, "the informer shows the created FlowSchema", func() bool { return cachedVersion() == created.ResourceVersion })

	first := ensure("t-acme-default", "t-acme-web")
	if first.ResourceVersion == created.ResourceVersion {
		t.Fatalf("adding a host namespace did not update the FlowSchema (version %s)", first.ResourceVersion)
	}
	second := ensure("t-acme-default", "t-acme-web", "t-acme-db")
	if second.ResourceVersion == first.ResourceVersion {
		t.Fatalf("adding a second host namespace did not update the FlowSchema (version %s)", second.ResourceVersion)
	}
	if got := cachedVersion(); got != created.ResourceVersion {
		t.Fatalf("the informer shows version %s; the test holds it at the create's, %s", got, created.ResourceVersion)
	}
	if n := len(second.Spec.Rules[0].Subjects); n != 3+2 { // three host namespaces' service accounts, two host groups
		t.Errorf("the FlowSchema names %d subjects, want 5", n)
	}
	// Once the informer shows the updates, Ensure finds nothing to write.
	pass <- struct{}{}
	pass <- struct{}{}
	controllertest.Eventually(t, "the informer shows the last update", func() bool { return cachedVersion() == second.ResourceVersion })
	if again := ensure("t-acme-default", "t-acme-web", "t-acme-db"); again.ResourceVersion != second.ResourceVersion {
		t.Errorf("an unchanged FlowSchema was written again: version %s, want %s", again.ResourceVersion, second.ResourceVersion)
	}
}

var flowSchemas = flowcontrolv1.SchemeGroupVersion.WithResource("flowschemas")

type errStale struct{ have, sent string }

func (e errStale) Error() string {
	return "the object has been modified (resourceVersion " + e.have + ", the update sent " + e.sent + ")"
}

// createdAndSeen makes tenant acme's FlowSchema through its host kind over
// laggingHost, and lets the informer show that create and nothing after
// it.
func createdAndSeen(t *testing.T) (controller.HostKind[*flowcontrolv1.FlowSchema], flowcontrolclient.FlowSchemaInterface,
	*tenant.Tenant, hostnames.Marks, *flowcontrolv1.FlowSchema) {
	t.Helper()
	src, f, pass := laggingHost(t, flowSchemas)
	kind := hostkinds.New(src).FlowSchemas
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"}}
	marks := hostnames.Marks{Tenant: tn.Name, TenantUID: tn.UID, OwnerUID: tn.UID}
	got, err := kind.Ensure(context.Background(), onboarding.FlowSchema(tn, []string{"t-acme-default"}), marks)
	if err != nil || !got.Synced {
		t.Fatalf("create: %v %+v", err, got)
	}
	pass <- struct{}{}
	controllertest.Eventually(t, "the informer shows the created FlowSchema", func() bool {
		obj, exists, _ := src.HostFlowSchemas.GetStore().GetByKey(onboarding.FlowSchemaName(tn.Name))
		return exists && obj.(*flowcontrolv1.FlowSchema).ResourceVersion == got.Obj.ResourceVersion
	})
	return kind, f.Kube.FlowcontrolV1().FlowSchemas(), tn, marks, got.Obj
}

// TestEnsureRepairsOnTheHostsLatest: a FlowSchema someone else changed
// after the version the informer shows (API Priority and Fairness writing
// its status right after the create) is repaired on the host's latest
// version, keeping that change, instead of failing on a 409.
func TestEnsureRepairsOnTheHostsLatest(t *testing.T) {
	ctx := context.Background()
	kind, api, tn, marks, created := createdAndSeen(t)

	// The host's controller writes status; the informer does not show it.
	fs := created.DeepCopy()
	fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse, Reason: "Found"}}
	withStatus, err := api.UpdateStatus(ctx, fs, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	changed, err := kind.Ensure(ctx, onboarding.FlowSchema(tn, []string{"t-acme-default", "t-acme-web"}), marks)
	if err != nil {
		t.Fatalf("a change on the informer's older version: %v", err)
	}
	if !changed.Synced || changed.Obj.ResourceVersion == withStatus.ResourceVersion {
		t.Fatalf("the FlowSchema was not changed: synced %v, version %s (the status write's %s)", changed.Synced, changed.Obj.ResourceVersion, withStatus.ResourceVersion)
	}
	onHost, err := api.Get(ctx, onboarding.FlowSchemaName(tn.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(onHost.Spec.Rules[0].Subjects); n != 2+2 {
		t.Errorf("the FlowSchema on the host names %d subjects, want 4 (two host namespaces, two host groups)", n)
	}
	if len(onHost.Status.Conditions) != 1 || onHost.Status.Conditions[0].Reason != "Found" {
		t.Errorf("the host's status was lost: %+v", onHost.Status.Conditions)
	}
}

// TestEnsureLeavesTheHostsLatestWhenNotOurs: a FlowSchema whose owner
// annotation someone changed after the version the informer shows is not
// repaired on the host's latest: the update's 409 stands, nothing is
// written, and the next reconcile, on the informer's view of it, decides.
func TestEnsureLeavesTheHostsLatestWhenNotOurs(t *testing.T) {
	ctx := context.Background()
	kind, api, tn, marks, created := createdAndSeen(t)
	taken := created.DeepCopy()
	taken.Annotations[hostnames.OwnerUIDAnnotation] = "someone-else"
	taken, err := api.Update(ctx, taken, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	_, err = kind.Ensure(ctx, onboarding.FlowSchema(tn, []string{"t-acme-default", "t-acme-web"}), marks)
	if !apierrors.IsConflict(err) {
		t.Fatalf("a change on a FlowSchema someone else took since: %v, want the update's 409", err)
	}
	onHost, err := api.Get(ctx, onboarding.FlowSchemaName(tn.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if onHost.ResourceVersion != taken.ResourceVersion || onHost.Annotations[hostnames.OwnerUIDAnnotation] != "someone-else" {
		t.Errorf("the FlowSchema was written: version %s (want %s), owner %q", onHost.ResourceVersion, taken.ResourceVersion, onHost.Annotations[hostnames.OwnerUIDAnnotation])
	}
}
