package namespace

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
)

func TestWantNamespaceLabelsPodSecurity(t *testing.T) {
	ns := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev", UID: "ns-uid"}, Spec: tenant.NamespaceSpec{Network: "default"}}
	for _, c := range []struct {
		name  string
		level tenant.PodSecurityLevel
		want  string
	}{
		{"unset (stored before the field existed)", "", "restricted"},
		{"restricted", tenant.PodSecurityLevelRestricted, "restricted"},
		{"baseline", tenant.PodSecurityLevelBaseline, "baseline"},
		// Validation refuses these; the syncer never lowers a namespace for them either.
		{"privileged", tenant.PodSecurityLevelPrivileged, "restricted"},
		{"unknown", "Baseline", "restricted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"}, Spec: tenant.TenantSpec{PodSecurity: tenant.TenantPodSecurity{Level: c.level}}}
			marks := hostnames.Marks{Tenant: tn.Name, TenantUID: tn.UID, KindLabel: hostnames.NamespaceLabel, Name: ns.Name, OwnerUID: ns.UID}
			l := wantNamespaceLabels(marks, tn, ns)
			for _, k := range []string{hostnames.PodSecurityEnforceLabel, hostnames.PodSecurityAuditLabel, hostnames.PodSecurityWarnLabel} {
				if l[k] != c.want {
					t.Errorf("%s=%q, want %q", k, l[k], c.want)
				}
			}
			if l[hostnames.OpenShiftPodSecurityLabelSync] != "false" {
				t.Errorf("%s=%q, want \"false\"", hostnames.OpenShiftPodSecurityLabelSync, l[hostnames.OpenShiftPodSecurityLabelSync])
			}
			if l[hostnames.TenantLabel] != "acme" || l[hostnames.NamespaceLabel] != "dev" || l[hostnames.NetworkLabel] != "default" {
				t.Errorf("tenant marks missing: %v", l)
			}
		})
	}
}
