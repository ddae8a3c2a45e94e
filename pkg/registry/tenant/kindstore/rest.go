package kindstore

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// GuardedREST serves a store through a Guard: every verb is bound to what
// the caller may see and write.
type GuardedREST struct {
	*genericregistry.Store
	Guard   tenancy.Guard
	Watches *tenancy.WatchRegistry
	Names
	// Quota, when set, charges creates to the tenant's quota of QuotaResource.
	Quota         QuotaTracker
	QuotaResource string
	// BeforeDelete, AroundUpdate and Admit, when set, are the hooks of
	// deletes, updates and of every write; Storage.Install sets them.
	BeforeDelete BeforeDeleteFunc
	AroundUpdate AroundUpdateFunc
	Admit        AdmitFunc
}

// admitCreate is validate followed by r.Admit: the create validation of
// the store.
func (r *GuardedREST) admitCreate(validate rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	if r.Admit == nil {
		return validate
	}
	return func(ctx context.Context, obj runtime.Object) error {
		if validate != nil {
			if err := validate(ctx, obj); err != nil {
				return err
			}
		}
		return r.Admit(ctx, obj, nil)
	}
}

// admitUpdate is validate followed by r.Admit: the update validation of
// the store.
func (r *GuardedREST) admitUpdate(validate rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	if r.Admit == nil {
		return validate
	}
	return func(ctx context.Context, obj, old runtime.Object) error {
		if validate != nil {
			if err := validate(ctx, obj, old); err != nil {
				return err
			}
		}
		return r.Admit(ctx, obj, old)
	}
}

var (
	_ rest.StandardStorage     = &GuardedREST{}
	_ rest.TableConvertor      = &GuardedREST{}
	_ rest.ResetFieldsStrategy = &GuardedREST{}
	_ rest.ShortNamesProvider  = &GuardedREST{}
	_ rest.CategoriesProvider  = &GuardedREST{}
)

func objectName(obj runtime.Object) string {
	if o, err := meta.Accessor(obj); err == nil {
		return o.GetName()
	}
	return ""
}

// Create implements rest.Creater.
func (r *GuardedREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	ctx, err := r.Guard.Write(ctx, objectName(obj))
	if err != nil {
		return nil, err
	}
	ctx = withWrite(ctx)
	createValidation = r.admitCreate(createValidation)
	if r.Quota == nil {
		return r.Store.Create(ctx, obj, createValidation, options)
	}
	// The quota is charged like admission (or earlier, when a kind's hook
	// starts the charge), and given back if storing it fails. (A create with generateName may
	// validate several times; it is charged once.)
	c := r.chargeOnCreate(ctx, createValidation, options != nil && len(options.DryRun) > 0)
	out, err := r.Store.Create(withCharge(ctx, c), obj, c.validate, options)
	if err != nil {
		c.giveBack(ctx)
	}
	return out, err
}

// quotaCharge charges one create to its tenant's quota, once, and gives
// the unit back if the create did not happen. The create validation,
// after admission, charges and waits for the outcome; a kind's hook may
// start the charge earlier (StartCharge), so that the tenant's quota is
// written while the hook does its own work (a Network's subnet claim): the
// create then waits for the slower of the two writes, not for both in
// turn. A create refused after its charge started gives the unit back
// once the charge is known; until then the tenant's usage counts it, as a
// create in flight.
type quotaCharge struct {
	r        *GuardedREST
	tenant   string
	dryRun   bool
	validate rest.ValidateObjectFunc

	once    sync.Once
	started bool          // whether the charge was asked for, set once
	done    chan struct{} // closed when the charge's outcome is known
	err     error         // the charge's outcome, once done is closed
}

func (r *GuardedREST) chargeOnCreate(ctx context.Context, validate rest.ValidateObjectFunc, dryRun bool) *quotaCharge {
	t, _ := tenancy.TenantFrom(ctx)
	c := &quotaCharge{r: r, tenant: t, dryRun: dryRun, done: make(chan struct{})}
	c.validate = func(ctx context.Context, obj runtime.Object) error {
		if validate != nil {
			if err := validate(ctx, obj); err != nil {
				return err
			}
		}
		c.start(ctx)
		<-c.done
		return c.err
	}
	return c
}

// start charges the tenant's quota in the background, the first time it
// is called.
func (c *quotaCharge) start(ctx context.Context) {
	c.once.Do(func() {
		c.started = true
		go func() {
			defer close(c.done)
			c.err = c.r.Quota.Reserve(ctx, c.tenant, c.r.QuotaResource, c.dryRun)
		}()
	})
}

// giveBack returns the unit charged, if any, once the charge in flight
// has its outcome.
func (c *quotaCharge) giveBack(ctx context.Context) {
	c.once.Do(func() { close(c.done) }) // never started: nothing to give back
	<-c.done
	if c.started && c.err == nil && !c.dryRun {
		c.r.Quota.Release(context.WithoutCancel(ctx), c.tenant, c.r.QuotaResource)
	}
}

// chargeKey carries the quota charge of a create to the kind's hooks.
type chargeKey struct{}

func withCharge(ctx context.Context, c *quotaCharge) context.Context {
	return context.WithValue(ctx, chargeKey{}, c)
}

// ChargeOutcome waits for the quota charge of the create in ctx and
// returns its outcome; ok is false when the create charges nothing
// through GuardedREST (a kind without a quota, a write through the store).
// A hook that must not claim anything for a create over quota waits for
// it (and starts it, if nothing did).
func ChargeOutcome(ctx context.Context) (ok bool, err error) {
	c, ok := ctx.Value(chargeKey{}).(*quotaCharge)
	if !ok {
		return false, nil
	}
	c.start(ctx)
	<-c.done
	return true, c.err
}

// Charges says whether the create in ctx is charged to its tenant's
// quota through GuardedREST: whether its charge will check, in etcd, that
// the Tenant is the one the caller's guard resolved and is not being
// deleted.
func Charges(ctx context.Context) bool {
	_, ok := ctx.Value(chargeKey{}).(*quotaCharge)
	return ok
}

// StartCharge starts the quota charge of the create in ctx, if any, in
// the background, and returns at once: a kind's hook calls it once the
// refusals it expects most (the name taken) are behind it, so that the
// tenant's quota is written while the hook does the rest of its work (a
// Network's subnet claim). A create whose hooks start nothing is charged
// after admission.
func StartCharge(ctx context.Context) {
	if c, ok := ctx.Value(chargeKey{}).(*quotaCharge); ok {
		c.start(ctx)
	}
}

// Get implements rest.Getter.
func (r *GuardedREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return guardedGet(ctx, r.Store, r.Guard, name, options)
}

func guardedGet(ctx context.Context, store *genericregistry.Store, guard tenancy.Guard, name string, options *metav1.GetOptions) (runtime.Object, error) {
	ctx, err := guard.Read(ctx, name)
	if err != nil {
		return nil, err
	}
	obj, err := store.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	if visible := guard.Visible(ctx); visible != nil && !visible(obj) {
		return nil, apierrors.NewNotFound(store.DefaultQualifiedResource, name)
	}
	if redact := guard.Redact(ctx); redact != nil {
		return redact(obj), nil
	}
	return obj, nil
}

// List implements rest.Lister.
func (r *GuardedREST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	ctx, err := r.Guard.Read(ctx, "")
	if err != nil {
		return nil, err
	}
	options = r.Guard.Select(ctx, options)
	visible := r.Guard.Visible(ctx)
	if visible == nil {
		return r.Store.List(ctx, options)
	}
	list, err := r.Store.List(ctx, r.Guard.Narrow(ctx, options))
	if err != nil {
		return nil, err
	}
	if err := filterList(list, visible, r.Guard.Redact(ctx)); err != nil {
		return nil, err
	}
	return list, nil
}

// Watch implements rest.Watcher. The watch ends when the caller's tenant
// membership changes.
func (r *GuardedREST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	ctx, err := r.Guard.Read(ctx, "")
	if err != nil {
		return nil, err
	}
	options = r.Guard.Select(ctx, options)
	visible := r.Guard.Visible(ctx)
	if visible != nil {
		// Keep resourceVersion and the rest; drop nothing but paging.
		narrowed := r.Guard.Narrow(ctx, options)
		narrowed.ResourceVersion, narrowed.ResourceVersionMatch = options.ResourceVersion, options.ResourceVersionMatch
		options = narrowed
	}
	w, err := r.Store.Watch(ctx, options)
	if err != nil {
		return nil, err
	}
	if visible != nil {
		w = watch.Filter(w, visibilityFilter(visible, r.Guard.Redact(ctx)))
	}
	if r.Watches != nil {
		return r.Watches.Track(ctx, w), nil
	}
	return w, nil
}

// visibilityFilter passes the events of objects the caller may see. An
// object this watch delivered that stops being visible (a ProviderService
// withdrawn from the tenant) is sent as DELETED, so the caller's caches
// drop it. (An object the caller only knows from an earlier LIST and that
// stops being visible before this watch delivered it is not: a DELETED
// event for it would name an object the caller may not see.)
//
// With redact set, every object passed on is what redact makes of it.
func visibilityFilter(visible func(runtime.Object) bool, redact func(runtime.Object) runtime.Object) watch.FilterFunc {
	filter := visibleEvents(visible)
	if redact == nil {
		return filter
	}
	return func(ev watch.Event) (watch.Event, bool) {
		ev, ok := filter(ev)
		if ok && ev.Type != watch.Bookmark && ev.Type != watch.Error {
			ev.Object = redact(ev.Object)
		}
		return ev, ok
	}
}

func visibleEvents(visible func(runtime.Object) bool) watch.FilterFunc {
	seen := map[string]bool{}
	return func(ev watch.Event) (watch.Event, bool) {
		if ev.Type == watch.Bookmark || ev.Type == watch.Error {
			return ev, true
		}
		o, err := meta.Accessor(ev.Object)
		if err != nil {
			return ev, false
		}
		name := o.GetName()
		if ev.Type == watch.Deleted {
			was := seen[name]
			delete(seen, name)
			return ev, was
		}
		if !visible(ev.Object) {
			if seen[name] {
				delete(seen, name)
				return watch.Event{Type: watch.Deleted, Object: ev.Object}, true
			}
			return ev, false
		}
		seen[name] = true
		return ev, true
	}
}

// Update implements rest.Updater.
func (r *GuardedREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	ctx, err := r.Guard.Write(ctx, name)
	if err != nil {
		return nil, false, err
	}
	ctx = withWrite(ctx)
	createValidation, updateValidation = r.admitCreate(createValidation), r.admitUpdate(updateValidation)
	// An update may create (server-side apply of a new object): that
	// create is charged to the quota as Create charges it, once, and the
	// unit given back if nothing was created.
	var c *quotaCharge
	if r.Quota != nil && forceAllowCreate {
		c = r.chargeOnCreate(ctx, createValidation, options != nil && len(options.DryRun) > 0)
		createValidation = c.validate
		ctx = withCharge(ctx, c)
	}
	done := func(runtime.Object, error) {}
	if r.AroundUpdate != nil {
		ctx, done = r.AroundUpdate(ctx)
	}
	out, created, err := r.Store.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
	done(out, err)
	if c != nil && (err != nil || !created) {
		c.giveBack(ctx)
	}
	return out, created, err
}

// Delete implements rest.GracefulDeleter.
func (r *GuardedREST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	ctx, err := r.Guard.Remove(ctx, name)
	if err != nil {
		return nil, false, err
	}
	if r.BeforeDelete == nil {
		return r.Store.Delete(ctx, name, deleteValidation, options)
	}
	callerRV := options != nil && options.Preconditions != nil && options.Preconditions.ResourceVersion != nil
	for attempt := 1; ; attempt++ {
		pre, err := r.BeforeDelete(ctx, name)
		if err != nil {
			return nil, false, err
		}
		out, deleted, err := r.Store.Delete(ctx, name, deleteValidation, withPreconditions(options, pre))
		// A resourceVersion BeforeDelete asked for says "unchanged since
		// checked", not the caller's wish: when the object changed (a
		// status write, a create charging quota), check again rather than
		// answer the caller a conflict it never asked for.
		if apierrors.IsConflict(err) && !callerRV && pre != nil && pre.ResourceVersion != nil && attempt < maxDeleteChecks {
			continue
		}
		return out, deleted, err
	}
}

// maxDeleteChecks bounds how often a delete is checked again because the
// object changed between its check and its delete.
const maxDeleteChecks = 5

// withPreconditions adds pre to the caller's preconditions, which win
// where both are set (a mismatch then fails either way).
func withPreconditions(options *metav1.DeleteOptions, pre *metav1.Preconditions) *metav1.DeleteOptions {
	if pre == nil {
		return options
	}
	out := &metav1.DeleteOptions{}
	if options != nil {
		out = options.DeepCopy()
	}
	if out.Preconditions == nil {
		out.Preconditions = &metav1.Preconditions{}
	}
	if out.Preconditions.UID == nil {
		out.Preconditions.UID = pre.UID
	}
	if out.Preconditions.ResourceVersion == nil {
		out.Preconditions.ResourceVersion = pre.ResourceVersion
	}
	return out
}

// DeleteCollection implements rest.CollectionDeleter.
func (r *GuardedREST) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions, listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	ctx, err := r.Guard.Remove(ctx, "")
	if err != nil {
		return nil, err
	}
	listOptions = r.Guard.Select(ctx, listOptions)
	if r.BeforeDelete == nil {
		return r.Store.DeleteCollection(ctx, deleteValidation, options, listOptions)
	}
	// Each delete must pass BeforeDelete: delete one by one, stop at the
	// first refusal.
	list, err := r.Store.List(ctx, listOptions)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	deleted := items[:0]
	for _, item := range items {
		_, _, err := r.Delete(ctx, objectName(item), deleteValidation, options)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
		if err == nil {
			deleted = append(deleted, item)
		}
	}
	if err := meta.SetList(list, deleted); err != nil {
		return nil, err
	}
	return list, nil
}

// StatusREST serves the status subresource of a kind through the kind's Guard.
type StatusREST struct {
	store *genericregistry.Store
	guard tenancy.Guard
}

// NewStatusREST returns the status subresource of store: a copy of it that
// writes with statusStrategy.
func NewStatusREST(store *genericregistry.Store, statusStrategy interface {
	rest.RESTUpdateStrategy
	rest.ResetFieldsStrategy
}, guard tenancy.Guard) *StatusREST {
	s := *store
	s.CreateStrategy = nil
	s.DeleteStrategy = nil
	s.BeginCreate = nil
	s.AfterDelete = nil
	s.BeginUpdate = nil
	s.UpdateStrategy = statusStrategy
	s.ResetFieldsStrategy = statusStrategy
	return &StatusREST{store: &s, guard: guard}
}

var (
	_ rest.Patcher             = &StatusREST{}
	_ rest.Storage             = &StatusREST{}
	_ rest.ResetFieldsStrategy = &StatusREST{}
	_ rest.TableConvertor      = &StatusREST{}
)

// New implements rest.Storage.
func (r *StatusREST) New() runtime.Object { return r.store.New() }

// Destroy implements rest.Storage. The main resource owns the shared storage.
func (r *StatusREST) Destroy() {}

// Get implements rest.Getter.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return guardedGet(ctx, r.store, r.guard, name, options)
}

// Update implements rest.Updater. Status is never created through the subresource.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	ctx, err := r.guard.Write(ctx, name)
	if err != nil {
		return nil, false, err
	}
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable implements rest.TableConvertor.
func (r *StatusREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}

// filterList drops the items of list that visible refuses.
func filterList(list runtime.Object, visible func(runtime.Object) bool, redact func(runtime.Object) runtime.Object) error {
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	kept := items[:0]
	for _, item := range items {
		if !visible(item) {
			continue
		}
		if redact != nil {
			item = redact(item)
		}
		kept = append(kept, item)
	}
	return meta.SetList(list, kept)
}
