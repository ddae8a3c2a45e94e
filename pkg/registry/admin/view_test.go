package admin

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// TestScope checks which key range, and which field selector of tenant.io,
// a list of a view reads.
func TestScope(t *testing.T) {
	for _, c := range []struct {
		name       string
		namespaced bool
		namespace  string // of the request
		field      string
		label      string
		wantRoot   string // the key root read
		wantField  string
	}{
		{name: "everything", wantRoot: "/p/"},
		{name: "tenant label", label: "tenant.io/tenant=acme,x=y", wantRoot: "/p/acme/"},
		{name: "tenant label set of one", label: "tenant.io/tenant in (acme)", wantRoot: "/p/acme/"},
		{name: "tenant label set", label: "tenant.io/tenant in (acme,globex)", wantRoot: "/p/"},
		{name: "name", field: "metadata.name=acme.default", wantRoot: "/p/acme/", wantField: "metadata.name=default"},
		{name: "name with dots", field: "metadata.name=acme.a.b", wantRoot: "/p/acme/", wantField: "metadata.name=a.b"},
		{name: "name and other field", field: "metadata.name==acme.web,spec.topology=Layer2", wantRoot: "/p/acme/", wantField: "metadata.name=web,spec.topology=Layer2"},
		{name: "name of no tenant", field: "metadata.name=default", wantRoot: "/p/-/", wantField: "metadata.name="},
		{name: "name and label disagree", field: "metadata.name=acme.default", label: "tenant.io/tenant=globex", wantRoot: "/p/-/", wantField: "metadata.name=default"},
		{name: "tenant not a label", field: "metadata.name=ACME.default", wantRoot: "/p/-/", wantField: "metadata.name=default"},
		{name: "namespace", namespaced: true, namespace: "acme.dev", wantRoot: "/p/acme/dev/"},
		{name: "namespace not a label", namespaced: true, namespace: "acme.a/b", wantRoot: "/p/-/"},
		{name: "namespace field", namespaced: true, field: "metadata.namespace=acme.dev,status.phase=Pending", wantRoot: "/p/acme/dev/", wantField: "metadata.namespace=dev,status.phase=Pending"},
		{name: "namespace and its field disagree", namespaced: true, namespace: "acme.dev", field: "metadata.namespace=acme.prod", wantRoot: "/p/-/", wantField: "metadata.namespace=prod"},
		{name: "namespaced name kept", namespaced: true, field: "metadata.name=web", wantRoot: "/p/", wantField: "metadata.name=web"},
		{name: "namespace of another tenant than the label", namespaced: true, namespace: "acme.dev", label: "tenant.io/tenant=globex", wantRoot: "/p/-/"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := &View{Namespaced: c.namespaced}
			opts := &metainternalversion.ListOptions{}
			if c.field != "" {
				opts.FieldSelector = fields.ParseSelectorOrDie(c.field)
			}
			if c.label != "" {
				var err error
				if opts.LabelSelector, err = labels.Parse(c.label); err != nil {
					t.Fatal(err)
				}
			}
			ctx := genericapirequest.WithNamespace(context.Background(), c.namespace)
			ctx, out, err := v.scope(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := tenancy.KeyRootFunc("/p", c.namespaced)(ctx); got != c.wantRoot {
				t.Errorf("key root %q, want %q", got, c.wantRoot)
			}
			got := ""
			if out.FieldSelector != nil {
				got = out.FieldSelector.String()
			}
			if got != c.wantField {
				t.Errorf("field selector %q, want %q", got, c.wantField)
			}
		})
	}
}

func TestScopeRefusesInequalityOnRenamedFields(t *testing.T) {
	for _, c := range []struct {
		namespaced bool
		field      string
	}{{false, "metadata.name!=acme.default"}, {true, "metadata.namespace!=acme.dev"}} {
		v := &View{Namespaced: c.namespaced}
		_, _, err := v.scope(context.Background(), &metainternalversion.ListOptions{FieldSelector: fields.ParseSelectorOrDie(c.field)})
		if !apierrors.IsBadRequest(err) {
			t.Errorf("%s: %v, want 400", c.field, err)
		}
	}
}
