package integration

import (
	"strings"
	"testing"

	"tenant.io/tenant-apiserver/test/integration/framework"
)

// guardSetup makes a host namespace of tenant acme in which alice has the
// admin role (as the syncer will give tenant members), and gives alice host RBAC to write the networking kinds, so
// that what stops her below is the guard policies, not RBAC.
const guardSetup = `
apiVersion: v1
kind: Namespace
metadata:
  name: acme-guard
  labels:
    tenant.io/tenant: acme
    k8s.ovn.org/primary-user-defined-network: ""
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: admin
  namespace: acme-guard
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
- {kind: ServiceAccount, name: tenant-apiserver, namespace: tenant-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: guard-test-too-much
rules:
- apiGroups: ["k8s.ovn.org", "metallb.io", "frrk8s.metallb.io"]
  resources: ["*"]
  verbs: ["*"]
- apiGroups: [""]
  resources: ["namespaces"]
  verbs: ["get", "patch", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: guard-test-too-much
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: guard-test-too-much}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
`

// TestGuardPolicies checks the ValidatingAdmissionPolicies of
// artifacts/deploy on the real host: a tenant member with the admin role in
// its host namespace (and, here, more RBAC than it should ever get) cannot make
// LoadBalancer Services, set metallb.io annotations, write OVN-Kubernetes,
// MetalLB or FRR objects, or change tenant.io/* and k8s.ovn.org/* namespace
// labels; tenant-apiserver's service account can.
func TestGuardPolicies(t *testing.T) {
	ctx := testContext(t)
	s := framework.Current()
	setup := writeFile(t, guardSetup)
	if _, _, err := s.Kubectl(ctx, framework.AdminUser, "apply", "-f", setup); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Kubectl(ctx, framework.AdminUser, "delete", "--ignore-not-found", "--wait=false", "-f", setup) //nolint:errcheck
	})

	refused := []struct{ name, manifest, want string }{
		{"LoadBalancer Service", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"lb","namespace":"acme-guard"},"spec":{"type":"LoadBalancer","ports":[{"port":80}]}}`, "LoadBalancer"},
		{"metallb annotation", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"annotated","namespace":"acme-guard","annotations":{"metallb.io/address-pool":"public"}},"spec":{"ports":[{"port":80}]}}`, "metallb.io"},
		{"EgressIP", `{"apiVersion":"k8s.ovn.org/v1","kind":"EgressIP","metadata":{"name":"guard-egress"},"spec":{"egressIPs":["192.0.2.50"],"namespaceSelector":{"matchLabels":{"tenant.io/tenant":"acme"}}}}`, "egressips.k8s.ovn.org are managed by the provider"},
		{"ClusterUserDefinedNetwork", `{"apiVersion":"k8s.ovn.org/v1","kind":"ClusterUserDefinedNetwork","metadata":{"name":"guard-cudn"},"spec":{"namespaceSelector":{"matchLabels":{"tenant.io/tenant":"acme"}},"network":{"topology":"Layer2","layer2":{"role":"Primary","subnets":["10.100.0.0/16"]}}}}`, "clusteruserdefinednetworks.k8s.ovn.org are managed by the provider"},
		{"IPAddressPool", `{"apiVersion":"metallb.io/v1beta1","kind":"IPAddressPool","metadata":{"name":"guard-pool","namespace":"metallb-system"},"spec":{"addresses":["198.51.100.0/28"]}}`, "ipaddresspools.metallb.io are managed by the provider"},
	}
	for _, c := range refused {
		_, stderr, err := s.Kubectl(ctx, "alice", "create", "-f", writeFile(t, c.manifest))
		if err == nil || !strings.Contains(stderr, "Forbidden") || !strings.Contains(stderr, c.want) {
			t.Errorf("alice's %s: err=%v %s", c.name, err, stderr)
		}
	}

	// A plain Service is fine.
	plain := `{"apiVersion":"v1","kind":"Service","metadata":{"name":"plain","namespace":"acme-guard"},"spec":{"ports":[{"port":80}]}}`
	if _, _, err := s.Kubectl(ctx, "alice", "create", "-f", writeFile(t, plain)); err != nil {
		t.Errorf("alice's ClusterIP Service: %v", err)
	}

	// Namespace labels: tenant.io/* and k8s.ovn.org/* are fixed, others free.
	for _, label := range []string{"tenant.io/tenant=globex", "tenant.io/tenant-", "k8s.ovn.org/primary-user-defined-network-", "tenant.io/extra=1"} {
		_, stderr, err := s.Kubectl(ctx, "alice", "label", "namespace", "acme-guard", "--overwrite", label)
		if err == nil || !strings.Contains(stderr, "set by tenant-apiserver only") {
			t.Errorf("alice labels the namespace %s: err=%v %s", label, err, stderr)
		}
	}
	if _, _, err := s.Kubectl(ctx, "alice", "label", "namespace", "acme-guard", "team=web"); err != nil {
		t.Errorf("alice's own namespace label: %v", err)
	}

	// tenant-apiserver's service account makes what tenants may not.
	sa := framework.TenantAPIServerUser
	if _, _, err := s.Kubectl(ctx, sa, "create", "-f", writeFile(t, refused[0].manifest)); err != nil {
		t.Errorf("tenant-apiserver's LoadBalancer Service: %v", err)
	}
}

// writeFile writes text into a temporary file for kubectl -f.
func writeFile(t *testing.T, text string) string {
	t.Helper()
	return writeManifestBytes(t, []byte(text))
}
