package syncer

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// repairTimeout bounds the repair of one out-of-band change of a host
// object, which the syncer sees through its host informers.
const repairTimeout = 30 * time.Second

// TestOnboarding creates a Tenant and follows it onto the host: its phase
// moves Pending -> Provisioning -> Ready and is Ready only with HostSynced;
// it gets its Namespace "default", whose host namespace carries the tenant
// labels and owner annotations and a RoleBinding giving the members the
// admin ClusterRole; its public IPs become a MetalLB IPAddressPool (not
// auto-assigned, restricted to exactly the host namespaces of Namespace
// default and of the Namespaces holding LoadBalancers or FloatingIPs)
// with an L2Advertisement. A Namespace the member creates follows; the
// pool serves it while it holds a LoadBalancer, which MetalLB then gives
// its address. On the host, the member may work in its namespace but not
// create a LoadBalancer Service there.
func TestOnboarding(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	s := theStack()
	admin := tenantClient(t, stack.AdminUser)
	member := tenantClient(t, alice)
	name := uniqueName(t)

	// Watch the Tenant from before it exists, to see every phase it shows.
	w, err := admin.TenantV1alpha1().Tenants().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	tn := onboard(ctx, t, tenantSpec{name: name, users: []string{alice}, publicIPs: 2, loadBalancers: 1})
	checkPhases(t, w, name)

	if want := hostnames.NamespacePrefix(name, tn.UID); tn.Status.NamespacePrefix != want {
		t.Errorf("status.namespacePrefix %q, want %q", tn.Status.NamespacePrefix, want)
	}
	if !slices.Contains(tn.Finalizers, finalizerOffboarding) {
		t.Errorf("finalizers %v lack %s", tn.Finalizers, finalizerOffboarding)
	}
	if len(tn.Status.PublicIPs) != 2 {
		t.Fatalf("status.publicIPs %v, want 2 addresses", tn.Status.PublicIPs)
	}

	// The member finds its Namespace "default", realised on the host.
	var def tenantv1alpha1.Namespace
	if err := json.Unmarshal([]byte(kubectl(ctx, t, alice, "get", "namespaces.tenant.io", defaultNamespace, "-o", "json")), &def); err != nil {
		t.Fatal(err)
	}
	tn, nss := waitHostState(ctx, t, admin, member, name, syncTimeout)
	if len(nss) != 1 || nss[0].Name != defaultNamespace {
		t.Fatalf("tenant Namespaces %v, want only %s", namespaceNames(nss), defaultNamespace)
	}
	defaultHost := tn.Status.NamespacePrefix + "-" + defaultNamespace
	if nss[0].Status.HostNamespace != defaultHost || nss[0].UID != def.UID {
		t.Errorf("Namespace default: host namespace %q (uid %s), want %q (uid %s as kubectl showed)", nss[0].Status.HostNamespace, nss[0].UID, defaultHost, def.UID)
	}
	checkPool(ctx, t, tn, defaultHost)

	// A Namespace of the member's own.
	kubectlCreate(ctx, t, alice, namespaceObject("dev"))
	dev := waitNamespaceSynced(ctx, t, member, "dev")
	devHost := hostnames.Namespace(name, tn.UID, "dev")
	if dev.Status.HostNamespace != devHost {
		t.Errorf("Namespace dev: status.hostNamespace %q, want %q", dev.Status.HostNamespace, devHost)
	}
	tn, nss = waitHostState(ctx, t, admin, member, name, syncTimeout)
	if got := namespaceNames(nss); !slices.Equal(got, []string{defaultNamespace, "dev"}) {
		t.Errorf("tenant Namespaces %v, want default and dev", got)
	}
	// dev holds no LoadBalancer or FloatingIP: the pool does not serve it...
	checkPool(ctx, t, tn, defaultHost)
	waitTenantReady(ctx, t, admin, name)
	// ...until it holds one, which MetalLB gives an address from the pool...
	t.Cleanup(func() { deletePublicIPUsers(t, member, "dev") })
	if _, err := member.TenantV1alpha1().LoadBalancers("dev").Create(ctx, lbObject("web", ""), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating LoadBalancer dev/web: %v", err)
	}
	waitLB(ctx, t, member, "dev", "web", "address assigned by MetalLB", lbAssigned)
	checkPool(ctx, t, tn, defaultHost, devHost)
	// ...and no longer once it holds none.
	if err := member.TenantV1alpha1().LoadBalancers("dev").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting LoadBalancer dev/web: %v", err)
	}
	waitGone(ctx, t, "LoadBalancer dev/web", func(ctx context.Context) error {
		_, err := member.TenantV1alpha1().LoadBalancers("dev").Get(ctx, "web", metav1.GetOptions{})
		return err
	})
	_, dyn := hostClients(t)
	poolName := hostnames.MetalLBPool(name, tn.UID)
	eventually(ctx, t, repairTimeout, "IPAddressPool "+poolName+" serving "+defaultHost+" only", func(ctx context.Context) (bool, string) {
		pool, err := dyn.Resource(poolGVR).Namespace(stack.MetalLBNamespace).Get(ctx, poolName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		p := poolProblems(pool, tn, []string{defaultHost})
		return len(p) == 0, strings.Join(p, "; ")
	})

	// On the host, the RoleBinding makes alice an admin of her namespace...
	aliceHost, _ := hostClientsAs(t, alice)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "alice-was-here"}, Data: map[string]string{"k": "v"}}
	eventually(ctx, t, repairTimeout, "alice creates a ConfigMap in "+devHost, func(ctx context.Context) (bool, string) {
		_, err := aliceHost.CoreV1().ConfigMaps(devHost).Create(ctx, cm, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
	})
	// ...of hers only...
	if _, err := aliceHost.CoreV1().ConfigMaps("kube-system").Create(ctx, cm, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("alice creates a ConfigMap in kube-system: %v, want Forbidden", err)
	}
	// ...and the guard policies, not RBAC (admin may create Services),
	// refuse her a LoadBalancer Service there.
	lb := map[string]interface{}{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]interface{}{"name": "lb", "namespace": devHost},
		"spec":     map[string]interface{}{"type": "LoadBalancer", "ports": []interface{}{map[string]interface{}{"port": 80}}},
	}
	_, stderr, err := s.Kubectl(ctx, alice, "create", "-f", writeJSON(t, lb))
	if err == nil || !strings.Contains(stderr, "Forbidden") || !strings.Contains(stderr, "LoadBalancer") || strings.Contains(stderr, "cannot create resource") {
		t.Errorf("alice's LoadBalancer Service in %s: err=%v, stderr %q; want refused by the guard policy", devHost, err, stderr)
	}
	plain := map[string]interface{}{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]interface{}{"name": "plain", "namespace": devHost},
		"spec":     map[string]interface{}{"ports": []interface{}{map[string]interface{}{"port": 80}}},
	}
	if _, _, err := s.Kubectl(ctx, alice, "create", "-f", writeJSON(t, plain)); err != nil {
		t.Errorf("alice's ClusterIP Service in %s: %v", devHost, err)
	}
}

// checkPhases reads the events of a watch on tenant name until it shows
// phase Ready, and checks that the phase only moved forward through
// Pending, Provisioning and Ready, and was Ready only with HostSynced and
// Ready True.
func checkPhases(t *testing.T, w watch.Interface, name string) {
	t.Helper()
	order := map[tenantv1alpha1.TenantPhase]int{"": 0, tenantv1alpha1.TenantPhasePending: 1, tenantv1alpha1.TenantPhaseProvisioning: 2, tenantv1alpha1.TenantPhaseReady: 3}
	var phases []tenantv1alpha1.TenantPhase
	timeout := time.After(repairTimeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch of tenant %s ended before phase Ready; phases seen %v", name, phases)
			}
			tn, isTenant := ev.Object.(*tenantv1alpha1.Tenant)
			if !isTenant {
				t.Fatalf("watch of tenant %s: %s event of %T: %v", name, ev.Type, ev.Object, ev.Object)
			}
			p := tn.Status.Phase
			if len(phases) == 0 || phases[len(phases)-1] != p {
				phases = append(phases, p)
			}
			rank, known := order[p]
			if !known {
				t.Errorf("tenant %s: phase %q during onboarding (%s)", name, p, describeTenant(tn))
			}
			if len(phases) > 1 && rank < order[phases[len(phases)-2]] {
				t.Errorf("tenant %s: phase went back to %q; phases so far %v", name, p, phases)
			}
			if p == tenantv1alpha1.TenantPhaseReady {
				if !tenantReady(tn) {
					t.Errorf("tenant %s: phase Ready with conditions %s", name, describeConditions(tn.Status.Conditions))
				}
				t.Logf("tenant %s phases: %v", name, phases)
				return
			}
			if conditionTrue(tn.Status.Conditions, tenantv1alpha1.ConditionReady) {
				t.Errorf("tenant %s: condition Ready True in phase %q", name, p)
			}
		case <-timeout:
			t.Fatalf("watch of tenant %s: no phase Ready after %s; phases seen %v", name, repairTimeout, phases)
		}
	}
}

func namespaceNames(nss []tenantv1alpha1.Namespace) []string {
	var out []string
	for _, ns := range nss {
		out = append(out, ns.Name)
	}
	sort.Strings(out)
	return out
}

// checkPool checks, besides what hostState checks, the tenant's pool and
// advertisement by name as the contract spells them out.
func checkPool(ctx context.Context, t *testing.T, tn *tenantv1alpha1.Tenant, hostNamespaces ...string) {
	t.Helper()
	_, dyn := hostClients(t)
	name := hostnames.MetalLBPool(tn.Name, tn.UID)
	if name != tn.Status.NamespacePrefix {
		t.Errorf("pool name %q, want the namespace prefix %q", name, tn.Status.NamespacePrefix)
	}
	pool, err := dyn.Resource(poolGVR).Namespace(stack.MetalLBNamespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range poolProblems(pool, tn, hostNamespaces) {
		t.Error(p)
	}
	adv, err := dyn.Resource(l2GVR).Namespace(stack.MetalLBNamespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range advertisementProblems(adv, tn) {
		t.Error(p)
	}
}

// TestOwnershipHostNameTaken checks that the syncer never adopts a host
// namespace it did not make: one that already has the would-be name of a
// tenant Namespace stays as it is, and the tenant Namespace says why it is
// not synced. Once its owner removes it, the tenant Namespace converges.
func TestOwnershipHostNameTaken(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	host, _ := hostClients(t)
	admin := tenantClient(t, stack.AdminUser)
	member := tenantClient(t, ownerUser)
	name := uniqueName(t)
	tn := onboard(ctx, t, tenantSpec{name: name, users: []string{ownerUser}})

	taken := hostnames.Namespace(name, tn.UID, "taken")
	foreign, err := host.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   taken,
		Labels: map[string]string{"owner": "someone-else"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = host.CoreV1().Namespaces().Delete(context.Background(), taken, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &foreign.UID}})
	})

	kubectlCreate(ctx, t, ownerUser, namespaceObject("taken"))
	var ns *tenantv1alpha1.Namespace
	eventually(ctx, t, syncTimeout, "tenant Namespace taken: HostSynced False, reason HostNameTaken, naming "+taken, func(ctx context.Context) (bool, string) {
		ns, err = member.TenantV1alpha1().Namespaces().Get(ctx, "taken", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(ns.Status.Conditions, tenantv1alpha1.ConditionHostSynced)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "HostNameTaken" && strings.Contains(c.Message, taken), describeNamespace(ns)
	})
	t.Logf("tenant Namespace taken: %s", describeNamespace(ns))

	// Several periodic checks later, the foreign namespace is still untouched.
	time.Sleep(3*framework.SyncerCheckPeriod + time.Second)
	got, err := host.CoreV1().Namespaces().Get(ctx, taken, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the foreign host namespace: %v", err)
	}
	if got.UID != foreign.UID || got.DeletionTimestamp != nil || !maps.Equal(got.Labels, foreign.Labels) || !maps.Equal(got.Annotations, foreign.Annotations) {
		t.Errorf("the foreign host namespace changed: uid %s->%s, deletion %v, labels %v->%v, annotations %v->%v",
			foreign.UID, got.UID, got.DeletionTimestamp, foreign.Labels, got.Labels, foreign.Annotations, got.Annotations)
	}
	if rb, err := host.RbacV1().RoleBindings(taken).Get(ctx, membersRoleBinding, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("RoleBinding %s in the foreign namespace: %v %v, want none", membersRoleBinding, rb, err)
	}
	ns, err = member.TenantV1alpha1().Namespaces().Get(ctx, "taken", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(ns.Status.Conditions, tenantv1alpha1.ConditionHostSynced); c == nil || c.Reason != "HostNameTaken" {
		t.Errorf("tenant Namespace taken after a while: %s", describeNamespace(ns))
	}
	if c := meta.FindStatusCondition(ns.Status.Conditions, tenantv1alpha1.ConditionReady); c == nil || c.Status == metav1.ConditionTrue {
		t.Errorf("tenant Namespace taken: Ready is %+v, want False", c)
	}
	if tn, err := admin.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if tn.Status.Phase == tenantv1alpha1.TenantPhaseReady {
		t.Errorf("tenant %s is Ready while its Namespace taken is not on the host: %s", name, describeTenant(tn))
	}

	// Its owner deletes it; the name is free, and the syncer takes it.
	if err := host.CoreV1().Namespaces().Delete(ctx, taken, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &foreign.UID}}); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, slowTimeout, "the foreign namespace gone and namespace "+taken+" the syncer's", func(ctx context.Context) (bool, string) {
		hn, err := host.CoreV1().Namespaces().Get(ctx, taken, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return hn.UID != foreign.UID && hn.Annotations[hostnames.OwnerUIDAnnotation] == string(ns.UID),
			fmt.Sprintf("uid %s, annotations %v, deletion %v", hn.UID, hn.Annotations, hn.DeletionTimestamp)
	})
	waitHostState(ctx, t, admin, member, name, syncTimeout)
	waitTenantReady(ctx, t, admin, name)
}

// TestDriftRepairAndOrphans changes and deletes host objects of a tenant
// behind the syncer's back, as an admin would by mistake, and checks each
// is put right; and that a host namespace marked as the syncer's whose
// owner does not exist is removed by the periodic check.
func TestDriftRepairAndOrphans(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	host, dyn := hostClients(t)
	admin := tenantClient(t, stack.AdminUser)
	member := tenantClient(t, driftUser)
	name := uniqueName(t)
	onboard(ctx, t, tenantSpec{name: name, users: []string{driftUser}, publicIPs: 2})
	tn, nss := waitHostState(ctx, t, admin, member, name, syncTimeout)
	def := &nss[0]
	defHost := hostnames.Namespace(name, tn.UID, defaultNamespace)
	pools := dyn.Resource(poolGVR).Namespace(stack.MetalLBNamespace)
	advs := dyn.Resource(l2GVR).Namespace(stack.MetalLBNamespace)
	poolName := hostnames.MetalLBPool(name, tn.UID)

	rbRepaired := func(oldUID types.UID) func(ctx context.Context) (bool, string) {
		return func(ctx context.Context) (bool, string) {
			rb, err := host.RbacV1().RoleBindings(defHost).Get(ctx, membersRoleBinding, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			p := roleBindingProblems(rb, tn, def)
			if oldUID != "" && rb.UID == oldUID {
				p = append(p, "still the old RoleBinding")
			}
			return len(p) == 0, strings.Join(p, "; ")
		}
	}

	t.Run("RoleBinding deleted", func(t *testing.T) {
		rb, err := host.RbacV1().RoleBindings(defHost).Get(ctx, membersRoleBinding, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := host.RbacV1().RoleBindings(defHost).Delete(ctx, membersRoleBinding, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(ctx, t, repairTimeout, "RoleBinding "+defHost+"/"+membersRoleBinding+" made again", rbRepaired(rb.UID))
	})

	t.Run("RoleBinding subjects edited", func(t *testing.T) {
		rb, err := host.RbacV1().RoleBindings(defHost).Get(ctx, membersRoleBinding, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rb.Subjects = []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "mallory"}}
		updated, err := host.RbacV1().RoleBindings(defHost).Update(ctx, rb, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := subjectsOf(updated); !slices.Equal(got, []subject{{rbacv1.UserKind, "mallory"}}) {
			t.Fatalf("the edit did not take: subjects %v", got)
		}
		eventually(ctx, t, repairTimeout, "RoleBinding "+defHost+"/"+membersRoleBinding+" subjects restored", rbRepaired(""))
	})

	t.Run("namespace label edited", func(t *testing.T) {
		var labeled corev1.Namespace
		out := kubectl(ctx, t, stack.AdminUser, "label", "namespace", defHost, "--overwrite", hostnames.NetworkLabel+"=tampered", "-o", "json")
		if err := json.Unmarshal([]byte(out), &labeled); err != nil {
			t.Fatal(err)
		}
		if got := labeled.Labels[hostnames.NetworkLabel]; got != "tampered" {
			t.Fatalf("the edit did not take: label %s=%q", hostnames.NetworkLabel, got)
		}
		eventually(ctx, t, repairTimeout, "label "+hostnames.NetworkLabel+" of "+defHost+" restored", func(ctx context.Context) (bool, string) {
			hn, err := host.CoreV1().Namespaces().Get(ctx, defHost, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			p := hostNamespaceProblems(hn, tn, def)
			return len(p) == 0, strings.Join(p, "; ")
		})
	})

	t.Run("pool addresses edited", func(t *testing.T) {
		patch := []byte(`{"spec":{"addresses":["198.51.100.7/32"]}}`)
		patched, err := pools.Patch(ctx, poolName, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, _, _ := unstructured.NestedStringSlice(patched.Object, "spec", "addresses"); !slices.Equal(got, []string{"198.51.100.7/32"}) {
			t.Fatalf("the edit did not take: addresses %v", got)
		}
		eventually(ctx, t, repairTimeout, "addresses of IPAddressPool "+poolName+" restored", func(ctx context.Context) (bool, string) {
			pool, err := pools.Get(ctx, poolName, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			p := poolProblems(pool, tn, []string{defHost})
			return len(p) == 0, strings.Join(p, "; ")
		})
	})

	t.Run("advertisement deleted", func(t *testing.T) {
		adv, err := advs.Get(ctx, poolName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := advs.Delete(ctx, poolName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(ctx, t, repairTimeout, "L2Advertisement "+poolName+" made again", func(ctx context.Context) (bool, string) {
			got, err := advs.Get(ctx, poolName, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			p := advertisementProblems(got, tn)
			if got.GetUID() == adv.GetUID() {
				p = append(p, "still the old one")
			}
			return len(p) == 0, strings.Join(p, "; ")
		})
	})

	t.Run("orphan namespace", func(t *testing.T) {
		ghost := hostnames.Namespace(name, tn.UID, "ghost")
		orphan, err := host.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: ghost,
			Labels: map[string]string{
				hostnames.TenantLabel:     name,
				hostnames.NamespaceLabel:  "ghost",
				hostnames.NetworkLabel:    "default",
				hostnames.PrimaryUDNLabel: "",
			},
			Annotations: map[string]string{
				hostnames.OwnerUIDAnnotation:  string(randomUID(t)),
				hostnames.TenantUIDAnnotation: string(tn.UID),
			},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = host.CoreV1().Namespaces().Delete(context.Background(), ghost, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &orphan.UID}})
		})
		eventually(ctx, t, syncTimeout, "orphan host namespace "+ghost+" deleted", func(ctx context.Context) (bool, string) {
			hn, err := host.CoreV1().Namespaces().Get(ctx, ghost, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, "gone"
			}
			if err != nil {
				return false, err.Error()
			}
			return hn.UID != orphan.UID || hn.DeletionTimestamp != nil, fmt.Sprintf("uid %s, deletion %v", hn.UID, hn.DeletionTimestamp)
		})
	})

	t.Run("a Namespace deleted right after its create leaves nothing", func(t *testing.T) {
		// The syncer reconciles a Namespace created through its own
		// replica before its watch cache shows it; one deleted at once
		// must not keep what that reconcile made.
		const n = 8
		for i := range n {
			ns := fmt.Sprintf("blink-%d", i)
			if _, err := member.TenantV1alpha1().Namespaces().Create(ctx, namespaceObject(ns), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := member.TenantV1alpha1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range n {
			h := hostnames.Namespace(name, tn.UID, fmt.Sprintf("blink-%d", i))
			eventually(ctx, t, syncTimeout, "host namespace "+h+" gone", func(ctx context.Context) (bool, string) {
				hn, err := host.CoreV1().Namespaces().Get(ctx, h, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					return true, "gone"
				}
				if err != nil {
					return false, err.Error()
				}
				return hn.DeletionTimestamp != nil, fmt.Sprintf("uid %s, not being deleted", hn.UID)
			})
		}
	})

	// After all this, everything is as it should be.
	waitHostState(ctx, t, admin, member, name, syncTimeout)
	waitTenantReady(ctx, t, admin, name)
}

// TestLeaderFailover runs a second tenant-apiserver against the same etcd
// and host, SIGKILLs whichever of the two leads the syncer right after a
// burst of tenant Namespace creates and deletes, makes more through the
// survivor while it takes over, and checks that the survivor takes the
// Lease and that every tenant Namespace then has exactly one host
// namespace, with nothing lost, duplicated or left behind.
func TestLeaderFailover(t *testing.T) {
	ctx := framework.Context(t, 10*time.Minute)
	s := theStack()
	host, _ := hostClients(t)
	admin := tenantClient(t, stack.AdminUser)
	member := tenantClient(t, failoverUser)
	name := uniqueName(t)
	onboard(ctx, t, tenantSpec{name: name, users: []string{failoverUser}, publicIPs: 1, namespaces: 50})

	// So far only the stack's tenant-apiserver ran: the live holder is it.
	primaryID := waitLiveHolder(ctx, t, host, "", slowTimeout)
	t.Logf("the stack's tenant-apiserver holds the syncer Lease as %q", primaryID)

	replica, err := s.StartTenantAPIServerReplica(ctx, "tenant-apiserver-2")
	if err != nil {
		t.Fatal(err)
	}
	// Later tests need the stack's own tenant-apiserver (the APIService
	// points at it) leading alone.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if s.PID("tenant-apiserver") == 0 {
			if err := s.StartTenantAPIServer(ctx); err != nil {
				t.Errorf("cleanup: restarting the tenant-apiserver: %v", err)
			}
		}
		if err := replica.Stop(); err != nil {
			t.Errorf("cleanup: stopping the replica: %v", err)
		}
	})

	ns := func(i int) string { return fmt.Sprintf("f%02d", i) }
	create := func(cs clientset.Interface, i int) {
		t.Helper()
		if _, err := cs.TenantV1alpha1().Namespaces().Create(ctx, namespaceObject(ns(i)), metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating tenant Namespace %s: %v", ns(i), err)
		}
	}
	remove := func(cs clientset.Interface, i int) {
		t.Helper()
		if err := cs.TenantV1alpha1().Namespaces().Delete(ctx, ns(i), metav1.DeleteOptions{}); err != nil {
			t.Fatalf("deleting tenant Namespace %s: %v", ns(i), err)
		}
	}

	// Ten Namespaces on the host, with two replicas running.
	for i := 0; i < 10; i++ {
		create(member, i)
	}
	waitHostState(ctx, t, admin, member, name, syncTimeout)
	if holder, _, err := syncerLease(ctx, host); err != nil {
		t.Fatal(err)
	} else if holder != primaryID {
		t.Logf("the replica took the Lease meanwhile: %q", holder)
	}

	// A burst the leader is still working on when it dies.
	for i := 10; i < 20; i++ {
		create(member, i)
	}
	for i := 0; i < 5; i++ {
		remove(member, i)
	}
	holder, _, err := syncerLease(ctx, host)
	if err != nil {
		t.Fatal(err)
	}
	var survivor func(user string, groups ...string) *rest.Config
	killedPrimary := holder == primaryID
	if killedPrimary {
		if err := s.KillTenantAPIServer(); err != nil {
			t.Fatal(err)
		}
		survivor = replica.DirectConfig
		t.Logf("killed the stack's tenant-apiserver (leader %q)", holder)
	} else {
		if err := replica.Kill(); err != nil {
			t.Fatal(err)
		}
		survivor = s.DirectTenantConfig
		t.Logf("killed the replica (leader %q)", holder)
	}
	killed := time.Now()

	// More changes while nobody leads, through the survivor.
	survivorMember := tenantClientFor(t, survivor(failoverUser))
	survivorAdmin := tenantClientFor(t, survivor(stack.AdminUser))
	for i := 20; i < 25; i++ {
		create(survivorMember, i)
	}
	remove(survivorMember, 5)
	remove(survivorMember, 6)

	newHolder := waitLiveHolder(ctx, t, host, holder, slowTimeout)
	t.Logf("Lease held by %q %s after the kill (lease duration %s)", newHolder, time.Since(killed).Round(100*time.Millisecond), framework.SyncerLeaseDuration)

	_, nss := waitHostState(ctx, t, survivorAdmin, survivorMember, name, slowTimeout)
	want := []string{defaultNamespace}
	for i := 7; i < 25; i++ {
		want = append(want, ns(i))
	}
	sort.Strings(want)
	if got := namespaceNames(nss); !slices.Equal(got, want) {
		t.Errorf("tenant Namespaces %v, want %v", got, want)
	}

	// The killed one comes back, the replica goes: the stack's own
	// tenant-apiserver leads again and sees the same host.
	if s.PID("tenant-apiserver") == 0 {
		if err := s.StartTenantAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := replica.Stop(); err != nil {
		t.Fatal(err)
	}
	replicaID := holder
	if killedPrimary {
		replicaID = newHolder
	}
	final := waitLiveHolder(ctx, t, host, replicaID, slowTimeout)
	t.Logf("Lease finally held by %q", final)
	waitHostState(ctx, t, admin, member, name, syncTimeout)
	waitTenantReady(ctx, t, admin, name)
}

// TestHostOutage stops the host kube-apiserver: the tenant API keeps
// serving reads and writes, a Namespace created meanwhile says it is not on
// the host, and once the host is back it is.
func TestHostOutage(t *testing.T) {
	ctx := framework.Context(t, 8*time.Minute)
	s := theStack()
	admin := tenantClient(t, stack.AdminUser)
	name := uniqueName(t)
	onboard(ctx, t, tenantSpec{name: name, users: []string{outageUser}, publicIPs: 1})

	// Talk to the tenant-apiserver directly, as the aggregator would: the
	// aggregator is part of the host kube-apiserver, which is about to stop.
	// The tenant-apiserver authorizes every request with a
	// SubjectAccessReview to the host, except for group system:masters,
	// which delegated authorization allows without asking; with the host
	// down, only such callers can be served, so the member is in it here
	// (its tenant still comes from its membership of the Tenant).
	direct := tenantClientFor(t, s.DirectTenantConfig(outageUser, "system:masters"))
	directAdmin := tenantClientFor(t, s.DirectTenantConfig(stack.AdminUser, "system:masters"))
	if list, err := direct.TenantV1alpha1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	} else if got := namespaceNames(list.Items); !slices.Equal(got, []string{defaultNamespace}) {
		t.Fatalf("tenant Namespaces through the direct client: %v, want [default]", got)
	}

	framework.StartHostOnCleanup(t, s)
	if err := s.StopHost(); err != nil {
		t.Fatal(err)
	}

	// Reads and writes still work.
	if _, err := direct.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Errorf("reading the Tenant with the host down: %v", err)
	}
	if list, err := direct.TenantV1alpha1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing tenant Namespaces with the host down: %v", err)
	} else if got := namespaceNames(list.Items); !slices.Equal(got, []string{defaultNamespace}) {
		t.Errorf("tenant Namespaces with the host down: %v, want [default]", got)
	}
	if _, err := direct.TenantV1alpha1().Namespaces().Create(ctx, namespaceObject("offline"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a tenant Namespace with the host down: %v", err)
	}
	eventually(ctx, t, syncTimeout, "tenant Namespace offline: HostSynced False (HostUnreachable or NotSynced)", func(ctx context.Context) (bool, string) {
		ns, err := direct.TenantV1alpha1().Namespaces().Get(ctx, "offline", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(ns.Status.Conditions, tenantv1alpha1.ConditionHostSynced)
		return c != nil && c.Status == metav1.ConditionFalse && (c.Reason == "HostUnreachable" || c.Reason == "NotSynced"), describeNamespace(ns)
	})
	if ns, err := direct.TenantV1alpha1().Namespaces().Get(ctx, "offline", metav1.GetOptions{}); err == nil {
		t.Logf("with the host down: tenant Namespace offline: %s", describeNamespace(ns))
	}
	if list, err := direct.TenantV1alpha1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing tenant Namespaces with the host down: %v", err)
	} else if got := namespaceNames(list.Items); !slices.Equal(got, []string{defaultNamespace, "offline"}) {
		t.Errorf("tenant Namespaces with the host down: %v, want [default offline]", got)
	}
	if s.PID("tenant-apiserver") == 0 {
		t.Fatalf("the tenant-apiserver died with the host down")
	}

	// The host comes back and everything converges.
	if err := s.StartHost(ctx); err != nil {
		t.Fatal(err)
	}
	waitHostState(ctx, t, directAdmin, direct, name, slowTimeout)
	waitTenantReady(ctx, t, directAdmin, name)
	// And the aggregated API serves again.
	waitNamespaceSynced(ctx, t, tenantClient(t, outageUser), "offline")
	waitTenantReady(ctx, t, admin, name)
}

// TestOffboarding deletes a Tenant: refused with 409 while a pod runs in
// its host namespace and it holds a FloatingIP, with the same blockers in
// the offboarding report; once they are gone, the Tenant, its tenant
// objects, every host object with its label and every address it held go.
func TestOffboarding(t *testing.T) {
	ctx := framework.Context(t, 8*time.Minute)
	s := theStack()
	admin := tenantClient(t, stack.AdminUser)
	member := tenantClient(t, offboardUser)
	host, dyn := hostClients(t)

	before := poolFree(ctx, t, admin)
	t.Logf("free addresses before: %v", before)
	name := uniqueName(t)
	tn := onboard(ctx, t, tenantSpec{name: name, users: []string{offboardUser}, publicIPs: 2})

	kubectlCreate(ctx, t, offboardUser, namespaceObject("dev"))
	dev := waitNamespaceSynced(ctx, t, member, "dev")
	devHost := dev.Status.HostNamespace
	def := waitNamespaceSynced(ctx, t, member, defaultNamespace)

	// A pod on the host (nothing schedules it: it stays Pending) and a
	// FloatingIP.
	pod := restrictedPod(devHost, "web")
	eventually(ctx, t, syncTimeout, "pod web created in "+devHost, func(ctx context.Context) (bool, string) {
		// Until kube-controller-manager made the namespace's default
		// ServiceAccount, admission refuses pods.
		_, err := host.CoreV1().Pods(devHost).Create(ctx, pod, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
	})
	zero := int64(0)
	t.Cleanup(func() {
		_ = host.CoreV1().Pods(devHost).Delete(context.Background(), "web", metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
	fip := &tenantv1alpha1.FloatingIP{
		TypeMeta:   metav1.TypeMeta{APIVersion: tenantv1alpha1.SchemeGroupVersion.String(), Kind: "FloatingIP"},
		ObjectMeta: metav1.ObjectMeta{Name: "fip1", Namespace: "dev"},
		Spec:       tenantv1alpha1.FloatingIPSpec{Ports: []tenantv1alpha1.FloatingIPPort{{Port: 22, Protocol: tenantv1alpha1.ProtocolTCP}}},
	}
	kubectlCreate(ctx, t, offboardUser, fip)
	t.Cleanup(func() {
		_ = member.TenantV1alpha1().FloatingIPs("dev").Delete(context.Background(), "fip1", metav1.DeleteOptions{})
	})
	blockers := []string{"floatingips dev/fip1", "pods dev/web"}
	// The tenant's requests to the host are one flow of their own.
	eventually(ctx, t, syncTimeout, "FlowSchema tenant.io-"+name, func(ctx context.Context) (bool, string) {
		_, err := host.FlowcontrolV1().FlowSchemas().Get(ctx, "tenant.io-"+name, metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})

	// The report names both (it may take a moment to see the pod).
	var report tenantv1alpha1.OffboardingReport
	eventually(ctx, t, syncTimeout, "offboarding report naming "+strings.Join(blockers, ", "), func(ctx context.Context) (bool, string) {
		var state string
		report, state = rawReport(ctx, t, name)
		return slices.Equal(reportBlockers(report), blockers), state
	})
	if report.Tenant != name || report.Ready {
		t.Errorf("offboarding report: tenant %q ready %v, want %q and false", report.Tenant, report.Ready, name)
	}
	if got, err := admin.TenantV1alpha1().Tenants().GetOffboarding(ctx, name, metav1.GetOptions{}); err != nil {
		t.Errorf("GetOffboarding: %v", err)
	} else if got.Tenant != name || got.Ready || !slices.Equal(reportBlockers(*got), blockers) {
		t.Errorf("GetOffboarding: %+v, want tenant %s not ready with blockers %v", got, name, blockers)
	}

	// DELETE is refused, with the same blockers.
	_, stderr, err := s.Kubectl(ctx, stack.AdminUser, "delete", "tenants.tenant.io", name, "--wait=false")
	if err == nil || !strings.Contains(stderr, "Conflict") {
		t.Errorf("kubectl delete tenant %s: err=%v, stderr %q; want a Conflict", name, err, stderr)
	}
	err = admin.TenantV1alpha1().Tenants().Delete(ctx, name, metav1.DeleteOptions{})
	st := apiStatus(t, "deleting tenant "+name, err)
	if got := sortedCopy(causeFields(st)); st.Code != 409 || !slices.Equal(got, blockers) {
		t.Errorf("deleting tenant %s: HTTP %d, causes %v, want 409 with %v (%+v)", name, st.Code, got, blockers, st)
	}
	if got, err := admin.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if got.DeletionTimestamp != nil {
		t.Fatalf("tenant %s is being deleted after a refused delete: %s", name, describeTenant(got))
	}

	// Its Namespace dev cannot go either: the pod is in it.
	err = member.TenantV1alpha1().Namespaces().Delete(ctx, "dev", metav1.DeleteOptions{})
	st = apiStatus(t, "deleting tenant Namespace dev", err)
	if st.Code != 409 || !slices.Contains(causeFields(st), "pods dev/web") {
		t.Errorf("deleting tenant Namespace dev: HTTP %d, causes %v, want 409 naming pods dev/web (%+v)", st.Code, causeFields(st), st)
	}
	if _, _, err := s.Kubectl(ctx, offboardUser, "delete", "namespaces.tenant.io", "dev", "--wait=false"); err == nil || !strings.Contains(err.Error(), "Conflict") {
		t.Errorf("kubectl delete namespaces.tenant.io dev: %v, want a Conflict", err)
	}

	// Clear the way.
	if err := host.CoreV1().Pods(devHost).Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, syncTimeout, "pod web gone", func(ctx context.Context) (bool, string) {
		_, err := host.CoreV1().Pods(devHost).Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	kubectl(ctx, t, offboardUser, "-n", "dev", "delete", "floatingips.tenant.io", "fip1")
	eventually(ctx, t, syncTimeout, "offboarding report ready", func(ctx context.Context) (bool, string) {
		var state string
		report, state = rawReport(ctx, t, name)
		return report.Ready && len(report.Blockers) == 0, state
	})

	// DELETE is accepted; the Tenant terminates, then goes.
	kubectl(ctx, t, stack.AdminUser, "delete", "tenants.tenant.io", name, "--wait=false")
	if got, err := admin.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{}); err == nil && got.DeletionTimestamp == nil {
		t.Errorf("tenant %s right after an accepted delete: no deletionTimestamp (%s)", name, describeTenant(got))
	} else if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	eventually(ctx, t, slowTimeout, "tenant "+name+" gone", func(ctx context.Context) (bool, string) {
		got, err := admin.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "gone"
		}
		if err != nil {
			return false, err.Error()
		}
		return false, describeTenant(got)
	})

	// Nothing of it is left on the host.
	sel := metav1.ListOptions{LabelSelector: labels.Set{hostnames.TenantLabel: name}.String()}
	if list, err := host.CoreV1().Namespaces().List(ctx, sel); err != nil {
		t.Fatal(err)
	} else if len(list.Items) > 0 {
		var left []string
		for _, n := range list.Items {
			left = append(left, fmt.Sprintf("%s (deletion %v)", n.Name, n.DeletionTimestamp))
		}
		t.Errorf("host namespaces of tenant %s left: %v", name, left)
	}
	if list, err := host.FlowcontrolV1().FlowSchemas().List(ctx, sel); err != nil {
		t.Fatal(err)
	} else if len(list.Items) > 0 {
		t.Errorf("FlowSchema of tenant %s left: %s", name, list.Items[0].Name)
	}
	if list, err := host.RbacV1().RoleBindings(metav1.NamespaceAll).List(ctx, sel); err != nil {
		t.Fatal(err)
	} else if len(list.Items) > 0 {
		var left []string
		for _, rb := range list.Items {
			left = append(left, rb.Namespace+"/"+rb.Name)
		}
		t.Errorf("RoleBindings of tenant %s left: %v", name, left)
	}
	for _, gvr := range []schema.GroupVersionResource{poolGVR, l2GVR} {
		list, err := dyn.Resource(gvr).Namespace(metav1.NamespaceAll).List(ctx, sel)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range list.Items {
			t.Errorf("%s of tenant %s left: %s/%s", gvr.Resource, name, o.GetNamespace(), o.GetName())
		}
	}
	// Nor does the pool of its public IPs, whatever its labels.
	if _, err := dyn.Resource(poolGVR).Namespace(stack.MetalLBNamespace).Get(ctx, hostnames.MetalLBPool(name, tn.UID), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("IPAddressPool %s: %v, want NotFound", hostnames.MetalLBPool(name, tn.UID), err)
	}

	// And its addresses are free again.
	eventually(ctx, t, syncTimeout, fmt.Sprintf("AddressPools back to their free counts %v", before), func(ctx context.Context) (bool, string) {
		var state []string
		done := true
		for pool, free := range before {
			p, err := admin.TenantV1alpha1().AddressPools().Get(ctx, pool, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			state = append(state, fmt.Sprintf("%s: %+v", pool, p.Status))
			done = done && p.Status.Free == free
		}
		return done, strings.Join(state, "; ")
	})

	// Its tenant objects went with it: a new Tenant of the same name starts
	// afresh, with a Namespace default of its own and nothing else.
	again := onboard(ctx, t, tenantSpec{name: name, users: []string{offboardUser}})
	if again.UID == tn.UID {
		t.Fatalf("the re-created tenant %s has the old UID %s", name, tn.UID)
	}
	eventually(ctx, t, syncTimeout, "the re-created tenant's Namespaces", func(ctx context.Context) (bool, string) {
		list, err := member.TenantV1alpha1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var got []string
		for _, ns := range list.Items {
			got = append(got, fmt.Sprintf("%s (uid %s)", ns.Name, ns.UID))
		}
		return len(list.Items) == 1 && list.Items[0].Name == defaultNamespace && list.Items[0].UID != def.UID,
			fmt.Sprintf("%v; the old ones were default (uid %s) and dev (uid %s)", got, def.UID, dev.UID)
	})
}

// rawReport reads the offboarding report of tenant name with kubectl get
// --raw, and describes what it read.
func rawReport(ctx context.Context, t *testing.T, name string) (tenantv1alpha1.OffboardingReport, string) {
	t.Helper()
	var r tenantv1alpha1.OffboardingReport
	out, _, err := theStack().Kubectl(ctx, stack.AdminUser, "get", "--raw", "/apis/tenant.io/v1alpha1/tenants/"+name+"/offboarding")
	if err != nil {
		return r, err.Error()
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		return r, fmt.Sprintf("decoding %q: %v", out, err)
	}
	return r, out
}

// reportBlockers lists the blockers of a report as "<resource> <ns>/<name>",
// sorted, the way the causes of a refused delete name them.
func reportBlockers(r tenantv1alpha1.OffboardingReport) []string {
	var out []string
	for _, b := range r.Blockers {
		ref := b.Name
		if b.Namespace != "" {
			ref = b.Namespace + "/" + b.Name
		}
		out = append(out, b.Resource+" "+ref)
	}
	sort.Strings(out)
	return out
}
