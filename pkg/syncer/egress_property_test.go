package syncer_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	egressipv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	klabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
	"tenant.io/tenant-apiserver/pkg/syncer/floatingip"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/network"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// egressEnv is a tenant with two Namespaces on one Network with a NAT
// gateway, their host namespaces with plain pods and the launcher pods of
// VirtualMachines, and the FloatingIP controller over fakes.
type egressEnv struct {
	t      *testing.T
	c      *floatingip.Controller
	src    *controller.Sources
	fakes  *controllertest.Fakes
	tn     *tenant.Tenant
	hostNS map[string]string
	nat    *egressipv1.EgressIP
	fips   map[queue.Key]*tenant.FloatingIP
	now    time.Time
	serial int
}

var (
	egressNamespaces = []string{"dev", "qa"}
	egressPods       = []string{"p0", "p1"}
	egressVMs        = []string{"v0", "v1"}
)

func newEgressEnv(t *testing.T) *egressEnv {
	src, fakes := controllertest.NewSources(t)
	c, err := floatingip.New(src, hostkinds.New(src), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go src.HostVirtualMachines.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), src.HostVirtualMachines.HasSynced) {
		t.Fatal("VirtualMachines informer did not sync")
	}
	tn := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "tenant-uid"}}
	n := &tenant.Network{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: tenant.NetworkSpec{NATGateway: &tenant.NATGateway{Enabled: true}}}
	e := &egressEnv{t: t, c: c, src: src, fakes: fakes, tn: tn, hostNS: map[string]string{},
		nat: network.NATGatewayEgressIP(tn, n, "203.0.113.2"), fips: map[queue.Key]*tenant.FloatingIP{}, now: time.Unix(1e9, 0)}
	for i, name := range egressNamespaces {
		ns := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("ns-uid-" + name)}, Spec: tenant.NamespaceSpec{Network: "default"}}
		if i == 0 {
			controllertest.Onboard(t, src, fakes, tn, ns)
		} else {
			controllertest.Cache(t, src.Namespaces, tn.Name, "", ns)
		}
		h := controllertest.MakeHostNamespace(t, src, fakes, tn, ns)
		e.hostNS[name] = h
		for _, p := range egressPods {
			e.createPod(h, p, nil)
		}
		for _, vm := range egressVMs {
			e.createVM(h, vm)
			e.createPod(h, "virt-launcher-"+vm+"-0", map[string]string{hostnames.VirtualMachineLabel: vm})
		}
	}
	e.settle()
	return e
}

func (e *egressEnv) createPod(hostNS, name string, l map[string]string) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: hostNS, Name: name, Labels: l}}
	if _, err := e.fakes.Kube.CoreV1().Pods(hostNS).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *egressEnv) createVM(hostNS, name string) {
	vm := &unstructured.Unstructured{}
	vm.SetAPIVersion("kubevirt.io/v1")
	vm.SetKind("VirtualMachine")
	vm.SetNamespace(hostNS)
	vm.SetName(name)
	if _, err := e.fakes.Dynamic.Resource(controller.VirtualMachines).Namespace(hostNS).Create(context.Background(), vm, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// change makes one random change: a FloatingIP created, retargeted (to a
// Pod or a VM, sometimes one another FloatingIP has, as two creates
// racing past the registry's check would), untargeted or deleted; or a
// VM's launcher pod replaced (a restart).
func (e *egressEnv) change(r *rand.Rand) string {
	ns := egressNamespaces[r.IntN(len(egressNamespaces))]
	if r.IntN(6) == 0 {
		vm := egressVMs[r.IntN(len(egressVMs))]
		h := e.hostNS[ns]
		pods, err := e.fakes.Kube.CoreV1().Pods(h).List(context.Background(), metav1.ListOptions{LabelSelector: hostnames.VirtualMachineLabel + "=" + vm})
		if err != nil {
			e.t.Fatal(err)
		}
		for _, p := range pods.Items {
			if err := e.fakes.Kube.CoreV1().Pods(h).Delete(context.Background(), p.Name, metav1.DeleteOptions{}); err != nil {
				e.t.Fatal(err)
			}
		}
		e.serial++
		e.createPod(h, fmt.Sprintf("virt-launcher-%s-%d", vm, e.serial), map[string]string{hostnames.VirtualMachineLabel: vm})
		return fmt.Sprintf("VM %s/%s restarted", ns, vm)
	}
	key := queue.Key{Tenant: e.tn.Name, Namespace: ns, Name: fmt.Sprintf("fip%d", r.IntN(3))}
	fip := e.fips[key]
	if fip != nil && r.IntN(4) == 0 {
		delete(e.fips, key)
		e.fakes.FloatingIPs.Remove(key.Tenant, key.Namespace, key.Name)
		controllertest.Uncache(e.t, e.src.FloatingIPs, key.Tenant, key.Namespace, key.Name)
		return "deleted " + key.String()
	}
	if fip == nil {
		e.serial++
		e.now = e.now.Add(time.Second)
		fip = &tenant.FloatingIP{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns, UID: types.UID(fmt.Sprintf("fip-uid-%d", e.serial)),
				CreationTimestamp: metav1.NewTime(e.now), Labels: map[string]string{hostnames.TenantLabel: e.tn.Name}},
			Status: tenant.FloatingIPStatus{Address: fmt.Sprintf("203.0.113.%d", 10+e.serial%200)},
		}
		e.fips[key] = fip
	}
	switch r.IntN(3) {
	case 0:
		fip.Spec.Target = &tenant.FloatingIPTarget{Kind: tenant.FloatingIPTargetPod, Name: egressPods[r.IntN(len(egressPods))]}
	case 1:
		fip.Spec.Target = &tenant.FloatingIPTarget{Kind: tenant.FloatingIPTargetVirtualMachine, Name: egressVMs[r.IntN(len(egressVMs))]}
	default:
		fip.Spec.Target = nil
	}
	e.fakes.FloatingIPs.Put(key.Tenant, key.Namespace, fip)
	controllertest.Cache(e.t, e.src.FloatingIPs, key.Tenant, key.Namespace, fip)
	return fmt.Sprintf("%s targets %+v", key, fip.Spec.Target)
}

// reconcile runs the controller on key, as its worker would.
func (e *egressEnv) reconcile(key queue.Key) {
	var requeue *controller.RequeueError
	if err := e.c.Reconcile(context.Background(), key); err != nil && !errors.As(err, &requeue) {
		e.t.Fatalf("reconcile %s: %v", key, err)
	}
}

// keys are every FloatingIP the controller knows of, deleted ones too.
func (e *egressEnv) keys() []queue.Key {
	var keys []queue.Key
	for _, ns := range egressNamespaces {
		for i := 0; i < 3; i++ {
			keys = append(keys, queue.Key{Tenant: e.tn.Name, Namespace: ns, Name: fmt.Sprintf("fip%d", i)})
		}
	}
	return keys
}

// settle waits until the host informers hold what the fakes do: the
// labels that matter, of every pod. (The fake's watch does not filter by
// label, so the informers may also hold pods without their label.)
func (e *egressEnv) settle() {
	e.t.Helper()
	labelled := map[cache.SharedIndexInformer]string{e.src.HostTargetPods: hostnames.FloatingIPTargetLabel, e.src.HostLauncherPods: hostnames.VirtualMachineLabel}
	controllertest.Eventually(e.t, "host informers current", func() bool {
		for _, h := range e.hostNS {
			pods, err := e.fakes.Kube.CoreV1().Pods(h).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return false
			}
			live := map[string]map[string]string{}
			for _, p := range pods.Items {
				live[p.Name] = p.Labels
				for inf, key := range labelled {
					obj, exists, _ := inf.GetStore().GetByKey(h + "/" + p.Name)
					cached := ""
					if exists {
						cached = controller.LabelsOf(obj)[key]
					}
					if cached != p.Labels[key] {
						return false
					}
				}
			}
			for inf, key := range labelled {
				objs, _ := inf.GetIndexer().ByIndex(cache.NamespaceIndex, h)
				for _, obj := range objs {
					m := obj.(metav1.Object)
					if v := m.GetLabels()[key]; v != "" && (live[m.GetName()] == nil || live[m.GetName()][key] != v) {
						return false
					}
				}
			}
		}
		eips, err := e.fakes.EgressIP.K8sV1().EgressIPs().List(context.Background(), metav1.ListOptions{})
		return err == nil && len(eips.Items) == len(e.src.HostEgressIPs.GetStore().List())
	})
}

// matches names the EgressIPs on the host that select pod p of hostNS,
// the NAT gateway's included.
func (e *egressEnv) matches(hostNS string, p *corev1.Pod) []string {
	eips, err := e.fakes.EgressIP.K8sV1().EgressIPs().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	all := append([]egressipv1.EgressIP{*e.nat}, eips.Items...)
	var out []string
	for _, eip := range all {
		podSel, err := metav1.LabelSelectorAsSelector(&eip.Spec.PodSelector)
		if err != nil {
			e.t.Fatal(err)
		}
		// The NAT gateway's selects every host namespace of the
		// Network; a FloatingIP's, its own.
		if name := eip.Spec.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"]; name != "" && name != hostNS {
			continue
		}
		if podSel.Matches(klabels.Set(p.Labels)) {
			out = append(out, eip.Name)
		}
	}
	sort.Strings(out)
	return out
}

// check fails the test unless every pod matches exactly one EgressIP:
// when converged, the one it should (its FloatingIP's, the older one's
// if two target it, else the NAT gateway's); before, any one (a pod
// matching two would leave from a random one of their addresses).
func (e *egressEnv) check(converged bool, history []string) {
	e.t.Helper()
	for _, ns := range egressNamespaces {
		h := e.hostNS[ns]
		pods, err := e.fakes.Kube.CoreV1().Pods(h).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			got := e.matches(h, p)
			if len(got) != 1 {
				e.t.Fatalf("pod %s/%s matches %d EgressIPs %v\nafter %v", h, p.Name, len(got), got, history)
			}
			if !converged {
				continue
			}
			want := e.nat.Name
			if f := e.binder(ns, p); f != nil {
				want = hostnames.FloatingIPEgressIP(e.tn.UID, ns, f.Name)
			}
			if got[0] != want {
				e.t.Fatalf("converged: pod %s/%s leaves through %s, want %s\nafter %v", h, p.Name, got[0], want, history)
			}
		}
	}
}

// binder is the FloatingIP that should bind pod p of Namespace ns: the
// oldest of those whose target it is.
func (e *egressEnv) binder(ns string, p *corev1.Pod) *tenant.FloatingIP {
	var best *tenant.FloatingIP
	for key, f := range e.fips {
		tg := f.Spec.Target
		if key.Namespace != ns || tg == nil {
			continue
		}
		if (tg.Kind == tenant.FloatingIPTargetPod && p.Name == tg.Name) ||
			(tg.Kind == tenant.FloatingIPTargetVirtualMachine && p.Labels[hostnames.VirtualMachineLabel] == tg.Name) {
			if best == nil || f.CreationTimestamp.Before(&best.CreationTimestamp) ||
				(f.CreationTimestamp.Equal(&best.CreationTimestamp) && f.Name < best.Name) {
				best = f
			}
		}
	}
	return best
}

// TestFloatingIPAndNATEgressProperty is a property of the FloatingIP
// controller over random sequences of FloatingIP changes and VM restarts:
// no pod ever matches two EgressIPs (the NAT gateway's selects the pods
// without the binding label, a FloatingIP's those with its UID), even
// while the controller runs on stale caches; and once it has caught up,
// every pod a FloatingIP targets leaves through that FloatingIP's
// EgressIP and every other pod through the NAT gateway's. It holds
// between two controllers (the NAT gateway's EgressIP is the network
// controller's), so it is checked here, where the syncer runs both.
func TestFloatingIPAndNATEgressProperty(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, seed*7919))
			e := newEgressEnv(t)
			var history []string
			for step := 0; step < 25; step++ {
				history = append(history, e.change(r))
				// Some reconciles on whatever the caches hold.
				keys := e.keys()
				r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
				for _, key := range keys[:r.IntN(len(keys))] {
					e.reconcile(key)
					e.check(false, history)
				}
				// Then caught up: every key, on current caches, twice.
				for round := 0; round < 2; round++ {
					e.settle()
					for _, key := range e.keys() {
						e.reconcile(key)
						e.check(false, history)
					}
				}
				e.settle()
				e.check(true, history)
			}
		})
	}
}
