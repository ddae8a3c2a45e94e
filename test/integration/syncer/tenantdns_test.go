package syncer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// Messages of the tenant DNS policies (artifacts/deploy/base/81-tenant-dns-policies.yaml)
// and of the namespace guard policy on tenant.io/* annotations.
const (
	msgTenantDNS           = "pods of a tenant of Hard isolation resolve names through the provider's tenant DNS server only"
	msgNamespaceAnnotation = "tenant.io/* annotations of a namespace (its owner, the tenant DNS server and search path of its pods, the PriorityClasses they may use) are set by tenant-apiserver only"
)

// tenantDNSBinding is the binding of the mutating tenant DNS policy.
const tenantDNSBinding = "tenant.io-tenant-dns"

// TestTenantDNS checks, through the whole stack, what makes the pods of a
// tenant of Hard isolation resolve names through the provider's tenant DNS
// server (the stack's tenant-apiserver runs with --tenant-dns-address
// stack.TenantDNSAddress): the syncer's annotations on its host namespaces,
// the mutating policy that sets every pod's DNS from them whatever the pod
// asked for (a pod of the tenant, a Deployment's pod), the validating
// policy that refuses a pod without it when the mutation is missing, the
// namespace guard that keeps the tenant from editing the annotations, and a
// Soft tenant's pods left as they are, as are the Hard tenant's once it is
// Soft again.
func TestTenantDNS(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	hard := onboard(ctx, t, tenantSpec{name: uniqueName(t), users: []string{dnsUser, dnsOverGrantedUser}, isolation: tenantv1alpha1.TenantIsolationHard})
	soft := onboard(ctx, t, tenantSpec{name: uniqueName(t), users: []string{softDNSUser}})
	if soft.Spec.Isolation != tenantv1alpha1.TenantIsolationSoft {
		t.Errorf("spec.isolation defaults to %q, want Soft", soft.Spec.Isolation)
	}
	host, _ := hostClients(t)
	own := waitNamespaceSynced(ctx, t, tenantClient(t, dnsUser), defaultNamespace).Status.HostNamespace
	softNS := waitNamespaceSynced(ctx, t, tenantClient(t, softDNSUser), defaultNamespace).Status.HostNamespace
	for _, ns := range []string{own, softNS} {
		eventually(ctx, t, syncTimeout, "default ServiceAccount of "+ns, func(ctx context.Context) (bool, string) {
			_, err := host.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
			return err == nil, fmt.Sprint(err)
		})
	}
	grantTooMuch(ctx, t, dnsOverGrantedUser)

	// The tenant names its namespace "default": the search path is in its
	// names, not the host's.
	searches := []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local"}
	waitDNSAnnotations := func(ns string, want bool) {
		t.Helper()
		what := "the tenant DNS annotations on " + ns
		if !want {
			what = "no tenant DNS annotation on " + ns
		}
		eventually(ctx, t, syncTimeout, what, func(ctx context.Context) (bool, string) {
			n, err := host.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			nameserver, hasNameserver := n.Annotations[hostnames.DNSNameserverAnnotation]
			search, hasSearches := n.Annotations[hostnames.DNSSearchesAnnotation]
			if !want {
				return !hasNameserver && !hasSearches, fmt.Sprint(n.Annotations)
			}
			return nameserver == stack.TenantDNSAddress && search == strings.Join(searches, " "), fmt.Sprint(n.Annotations)
		})
	}
	// resolvesThroughTenantDNS fails the test unless pod resolves through
	// the tenant DNS server alone, with the tenant's search path.
	resolvesThroughTenantDNS := func(t *testing.T, pod *corev1.Pod) {
		t.Helper()
		c := pod.Spec.DNSConfig
		if pod.Spec.DNSPolicy != corev1.DNSNone || c == nil || !slices.Equal(c.Nameservers, []string{stack.TenantDNSAddress}) ||
			!slices.Equal(c.Searches, searches) || len(c.Options) != 1 || c.Options[0].Name != "ndots" ||
			c.Options[0].Value == nil || *c.Options[0].Value != "5" {
			t.Errorf("pod %s/%s: dnsPolicy %s, dnsConfig %s; want None, nameservers [%s], searches %v, options ndots:5",
				pod.Namespace, pod.Name, pod.Spec.DNSPolicy, describeDNSConfig(c), stack.TenantDNSAddress, searches)
		}
	}
	getPod := func(t *testing.T, ns, name string) *corev1.Pod {
		t.Helper()
		pod, err := host.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return pod
	}
	ownDNS := func(p *corev1.Pod) {
		ndots := "1"
		p.Spec.DNSPolicy = corev1.DNSNone
		p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"8.8.8.8"}, Searches: []string{"example.org"},
			Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: &ndots}}}
	}
	withPolicy := func(policy corev1.DNSPolicy) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.DNSPolicy = policy }
	}

	// mutatedOnCreate waits until the host's admission, which reads
	// namespaces from its own informer, mutates (or not) a pod created in
	// ns, by dry runs.
	mutatedOnCreate := func(ns, user string, want bool) {
		t.Helper()
		file := writeJSON(t, podWith(ns, "probe", withPolicy(corev1.DNSClusterFirst)))
		eventually(ctx, t, syncTimeout, fmt.Sprintf("pods created in %s mutated: %v", ns, want), func(ctx context.Context) (bool, string) {
			out, stderr, err := theStack().Kubectl(ctx, user, "create", "--dry-run=server", "-o", "json", "-f", file)
			if err != nil {
				return false, stderr
			}
			var pod corev1.Pod
			if err := json.Unmarshal([]byte(out), &pod); err != nil {
				return false, err.Error()
			}
			return (pod.Spec.DNSPolicy == corev1.DNSNone) == want, string(pod.Spec.DNSPolicy)
		})
	}

	waitDNSAnnotations(own, true)
	waitDNSAnnotations(softNS, false)
	mutatedOnCreate(own, dnsUser, true)

	t.Run("PodsOfTheHardTenant", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			change func(*corev1.Pod)
		}{
			{"cluster-first", withPolicy(corev1.DNSClusterFirst)},
			{"default", withPolicy(corev1.DNSDefault)},
			{"own-nameserver", ownDNS},
			// Its own nameserver beside the tenant's: the list is replaced whole.
			{"extra-nameserver", func(p *corev1.Pod) {
				ownDNS(p)
				p.Spec.DNSConfig.Nameservers = []string{stack.TenantDNSAddress, "8.8.8.8"}
			}},
		} {
			admitted(ctx, t, dnsUser, podWith(own, "dns-"+c.name, c.change))
			resolvesThroughTenantDNS(t, getPod(t, own, "dns-"+c.name))
		}
	})

	t.Run("PodsOfADeployment", func(t *testing.T) {
		// kube-controller-manager makes the pods from the tenant's template,
		// which names its own nameserver; they are mutated like the tenant's own.
		tmpl := podWith(own, "x", ownDNS)
		one := int32(1)
		admitted(ctx, t, dnsUser, &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "own-dns", Namespace: own},
			Spec: appsv1.DeploymentSpec{
				Replicas: &one,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "own-dns"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "own-dns"}}, Spec: tmpl.Spec},
			},
		})
		var pod *corev1.Pod
		eventually(ctx, t, syncTimeout, "a pod of Deployment own-dns", func(ctx context.Context) (bool, string) {
			pods, err := host.CoreV1().Pods(own).List(ctx, metav1.ListOptions{LabelSelector: "app=own-dns"})
			if err != nil || len(pods.Items) == 0 {
				return false, fmt.Sprintf("no pod yet (%v)", err)
			}
			pod = &pods.Items[0]
			return true, ""
		})
		resolvesThroughTenantDNS(t, pod)
	})

	t.Run("RefusedWithoutTheMutation", func(t *testing.T) {
		// The mutating policy's binding gone (deleted by mistake, or the
		// host's MutatingAdmissionPolicy admission off), the validating
		// policy refuses what the mutation would have changed.
		binding, err := host.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Get(ctx, tenantDNSBinding, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := host.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Delete(ctx, tenantDNSBinding, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		restore := func() {
			restored := binding.DeepCopy()
			restored.ObjectMeta = metav1.ObjectMeta{Name: binding.Name, Labels: binding.Labels, Annotations: binding.Annotations}
			if _, err := host.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Create(context.Background(), restored, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Errorf("restoring MutatingAdmissionPolicyBinding %s: %v", tenantDNSBinding, err)
			}
		}
		t.Cleanup(restore)
		for _, c := range []struct {
			name   string
			change func(*corev1.Pod)
		}{
			{"cluster-first", withPolicy(corev1.DNSClusterFirst)},
			{"own-nameserver", ownDNS},
		} {
			file := writeJSON(t, podWith(own, "unmutated-"+c.name, c.change))
			// Dry runs, until the host's admission no longer sees the binding.
			eventually(ctx, t, syncTimeout, "pod "+c.name+" refused without the mutation", func(ctx context.Context) (bool, string) {
				_, stderr, err := theStack().Kubectl(ctx, dnsUser, "create", "--dry-run=server", "-f", file)
				return err != nil && strings.Contains(stderr, msgTenantDNS), fmt.Sprint(err, " ", stderr)
			})
			refused(ctx, t, dnsUser, podWith(own, "unmutated-"+c.name, c.change), msgTenantDNS, stack.TenantDNSAddress, strings.Join(searches, " "))
		}
		// A pod that says what the mutation would have said is admitted.
		admitted(ctx, t, dnsUser, podWith(own, "tenant-dns", func(p *corev1.Pod) {
			ndots := "5"
			p.Spec.DNSPolicy = corev1.DNSNone
			p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{stack.TenantDNSAddress}, Searches: searches,
				Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: &ndots}}}
		}))

		restore()
		mutatedOnCreate(own, dnsUser, true)
	})

	t.Run("NamespaceAnnotations", func(t *testing.T) {
		for _, args := range [][]string{
			{"annotate", "namespace", own, "--overwrite", hostnames.DNSNameserverAnnotation + "=8.8.8.8"},
			{"annotate", "namespace", own, hostnames.DNSNameserverAnnotation + "-"},
			{"annotate", "namespace", own, "--overwrite", hostnames.DNSSearchesAnnotation + "=example.org"},
			{"annotate", "namespace", own, hostnames.DNSSearchesAnnotation + "-"},
			{"annotate", "namespace", own, "--overwrite", hostnames.OwnerUIDAnnotation + "=" + string(randomUID(t))},
		} {
			refusedCommand(ctx, t, dnsUser, args, msgRBAC)
			refusedCommand(ctx, t, dnsOverGrantedUser, args, msgNamespaceAnnotation)
		}
		// A merge patch and a JSON patch say the same.
		refusedCommand(ctx, t, dnsOverGrantedUser, []string{"patch", "namespace", own, "--type=merge", "-p",
			`{"metadata":{"annotations":{"` + hostnames.DNSNameserverAnnotation + `":null,"` + hostnames.DNSSearchesAnnotation + `":null}}}`}, msgNamespaceAnnotation)
		refusedCommand(ctx, t, dnsOverGrantedUser, []string{"patch", "namespace", own, "--type=json", "-p",
			`[{"op":"replace","path":"/metadata/annotations/tenant.io~1dns-nameserver","value":"8.8.8.8"}]`}, msgNamespaceAnnotation)
		// Nor can it make a Soft tenant's namespace resolve through a server of its choosing.
		refusedCommand(ctx, t, dnsOverGrantedUser, []string{"annotate", "namespace", softNS, hostnames.DNSNameserverAnnotation + "=8.8.8.8"}, msgNamespaceAnnotation)
		// Its own annotations are not the policy's business.
		kubectl(ctx, t, dnsOverGrantedUser, "annotate", "namespace", own, "--overwrite", "team.example.org/owner=web")
		waitDNSAnnotations(own, true)
	})

	t.Run("PodsOfTheSoftTenant", func(t *testing.T) {
		admitted(ctx, t, softDNSUser, podWith(softNS, "cluster-first", withPolicy(corev1.DNSClusterFirst)))
		if pod := getPod(t, softNS, "cluster-first"); pod.Spec.DNSPolicy != corev1.DNSClusterFirst || pod.Spec.DNSConfig != nil {
			t.Errorf("a Soft tenant's pod: dnsPolicy %s, dnsConfig %s; want ClusterFirst as it asked", pod.Spec.DNSPolicy, describeDNSConfig(pod.Spec.DNSConfig))
		}
		admitted(ctx, t, softDNSUser, podWith(softNS, "own-nameserver", ownDNS))
		if pod := getPod(t, softNS, "own-nameserver"); pod.Spec.DNSConfig == nil || !slices.Equal(pod.Spec.DNSConfig.Nameservers, []string{"8.8.8.8"}) {
			t.Errorf("a Soft tenant's pod: dnsConfig %s; want its own nameserver 8.8.8.8", describeDNSConfig(pod.Spec.DNSConfig))
		}
	})

	t.Run("HardThenSoft", func(t *testing.T) {
		admin := tenantClient(t, stack.AdminUser)
		if _, err := admin.TenantV1alpha1().Tenants().Patch(ctx, hard.Name, types.MergePatchType, []byte(`{"spec":{"isolation":"Soft"}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		waitDNSAnnotations(own, false)
		mutatedOnCreate(own, dnsUser, false)
		admitted(ctx, t, dnsUser, podWith(own, "soft-again", withPolicy(corev1.DNSClusterFirst)))
		if pod := getPod(t, own, "soft-again"); pod.Spec.DNSPolicy != corev1.DNSClusterFirst || pod.Spec.DNSConfig != nil {
			t.Errorf("a pod after the tenant became Soft: dnsPolicy %s, dnsConfig %s; want ClusterFirst", pod.Spec.DNSPolicy, describeDNSConfig(pod.Spec.DNSConfig))
		}
		// And Hard again.
		if _, err := admin.TenantV1alpha1().Tenants().Patch(ctx, hard.Name, types.MergePatchType, []byte(`{"spec":{"isolation":"Hard"}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		waitDNSAnnotations(own, true)
		mutatedOnCreate(own, dnsUser, true)
		out := kubectl(ctx, t, stack.AdminUser, "get", "tenant", hard.Name, "-o", "wide")
		if !strings.Contains(out, "ISOLATION") || !strings.Contains(out, "Hard") {
			t.Errorf("kubectl get tenant -o wide shows no ISOLATION Hard:\n%s", out)
		}
	})
}

// describeDNSConfig is c for a test's message.
func describeDNSConfig(c *corev1.PodDNSConfig) string {
	if c == nil {
		return "none"
	}
	var options []string
	for _, o := range c.Options {
		v := ""
		if o.Value != nil {
			v = ":" + *o.Value
		}
		options = append(options, o.Name+v)
	}
	return fmt.Sprintf("{nameservers %v, searches %v, options %v}", c.Nameservers, c.Searches, options)
}
