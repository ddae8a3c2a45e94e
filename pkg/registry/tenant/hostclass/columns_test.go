package hostclass

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// TestColumns: kubectl get hostclasses shows the tenant labels (with the
// values the syncer found, else the keys alone) and the counts of
// servers; -o wide adds who the class is offered to and the provider's
// namespace, which a tenant's redacted copy does not carry.
func TestColumns(t *testing.T) {
	table := kindstore.Table[*tenant.HostClass]{Columns: columns}
	list := &tenant.HostClassList{Items: []tenant.HostClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "medium"},
			Spec: tenant.HostClassSpec{HostNamespace: "metal3-hosts", TenantLabels: []string{"infra-kind"}, Tenants: []string{"acme", "globex"}},
			Status: tenant.HostClassStatus{Hosts: 3, Available: 1, Claimed: 2,
				Labels: []tenant.HostClassLabel{{Key: "infra-kind", Values: []string{"large", "medium"}}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "fresh"},
			Spec: tenant.HostClassSpec{HostNamespace: "metal3-new", TenantLabels: []string{"rack"}, AllTenants: true}},
	}}
	got, err := table.ConvertToTable(context.Background(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	type col struct {
		name     string
		priority int32
	}
	var cols []col
	for _, c := range got.ColumnDefinitions {
		cols = append(cols, col{c.Name, c.Priority})
		if c.Description == "" {
			t.Errorf("column %s has no description", c.Name)
		}
	}
	want := []col{{"Name", 0}, {"Labels", 0}, {"Available", 0}, {"Claimed", 0}, {"Hosts", 0},
		{"Tenants", 1}, {"Host Namespace", 1}, {"Age", 0}}
	if fmt.Sprint(cols) != fmt.Sprint(want) {
		t.Fatalf("columns %v, want %v", cols, want)
	}
	for i, w := range [][]interface{}{
		{"medium", "infra-kind=large|medium", int64(1), "2", "3", "acme,globex", "metal3-hosts"},
		{"fresh", "rack", int64(0), "0", "0", "*", "metal3-new"},
	} {
		if cells := got.Rows[i].Cells[:len(w)]; fmt.Sprint(cells) != fmt.Sprint(w) {
			t.Errorf("row %d: cells %v, want %v", i, cells, w)
		}
	}

	// What a tenant is shown of the class: no namespace, only itself,
	// conditions without the syncer's messages, which name the namespace.
	list.Items[0].Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Counted",
		Message: "3 servers in namespace metal3-hosts match the class"}}
	redacted := ForTenant("acme", &list.Items[0]).(*tenant.HostClass)
	if c := redacted.Status.Conditions; len(c) != 1 || c[0].Reason != "Counted" || c[0].Message != "" {
		t.Errorf("acme's conditions %+v, want Ready Counted without a message", c)
	}
	if list.Items[0].Status.Conditions[0].Message == "" {
		t.Error("redacting changed the stored object's conditions")
	}
	rows, err := table.ConvertToTable(context.Background(), redacted, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The provider's counts are "-", not a zero that would read as a fact.
	if w := []interface{}{"medium", "infra-kind=large|medium", int64(1), "-", "-", "acme", "<none>"}; fmt.Sprint(rows.Rows[0].Cells[:len(w)]) != fmt.Sprint(w) {
		t.Errorf("acme's row %v, want %v", rows.Rows[0].Cells[:len(w)], w)
	}
}
