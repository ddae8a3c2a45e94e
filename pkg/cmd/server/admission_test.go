package server

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// TestAdmissionNamespacesLeaveOutTheSyncers: the admission plugins'
// informer of host namespaces, registered in the process' factory, holds
// the host's other namespaces and none of the syncer's (which carry the
// tenant label), and its lister answers for them as the plugins ask.
func TestAdmissionNamespacesLeaveOutTheSyncers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := kubefake.NewClientset(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "acme-5kq2x-web", Labels: map[string]string{hostnames.TenantLabel: "acme"}}},
	)
	factory := informers.NewSharedInformerFactory(client, 0)
	factory.InformerFor(&corev1.Namespace{}, admissionNamespaces)
	lister := factory.Core().V1().Namespaces().Lister() // as the admission plugins ask for it
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%v never synced", typ)
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		_, err := lister.Get("kube-system")
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the host's own namespace is not held: %v", err)
	}
	if _, err := lister.Get("acme-5kq2x-web"); err == nil {
		t.Error("the syncer's host namespace is held by the admission plugins' informer")
	}
	lists := 0
	for _, a := range client.Actions() {
		if l, ok := a.(k8stesting.ListAction); ok && a.GetResource().Resource == "namespaces" {
			lists++
			if sel := l.GetListRestrictions().Labels.String(); sel != "!"+hostnames.TenantLabel {
				t.Errorf("the list of namespaces selects %q, want %q", sel, "!"+hostnames.TenantLabel)
			}
		}
	}
	if lists == 0 {
		t.Error("no list of namespaces")
	}
}
