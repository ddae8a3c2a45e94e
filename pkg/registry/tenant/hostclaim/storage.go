package hostclaim

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/hostclass"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Resource is the resource name of HostClaims.
const Resource = "hostclaims"

// NewStorage returns the storage of hostclaims and hostclaims/status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, deps kindstore.Deps) (*kindstore.Storage, error) {
	st, err := kindstore.NewStorage(scheme, optsGetter, kindstore.Resource[*tenant.HostClaim, tenant.HostClaimSpec, tenant.HostClaimStatus]{
		Kind:          Kind,
		Plural:        Resource,
		Singular:      "hostclaim",
		ShortNames:    []string{"hc"},
		New:           func() runtime.Object { return &tenant.HostClaim{} },
		NewList:       func() runtime.Object { return &tenant.HostClaimList{} },
		Fields:        SelectableFields,
		QuotaResource: "hostClaims",
		Table:         kindstore.Table[*tenant.HostClaim]{Columns: columns},
	}, deps)
	if err != nil {
		return nil, err
	}
	installClassCheck(st, deps)
	return st, nil
}

// installClassCheck refuses (422) a HostClaim whose class does not exist,
// is not offered to the claim's tenant, or whose selector uses a label the
// class does not let tenants select on. Only creates are checked: the
// class and selector are immutable, and a class withdrawn later leaves
// the claims it bound in place.
func installClassCheck(st *kindstore.Storage, deps kindstore.Deps) {
	st.Install(kindstore.Hooks{Admit: func(ctx context.Context, obj, old runtime.Object) error {
		c, ok := obj.(*tenant.HostClaim)
		if !ok {
			return apierrors.NewInternalError(fmt.Errorf("hostclaims store got a %T", obj))
		}
		if old != nil || deps.Storages == nil || deps.Storages.HostClasses == nil {
			return nil
		}
		t, _ := tenancy.TenantFrom(ctx)
		classPath := field.NewPath("spec", "hostClass")
		got, err := deps.Storages.HostClasses.Store.Get(ctx, c.Spec.HostClass, &metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return invalid(c, field.NotFound(classPath, c.Spec.HostClass))
		}
		if err != nil {
			return err
		}
		class := got.(*tenant.HostClass)
		if !hostclass.OfferedTo(t, "", class) {
			// The same answer as a class that does not exist: classes
			// offered to others are none of this tenant's business.
			return invalid(c, field.NotFound(classPath, c.Spec.HostClass))
		}
		if errs := SelectorWithinClass(c.Spec.HostSelector, class); len(errs) > 0 {
			return invalid(c, errs...)
		}
		return nil
	}})
}

// SelectorWithinClass checks that sel selects only on the tenant labels of class.
func SelectorWithinClass(sel *metav1.LabelSelector, class *tenant.HostClass) field.ErrorList {
	if sel == nil {
		return nil
	}
	p := field.NewPath("spec", "hostSelector")
	allowed := class.Spec.TenantLabels
	hint := "the class's servers may be selected on " + strings.Join(allowed, ", ")
	if len(allowed) == 0 {
		hint = "the class lets claims select on no label"
	}
	var errs field.ErrorList
	for k := range sel.MatchLabels {
		if !slices.Contains(allowed, k) {
			errs = append(errs, field.Invalid(p.Child("matchLabels").Key(k), k, hint))
		}
	}
	for i, r := range sel.MatchExpressions {
		if !slices.Contains(allowed, r.Key) {
			errs = append(errs, field.Invalid(p.Child("matchExpressions").Index(i).Child("key"), r.Key, hint))
		}
	}
	return errs
}

func invalid(c *tenant.HostClaim, errs ...*field.Error) error {
	return apierrors.NewInvalid(tenant.Kind("HostClaim"), c.Name, errs)
}

var columns = []kindstore.Column[*tenant.HostClaim]{
	{Name: "Phase", Type: "string", Description: "Pending, Bound, Provisioning, Provisioned, Deprovisioning or Failed.", Cell: func(o *tenant.HostClaim) interface{} {
		return string(o.Status.Phase)
	}},
	{Name: "Host Class", Type: "string", Description: "The class the server comes from.", Cell: func(o *tenant.HostClaim) interface{} { return o.Spec.HostClass }},
	{Name: "Address", Type: "string", Description: "The server's first IP address.", Cell: func(o *tenant.HostClaim) interface{} {
		for _, a := range o.Status.Addresses {
			if a.Type == "InternalIP" {
				return a.Address
			}
		}
		return "<none>"
	}},
	{Name: "Power", Type: "string", Description: "On or Off, as the server reports it.", Cell: func(o *tenant.HostClaim) interface{} {
		return kindstore.OrNone(string(o.Status.Power))
	}},
	{Name: "Online", Type: "boolean", Priority: 1, Description: "Whether the server is asked to be powered on.", Cell: func(o *tenant.HostClaim) interface{} { return o.Spec.Online }},
	{Name: "Image", Type: "string", Priority: 1, Description: "The image provisioned.", Cell: func(o *tenant.HostClaim) interface{} {
		if o.Spec.Image == nil {
			return "<none>"
		}
		return o.Spec.Image.URL
	}},
	{Name: "Boot MAC", Type: "string", Priority: 1, Description: "MAC address of the boot NIC.", Cell: func(o *tenant.HostClaim) interface{} {
		return kindstore.OrNone(o.Status.BootMACAddress)
	}},
}
