package kindstore

import (
	"context"
	"maps"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Object is what every tenant.io kind is: a runtime.Object with ObjectMeta.
type Object interface {
	runtime.Object
	metav1.Object
}

// Kind describes one kind to the generic strategies: where its spec and
// status are and how it is validated. S and St are its spec and status types.
type Kind[T Object, S any, St any] struct {
	// Spec and Status return pointers into the object.
	Spec   func(T) *S
	Status func(T) *St
	// Namespaced is true for kinds that live in a tenant's virtual Namespace.
	Namespaced bool
	// TenantOwned is true for kinds partitioned by tenant: the server sets
	// their tenant label, and nobody may change it.
	TenantOwned bool
	// Validate, ValidateUpdate and ValidateStatusUpdate are the kind's
	// functions from pkg/apis/tenant/validation.
	// ServerOwnedStatus, if set, copies from src into dst the status fields
	// only the server itself sets (a Tenant's addresses, a Network's
	// subnets and NAT gateway address, set by IPAM in the create and
	// update hooks): create and update keep what those hooks recorded
	// with Write.AssignStatus, and otherwise nothing (create) or
	// the stored values (update); status writes keep the stored values.
	// What a request writes into these fields never counts.
	ServerOwnedStatus func(dst, src T)
	// KeepAssigned, if set, copies into a new object what the server or the
	// user assigned once and an update left unset (an address, subnets), so
	// that an apply or replace that omits them means "no change".
	KeepAssigned func(newObj, oldObj T)
	// InitialStatus, if set, fills in the status of a new object (its
	// phase and conditions before the syncer first looks at it).
	InitialStatus        func(T)
	Validate             func(T) field.ErrorList
	ValidateUpdate       func(newObj, oldObj T) field.ErrorList
	ValidateStatusUpdate func(newObj, oldObj T) field.ErrorList
}

// Strategy is the create, update and delete strategy of a kind: status is
// owned by the status subresource, generation counts spec changes.
type Strategy[T Object, S any, St any] struct {
	runtime.ObjectTyper
	names.NameGenerator
	Kind Kind[T, S, St]
}

// NewStrategy returns the strategy of kind k.
func NewStrategy[T Object, S any, St any](typer runtime.ObjectTyper, k Kind[T, S, St]) Strategy[T, S, St] {
	return Strategy[T, S, St]{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator, Kind: k}
}

var (
	_ rest.RESTCreateStrategy  = Strategy[Object, struct{}, struct{}]{}
	_ rest.RESTUpdateStrategy  = Strategy[Object, struct{}, struct{}]{}
	_ rest.RESTDeleteStrategy  = Strategy[Object, struct{}, struct{}]{}
	_ rest.ResetFieldsStrategy = Strategy[Object, struct{}, struct{}]{}
)

// NamespaceScoped implements rest.RESTCreateStrategy.
func (s Strategy[T, S, St]) NamespaceScoped() bool { return s.Kind.Namespaced }

// PrepareForCreate clears status, starts generation at 1 and, for tenant
// owned kinds, labels the object with the caller's tenant.
func (s Strategy[T, S, St]) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	o := obj.(T)
	var zero St
	*s.Kind.Status(o) = zero
	if s.Kind.ServerOwnedStatus != nil {
		// Only what the store's hooks assigned: see AssignStatus.
		from := o
		if assigned, ok := assignedStatus(ctx, obj); ok {
			from = assigned.(T)
		}
		s.Kind.ServerOwnedStatus(o, from)
	}
	if s.Kind.InitialStatus != nil {
		s.Kind.InitialStatus(o)
	}
	o.SetGeneration(1)
	recordChange(ctx, o)
	if s.Kind.TenantOwned {
		if t, ok := tenancy.TenantFrom(ctx); ok && t != "" {
			labels := writable(o.GetLabels())
			if _, set := labels[tenancy.TenantLabel]; !set {
				labels[tenancy.TenantLabel] = t
			}
			// The tenant's UID is the server's to set, whatever was asked.
			delete(labels, tenancy.TenantUIDLabel)
			if uid := tenancy.TenantUIDFrom(ctx); uid != "" {
				labels[tenancy.TenantUIDLabel] = string(uid)
			}
			o.SetLabels(labels)
		}
	}
}

// PrepareForUpdate keeps the stored status and bumps generation when the spec changed.
func (s Strategy[T, S, St]) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	n, o := obj.(T), old.(T)
	*s.Kind.Status(n) = *s.Kind.Status(o)
	if s.Kind.ServerOwnedStatus != nil {
		// What the store's hooks assigned (see AssignStatus), else the
		// stored values, which the line above kept.
		if assigned, ok := assignedStatus(ctx, obj); ok {
			s.Kind.ServerOwnedStatus(n, assigned.(T))
		}
	}
	if s.Kind.KeepAssigned != nil {
		s.Kind.KeepAssigned(n, o)
	}
	if s.Kind.TenantOwned {
		// A write that drops the tenant label means "no change", not a
		// move; the tenant UID label stays as the server set it.
		keep := []string{tenancy.TenantUIDLabel}
		if _, set := n.GetLabels()[tenancy.TenantLabel]; !set {
			keep = append(keep, tenancy.TenantLabel)
		}
		n.SetLabels(keepValues(n.GetLabels(), o.GetLabels(), keep))
	}
	if !apiequality.Semantic.DeepEqual(*s.Kind.Spec(n), *s.Kind.Spec(o)) {
		n.SetGeneration(o.GetGeneration() + 1)
		recordChange(ctx, n)
	} else {
		keepChange(n, o)
	}
}

// changeAnnotations are the annotations in which the server records who
// last changed an object's spec, and when. Only the server sets them: what
// a request writes there is replaced.
var changeAnnotations = []string{hostnames.ChangedByAnnotation, hostnames.ChangedAtAnnotation}

// recordChange records on o that the caller of ctx changed its spec now.
func recordChange(ctx context.Context, o metav1.Object) {
	a := writable(o.GetAnnotations())
	for _, k := range changeAnnotations {
		delete(a, k)
	}
	if u, ok := genericapirequest.UserFrom(ctx); ok && u.GetName() != "" {
		a[hostnames.ChangedByAnnotation] = u.GetName()
	}
	a[hostnames.ChangedAtAnnotation] = time.Now().UTC().Format(time.RFC3339Nano)
	o.SetAnnotations(a)
}

// keepChange keeps on n what old recorded of its last change: a write that
// leaves the spec alone changes neither.
func keepChange(n, old metav1.Object) {
	n.SetAnnotations(keepValues(n.GetAnnotations(), old.GetAnnotations(), changeAnnotations))
}

// keepValues returns m with the keys of keep as old has them (absent where
// old has none). m is left as it is: it may be a stored object's map,
// which other objects share (see apiserver.StorageCodec); a copy is made
// when something changes.
func keepValues(m, old map[string]string, keep []string) map[string]string {
	same := true
	for _, k := range keep {
		v, ok := old[k]
		if w, has := m[k]; ok != has || v != w {
			same = false
			break
		}
	}
	if same {
		return m
	}
	out := writable(m)
	for _, k := range keep {
		if v, ok := old[k]; ok {
			out[k] = v
		} else {
			delete(out, k)
		}
	}
	return out
}

// writable returns a copy of m to write into: the map an object holds may
// be shared with other objects.
func writable(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}

// Validate implements rest.RESTCreateStrategy.
func (s Strategy[T, S, St]) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	o := obj.(T)
	errs := s.Kind.Validate(o)
	if s.Kind.TenantOwned {
		errs = append(errs, validateTenantLabel(ctx, o)...)
	}
	return errs
}

// ValidateUpdate implements rest.RESTUpdateStrategy.
func (s Strategy[T, S, St]) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	n, o := obj.(T), old.(T)
	errs := s.Kind.ValidateUpdate(n, o)
	if s.Kind.TenantOwned {
		errs = append(errs, validateTenantLabelUnchanged(n, o)...)
	}
	return errs
}

// WarningsOnCreate implements rest.RESTCreateStrategy.
func (Strategy[T, S, St]) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

// WarningsOnUpdate implements rest.RESTUpdateStrategy.
func (Strategy[T, S, St]) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// AllowCreateOnUpdate implements rest.RESTUpdateStrategy: objects are created with POST only.
func (Strategy[T, S, St]) AllowCreateOnUpdate() bool { return false }

// AllowUnconditionalUpdate implements rest.RESTUpdateStrategy.
func (Strategy[T, S, St]) AllowUnconditionalUpdate() bool { return true }

// Canonicalize implements rest.RESTCreateStrategy.
func (Strategy[T, S, St]) Canonicalize(runtime.Object) {}

// GetResetFields says that writes to the main resource never change status.
func (Strategy[T, S, St]) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return resetFields(fieldpath.MakePathOrDie("status"))
}

// StatusStrategy is the update strategy of a kind's status subresource:
// it changes status and nothing of the spec.
type StatusStrategy[T Object, S any, St any] struct {
	Strategy[T, S, St]
}

// NewStatusStrategy returns the status strategy of kind k.
func NewStatusStrategy[T Object, S any, St any](typer runtime.ObjectTyper, k Kind[T, S, St]) StatusStrategy[T, S, St] {
	return StatusStrategy[T, S, St]{NewStrategy(typer, k)}
}

var _ rest.RESTUpdateStrategy = StatusStrategy[Object, struct{}, struct{}]{}

// PrepareForUpdate keeps the stored spec, labels and annotations.
func (s StatusStrategy[T, S, St]) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	n, o := obj.(T), old.(T)
	*s.Kind.Spec(n) = *s.Kind.Spec(o)
	n.SetLabels(o.GetLabels())
	n.SetAnnotations(o.GetAnnotations())
	if s.Kind.ServerOwnedStatus != nil {
		s.Kind.ServerOwnedStatus(n, o)
	}
}

// ValidateUpdate implements rest.RESTUpdateStrategy.
func (s StatusStrategy[T, S, St]) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return s.Kind.ValidateStatusUpdate(obj.(T), old.(T))
}

// GetResetFields says that writes to the status subresource never change
// the spec or the metadata that the main resource owns.
func (StatusStrategy[T, S, St]) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return resetFields(
		fieldpath.MakePathOrDie("spec"),
		fieldpath.MakePathOrDie("metadata", "labels"),
		fieldpath.MakePathOrDie("metadata", "annotations"),
	)
}

func resetFields(paths ...fieldpath.Path) map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		"tenant.io/v1alpha1": fieldpath.NewSet(paths...),
	}
}

func validateTenantLabel(ctx context.Context, o metav1.Object) field.ErrorList {
	tenant, _ := tenancy.TenantFrom(ctx)
	p := field.NewPath("metadata", "labels").Key(tenancy.TenantLabel)
	if v := o.GetLabels()[tenancy.TenantLabel]; v != tenant {
		return field.ErrorList{field.Invalid(p, v, "is set by the server to the tenant of the caller; leave it unset")}
	}
	return nil
}

func validateTenantLabelUnchanged(n, o metav1.Object) field.ErrorList {
	p := field.NewPath("metadata", "labels").Key(tenancy.TenantLabel)
	if nv, ov := n.GetLabels()[tenancy.TenantLabel], o.GetLabels()[tenancy.TenantLabel]; nv != ov {
		return field.ErrorList{field.Invalid(p, nv, "field is immutable")}
	}
	return nil
}

// ReasonNotSynced is the reason of the HostSynced and Ready conditions of
// an object the syncer has not looked at yet.
const ReasonNotSynced = "NotSynced"

// NotSynced sets the HostSynced and Ready conditions of a new object: False,
// because nothing exists on the host for it yet.
func NotSynced(conditions *[]metav1.Condition, message string) {
	for _, typ := range []string{tenant.ConditionHostSynced, tenant.ConditionReady} {
		meta.SetStatusCondition(conditions, metav1.Condition{
			Type: typ, Status: metav1.ConditionFalse, Reason: ReasonNotSynced, Message: message, ObservedGeneration: 1,
		})
	}
}
