package network

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	cncv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/clusternetworkconnect/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/controller/controllertest"
	"tenant.io/tenant-apiserver/pkg/syncer/hostkinds"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

// serviceNetworkTest is one controller over fakes, with two tenants whose
// Networks the test adds and changes.
type serviceNetworkTest struct {
	t       *testing.T
	src     *controller.Sources
	fakes   *controllertest.Fakes
	c       *Controller
	subnets *controllertest.Subnets
}

func newServiceNetworkTest(t *testing.T, tenants ...*tenant.Tenant) *serviceNetworkTest {
	t.Helper()
	src, fakes := controllertest.NewSources(t)
	subnets := controllertest.NewSubnets()
	src.Storage.ConnectSubnets = subnets
	c, err := New(src, hostkinds.New(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range tenants {
		fakes.Tenants.Put("", "", tn)
		controllertest.Cache(t, src.Tenants, tn.Name, "", tn)
	}
	return &serviceNetworkTest{t: t, src: src, fakes: fakes, c: c, subnets: subnets}
}

// put stores and caches Network name of tn as the registry would have it
// (subnet assigned), with serviceNetwork mode; a Network stored before
// keeps its status.
func (s *serviceNetworkTest) put(tn *tenant.Tenant, name, subnet string, mode tenant.ServiceNetworkMode) {
	s.t.Helper()
	n := &tenant.Network{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(tn.Name + "-" + name), Generation: 1, Labels: map[string]string{hostnames.TenantLabel: tn.Name}},
		Spec:       tenant.NetworkSpec{Topology: tenant.NetworkTopologyLayer2, Subnets: []string{subnet}},
	}
	if stored, ok := s.fakes.Networks.Stored(tn.Name, "", name).(*tenant.Network); ok {
		n = stored
		n.Generation++
	}
	n.Spec.ServiceNetwork = mode
	s.fakes.Networks.Put(tn.Name, "", n)
	controllertest.Cache(s.t, s.src.Networks, tn.Name, "", n)
}

// reconcile reconciles key; a requeue is no failure.
func (s *serviceNetworkTest) reconcile(key queue.Key) {
	s.t.Helper()
	var requeue *controller.RequeueError
	if err := s.c.Reconcile(context.Background(), key); err != nil && !errors.As(err, &requeue) {
		s.t.Fatalf("reconcile %s: %v", key, err)
	}
}

// sync reconciles tenant tn's Networks, then its service network, then
// its Networks again (their conditions read what the service network found).
func (s *serviceNetworkTest) sync(tn *tenant.Tenant, networks ...string) {
	s.t.Helper()
	for _, n := range networks {
		s.reconcile(queue.Key{Tenant: tn.Name, Name: n})
	}
	s.waitCUDNs(tn, networks...)
	s.reconcile(queue.Key{Tenant: tn.Name})
	for _, n := range networks {
		s.reconcile(queue.Key{Tenant: tn.Name, Name: n})
	}
}

// waitCUDNs waits until the informer shows the host networks of tn's
// networks as the fake host has them.
func (s *serviceNetworkTest) waitCUDNs(tn *tenant.Tenant, networks ...string) {
	s.t.Helper()
	for _, n := range networks {
		name := hostnames.ClusterUserDefinedNetwork(tn.UID, n)
		want, err := s.fakes.UDN.K8sV1().ClusterUserDefinedNetworks().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			s.t.Fatal(err)
		}
		controllertest.Eventually(s.t, "the informer has host network "+name, func() bool {
			obj, exists, _ := s.src.HostCUDNs.GetStore().GetByKey(name)
			return exists && apiequality.Semantic.DeepEqual(obj.(metav1.Object).GetLabels(), want.Labels)
		})
	}
}

// waitConnect waits until the informer shows tn's service network's
// connection as present or gone, as the fake host has it.
func (s *serviceNetworkTest) waitConnect(tn *tenant.Tenant) {
	s.t.Helper()
	name := hostnames.ServiceNetworkConnect(tn.UID)
	want, err := s.fakes.Dynamic.Resource(controller.ClusterNetworkConnects).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		s.t.Fatal(err)
	}
	controllertest.Eventually(s.t, "the informer has ClusterNetworkConnect "+name+" as the host has it", func() bool {
		obj, exists, _ := s.src.HostClusterNetworkConnects.GetStore().GetByKey(name)
		if want == nil || err != nil {
			return !exists
		}
		// The fake host gives no resourceVersions: compare what matters.
		have, _ := obj.(*unstructured.Unstructured)
		return exists && apiequality.Semantic.DeepEqual(have.Object["spec"], want.Object["spec"]) &&
			apiequality.Semantic.DeepEqual(have.Object["status"], want.Object["status"]) &&
			apiequality.Semantic.DeepEqual(have.GetAnnotations(), want.GetAnnotations())
	})
}

func (s *serviceNetworkTest) connect(tn *tenant.Tenant) (*cncv1.ClusterNetworkConnect, bool) {
	s.t.Helper()
	u, err := s.fakes.Dynamic.Resource(controller.ClusterNetworkConnects).Get(context.Background(), hostnames.ServiceNetworkConnect(tn.UID), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		s.t.Fatal(err)
	}
	var cnc cncv1.ClusterNetworkConnect
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cnc); err != nil {
		s.t.Fatal(err)
	}
	return &cnc, true
}

// attach puts a Namespace of tn on its Network network, and has
// OVN-Kubernetes render the network into its host namespace.
func (s *serviceNetworkTest) attach(tn *tenant.Tenant, network string) {
	s.t.Helper()
	ns := &tenant.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "on-" + network, UID: types.UID(tn.Name + "-on-" + network), Labels: map[string]string{hostnames.TenantLabel: tn.Name}},
		Spec: tenant.NamespaceSpec{Network: network}}
	controllertest.Cache(s.t, s.src.Namespaces, tn.Name, "", ns)
	hostNS, cudn := hostnames.Namespace(tn.Name, tn.UID, ns.Name), hostnames.ClusterUserDefinedNetwork(tn.UID, network)
	controllertest.Render(s.t, s.fakes, hostNS, cudn)
	controllertest.Eventually(s.t, "the informer has the attachment", func() bool { return s.src.Attached(hostNS, cudn) })
}

// report writes OVN-Kubernetes' report on tn's connection: its Accepted
// condition and, in the annotation where cluster-manager records the
// slices it gave, connected networks. The test plays cluster-manager,
// which does not run here.
func (s *serviceNetworkTest) report(tn *tenant.Tenant, status metav1.ConditionStatus, message string, connected int) {
	s.t.Helper()
	client := s.fakes.Dynamic.Resource(controller.ClusterNetworkConnects)
	u, err := client.Get(context.Background(), hostnames.ServiceNetworkConnect(tn.UID), metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	slices := map[string]interface{}{}
	for i := 0; i < connected; i++ {
		slices[fmt.Sprintf("layer2_%d", i+1)] = map[string]string{"ipv4": fmt.Sprintf("100.72.0.%d/31", 2*i)}
	}
	given, err := json.Marshal(slices)
	if err != nil {
		s.t.Fatal(err)
	}
	annotations := u.GetAnnotations()
	annotations[hostkinds.ConnectSubnetAnnotation] = string(given)
	u.SetAnnotations(annotations)
	if u, err = client.Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		s.t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(u.Object, []interface{}{map[string]interface{}{
		"type": hostkinds.ConnectAcceptedCondition, "status": string(status), "reason": "ResourceAllocation", "message": message,
		"lastTransitionTime": "2026-01-01T00:00:00Z",
	}}, "status", "conditions"); err != nil {
		s.t.Fatal(err)
	}
	if _, err := client.UpdateStatus(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		s.t.Fatal(err)
	}
	s.waitConnect(tn)
}

// condition is the ServicesShared condition of tn's Network n, as stored.
func (s *serviceNetworkTest) condition(tn *tenant.Tenant, n string) *metav1.Condition {
	s.t.Helper()
	stored := s.fakes.Networks.Stored(tn.Name, "", n).(*tenant.Network)
	return meta.FindStatusCondition(stored.Status.Conditions, tenant.ConditionServicesShared)
}

func (s *serviceNetworkTest) wantCondition(tn *tenant.Tenant, n string, status metav1.ConditionStatus, reason string) {
	s.t.Helper()
	c := s.condition(tn, n)
	if status == "" {
		if c != nil {
			s.t.Fatalf("%s/%s: ServicesShared %+v, want none", tn.Name, n, c)
		}
		return
	}
	if c == nil || c.Status != status || c.Reason != reason {
		s.t.Fatalf("%s/%s: ServicesShared %+v, want %s/%s", tn.Name, n, c, status, reason)
	}
}

// selected returns the host networks cnc's selectors select among every
// ClusterUserDefinedNetwork of the fake host.
func (s *serviceNetworkTest) selected(cnc *cncv1.ClusterNetworkConnect) []string {
	s.t.Helper()
	cudns, err := s.fakes.UDN.K8sV1().ClusterUserDefinedNetworks().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	var out []string
	for _, sel := range cnc.Spec.NetworkSelectors {
		ls, err := metav1.LabelSelectorAsSelector(&sel.ClusterUserDefinedNetworkSelector.NetworkSelector)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, n := range cudns.Items {
			if ls.Matches(labels.Set(n.Labels)) {
				out = append(out, n.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

func cudnNames(tn *tenant.Tenant, networks ...string) []string {
	var out []string
	for _, n := range networks {
		out = append(out, hostnames.ClusterUserDefinedNetwork(tn.UID, n))
	}
	sort.Strings(out)
	return out
}

// TestReconcileServiceNetwork follows one tenant's service network over
// fakes: none while one Network is Shared; one ClusterNetworkConnect
// (Service connectivity only, a subnet of its own) selecting exactly the
// tenant's two Shared networks once a second is, and never another
// tenant's, which shares too; the Networks' ServicesShared conditions
// following OVN-Kubernetes' report (written by the test, in
// cluster-manager's place); a Network set back to Private taking the
// connection down and its subnet back; and the Tenant's going removing it.
func TestReconcileServiceNetwork(t *testing.T) {
	acme := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "acme-uid"}}
	globex := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "globex", UID: "globex-uid"}}
	s := newServiceNetworkTest(t, acme, globex)
	s.put(acme, "default", "10.42.0.0/24", "")
	s.put(acme, "blue", "10.42.1.0/24", tenant.ServiceNetworkShared)
	s.put(acme, "red", "10.42.2.0/24", tenant.ServiceNetworkPrivate)

	// One Shared network: nothing to connect.
	s.sync(acme, "default", "blue", "red")
	if _, ok := s.connect(acme); ok {
		t.Fatal("a connection for one Shared network")
	}
	s.wantCondition(acme, "blue", metav1.ConditionFalse, ReasonNoOtherSharedNetwork)
	s.wantCondition(acme, "default", "", "")
	if n := s.subnets.Holds(string(acme.UID)); n != 0 {
		t.Fatalf("acme holds %d connect subnets with one Shared network", n)
	}

	// Two: the connection, not accepted yet.
	s.put(acme, "default", "10.42.0.0/24", tenant.ServiceNetworkShared)
	s.sync(acme, "default", "blue", "red")
	cnc, ok := s.connect(acme)
	if !ok {
		t.Fatal("no connection for two Shared networks")
	}
	if got, want := s.selected(cnc), cudnNames(acme, "default", "blue"); !slices.Equal(got, want) {
		t.Fatalf("the connection selects %v, want acme's Shared networks %v", got, want)
	}
	if !slices.Equal(cnc.Spec.Connectivity, []cncv1.ConnectivityType{cncv1.ServiceNetwork}) ||
		len(cnc.Spec.ConnectSubnets) != 1 || cnc.Spec.ConnectSubnets[0].CIDR != "100.72.0.0/24" || cnc.Spec.ConnectSubnets[0].NetworkPrefix != 28 {
		t.Fatalf("connection spec %+v", cnc.Spec)
	}
	if !ServiceNetworkMarks(acme, "").On(cnc) || cnc.Labels[hostnames.ConnectLabel] != "" {
		t.Fatalf("connection labels %v annotations %v", cnc.Labels, cnc.Annotations)
	}
	// Neither network is on a namespace yet: OVN-Kubernetes has nothing to connect.
	s.wantCondition(acme, "blue", metav1.ConditionFalse, ReasonNoNamespaces)
	s.wantCondition(acme, "default", metav1.ConditionFalse, ReasonNoNamespaces)
	s.wantCondition(acme, "red", "", "")
	s.attach(acme, "default")
	s.attach(acme, "blue")
	s.sync(acme, "default", "blue")
	s.wantCondition(acme, "blue", metav1.ConditionFalse, ReasonConnectPending)

	// Accepted by OVN-Kubernetes, one network connected so far, then both.
	s.report(acme, metav1.ConditionTrue, "All validation checks passed successfully", 1)
	s.sync(acme, "default", "blue")
	s.wantCondition(acme, "default", metav1.ConditionFalse, ReasonConnectPending)
	if c := s.condition(acme, "default"); !containsAll(c.Message, "connected 1 of the 2") {
		t.Fatalf("ServicesShared message %q", c.Message)
	}
	s.report(acme, metav1.ConditionTrue, "All validation checks passed successfully", 2)
	s.sync(acme, "default", "blue")
	s.wantCondition(acme, "blue", metav1.ConditionTrue, ReasonServicesConnected)
	if c := s.condition(acme, "blue"); !containsAll(c.Message, "default", cnc.Name, "100.72.0.0/24") {
		t.Fatalf("ServicesShared message %q", c.Message)
	}

	// Another tenant shares too: a connection of its own, never acme's networks.
	s.put(globex, "default", "10.42.0.0/24", tenant.ServiceNetworkShared)
	s.put(globex, "blue", "10.42.1.0/24", tenant.ServiceNetworkShared)
	s.sync(globex, "default", "blue")
	other, ok := s.connect(globex)
	if !ok {
		t.Fatal("no connection for globex")
	}
	if got, want := s.selected(other), cudnNames(globex, "default", "blue"); !slices.Equal(got, want) {
		t.Fatalf("globex's connection selects %v, want %v", got, want)
	}
	if got, want := s.selected(cnc), cudnNames(acme, "default", "blue"); !slices.Equal(got, want) {
		t.Fatalf("with globex sharing, acme's connection selects %v, want %v", got, want)
	}
	if other.Spec.ConnectSubnets[0].CIDR == cnc.Spec.ConnectSubnets[0].CIDR {
		t.Fatalf("acme and globex share connect subnet %s", other.Spec.ConnectSubnets[0].CIDR)
	}

	// Refused by OVN-Kubernetes: the networks say why.
	s.report(acme, metav1.ConditionFalse, "selected networks have overlapping subnets", 2)
	s.sync(acme, "default", "blue")
	s.wantCondition(acme, "default", metav1.ConditionFalse, ReasonConnectFailed)
	if c := s.condition(acme, "default"); !containsAll(c.Message, "overlapping subnets") {
		t.Fatalf("ServicesShared message %q", c.Message)
	}

	// Drift: a selector edited on the host is put back.
	client := s.fakes.Dynamic.Resource(controller.ClusterNetworkConnects)
	u, err := client.Get(context.Background(), cnc.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(u.Object, []interface{}{map[string]interface{}{
		"networkSelectionType": "ClusterUserDefinedNetworks",
		"clusterUserDefinedNetworkSelector": map[string]interface{}{"networkSelector": map[string]interface{}{
			"matchLabels": map[string]interface{}{hostnames.ConnectGroupLabel: hostnames.TenantConnectGroup("globex")}}},
	}}, "spec", "networkSelectors"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitConnect(acme)
	s.reconcile(queue.Key{Tenant: acme.Name})
	if cnc, _ = s.connect(acme); !slices.Equal(s.selected(cnc), cudnNames(acme, "default", "blue")) {
		t.Fatalf("the edited selector was not repaired: selects %v", s.selected(cnc))
	}

	// One back to Private: the connection goes, then its subnet.
	s.put(acme, "blue", "10.42.1.0/24", tenant.ServiceNetworkPrivate)
	s.sync(acme, "default", "blue")
	if _, ok := s.connect(acme); ok {
		t.Fatal("the connection outlives the second Shared network")
	}
	if blue, _ := s.fakes.UDN.K8sV1().ClusterUserDefinedNetworks().Get(context.Background(), hostnames.ClusterUserDefinedNetwork(acme.UID, "blue"), metav1.GetOptions{}); blue.Labels[hostnames.ServiceNetworkLabel] != "" {
		t.Fatalf("a Private network keeps the service network label: %v", blue.Labels)
	}
	s.waitConnect(acme)
	s.reconcile(queue.Key{Tenant: acme.Name})
	if n := s.subnets.Holds(string(acme.UID)); n != 0 {
		t.Fatalf("acme still holds %d connect subnets", n)
	}
	s.reconcile(queue.Key{Tenant: acme.Name, Name: "default"})
	s.reconcile(queue.Key{Tenant: acme.Name, Name: "blue"})
	s.wantCondition(acme, "default", metav1.ConditionFalse, ReasonNoOtherSharedNetwork)
	s.wantCondition(acme, "blue", "", "")

	// Globex leaves: its connection goes (its subnets go back with the
	// Tenant, in the registry).
	if err := s.src.Tenants.GetStore().Delete(globex); err != nil {
		t.Fatal(err)
	}
	s.reconcile(queue.Key{Tenant: globex.Name})
	if _, ok := s.connect(globex); ok {
		t.Fatal("the connection of a Tenant that is gone is still there")
	}
}

// TestServiceNetworkWithoutSubnet: with the ConnectSubnets pools full, no
// connection is made, the networks say why, and the tenant looks again.
func TestServiceNetworkWithoutSubnet(t *testing.T) {
	acme := &tenant.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "acme-uid"}}
	s := newServiceNetworkTest(t, acme)
	s.subnets.Full = true
	s.put(acme, "default", "10.42.0.0/24", tenant.ServiceNetworkShared)
	s.put(acme, "blue", "10.42.1.0/24", tenant.ServiceNetworkShared)
	s.sync(acme, "default", "blue")
	s.attach(acme, "blue")
	var requeue *controller.RequeueError
	if err := s.c.Reconcile(context.Background(), queue.Key{Tenant: acme.Name}); !errors.As(err, &requeue) {
		t.Fatalf("reconcile without a subnet: %v, want a requeue", err)
	}
	if _, ok := s.connect(acme); ok {
		t.Fatal("a connection without a subnet")
	}
	s.wantCondition(acme, "blue", metav1.ConditionFalse, ReasonNoConnectSubnet)
	if c := s.condition(acme, "blue"); !containsAll(c.Message, "no free block") {
		t.Fatalf("ServicesShared message %q", c.Message)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
