package floatingip

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// CauseTypeTargetTaken is the cause of a FloatingIP refused because another
// FloatingIP targets the same workload.
const CauseTypeTargetTaken metav1.CauseType = "TargetTaken"

// installTargets refuses (409) a FloatingIP whose target another
// FloatingIP of its namespace already has: a pod or VM leaves through one
// EgressIP, and two would make its source address a coin toss. The check
// reads the namespace's FloatingIPs at admission; two creates racing past
// it are settled by the syncer, which binds only the older of the two
// (and reports the other Pending with reason TargetTaken).
func installTargets(st *kindstore.Storage) {
	check := func(ctx context.Context, fip *tenant.FloatingIP) error {
		if fip.Spec.Target == nil {
			return nil
		}
		other, err := TargetHolder(ctx, st.Store, fip)
		if err != nil || other == "" {
			return err
		}
		return TargetTaken(fip, other)
	}
	st.Install(kindstore.Hooks{Admit: func(ctx context.Context, obj, old runtime.Object) error {
		fip, ok := obj.(*tenant.FloatingIP)
		if !ok {
			return apierrors.NewInternalError(fmt.Errorf("floatingips store got a %T", obj))
		}
		if prev, ok := old.(*tenant.FloatingIP); ok && tenant.SameTarget(fip.Spec.Target, prev.Spec.Target) {
			return nil
		}
		return check(ctx, fip)
	}})
}

// TargetHolder returns the name of another FloatingIP of fip's namespace
// (in ctx) with fip's target, or "".
func TargetHolder(ctx context.Context, store *genericregistry.Store, fip *tenant.FloatingIP) (string, error) {
	list, err := store.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return "", err
	}
	holder := ""
	err = meta.EachListItem(list, func(item runtime.Object) error {
		o, ok := item.(*tenant.FloatingIP)
		if ok && holder == "" && o.Name != fip.Name && tenant.SameTarget(o.Spec.Target, fip.Spec.Target) {
			holder = o.Name
		}
		return nil
	})
	return holder, err
}

// TargetTaken is the 409 of FloatingIP fip, whose target FloatingIP other
// already has.
func TargetTaken(fip *tenant.FloatingIP, other string) error {
	tg := fip.Spec.Target
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure,
		Code:   http.StatusConflict,
		Reason: metav1.StatusReasonConflict,
		Message: fmt.Sprintf("Operation cannot be fulfilled on floatingips.tenant.io %q: %s %s is already the target of FloatingIP %s; a workload has one floating IP",
			fip.Name, tg.Kind, tg.Name, other),
		Details: &metav1.StatusDetails{Name: fip.Name, Group: tenant.GroupName, Kind: Resource, Causes: []metav1.StatusCause{{
			Type: CauseTypeTargetTaken, Field: "spec.target",
			Message: fmt.Sprintf("%s %s is the target of floatingips %s", tg.Kind, tg.Name, other),
		}}},
	}}
}
