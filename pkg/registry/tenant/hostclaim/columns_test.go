package hostclaim

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// TestColumns: kubectl get hostclaims shows PHASE, HOST CLASS, ADDRESS and
// POWER; -o wide adds ONLINE, IMAGE and BOOT MAC. A claim no server is
// bound to yet shows "<none>" where the server would say something.
func TestColumns(t *testing.T) {
	table := kindstore.Table[*tenant.HostClaim]{Columns: columns}
	list := &tenant.HostClaimList{Items: []tenant.HostClaim{
		{ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: tenant.HostClaimSpec{HostClass: "medium", Online: true, Image: &tenant.HostImage{URL: "https://images.example.net/fedora.qcow2"}},
			Status: tenant.HostClaimStatus{Phase: tenant.HostClaimProvisioned, Power: tenant.HostPowerOn, BootMACAddress: "52:54:00:00:00:01",
				Addresses: []tenant.HostAddress{{Type: "Hostname", Address: "ramdisk"}, {Type: "InternalIP", Address: "192.0.2.11"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "db"},
			Spec:   tenant.HostClaimSpec{HostClass: "large"},
			Status: tenant.HostClaimStatus{Phase: tenant.HostClaimPending}},
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
	want := []col{{"Name", 0}, {"Phase", 0}, {"Host Class", 0}, {"Address", 0}, {"Power", 0},
		{"Online", 1}, {"Image", 1}, {"Boot MAC", 1}, {"Age", 0}}
	if fmt.Sprint(cols) != fmt.Sprint(want) {
		t.Fatalf("columns %v, want %v", cols, want)
	}
	for i, w := range [][]interface{}{
		{"web", "Provisioned", "medium", "192.0.2.11", "On", true, "https://images.example.net/fedora.qcow2", "52:54:00:00:00:01"},
		{"db", "Pending", "large", "<none>", "<none>", false, "<none>", "<none>"},
	} {
		if cells := got.Rows[i].Cells[:len(w)]; fmt.Sprint(cells) != fmt.Sprint(w) {
			t.Errorf("row %d: cells %v, want %v", i, cells, w)
		}
	}
}
