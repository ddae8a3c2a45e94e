package controller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestUnreachable(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/api", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}
	gr := schema.GroupResource{Resource: "namespaces"}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{refused, true},
		{fmt.Errorf("creating: %w", refused), true},
		{apierrors.NewServiceUnavailable("etcd"), true},
		{apierrors.NewTimeoutError("slow", 1), true},
		{context.DeadlineExceeded, true},
		{apierrors.NewForbidden(gr, "x", errors.New("no")), false},
		{apierrors.NewAlreadyExists(gr, "x"), false},
		{apierrors.NewInvalid(schema.GroupKind{Kind: "Namespace"}, "x", nil), false},
	} {
		if got := Unreachable(c.err); got != c.want {
			t.Errorf("Unreachable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestSetCondition(t *testing.T) {
	var conditions []metav1.Condition
	if !SetCondition(&conditions, 1, "HostSynced", false, ReasonHostUnreachable, "down") {
		t.Fatal("first set reported no change")
	}
	if SetCondition(&conditions, 1, "HostSynced", false, ReasonHostUnreachable, "down") {
		t.Error("setting the same condition again reported a change: it would write status in a loop")
	}
	if !SetCondition(&conditions, 2, "HostSynced", true, ReasonSynced, "ok") {
		t.Error("a new status reported no change")
	}
	if c := conditions[0]; c.Status != metav1.ConditionTrue || c.ObservedGeneration != 2 || c.Reason != ReasonSynced {
		t.Errorf("condition %+v", c)
	}
}
