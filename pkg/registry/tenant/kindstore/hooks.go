package kindstore

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
)

// BeforeDeleteFunc may refuse the delete of name, or return the
// preconditions under which it may happen (the state it checked).
type BeforeDeleteFunc func(ctx context.Context, name string) (*metav1.Preconditions, error)

// AdmitFunc checks, like admission, an object about to be written (old
// is nil on a create) against what storage holds: it runs after the
// object validated, so a request with an invalid object is a 422 first.
type AdmitFunc func(ctx context.Context, obj, old runtime.Object) error

// AroundUpdateFunc gives an update the context the store's hooks run in,
// and a function called with the outcome once the update is stored or
// failed. (The store's BeginUpdate finish function runs before the write,
// so it cannot tell whether the object was stored.)
type AroundUpdateFunc func(ctx context.Context) (context.Context, func(stored runtime.Object, err error))

// Hooks are what a part of the registry adds to the writes of one kind:
// the store's own hooks, and the guarded REST's BeforeDelete,
// AroundUpdate and Admit. Storage.Install chains them after those installed before.
type Hooks struct {
	BeginCreate  genericregistry.BeginCreateFunc
	BeginUpdate  genericregistry.BeginUpdateFunc
	AfterCreate  genericregistry.AfterCreateFunc
	AfterDelete  genericregistry.AfterDeleteFunc
	BeforeDelete BeforeDeleteFunc
	AroundUpdate AroundUpdateFunc
	Admit        AdmitFunc
}

// Install adds h to the hooks of s, each after those installed before it:
// the begin hooks run in order, and when one refuses, the finish functions
// of those before it learn that nothing was written; finish functions run
// in reverse order; the first BeforeDelete to refuse refuses the delete,
// and the preconditions of an earlier one win where two set the same
// field; AroundUpdate contexts nest, the first one outermost. This is the
// one way hooks are combined.
func (s *Storage) Install(h Hooks) {
	if h.BeginCreate != nil {
		s.Store.BeginCreate = chainBeginCreate(s.Store.BeginCreate, h.BeginCreate)
	}
	if h.BeginUpdate != nil {
		s.Store.BeginUpdate = chainBeginUpdate(s.Store.BeginUpdate, h.BeginUpdate)
	}
	if h.AfterCreate != nil {
		s.Store.AfterCreate = chainAfterCreate(s.Store.AfterCreate, h.AfterCreate)
	}
	if h.AfterDelete != nil {
		s.Store.AfterDelete = chainAfterDelete(s.Store.AfterDelete, h.AfterDelete)
	}
	if h.BeforeDelete != nil {
		s.Main.BeforeDelete = chainBeforeDelete(s.Main.BeforeDelete, h.BeforeDelete)
	}
	if h.AroundUpdate != nil {
		s.Main.AroundUpdate = chainAroundUpdate(s.Main.AroundUpdate, h.AroundUpdate)
	}
	if h.Admit != nil {
		s.Main.Admit = chainAdmit(s.Main.Admit, h.Admit)
	}
}

// validation is the first step of every write, installed before any
// kind's hooks: it checks a copy of the object as the store will check it
// (prepared by the strategy, then validated), so that an invalid request is
// a 422 before any later hook claims an address or reads another object
// for it, and so that no hook validates again. The store runs the same
// strategy once more on the object as the hooks leave it, before it
// writes: what a hook assigned is checked too.
func validation(store *genericregistry.Store) Hooks {
	return Hooks{
		BeginCreate: func(ctx context.Context, obj runtime.Object, _ *metav1.CreateOptions) (genericregistry.FinishFunc, error) {
			return finishNothing, rest.BeforeCreate(store.CreateStrategy, ctx, obj.DeepCopyObject())
		},
		BeginUpdate: func(ctx context.Context, obj, old runtime.Object, _ *metav1.UpdateOptions) (genericregistry.FinishFunc, error) {
			return finishNothing, rest.BeforeUpdate(store.UpdateStrategy, ctx, obj.DeepCopyObject(), old)
		},
	}
}

func finishNothing(context.Context, bool) {}

func chainAdmit(first, then AdmitFunc) AdmitFunc {
	if first == nil {
		return then
	}
	return func(ctx context.Context, obj, old runtime.Object) error {
		if err := first(ctx, obj, old); err != nil {
			return err
		}
		return then(ctx, obj, old)
	}
}

func chainFinish(first, then genericregistry.FinishFunc) genericregistry.FinishFunc {
	return func(ctx context.Context, success bool) {
		if then != nil {
			then(ctx, success)
		}
		if first != nil {
			first(ctx, success)
		}
	}
}

func chainBeginCreate(first, then genericregistry.BeginCreateFunc) genericregistry.BeginCreateFunc {
	if first == nil {
		return then
	}
	return func(ctx context.Context, obj runtime.Object, options *metav1.CreateOptions) (genericregistry.FinishFunc, error) {
		f1, err := first(ctx, obj, options)
		if err != nil {
			return nil, err
		}
		f2, err := then(ctx, obj, options)
		if err != nil {
			chainFinish(f1, nil)(ctx, false)
			return nil, err
		}
		return chainFinish(f1, f2), nil
	}
}

func chainBeginUpdate(first, then genericregistry.BeginUpdateFunc) genericregistry.BeginUpdateFunc {
	if first == nil {
		return then
	}
	return func(ctx context.Context, obj, old runtime.Object, options *metav1.UpdateOptions) (genericregistry.FinishFunc, error) {
		f1, err := first(ctx, obj, old, options)
		if err != nil {
			return nil, err
		}
		f2, err := then(ctx, obj, old, options)
		if err != nil {
			chainFinish(f1, nil)(ctx, false)
			return nil, err
		}
		return chainFinish(f1, f2), nil
	}
}

func chainAfterCreate(first, then genericregistry.AfterCreateFunc) genericregistry.AfterCreateFunc {
	if first == nil {
		return then
	}
	return func(obj runtime.Object, options *metav1.CreateOptions) {
		first(obj, options)
		then(obj, options)
	}
}

func chainAfterDelete(first, then genericregistry.AfterDeleteFunc) genericregistry.AfterDeleteFunc {
	if first == nil {
		return then
	}
	return func(obj runtime.Object, options *metav1.DeleteOptions) {
		first(obj, options)
		then(obj, options)
	}
}

func chainBeforeDelete(first, then BeforeDeleteFunc) BeforeDeleteFunc {
	if first == nil {
		return then
	}
	return func(ctx context.Context, name string) (*metav1.Preconditions, error) {
		p1, err := first(ctx, name)
		if err != nil {
			return nil, err
		}
		p2, err := then(ctx, name)
		if err != nil {
			return nil, err
		}
		switch {
		case p1 == nil:
			return p2, nil
		case p2 == nil:
			return p1, nil
		}
		out := p1.DeepCopy()
		if out.UID == nil {
			out.UID = p2.UID
		}
		if out.ResourceVersion == nil {
			out.ResourceVersion = p2.ResourceVersion
		}
		return out, nil
	}
}

func chainAroundUpdate(first, then AroundUpdateFunc) AroundUpdateFunc {
	if first == nil {
		return then
	}
	return func(ctx context.Context) (context.Context, func(runtime.Object, error)) {
		ctx, done1 := first(ctx)
		ctx, done2 := then(ctx)
		return ctx, func(stored runtime.Object, err error) {
			done2(stored, err)
			done1(stored, err)
		}
	}
}
