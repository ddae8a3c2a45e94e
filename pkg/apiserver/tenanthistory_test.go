package apiserver

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/intern/interntest"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/tenants"
)

// storedTenantVersion is version v of Tenant t as the server stores it
// after v quota charges: its members, block, public IPs and quota, the
// annotations of who changed its spec and when, and its conditions; only
// its usage and resourceVersion differ from one version to the next.
func storedTenantVersion(t, v int) *tenant.Tenant {
	created := metav1.NewTime(time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC))
	name := fmt.Sprintf("acme-%04d", t)
	condition := func(c, reason, message string) metav1.Condition {
		return metav1.Condition{Type: c, Status: metav1.ConditionTrue, ObservedGeneration: 1,
			LastTransitionTime: created, Reason: reason, Message: message}
	}
	return &tenant.Tenant{
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			UID:               types.UID(fmt.Sprintf("5e6f7a8b-0000-4000-8000-%012d", t)),
			ResourceVersion:   fmt.Sprint(100000 + t*100 + v),
			Generation:        1,
			CreationTimestamp: created,
			Finalizers:        []string{"tenant.io/offboarding"},
			Annotations: map[string]string{
				hostnames.ChangedByAnnotation: "provider-admin",
				hostnames.ChangedAtAnnotation: fmt.Sprintf("2026-11-26T04:00:%02d.%06dZ", t%60, t),
			},
		},
		Spec: tenant.TenantSpec{
			DisplayName: "ACME " + name,
			Members:     tenant.TenantMembers{Users: []string{name + "-admin"}, Groups: []string{name + "-devs"}},
			Network:     tenant.TenantNetwork{PrefixLength: ptr.To[int32](16)},
			PublicIPs:   tenant.TenantPublicIPs{Count: 1},
			Quota:       tenant.TenantQuota{Namespaces: ptr.To[int32](100), Networks: ptr.To[int32](100)},
		},
		Status: tenant.TenantStatus{
			ObservedGeneration: 1,
			Phase:              tenant.TenantPhaseReady,
			NamespacePrefix:    name + "-5kq2x",
			Network:            &tenant.TenantNetworkStatus{CIDR: fmt.Sprintf("10.%d.%d.0/24", t/256, t%256)},
			PublicIPs:          []string{fmt.Sprintf("203.0.%d.%d", t/256, t%256)},
			Usage:              tenant.TenantUsage{Namespaces: int32(v), Networks: int32(v)},
			Conditions: []metav1.Condition{
				condition(tenant.ConditionAddressesAllocated, "Allocated", "block and public IPs allocated"),
				condition(tenant.ConditionHostSynced, "Synced", "the tenant's host objects match"),
				condition(tenant.ConditionReady, "Ready", "the tenant is ready"),
			},
		},
	}
}

// historyVersion reads a stored Tenant as the Tenants' watch cache does:
// decoded by the storage codec, with the field set it keeps beside it.
func historyVersion(tb testing.TB, data []byte) (*tenant.Tenant, fields.Set) {
	tb.Helper()
	obj, err := kruntime.Decode(StorageCodec(), data)
	if err != nil {
		tb.Fatal(err)
	}
	_, fs, err := kindstore.Attrs(tenants.Resource)(obj)
	if err != nil {
		tb.Fatal(err)
	}
	return obj.(*tenant.Tenant), fs
}

// A Tenant is written for every quota charge of its tenant: the versions
// of one Tenant that the watch cache keeps in its history hold one
// annotation map and one field set, though both name it.
func TestStoredTenantVersionsShareTheirMaps(t *testing.T) {
	decode := func(tn *tenant.Tenant) (*tenant.Tenant, fields.Set) {
		t.Helper()
		data, err := kruntime.Encode(StorageCodec(), tn)
		if err != nil {
			t.Fatal(err)
		}
		return historyVersion(t, data)
	}
	mapOf := func(m map[string]string) uintptr { return reflect.ValueOf(m).Pointer() }
	v1, f1 := decode(storedTenantVersion(1, 1))
	v2, f2 := decode(storedTenantVersion(1, 2))
	if v1.Status.Usage.Namespaces != 1 || v2.Status.Usage.Namespaces != 2 {
		t.Fatalf("usage of the versions: %d, %d", v1.Status.Usage.Namespaces, v2.Status.Usage.Namespaces)
	}
	if mapOf(v1.Annotations) != mapOf(v2.Annotations) {
		t.Error("two versions of a Tenant hold two annotation maps")
	}
	if mapOf(f1) != mapOf(f2) {
		t.Error("two versions of a Tenant hold two field sets")
	}
	want := fields.Set{"metadata.name": "acme-0001", "status.phase": string(tenant.TenantPhaseReady)}
	if !reflect.DeepEqual(f1, want) {
		t.Errorf("field set %v, want %v", f1, want)
	}
	// Another Tenant's are its own.
	other, fo := decode(storedTenantVersion(2, 1))
	if mapOf(other.Annotations) == mapOf(v1.Annotations) || mapOf(fo) == mapOf(f1) || fo["metadata.name"] != "acme-0002" {
		t.Errorf("another Tenant: annotations one map %v, field set %v", mapOf(other.Annotations) == mapOf(v1.Annotations), fo)
	}
	// A version whose phase changed has a field set of its own.
	terminating := storedTenantVersion(1, 3)
	terminating.Status.Phase = tenant.TenantPhaseTerminating
	if _, ft := decode(terminating); mapOf(ft) == mapOf(f1) || ft["status.phase"] != string(tenant.TenantPhaseTerminating) {
		t.Errorf("field set of a Terminating version: %v", ft)
	}
}

// BenchmarkTenantHistoryHeld reports the heap that the versions of 1,000
// Tenants, 20 each, hold once decoded with their field sets, as the
// Tenants' watch cache holds them in its history after a burst of quota
// charges (per version).
func BenchmarkTenantHistoryHeld(b *testing.B) {
	stored := storedObjects(b, StorageCodec(), 1000, 20, func(t, v int) kruntime.Object { return storedTenantVersion(t, v) })
	type version struct {
		obj kruntime.Object
		fs  fields.Set
	}
	interntest.Held(b, func() []version {
		history := make([]version, 0, len(stored))
		for _, data := range stored {
			obj, fs := historyVersion(b, data)
			history = append(history, version{obj, fs})
		}
		return history
	})
}
