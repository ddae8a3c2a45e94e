package kindstore

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Column is one kubectl table column of a kind, between NAME and AGE.
type Column[T Object] struct {
	Name        string
	Type        string // "string", "integer", "date"...
	Description string
	// Priority 0 columns always show; 1 only with -o wide.
	Priority int32
	Cell     func(T) interface{}
}

// Table converts objects of one kind to kubectl tables: NAME, the kind's
// columns, AGE.
type Table[T Object] struct {
	Columns []Column[T]
}

var _ rest.TableConvertor = Table[Object]{}

// ConvertToTable implements rest.TableConvertor.
func (t Table[T]) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	opts, _ := tableOptions.(*metav1.TableOptions)
	if opts == nil || !opts.NoHeaders {
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{
			Name: "Name", Type: "string", Format: "name", Description: "Name of the object, unique in its scope.",
		})
		for _, c := range t.Columns {
			table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{
				Name: c.Name, Type: c.Type, Description: c.Description, Priority: c.Priority,
			})
		}
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{
			Name: "Age", Type: "string", Description: "Time since the object was created.",
		})
	}

	addRow := func(obj runtime.Object) error {
		o, ok := obj.(T)
		if !ok {
			return fmt.Errorf("unexpected object %T", obj)
		}
		cells := make([]interface{}, 0, len(t.Columns)+2)
		cells = append(cells, o.GetName())
		for _, c := range t.Columns {
			cells = append(cells, c.Cell(o))
		}
		cells = append(cells, age(o.GetCreationTimestamp()))
		table.Rows = append(table.Rows, metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: obj}})
		return nil
	}

	if meta.IsListType(object) {
		if err := meta.EachListItem(object, addRow); err != nil {
			return nil, err
		}
		if l, err := meta.ListAccessor(object); err == nil {
			table.ResourceVersion = l.GetResourceVersion()
			table.Continue = l.GetContinue()
			table.RemainingItemCount = l.GetRemainingItemCount()
		}
		return table, nil
	}
	if err := addRow(object); err != nil {
		return nil, err
	}
	if o, err := meta.Accessor(object); err == nil {
		table.ResourceVersion = o.GetResourceVersion()
	}
	return table, nil
}

func age(ts metav1.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(metav1.Now().Sub(ts.Time))
}

// Join renders a list cell: comma separated, "<none>" when empty.
func Join(items []string) string {
	if len(items) == 0 {
		return "<none>"
	}
	return strings.Join(items, ",")
}

// OrNone renders a string cell, "<none>" when empty.
func OrNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// ConditionStatus renders the status of condition typ, "Unknown" when absent.
func ConditionStatus(conditions []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conditions, typ); c != nil {
		return string(c.Status)
	}
	return string(metav1.ConditionUnknown)
}
