package kindstore

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
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
)

// CauseTypeAttached is the cause of a refused delete: an object that still
// depends on the one being deleted.
const CauseTypeAttached metav1.CauseType = "Attached"

// Attached lists, as status causes, the objects that the stores hold in ctx
// (a tenant's range, and a namespace of it if ctx names one), by resource
// name. The cause's Field is "<resource> [<namespace>/]<name>".
func Attached(ctx context.Context, stores map[string]*genericregistry.Store, owner string) ([]metav1.StatusCause, error) {
	resources := make([]string, 0, len(stores))
	for r := range stores {
		resources = append(resources, r)
	}
	sort.Strings(resources)
	var causes []metav1.StatusCause
	for _, resource := range resources {
		list, err := stores[resource].List(ctx, &metainternalversion.ListOptions{})
		if err != nil {
			return nil, err
		}
		err = meta.EachListItem(list, func(item runtime.Object) error {
			ref, err := ObjectRef(item)
			if err != nil {
				return err
			}
			causes = append(causes, metav1.StatusCause{
				Type:    CauseTypeAttached,
				Field:   resource + " " + ref,
				Message: fmt.Sprintf("%s %s is attached to %s", resource, ref, owner),
			})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return causes, nil
}

// ObjectRef names obj as "[namespace/]name".
func ObjectRef(obj runtime.Object) (string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", err
	}
	if m.GetNamespace() != "" {
		return m.GetNamespace() + "/" + m.GetName(), nil
	}
	return m.GetName(), nil
}

// namedInMessage is how many causes a refused delete's message names; all
// of them are in its details.
const namedInMessage = 3

// DeleteConflict is the 409 of a delete refused because of causes. Its
// message names the first causes (kubectl prints the message, not the
// details' causes), as "(blocked by <field>, <field>, <field> and N more)".
func DeleteConflict(gr schema.GroupResource, name, reason string, causes []metav1.StatusCause) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusConflict,
		Reason:  metav1.StatusReasonConflict,
		Message: fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s%s", gr.String(), name, reason, blockedBy(causes)),
		Details: &metav1.StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource, Causes: causes},
	}}
}

// blockedBy names the first causes by their Field, or their Message when
// they have none.
func blockedBy(causes []metav1.StatusCause) string {
	if len(causes) == 0 {
		return ""
	}
	named := make([]string, 0, namedInMessage)
	for _, c := range causes[:min(len(causes), namedInMessage)] {
		if c.Field != "" {
			named = append(named, c.Field)
		} else {
			named = append(named, c.Message)
		}
	}
	list := strings.Join(named, ", ")
	if more := len(causes) - len(named); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return " (blocked by " + list + ")"
}
