package syncer

// The tests of this file hold the tenant API's Network validation against
// the host's ClusterUserDefinedNetwork CRD, whose OpenAPI schema and CEL
// rules (artifacts/host-crds) are the real ones of the pinned
// OVN-Kubernetes: whatever the tenant API accepts, the host must accept as
// the CUDN the syncer builds from it, or the tenant learns of the mistake
// only later, from a HostSynced=False condition; and whatever the host
// would refuse, the tenant API refuses first, with 422 and the field at
// fault.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	udnv1 "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	udnclientset "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1/apis/clientset/versioned"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/apiserver"
	clientset "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/pkg/syncer/network"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

const (
	// celBlock is the block of the tenants of this file: a /16, so that a
	// subnet can lie inside it without being all of it, and far from the
	// /24s the other tests' tenants get from the bottom of the demo pool.
	celBlock = "10.77.0.0/16"
	// celNetworkQuota is the Network quota of those tenants: the update
	// cases keep a Network each, and a dry run must never meet the quota.
	celNetworkQuota = 32
	// propertySeed seeds TestNetworksAcceptedByHost's generator, so that a
	// failure can be replayed.
	propertySeed = 0x7e4a1c2d
	// propertySpecs is how many specs TestNetworksAcceptedByHost tries.
	propertySpecs = 300
	// minAcceptedShare is the share of generated specs the tenant API must
	// accept, so that the property cannot hold vacuously.
	minAcceptedShare = 0.25
)

// dryRunAll makes a write a server-side dry run.
var dryRunAll = []string{metav1.DryRunAll}

// conflictBackoff paces the retries of an update that met a newer version
// of its object.
var conflictBackoff = wait.Backoff{Steps: 20, Duration: 50 * time.Millisecond, Factor: 1.5, Cap: 2 * time.Second}

// celEnv is a tenant of celUser with block celBlock, and the clients the
// checks of this file use.
type celEnv struct {
	// tenant is the Tenant, internal, as network.ClusterUserDefinedNetwork takes it.
	tenant *tenant.Tenant
	block  netip.Prefix
	// member acts as celUser, i.e. as the tenant.
	member clientset.Interface
	// udn is the host's OVN-Kubernetes client, as the provider admin.
	udn udnclientset.Interface
}

// ---------------------------------------------------------------------------
// What the host would refuse, the tenant API refuses first

// invalidCreate is a Network spec the tenant API must refuse on creation.
type invalidCreate struct {
	name string
	spec tenantv1alpha1.NetworkSpec
	// field is a field of the 422's causes.
	field string
	// host is part of the message with which the host refuses the
	// ClusterUserDefinedNetwork built from spec as is; empty when the host
	// would accept it, for the reason in stricter.
	host     string
	stricter string
	// kubectl also tries the create with kubectl, to see what a user sees.
	kubectl bool
}

// invalidUpdate is a change of a valid Network the tenant API must refuse.
type invalidUpdate struct {
	name   string
	base   tenantv1alpha1.NetworkSpec
	mutate func(*tenantv1alpha1.NetworkSpec)
	field  string
	// host is part of the message with which the host refuses the same
	// change of the ClusterUserDefinedNetwork; empty when it would accept
	// it, for the reason in stricter.
	host     string
	stricter string
	// kubectlPatch, when set, is also tried as a merge patch with kubectl.
	kubectlPatch string
}

func celMTU(v int32) *int32 { return &v }

func layer2Spec(mtu *int32, subnets ...string) tenantv1alpha1.NetworkSpec {
	return tenantv1alpha1.NetworkSpec{Topology: tenantv1alpha1.NetworkTopologyLayer2, Subnets: subnets, MTU: mtu}
}

func layer3Spec(mtu *int32, subnets ...string) tenantv1alpha1.NetworkSpec {
	return tenantv1alpha1.NetworkSpec{Topology: tenantv1alpha1.NetworkTopologyLayer3, Subnets: subnets, MTU: mtu}
}

// TestNetworkValidationComesFirst tries Network specs the host's CUDN CRD
// would refuse (and some only our API refuses) through the tenant API: each
// must be refused with 422 and the field at fault, leave no
// ClusterUserDefinedNetwork on the host, and, where the spec can be written
// as a CUDN at all, the CUDN built from it as is must be refused by the host
// too (a dry run), which proves that the host would have refused it later.
func TestNetworkValidationComesFirst(t *testing.T) {
	ctx := framework.Context(t, 10*time.Minute)
	env := onboardCEL(ctx, t, false)
	networks := env.member.TenantV1alpha1().Networks()

	// A Network whose subnet the others must not overlap.
	taken := createCELNetwork(ctx, t, env, "taken", layer2Spec(nil, "10.77.8.0/24"))

	var seventeen []string
	for i := range 17 {
		seventeen = append(seventeen, fmt.Sprintf("10.77.%d.0/24", 64+i))
	}
	creates := []invalidCreate{
		{name: "layer2 with two IPv4 subnets", spec: layer2Spec(nil, "10.77.1.0/24", "10.77.2.0/24"), field: "spec.subnets",
			host: "must be from different IP families", kubectl: true},
		{name: "layer2 with three subnets", spec: layer2Spec(nil, "10.77.1.0/24", "10.77.2.0/24", "10.77.3.0/24"), field: "spec.subnets",
			host: "must have at most 2 items"},
		{name: "mtu 575", spec: layer2Spec(celMTU(575), "10.77.1.0/24"), field: "spec.mtu",
			host: "should be greater than or equal to 576", kubectl: true},
		{name: "mtu 65537", spec: layer2Spec(celMTU(65537), "10.77.1.0/24"), field: "spec.mtu",
			host: "should be less than or equal to 65536"},
		{name: "layer3 mtu 575", spec: layer3Spec(celMTU(575), "10.77.1.0/24"), field: "spec.mtu",
			host: "should be greater than or equal to 576"},
		{name: "layer3 mtu 65537", spec: layer3Spec(celMTU(65537), "10.77.1.0/24"), field: "spec.mtu",
			host: "should be less than or equal to 65536"},
		{name: "negative mtu", spec: layer2Spec(celMTU(-1), "10.77.1.0/24"), field: "spec.mtu",
			host: "should be greater than or equal to 576"},
		{name: "layer3 overlapping subnets", spec: layer3Spec(nil, "10.77.0.0/20", "10.77.1.0/24"), field: "spec.subnets[1]",
			host: "Subnets must not overlap or contain each other"},
		{name: "layer3 duplicate subnet", spec: layer3Spec(nil, "10.77.1.0/24", "10.77.1.0/24"), field: "spec.subnets[1]",
			host: "Subnets with same CIDR are not allowed"},
		{name: "ipv6 subnet with mtu 1000", spec: layer2Spec(celMTU(1000), "fd00:77::/64"), field: "spec.subnets[0]",
			host: "MTU should be greater than or equal to 1280 when IPv6 subnet is used"},
		{name: "ipv4-mapped ipv6 subnet", spec: layer3Spec(nil, "::ffff:10.77.1.0/120"), field: "spec.subnets[0]",
			host: "CIDR is invalid"},
		{name: "layer3 /31 subnet", spec: layer3Spec(nil, "10.77.1.0/31"), field: "spec.subnets[0]",
			host: "HostSubnet must < 32 for ipv4 CIDR"},
		{name: "layer3 /32 subnet", spec: layer3Spec(nil, "10.77.1.1/32"), field: "spec.subnets[0]",
			host: "HostSubnet must < 32 for ipv4 CIDR"},
		{name: "leading zeros", spec: layer2Spec(nil, "010.77.1.0/24"), field: "spec.subnets[0]", host: "CIDR is invalid"},
		{name: "no prefix length", spec: layer2Spec(nil, "10.77.1.0"), field: "spec.subnets[0]", host: "CIDR is invalid"},
		{name: "trailing space", spec: layer3Spec(nil, "10.77.1.0/24 "), field: "spec.subnets[0]", host: "CIDR is invalid"},
		{name: "empty subnet", spec: layer2Spec(nil, ""), field: "spec.subnets[0]", host: "CIDR is invalid"},
		{name: "subnet longer than 43 characters", spec: layer2Spec(nil, "10.77.1.0/24,10.77.2.0/24,10.77.3.0/24,10.77.4.0/24"),
			field: "spec.subnets[0]", host: "Too long"},
		{name: "topology Localnet", spec: tenantv1alpha1.NetworkSpec{Topology: "Localnet", Subnets: []string{"10.77.1.0/24"}},
			field: "spec.topology", host: "spec.localnet is required when topology is Localnet"},
		{name: "topology in lower case", spec: tenantv1alpha1.NetworkSpec{Topology: "layer2", Subnets: []string{"10.77.1.0/24"}},
			field: "spec.topology", host: `Unsupported value: "layer2"`},

		// Only we refuse these: the host cannot know the tenant's block or
		// its other Networks, and our API is IPv4 and canonical only.
		{name: "ipv6 subnet", spec: layer3Spec(nil, "fd00:77::/64"), field: "spec.subnets[0]",
			stricter: "Networks are IPv4 only; the host takes an IPv6 subnet"},
		{name: "layer2 /31 subnet", spec: layer2Spec(nil, "10.77.1.0/31"), field: "spec.subnets[0]",
			stricter: "subnets are /8 to /30; a Layer2 /31 is a valid CUDN"},
		{name: "layer3 /7 subnet", spec: layer3Spec(nil, "10.0.0.0/7"), field: "spec.subnets[0]",
			stricter: "subnets are /8 to /30; a Layer3 /7 cut into /24s is a valid CUDN"},
		{name: "host bits set", spec: layer2Spec(nil, "10.77.1.5/24"), field: "spec.subnets[0]",
			stricter: "subnets are canonical; the host's isCIDR() takes host bits"},
		{name: "mtu 0", spec: layer2Spec(celMTU(0), "10.77.1.0/24"), field: "spec.mtu",
			stricter: "an MTU of 0 is refused; the CUDN omits it (omitempty) and the host takes that"},
		{name: "layer3 with 17 subnets", spec: layer3Spec(nil, seventeen...), field: "spec.subnets",
			stricter: "a Network has at most 16 subnets; a Layer3 CUDN takes 400"},
		{name: "subnet outside the block", spec: layer2Spec(nil, "10.78.0.0/24"), field: "spec.subnets[0]",
			stricter: "the host does not know the tenant's block", kubectl: true},
		{name: "subnet containing the block", spec: layer3Spec(nil, "10.0.0.0/8"), field: "spec.subnets[0]",
			stricter: "the host does not know the tenant's block"},
		{name: "subnet of another Network", spec: layer2Spec(nil, "10.77.8.0/25"), field: "spec.subnets[0]",
			stricter: "the host does not compare the subnets of different CUDNs"},
		{name: "block overlapping another Network", spec: layer3Spec(nil, celBlock), field: "spec.subnets[0]",
			stricter: "the host does not compare the subnets of different CUDNs"},
	}

	var refused []string
	for i, c := range creates {
		name := fmt.Sprintf("bad-%02d", i)
		refused = append(refused, name)
		t.Run("create/"+c.name, func(t *testing.T) {
			obj := &tenantv1alpha1.Network{
				TypeMeta:   metav1.TypeMeta{APIVersion: tenantv1alpha1.SchemeGroupVersion.String(), Kind: "Network"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec:       c.spec,
			}
			// (a) 422 with the field at fault.
			_, err := networks.Create(ctx, obj.DeepCopy(), metav1.CreateOptions{})
			requireInvalid(t, "creating Network "+describeNetworkSpec(c.spec), err, c.field)
			if c.kubectl {
				requireKubectlInvalid(ctx, t, name, c.field, "create", "-f", writeJSON(t, obj))
			}
			if _, err := networks.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("Network %s after its refused creation: %v, want NotFound", name, err)
			}

			// (c) The host would have refused it too.
			if c.host == "" {
				t.Logf("the host would accept this CUDN; only we refuse it: %s", c.stricter)
				return
			}
			cudn := naiveCUDN(t, env, obj)
			_, err = env.udn.K8sV1().ClusterUserDefinedNetworks().Create(ctx, cudn, metav1.CreateOptions{DryRun: dryRunAll})
			requireHostRefuses(t, cudn, err, c.host)
		})
	}

	updates := []invalidUpdate{
		{name: "topology Layer2 to Layer3", base: layer2Spec(nil, "10.77.16.0/24"),
			mutate: func(s *tenantv1alpha1.NetworkSpec) { s.Topology = tenantv1alpha1.NetworkTopologyLayer3 },
			field:  "spec.topology", host: "Topology is immutable", kubectlPatch: `{"spec":{"topology":"Layer3"}}`},
		{name: "topology Layer3 to Layer2", base: layer3Spec(nil, "10.77.20.0/22"),
			mutate: func(s *tenantv1alpha1.NetworkSpec) { s.Topology = tenantv1alpha1.NetworkTopologyLayer2 },
			field:  "spec.topology", host: "Topology is immutable"},
		{name: "layer2 subnet changed", base: layer2Spec(nil, "10.77.24.0/24"),
			mutate: func(s *tenantv1alpha1.NetworkSpec) { s.Subnets = []string{"10.77.25.0/24"} },
			field:  "spec.subnets", host: "Layer2 is immutable", kubectlPatch: `{"spec":{"subnets":["10.77.25.0/24"]}}`},
		{name: "layer3 subnet replaced", base: layer3Spec(nil, "10.77.32.0/20"),
			mutate: func(s *tenantv1alpha1.NetworkSpec) { s.Subnets = []string{"10.77.48.0/20"} },
			field:  "spec.subnets", host: "Removing existing subnets is not allowed"},
		{name: "layer2 mtu changed", base: layer2Spec(celMTU(1400), "10.77.26.0/24"),
			mutate: func(s *tenantv1alpha1.NetworkSpec) { s.MTU = celMTU(1500) },
			field:  "spec.mtu", host: "Layer2 is immutable", kubectlPatch: `{"spec":{"mtu":1500}}`},
		{name: "layer2 mtu set", base: layer2Spec(nil, "10.77.27.0/24"),
			mutate: func(s *tenantv1alpha1.NetworkSpec) { s.MTU = celMTU(1400) },
			field:  "spec.mtu", host: "Layer2 is immutable"},
		{name: "layer3 mtu changed", base: layer3Spec(celMTU(1400), "10.77.96.0/20"),
			mutate: func(s *tenantv1alpha1.NetworkSpec) { s.MTU = celMTU(9000) },
			field:  "spec.mtu", host: "mtu is immutable"},

		// Only we refuse these.
		{name: "layer3 subnet added", base: layer3Spec(nil, "10.77.64.0/20"),
			mutate: func(s *tenantv1alpha1.NetworkSpec) { s.Subnets = append(s.Subnets, "10.77.80.0/20") },
			field:  "spec.subnets", stricter: "subnets are immutable; a Layer3 CUDN may gain subnets"},
		{name: "layer3 mtu removed", base: layer3Spec(celMTU(1400), "10.77.112.0/20"),
			mutate: func(s *tenantv1alpha1.NetworkSpec) { s.MTU = nil },
			field:  "spec.mtu", stricter: "the mtu is immutable; the host's rule only compares two set values"},
		{name: "layer3 mtu set", base: layer3Spec(nil, "10.77.128.0/20"),
			mutate: func(s *tenantv1alpha1.NetworkSpec) { s.MTU = celMTU(1400) },
			field:  "spec.mtu", stricter: "the mtu is immutable; the host's rule only compares two set values"},
	}

	kept := []*tenantv1alpha1.Network{taken}
	for i, u := range updates {
		name := fmt.Sprintf("upd-%02d", i)
		t.Run("update/"+u.name, func(t *testing.T) {
			stored := createCELNetwork(ctx, t, env, name, u.base)
			kept = append(kept, stored)

			// (a) 422 with the field at fault, and the Network as it was.
			// The syncer writes the new Network's status meanwhile: an
			// update that meets a newer version is tried again on it.
			var bad *tenantv1alpha1.Network
			err := retry.OnError(conflictBackoff, apierrors.IsConflict, func() error {
				cur, err := networks.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				bad = cur.DeepCopy()
				u.mutate(&bad.Spec)
				_, err = networks.Update(ctx, bad.DeepCopy(), metav1.UpdateOptions{})
				return err
			})
			if bad == nil {
				t.Fatalf("reading Network %s: %v", name, err)
			}
			requireInvalid(t, fmt.Sprintf("updating Network %s from %s to %s", name, describeNetworkSpec(stored.Spec), describeNetworkSpec(bad.Spec)), err, u.field)
			if u.kubectlPatch != "" {
				requireKubectlInvalid(ctx, t, name, u.field, "patch", "networks.tenant.io", name, "--type=merge", "-p", u.kubectlPatch)
			}
			after, err := networks.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if after.Generation != stored.Generation || !apiequality.Semantic.DeepEqual(after.Spec, stored.Spec) {
				t.Errorf("Network %s after a refused update: generation %d, spec %s; want generation %d, spec %s",
					name, after.Generation, describeNetworkSpec(after.Spec), stored.Generation, describeNetworkSpec(stored.Spec))
			}

			// (c) The host would refuse the same change of the CUDN: make a
			// CUDN of the stored Network under a name and selector of its
			// own (the syncer's is not ours to touch), and try the change
			// on it as a dry run.
			if u.host == "" {
				t.Logf("the host would accept this change of the CUDN; only we refuse it: %s", u.stricter)
				return
			}
			cudns := env.udn.K8sV1().ClusterUserDefinedNetworks()
			old := scratchCUDN(t, naiveCUDN(t, env, stored))
			created, err := cudns.Create(ctx, old, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("the host refuses the CUDN of the valid Network %s: %v", describeNetworkSpec(stored.Spec), err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				// Not before cluster-manager has reported on it: one
				// deleted while cluster-manager was still taking it in
				// stayed in its namespace controller's view, which then
				// failed on every new namespace (no
				// NetworkAttachmentDefinition for a minute).
				_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
					cur, err := cudns.Get(ctx, created.Name, metav1.GetOptions{})
					return err != nil || len(cur.Status.Conditions) > 0, nil
				})
				if err := cudns.Delete(ctx, created.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					t.Logf("cleanup: deleting CUDN %s: %v", created.Name, err)
				}
			})
			changed := scratchCUDN(t, naiveCUDN(t, env, bad))
			changed.Name = created.Name
			changed.Spec.NamespaceSelector = created.Spec.NamespaceSelector
			// OVN-Kubernetes' cluster-manager writes the CUDN too (its
			// finalizer, its status): the change goes onto its latest
			// version.
			err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur, err := cudns.Get(ctx, created.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				changed.ResourceVersion, changed.Finalizers = cur.ResourceVersion, cur.Finalizers
				_, err = cudns.Update(ctx, changed, metav1.UpdateOptions{DryRun: dryRunAll})
				return err
			})
			requireHostRefuses(t, changed, err, u.host)
		})
	}

	// (b) Nothing of the refused writes reached the host. Refused writes
	// store nothing the syncer could act on; to look at the host after the
	// syncer has caught up with this tenant, wait until it shows the CUDN of
	// every Network kept, as the stored Network is, not as the refused
	// update wanted it.
	eventually(ctx, t, syncTimeout, "the host CUDNs of the Networks kept, as stored", func(ctx context.Context) (bool, string) {
		var problems []string
		for _, n := range kept {
			problems = append(problems, hostCUDNProblems(ctx, env, n)...)
		}
		return len(problems) == 0, strings.Join(problems, "; ")
	})
	for _, name := range refused {
		list, err := env.udn.K8sV1().ClusterUserDefinedNetworks().List(ctx, metav1.ListOptions{LabelSelector: networkHostSelector(env, name)})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range list.Items {
			t.Errorf("the host has CUDN %s for the refused Network %s: %s", c.Name, name, describeHostCUDN(&c))
		}
	}
}

// requireInvalid fails t unless err is a 422 Invalid one of whose causes is field.
func requireInvalid(t *testing.T, what string, err error, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: accepted, want 422 Invalid on %s", what, field)
	}
	st := apiStatus(t, what, err)
	if st.Code != 422 || st.Reason != metav1.StatusReasonInvalid {
		t.Fatalf("%s: %d %s (%s), want 422 Invalid on %s", what, st.Code, st.Reason, st.Message, field)
	}
	if fields := causeFields(st); !slices.Contains(fields, field) {
		t.Fatalf("%s: 422 with cause fields %q (%s), want %s among them", what, fields, st.Message, field)
	}
	t.Logf("tenant API: %s", st.Message)
}

// requireKubectlInvalid runs kubectl args as celUser and fails t unless it
// fails the way a user should see a 422 on Network name: the object is
// invalid, and why, at field.
func requireKubectlInvalid(ctx context.Context, t *testing.T, name, field string, args ...string) {
	t.Helper()
	out, stderr, err := theStack().Kubectl(ctx, celUser, args...)
	if err == nil {
		t.Fatalf("kubectl %s: succeeded (%s), want it refused", strings.Join(args, " "), out)
	}
	for _, want := range []string{fmt.Sprintf("The Network %q is invalid", name), field + ": "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("kubectl %s: stderr %q, want it to contain %q", strings.Join(args, " "), stderr, want)
		}
	}
	t.Logf("kubectl: %s", strings.TrimSpace(stderr))
}

// requireHostRefuses fails t unless err is the host's 422 for cudn with a
// message containing want.
func requireHostRefuses(t *testing.T, cudn *udnv1.ClusterUserDefinedNetwork, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("the host accepts CUDN %s, want it refused with %q", describeHostCUDN(cudn), want)
	}
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("the host answers CUDN %s with %v, want 422 Invalid with %q", describeHostCUDN(cudn), err, want)
	}
	t.Logf("host: %v", err)
}

// naiveCUDN is the CUDN the syncer would build from obj as it is, not
// validated: defaulted and converted as the tenant-apiserver does.
func naiveCUDN(t *testing.T, env *celEnv, obj *tenantv1alpha1.Network) *udnv1.ClusterUserDefinedNetwork {
	t.Helper()
	obj = obj.DeepCopy()
	apiserver.Scheme.Default(obj)
	var in tenant.Network
	if err := apiserver.Scheme.Convert(obj, &in, nil); err != nil {
		t.Fatal(err)
	}
	if in.UID == "" {
		in.UID = uuid.NewUUID()
	}
	return network.ClusterUserDefinedNetwork(env.tenant, &in)
}

// scratchCUDN makes cudn one of this test's own: a name no tenant Network
// maps to, no tenant marks, and a selector no namespace matches.
func scratchCUDN(t *testing.T, cudn *udnv1.ClusterUserDefinedNetwork) *udnv1.ClusterUserDefinedNetwork {
	t.Helper()
	cudn.Name = "celtest-" + randomHex(t, 3)
	cudn.Labels, cudn.Annotations = nil, nil
	cudn.Spec.NamespaceSelector = metav1.LabelSelector{MatchLabels: map[string]string{"tenant.io/cel-scratch": cudn.Name}}
	return cudn
}

// createCELNetwork creates Network name with spec as the tenant and returns it as stored.
func createCELNetwork(ctx context.Context, t *testing.T, env *celEnv, name string, spec tenantv1alpha1.NetworkSpec) *tenantv1alpha1.Network {
	t.Helper()
	n, err := env.member.TenantV1alpha1().Networks().Create(ctx, &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Network %s %s: %v", name, describeNetworkSpec(spec), err)
	}
	return n
}

// networkHostSelector selects the host objects of the tenant's Network name.
func networkHostSelector(env *celEnv, name string) string {
	return labels.Set{hostnames.TenantLabel: env.tenant.Name, hostnames.NetworkLabel: name}.String()
}

// hostCUDNProblems lists how the host differs from exactly one CUDN for
// Network n, with the spec the builder makes of n.
func hostCUDNProblems(ctx context.Context, env *celEnv, n *tenantv1alpha1.Network) []string {
	list, err := env.udn.K8sV1().ClusterUserDefinedNetworks().List(ctx, metav1.ListOptions{LabelSelector: networkHostSelector(env, n.Name)})
	if err != nil {
		return []string{err.Error()}
	}
	if len(list.Items) != 1 {
		var names []string
		for _, c := range list.Items {
			names = append(names, c.Name)
		}
		return []string{fmt.Sprintf("Network %s: host CUDNs %v, want exactly one", n.Name, names)}
	}
	var in tenant.Network
	if err := apiserver.Scheme.Convert(n, &in, nil); err != nil {
		return []string{err.Error()}
	}
	want := network.ClusterUserDefinedNetwork(env.tenant, &in)
	got := &list.Items[0]
	if got.Name != want.Name || !apiequality.Semantic.DeepEqual(got.Spec, want.Spec) {
		return []string{fmt.Sprintf("Network %s: host CUDN %s, want %s", n.Name, describeHostCUDN(got), describeHostCUDN(want))}
	}
	return nil
}

// ---------------------------------------------------------------------------
// What the tenant API accepts, the host accepts

// TestNetworksAcceptedByHost submits propertySpecs generated Network specs
// as dry runs through the tenant API, and checks that the host accepts the
// ClusterUserDefinedNetwork of every one the tenant API accepts.
func TestNetworksAcceptedByHost(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	env := onboardCEL(ctx, t, true)
	r := mathrand.New(mathrand.NewPCG(propertySeed, propertySeed>>1))
	t.Logf("seed %#x, block %s", propertySeed, env.block)

	start := time.Now()
	var accepted, filledIn int
	refusals := map[string]int{}
	problems := map[string][]string{}
	for i := range propertySpecs {
		name := fmt.Sprintf("prop-%03d", i)
		if i%50 == 49 {
			// The longest name: it becomes a label value on the host.
			name = name + "-" + strings.Repeat("x", 63-len(name)-1)
		}
		spec := randomNetworkSpec(r, env.block)
		res := checkNetworkAcceptedByHost(ctx, env, name, spec)
		if res.accepted {
			accepted++
		} else {
			refusals[indexless(res.refusal)]++
		}
		if res.filledIn {
			filledIn++
		}
		for _, p := range res.problems {
			problems[p.kind] = append(problems[p.kind], p.msg)
		}
	}
	elapsed := time.Since(start)

	t.Logf("%d specs in %s: %d accepted, %d refused", propertySpecs, elapsed.Round(time.Millisecond), accepted, propertySpecs-accepted)
	for _, k := range sortedMapKeys(refusals) {
		t.Logf("  refused %3d times on %s", refusals[k], k)
	}
	if filledIn > 0 {
		t.Logf("%d accepted specs came back without subnets (the registry does not default them yet): the check gave them %s itself", filledIn, firstSlash24(env.block))
	}
	for _, kind := range sortedMapKeys(problems) {
		msgs := problems[kind]
		for _, m := range msgs[:min(len(msgs), 10)] {
			t.Errorf("%s: %s", kind, m)
		}
		if len(msgs) > 10 {
			t.Errorf("%s: and %d more", kind, len(msgs)-10)
		}
	}
	if share := float64(accepted) / propertySpecs; share < minAcceptedShare {
		t.Errorf("the tenant API accepted %d of %d specs (%.0f%%), want at least %.0f%%: the generator no longer tests the property",
			accepted, propertySpecs, 100*share, 100*minAcceptedShare)
	}
}

// fuzzNetworks numbers the Networks of FuzzNetworkAcceptedByHost.
var fuzzNetworks atomic.Int64

// FuzzNetworkAcceptedByHost is TestNetworksAcceptedByHost's property for
// fuzzed specs: topology, comma-separated subnets, an MTU and a NAT gateway
// that is off. Its seeds cover each topology and the edges (MTU 576 and
// 65536, /30, /8, the whole block celBlock). Run with -fuzz, each worker
// process starts a stack of its own.
func FuzzNetworkAcceptedByHost(f *testing.F) {
	for _, s := range []struct {
		topology, subnets string
		hasMTU            bool
		mtu               int32
		natGateway        bool
	}{
		{"Layer2", "10.77.1.0/24", false, 0, false},
		{"Layer3", "10.77.16.0/20,10.77.32.0/20", true, 1400, true},
		{"", "", false, 0, false},
		{"Layer2", "", true, 9000, false},
		{"Layer3", "", false, 0, false},
		{"Layer2", "10.77.2.0/24", true, 576, false},
		{"Layer3", "10.77.3.0/24", true, 576, false},
		{"Layer2", "10.77.4.0/24", true, 65536, false},
		{"Layer3", "10.77.5.0/24", true, 65536, true},
		{"Layer2", "10.77.6.0/24", true, 575, false},
		{"Layer3", "10.77.7.0/24", true, 65537, false},
		{"Layer2", "10.77.9.4/30", false, 0, false},
		{"Layer3", "10.77.9.8/30", false, 0, false},
		{"Layer3", "10.77.9.12/30,10.77.10.0/24,10.77.128.0/17", false, 0, false},
		{"Layer2", "10.0.0.0/8", false, 0, false},
		{"Layer3", "10.0.0.0/8", false, 0, false},
		{"Layer2", celBlock, false, 0, false},
		{"Layer3", celBlock, true, 1500, true},
		{"Layer2", "10.77.11.0/24,10.77.12.0/24", false, 0, false},
		{"Layer3", "10.77.13.0/31", false, 0, false},
		{"Layer2", "fd00:77::/64", false, 0, false},
		{"Layer2", "10.77.14.1/24", false, 0, false},
		{"Localnet", "10.77.15.0/24", false, 0, false},
	} {
		f.Add(s.topology, s.subnets, s.hasMTU, s.mtu, s.natGateway)
	}

	ctx, cancel := context.WithCancel(context.Background())
	f.Cleanup(cancel)
	env := onboardCEL(ctx, f, true)

	f.Fuzz(func(t *testing.T, topology, subnets string, hasMTU bool, mtu int32, natGateway bool) {
		spec := tenantv1alpha1.NetworkSpec{Topology: tenantv1alpha1.NetworkTopology(topology)}
		if subnets != "" {
			spec.Subnets = strings.Split(subnets, ",")
		}
		if hasMTU {
			spec.MTU = &mtu
		}
		if natGateway {
			spec.NATGateway = &tenantv1alpha1.NATGateway{Enabled: false}
		}
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		res := checkNetworkAcceptedByHost(ctx, env, fmt.Sprintf("fuzz-%d", fuzzNetworks.Add(1)), spec)
		switch {
		case res.filledIn:
			t.Logf("%s: accepted without subnets (the registry does not default them yet); checked with %s", describeNetworkSpec(spec), firstSlash24(env.block))
		case res.accepted:
			t.Logf("%s: accepted", describeNetworkSpec(spec))
		default:
			t.Logf("%s: refused on %v", describeNetworkSpec(spec), res.refusal)
		}
		for _, p := range res.problems {
			t.Errorf("%s: %s", p.kind, p.msg)
		}
	})
}

// hostCheck is what checkNetworkAcceptedByHost found for one spec.
type hostCheck struct {
	accepted bool
	// refusal are the cause fields of the tenant API's 422.
	refusal []string
	// filledIn is set when the tenant API accepted the spec and returned it
	// without subnets: the check gave it the block's first /24 itself.
	filledIn bool
	problems []checkProblem
}

// checkProblem is a failure of the property, of a kind: "host" (the host
// refuses what the tenant API accepted), "block" (the tenant API accepted
// a subnet outside the tenant's block), "tenant API" (an answer that is
// neither an acceptance nor a 422) or "test" (the check itself failed).
type checkProblem struct{ kind, msg string }

func (c *hostCheck) problem(kind, format string, args ...interface{}) {
	c.problems = append(c.problems, checkProblem{kind, fmt.Sprintf(format, args...)})
}

// checkNetworkAcceptedByHost submits Network name with spec as a dry run
// through the tenant API and, if the tenant API accepts it, the
// ClusterUserDefinedNetwork the syncer builds from what it returned, as a
// dry run to the host: the host must accept it.
func checkNetworkAcceptedByHost(ctx context.Context, env *celEnv, name string, spec tenantv1alpha1.NetworkSpec) hostCheck {
	var res hostCheck
	desc := describeNetworkSpec(spec)
	obj := &tenantv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: *spec.DeepCopy()}
	got, err := env.member.TenantV1alpha1().Networks().Create(ctx, obj, metav1.CreateOptions{DryRun: dryRunAll})
	if err != nil {
		var s apierrors.APIStatus
		if !errors.As(err, &s) || s.Status().Code != 422 || s.Status().Reason != metav1.StatusReasonInvalid {
			res.problem("tenant API", "%s: %v, want an acceptance or 422 Invalid", desc, err)
			return res
		}
		if res.refusal = causeFields(s.Status()); len(res.refusal) == 0 {
			res.problem("tenant API", "%s: 422 without causes: %v", desc, err)
		}
		return res
	}
	res.accepted = true
	if len(got.Spec.Subnets) == 0 {
		res.filledIn = true
		got.Spec.Subnets = []string{firstSlash24(env.block)}
	}
	for i, s := range got.Spec.Subnets {
		if p, err := netip.ParsePrefix(s); err != nil || !p.Addr().Is4() || p.Bits() < env.block.Bits() || !env.block.Contains(p.Addr()) {
			res.problem("block", "%s: accepted with spec.subnets[%d] %q, not inside the tenant's block %s", desc, i, s, env.block)
		}
	}

	var in tenant.Network
	if err := apiserver.Scheme.Convert(got, &in, nil); err != nil {
		res.problem("test", "%s: converting %s: %v", desc, describeNetworkSpec(got.Spec), err)
		return res
	}
	if in.UID == "" {
		in.UID = uuid.NewUUID()
	}
	cudn := network.ClusterUserDefinedNetwork(env.tenant, &in)
	if _, err := env.udn.K8sV1().ClusterUserDefinedNetworks().Create(ctx, cudn, metav1.CreateOptions{DryRun: dryRunAll}); err != nil {
		res.problem("host", "%s: the tenant API accepts it as %s, but the host refuses its CUDN %s: %v",
			desc, describeNetworkSpec(got.Spec), describeHostCUDN(cudn), err)
	}
	return res
}

// randomNetworkSpec draws a Network spec around block: a topology (now and
// then not a valid one), up to three subnets inside, around and outside the
// block (some not canonical, some IPv6, some not CIDRs at all), an MTU
// around the limits or none, and a NAT gateway that is off or absent.
func randomNetworkSpec(r *mathrand.Rand, block netip.Prefix) tenantv1alpha1.NetworkSpec {
	var spec tenantv1alpha1.NetworkSpec
	var counts []int // weights of 0, 1, 2, 3 subnets
	switch n := r.IntN(100); {
	case n < 45:
		spec.Topology, counts = tenantv1alpha1.NetworkTopologyLayer2, []int{25, 65, 7, 3}
	case n < 90:
		spec.Topology, counts = tenantv1alpha1.NetworkTopologyLayer3, []int{15, 45, 25, 15}
	case n < 96:
		spec.Topology, counts = "", []int{30, 60, 7, 3}
	default:
		spec.Topology, counts = tenantv1alpha1.NetworkTopology(pickOne(r, "Localnet", "layer3", "L2", "Layer2 ")), []int{30, 60, 7, 3}
	}
	for range weightedIndex(r, counts) {
		spec.Subnets = append(spec.Subnets, randomSubnet(r, block))
	}
	if r.IntN(2) == 0 {
		var mtu int32
		if r.IntN(10) < 3 {
			mtu = pickOne(r, int32(-1), 0, 575, 576, 577, 1279, 1280, 1400, 1500, 9000, 65535, 65536, 65537)
		} else {
			mtu = 400 + r.Int32N(66000-400)
		}
		spec.MTU = &mtu
	}
	if r.IntN(10) < 3 {
		spec.NATGateway = &tenantv1alpha1.NATGateway{Enabled: false}
	}
	return spec
}

// randomSubnet draws one subnet string around block.
func randomSubnet(r *mathrand.Rand, block netip.Prefix) string {
	inside := func(bits int) netip.Prefix {
		host := uint32(r.Uint64()) & (1<<(32-block.Bits()) - 1)
		b := block.Addr().As4()
		a := ipv4Uint(b) | host
		return netip.PrefixFrom(ipv4Addr(a), bits).Masked()
	}
	switch n := r.IntN(100); {
	case n < 55: // inside the block, /17 to /30
		return inside(block.Bits() + 1 + r.IntN(30-block.Bits())).String()
	case n < 62: // the whole block
		return block.String()
	case n < 69: // a neighbour of the block
		a := ipv4Uint(block.Addr().As4()) + uint32(pickOne(r, 1, -1))<<(32-block.Bits()) + uint32(r.Uint64())&(1<<(32-block.Bits())-1)
		return netip.PrefixFrom(ipv4Addr(a), block.Bits()+1+r.IntN(30-block.Bits())).Masked().String()
	case n < 74: // containing the block, /6 to /15
		return netip.PrefixFrom(block.Addr(), 6+r.IntN(block.Bits()-6)).Masked().String()
	case n < 80: // inside the block, any length /6 to /32
		return inside(6 + r.IntN(27)).String()
	case n < 86: // host bits set
		p := inside(block.Bits() + 1 + r.IntN(29-block.Bits()))
		return netip.PrefixFrom(ipv4Addr(ipv4Uint(p.Addr().As4())|1), p.Bits()).String()
	case n < 91: // IPv6, or IPv6-looking
		return pickOne(r,
			fmt.Sprintf("fd00:%x::/%d", r.IntN(1<<16), 48+r.IntN(17)),
			"::ffff:10.77.1.0/120", "fd00::1/128", "::/0", "10.77.1.0::/24")
	case n < 96: // not CIDRs at all, or not written as we write them
		return pickOne(r, "010.77.1.0/24", "10.77.1.0", "10.77.1.0/024", " 10.77.1.0/24", "10.77.1.0/24 ",
			"10.77.1.0/24/", "10.77.1.0/33", "", "10.77.256.0/24", "10.77.1.0/+24")
	default: // anywhere, /6 to /32
		return netip.PrefixFrom(ipv4Addr(uint32(r.Uint64())), 6+r.IntN(27)).Masked().String()
	}
}

func ipv4Uint(b [4]byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func ipv4Addr(a uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)})
}

func pickOne[T any](r *mathrand.Rand, choices ...T) T { return choices[r.IntN(len(choices))] }

// weightedIndex draws an index of weights with probability proportional to its weight.
func weightedIndex(r *mathrand.Rand, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := r.IntN(total)
	for i, w := range weights {
		if n < w {
			return i
		}
		n -= w
	}
	return len(weights) - 1
}

// firstSlash24 is the first /24 of block: what the registry defaults the
// subnets of a tenant's first Network to.
func firstSlash24(block netip.Prefix) string {
	return netip.PrefixFrom(block.Addr(), max(24, block.Bits())).Masked().String()
}

var causeIndexRE = regexp.MustCompile(`\[\d+\]`)

// indexless is the cause fields of a refusal, indices dropped, for a tally.
func indexless(fields []string) string {
	seen := map[string]bool{}
	for _, f := range fields {
		seen[causeIndexRE.ReplaceAllString(f, "[i]")] = true
	}
	return strings.Join(sortedMapKeys(seen), ",")
}

func sortedMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func describeNetworkSpec(spec tenantv1alpha1.NetworkSpec) string {
	data, err := json.Marshal(spec)
	if err != nil {
		return fmt.Sprintf("%+v", spec)
	}
	return string(data)
}

func describeHostCUDN(c *udnv1.ClusterUserDefinedNetwork) string {
	data, err := json.Marshal(c.Spec.Network)
	if err != nil {
		return fmt.Sprintf("%s %+v", c.Name, c.Spec.Network)
	}
	return c.Name + " " + string(data)
}

// ---------------------------------------------------------------------------
// The tenant

// onboardCEL creates a tenant of celUser with block celBlock, deletes it
// when tb ends, and waits until its block is allocated and celUser acts as
// it: that is all the checks need; whether the tenant becomes Ready on the
// host is the onboarding tests' business. The block may still be held by
// the tenant of the test before, on its way out: the create is tried again
// until that one has released it. A bare tenant is rid of the Namespace and
// Network "default" it was onboarded with, so that its Networks may take
// any part of the block, the whole block included.
func onboardCEL(ctx context.Context, tb testing.TB, bare bool) *celEnv {
	tb.Helper()
	s := theStack()
	if s.PID("tenant-apiserver") == 0 {
		tb.Fatalf("the stack's tenant-apiserver is not running (did it crash? see %s)", s.LogPath("tenant-apiserver"))
	}
	admin, err := s.TenantClient(stack.AdminUser)
	if err != nil {
		tb.Fatal(err)
	}
	member, err := s.TenantClient(celUser)
	if err != nil {
		tb.Fatal(err)
	}
	udn, err := udnclientset.NewForConfig(s.RESTConfig(stack.AdminUser))
	if err != nil {
		tb.Fatal(err)
	}
	suffix := make([]byte, 2)
	if _, err := rand.Read(suffix); err != nil {
		tb.Fatal(err)
	}
	name := "netcel-" + hex.EncodeToString(suffix)
	quota := int32(celNetworkQuota)
	obj := &tenantv1alpha1.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: tenantv1alpha1.TenantSpec{
			DisplayName: "Network CEL test " + name,
			Members:     tenantv1alpha1.TenantMembers{Users: []string{celUser}},
			Network:     tenantv1alpha1.TenantNetwork{CIDR: celBlock},
			Quota:       tenantv1alpha1.TenantQuota{Networks: &quota},
		},
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, pollInterval, slowTimeout, true, func(ctx context.Context) (bool, error) {
		_, last = admin.TenantV1alpha1().Tenants().Create(ctx, obj, metav1.CreateOptions{})
		var st apierrors.APIStatus
		switch {
		case last == nil:
			return true, nil
		case apierrors.IsInvalid(last) && errors.As(last, &st) && slices.Contains(causeFields(st.Status()), "spec.network.cidr"):
			return false, nil // the block is still taken
		default:
			return false, last
		}
	})
	if err != nil {
		tb.Fatalf("creating tenant %s with block %s: %v (last: %v)", name, celBlock, err, last)
	}
	tb.Cleanup(func() { offboardCEL(tb, name) })

	var tn *tenantv1alpha1.Tenant
	err = wait.PollUntilContextTimeout(ctx, pollInterval, syncTimeout, true, func(ctx context.Context) (bool, error) {
		tn, last = admin.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
		return last == nil && tn.Status.Network != nil && tn.Status.Network.CIDR != "", nil
	})
	if err != nil {
		state := fmt.Sprint(last)
		if tn != nil {
			state = describeTenant(tn)
		}
		tb.Fatalf("tenant %s has no block: %v; last seen: %s", name, err, state)
	}
	if err := s.WaitTenantVisible(ctx, celUser, name); err != nil {
		tb.Fatal(err)
	}
	if tn.Status.Network == nil || tn.Status.Network.CIDR != celBlock {
		tb.Fatalf("tenant %s: status.network %+v, want cidr %s", name, tn.Status.Network, celBlock)
	}
	if bare {
		removeDefaults(ctx, tb, admin, member, name)
	}
	var internal tenant.Tenant
	if err := apiserver.Scheme.Convert(tn, &internal, nil); err != nil {
		tb.Fatal(err)
	}
	return &celEnv{tenant: &internal, block: netip.MustParsePrefix(celBlock), member: member, udn: udn}
}

// removeDefaults deletes the Namespace and then the Network "default" of
// tenant name, once it is onboarded (from then on the syncer does not give
// them back), and waits until they are gone.
func removeDefaults(ctx context.Context, tb testing.TB, admin, member clientset.Interface, name string) {
	tb.Helper()
	var state string
	err := wait.PollUntilContextTimeout(ctx, pollInterval, syncTimeout, true, func(ctx context.Context) (bool, error) {
		tn, err := admin.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			state = err.Error()
			return false, nil
		}
		state = describeTenant(tn)
		return slices.Contains(tn.Finalizers, finalizerOffboarding), nil
	})
	if err != nil {
		tb.Fatalf("tenant %s onboarded: %v; last seen: %s", name, err, state)
	}
	for _, d := range []struct {
		kind   string
		delete func(context.Context) error
		get    func(context.Context) error
	}{
		{"Namespace",
			func(ctx context.Context) error {
				return member.TenantV1alpha1().Namespaces().Delete(ctx, tenant.DefaultNamespace, metav1.DeleteOptions{})
			},
			func(ctx context.Context) error {
				_, err := member.TenantV1alpha1().Namespaces().Get(ctx, tenant.DefaultNamespace, metav1.GetOptions{})
				return err
			}},
		{"Network",
			func(ctx context.Context) error {
				return member.TenantV1alpha1().Networks().Delete(ctx, tenant.DefaultNetwork, metav1.DeleteOptions{})
			},
			func(ctx context.Context) error {
				_, err := member.TenantV1alpha1().Networks().Get(ctx, tenant.DefaultNetwork, metav1.GetOptions{})
				return err
			}},
	} {
		var last error
		err := wait.PollUntilContextTimeout(ctx, pollInterval, slowTimeout, true, func(ctx context.Context) (bool, error) {
			// A Network is refused deletion (409) while a Namespace is
			// still attached to it: try again until the Namespace is gone.
			if last = d.delete(ctx); last != nil && !apierrors.IsNotFound(last) && !apierrors.IsConflict(last) {
				return false, last
			}
			last = d.get(ctx)
			return apierrors.IsNotFound(last), nil
		})
		if err != nil {
			tb.Fatalf("removing the default %s of tenant %s: %v (last: %v)", d.kind, name, err, last)
		}
	}
}

// offboardCEL deletes tenant name and waits until it is gone, so that the
// next test can have its block; a failure is only logged, as offboardAtEnd does.
func offboardCEL(tb testing.TB, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), slowTimeout)
	defer cancel()
	cs, err := theStack().TenantClient(stack.AdminUser)
	if err != nil {
		tb.Logf("cleanup: %v", err)
		return
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		last = cs.TenantV1alpha1().Tenants().Delete(ctx, name, metav1.DeleteOptions{})
		if last != nil && !apierrors.IsNotFound(last) {
			return false, nil
		}
		_, last = cs.TenantV1alpha1().Tenants().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(last), nil
	})
	if err != nil {
		tb.Logf("cleanup: tenant %s is not gone: %v (last: %v)", name, err, last)
	}
}
