package syncer

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestMultiTenancyBenchmark performs the behavioural checks of the
// Kubernetes multi-tenancy benchmark (kubernetes-sigs/multi-tenancy,
// benchmarks/kubectl-mtb) as a tenant member in its host namespace, one
// subtest per check, named after it (its "configure namespace quotas"
// check is TestComputeQuota). The last three are the benchmark's checks of
// noisy neighbours: object counts, priority classes and cross-namespace
// scheduling terms (neighbours_test.go).
func TestMultiTenancyBenchmark(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	env := onboardSecurityEnv(ctx, t, mtbUser, mtbOverGrantedUser, mtbVictimUser)
	user, own, foreign := env.attacker, env.own, env.foreign

	t.Run("BlockAccessToClusterResources", func(t *testing.T) {
		for _, resource := range []string{"nodes", "namespaces", "persistentvolumes", "clusterroles", "clusterrolebindings",
			"customresourcedefinitions", "validatingadmissionpolicies", "apiservices", "priorityclasses"} {
			refusedCommand(ctx, t, user, []string{"get", resource}, msgRBAC)
		}
		refusedCommand(ctx, t, user, []string{"create", "namespace", "mine"}, msgRBAC)
		refusedCommand(ctx, t, user, []string{"delete", "validatingadmissionpolicybinding", "tenant.io-guard-workloads"}, msgRBAC)
	})
	t.Run("BlockMultitenantResources", func(t *testing.T) {
		for _, resource := range []string{"pods", "services", "secrets", "configmaps", "rolebindings", "serviceaccounts"} {
			refusedCommand(ctx, t, user, []string{"-n", foreign, "get", resource}, msgRBAC)
		}
		refusedCommand(ctx, t, user, []string{"-n", foreign, "create", "configmap", "planted"}, msgRBAC)
		refused(ctx, t, user, restrictedPod(foreign, "planted"), msgRBAC)
	})

	// The Pod Security Standard "restricted", enforced on every host
	// namespace by the labels the syncer sets. Each pod is one the host
	// admits, plus the one thing the check is about.
	yes := true
	psa := `violates PodSecurity "restricted:latest"`
	t.Run("BlockPrivilegedContainers", func(t *testing.T) {
		refused(ctx, t, user, podWith(own, "privileged", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext.Privileged = &yes
			p.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
		}), psa, "privileged")
	})
	t.Run("BlockPrivilegeEscalation", func(t *testing.T) {
		refused(ctx, t, user, podWith(own, "escalation", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = &yes
		}), psa, "allowPrivilegeEscalation != false")
	})
	t.Run("BlockHostIPC", func(t *testing.T) {
		refused(ctx, t, user, podWith(own, "hostipc", func(p *corev1.Pod) { p.Spec.HostIPC = true }), psa, "hostIPC=true")
	})
	t.Run("BlockHostPID", func(t *testing.T) {
		refused(ctx, t, user, podWith(own, "hostpid", func(p *corev1.Pod) { p.Spec.HostPID = true }), psa, "hostPID=true")
	})
	t.Run("BlockHostNetworking", func(t *testing.T) {
		refused(ctx, t, user, podWith(own, "hostnet", func(p *corev1.Pod) { p.Spec.HostNetwork = true }), psa, "hostNetwork=true")
	})
	t.Run("BlockHostPorts", func(t *testing.T) {
		refused(ctx, t, user, podWith(own, "hostport", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 8080}}
		}), psa, "hostPort")
	})
	t.Run("BlockHostPath", func(t *testing.T) {
		refused(ctx, t, user, podWith(own, "hostpath", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "root", MountPath: "/host"}}
		}), psa, `restricted volume type "hostPath"`)
	})
	t.Run("BlockAddCapabilities", func(t *testing.T) {
		for _, c := range []corev1.Capability{"NET_ADMIN", "SYS_ADMIN", "NET_RAW"} {
			refused(ctx, t, user, podWith(own, "caps", func(p *corev1.Pod) {
				p.Spec.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{c}
			}), psa, "unrestricted capabilities", string(c))
		}
	})
	t.Run("RequireRunAsNonRoot", func(t *testing.T) {
		refused(ctx, t, user, podWith(own, "maybe-root", func(p *corev1.Pod) { p.Spec.SecurityContext.RunAsNonRoot = nil }), psa, "runAsNonRoot != true")
		refused(ctx, t, user, podWith(own, "root", func(p *corev1.Pod) {
			zero := int64(0)
			p.Spec.SecurityContext.RunAsUser = &zero
		}), psa, "runAsUser=0")
	})
	t.Run("BlockNodePortServices", func(t *testing.T) {
		refused(ctx, t, user, service(own, "nodeport", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }), msgNodePort)
	})

	t.Run("ConfigureNamespaceObjectLimits", func(t *testing.T) { configureNamespaceObjectLimits(ctx, t, env) })
	t.Run("BlockPriorityClasses", func(t *testing.T) { blockPriorityClasses(ctx, t, env) })
	t.Run("BlockCrossNamespaceAffinity", func(t *testing.T) { blockCrossNamespaceAffinity(ctx, t, env) })
	t.Run("VirtualMachineTemplates", func(t *testing.T) { virtualMachineTemplates(ctx, t, env) })

	// What tenants must be able to do for themselves.
	t.Run("CreateRoleBindings", func(t *testing.T) {
		admitted(ctx, t, user, &rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: metav1.ObjectMeta{Name: "config-reader", Namespace: own},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
		})
		binding := func(ns, name string, role rbacv1.RoleRef) *rbacv1.RoleBinding {
			return &rbacv1.RoleBinding{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				RoleRef:    role,
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "auditor@example.com"}},
			}
		}
		admitted(ctx, t, user, binding(own, "auditor-config", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "config-reader"}))
		admitted(ctx, t, user, binding(own, "auditor-view", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}))
		// Nobody grants more than they hold, nor anything in another tenant's namespace.
		refused(ctx, t, user, binding(own, "auditor-root", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}), "is attempting to grant RBAC permissions not currently held")
		refused(ctx, t, user, binding(foreign, "auditor-there", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}), msgRBAC)
	})
	t.Run("CreateNetworkPolicies", func(t *testing.T) {
		policy := func(ns string) *networkingv1.NetworkPolicy {
			return &networkingv1.NetworkPolicy{
				TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
				ObjectMeta: metav1.ObjectMeta{Name: "deny-ingress", Namespace: ns},
				Spec: networkingv1.NetworkPolicySpec{
					PodSelector: metav1.LabelSelector{},
					PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
				},
			}
		}
		admitted(ctx, t, user, policy(own))
		refused(ctx, t, user, policy(foreign), msgRBAC)
	})
}
