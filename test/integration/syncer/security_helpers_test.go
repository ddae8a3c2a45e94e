package syncer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/stack"
)

// securityEnv is what the security tests attack from and what they attack:
// two tenants onboarded through the syncer, as a provider would, each with
// its host namespace "default" and the members RoleBinding (admin) in it.
type securityEnv struct {
	// attacker is a member of the attacking tenant; overGranted is another
	// member of it whom the test gives host RBAC a tenant never gets, to show
	// that the guard policies hold where RBAC is misconfigured.
	attacker, overGranted string
	// own is the attacker's host namespace, foreign the victim's.
	own, foreign string
	// tenant is the attacking tenant, victim the other one.
	tenant, victim *tenantv1alpha1.Tenant
}

// onboardSecurityEnv onboards the attacking tenant (members attacker and
// overGranted) and the victim tenant (member victimUser), waits for their
// default host namespaces and their default ServiceAccounts (without which
// admission refuses every pod), and grants overGranted the extra RBAC.
func onboardSecurityEnv(ctx context.Context, t *testing.T, attacker, overGranted, victimUser string) securityEnv {
	t.Helper()
	own := onboard(ctx, t, tenantSpec{name: uniqueName(t), users: []string{attacker, overGranted}, publicIPs: 1})
	victim := onboard(ctx, t, tenantSpec{name: uniqueName(t), users: []string{victimUser}, publicIPs: 2})
	env := securityEnv{
		attacker:    attacker,
		overGranted: overGranted,
		own:         waitNamespaceSynced(ctx, t, tenantClient(t, attacker), defaultNamespace).Status.HostNamespace,
		foreign:     waitNamespaceSynced(ctx, t, tenantClient(t, victimUser), defaultNamespace).Status.HostNamespace,
		tenant:      own,
		victim:      victim,
	}
	host, _ := hostClients(t)
	for _, ns := range []string{env.own, env.foreign} {
		eventually(ctx, t, syncTimeout, "default ServiceAccount of "+ns, func(ctx context.Context) (bool, string) {
			_, err := host.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
			return err == nil, fmt.Sprint(err)
		})
	}
	grantTooMuch(ctx, t, overGranted)
	return env
}

// tooMuchRBAC is host RBAC that no tenant member gets from the product: write
// access to the networking kinds (Gateway API's included) and to
// namespaces. overGranted holds it in the security tests so that what
// refuses it is the guard policies. (VM
// rights every member has: KubeVirt's aggregated roles add them to admin.)
const tooMuchRBAC = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %[1]s
rules:
- apiGroups: ["k8s.ovn.org", "metallb.io", "frrk8s.metallb.io", "k8s.cni.cncf.io", "gateway.networking.k8s.io", "gateway.networking.x-k8s.io"]
  resources: ["*"]
  verbs: ["*"]
- apiGroups: [""]
  resources: ["namespaces"]
  verbs: ["get", "patch", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: %[1]s
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[1]s}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: %[2]s}
`

func grantTooMuch(ctx context.Context, t *testing.T, user string) {
	t.Helper()
	name := "security-test-too-much-" + user
	file := writeText(t, fmt.Sprintf(tooMuchRBAC, name, user))
	kubectl(ctx, t, stack.AdminUser, "apply", "-f", file)
	t.Cleanup(func() {
		theStack().Kubectl(context.Background(), stack.AdminUser, "delete", "--ignore-not-found", "-f", file) //nolint:errcheck
	})
}

// writeText writes text into a temporary file for kubectl -f.
func writeText(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// refused creates obj as user with kubectl and fails the test unless the
// host refuses it with 403 Forbidden and a message containing every want.
func refused(ctx context.Context, t *testing.T, user string, obj interface{}, wants ...string) {
	t.Helper()
	refusedCommand(ctx, t, user, []string{"create", "-f", writeJSON(t, obj)}, wants...)
}

// refusedCommand runs kubectl args as user and fails the test unless the host
// refuses it with 403 Forbidden and a message containing every want.
func refusedCommand(ctx context.Context, t *testing.T, user string, args []string, wants ...string) {
	t.Helper()
	_, stderr, err := theStack().Kubectl(ctx, user, args...)
	if err == nil {
		t.Fatalf("%s: kubectl %s was accepted, want it refused", user, strings.Join(args, " "))
	}
	if !strings.Contains(stderr, "(Forbidden)") && !strings.Contains(stderr, " is forbidden: ") {
		t.Fatalf("%s: kubectl %s: want 403 Forbidden, got: %s", user, strings.Join(args, " "), stderr)
	}
	for _, w := range wants {
		if !strings.Contains(stderr, w) {
			t.Errorf("%s: kubectl %s: refusal %q does not say %q", user, strings.Join(args, " "), strings.TrimSpace(stderr), w)
		}
	}
}

// admitted creates obj as user with kubectl, fails the test when the host
// refuses it, and deletes it when the test ends.
func admitted(ctx context.Context, t *testing.T, user string, obj interface{}) {
	t.Helper()
	file := writeJSON(t, obj)
	kubectl(ctx, t, user, "create", "-f", file)
	t.Cleanup(func() {
		theStack().Kubectl(context.Background(), stack.AdminUser, "delete", "--ignore-not-found", "--wait=false", "--grace-period=0", "-f", file) //nolint:errcheck
	})
}

// podWith is restrictedPod(ns, name) changed by change: an attack that adds
// one thing to a pod the host admits, so the refusal is for that thing.
func podWith(ns, name string, change func(*corev1.Pod)) *corev1.Pod {
	p := restrictedPod(ns, name)
	change(p)
	return p
}

// service is a ClusterIP Service in ns, changed by change.
func service(ns, name string, change func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
		},
	}
	if change != nil {
		change(s)
	}
	return s
}

// object is an unstructured manifest of any kind, for kubectl.
func object(apiVersion, kind, ns, name string, fields map[string]interface{}) map[string]interface{} {
	meta := map[string]interface{}{"name": name}
	if ns != "" {
		meta["namespace"] = ns
	}
	obj := map[string]interface{}{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
	for k, v := range fields {
		obj[k] = v
	}
	return obj
}

// virtualMachineInstanceSpec is the spec of a KubeVirt VMI attached to the
// networks named (multus "<namespace>/<name>", or none).
func virtualMachineInstanceSpec(multusNetworks ...string) map[string]interface{} {
	spec := map[string]interface{}{
		"domain": map[string]interface{}{
			"devices":   map[string]interface{}{},
			"resources": map[string]interface{}{"requests": map[string]interface{}{"memory": "64Mi"}},
		},
	}
	var networks []interface{}
	for i, n := range multusNetworks {
		networks = append(networks, map[string]interface{}{"name": fmt.Sprintf("net%d", i), "multus": map[string]interface{}{"networkName": n}})
	}
	if networks != nil {
		spec["networks"] = networks
	}
	return spec
}

// virtualMachine is a stopped KubeVirt VM in ns whose template carries
// annotations and the multus networks named.
func virtualMachine(ns, name string, annotations map[string]string, multusNetworks ...string) map[string]interface{} {
	template := map[string]interface{}{"spec": virtualMachineInstanceSpec(multusNetworks...)}
	if annotations != nil {
		template["metadata"] = map[string]interface{}{"annotations": annotations}
	}
	return object("kubevirt.io/v1", "VirtualMachine", ns, name, map[string]interface{}{
		"spec": map[string]interface{}{"runStrategy": "Halted", "template": template},
	})
}
