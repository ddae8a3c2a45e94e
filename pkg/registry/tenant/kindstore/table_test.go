package kindstore_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

var networkTable = kindstore.Table[*tenant.Network]{Columns: []kindstore.Column[*tenant.Network]{
	{Name: "Topology", Type: "string", Cell: func(o *tenant.Network) interface{} { return string(o.Spec.Topology) }},
	{Name: "Subnets", Type: "string", Priority: 1, Cell: func(o *tenant.Network) interface{} { return kindstore.Join(o.Spec.Subnets) }},
}}

func TestTableConvertToTable(t *testing.T) {
	created := metav1.NewTime(time.Now().Add(-2 * time.Hour))
	a := &tenant.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "7", CreationTimestamp: created},
		Spec:       tenant.NetworkSpec{Topology: tenant.NetworkTopologyLayer3, Subnets: []string{"10.0.0.0/24", "10.0.1.0/24"}},
	}
	b := &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: tenant.NetworkSpec{Topology: tenant.NetworkTopologyLayer2}}

	table, err := networkTable.ConvertToTable(context.Background(), a, nil)
	if err != nil {
		t.Fatal(err)
	}
	var headers []string
	for _, c := range table.ColumnDefinitions {
		headers = append(headers, c.Name)
	}
	if want := []string{"Name", "Topology", "Subnets", "Age"}; !reflect.DeepEqual(headers, want) {
		t.Errorf("columns = %q, want %q", headers, want)
	}
	if table.ColumnDefinitions[2].Priority != 1 {
		t.Errorf("Subnets priority = %d, want 1", table.ColumnDefinitions[2].Priority)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(table.Rows))
	}
	if want := []interface{}{"a", "Layer3", "10.0.0.0/24,10.0.1.0/24", "120m"}; !reflect.DeepEqual(table.Rows[0].Cells, want) {
		t.Errorf("cells = %v, want %v", table.Rows[0].Cells, want)
	}
	if table.Rows[0].Object.Object != a {
		t.Error("row does not carry its object")
	}
	if table.ResourceVersion != "7" {
		t.Errorf("resourceVersion = %q, want 7", table.ResourceVersion)
	}

	remaining := int64(3)
	list := &tenant.NetworkList{
		ListMeta: metav1.ListMeta{ResourceVersion: "9", Continue: "token", RemainingItemCount: &remaining},
		Items:    []tenant.Network{*a, *b},
	}
	table, err = networkTable.ConvertToTable(context.Background(), list, &metav1.TableOptions{NoHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(table.ColumnDefinitions) != 0 {
		t.Errorf("columns with NoHeaders: %v", table.ColumnDefinitions)
	}
	if len(table.Rows) != 2 {
		t.Fatalf("%d rows, want 2", len(table.Rows))
	}
	if want := []interface{}{"b", "Layer2", "<none>", "<unknown>"}; !reflect.DeepEqual(table.Rows[1].Cells, want) {
		t.Errorf("cells = %v, want %v", table.Rows[1].Cells, want)
	}
	if table.ResourceVersion != "9" || table.Continue != "token" || table.RemainingItemCount == nil || *table.RemainingItemCount != 3 {
		t.Errorf("list metadata = %q, %q, %v; want 9, token, 3", table.ResourceVersion, table.Continue, table.RemainingItemCount)
	}

	if _, err := networkTable.ConvertToTable(context.Background(), &tenant.FloatingIP{}, nil); err == nil {
		t.Error("converting a FloatingIP with the Network table succeeded")
	}
}

func TestTableCells(t *testing.T) {
	if got := kindstore.Join(nil); got != "<none>" {
		t.Errorf("Join(nil) = %q", got)
	}
	if got := kindstore.Join([]string{"a", "b"}); got != "a,b" {
		t.Errorf("Join(a, b) = %q", got)
	}
	if got := kindstore.OrNone(""); got != "<none>" {
		t.Errorf("OrNone(\"\") = %q", got)
	}
	if got := kindstore.OrNone("x"); got != "x" {
		t.Errorf("OrNone(x) = %q", got)
	}
	conditions := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse}}
	if got := kindstore.ConditionStatus(conditions, "Ready"); got != "False" {
		t.Errorf("ConditionStatus(Ready) = %q, want False", got)
	}
	if got := kindstore.ConditionStatus(conditions, "HostSynced"); got != "Unknown" {
		t.Errorf("ConditionStatus(HostSynced) = %q, want Unknown", got)
	}
}
