package kindstore

import (
	"context"
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
)

// TestInstallChains checks the one way hooks combine: begin hooks in
// order, finish functions in reverse, a refusal telling the earlier ones
// that nothing was written, every AfterDelete called, the first
// BeforeDelete refusal winning and earlier preconditions winning,
// AroundUpdate contexts nested, and Admit after validation, in order.
func TestInstallChains(t *testing.T) {
	var calls []string
	record := func(s string) { calls = append(calls, s) }
	refuse := errors.New("refused")
	begin := func(name string, err error) genericregistry.BeginCreateFunc {
		return func(context.Context, runtime.Object, *metav1.CreateOptions) (genericregistry.FinishFunc, error) {
			record("begin " + name)
			if err != nil {
				return nil, err
			}
			return func(_ context.Context, ok bool) { record(map[bool]string{true: "stored ", false: "undo "}[ok] + name) }, nil
		}
	}
	st := &Storage{Store: &genericregistry.Store{}, Main: &GuardedREST{}}
	st.Install(Hooks{BeginCreate: begin("a", nil)})
	st.Install(Hooks{BeginCreate: begin("b", nil)})
	finish, err := st.Store.BeginCreate(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	finish(context.Background(), true)
	if want := []string{"begin a", "begin b", "stored b", "stored a"}; !slices.Equal(calls, want) {
		t.Errorf("create calls %v, want %v", calls, want)
	}

	calls = nil
	st.Install(Hooks{BeginCreate: begin("c", refuse)})
	if _, err := st.Store.BeginCreate(context.Background(), nil, nil); !errors.Is(err, refuse) {
		t.Errorf("refused create: %v", err)
	}
	if want := []string{"begin a", "begin b", "begin c", "undo b", "undo a"}; !slices.Equal(calls, want) {
		t.Errorf("refused create calls %v, want %v", calls, want)
	}

	calls = nil
	for _, name := range []string{"x", "y"} {
		st.Install(Hooks{AfterDelete: func(runtime.Object, *metav1.DeleteOptions) { record("deleted " + name) }})
	}
	st.Store.AfterDelete(nil, nil)
	if want := []string{"deleted x", "deleted y"}; !slices.Equal(calls, want) {
		t.Errorf("AfterDelete calls %v, want %v", calls, want)
	}

	uid1, uid2, rv := types.UID("one"), types.UID("two"), "7"
	st.Install(Hooks{BeforeDelete: func(context.Context, string) (*metav1.Preconditions, error) {
		return &metav1.Preconditions{UID: &uid1}, nil
	}})
	st.Install(Hooks{BeforeDelete: func(context.Context, string) (*metav1.Preconditions, error) {
		return &metav1.Preconditions{UID: &uid2, ResourceVersion: &rv}, nil
	}})
	pre, err := st.Main.BeforeDelete(context.Background(), "n")
	if err != nil || pre == nil || *pre.UID != uid1 || pre.ResourceVersion == nil || *pre.ResourceVersion != rv {
		t.Errorf("merged preconditions %+v, %v; want UID one and resourceVersion 7", pre, err)
	}
	st.Install(Hooks{BeforeDelete: func(context.Context, string) (*metav1.Preconditions, error) { return nil, refuse }})
	if _, err := st.Main.BeforeDelete(context.Background(), "n"); !errors.Is(err, refuse) {
		t.Errorf("refused delete: %v", err)
	}

	type key string
	calls = nil
	for _, name := range []string{"outer", "inner"} {
		st.Install(Hooks{AroundUpdate: func(ctx context.Context) (context.Context, func(runtime.Object, error)) {
			record("around " + name + " sees outer=" + map[bool]string{true: "yes", false: "no"}[ctx.Value(key("outer")) != nil])
			return context.WithValue(ctx, key(name), true), func(runtime.Object, error) { record("done " + name) }
		}})
	}
	ctx, done := st.Main.AroundUpdate(context.Background())
	done(nil, nil)
	if ctx.Value(key("outer")) == nil || ctx.Value(key("inner")) == nil {
		t.Error("the update's context lacks a hook's values")
	}
	if want := []string{"around outer sees outer=no", "around inner sees outer=yes", "done inner", "done outer"}; !slices.Equal(calls, want) {
		t.Errorf("AroundUpdate calls %v, want %v", calls, want)
	}

	// Admit: in order, the first refusal ends the chain; the store's
	// create validation runs it after the object's own validation.
	calls = nil
	for _, name := range []string{"first", "second", "third"} {
		st.Install(Hooks{Admit: func(context.Context, runtime.Object, runtime.Object) error {
			record("admit " + name)
			if name == "second" {
				return refuse
			}
			return nil
		}})
	}
	validate := st.Main.admitCreate(func(context.Context, runtime.Object) error { record("validate"); return nil })
	if err := validate(context.Background(), nil); !errors.Is(err, refuse) {
		t.Errorf("admission: %v, want the second hook's refusal", err)
	}
	if want := []string{"validate", "admit first", "admit second"}; !slices.Equal(calls, want) {
		t.Errorf("Admit calls %v, want %v", calls, want)
	}
	calls = nil
	invalid := errors.New("invalid")
	validate = st.Main.admitCreate(func(context.Context, runtime.Object) error { record("validate"); return invalid })
	if err := validate(context.Background(), nil); !errors.Is(err, invalid) || !slices.Equal(calls, []string{"validate"}) {
		t.Errorf("an invalid object: %v after %v, want the validation error before any admission", err, calls)
	}
}
