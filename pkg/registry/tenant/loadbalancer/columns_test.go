package loadbalancer

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// TestDNSNameColumn: the public DNS name shows with -o wide only, right
// after the address, "<none>" while there is none.
func TestDNSNameColumn(t *testing.T) {
	table := kindstore.Table[*tenant.LoadBalancer]{Columns: columns}
	list := &tenant.LoadBalancerList{Items: []tenant.LoadBalancer{
		{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Status: tenant.LoadBalancerStatus{Address: "203.0.113.7", DNSName: "web.dev.acme.tenants.example.net"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "api"}},
	}}
	got, err := table.ConvertToTable(context.Background(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	col := got.ColumnDefinitions[2]
	if got.ColumnDefinitions[1].Name != "Address" || col.Name != "DNS Name" || col.Priority != 1 || col.Description == "" {
		t.Fatalf("columns %+v, want DNS Name (priority 1) after Address", got.ColumnDefinitions)
	}
	if a, b := got.Rows[0].Cells[2], got.Rows[1].Cells[2]; a != "web.dev.acme.tenants.example.net" || b != "<none>" {
		t.Errorf("DNS Name cells %v and %v", a, b)
	}
}
