package validation

import (
	"fmt"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"net/netip"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

// wantErr is an expected error, by type and field path.
type wantErr struct {
	typ  field.ErrorType
	path string
}

func invalid(path string) wantErr      { return wantErr{field.ErrorTypeInvalid, path} }
func required(path string) wantErr     { return wantErr{field.ErrorTypeRequired, path} }
func notSupported(path string) wantErr { return wantErr{field.ErrorTypeNotSupported, path} }
func forbidden(path string) wantErr    { return wantErr{field.ErrorTypeForbidden, path} }
func duplicate(path string) wantErr    { return wantErr{field.ErrorTypeDuplicate, path} }
func tooLong(path string) wantErr      { return wantErr{field.ErrorTypeTooLong, path} }
func tooMany(path string) wantErr      { return wantErr{field.ErrorTypeTooMany, path} }

// expectErrors checks that got holds exactly the wanted (type, path) pairs,
// and that every Invalid or Forbidden error says why.
func expectErrors(t *testing.T, got field.ErrorList, want ...wantErr) {
	t.Helper()
	gotKeys := make([]string, 0, len(got))
	for _, e := range got {
		gotKeys = append(gotKeys, string(e.Type)+" "+e.Field)
		if (e.Type == field.ErrorTypeInvalid || e.Type == field.ErrorTypeForbidden) && e.Detail == "" {
			t.Errorf("error without a reason: %v", e)
		}
	}
	wantKeys := make([]string, 0, len(want))
	for _, w := range want {
		wantKeys = append(wantKeys, string(w.typ)+" "+w.path)
	}
	sort.Strings(gotKeys)
	sort.Strings(wantKeys)
	if strings.Join(gotKeys, "\n") != strings.Join(wantKeys, "\n") {
		t.Errorf("errors differ\n got: %q\nwant: %q\nfull: %v", gotKeys, wantKeys, got)
	}
}

// createCase mutates a valid object and expects these errors on create.
type createCase[T any] struct {
	name   string
	mutate func(*T)
	want   []wantErr
}

func runCreateCases[T any](t *testing.T, valid func() *T, validate func(*T) field.ErrorList, cases []createCase[T]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := valid()
			if tc.mutate != nil {
				tc.mutate(obj)
			}
			expectErrors(t, validate(obj), tc.want...)
		})
	}
}

// updateCase builds the old object from a valid one with old, the new one
// from the same with old then new, and expects these errors.
type updateCase[T any] struct {
	name string
	old  func(*T)
	new  func(*T)
	want []wantErr
}

func runUpdateCases[T any](t *testing.T, valid func() *T, validate func(newObj, oldObj *T) field.ErrorList, cases []updateCase[T]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldObj, newObj := valid(), valid()
			if tc.old != nil {
				tc.old(oldObj)
				tc.old(newObj)
			}
			if tc.new != nil {
				tc.new(newObj)
			}
			expectErrors(t, validate(newObj, oldObj), tc.want...)
		})
	}
}

func ptr[T any](v T) *T { return &v }

func condition(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: "m", LastTransitionTime: metav1.Unix(1700000000, 0)}
}

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, ResourceVersion: "1", Generation: 1}
}

func namespacedMeta(name string) metav1.ObjectMeta {
	m := meta(name)
	m.Namespace = "dev"
	return m
}

// ---- Tenant ----

func validTenant() *tenant.Tenant {
	return &tenant.Tenant{
		ObjectMeta: meta("acme"),
		Spec: tenant.TenantSpec{
			DisplayName: "ACME Corp",
			Members:     tenant.TenantMembers{Users: []string{"alice"}, Groups: []string{"acme-admins"}},
			Network:     tenant.TenantNetwork{CIDR: "10.42.0.0/16"},
			PublicIPs:   tenant.TenantPublicIPs{Count: 4},
			Quota:       tenant.TenantQuota{Namespaces: ptr[int32](10), Networks: ptr[int32](4), FloatingIPs: ptr[int32](4), LoadBalancers: ptr[int32](4)},
		},
	}
}

func TestValidateTenant(t *testing.T) {
	runCreateCases(t, validTenant, ValidateTenant, []createCase[tenant.Tenant]{
		{name: "valid with cidr"},
		{name: "valid with prefixLength", mutate: func(o *tenant.Tenant) {
			o.Spec.Network = tenant.TenantNetwork{PrefixLength: ptr[int32](16)}
		}},
		{name: "valid with neither cidr nor prefixLength (pool default)", mutate: func(o *tenant.Tenant) { o.Spec.Network = tenant.TenantNetwork{} }},
		{name: "valid name of 30 characters", mutate: func(o *tenant.Tenant) { o.Name = strings.Repeat("a", 30) }},
		{name: "valid boundaries", mutate: func(o *tenant.Tenant) {
			o.Spec.Network.CIDR = "10.0.0.0/8"
			o.Spec.PublicIPs.Count = 256
			o.Spec.Quota.Networks = ptr[int32](0)
			o.Spec.Quota.Namespaces = ptr[int32](10000)
			o.Spec.DisplayName = strings.Repeat("x", 256)
		}},
		{name: "valid with generateName", mutate: func(o *tenant.Tenant) { o.GenerateName = "acme-"; o.Name = "acme-x7k2p" }},
		{name: "name too long", mutate: func(o *tenant.Tenant) { o.Name = strings.Repeat("a", 31) }, want: []wantErr{invalid("metadata.name")}},
		{name: "name far too long", mutate: func(o *tenant.Tenant) { o.Name = strings.Repeat("a", 64) }, want: []wantErr{invalid("metadata.name")}},
		{name: "name not a DNS label", mutate: func(o *tenant.Tenant) { o.Name = "Acme.corp" }, want: []wantErr{invalid("metadata.name")}},
		{name: "name missing", mutate: func(o *tenant.Tenant) { o.Name = "" }, want: []wantErr{required("metadata.name")}},
		{name: "generateName leaves no room", mutate: func(o *tenant.Tenant) { o.GenerateName = strings.Repeat("a", 26) }, want: []wantErr{invalid("metadata.generateName")}},
		{name: "namespace on a cluster-scoped kind", mutate: func(o *tenant.Tenant) { o.Namespace = "default" }, want: []wantErr{forbidden("metadata.namespace")}},
		{name: "displayName too long", mutate: func(o *tenant.Tenant) { o.Spec.DisplayName = strings.Repeat("x", 257) }, want: []wantErr{tooLong("spec.displayName")}},
		{name: "empty user", mutate: func(o *tenant.Tenant) { o.Spec.Members.Users = []string{""} }, want: []wantErr{required("spec.members.users[0]")}},
		{name: "duplicate user", mutate: func(o *tenant.Tenant) { o.Spec.Members.Users = []string{"alice", "bob", "alice"} }, want: []wantErr{duplicate("spec.members.users[2]")}},
		{name: "anonymous user", mutate: func(o *tenant.Tenant) { o.Spec.Members.Users = []string{"system:anonymous"} }, want: []wantErr{invalid("spec.members.users[0]")}},
		{name: "duplicate group", mutate: func(o *tenant.Tenant) { o.Spec.Members.Groups = []string{"a", "a"} }, want: []wantErr{duplicate("spec.members.groups[1]")}},
		{name: "system group", mutate: func(o *tenant.Tenant) { o.Spec.Members.Groups = []string{"ok", "system:authenticated"} }, want: []wantErr{invalid("spec.members.groups[1]")}},
		{name: "cidr and prefixLength", mutate: func(o *tenant.Tenant) { o.Spec.Network.PrefixLength = ptr[int32](16) }, want: []wantErr{invalid("spec.network")}},
		{name: "cidr with host bits", mutate: func(o *tenant.Tenant) { o.Spec.Network.CIDR = "10.42.0.1/16" }, want: []wantErr{invalid("spec.network.cidr")}},
		{name: "cidr not a CIDR", mutate: func(o *tenant.Tenant) { o.Spec.Network.CIDR = "10.42.0.0" }, want: []wantErr{invalid("spec.network.cidr")}},
		{name: "cidr IPv6", mutate: func(o *tenant.Tenant) { o.Spec.Network.CIDR = "fd00::/64" }, want: []wantErr{invalid("spec.network.cidr")}},
		{name: "cidr leading zeros", mutate: func(o *tenant.Tenant) { o.Spec.Network.CIDR = "10.042.0.0/16" }, want: []wantErr{invalid("spec.network.cidr")}},
		{name: "cidr too small", mutate: func(o *tenant.Tenant) { o.Spec.Network.CIDR = "10.42.0.0/31" }, want: []wantErr{invalid("spec.network.cidr")}},
		{name: "cidr too large", mutate: func(o *tenant.Tenant) { o.Spec.Network.CIDR = "10.0.0.0/7" }, want: []wantErr{invalid("spec.network.cidr")}},
		{name: "prefixLength too small", mutate: func(o *tenant.Tenant) { o.Spec.Network = tenant.TenantNetwork{PrefixLength: ptr[int32](31)} }, want: []wantErr{invalid("spec.network.prefixLength")}},
		{name: "prefixLength too large", mutate: func(o *tenant.Tenant) { o.Spec.Network = tenant.TenantNetwork{PrefixLength: ptr[int32](7)} }, want: []wantErr{invalid("spec.network.prefixLength")}},
		{name: "publicIPs count too high", mutate: func(o *tenant.Tenant) { o.Spec.PublicIPs.Count = 257 }, want: []wantErr{invalid("spec.publicIPs.count")}},
		{name: "pod security baseline", mutate: func(o *tenant.Tenant) { o.Spec.PodSecurity.Level = tenant.PodSecurityLevelBaseline }},
		{name: "pod security restricted", mutate: func(o *tenant.Tenant) { o.Spec.PodSecurity.Level = tenant.PodSecurityLevelRestricted }},
		{name: "pod security privileged", mutate: func(o *tenant.Tenant) { o.Spec.PodSecurity.Level = tenant.PodSecurityLevelPrivileged }, want: []wantErr{invalid("spec.podSecurity.level")}},
		{name: "pod security unknown", mutate: func(o *tenant.Tenant) { o.Spec.PodSecurity.Level = "Restricted" }, want: []wantErr{notSupported("spec.podSecurity.level")}},
		{name: "publicIPs count negative", mutate: func(o *tenant.Tenant) { o.Spec.PublicIPs.Count = -1 }, want: []wantErr{invalid("spec.publicIPs.count")}},
		{name: "quota negative and too high", mutate: func(o *tenant.Tenant) {
			o.Spec.Quota.Namespaces = ptr[int32](-1)
			o.Spec.Quota.LoadBalancers = ptr[int32](10001)
		}, want: []wantErr{invalid("spec.quota.namespaces"), invalid("spec.quota.loadBalancers")}},
		{name: "bad label", mutate: func(o *tenant.Tenant) { o.Labels = map[string]string{"a": "-b-"} }, want: []wantErr{invalid("metadata.labels")}},
		{name: "compute quota", mutate: func(o *tenant.Tenant) {
			o.Spec.Quota.Compute = corev1.ResourceList{"requests.cpu": resource.MustParse("4"), "limits.memory": resource.MustParse("8Gi"),
				"requests.storage": resource.MustParse("100Gi"), "pods": resource.MustParse("20"), "count/virtualmachines.kubevirt.io": resource.MustParse("3")}
		}},
		{name: "compute quota of an unknown resource, negative, fractional count", mutate: func(o *tenant.Tenant) {
			o.Spec.Quota.Compute = corev1.ResourceList{"cpu": resource.MustParse("4"), "limits.cpu": resource.MustParse("-1"), "pods": resource.MustParse("1500m")}
		}, want: []wantErr{notSupported("spec.quota.compute[cpu]"), invalid("spec.quota.compute[limits.cpu]"), invalid("spec.quota.compute[pods]")}},
		{name: "object quota", mutate: func(o *tenant.Tenant) {
			o.Spec.Quota.Objects = corev1.ResourceList{"services": resource.MustParse("20"), "secrets": resource.MustParse("50"),
				"configmaps": resource.MustParse("50"), "persistentvolumeclaims": resource.MustParse("5"),
				"count/deployments.apps": resource.MustParse("10"), "count/serviceaccounts": resource.MustParse("10")}
		}},
		{name: "object quota of an unknown resource, negative, fractional, in compute too", mutate: func(o *tenant.Tenant) {
			o.Spec.Quota.Compute = corev1.ResourceList{"persistentvolumeclaims": resource.MustParse("10")}
			o.Spec.Quota.Objects = corev1.ResourceList{"requests.cpu": resource.MustParse("4"), "services": resource.MustParse("-1"),
				"secrets": resource.MustParse("1500m"), "persistentvolumeclaims": resource.MustParse("5"), "count/Deployments.apps": resource.MustParse("1"),
				"configmaps": resource.MustParse("2000000")}
		}, want: []wantErr{invalid("spec.quota.objects[configmaps]"), notSupported("spec.quota.objects[count/Deployments.apps]"),
			invalid("spec.quota.objects[persistentvolumeclaims]"), notSupported("spec.quota.objects[requests.cpu]"), invalid("spec.quota.objects[secrets]"),
			invalid("spec.quota.objects[services]")}},
		{name: "priority classes", mutate: func(o *tenant.Tenant) { o.Spec.PriorityClasses = []string{"tenant-high", "batch.low"} }},
		{name: "priority classes: system, duplicate, bad name", mutate: func(o *tenant.Tenant) {
			o.Spec.PriorityClasses = []string{"system-node-critical", "gold", "gold", "Gold"}
		}, want: []wantErr{invalid("spec.priorityClasses[0]"), duplicate("spec.priorityClasses[2]"), invalid("spec.priorityClasses[3]")}},
	})
}

func TestValidateTenantUpdate(t *testing.T) {
	allocated := func(o *tenant.Tenant) {
		o.Spec.Network = tenant.TenantNetwork{}
		o.Status.Network = &tenant.TenantNetworkStatus{CIDR: "10.42.0.0/16"}
	}
	runUpdateCases(t, validTenant, ValidateTenantUpdate, []updateCase[tenant.Tenant]{
		{name: "unchanged"},
		{name: "members and quota change", new: func(o *tenant.Tenant) {
			o.Spec.Members.Users = append(o.Spec.Members.Users, "bob")
			o.Spec.Quota.Networks = ptr[int32](8)
			o.Spec.PublicIPs.Count = 8
		}},
		{name: "cidr changes", new: func(o *tenant.Tenant) { o.Spec.Network.CIDR = "10.43.0.0/16" }, want: []wantErr{invalid("spec.network.cidr")}},
		{name: "cidr removed", new: func(o *tenant.Tenant) { o.Spec.Network.CIDR = "" }, want: []wantErr{invalid("spec.network.cidr")}},
		{name: "cidr set on a tenant without block", old: func(o *tenant.Tenant) { o.Spec.Network = tenant.TenantNetwork{} },
			new: func(o *tenant.Tenant) { o.Spec.Network.CIDR = "10.42.0.0/16" }},
		{name: "cidr written down as allocated", old: allocated, new: func(o *tenant.Tenant) { o.Spec.Network.CIDR = "10.42.0.0/16" }},
		{name: "cidr differs from allocated block", old: allocated, new: func(o *tenant.Tenant) { o.Spec.Network.CIDR = "10.99.0.0/16" }, want: []wantErr{invalid("spec.network.cidr")}},
		{name: "prefixLength set to allocated size", old: allocated, new: func(o *tenant.Tenant) { o.Spec.Network.PrefixLength = ptr[int32](16) }},
		{name: "prefixLength differs from allocated size", old: allocated, new: func(o *tenant.Tenant) { o.Spec.Network.PrefixLength = ptr[int32](20) }, want: []wantErr{invalid("spec.network.prefixLength")}},
		{name: "prefixLength changes", old: func(o *tenant.Tenant) { o.Spec.Network = tenant.TenantNetwork{PrefixLength: ptr[int32](16)} },
			new: func(o *tenant.Tenant) { o.Spec.Network.PrefixLength = ptr[int32](20) }, want: []wantErr{invalid("spec.network.prefixLength")}},
		{name: "prefixLength removed", old: func(o *tenant.Tenant) { o.Spec.Network = tenant.TenantNetwork{PrefixLength: ptr[int32](16)} },
			new: func(o *tenant.Tenant) { o.Spec.Network.PrefixLength = nil }, want: []wantErr{invalid("spec.network.prefixLength")}},
		{name: "spec still validated", new: func(o *tenant.Tenant) { o.Spec.PublicIPs.Count = 1000 }, want: []wantErr{invalid("spec.publicIPs.count")}},
		{name: "name changes", new: func(o *tenant.Tenant) { o.Name = "globex" }, want: []wantErr{invalid("metadata.name")}},
		{name: "no resourceVersion", new: func(o *tenant.Tenant) { o.ResourceVersion = "" }, want: []wantErr{invalid("metadata.resourceVersion")}},
	})
}

func TestValidateTenantStatusUpdate(t *testing.T) {
	withStatus := func(o *tenant.Tenant) {
		o.Status = tenant.TenantStatus{
			ObservedGeneration: 1,
			Phase:              tenant.TenantPhaseReady,
			NamespacePrefix:    "acme-3f2a1b",
			Network:            &tenant.TenantNetworkStatus{CIDR: "10.42.0.0/16"},
			PublicIPs:          []string{"203.0.113.10", "203.0.113.11"},
			Usage:              tenant.TenantUsage{Namespaces: 1, Networks: 1},
			Conditions: []metav1.Condition{
				condition(tenant.ConditionReady, metav1.ConditionTrue, "Provisioned"),
				condition(tenant.ConditionHostSynced, metav1.ConditionFalse, "HostUnreachable"),
			},
		}
	}
	valid := func() *tenant.Tenant { o := validTenant(); withStatus(o); return o }
	runUpdateCases(t, valid, ValidateTenantStatusUpdate, []updateCase[tenant.Tenant]{
		{name: "valid"},
		{name: "valid empty status", new: func(o *tenant.Tenant) { o.Status = tenant.TenantStatus{} }},
		{name: "phase not supported", new: func(o *tenant.Tenant) { o.Status.Phase = "Happy" }, want: []wantErr{notSupported("status.phase")}},
		{name: "negative observedGeneration", new: func(o *tenant.Tenant) { o.Status.ObservedGeneration = -1 }, want: []wantErr{invalid("status.observedGeneration")}},
		{name: "bad namespacePrefix", new: func(o *tenant.Tenant) { o.Status.NamespacePrefix = "Acme_1" }, want: []wantErr{invalid("status.namespacePrefix")}},
		{name: "bad network cidr", new: func(o *tenant.Tenant) { o.Status.Network.CIDR = "10.42.0.0/33" }, want: []wantErr{invalid("status.network.cidr")}},
		{name: "empty network cidr", new: func(o *tenant.Tenant) { o.Status.Network.CIDR = "" }, want: []wantErr{required("status.network.cidr")}},
		{name: "bad and duplicate public IPs", new: func(o *tenant.Tenant) {
			o.Status.PublicIPs = []string{"203.0.113.10", "203.0.113.10", "2001:db8::1", "127.0.0.1"}
		}, want: []wantErr{duplicate("status.publicIPs[1]"), invalid("status.publicIPs[2]"), invalid("status.publicIPs[3]")}},
		{name: "negative usage", new: func(o *tenant.Tenant) { o.Status.Usage.Networks = -1 }, want: []wantErr{invalid("status.usage.networks")}},
		{name: "condition without reason", new: func(o *tenant.Tenant) { o.Status.Conditions[0].Reason = "" }, want: []wantErr{required("status.conditions[0].reason")}},
		{name: "duplicate condition", new: func(o *tenant.Tenant) { o.Status.Conditions[1].Type = tenant.ConditionReady }, want: []wantErr{duplicate("status.conditions[1].type")}},
		{name: "condition status not supported", new: func(o *tenant.Tenant) { o.Status.Conditions[0].Status = "Maybe" }, want: []wantErr{notSupported("status.conditions[0].status")}},
		{name: "metadata still checked", new: func(o *tenant.Tenant) { o.ResourceVersion = "" }, want: []wantErr{invalid("metadata.resourceVersion")}},
	})
}

// ---- AddressPool ----

func validTenantNetworksPool() *tenant.AddressPool {
	return &tenant.AddressPool{
		ObjectMeta: meta("tenant-blocks"),
		Spec: tenant.AddressPoolSpec{
			Purpose:             tenant.AddressPoolPurposeTenantNetworks,
			CIDRs:               []string{"10.0.0.0/8", "172.16.0.0/12"},
			Exclude:             []string{"10.0.0.0/16", "172.16.0.1"},
			DefaultPrefixLength: ptr[int32](16),
		},
	}
}

func validPublicIPsPool() *tenant.AddressPool {
	return &tenant.AddressPool{
		ObjectMeta: meta("public.v4"),
		Spec: tenant.AddressPoolSpec{
			Purpose: tenant.AddressPoolPurposePublicIPs,
			CIDRs:   []string{"203.0.113.0/28"},
			Ranges:  []string{"198.51.100.10-198.51.100.20", "198.51.100.30-198.51.100.30"},
			Exclude: []string{"203.0.113.0", "198.51.100.12", "203.0.113.8/30"},
		},
	}
}

func TestValidateAddressPool(t *testing.T) {
	runCreateCases(t, validTenantNetworksPool, ValidateAddressPool, []createCase[tenant.AddressPool]{
		{name: "valid"},
		{name: "valid without exclude or default", mutate: func(o *tenant.AddressPool) { o.Spec.Exclude = nil; o.Spec.DefaultPrefixLength = nil }},
		{name: "name not a subdomain", mutate: func(o *tenant.AddressPool) { o.Name = "Blocks" }, want: []wantErr{invalid("metadata.name")}},
		{name: "purpose missing", mutate: func(o *tenant.AddressPool) { o.Spec.Purpose = "" }, want: []wantErr{required("spec.purpose")}},
		{name: "purpose not supported", mutate: func(o *tenant.AddressPool) { o.Spec.Purpose = "Private" }, want: []wantErr{notSupported("spec.purpose")}},
		{name: "no cidrs nor ranges", mutate: func(o *tenant.AddressPool) { o.Spec.CIDRs = nil; o.Spec.Exclude = nil }, want: []wantErr{required("spec.cidrs")}},
		{name: "cidr with host bits", mutate: func(o *tenant.AddressPool) { o.Spec.CIDRs[1] = "172.16.0.1/12" }, want: []wantErr{invalid("spec.cidrs[1]")}},
		{name: "cidr too small for a tenant block", mutate: func(o *tenant.AddressPool) {
			o.Spec.CIDRs = []string{"10.0.0.0/31"}
			o.Spec.Exclude = nil
			o.Spec.DefaultPrefixLength = nil
		}, want: []wantErr{invalid("spec.cidrs[0]")}},
		{name: "ranges in a TenantNetworks pool", mutate: func(o *tenant.AddressPool) { o.Spec.Ranges = []string{"10.0.0.1-10.0.0.9"} }, want: []wantErr{forbidden("spec.ranges")}},
		{name: "overlapping cidrs", mutate: func(o *tenant.AddressPool) { o.Spec.CIDRs = append(o.Spec.CIDRs, "10.1.0.0/16") }, want: []wantErr{invalid("spec.cidrs[2]")}},
		{name: "duplicate cidrs", mutate: func(o *tenant.AddressPool) { o.Spec.CIDRs = append(o.Spec.CIDRs, "10.0.0.0/8") }, want: []wantErr{duplicate("spec.cidrs[2]")}},
		{name: "exclude outside the pool", mutate: func(o *tenant.AddressPool) { o.Spec.Exclude = []string{"192.168.0.0/16"} }, want: []wantErr{invalid("spec.exclude[0]")}},
		{name: "exclude larger than its cidr", mutate: func(o *tenant.AddressPool) { o.Spec.Exclude = []string{"172.0.0.0/8"} }, want: []wantErr{invalid("spec.exclude[0]")}},
		{name: "exclude not an address", mutate: func(o *tenant.AddressPool) { o.Spec.Exclude = []string{"10.0.0.256"} }, want: []wantErr{invalid("spec.exclude[0]")}},
		{name: "exclude duplicate", mutate: func(o *tenant.AddressPool) { o.Spec.Exclude = []string{"10.0.0.1", "10.0.0.1"} }, want: []wantErr{duplicate("spec.exclude[1]")}},
		{name: "defaultPrefixLength too small", mutate: func(o *tenant.AddressPool) { o.Spec.DefaultPrefixLength = ptr[int32](31) }, want: []wantErr{invalid("spec.defaultPrefixLength")}},
		{name: "defaultPrefixLength larger than every cidr", mutate: func(o *tenant.AddressPool) {
			o.Spec.CIDRs = []string{"10.0.0.0/16"}
			o.Spec.Exclude = nil
			o.Spec.DefaultPrefixLength = ptr[int32](12)
		}, want: []wantErr{invalid("spec.defaultPrefixLength")}},
	})
	runCreateCases(t, validPublicIPsPool, ValidateAddressPool, []createCase[tenant.AddressPool]{
		{name: "valid public"},
		{name: "valid ranges only", mutate: func(o *tenant.AddressPool) { o.Spec.CIDRs = nil; o.Spec.Exclude = nil }},
		{name: "valid /32 cidr", mutate: func(o *tenant.AddressPool) { o.Spec.CIDRs = []string{"192.0.2.1/32"}; o.Spec.Exclude = nil }},
		{name: "valid exclude across adjacent entries", mutate: func(o *tenant.AddressPool) {
			o.Spec.CIDRs = []string{"192.0.2.0/29"}
			o.Spec.Ranges = []string{"192.0.2.8-192.0.2.15"}
			o.Spec.Exclude = []string{"192.0.2.0/28"}
		}},
		{name: "exclude across a gap", mutate: func(o *tenant.AddressPool) {
			o.Spec.CIDRs = []string{"192.0.2.0/29"}
			o.Spec.Ranges = []string{"192.0.2.9-192.0.2.15"}
			o.Spec.Exclude = []string{"192.0.2.0/28"}
		}, want: []wantErr{invalid("spec.exclude[0]")}},
		{name: "range reversed", mutate: func(o *tenant.AddressPool) { o.Spec.Ranges[0] = "198.51.100.20-198.51.100.10" }, want: []wantErr{invalid("spec.ranges[0]")}},
		{name: "range malformed", mutate: func(o *tenant.AddressPool) { o.Spec.Ranges[1] = "198.51.100.30" }, want: []wantErr{invalid("spec.ranges[1]")}},
		{name: "range IPv6", mutate: func(o *tenant.AddressPool) { o.Spec.Ranges[1] = "2001:db8::1-2001:db8::9" }, want: []wantErr{invalid("spec.ranges[1]")}},
		{name: "range overlaps cidr", mutate: func(o *tenant.AddressPool) { o.Spec.Ranges[1] = "203.0.113.15-203.0.113.16" }, want: []wantErr{invalid("spec.ranges[1]")}},
		{name: "ranges overlap", mutate: func(o *tenant.AddressPool) { o.Spec.Ranges[1] = "198.51.100.20-198.51.100.21" }, want: []wantErr{invalid("spec.ranges[1]")}},
		{name: "defaultPrefixLength in a PublicIPs pool", mutate: func(o *tenant.AddressPool) { o.Spec.DefaultPrefixLength = ptr[int32](24) }, want: []wantErr{forbidden("spec.defaultPrefixLength")}},
	})
}

func TestValidateAddressPoolUpdate(t *testing.T) {
	runUpdateCases(t, validTenantNetworksPool, ValidateAddressPoolUpdate, []updateCase[tenant.AddressPool]{
		{name: "unchanged"},
		{name: "cidr added", new: func(o *tenant.AddressPool) { o.Spec.CIDRs = append(o.Spec.CIDRs, "192.168.0.0/16") }},
		{name: "purpose changes", new: func(o *tenant.AddressPool) {
			o.Spec.Purpose = tenant.AddressPoolPurposePublicIPs
			o.Spec.DefaultPrefixLength = nil
		}, want: []wantErr{invalid("spec.purpose")}},
	})
}

func TestValidateAddressPoolStatusUpdate(t *testing.T) {
	runUpdateCases(t, validTenantNetworksPool, ValidateAddressPoolStatusUpdate, []updateCase[tenant.AddressPool]{
		{name: "valid", new: func(o *tenant.AddressPool) {
			o.Status = tenant.AddressPoolStatus{ObservedGeneration: 1, Capacity: 100, Allocated: 40, Free: 60}
		}},
		{name: "free not capacity minus allocated", new: func(o *tenant.AddressPool) {
			o.Status = tenant.AddressPoolStatus{Capacity: 100, Allocated: 40, Free: 50}
		}, want: []wantErr{invalid("status.free")}},
		{name: "allocated over capacity", new: func(o *tenant.AddressPool) {
			o.Status = tenant.AddressPoolStatus{Capacity: 10, Allocated: 11, Free: -1}
		}, want: []wantErr{invalid("status.allocated"), invalid("status.free")}},
		{name: "negative capacity", new: func(o *tenant.AddressPool) {
			o.Status = tenant.AddressPoolStatus{Capacity: -1, Free: -1}
		}, want: []wantErr{invalid("status.capacity"), invalid("status.free")}},
	})
}

// ---- ProviderService ----

func validProviderService() *tenant.ProviderService {
	return &tenant.ProviderService{
		ObjectMeta: meta("dns"),
		Spec: tenant.ProviderServiceSpec{
			Service: tenant.ServiceReference{Namespace: "provider-dns", Name: "dns-default"},
			Alias:   "dns",
			Tenants: []string{"acme", "globex"},
		},
	}
}

func TestValidateProviderService(t *testing.T) {
	runCreateCases(t, validProviderService, ValidateProviderService, []createCase[tenant.ProviderService]{
		{name: "valid"},
		{name: "valid for all tenants", mutate: func(o *tenant.ProviderService) { o.Spec.Tenants = nil; o.Spec.AllTenants = true }},
		{name: "valid for nobody", mutate: func(o *tenant.ProviderService) { o.Spec.Tenants = nil }},
		{name: "valid without alias", mutate: func(o *tenant.ProviderService) { o.Spec.Alias = "" }},
		{name: "subdomain name with alias", mutate: func(o *tenant.ProviderService) { o.Name = "ntp.provider" }},
		{name: "subdomain name without alias", mutate: func(o *tenant.ProviderService) { o.Name = "ntp.provider"; o.Spec.Alias = "" }, want: []wantErr{required("spec.alias")}},
		{name: "service namespace missing", mutate: func(o *tenant.ProviderService) { o.Spec.Service.Namespace = "" }, want: []wantErr{required("spec.service.namespace")}},
		{name: "service namespace invalid", mutate: func(o *tenant.ProviderService) { o.Spec.Service.Namespace = "Provider" }, want: []wantErr{invalid("spec.service.namespace")}},
		{name: "service name missing", mutate: func(o *tenant.ProviderService) { o.Spec.Service.Name = "" }, want: []wantErr{required("spec.service.name")}},
		{name: "service name not a DNS-1035 label", mutate: func(o *tenant.ProviderService) { o.Spec.Service.Name = "1dns" }, want: []wantErr{invalid("spec.service.name")}},
		{name: "alias invalid", mutate: func(o *tenant.ProviderService) { o.Spec.Alias = "my_dns" }, want: []wantErr{invalid("spec.alias")}},
		{name: "tenant invalid", mutate: func(o *tenant.ProviderService) { o.Spec.Tenants[1] = strings.Repeat("g", 31) }, want: []wantErr{invalid("spec.tenants[1]")}},
		{name: "tenant empty", mutate: func(o *tenant.ProviderService) { o.Spec.Tenants[0] = "" }, want: []wantErr{required("spec.tenants[0]")}},
		{name: "tenant duplicate", mutate: func(o *tenant.ProviderService) { o.Spec.Tenants = append(o.Spec.Tenants, "acme") }, want: []wantErr{duplicate("spec.tenants[2]")}},
		{name: "allTenants with tenants", mutate: func(o *tenant.ProviderService) { o.Spec.AllTenants = true }, want: []wantErr{invalid("spec.tenants")}},
	})
}

func TestValidateProviderServiceUpdate(t *testing.T) {
	runUpdateCases(t, validProviderService, ValidateProviderServiceUpdate, []updateCase[tenant.ProviderService]{
		{name: "offer changes", new: func(o *tenant.ProviderService) {
			o.Spec.Tenants = nil
			o.Spec.AllTenants = true
			o.Spec.Alias = "resolver"
		}},
		{name: "spec still validated", new: func(o *tenant.ProviderService) { o.Spec.Service.Name = "" }, want: []wantErr{required("spec.service.name")}},
	})
	runUpdateCases(t, validProviderService, ValidateProviderServiceStatusUpdate, []updateCase[tenant.ProviderService]{
		{name: "status valid", new: func(o *tenant.ProviderService) {
			o.Status.Conditions = []metav1.Condition{condition(tenant.ConditionReady, metav1.ConditionTrue, "Offered")}
		}},
		{name: "status condition type invalid", new: func(o *tenant.ProviderService) {
			o.Status.Conditions = []metav1.Condition{condition("not a type", metav1.ConditionTrue, "Offered")}
		}, want: []wantErr{invalid("status.conditions[0].type")}},
	})
}

// ---- VRFPeering ----

func validVRFPeering() *tenant.VRFPeering {
	return &tenant.VRFPeering{
		ObjectMeta: meta("acme-default"),
		Spec: tenant.VRFPeeringSpec{
			Tenant:  "acme",
			Network: "default",
			ASN:     64512,
			Neighbors: []tenant.BGPNeighbor{
				{Address: "192.0.2.1", ASN: 64500, Port: ptr[int32](179)},
				{Address: "192.0.2.2", ASN: 4294967295, Port: ptr[int32](1179)},
			},
		},
	}
}

func TestValidateVRFPeering(t *testing.T) {
	runCreateCases(t, validVRFPeering, ValidateVRFPeering, []createCase[tenant.VRFPeering]{
		{name: "valid"},
		{name: "tenant missing", mutate: func(o *tenant.VRFPeering) { o.Spec.Tenant = "" }, want: []wantErr{required("spec.tenant")}},
		{name: "tenant name too long", mutate: func(o *tenant.VRFPeering) { o.Spec.Tenant = strings.Repeat("a", 31) }, want: []wantErr{invalid("spec.tenant")}},
		{name: "network missing", mutate: func(o *tenant.VRFPeering) { o.Spec.Network = "" }, want: []wantErr{required("spec.network")}},
		{name: "network invalid", mutate: func(o *tenant.VRFPeering) { o.Spec.Network = "Default" }, want: []wantErr{invalid("spec.network")}},
		{name: "asn zero", mutate: func(o *tenant.VRFPeering) { o.Spec.ASN = 0 }, want: []wantErr{invalid("spec.asn")}},
		{name: "asn too large", mutate: func(o *tenant.VRFPeering) { o.Spec.ASN = 4294967296 }, want: []wantErr{invalid("spec.asn")}},
		{name: "no neighbors", mutate: func(o *tenant.VRFPeering) { o.Spec.Neighbors = nil }, want: []wantErr{required("spec.neighbors")}},
		{name: "neighbor address missing", mutate: func(o *tenant.VRFPeering) { o.Spec.Neighbors[0].Address = "" }, want: []wantErr{required("spec.neighbors[0].address")}},
		{name: "neighbor loopback", mutate: func(o *tenant.VRFPeering) { o.Spec.Neighbors[0].Address = "127.0.0.1" }, want: []wantErr{invalid("spec.neighbors[0].address")}},
		{name: "neighbor multicast", mutate: func(o *tenant.VRFPeering) { o.Spec.Neighbors[1].Address = "224.0.0.5" }, want: []wantErr{invalid("spec.neighbors[1].address")}},
		{name: "neighbor unspecified", mutate: func(o *tenant.VRFPeering) { o.Spec.Neighbors[1].Address = "0.0.0.0" }, want: []wantErr{invalid("spec.neighbors[1].address")}},
		{name: "neighbor IPv6", mutate: func(o *tenant.VRFPeering) { o.Spec.Neighbors[0].Address = "2001:db8::1" }, want: []wantErr{invalid("spec.neighbors[0].address")}},
		{name: "neighbor IPv4-mapped IPv6", mutate: func(o *tenant.VRFPeering) { o.Spec.Neighbors[0].Address = "::ffff:192.0.2.1" }, want: []wantErr{invalid("spec.neighbors[0].address")}},
		{name: "neighbor duplicate", mutate: func(o *tenant.VRFPeering) { o.Spec.Neighbors[1].Address = "192.0.2.1" }, want: []wantErr{duplicate("spec.neighbors[1].address")}},
		{name: "neighbor asn zero", mutate: func(o *tenant.VRFPeering) { o.Spec.Neighbors[0].ASN = 0 }, want: []wantErr{invalid("spec.neighbors[0].asn")}},
		{name: "neighbor port zero", mutate: func(o *tenant.VRFPeering) { o.Spec.Neighbors[0].Port = ptr[int32](0) }, want: []wantErr{invalid("spec.neighbors[0].port")}},
		{name: "neighbor port too large", mutate: func(o *tenant.VRFPeering) { o.Spec.Neighbors[1].Port = ptr[int32](65536) }, want: []wantErr{invalid("spec.neighbors[1].port")}},
		{name: "asn AS_TRANS", mutate: func(o *tenant.VRFPeering) { o.Spec.ASN = 23456 }, want: []wantErr{invalid("spec.asn")}},
		{name: "neighbor asn AS_TRANS", mutate: func(o *tenant.VRFPeering) { o.Spec.Neighbors[1].ASN = 23456 }, want: []wantErr{invalid("spec.neighbors[1].asn")}},
		{name: "too many neighbors", mutate: func(o *tenant.VRFPeering) {
			o.Spec.Neighbors = nil
			for i := range 17 {
				o.Spec.Neighbors = append(o.Spec.Neighbors, tenant.BGPNeighbor{Address: fmt.Sprintf("192.0.2.%d", i+1), ASN: 64500})
			}
		}, want: []wantErr{tooMany("spec.neighbors")}},
		{name: "neighbor options", mutate: func(o *tenant.VRFPeering) {
			o.Spec.Neighbors[0].PasswordSecret, o.Spec.Neighbors[0].BFDProfile = "router-1", "fast"
			o.Spec.Neighbors[0].HoldTime, o.Spec.Neighbors[0].KeepaliveTime = &metav1.Duration{Duration: 9 * time.Second}, &metav1.Duration{Duration: 3 * time.Second}
		}},
		{name: "password secret invalid", mutate: func(o *tenant.VRFPeering) { o.Spec.Neighbors[0].PasswordSecret = "Router_1" }, want: []wantErr{invalid("spec.neighbors[0].passwordSecret")}},
		{name: "bfd profile invalid", mutate: func(o *tenant.VRFPeering) { o.Spec.Neighbors[0].BFDProfile = "fast profile" }, want: []wantErr{invalid("spec.neighbors[0].bfdProfile")}},
		{name: "hold time too short", mutate: func(o *tenant.VRFPeering) { o.Spec.Neighbors[0].HoldTime = &metav1.Duration{Duration: 2 * time.Second} }, want: []wantErr{invalid("spec.neighbors[0].holdTime")}},
		{name: "hold time fractional", mutate: func(o *tenant.VRFPeering) {
			o.Spec.Neighbors[0].HoldTime = &metav1.Duration{Duration: 3500 * time.Millisecond}
		}, want: []wantErr{invalid("spec.neighbors[0].holdTime")}},
		{name: "keepalive above hold time", mutate: func(o *tenant.VRFPeering) {
			o.Spec.Neighbors[0].HoldTime, o.Spec.Neighbors[0].KeepaliveTime = &metav1.Duration{Duration: 9 * time.Second}, &metav1.Duration{Duration: 10 * time.Second}
		}, want: []wantErr{invalid("spec.neighbors[0].keepaliveTime")}},
		{name: "keepalive without hold time", mutate: func(o *tenant.VRFPeering) {
			o.Spec.Neighbors[0].KeepaliveTime = &metav1.Duration{Duration: 10 * time.Second}
		}, want: []wantErr{required("spec.neighbors[0].holdTime")}},
		{name: "prefixes", mutate: func(o *tenant.VRFPeering) {
			o.Spec.Advertise = []string{"10.42.0.0/24"}
			o.Spec.Receive = &tenant.VRFPeeringReceive{Prefixes: []string{"172.16.0.0/12"}, DefaultRoute: true}
		}},
		{name: "advertise not canonical", mutate: func(o *tenant.VRFPeering) { o.Spec.Advertise = []string{"10.42.0.1/24"} }, want: []wantErr{invalid("spec.advertise[0]")}},
		{name: "advertise duplicate", mutate: func(o *tenant.VRFPeering) { o.Spec.Advertise = []string{"10.42.0.0/24", "10.42.0.0/24"} }, want: []wantErr{duplicate("spec.advertise[1]")}},
		{name: "receive default route as prefix", mutate: func(o *tenant.VRFPeering) {
			o.Spec.Receive = &tenant.VRFPeeringReceive{Prefixes: []string{"0.0.0.0/0"}}
		}, want: []wantErr{invalid("spec.receive.prefixes[0]")}},
		{name: "receive IPv6", mutate: func(o *tenant.VRFPeering) {
			o.Spec.Receive = &tenant.VRFPeeringReceive{Prefixes: []string{"2001:db8::/32"}}
		}, want: []wantErr{invalid("spec.receive.prefixes[0]")}},
	})
}

func TestValidateVRFPeeringUpdate(t *testing.T) {
	runUpdateCases(t, validVRFPeering, ValidateVRFPeeringUpdate, []updateCase[tenant.VRFPeering]{
		{name: "neighbors change", new: func(o *tenant.VRFPeering) { o.Spec.Neighbors = o.Spec.Neighbors[:1]; o.Spec.ASN = 65000 }},
		{name: "tenant changes", new: func(o *tenant.VRFPeering) { o.Spec.Tenant = "globex" }, want: []wantErr{invalid("spec.tenant")}},
		{name: "network changes", new: func(o *tenant.VRFPeering) { o.Spec.Network = "prod" }, want: []wantErr{invalid("spec.network")}},
	})
	runUpdateCases(t, validVRFPeering, ValidateVRFPeeringStatusUpdate, []updateCase[tenant.VRFPeering]{
		{name: "status valid", new: func(o *tenant.VRFPeering) { o.Status.VRF = "t-acme-default"; o.Status.ObservedGeneration = 1 }},
		{name: "status vrf too long", new: func(o *tenant.VRFPeering) { o.Status.VRF = "tenant-acme-default" }, want: []wantErr{invalid("status.vrf")}},
		{name: "status neighbors", new: func(o *tenant.VRFPeering) {
			o.Status.Neighbors = []tenant.VRFPeeringNeighborStatus{{Address: "192.0.2.1", State: "Established", Sessions: 3, Established: 3}}
		}},
		{name: "status neighbor more established than sessions", new: func(o *tenant.VRFPeering) {
			o.Status.Neighbors = []tenant.VRFPeeringNeighborStatus{{Address: "192.0.2.1", State: "Idle", Sessions: 1, Established: 2}}
		}, want: []wantErr{invalid("status.neighbors[0].established")}},
	})
}

// ---- Namespace ----

func validNamespace() *tenant.Namespace {
	return &tenant.Namespace{ObjectMeta: meta("dev"), Spec: tenant.NamespaceSpec{Network: "default"}}
}

func TestValidateNamespace(t *testing.T) {
	runCreateCases(t, validNamespace, ValidateNamespace, []createCase[tenant.Namespace]{
		{name: "valid"},
		{name: "valid name of 63 characters", mutate: func(o *tenant.Namespace) { o.Name = strings.Repeat("d", 63) }},
		{name: "name too long", mutate: func(o *tenant.Namespace) { o.Name = strings.Repeat("d", 64) }, want: []wantErr{invalid("metadata.name")}},
		{name: "name not a DNS label", mutate: func(o *tenant.Namespace) { o.Name = "dev.team" }, want: []wantErr{invalid("metadata.name")}},
		{name: "namespace set", mutate: func(o *tenant.Namespace) { o.Namespace = "dev" }, want: []wantErr{forbidden("metadata.namespace")}},
		{name: "network missing", mutate: func(o *tenant.Namespace) { o.Spec.Network = "" }, want: []wantErr{required("spec.network")}},
		{name: "network invalid", mutate: func(o *tenant.Namespace) { o.Spec.Network = "my_net" }, want: []wantErr{invalid("spec.network")}},
	})
}

func TestValidateNamespaceUpdate(t *testing.T) {
	runUpdateCases(t, validNamespace, ValidateNamespaceUpdate, []updateCase[tenant.Namespace]{
		{name: "labels change", new: func(o *tenant.Namespace) { o.Labels = map[string]string{"team": "a"} }},
		{name: "network changes", new: func(o *tenant.Namespace) { o.Spec.Network = "prod" }, want: []wantErr{invalid("spec.network")}},
	})
	runUpdateCases(t, validNamespace, ValidateNamespaceStatusUpdate, []updateCase[tenant.Namespace]{
		{name: "status valid", new: func(o *tenant.Namespace) {
			o.Status = tenant.NamespaceStatus{Phase: tenant.NamespacePhaseActive, HostNamespace: "acme-3f2a1b-dev"}
		}},
		{name: "status phase not supported", new: func(o *tenant.Namespace) { o.Status.Phase = "Gone" }, want: []wantErr{notSupported("status.phase")}},
		{name: "status hostNamespace invalid", new: func(o *tenant.Namespace) { o.Status.HostNamespace = "acme_dev" }, want: []wantErr{invalid("status.hostNamespace")}},
	})
}

// ---- Network ----

func validNetwork() *tenant.Network {
	return &tenant.Network{
		ObjectMeta: meta("default"),
		Spec: tenant.NetworkSpec{
			Topology:   tenant.NetworkTopologyLayer3,
			Subnets:    []string{"10.42.0.0/24", "10.42.1.0/24"},
			NATGateway: &tenant.NATGateway{Enabled: true, Address: "203.0.113.10"},
		},
	}
}

func TestValidateNetwork(t *testing.T) {
	manySubnets := func(n int) []string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("10.42.%d.0/24", i)
		}
		return s
	}
	runCreateCases(t, validNetwork, ValidateNetwork, []createCase[tenant.Network]{
		{name: "valid"},
		{name: "valid Layer3 without subnets or gateway", mutate: func(o *tenant.Network) {
			o.Spec = tenant.NetworkSpec{Topology: tenant.NetworkTopologyLayer3}
		}},
		{name: "valid 16 subnets", mutate: func(o *tenant.Network) { o.Spec.Subnets = manySubnets(16) }},
		{name: "valid Layer2 with one subnet and an MTU", mutate: func(o *tenant.Network) {
			o.Spec.Topology, o.Spec.Subnets, o.Spec.MTU = tenant.NetworkTopologyLayer2, []string{"10.42.0.0/16"}, ptr(int32(9000))
		}},
		{name: "Layer2 with two subnets", mutate: func(o *tenant.Network) { o.Spec.Topology = tenant.NetworkTopologyLayer2 },
			want: []wantErr{invalid("spec.subnets")}},
		{name: "MTU too small", mutate: func(o *tenant.Network) { o.Spec.MTU = ptr(int32(575)) }, want: []wantErr{invalid("spec.mtu")}},
		{name: "MTU too large", mutate: func(o *tenant.Network) { o.Spec.MTU = ptr(int32(65537)) }, want: []wantErr{invalid("spec.mtu")}},
		{name: "name invalid", mutate: func(o *tenant.Network) { o.Name = "Default" }, want: []wantErr{invalid("metadata.name")}},
		{name: "topology missing", mutate: func(o *tenant.Network) { o.Spec.Topology = "" }, want: []wantErr{required("spec.topology")}},
		{name: "topology not supported", mutate: func(o *tenant.Network) { o.Spec.Topology = "Localnet" }, want: []wantErr{notSupported("spec.topology")}},
		{name: "subnet not canonical", mutate: func(o *tenant.Network) { o.Spec.Subnets[1] = "10.42.1.1/24" }, want: []wantErr{invalid("spec.subnets[1]")}},
		{name: "subnet too small", mutate: func(o *tenant.Network) { o.Spec.Subnets[0] = "10.42.0.0/31" }, want: []wantErr{invalid("spec.subnets[0]")}},
		{name: "subnet IPv6", mutate: func(o *tenant.Network) { o.Spec.Subnets[0] = "fd00:42::/64" }, want: []wantErr{invalid("spec.subnets[0]")}},
		{name: "subnet empty", mutate: func(o *tenant.Network) { o.Spec.Subnets[0] = "" }, want: []wantErr{required("spec.subnets[0]")}},
		{name: "subnet duplicate", mutate: func(o *tenant.Network) { o.Spec.Subnets[1] = "10.42.0.0/24" }, want: []wantErr{duplicate("spec.subnets[1]")}},
		{name: "subnets overlap", mutate: func(o *tenant.Network) { o.Spec.Subnets = append(o.Spec.Subnets, "10.42.0.0/23") }, want: []wantErr{invalid("spec.subnets[2]")}},
		{name: "too many subnets", mutate: func(o *tenant.Network) { o.Spec.Subnets = manySubnets(17) }, want: []wantErr{tooMany("spec.subnets")}},
		{name: "NAT gateway address invalid", mutate: func(o *tenant.Network) { o.Spec.NATGateway.Address = "203.0.113" }, want: []wantErr{invalid("spec.natGateway.address")}},
		{name: "NAT gateway address link-local", mutate: func(o *tenant.Network) { o.Spec.NATGateway.Address = "169.254.0.1" }, want: []wantErr{invalid("spec.natGateway.address")}},
		{name: "valid service network Shared", mutate: func(o *tenant.Network) { o.Spec.ServiceNetwork = tenant.ServiceNetworkShared }},
		{name: "valid service network Private", mutate: func(o *tenant.Network) { o.Spec.ServiceNetwork = tenant.ServiceNetworkPrivate }},
		{name: "valid service network unset (Private)", mutate: func(o *tenant.Network) { o.Spec.ServiceNetwork = "" }},
		{name: "service network not supported", mutate: func(o *tenant.Network) { o.Spec.ServiceNetwork = "Public" }, want: []wantErr{notSupported("spec.serviceNetwork")}},
		{name: "service network in the wrong case", mutate: func(o *tenant.Network) { o.Spec.ServiceNetwork = "shared" }, want: []wantErr{notSupported("spec.serviceNetwork")}},
	})
}

func TestValidateNetworkUpdate(t *testing.T) {
	runUpdateCases(t, validNetwork, ValidateNetworkUpdate, []updateCase[tenant.Network]{
		{name: "NAT gateway changes", new: func(o *tenant.Network) { o.Spec.NATGateway = nil }},
		{name: "service network shared", new: func(o *tenant.Network) { o.Spec.ServiceNetwork = tenant.ServiceNetworkShared }},
		{name: "service network back to private", old: func(o *tenant.Network) { o.Spec.ServiceNetwork = tenant.ServiceNetworkShared },
			new: func(o *tenant.Network) { o.Spec.ServiceNetwork = tenant.ServiceNetworkPrivate }},
		{name: "service network not supported on update", new: func(o *tenant.Network) { o.Spec.ServiceNetwork = "All" }, want: []wantErr{notSupported("spec.serviceNetwork")}},
		{name: "subnets set for the first time", old: func(o *tenant.Network) { o.Spec.Subnets = nil },
			new: func(o *tenant.Network) { o.Spec.Subnets = []string{"10.42.7.0/24"} }},
		{name: "topology changes", new: func(o *tenant.Network) {
			o.Spec.Topology, o.Spec.Subnets = tenant.NetworkTopologyLayer2, o.Spec.Subnets[:1]
		},
			want: []wantErr{invalid("spec.topology"), invalid("spec.subnets")}},
		{name: "subnets change", new: func(o *tenant.Network) { o.Spec.Subnets = append(o.Spec.Subnets, "10.42.2.0/24") }, want: []wantErr{invalid("spec.subnets")}},
		{name: "subnets removed", new: func(o *tenant.Network) { o.Spec.Subnets = nil }, want: []wantErr{invalid("spec.subnets")}},
		{name: "MTU set later", new: func(o *tenant.Network) { o.Spec.MTU = ptr(int32(1400)) }, want: []wantErr{invalid("spec.mtu")}},
	})
	runUpdateCases(t, validNetwork, ValidateNetworkStatusUpdate, []updateCase[tenant.Network]{
		{name: "status valid", new: func(o *tenant.Network) {
			o.Status = tenant.NetworkStatus{
				ObservedGeneration: 1, Subnets: []string{"10.42.0.0/24"}, Namespaces: []string{"dev", "prod"},
				NATGatewayIP: "203.0.113.10", HostNetwork: "t-3f2a1b-0",
				Conditions: []metav1.Condition{condition(tenant.ConditionNetworkCreated, metav1.ConditionTrue, "Created")},
			}
		}},
		{name: "status namespaces duplicate and invalid", new: func(o *tenant.Network) { o.Status.Namespaces = []string{"dev", "dev", "Prod"} },
			want: []wantErr{duplicate("status.namespaces[1]"), invalid("status.namespaces[2]")}},
		{name: "status subnets overlap", new: func(o *tenant.Network) { o.Status.Subnets = []string{"10.42.0.0/16", "10.42.1.0/24"} },
			want: []wantErr{invalid("status.subnets[1]")}},
		{name: "status hostNetwork too long", new: func(o *tenant.Network) { o.Status.HostNetwork = "tenant-acme-default" }, want: []wantErr{invalid("status.hostNetwork")}},
		{name: "status natGatewayIP invalid", new: func(o *tenant.Network) { o.Status.NATGatewayIP = "x" }, want: []wantErr{invalid("status.natGatewayIP")}},
	})
}

// ---- FloatingIP ----

func validFloatingIP() *tenant.FloatingIP {
	return &tenant.FloatingIP{
		ObjectMeta: namespacedMeta("web"),
		Spec: tenant.FloatingIPSpec{
			Address: "203.0.113.11",
			Target:  &tenant.FloatingIPTarget{Kind: tenant.FloatingIPTargetVirtualMachine, Name: "web"},
			Ports:   []tenant.FloatingIPPort{{Port: 22, Protocol: tenant.ProtocolTCP}, {Port: 22, Protocol: tenant.ProtocolUDP}},
		},
	}
}

func TestValidateFloatingIP(t *testing.T) {
	runCreateCases(t, validFloatingIP, ValidateFloatingIP, []createCase[tenant.FloatingIP]{
		{name: "valid"},
		{name: "valid unbound without address", mutate: func(o *tenant.FloatingIP) { o.Spec = tenant.FloatingIPSpec{} }},
		{name: "valid pod target", mutate: func(o *tenant.FloatingIP) {
			o.Spec.Target = &tenant.FloatingIPTarget{Kind: tenant.FloatingIPTargetPod, Name: "web-0.a"}
		}},
		{name: "namespace missing", mutate: func(o *tenant.FloatingIP) { o.Namespace = "" }, want: []wantErr{required("metadata.namespace")}},
		{name: "name not a Service name", mutate: func(o *tenant.FloatingIP) { o.Name = "1web" }, want: []wantErr{invalid("metadata.name")}},
		{name: "address unspecified", mutate: func(o *tenant.FloatingIP) { o.Spec.Address = "0.0.0.0" }, want: []wantErr{invalid("spec.address")}},
		{name: "address link-local", mutate: func(o *tenant.FloatingIP) { o.Spec.Address = "169.254.10.1" }, want: []wantErr{invalid("spec.address")}},
		{name: "address broadcast", mutate: func(o *tenant.FloatingIP) { o.Spec.Address = "255.255.255.255" }, want: []wantErr{invalid("spec.address")}},
		{name: "address out of range", mutate: func(o *tenant.FloatingIP) { o.Spec.Address = "203.0.113.300" }, want: []wantErr{invalid("spec.address")}},
		{name: "address is a CIDR", mutate: func(o *tenant.FloatingIP) { o.Spec.Address = "203.0.113.11/32" }, want: []wantErr{invalid("spec.address")}},
		{name: "target kind missing", mutate: func(o *tenant.FloatingIP) { o.Spec.Target.Kind = "" }, want: []wantErr{required("spec.target.kind")}},
		{name: "target kind not supported", mutate: func(o *tenant.FloatingIP) { o.Spec.Target.Kind = "Deployment" }, want: []wantErr{notSupported("spec.target.kind")}},
		{name: "target name missing", mutate: func(o *tenant.FloatingIP) { o.Spec.Target.Name = "" }, want: []wantErr{required("spec.target.name")}},
		{name: "target name invalid", mutate: func(o *tenant.FloatingIP) { o.Spec.Target.Name = "Web_1" }, want: []wantErr{invalid("spec.target.name")}},
		{name: "port zero", mutate: func(o *tenant.FloatingIP) { o.Spec.Ports[0].Port = 0 }, want: []wantErr{invalid("spec.ports[0].port")}},
		{name: "protocol not supported", mutate: func(o *tenant.FloatingIP) { o.Spec.Ports[1].Protocol = "ICMP" }, want: []wantErr{notSupported("spec.ports[1].protocol")}},
		{name: "protocol missing", mutate: func(o *tenant.FloatingIP) { o.Spec.Ports[1].Protocol = "" }, want: []wantErr{required("spec.ports[1].protocol")}},
		{name: "port duplicate", mutate: func(o *tenant.FloatingIP) { o.Spec.Ports[1].Protocol = tenant.ProtocolTCP }, want: []wantErr{duplicate("spec.ports[1]")}},
		{name: "too many ports", mutate: func(o *tenant.FloatingIP) {
			o.Spec.Ports = nil
			for i := 1; i <= 65; i++ {
				o.Spec.Ports = append(o.Spec.Ports, tenant.FloatingIPPort{Port: int32(i), Protocol: tenant.ProtocolTCP})
			}
		}, want: []wantErr{tooMany("spec.ports")}},
	})
}

func TestValidateFloatingIPUpdate(t *testing.T) {
	runUpdateCases(t, validFloatingIP, ValidateFloatingIPUpdate, []updateCase[tenant.FloatingIP]{
		{name: "target and ports change", new: func(o *tenant.FloatingIP) {
			o.Spec.Target = &tenant.FloatingIPTarget{Kind: tenant.FloatingIPTargetPod, Name: "db"}
			o.Spec.Ports = nil
		}},
		{name: "address set for the first time", old: func(o *tenant.FloatingIP) { o.Spec.Address = "" },
			new: func(o *tenant.FloatingIP) { o.Spec.Address = "203.0.113.12" }},
		{name: "address changes", new: func(o *tenant.FloatingIP) { o.Spec.Address = "203.0.113.12" }, want: []wantErr{invalid("spec.address")}},
		{name: "address removed", new: func(o *tenant.FloatingIP) { o.Spec.Address = "" }, want: []wantErr{invalid("spec.address")}},
		{name: "held address asked for", old: func(o *tenant.FloatingIP) { o.Spec.Address, o.Status.Address = "", "203.0.113.11" },
			new: func(o *tenant.FloatingIP) { o.Spec.Address = "203.0.113.11" }},
		{name: "held address still omitted", old: func(o *tenant.FloatingIP) { o.Spec.Address, o.Status.Address = "", "203.0.113.11" }},
		{name: "another address than the held one", old: func(o *tenant.FloatingIP) { o.Spec.Address, o.Status.Address = "", "203.0.113.11" },
			new: func(o *tenant.FloatingIP) { o.Spec.Address = "203.0.113.12" }, want: []wantErr{invalid("spec.address")}},
		{name: "namespace changes", new: func(o *tenant.FloatingIP) { o.Namespace = "prod" }, want: []wantErr{invalid("metadata.namespace")}},
	})
	runUpdateCases(t, validFloatingIP, ValidateFloatingIPStatusUpdate, []updateCase[tenant.FloatingIP]{
		{name: "status valid", new: func(o *tenant.FloatingIP) {
			o.Status = tenant.FloatingIPStatus{Address: "203.0.113.11", Phase: tenant.FloatingIPPhaseAssociated}
		}},
		{name: "status phase not supported", new: func(o *tenant.FloatingIP) { o.Status.Phase = "Bound" }, want: []wantErr{notSupported("status.phase")}},
		{name: "status address invalid", new: func(o *tenant.FloatingIP) { o.Status.Address = "224.1.1.1" }, want: []wantErr{invalid("status.address")}},
		{name: "status dnsName with the address", new: func(o *tenant.FloatingIP) {
			o.Status.Address, o.Status.DNSName = "203.0.113.11", "web.dev.acme.tenants.example.net"
		}},
		{name: "status dnsName without an address", new: func(o *tenant.FloatingIP) { o.Status.DNSName = "web.dev.acme.tenants.example.net" },
			want: []wantErr{invalid("status.dnsName")}},
		{name: "status dnsName not canonical", new: func(o *tenant.FloatingIP) {
			o.Status.Address, o.Status.DNSName = "203.0.113.11", "Web.dev.acme.tenants.example.net."
		}, want: []wantErr{invalid("status.dnsName"), invalid("status.dnsName")}},
	})
}

// ---- LoadBalancer ----

func validLoadBalancer() *tenant.LoadBalancer {
	return &tenant.LoadBalancer{
		ObjectMeta: namespacedMeta("web"),
		Spec: tenant.LoadBalancerSpec{
			Address:  "203.0.113.12",
			Selector: map[string]string{"app": "web"},
			Ports: []tenant.LoadBalancerPort{
				{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: tenant.ProtocolTCP},
				{Name: "https", Port: 443, TargetPort: intstr.FromString("https"), Protocol: tenant.ProtocolTCP},
			},
			SourceRanges: []string{"0.0.0.0/0"},
		},
	}
}

func TestValidateLoadBalancer(t *testing.T) {
	runCreateCases(t, validLoadBalancer, ValidateLoadBalancer, []createCase[tenant.LoadBalancer]{
		{name: "valid"},
		{name: "valid single unnamed port, no address", mutate: func(o *tenant.LoadBalancer) {
			o.Spec.Address = ""
			o.Spec.Ports = []tenant.LoadBalancerPort{{Port: 53, TargetPort: intstr.FromInt32(53), Protocol: tenant.ProtocolUDP}}
			o.Spec.SourceRanges = nil
		}},
		{name: "valid same port on two protocols", mutate: func(o *tenant.LoadBalancer) {
			o.Spec.Ports[1] = tenant.LoadBalancerPort{Name: "http-udp", Port: 80, TargetPort: intstr.FromInt32(80), Protocol: tenant.ProtocolUDP}
		}},
		{name: "namespace missing", mutate: func(o *tenant.LoadBalancer) { o.Namespace = "" }, want: []wantErr{required("metadata.namespace")}},
		{name: "namespace invalid", mutate: func(o *tenant.LoadBalancer) { o.Namespace = "Dev" }, want: []wantErr{invalid("metadata.namespace")}},
		{name: "name too long", mutate: func(o *tenant.LoadBalancer) { o.Name = strings.Repeat("w", 64) }, want: []wantErr{invalid("metadata.name")}},
		{name: "address loopback", mutate: func(o *tenant.LoadBalancer) { o.Spec.Address = "127.0.0.2" }, want: []wantErr{invalid("spec.address")}},
		{name: "selector missing", mutate: func(o *tenant.LoadBalancer) { o.Spec.Selector = nil }, want: []wantErr{required("spec.selector")}},
		{name: "selector key invalid", mutate: func(o *tenant.LoadBalancer) { o.Spec.Selector = map[string]string{"-app": "web"} }, want: []wantErr{invalid("spec.selector")}},
		{name: "selector value invalid", mutate: func(o *tenant.LoadBalancer) { o.Spec.Selector = map[string]string{"app": "web app"} }, want: []wantErr{invalid("spec.selector")}},
		{name: "ports missing", mutate: func(o *tenant.LoadBalancer) { o.Spec.Ports = nil }, want: []wantErr{required("spec.ports")}},
		{name: "too many ports", mutate: func(o *tenant.LoadBalancer) {
			o.Spec.Ports = nil
			for i := 1; i <= 65; i++ {
				o.Spec.Ports = append(o.Spec.Ports, tenant.LoadBalancerPort{Name: fmt.Sprintf("p%d", i), Port: int32(i), TargetPort: intstr.FromInt32(int32(i)), Protocol: tenant.ProtocolTCP})
			}
		}, want: []wantErr{tooMany("spec.ports")}},
		{name: "several ports without names", mutate: func(o *tenant.LoadBalancer) { o.Spec.Ports[0].Name = ""; o.Spec.Ports[1].Name = "" },
			want: []wantErr{required("spec.ports[0].name"), required("spec.ports[1].name")}},
		{name: "port names duplicate", mutate: func(o *tenant.LoadBalancer) { o.Spec.Ports[1].Name = "http" }, want: []wantErr{duplicate("spec.ports[1].name")}},
		{name: "port name invalid", mutate: func(o *tenant.LoadBalancer) { o.Spec.Ports[0].Name = "HTTP" }, want: []wantErr{invalid("spec.ports[0].name")}},
		{name: "port out of range", mutate: func(o *tenant.LoadBalancer) { o.Spec.Ports[0].Port = 65536 }, want: []wantErr{invalid("spec.ports[0].port")}},
		{name: "protocol not supported", mutate: func(o *tenant.LoadBalancer) { o.Spec.Ports[0].Protocol = "HTTP" }, want: []wantErr{notSupported("spec.ports[0].protocol")}},
		{name: "targetPort zero", mutate: func(o *tenant.LoadBalancer) { o.Spec.Ports[0].TargetPort = intstr.FromInt32(0) }, want: []wantErr{invalid("spec.ports[0].targetPort")}},
		{name: "targetPort name invalid", mutate: func(o *tenant.LoadBalancer) { o.Spec.Ports[1].TargetPort = intstr.FromString("https_port") }, want: []wantErr{invalid("spec.ports[1].targetPort")}},
		{name: "targetPort name empty", mutate: func(o *tenant.LoadBalancer) { o.Spec.Ports[1].TargetPort = intstr.FromString("") }, want: []wantErr{required("spec.ports[1].targetPort")}},
		{name: "port and protocol duplicate", mutate: func(o *tenant.LoadBalancer) { o.Spec.Ports[1].Port = 80 }, want: []wantErr{duplicate("spec.ports[1]")}},
		{name: "sourceRange not canonical", mutate: func(o *tenant.LoadBalancer) { o.Spec.SourceRanges = []string{"192.0.2.1/24"} }, want: []wantErr{invalid("spec.sourceRanges[0]")}},
		{name: "sourceRange IPv6", mutate: func(o *tenant.LoadBalancer) { o.Spec.SourceRanges = []string{"::/0"} }, want: []wantErr{invalid("spec.sourceRanges[0]")}},
		{name: "sourceRange duplicate", mutate: func(o *tenant.LoadBalancer) { o.Spec.SourceRanges = []string{"192.0.2.0/24", "192.0.2.0/24"} }, want: []wantErr{duplicate("spec.sourceRanges[1]")}},
	})
}

func TestValidateLoadBalancerUpdate(t *testing.T) {
	runUpdateCases(t, validLoadBalancer, ValidateLoadBalancerUpdate, []updateCase[tenant.LoadBalancer]{
		{name: "selector, ports and ranges change", new: func(o *tenant.LoadBalancer) {
			o.Spec.Selector = map[string]string{"app": "web2"}
			o.Spec.Ports = o.Spec.Ports[:1]
			o.Spec.SourceRanges = []string{"198.51.100.0/24"}
		}},
		{name: "address set for the first time", old: func(o *tenant.LoadBalancer) { o.Spec.Address = "" },
			new: func(o *tenant.LoadBalancer) { o.Spec.Address = "203.0.113.13" }},
		{name: "address changes", new: func(o *tenant.LoadBalancer) { o.Spec.Address = "203.0.113.13" }, want: []wantErr{invalid("spec.address")}},
		{name: "spec still validated", new: func(o *tenant.LoadBalancer) { o.Spec.Selector = nil }, want: []wantErr{required("spec.selector")}},
	})
	runUpdateCases(t, validLoadBalancer, ValidateLoadBalancerStatusUpdate, []updateCase[tenant.LoadBalancer]{
		{name: "status valid", new: func(o *tenant.LoadBalancer) {
			o.Status = tenant.LoadBalancerStatus{ObservedGeneration: 2, Address: "203.0.113.12",
				Conditions: []metav1.Condition{condition(tenant.ConditionReady, metav1.ConditionTrue, "AddressAssigned")}}
		}},
		{name: "status address invalid", new: func(o *tenant.LoadBalancer) { o.Status.Address = "203.0.113.12:80" }, want: []wantErr{invalid("status.address")}},
		{name: "status dnsName with the address", new: func(o *tenant.LoadBalancer) {
			o.Status.Address, o.Status.DNSName = "203.0.113.12", "web.dev.acme.tenants.example.net"
		}},
		{name: "status dnsName without an address", new: func(o *tenant.LoadBalancer) { o.Status.DNSName = "web.dev.acme.tenants.example.net" },
			want: []wantErr{invalid("status.dnsName")}},
		{name: "status dnsName too long", new: func(o *tenant.LoadBalancer) {
			o.Status.Address, o.Status.DNSName = "203.0.113.12", strings.Repeat("a.", 127)+"net"
		}, want: []wantErr{invalid("status.dnsName")}},
		{name: "status condition without time", new: func(o *tenant.LoadBalancer) {
			c := condition(tenant.ConditionReady, metav1.ConditionTrue, "AddressAssigned")
			c.LastTransitionTime = metav1.Time{}
			o.Status.Conditions = []metav1.Condition{c}
		}, want: []wantErr{required("status.conditions[0].lastTransitionTime")}},
	})
}

// ---- helpers ----

func TestParseIPv4CIDR(t *testing.T) {
	for _, tc := range []struct {
		in      string
		wantErr string // substring of the error; empty for success
	}{
		{in: "10.42.0.0/16"},
		{in: "0.0.0.0/0"},
		{in: "192.0.2.1/32"},
		{in: "10.42.0.1/16", wantErr: "must be the network address, e.g. 10.42.0.0/16"},
		{in: "10.42.0.0", wantErr: "must be a valid IPv4 CIDR"},
		{in: "10.42.0.0/33", wantErr: "must be a valid IPv4 CIDR"},
		{in: "10.042.0.0/16", wantErr: "must be a valid IPv4 CIDR"},
		{in: "10.42.0.0/016", wantErr: "must be"},
		{in: " 10.42.0.0/16", wantErr: "must be a valid IPv4 CIDR"},
		{in: "fd00::/8", wantErr: "IPv6 is not supported"},
		{in: "::ffff:10.0.0.0/104", wantErr: "IPv6 is not supported"},
		{in: "", wantErr: "must be a valid IPv4 CIDR"},
	} {
		p, err := ParseIPv4CIDR(tc.in)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("ParseIPv4CIDR(%q): unexpected error %v", tc.in, err)
		case tc.wantErr == "" && p.String() != tc.in:
			t.Errorf("ParseIPv4CIDR(%q) = %v", tc.in, p)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("ParseIPv4CIDR(%q): error %v, want one containing %q", tc.in, err, tc.wantErr)
		}
	}
}

func TestParseIPv4Range(t *testing.T) {
	for _, tc := range []struct {
		in          string
		first, last string
		ok          bool
	}{
		{in: "203.0.113.10-203.0.113.20", first: "203.0.113.10", last: "203.0.113.20", ok: true},
		{in: "203.0.113.10-203.0.113.10", first: "203.0.113.10", last: "203.0.113.10", ok: true},
		{in: "203.0.113.20-203.0.113.10"},
		{in: "203.0.113.10"},
		{in: "203.0.113.10-"},
		{in: "203.0.113.10 - 203.0.113.20"},
		{in: "2001:db8::1-2001:db8::2"},
	} {
		first, last, err := ParseIPv4Range(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParseIPv4Range(%q): error %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if tc.ok && (first.String() != tc.first || last.String() != tc.last) {
			t.Errorf("ParseIPv4Range(%q) = %v, %v", tc.in, first, last)
		}
	}
}

func TestPrefixesOverlapAndContain(t *testing.T) {
	p := netip.MustParsePrefix
	for _, tc := range []struct {
		a, b              string
		overlap, contains bool
	}{
		{"10.0.0.0/8", "10.42.0.0/16", true, true},
		{"10.42.0.0/16", "10.0.0.0/8", true, false},
		{"10.42.0.0/24", "10.42.1.0/24", false, false},
		{"10.42.0.0/24", "10.42.0.0/24", true, true},
		{"0.0.0.0/0", "192.0.2.0/24", true, true},
	} {
		if got := PrefixesOverlap(p(tc.a), p(tc.b)); got != tc.overlap {
			t.Errorf("PrefixesOverlap(%s, %s) = %v", tc.a, tc.b, got)
		}
		if got := PrefixContains(p(tc.a), p(tc.b)); got != tc.contains {
			t.Errorf("PrefixContains(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}

func TestValidateSubnetsWithinBlock(t *testing.T) {
	block := netip.MustParsePrefix("10.42.0.0/16")
	got := ValidateSubnetsWithinBlock([]string{"10.42.0.0/24", "10.43.0.0/24", "10.0.0.0/8", "not-a-cidr", "10.42.255.0/24"}, block, field.NewPath("spec", "subnets"))
	expectErrors(t, got, invalid("spec.subnets[1]"), invalid("spec.subnets[2]"))
	if len(got) > 0 && !strings.Contains(got[0].Detail, "10.42.0.0/16") {
		t.Errorf("detail %q does not name the block", got[0].Detail)
	}
}

func TestValidateTenantName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prefix bool
		ok     bool
	}{
		{"acme", false, true},
		{strings.Repeat("a", 30), false, true},
		{strings.Repeat("a", 31), false, false},
		{"acme-", false, false},
		{"acme-", true, true},
		{strings.Repeat("a", 25), true, true},
		{strings.Repeat("a", 26), true, false},
		{"ACME", false, false},
		{"ac.me", false, false},
		// Another tenant's host prefix, or starting with one.
		{"acme-3f2a1b", false, false},
		{"acme-3f2a1b-web", false, false},
		{"a-b-000000", false, false},
		{"cafe42", false, true}, // the first part is the tenant's own
		{"acme-3f2a1", false, true},
		{"acme-3f2a1b7", false, true},
		{"acme-3f2a1g", false, true},
		{"team-42-prod", false, true},
	} {
		errs := ValidateTenantName(tc.name, tc.prefix)
		if (len(errs) == 0) != tc.ok {
			t.Errorf("ValidateTenantName(%q, %v) = %v, want ok=%v", tc.name, tc.prefix, errs, tc.ok)
		}
	}
	// A name over 63 characters gets one length message, the tight one.
	errs := ValidateTenantName(strings.Repeat("a", 70), false)
	if len(errs) != 1 || !strings.Contains(errs[0], "30") {
		t.Errorf("ValidateTenantName(70 characters) = %v", errs)
	}
}

func TestIntervalCoveredBy(t *testing.T) {
	iv := func(a, b uint32) ipv4Interval { return ipv4Interval{a, b} }
	for _, tc := range []struct {
		in   ipv4Interval
		set  []ipv4Interval
		want bool
	}{
		{iv(5, 10), []ipv4Interval{iv(0, 20)}, true},
		{iv(5, 10), []ipv4Interval{iv(8, 20), iv(0, 7)}, true},
		{iv(5, 10), []ipv4Interval{iv(0, 6), iv(8, 20)}, false},
		{iv(5, 10), []ipv4Interval{iv(0, 9)}, false},
		{iv(5, 10), nil, false},
		{iv(0, 4294967295), []ipv4Interval{iv(0, 4294967295)}, true},
		{iv(4294967295, 4294967295), []ipv4Interval{iv(0, 10), iv(4294967290, 4294967295)}, true},
	} {
		if got := tc.in.coveredBy(tc.set); got != tc.want {
			t.Errorf("%v.coveredBy(%v) = %v, want %v", tc.in, tc.set, got, tc.want)
		}
	}
}

func TestVRFPeeringConflict(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(o *tenant.VRFPeering)
		want string
	}{
		{"same ASN, other neighbors", func(o *tenant.VRFPeering) {
			o.Spec.Neighbors = []tenant.BGPNeighbor{{Address: "192.0.2.9", ASN: 65001}}
		}, ""},
		{"another ASN", func(o *tenant.VRFPeering) {
			o.Spec.ASN = 64600
			o.Spec.Neighbors = []tenant.BGPNeighbor{{Address: "192.0.2.9", ASN: 65001}}
		}, "spec.asn"},
		{"a shared neighbor", func(o *tenant.VRFPeering) {
			o.Spec.Neighbors = []tenant.BGPNeighbor{{Address: "192.0.2.9", ASN: 65001}, {Address: "192.0.2.2", ASN: 65001}}
		}, "spec.neighbors[1].address"},
	} {
		p, o := validVRFPeering(), validVRFPeering()
		o.Name = "other"
		c.edit(p)
		path, msg := VRFPeeringConflict(p, o)
		got := ""
		if path != nil {
			got = path.String()
		}
		if got != c.want || (got != "" && !strings.Contains(msg, "VRFPeering other")) {
			t.Errorf("%s: %q %q, want %q naming the other peering", c.name, got, msg, c.want)
		}
	}
}
