package tenant

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// CauseTypeAttached is the cause of a refused Tenant delete: an object the
// tenant still owns.
const CauseTypeAttached metav1.CauseType = "Attached"

// Offboarding decides whether a Tenant may be deleted: only when it owns
// nothing. Objects that outlived their Tenant would otherwise be inherited
// by the next Tenant of the same name.
type Offboarding struct {
	// Tenants is the storage of Tenants.
	Tenants *genericregistry.Store
	// Owned are the storages of tenant-owned kinds, by kind name.
	Owned map[string]*genericregistry.Store
}

// Blockers lists what tenant name still owns, and returns the Tenant read.
func (o *Offboarding) Blockers(ctx context.Context, name string) (*tenant.Tenant, []metav1.StatusCause, error) {
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	obj, err := o.Tenants.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	t := obj.(*tenant.Tenant)
	var causes []metav1.StatusCause
	scoped := tenancy.WithTenant(ctx, name)
	for _, kind := range sortedKeys(o.Owned) {
		list, err := o.Owned[kind].List(scoped, &metainternalversion.ListOptions{})
		if err != nil {
			return nil, nil, err
		}
		err = meta.EachListItem(list, func(item runtime.Object) error {
			m, err := meta.Accessor(item)
			if err != nil {
				return err
			}
			ref := m.GetName()
			if m.GetNamespace() != "" {
				ref = m.GetNamespace() + "/" + ref
			}
			causes = append(causes, metav1.StatusCause{
				Type:    CauseTypeAttached,
				Field:   kind + " " + ref,
				Message: fmt.Sprintf("%s %s is attached to tenant %s", kind, ref, name),
			})
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	if u := t.Status.Usage; len(causes) == 0 && (u.Namespaces+u.Networks+u.FloatingIPs+u.LoadBalancers) > 0 {
		// Charged but not stored yet: a create in flight.
		causes = append(causes, metav1.StatusCause{
			Type:    CauseTypeAttached,
			Message: fmt.Sprintf("tenant %s has creates in flight (usage %+v)", name, u),
		})
	}
	return t, causes, nil
}

// BeforeDelete refuses with 409 the delete of a Tenant that owns anything,
// listing every blocker, and otherwise lets it happen only if the Tenant is
// unchanged since it was checked: every create charges the Tenant's quota
// first, so a create racing with the delete changes its resourceVersion.
func (o *Offboarding) BeforeDelete(ctx context.Context, name string) (*metav1.Preconditions, error) {
	t, causes, err := o.Blockers(ctx, name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	if len(causes) > 0 {
		return nil, conflict(name, causes)
	}
	uid, rv := t.UID, t.ResourceVersion
	return &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}, nil
}

func conflict(name string, causes []metav1.StatusCause) error {
	kinds := map[string]int{}
	for _, c := range causes {
		kinds[strings.SplitN(c.Field, " ", 2)[0]]++
	}
	var parts []string
	for _, k := range sortedKeys(kinds) {
		if k != "" {
			parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
		}
	}
	msg := fmt.Sprintf("tenant %s still owns objects (%s); delete them first", name, strings.Join(parts, ", "))
	if len(parts) == 0 {
		msg = fmt.Sprintf("tenant %s has creates in flight; retry", name)
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusConflict,
		Reason:  metav1.StatusReasonConflict,
		Message: fmt.Sprintf("Operation cannot be fulfilled on tenants.tenant.io %q: %s", name, msg),
		Details: &metav1.StatusDetails{Name: name, Group: tenant.GroupName, Kind: "tenants", Causes: causes},
	}}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
