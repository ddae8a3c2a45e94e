package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/hostnames"
)

func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func hostNamespace(name, owner string) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if owner != "" {
		ns.Annotations = map[string]string{hostnames.OwnerUIDAnnotation: owner}
	}
	return ns
}

// TestKubePods lists the pods of one host namespace, sorted, and turns
// a host failure into a 503.
func TestKubePods(t *testing.T) {
	client := fake.NewClientset(hostNamespace("acme-1-dev", "uid-dev"), hostNamespace("acme-1-qa", ""),
		pod("acme-1-dev", "web"), pod("acme-1-dev", "db"), pod("acme-1-qa", "other"))
	pods := host.NewPods(client)
	ctx := context.Background()

	got, err := host.PodsIn(ctx, pods, "acme-1-dev", "uid-dev")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "db,web" {
		t.Errorf("pods of acme-1-dev = %q, want [db web]", got)
	}
	if got, err := host.PodsIn(ctx, pods, "missing", "uid-dev"); err != nil || len(got) != 0 {
		t.Errorf("pods of a missing namespace: %q, %v", got, err)
	}
	// Someone else's namespace under the would-be name, or one made for
	// an earlier Namespace: its pods are not the tenant's.
	for _, owner := range []string{"uid-qa", ""} {
		if got, err := host.PodsIn(ctx, pods, "acme-1-qa", types.UID(owner)); err != nil || len(got) != 0 {
			t.Errorf("pods of a namespace not made for %q: %q, %v", owner, got, err)
		}
	}
	if got, err := host.PodsIn(ctx, pods, "acme-1-dev", "uid-other"); err != nil || len(got) != 0 {
		t.Errorf("pods of a namespace made for another owner: %q, %v", got, err)
	}

	client.PrependReactor("list", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	_, err = host.PodsIn(ctx, pods, "acme-1-dev", "uid-dev")
	if !apierrors.IsServiceUnavailable(err) ||
		!strings.Contains(err.Error(), "cannot check the host for pods: listing pods in host namespace acme-1-dev: connection refused") {
		t.Errorf("host failure: %v, want 503", err)
	}
}
