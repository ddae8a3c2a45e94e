package syncer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
)

// The checks of noisy and hostile neighbours, as subtests of
// TestMultiTenancyBenchmark: a tenant member that makes objects without
// bound, outranks other tenants' pods, or keeps their pods off nodes by
// scheduling terms on their namespaces.

const (
	msgClassNotGranted = "is not granted to the tenant"
	msgForeignTerm     = "pod affinity and anti-affinity terms may name the tenant's own namespaces only, not namespace "
	msgForeignSelector = "a namespaceSelector of a pod affinity or anti-affinity term selects other tenants' namespaces"
)

// configureNamespaceObjectLimits gives the attacking tenant object counts
// and fills them: the host refuses the next object with its own quota
// message, and the Tenant shows the use.
func configureNamespaceObjectLimits(ctx context.Context, t *testing.T, env securityEnv) {
	name := env.tenant.Name
	kubectl(ctx, t, stack.AdminUser, "patch", "tenants.tenant.io", name, "--type=merge", "-p",
		`{"spec":{"quota":{"objects":{"services":"2","secrets":"1","count/deployments.apps":"0"}}}}`)
	t.Cleanup(func() {
		theStack().Kubectl(context.Background(), stack.AdminUser, "patch", "tenants.tenant.io", name, "--type=json", //nolint:errcheck
			"-p", `[{"op":"remove","path":"/spec/quota/objects"}]`)
	})
	host, _ := hostClients(t)
	eventually(ctx, t, syncTimeout, "the object counts on "+env.own+"'s ResourceQuota, counted by the host", func(ctx context.Context) (bool, string) {
		rq, err := host.CoreV1().ResourceQuotas(env.own).Get(ctx, hostnames.ComputeQuota, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceServices, corev1.ResourceSecrets, "count/deployments.apps"} {
			if _, ok := rq.Status.Used[r]; !ok {
				return false, fmt.Sprintf("hard %v, used %v", rq.Spec.Hard, rq.Status.Used)
			}
		}
		return rq.Spec.Hard.Name(corev1.ResourceServices, resource.DecimalSI).Value() == 2, fmt.Sprintf("hard %v", rq.Spec.Hard)
	})

	admitted(ctx, t, env.attacker, service(env.own, "first", nil))
	admitted(ctx, t, env.attacker, service(env.own, "second", nil))
	refused(ctx, t, env.attacker, service(env.own, "third", nil), "exceeded quota: "+hostnames.ComputeQuota, "limited: services=2")
	secret := func(n string) *corev1.Secret {
		return &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: env.own}, StringData: map[string]string{"k": "v"}}
	}
	admitted(ctx, t, env.attacker, secret("first"))
	refused(ctx, t, env.attacker, secret("second"), "exceeded quota: "+hostnames.ComputeQuota, "limited: secrets=1")
	refused(ctx, t, env.attacker, deployment(env.own, "none-allowed", nil), "exceeded quota: "+hostnames.ComputeQuota, "limited: count/deployments.apps=0")

	eventually(ctx, t, syncTimeout, "the Tenant's status.usage.objects", func(ctx context.Context) (bool, string) {
		out, _, err := theStack().Kubectl(ctx, stack.AdminUser, "get", "tenants.tenant.io", name, "-o", "jsonpath={.status.usage.objects}")
		return err == nil && strings.Contains(out, `"services":"2"`) && strings.Contains(out, `"secrets":"1"`), out
	})
	wide := kubectl(ctx, t, stack.AdminUser, "get", "tenants.tenant.io", name, "-o", "wide")
	for _, want := range []string{"SERVICES", "SECRETS", "2/2", "1/1"} {
		if !strings.Contains(wide, want) {
			t.Errorf("kubectl get tenants -o wide does not show %q:\n%s", want, wide)
		}
	}
	// The tenant cannot raise its own counts, on the host or in the API.
	refusedCommand(ctx, t, env.attacker, []string{"-n", env.own, "delete", "resourcequota", hostnames.ComputeQuota}, msgRBAC)
	refusedCommand(ctx, t, env.attacker, []string{"patch", "tenants.tenant.io", name, "--type=merge", "-p",
		`{"spec":{"quota":{"objects":{"services":"100"}}}}`})
}

// blockPriorityClasses grants the attacking tenant one PriorityClass and
// tries the others, on pods and on every kind pods or VMs are made from.
func blockPriorityClasses(ctx context.Context, t *testing.T, env securityEnv) {
	granted, other := env.tenant.Name+"-gold", env.tenant.Name+"-other"
	for i, class := range []string{granted, other} {
		kubectlCreate(ctx, t, stack.AdminUser, &schedulingv1.PriorityClass{
			TypeMeta:   metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
			ObjectMeta: metav1.ObjectMeta{Name: class}, Value: int32(1000 + i),
		})
		t.Cleanup(func() {
			theStack().Kubectl(context.Background(), stack.AdminUser, "delete", "--ignore-not-found", "priorityclass", class) //nolint:errcheck
		})
	}
	// Nothing granted yet: even the class granted below is refused.
	refused(ctx, t, env.attacker, podWith(env.own, "early-gold", func(p *corev1.Pod) { p.Spec.PriorityClassName = granted }),
		"priorityClassName "+granted+" "+msgClassNotGranted, "may use no PriorityClass but the cluster default")

	kubectl(ctx, t, stack.AdminUser, "patch", "tenants.tenant.io", env.tenant.Name, "--type=merge", "-p",
		`{"spec":{"priorityClasses":["`+granted+`"]}}`)
	host, _ := hostClients(t)
	eventually(ctx, t, syncTimeout, "the grant on host namespace "+env.own, func(ctx context.Context) (bool, string) {
		ns, err := host.CoreV1().Namespaces().Get(ctx, env.own, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		got := ns.Annotations[hostnames.PriorityClassesAnnotation]
		return slices.Contains(strings.Split(got, ","), granted), got
	})
	// The provider's other tenants got nothing.
	if ns, err := host.CoreV1().Namespaces().Get(ctx, env.foreign, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if got := ns.Annotations[hostnames.PriorityClassesAnnotation]; strings.Contains(got, granted) {
		t.Errorf("the victim's host namespace allows %q: %s", granted, got)
	}

	withClass := func(class string) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) { s.PriorityClassName = class }
	}
	for _, class := range []string{"system-node-critical", "system-cluster-critical", other} {
		want := []string{"priorityClassName " + class + " " + msgClassNotGranted, "may use " + granted}
		refused(ctx, t, env.attacker, podWith(env.own, "critical", func(p *corev1.Pod) { withClass(class)(&p.Spec) }), want...)
		refused(ctx, t, env.attacker, deployment(env.own, "critical", withClass(class)), want...)
		refused(ctx, t, env.attacker, cronJob(env.own, "critical", withClass(class)), want...)
		for _, vm := range virtualMachineKinds(env.own, "critical", map[string]interface{}{"priorityClassName": class}) {
			refused(ctx, t, env.attacker, vm, want...)
		}
	}
	admitted(ctx, t, env.attacker, podWith(env.own, "gold", func(p *corev1.Pod) { withClass(granted)(&p.Spec) }))
	admitted(ctx, t, env.attacker, deployment(env.own, "gold", withClass(granted)))
	for _, vm := range virtualMachineKinds(env.own, "gold", map[string]interface{}{"priorityClassName": granted}) {
		admitted(ctx, t, env.attacker, vm)
	}
	admitted(ctx, t, env.attacker, podWith(env.own, "no-class", func(*corev1.Pod) {}))
	// Nor can a member given namespace writes grant itself more.
	refusedCommand(ctx, t, env.overGranted, []string{"annotate", "--overwrite", "namespace", env.own,
		hostnames.PriorityClassesAnnotation + "=" + granted + ",system-node-critical"}, "is set by tenant-apiserver only")
}

// blockCrossNamespaceAffinity tries pod affinity and anti-affinity terms
// that reach the victim's namespaces, and admits those within the
// attacker's own.
func blockCrossNamespaceAffinity(ctx context.Context, t *testing.T, env securityEnv) {
	term := func(namespaces []string, selector *metav1.LabelSelector) corev1.PodAffinityTerm {
		return corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			TopologyKey:   "kubernetes.io/hostname", Namespaces: namespaces, NamespaceSelector: selector,
		}
	}
	antiAffinity := func(t corev1.PodAffinityTerm) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{t}}}
		}
	}
	preferredAffinity := func(t corev1.PodAffinityTerm) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 10, PodAffinityTerm: t}}}}
		}
	}
	pod := func(name string, change func(*corev1.PodSpec)) *corev1.Pod {
		return podWith(env.own, name, func(p *corev1.Pod) { change(&p.Spec) })
	}
	everything := &metav1.LabelSelector{}
	victims := &metav1.LabelSelector{MatchLabels: map[string]string{hostnames.TenantLabel: env.victim.Name}}
	mine := &metav1.LabelSelector{MatchLabels: map[string]string{hostnames.TenantLabel: env.tenant.Name, "team": "a"}}

	refused(ctx, t, env.attacker, pod("anti-foreign", antiAffinity(term([]string{env.own, env.foreign}, nil))), msgForeignTerm+env.foreign)
	refused(ctx, t, env.attacker, pod("anti-kube-system", antiAffinity(term([]string{"kube-system"}, nil))), msgForeignTerm+"kube-system")
	refused(ctx, t, env.attacker, pod("anti-everyone", antiAffinity(term(nil, everything))), msgForeignSelector)
	refused(ctx, t, env.attacker, pod("probe-victim", preferredAffinity(term(nil, victims))), msgForeignSelector)
	refused(ctx, t, env.attacker, deployment(env.own, "anti-foreign", antiAffinity(term([]string{env.foreign}, nil))), msgForeignTerm+env.foreign)
	refused(ctx, t, env.attacker, cronJob(env.own, "anti-everyone", antiAffinity(term(nil, everything))), msgForeignSelector)
	for _, vm := range virtualMachineKinds(env.own, "anti-foreign", map[string]interface{}{"affinity": map[string]interface{}{
		"podAntiAffinity": map[string]interface{}{"requiredDuringSchedulingIgnoredDuringExecution": []interface{}{
			map[string]interface{}{"topologyKey": "kubernetes.io/hostname", "namespaces": []interface{}{env.foreign},
				"labelSelector": map[string]interface{}{"matchLabels": map[string]interface{}{"app": "db"}}},
		}},
	}}) {
		refused(ctx, t, env.attacker, vm, msgForeignTerm+env.foreign)
	}

	// Within the tenant: its own namespaces by name, or by its tenant label.
	admitted(ctx, t, env.attacker, pod("anti-own", antiAffinity(term([]string{env.own}, nil))))
	admitted(ctx, t, env.attacker, pod("anti-mine", antiAffinity(term(nil, mine))))
	admitted(ctx, t, env.attacker, pod("near-db", preferredAffinity(term(nil, nil))))
	admitted(ctx, t, env.attacker, deployment(env.own, "anti-own", antiAffinity(term([]string{env.own}, nil))))
}

// virtualMachineTemplates tries the workloads guard's VM rules through
// the templates of VMI replica sets and VM pools, whose VMIs and VMs
// KubeVirt's exempt controllers make.
func virtualMachineTemplates(ctx context.Context, t *testing.T, env securityEnv) {
	foreignNetwork := map[string]interface{}{"networks": []interface{}{
		map[string]interface{}{"name": "net0", "multus": map[string]interface{}{"networkName": env.foreign + "/default"}},
	}}
	for _, vm := range virtualMachineKinds(env.own, "other-network", foreignNetwork)[2:] {
		refused(ctx, t, env.attacker, vm, "a VM's multus networks may be networks of its own namespace only")
	}
}

// deployment is a Deployment in ns whose pod template is a restricted pod
// changed by change.
func deployment(ns, name string, change func(*corev1.PodSpec)) *appsv1.Deployment {
	p := restrictedPod(ns, name)
	if change != nil {
		change(&p.Spec)
	}
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: p.Spec},
		},
	}
}

// cronJob is a suspended CronJob in ns whose pod template is a restricted
// pod changed by change.
func cronJob(ns, name string, change func(*corev1.PodSpec)) *batchv1.CronJob {
	p := restrictedPod(ns, name)
	change(&p.Spec)
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	suspend := true
	return &batchv1.CronJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: batchv1.CronJobSpec{
			Schedule: "0 0 * * *", Suspend: &suspend,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: p.Spec}}},
		},
	}
}

// virtualMachineKinds are a VMI, a stopped VM, an empty VMI replica set
// and an empty VM pool in ns, each of whose VMI spec has fields too.
func virtualMachineKinds(ns, name string, fields map[string]interface{}) []interface{} {
	spec := virtualMachineInstanceSpec()
	for k, v := range fields {
		spec[k] = v
	}
	labels := map[string]interface{}{"app": name}
	vmiTemplate := map[string]interface{}{"metadata": map[string]interface{}{"labels": labels}, "spec": spec}
	selector := map[string]interface{}{"matchLabels": labels}
	return []interface{}{
		object("kubevirt.io/v1", "VirtualMachineInstance", ns, name, map[string]interface{}{"spec": spec}),
		object("kubevirt.io/v1", "VirtualMachine", ns, name, map[string]interface{}{
			"spec": map[string]interface{}{"runStrategy": "Halted", "template": vmiTemplate}}),
		object("kubevirt.io/v1", "VirtualMachineInstanceReplicaSet", ns, name, map[string]interface{}{
			"spec": map[string]interface{}{"replicas": 0, "selector": selector, "template": vmiTemplate}}),
		object("pool.kubevirt.io/v1alpha1", "VirtualMachinePool", ns, name, map[string]interface{}{
			"spec": map[string]interface{}{"replicas": 0, "selector": selector, "virtualMachineTemplate": map[string]interface{}{
				"metadata": map[string]interface{}{"labels": labels},
				"spec":     map[string]interface{}{"runStrategy": "Halted", "template": vmiTemplate},
			}}}),
	}
}
