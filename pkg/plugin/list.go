package plugin

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

// listing is what a list command prints: the objects, their kubectl
// resource name, and the columns of the human table.
type listing struct {
	// kind of the objects for -o json|yaml; empty: the objects carry their
	// own (unstructured objects of several kinds).
	kind     string // FloatingIP
	resource string // for -o name: floatingip.tenant.io; empty: names are resource/name
	// gv is the objects' API group version for -o json|yaml; zero: tenant.io/v1alpha1.
	gv schema.GroupVersion
	// all (-A) adds a NAMESPACE column.
	all        bool
	objects    []runtime.Object
	namespaces []string
	names      []string
	headers    []string
	wide       []string
	rows       [][]string
	wideRows   [][]string
}

// add appends one object with its columns and its -o wide extra columns.
func (l *listing) add(obj runtime.Object, name string, cols []string, wideCols ...string) {
	l.objects = append(l.objects, obj)
	ns := ""
	if m, err := meta.Accessor(obj); err == nil {
		ns = m.GetNamespace()
	}
	l.namespaces = append(l.namespaces, ns)
	l.names = append(l.names, name)
	l.rows = append(l.rows, cols)
	l.wideRows = append(l.wideRows, wideCols)
}

// print writes l in the format of -o.
func (o *Options) printListing(l *listing) error {
	switch o.Output {
	case "json", "yaml":
		items := make([]runtime.Object, 0, len(l.objects))
		gv := l.gv
		if gv.Empty() {
			gv = tenantv1alpha1.SchemeGroupVersion
		}
		for _, obj := range l.objects {
			obj = obj.DeepCopyObject()
			if l.kind != "" {
				obj.GetObjectKind().SetGroupVersionKind(gv.WithKind(l.kind))
			}
			items = append(items, obj)
		}
		return printStructured(o.Out, o.Output, map[string]any{"apiVersion": "v1", "kind": "List", "items": items, "metadata": map[string]any{}})
	case "name":
		for _, n := range l.names {
			if l.resource == "" {
				// The names carry their resource (several kinds).
				fmt.Fprintln(o.Out, n)
				continue
			}
			fmt.Fprintf(o.Out, "%s/%s\n", l.resource, n)
		}
		return nil
	}
	if len(l.objects) == 0 {
		fmt.Fprintf(o.ErrOut, "No resources found.\n")
		return nil
	}
	var headers []string
	if l.all {
		headers = append(headers, "NAMESPACE")
	}
	headers = append(headers, l.headers...)
	if o.Output == "wide" {
		headers = append(headers, l.wide...)
	}
	t := newTable(o.Out, headers...)
	for i := range l.rows {
		var r []string
		if l.all {
			r = append(r, l.namespaces[i])
		}
		r = append(r, l.rows[i]...)
		if o.Output == "wide" {
			r = append(r, l.wideRows[i]...)
		}
		t.row(r...)
	}
	return t.flush()
}

// printObject writes one object created or changed: its name as kubectl
// does ("floatingip.tenant.io/web created"), or the object for -o json|yaml.
func (o *Options) printObject(obj runtime.Object, kind, resource, name, verb string) error {
	switch o.Output {
	case "json", "yaml":
		obj = obj.DeepCopyObject()
		obj.GetObjectKind().SetGroupVersionKind(tenantv1alpha1.SchemeGroupVersion.WithKind(kind))
		return printStructured(o.Out, o.Output, obj)
	case "name":
		fmt.Fprintf(o.Out, "%s/%s\n", resource, name)
		return nil
	}
	fmt.Fprintf(o.Out, "%s/%s %s\n", resource, name, verb)
	return nil
}

// completeWith completes the first argument with the names list returns,
// in the caller's tenant.
func completeWith(o *Options, list func(context.Context, *tenantScope) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		sc, err := o.scope(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		names, err := list(ctx, sc)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// newDeleteCommand is `<kind> delete NAME` of every kind: del deletes name
// in the caller's tenant; a refusal is the server's error, causes and all.
func newDeleteCommand(o *Options, resource, short string, complete cobra.CompletionFunc, del func(context.Context, *tenantScope, string) error) *cobra.Command {
	return &cobra.Command{
		Use:               "delete NAME",
		Short:             short,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := o.scope(cmd.Context())
			if err != nil {
				return err
			}
			if err := del(cmd.Context(), sc, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(o.Out, "%s %q deleted\n", resource, args[0])
			return nil
		},
	}
}

// namespaced is the scope and tenant namespace of a namespaced command;
// all (-A) means every namespace of the tenant.
func (o *Options) namespaced(ctx context.Context, all bool) (*tenantScope, string, error) {
	sc, err := o.scope(ctx)
	if err != nil {
		return nil, "", err
	}
	if all {
		return sc, metav1.NamespaceAll, nil
	}
	ns, err := o.tenantNamespace(ctx, sc)
	return sc, ns, err
}

// namesOf are the names of a list's items.
func namesOf[T any, P interface {
	*T
	metav1.Object
}](items []T) []string {
	out := make([]string, 0, len(items))
	for i := range items {
		out = append(out, P(&items[i]).GetName())
	}
	return out
}

// newListCommand is a list command: list returns what to print for -A
// (when allFlag offers it) or not.
func newListCommand(o *Options, use, short string, allFlag bool, list func(ctx context.Context, all bool) (*listing, error)) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := list(cmd.Context(), all)
			if err != nil {
				return err
			}
			return o.printListing(l)
		},
	}
	if use == "list" {
		cmd.Aliases = []string{"ls"}
	}
	if allFlag {
		cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "List those of all your namespaces")
	}
	return cmd
}
