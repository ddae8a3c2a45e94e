package controller_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	hostapi "tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
)

// TestHostInformersIndexByTenantOnly checks the informers of namespaced
// host kinds the syncer makes one of per host namespace, or a few: they
// are indexed by tenant and by nothing else (a namespace index would hold
// a set per host namespace), and they hold only what carries the tenant
// label, as the factory's would.
func TestHostInformersIndexByTenantOnly(t *testing.T) {
	src, f := controllertest.NewSources(t)
	ctx := context.Background()
	marked := metav1.ObjectMeta{Name: "members", Namespace: "t1-web", Labels: map[string]string{hostnames.TenantLabel: "t1"}}
	other := metav1.ObjectMeta{Name: "other", Namespace: "t1-web"}
	for _, c := range []struct {
		resource string
		informer cache.SharedIndexInformer
		create   func(metav1.ObjectMeta) error
	}{
		{"rolebindings", src.HostRoleBindings, func(m metav1.ObjectMeta) error {
			_, err := f.Kube.RbacV1().RoleBindings(m.Namespace).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: m}, metav1.CreateOptions{})
			return err
		}},
		{"services", src.HostServices, func(m metav1.ObjectMeta) error {
			_, err := f.Kube.CoreV1().Services(m.Namespace).Create(ctx, &corev1.Service{ObjectMeta: m}, metav1.CreateOptions{})
			return err
		}},
		{"resourcequotas", src.HostResourceQuotas, func(m metav1.ObjectMeta) error {
			_, err := f.Kube.CoreV1().ResourceQuotas(m.Namespace).Create(ctx, &corev1.ResourceQuota{ObjectMeta: m}, metav1.CreateOptions{})
			return err
		}},
		{"limitranges", src.HostLimitRanges, func(m metav1.ObjectMeta) error {
			_, err := f.Kube.CoreV1().LimitRanges(m.Namespace).Create(ctx, &corev1.LimitRange{ObjectMeta: m}, metav1.CreateOptions{})
			return err
		}},
	} {
		t.Run(c.resource, func(t *testing.T) {
			if got := slices.Sorted(maps.Keys(c.informer.GetIndexer().GetIndexers())); !slices.Equal(got, []string{controller.ByTenant}) {
				t.Errorf("indexes: got %v, want only %q", got, controller.ByTenant)
			}
			if err := c.create(other); err != nil {
				t.Fatal(err)
			}
			if err := c.create(marked); err != nil {
				t.Fatal(err)
			}
			if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
				_, ok, err := c.informer.GetIndexer().GetByKey("t1-web/members")
				return ok, err
			}); err != nil {
				t.Fatalf("the informer never showed the labelled object: %v", err)
			}
			objs, err := c.informer.GetIndexer().ByIndex(controller.ByTenant, "t1")
			if err != nil || len(objs) != 1 {
				t.Errorf("by tenant t1: got %d objects (%v), want 1", len(objs), err)
			}
			// The informer lists only what carries the tenant label.
			lists := 0
			for _, a := range f.Kube.Actions() {
				if l, ok := a.(k8stesting.ListAction); ok && a.GetResource().Resource == c.resource {
					lists++
					if sel := l.GetListRestrictions().Labels.String(); sel != hostnames.TenantLabel {
						t.Errorf("list of %s selects %q, want %q", c.resource, sel, hostnames.TenantLabel)
					}
				}
			}
			if lists == 0 {
				t.Errorf("no list of %s", c.resource)
			}
		})
	}
}

// TestSourcesShareTheProcessInformers checks the terms' view of the
// process' informer of every FlowSchema: a term reads its store (no
// informer of its own holds the tenants' FlowSchemas a second time),
// indexed by tenant, and a second term over the same running informer
// starts as the first did.
func TestSourcesShareTheProcessInformers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var flowSchemas cache.SharedIndexInformer
	share := func(host *controller.HostClients, f *controllertest.Fakes) {
		if flowSchemas == nil {
			factory := informers.NewSharedInformerFactory(f.Kube, 0)
			flowSchemas = factory.Flowcontrol().V1().FlowSchemas().Informer()
			if err := controller.Shared(flowSchemas); err != nil {
				t.Fatal(err)
			}
			factory.Start(ctx.Done())
		}
		host.FlowSchemas = flowSchemas
	}
	src, f := controllertest.NewSources(t, share)
	fs := func(name string, labels map[string]string) *flowcontrolv1.FlowSchema {
		return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	for _, o := range []*flowcontrolv1.FlowSchema{fs("tenant.io-t1", map[string]string{hostnames.TenantLabel: "t1"}), fs("exempt", nil)} {
		if _, err := f.Kube.FlowcontrolV1().FlowSchemas().Create(ctx, o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return len(flowSchemas.GetStore().ListKeys()) == 2, nil
	}); err != nil {
		t.Fatalf("the process' informer never held both FlowSchemas: %v", err)
	}
	if src.HostFlowSchemas.GetStore() != flowSchemas.GetStore() {
		t.Error("the term reads a FlowSchema store of its own, not the process' informer's")
	}
	if objs, err := src.HostFlowSchemas.GetIndexer().ByIndex(controller.ByTenant, "t1"); err != nil || len(objs) != 1 {
		t.Errorf("FlowSchemas ByTenant t1: got %d (%v), want 1", len(objs), err)
	}
	// A second term: its sources must not index or transform the running
	// informers again (which fails once they run).
	again, _ := controllertest.NewSources(t, share)
	if again.HostFlowSchemas.GetStore() != flowSchemas.GetStore() {
		t.Error("the second term reads a FlowSchema store of its own")
	}
}

// TestHostNamespacesHeldAndSelected: the syncer's informer of host
// namespaces is its own, lists and watches only those that carry the
// tenant label,
// holds each as a host.HeldNamespace, and indexes them by tenant alone
// (a namespace index of cluster-scoped objects would be one set of every
// key).
func TestHostNamespacesHeldAndSelected(t *testing.T) {
	src, f := controllertest.NewSources(t)
	ctx := context.Background()
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "t1-5kq2x-web", Labels: map[string]string{hostnames.TenantLabel: "t1"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}},
	} {
		if _, err := f.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := slices.Sorted(maps.Keys(src.HostNamespaces.GetIndexer().GetIndexers())); !slices.Equal(got, []string{controller.ByTenant}) {
		t.Errorf("indexes: got %v, want only %q", got, controller.ByTenant)
	}
	controllertest.Eventually(t, "the informer holds the tenant's namespace", func() bool {
		_, ok, _ := src.HostNamespaces.GetStore().GetByKey("t1-5kq2x-web")
		return ok
	})
	obj, _, _ := src.HostNamespaces.GetStore().GetByKey("t1-5kq2x-web")
	if _, held := obj.(*hostapi.HeldNamespace); !held {
		t.Errorf("the informer holds a %T, want a *host.HeldNamespace", obj)
	}
	if objs, err := src.HostNamespaces.GetIndexer().ByIndex(controller.ByTenant, "t1"); err != nil || len(objs) != 1 {
		t.Errorf("by tenant t1: got %d objects (%v), want 1", len(objs), err)
	}
	// The host selects; the fake clientset's watches do not, so what the
	// informer asks for is checked, not what it holds.
	asked := 0
	for _, a := range f.Kube.Actions() {
		if a.GetResource().Resource != "namespaces" {
			continue
		}
		var sel string
		switch r := a.(type) {
		case k8stesting.ListAction:
			sel = r.GetListRestrictions().Labels.String()
		case k8stesting.WatchAction:
			sel = r.GetWatchRestrictions().Labels.String()
		default:
			continue
		}
		asked++
		if sel != hostnames.TenantLabel {
			t.Errorf("the %s of namespaces selects %q, want %q", a.GetVerb(), sel, hostnames.TenantLabel)
		}
	}
	if asked < 2 {
		t.Errorf("%d lists and watches of namespaces, want a list and a watch", asked)
	}
}
