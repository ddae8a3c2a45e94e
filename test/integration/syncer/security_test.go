package syncer

import (
	"context"
	"fmt"
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

// Messages of the guard policies (artifacts/deploy/base/80-guard-policies.yaml),
// as the tests expect to read them in a refusal.
const (
	msgLoadBalancer   = "Services of type LoadBalancer in tenant namespaces are made by tenant-apiserver"
	msgNodePort       = "Services of type NodePort open a port on every node"
	msgExternalIPs    = "spec.externalIPs would capture traffic to addresses the tenant does not own"
	msgLBIP           = "spec.loadBalancerIP is set by tenant-apiserver only"
	msgExternalName   = "an ExternalName Service may point at Services of the tenant's own namespaces only"
	msgServiceAnnot   = "metallb.io/*, metallb.universe.tf/* and k8s.ovn.org/* annotations in tenant namespaces are set by tenant-apiserver only"
	msgPodAnnot       = "annotations of pods and VMs in tenant namespaces are set by the networking components only"
	msgNetworks       = "k8s.v1.cni.cncf.io/networks may select networks of the pod's own namespace only"
	msgNetworksJSON   = "must be plain ASCII without escapes, and name networks without a namespace prefix"
	msgNAD            = "NetworkAttachmentDefinitions in tenant namespaces are rendered by OVN-Kubernetes"
	msgVMNetworks     = "a VM's multus networks may be networks of its own namespace only"
	msgPodLabel       = "tenant.io/* labels of pods and VMs in tenant namespaces bind them to FloatingIPs and are set by tenant-apiserver only"
	msgNetworkingKind = "are managed by the provider and tenant-apiserver"
	msgNamespaceLabel = "are set by tenant-apiserver only"
	// msgRBAC is what host RBAC says when a user may not use a resource at all.
	msgRBAC = "cannot "
)

// TestHostBackDoors performs, as a member of one tenant (bob, with the admin
// role that the syncer gives members in their host namespaces), every attack
// of docs/security.md's matrix on the host, and checks that each is refused
// with the message the matrix names; what a tenant may legitimately do, and
// what tenant-apiserver's service account must do, is admitted.
func TestHostBackDoors(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	env := onboardSecurityEnv(ctx, t, backDoorUser, overGrantedUser, backDoorVictimUser)
	bob, rex, own, foreign := env.attacker, env.overGranted, env.own, env.foreign
	victimIP := env.victim.Status.PublicIPs[0]

	// Services: the public-IP model has one door, tenant.io LoadBalancers and FloatingIPs.
	t.Run("ServiceExternalIPs", func(t *testing.T) {
		refused(ctx, t, bob, service(own, "steal", func(s *corev1.Service) { s.Spec.ExternalIPs = []string{victimIP} }), msgExternalIPs)
	})
	t.Run("ServiceLoadBalancerIP", func(t *testing.T) {
		refused(ctx, t, bob, service(own, "lbip", func(s *corev1.Service) { s.Spec.LoadBalancerIP = victimIP }), msgLBIP)
	})
	t.Run("ServiceTypeLoadBalancer", func(t *testing.T) {
		refused(ctx, t, bob, service(own, "lb", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeLoadBalancer }), msgLoadBalancer)
	})
	t.Run("ServiceTypeNodePort", func(t *testing.T) {
		refused(ctx, t, bob, service(own, "np", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }), msgNodePort)
	})
	t.Run("ServiceChangedToNodePort", func(t *testing.T) {
		admitted(ctx, t, bob, service(own, "later", nil))
		refusedCommand(ctx, t, bob, []string{"-n", own, "patch", "service", "later", "--type=merge", "-p", `{"spec":{"type":"NodePort"}}`}, msgNodePort)
	})
	t.Run("ServiceAnnotations", func(t *testing.T) {
		for i, key := range []string{"metallb.io/address-pool", "metallb.universe.tf/allow-shared-ip", "k8s.ovn.org/egress-service"} {
			refused(ctx, t, bob, service(own, fmt.Sprintf("annotated-%d", i), func(s *corev1.Service) {
				s.Annotations = map[string]string{key: "x"}
			}), msgServiceAnnot)
		}
	})
	externalName := func(name, target string) *corev1.Service {
		return service(own, name, func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: target}
		})
	}
	t.Run("ServiceExternalNameOtherTenant", func(t *testing.T) {
		refused(ctx, t, bob, externalName("alias", "web."+foreign+".svc.cluster.local"), msgExternalName, foreign)
		refused(ctx, t, bob, externalName("alias-pod", "10-0-0-1."+foreign+".pod.cluster.local"), msgExternalName)
	})
	t.Run("ServiceExternalNameProviderNamespace", func(t *testing.T) {
		refused(ctx, t, bob, externalName("api", "kubernetes.default.svc.cluster.local"), msgExternalName, "default")
		refused(ctx, t, bob, externalName("dns", "kube-dns.kube-system.svc"), msgExternalName, "kube-system")
	})

	// Pods: network selection reaches only the pod's own namespace; what
	// the networking components write on a pod is theirs.
	withAnnotation := func(name, key, value string) *corev1.Pod {
		return podWith(own, name, func(p *corev1.Pod) { p.Annotations = map[string]string{key: value} })
	}
	const networks = "k8s.v1.cni.cncf.io/networks"
	t.Run("PodNetworkOfOtherNamespace", func(t *testing.T) {
		refused(ctx, t, bob, withAnnotation("net-short", networks, foreign+"/tenant-net"), msgNetworks, foreign)
		refused(ctx, t, bob, withAnnotation("net-list", networks, "mine, "+foreign+"/tenant-net@eth1"), msgNetworks, foreign)
		refused(ctx, t, bob, withAnnotation("net-json", networks, `[{"name":"tenant-net","namespace":"`+foreign+`"}]`), msgNetworks, foreign)
		refused(ctx, t, bob, withAnnotation("net-json-case", networks, `[{"name":"tenant-net","NameSpace":"`+foreign+`"}]`), msgNetworks, foreign)
	})
	t.Run("PodNetworkSelectionObfuscated", func(t *testing.T) {
		// Multus's JSON decoder would read these as another namespace's network.
		refused(ctx, t, bob, withAnnotation("net-escape", networks, `[{"name":"tenant-net","n\u0061mespace":"`+foreign+`"}]`), msgNetworksJSON)
		refused(ctx, t, bob, withAnnotation("net-fold", networks, `[{"name":"tenant-net","name`+"\u017f"+`pace":"`+foreign+`"}]`), msgNetworksJSON)
		refused(ctx, t, bob, withAnnotation("net-slash", networks, `[{"name":"`+foreign+`/tenant-net"}]`), msgNetworksJSON)
	})
	t.Run("PodDefaultNetwork", func(t *testing.T) {
		refused(ctx, t, bob, withAnnotation("default-net", "v1.multus-cni.io/default-network", foreign+"/tenant-net"), msgPodAnnot)
	})
	t.Run("PodComponentAnnotations", func(t *testing.T) {
		for i, key := range []string{"k8s.ovn.org/pod-networks", "k8s.ovn.org/primary-udn-ipamclaim", "k8s.v1.cni.cncf.io/network-status", "metallb.io/x"} {
			refused(ctx, t, bob, withAnnotation(fmt.Sprintf("spoof-%d", i), key, "{}"), msgPodAnnot)
		}
	})
	t.Run("PodNetworkOfOwnNamespace", func(t *testing.T) {
		admitted(ctx, t, bob, withAnnotation("own-net-short", networks, own+"/tenant-net"))
		admitted(ctx, t, bob, withAnnotation("own-net-json", networks, `[{"name":"tenant-net","namespace":"`+own+`","interface":"net1"}]`))
		admitted(ctx, t, bob, withAnnotation("own-net-plain", networks, "tenant-net"))
	})
	t.Run("PodKeepsComponentAnnotations", func(t *testing.T) {
		// OVN-Kubernetes annotates a pod (here the provider admin stands in
		// for it); the tenant may still label its pod, but not change or
		// drop what OVN-Kubernetes wrote.
		admitted(ctx, t, bob, restrictedPod(own, "annotated"))
		kubectl(ctx, t, stack.AdminUser, "-n", own, "annotate", "pod", "annotated", `k8s.ovn.org/pod-networks={"default":{}}`)
		kubectl(ctx, t, bob, "-n", own, "label", "pod", "annotated", "tier=web")
		refusedCommand(ctx, t, bob, []string{"-n", own, "annotate", "pod", "annotated", "--overwrite", `k8s.ovn.org/pod-networks={"other":{}}`}, msgPodAnnot)
		refusedCommand(ctx, t, bob, []string{"-n", own, "annotate", "pod", "annotated", "k8s.ovn.org/pod-networks-"}, msgPodAnnot)
	})
	t.Run("PodFloatingIPLabels", func(t *testing.T) {
		// Binding a pod to a FloatingIP's EgressIP (and so out of the NAT
		// gateway's), or to a FloatingIP's Service, is the syncer's.
		for i, key := range []string{hostnames.FloatingIPTargetLabel, hostnames.PodLabel} {
			refused(ctx, t, bob, podWith(own, fmt.Sprintf("bound-%d", i), func(p *corev1.Pod) { p.Labels = map[string]string{key: "x"} }), msgPodLabel)
		}
		vm := virtualMachine(own, "vm-bound", nil)
		vm["spec"].(map[string]interface{})["template"].(map[string]interface{})["metadata"] = map[string]interface{}{
			"labels": map[string]string{hostnames.FloatingIPTargetLabel: "x"}}
		refused(ctx, t, rex, vm, msgPodLabel)
		// Set by the syncer (the provider admin stands in for it), they
		// stay: the tenant may relabel its pod otherwise.
		admitted(ctx, t, bob, restrictedPod(own, "bound"))
		kubectl(ctx, t, stack.AdminUser, "-n", own, "label", "pod", "bound", hostnames.FloatingIPTargetLabel+"=uid")
		kubectl(ctx, t, bob, "-n", own, "label", "pod", "bound", "tier=web")
		refusedCommand(ctx, t, bob, []string{"-n", own, "label", "pod", "bound", hostnames.FloatingIPTargetLabel + "-"}, msgPodLabel)
		refusedCommand(ctx, t, bob, []string{"-n", own, "label", "pod", "bound", "--overwrite", hostnames.FloatingIPTargetLabel + "=other"}, msgPodLabel)
	})
	t.Run("DeploymentTemplateNetworkOfOtherNamespace", func(t *testing.T) {
		// The policy holds for pods that a controller makes from the
		// tenant's template: kube-controller-manager is not exempt.
		pod := withAnnotation("x", networks, foreign+"/tenant-net")
		one := int32(1)
		dep := &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "sneaky", Namespace: own},
			Spec: appsv1.DeploymentSpec{
				Replicas: &one,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sneaky"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "sneaky"}, Annotations: pod.Annotations},
					Spec:       pod.Spec,
				},
			},
		}
		admitted(ctx, t, bob, dep)
		host, _ := hostClients(t)
		eventually(ctx, t, syncTimeout, "the ReplicaSet of Deployment sneaky fails to create its pod", func(ctx context.Context) (bool, string) {
			rss, err := host.AppsV1().ReplicaSets(own).List(ctx, metav1.ListOptions{LabelSelector: "app=sneaky"})
			if err != nil || len(rss.Items) == 0 {
				return false, fmt.Sprintf("no ReplicaSet yet (%v)", err)
			}
			for _, c := range rss.Items[0].Status.Conditions {
				if c.Type == appsv1.ReplicaSetReplicaFailure && strings.Contains(c.Message, msgNetworks) {
					return true, ""
				}
			}
			return false, fmt.Sprintf("conditions %+v", rss.Items[0].Status.Conditions)
		})
		pods, err := host.CoreV1().Pods(own).List(ctx, metav1.ListOptions{LabelSelector: "app=sneaky"})
		if err != nil || len(pods.Items) != 0 {
			t.Fatalf("pods of Deployment sneaky: %d (%v), want none", len(pods.Items), err)
		}
	})

	// KubeVirt VMs: a VM's launcher pod is made by KubeVirt's controllers
	// (exempt, as they annotate it), from the VM or VMI the tenant writes:
	// those are checked. Every member has the VM rights KubeVirt's
	// aggregated roles give a namespace admin.
	t.Run("VirtualMachineNetworkOfOtherNamespace", func(t *testing.T) {
		refused(ctx, t, rex, virtualMachine(own, "vm-multus", nil, "mine", foreign+"/tenant-net"), msgVMNetworks)
		refused(ctx, t, rex, virtualMachine(own, "vm-annotated", map[string]string{networks: foreign + "/tenant-net"}), msgNetworks, foreign)
		refused(ctx, t, rex, object("kubevirt.io/v1", "VirtualMachineInstance", own, "vmi-multus", map[string]interface{}{
			"spec": virtualMachineInstanceSpec(foreign + "/tenant-net")}), msgVMNetworks)
	})
	t.Run("VirtualMachineComponentAnnotations", func(t *testing.T) {
		refused(ctx, t, rex, virtualMachine(own, "vm-ipamclaim", map[string]string{"k8s.ovn.org/primary-udn-ipamclaim": "other"}), msgPodAnnot)
		vmi := object("kubevirt.io/v1", "VirtualMachineInstance", own, "vmi-default-net", map[string]interface{}{"spec": virtualMachineInstanceSpec()})
		vmi["metadata"].(map[string]interface{})["annotations"] = map[string]string{"v1.multus-cni.io/default-network": foreign + "/tenant-net"}
		refused(ctx, t, rex, vmi, msgPodAnnot)
	})
	t.Run("VirtualMachineOnOwnNetworks", func(t *testing.T) {
		admitted(ctx, t, rex, virtualMachine(own, "vm-own", nil, own+"/tenant-net", "tenant-net"))
		admitted(ctx, t, rex, virtualMachine(own, "vm-own-annotated", map[string]string{networks: own + "/tenant-net"}))
	})

	// Networking objects: RBAC refuses a tenant; the guard policies refuse
	// even a member whom the provider gave too much RBAC.
	t.Run("NetworkAttachmentDefinition", func(t *testing.T) {
		nad := object("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", own, "bridge", map[string]interface{}{
			"spec": map[string]interface{}{"config": `{"cniVersion":"0.4.0","type":"bridge","bridge":"br0"}`}})
		refused(ctx, t, bob, nad, msgRBAC)
		refused(ctx, t, rex, nad, msgNAD)
	})
	t.Run("EgressService", func(t *testing.T) {
		es := object("k8s.ovn.org/v1", "EgressService", own, "web", map[string]interface{}{"spec": map[string]interface{}{}})
		refused(ctx, t, bob, es, msgRBAC)
		refused(ctx, t, rex, es, "egressservices.k8s.ovn.org "+msgNetworkingKind)
	})
	t.Run("UserDefinedNetwork", func(t *testing.T) {
		udn := object("k8s.ovn.org/v1", "UserDefinedNetwork", own, "mine", map[string]interface{}{"spec": map[string]interface{}{
			"topology": "Layer2", "layer2": map[string]interface{}{"role": "Secondary", "subnets": []string{"10.200.0.0/16"}}}})
		refused(ctx, t, bob, udn, msgRBAC)
		refused(ctx, t, rex, udn, "userdefinednetworks.k8s.ovn.org "+msgNetworkingKind)
	})
	t.Run("EgressIP", func(t *testing.T) {
		eip := object("k8s.ovn.org/v1", "EgressIP", "", "steal-"+randomHex(t, 3), map[string]interface{}{"spec": map[string]interface{}{
			"egressIPs":         []string{victimIP},
			"namespaceSelector": map[string]interface{}{"matchLabels": map[string]string{hostnames.TenantLabel: env.victim.Name}}}})
		refused(ctx, t, bob, eip, msgRBAC)
		refused(ctx, t, rex, eip, "egressips.k8s.ovn.org "+msgNetworkingKind)
	})
	t.Run("FRRConfiguration", func(t *testing.T) {
		frr := object("frrk8s.metallb.io/v1beta1", "FRRConfiguration", own, "peer", map[string]interface{}{"spec": map[string]interface{}{}})
		refused(ctx, t, bob, frr, msgRBAC)
		refused(ctx, t, rex, frr, "frrconfigurations.frrk8s.metallb.io "+msgNetworkingKind)
	})
	t.Run("RouteAdvertisements", func(t *testing.T) {
		ra := object("k8s.ovn.org/v1", "RouteAdvertisements", "", "leak-"+randomHex(t, 3), map[string]interface{}{"spec": map[string]interface{}{
			"advertisements":           []string{"PodNetwork"},
			"nodeSelector":             map[string]interface{}{},
			"frrConfigurationSelector": map[string]interface{}{},
			"networkSelectors":         []interface{}{map[string]interface{}{"networkSelectionType": "DefaultNetwork"}}}})
		refused(ctx, t, bob, ra, msgRBAC)
		refused(ctx, t, rex, ra, "routeadvertisements.k8s.ovn.org "+msgNetworkingKind)
	})
	t.Run("ClusterUserDefinedNetwork", func(t *testing.T) {
		cudn := object("k8s.ovn.org/v1", "ClusterUserDefinedNetwork", "", "steal-"+randomHex(t, 3), map[string]interface{}{"spec": map[string]interface{}{
			"namespaceSelector": map[string]interface{}{"matchLabels": map[string]string{hostnames.TenantLabel: env.victim.Name}},
			"network": map[string]interface{}{"topology": "Layer2", "layer2": map[string]interface{}{
				"role": "Primary", "subnets": []string{"10.100.0.0/16"}}}}})
		refused(ctx, t, bob, cudn, msgRBAC)
		refused(ctx, t, rex, cudn, "clusteruserdefinednetworks.k8s.ovn.org "+msgNetworkingKind)
	})
	t.Run("ClusterNetworkConnect", func(t *testing.T) {
		// Its networks connected with the victim's, selected by the victim's tenant label.
		cnc := object("k8s.ovn.org/v1", "ClusterNetworkConnect", "", "steal-"+randomHex(t, 3), map[string]interface{}{"spec": map[string]interface{}{
			"networkSelectors": []interface{}{map[string]interface{}{
				"networkSelectionType": "ClusterUserDefinedNetworks",
				"clusterUserDefinedNetworkSelector": map[string]interface{}{"networkSelector": map[string]interface{}{
					"matchLabels": map[string]string{hostnames.TenantLabel: env.victim.Name}}},
			}},
			"connectSubnets": []interface{}{map[string]interface{}{"cidr": "100.127.0.0/24", "networkPrefix": 28}},
			"connectivity":   []string{"ServiceNetwork", "PodNetwork"}}})
		refused(ctx, t, bob, cnc, msgRBAC)
		refused(ctx, t, rex, cnc, "clusternetworkconnects.k8s.ovn.org "+msgNetworkingKind)
	})
	t.Run("ClusterUserDefinedNetworkServiceNetworkLabel", func(t *testing.T) {
		// The victim's network put in the attacker's service network, or
		// the attacker's in the victim's: the labels a service network's
		// ClusterNetworkConnect selects by.
		victimNet := hostnames.ClusterUserDefinedNetwork(env.victim.UID, tenantv1alpha1.DefaultNetworkName)
		ownNet := hostnames.ClusterUserDefinedNetwork(env.tenant.UID, tenantv1alpha1.DefaultNetworkName)
		for _, args := range [][]string{
			{"label", "clusteruserdefinednetworks.k8s.ovn.org", victimNet, "--overwrite",
				hostnames.TenantLabel + "=" + env.tenant.Name, hostnames.ServiceNetworkLabel + "=" + hostnames.ServiceNetworkConnect(env.tenant.UID)},
			{"label", "clusteruserdefinednetworks.k8s.ovn.org", ownNet, "--overwrite",
				hostnames.TenantLabel + "=" + env.victim.Name, hostnames.ServiceNetworkLabel + "=" + hostnames.ServiceNetworkConnect(env.victim.UID)},
		} {
			refusedCommand(ctx, t, bob, args, msgRBAC)
			refusedCommand(ctx, t, rex, args, "clusteruserdefinednetworks.k8s.ovn.org "+msgNetworkingKind)
		}
	})
	t.Run("IPAddressPool", func(t *testing.T) {
		pool := object("metallb.io/v1beta1", "IPAddressPool", "metallb-system", "steal-"+randomHex(t, 3), map[string]interface{}{
			"spec": map[string]interface{}{"addresses": []string{victimIP + "/32"}}})
		refused(ctx, t, bob, pool, msgRBAC)
		refused(ctx, t, rex, pool, "ipaddresspools.metallb.io "+msgNetworkingKind)
	})

	// Namespaces: tenants make none and relabel none.
	t.Run("NamespacePodSecurityLabels", func(t *testing.T) {
		for _, label := range []string{"pod-security.kubernetes.io/enforce=privileged", "pod-security.kubernetes.io/warn-", "security.openshift.io/scc.podSecurityLabelSync=true"} {
			args := []string{"label", "namespace", own, "--overwrite", label}
			refusedCommand(ctx, t, bob, args, msgRBAC)
			refusedCommand(ctx, t, rex, args, msgNamespaceLabel)
		}
	})
	t.Run("NamespaceTenantLabels", func(t *testing.T) {
		// Moving a namespace to another tenant or off its network.
		for _, label := range []string{hostnames.TenantLabel + "=" + env.victim.Name, hostnames.TenantLabel + "-",
			hostnames.PrimaryUDNLabel + "-", "tenant.io/extra=1"} {
			args := []string{"label", "namespace", own, "--overwrite", label}
			refusedCommand(ctx, t, bob, args, msgRBAC)
			refusedCommand(ctx, t, rex, args, msgNamespaceLabel)
		}
		// Labels of its own are not the policy's business.
		kubectl(ctx, t, rex, "label", "namespace", own, "team=web")
	})
	t.Run("NamespaceOutsideTheTenantModel", func(t *testing.T) {
		ns := object("v1", "Namespace", "", env.victim.Status.NamespacePrefix+"-mine", map[string]interface{}{})
		refused(ctx, t, bob, ns, msgRBAC)
		refused(ctx, t, rex, ns, msgRBAC)
	})
	t.Run("EndpointSliceToForeignAddresses", func(t *testing.T) {
		slice := object("discovery.k8s.io/v1", "EndpointSlice", own, "steal", map[string]interface{}{
			"addressType": "IPv4",
			"endpoints":   []interface{}{map[string]interface{}{"addresses": []string{victimIP}}},
			"ports":       []interface{}{map[string]interface{}{"port": 80}},
		})
		refused(ctx, t, bob, slice, msgRBAC)
		refused(ctx, t, bob, object("v1", "Endpoints", own, "steal", map[string]interface{}{}), msgRBAC)
	})

	// What a tenant may do.
	t.Run("Allowed", func(t *testing.T) {
		admitted(ctx, t, bob, service(own, "plain", nil))
		admitted(ctx, t, bob, externalName("own-alias", "web."+own+".svc.cluster.local"))
		admitted(ctx, t, bob, externalName("outside", "db.example.com"))
		admitted(ctx, t, bob, restrictedPod(own, "plain"))
	})

	// What tenant-apiserver's service account does on the host is not refused.
	t.Run("ServerServiceAccount", func(t *testing.T) {
		sa := stack.TenantAPIServerUser
		admitted(ctx, t, sa, service(own, "server-lb", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.LoadBalancerIP = env.victim.Status.PublicIPs[1]
			s.Annotations = map[string]string{"metallb.io/address-pool": "none"}
		}))
		kubectl(ctx, t, sa, "label", "namespace", own, "--overwrite", hostnames.PodSecurityWarnLabel+"=baseline")
		host, _ := hostClients(t)
		eventually(ctx, t, syncTimeout, "the syncer puts the warn label of "+own+" back", func(ctx context.Context) (bool, string) {
			ns, err := host.CoreV1().Namespaces().Get(ctx, own, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return ns.Labels[hostnames.PodSecurityWarnLabel] == "restricted", fmt.Sprint(ns.Labels)
		})
	})
}

// TestPodSecurityLevels checks the Pod Security labels the syncer puts on a
// tenant's host namespaces: restricted by default, the provider's choice of
// baseline per tenant, never privileged; repaired after an out-of-band edit;
// not the tenant's to change; and enforced by the host.
func TestPodSecurityLevels(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	tn := onboard(ctx, t, tenantSpec{name: uniqueName(t), users: []string{podSecurityUser}})
	admin, member := tenantClient(t, stack.AdminUser), tenantClient(t, podSecurityUser)
	hostNS := waitNamespaceSynced(ctx, t, member, defaultNamespace).Status.HostNamespace
	host, _ := hostClients(t)
	if tn.Spec.PodSecurity.Level != tenantv1alpha1.PodSecurityLevelRestricted {
		t.Errorf("spec.podSecurity.level defaults to %q, want restricted", tn.Spec.PodSecurity.Level)
	}
	waitLevel := func(level string) {
		t.Helper()
		eventually(ctx, t, syncTimeout, "Pod Security level "+level+" on "+hostNS, func(ctx context.Context) (bool, string) {
			ns, err := host.CoreV1().Namespaces().Get(ctx, hostNS, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, k := range []string{hostnames.PodSecurityEnforceLabel, hostnames.PodSecurityAuditLabel, hostnames.PodSecurityWarnLabel} {
				if ns.Labels[k] != level {
					return false, fmt.Sprint(ns.Labels)
				}
			}
			return ns.Labels[hostnames.OpenShiftPodSecurityLabelSync] == "false", fmt.Sprint(ns.Labels)
		})
	}
	waitLevel("restricted")
	eventually(ctx, t, syncTimeout, "default ServiceAccount of "+hostNS, func(ctx context.Context) (bool, string) {
		_, err := host.CoreV1().ServiceAccounts(hostNS).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	root := podWith(hostNS, "root", func(p *corev1.Pod) { p.Spec.SecurityContext.RunAsNonRoot = nil })
	privileged := podWith(hostNS, "privileged", func(p *corev1.Pod) {
		yes := true
		p.Spec.Containers[0].SecurityContext.Privileged = &yes
		p.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
	})

	t.Run("TenantCannotChangeLabels", func(t *testing.T) {
		refusedCommand(ctx, t, podSecurityUser, []string{"label", "namespace", hostNS, "--overwrite", hostnames.PodSecurityEnforceLabel + "=privileged"}, msgRBAC)
	})
	t.Run("RepairedAfterOutOfBandEdit", func(t *testing.T) {
		kubectl(ctx, t, stack.AdminUser, "label", "namespace", hostNS, "--overwrite",
			hostnames.PodSecurityEnforceLabel+"=privileged", hostnames.OpenShiftPodSecurityLabelSync+"-")
		waitLevel("restricted")
	})
	t.Run("RestrictedEnforced", func(t *testing.T) {
		refused(ctx, t, podSecurityUser, root, `violates PodSecurity "restricted:latest"`, "runAsNonRoot != true")
		refused(ctx, t, podSecurityUser, privileged, `violates PodSecurity "restricted:latest"`, "privileged")
	})
	t.Run("Baseline", func(t *testing.T) {
		patch := func(level string) error {
			_, err := admin.TenantV1alpha1().Tenants().Patch(ctx, tn.Name, types.MergePatchType,
				[]byte(`{"spec":{"podSecurity":{"level":"`+level+`"}}}`), metav1.PatchOptions{})
			return err
		}
		if err := patch("baseline"); err != nil {
			t.Fatal(err)
		}
		waitLevel("baseline")
		out := kubectl(ctx, t, stack.AdminUser, "get", "tenant", tn.Name, "-o", "wide")
		if !strings.Contains(out, "POD SECURITY") || !strings.Contains(out, "baseline") {
			t.Errorf("kubectl get tenant -o wide shows no POD SECURITY baseline:\n%s", out)
		}
		admitted(ctx, t, podSecurityUser, root)
		refused(ctx, t, podSecurityUser, privileged, `violates PodSecurity "baseline:latest"`, "privileged")

		err := patch("privileged")
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.podSecurity.level") {
			t.Errorf("level privileged: got %v, want 422 on spec.podSecurity.level", err)
		}
		_, stderr, kerr := theStack().Kubectl(ctx, stack.AdminUser, "patch", "tenant", tn.Name, "--type=merge", "-p", `{"spec":{"podSecurity":{"level":"privileged"}}}`)
		if kerr == nil || !strings.Contains(stderr, "spec.podSecurity.level") || !strings.Contains(stderr, "never run privileged") {
			t.Errorf("kubectl patch level privileged: %v %s", kerr, stderr)
		}
		if err := patch("restricted"); err != nil {
			t.Fatal(err)
		}
		waitLevel("restricted")
	})
}
