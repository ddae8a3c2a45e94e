package plugin

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

// listing is what a list command prints: the objects, their kubectl
// resource name, and the columns of the human table.
type listing struct {
	kind     string // FloatingIP
	resource string // floatingips.tenant.io (without group for -o name it is "floatingip.tenant.io")
	objects  []runtime.Object
	names    []string
	headers  []string
	wide     []string
	rows     [][]string
	wideRows [][]string
}

// add appends one object with its columns and its -o wide extra columns.
func (l *listing) add(obj runtime.Object, name string, cols []string, wideCols ...string) {
	l.objects = append(l.objects, obj)
	l.names = append(l.names, name)
	l.rows = append(l.rows, cols)
	l.wideRows = append(l.wideRows, wideCols)
}

// print writes l in the format of -o.
func (o *Options) printListing(l *listing) error {
	switch o.Output {
	case "json", "yaml":
		items := make([]runtime.Object, 0, len(l.objects))
		for _, obj := range l.objects {
			obj = obj.DeepCopyObject()
			obj.GetObjectKind().SetGroupVersionKind(tenantv1alpha1.SchemeGroupVersion.WithKind(l.kind))
			items = append(items, obj)
		}
		return printStructured(o.Out, o.Output, map[string]any{"apiVersion": "v1", "kind": "List", "items": items, "metadata": map[string]any{}})
	case "name":
		for _, n := range l.names {
			fmt.Fprintf(o.Out, "%s/%s\n", l.resource, n)
		}
		return nil
	}
	if len(l.objects) == 0 {
		fmt.Fprintf(o.ErrOut, "No resources found.\n")
		return nil
	}
	headers := l.headers
	if o.Output == "wide" {
		headers = append(append([]string(nil), headers...), l.wide...)
	}
	t := newTable(o.Out, headers...)
	for i, r := range l.rows {
		if o.Output == "wide" {
			r = append(append([]string(nil), r...), l.wideRows[i]...)
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
