package kindstore_test

import (
	"context"
	"maps"
	"reflect"
	"testing"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apiserver"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/floatingip"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/network"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/tenants"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

var (
	networkStrategy          = kindstore.NewStrategy(apiserver.Scheme, network.Kind)
	networkStatusStrategy    = kindstore.NewStatusStrategy(apiserver.Scheme, network.Kind)
	floatingIPStrategy       = kindstore.NewStrategy(apiserver.Scheme, floatingip.Kind)
	floatingIPStatusStrategy = kindstore.NewStatusStrategy(apiserver.Scheme, floatingip.Kind)
	tenantStrategy           = kindstore.NewStrategy(apiserver.Scheme, tenants.Kind)
)

// tenantLabelPath is where every tenant label error must point.
var tenantLabelPath = field.NewPath("metadata", "labels").Key(tenancy.TenantLabel).String()

func tenantCtx(t string) context.Context {
	return tenancy.WithTenant(genericapirequest.NewContext(), t)
}

func tenantNSCtx(t, ns string) context.Context {
	return tenancy.WithTenant(genericapirequest.WithNamespace(genericapirequest.NewContext(), ns), t)
}

func validNetwork(labels map[string]string) *tenant.Network {
	return &tenant.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "default", Labels: labels, ResourceVersion: "1"},
		Spec:       tenant.NetworkSpec{Topology: tenant.NetworkTopologyLayer2, Subnets: []string{"10.0.0.0/24"}},
	}
}

func networkStatus() tenant.NetworkStatus {
	return tenant.NetworkStatus{
		ObservedGeneration: 3,
		Subnets:            []string{"10.0.0.0/24"},
		NATGatewayIP:       "203.0.113.7",
		Conditions: []metav1.Condition{{
			Type: tenant.ConditionReady, Status: metav1.ConditionTrue, Reason: "Synced",
			LastTransitionTime: metav1.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		}},
	}
}

func validFloatingIP(labels map[string]string) *tenant.FloatingIP {
	return &tenant.FloatingIP{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "dev", Labels: labels, ResourceVersion: "1"},
		Spec: tenant.FloatingIPSpec{
			Target: &tenant.FloatingIPTarget{Kind: tenant.FloatingIPTargetPod, Name: "web-0"},
			Ports:  []tenant.FloatingIPPort{{Port: 443, Protocol: tenant.ProtocolTCP}},
		},
	}
}

// errorsAt returns the field paths of errs.
func errorsAt(errs field.ErrorList) []string {
	var paths []string
	for _, e := range errs {
		paths = append(paths, e.Field)
	}
	return paths
}

func expectErrorsAt(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	if got := errorsAt(errs); !reflect.DeepEqual(got, want) {
		t.Errorf("errors at %q, want at %q; errors: %v", got, want, errs)
	}
}

func TestNamespaceScoped(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"networks", networkStrategy.NamespaceScoped(), false},
		{"floatingips", floatingIPStrategy.NamespaceScoped(), true},
		{"tenants", tenantStrategy.NamespaceScoped(), false},
		{"floatingips/status", floatingIPStatusStrategy.NamespaceScoped(), true},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: NamespaceScoped() = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if networkStrategy.AllowCreateOnUpdate() {
		t.Error("AllowCreateOnUpdate() = true, want objects created with POST only")
	}
	if !networkStrategy.AllowUnconditionalUpdate() {
		t.Error("AllowUnconditionalUpdate() = false, want true")
	}
}

func TestPrepareForCreate(t *testing.T) {
	tests := []struct {
		name       string
		ctx        context.Context
		labels     map[string]string
		wantLabels map[string]string
		wantErrsAt []string
	}{
		{
			name:       "sets the tenant label",
			ctx:        tenantCtx("acme"),
			wantLabels: map[string]string{tenancy.TenantLabel: "acme"},
		},
		{
			name:       "keeps other labels",
			ctx:        tenantCtx("acme"),
			labels:     map[string]string{"app": "web"},
			wantLabels: map[string]string{"app": "web", tenancy.TenantLabel: "acme"},
		},
		{
			name:       "own tenant label is fine",
			ctx:        tenantCtx("acme"),
			labels:     map[string]string{tenancy.TenantLabel: "acme"},
			wantLabels: map[string]string{tenancy.TenantLabel: "acme"},
		},
		{
			name:       "foreign tenant label is refused",
			ctx:        tenantCtx("acme"),
			labels:     map[string]string{tenancy.TenantLabel: "globex"},
			wantLabels: map[string]string{tenancy.TenantLabel: "globex"},
			wantErrsAt: []string{tenantLabelPath},
		},
		{
			name:       "empty tenant label is refused",
			ctx:        tenantCtx("acme"),
			labels:     map[string]string{tenancy.TenantLabel: ""},
			wantLabels: map[string]string{tenancy.TenantLabel: ""},
			wantErrsAt: []string{tenantLabelPath},
		},
		{
			name:       "prefix of the tenant is refused",
			ctx:        tenantCtx("t10"),
			labels:     map[string]string{tenancy.TenantLabel: "t1"},
			wantLabels: map[string]string{tenancy.TenantLabel: "t1"},
			wantErrsAt: []string{tenantLabelPath},
		},
		{
			name: "no tenant sets no label",
			ctx:  tenantCtx(""),
		},
		{
			name:       "no tenant may not name one",
			ctx:        tenantCtx(""),
			labels:     map[string]string{tenancy.TenantLabel: "acme"},
			wantLabels: map[string]string{tenancy.TenantLabel: "acme"},
			wantErrsAt: []string{tenantLabelPath},
		},
		{
			name: "unscoped context sets no label",
			ctx:  genericapirequest.NewContext(),
		},
	}
	for _, tc := range tests {
		t.Run("network "+tc.name, func(t *testing.T) {
			obj := validNetwork(tc.labels)
			obj.Generation = 7
			obj.Status = networkStatus()
			networkStrategy.PrepareForCreate(tc.ctx, obj)
			if !apiequality.Semantic.DeepEqual(obj.Status, tenant.NetworkStatus{}) {
				t.Errorf("status = %+v, want it cleared", obj.Status)
			}
			if obj.Generation != 1 {
				t.Errorf("generation = %d, want 1", obj.Generation)
			}
			if len(obj.Labels) != 0 || len(tc.wantLabels) != 0 {
				if !reflect.DeepEqual(obj.Labels, tc.wantLabels) {
					t.Errorf("labels = %v, want %v", obj.Labels, tc.wantLabels)
				}
			}
			expectErrorsAt(t, networkStrategy.Validate(tc.ctx, obj), tc.wantErrsAt...)
		})
		t.Run("floatingip "+tc.name, func(t *testing.T) {
			obj := validFloatingIP(tc.labels)
			obj.Generation = 3
			obj.Status = tenant.FloatingIPStatus{Address: "203.0.113.9", Phase: tenant.FloatingIPPhaseAssociated, ObservedGeneration: 3}
			ctx := genericapirequest.WithNamespace(tc.ctx, "dev")
			floatingIPStrategy.PrepareForCreate(ctx, obj)
			if !apiequality.Semantic.DeepEqual(obj.Status, tenant.FloatingIPStatus{}) {
				t.Errorf("status = %+v, want it cleared", obj.Status)
			}
			if obj.Generation != 1 {
				t.Errorf("generation = %d, want 1", obj.Generation)
			}
			if got := obj.Labels[tenancy.TenantLabel]; got != tc.wantLabels[tenancy.TenantLabel] {
				t.Errorf("tenant label = %q, want %q", got, tc.wantLabels[tenancy.TenantLabel])
			}
			expectErrorsAt(t, floatingIPStrategy.Validate(ctx, obj), tc.wantErrsAt...)
		})
	}
}

// TestPrepareForCreateNotTenantOwned checks that kinds not owned by
// tenants, such as Tenant, get no tenant label and need none.
func TestPrepareForCreateNotTenantOwned(t *testing.T) {
	obj := &tenant.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: "acme", Generation: 4, ResourceVersion: "1"},
		Spec:       tenant.TenantSpec{Network: tenant.TenantNetwork{CIDR: "10.42.0.0/16"}},
		Status:     tenant.TenantStatus{Phase: tenant.TenantPhaseReady, NamespacePrefix: "acme-abcdef"},
	}
	ctx := tenantCtx("acme")
	tenantStrategy.PrepareForCreate(ctx, obj)
	if obj.Generation != 1 {
		t.Errorf("generation = %d, want 1", obj.Generation)
	}
	// What the request said of status is gone; the server derives the
	// namespace prefix from the name and UID, and the Tenant waits for the
	// syncer.
	want := tenant.TenantStatus{Phase: tenant.TenantPhasePending, NamespacePrefix: hostnames.NamespacePrefix("acme", obj.UID)}
	kindstore.NotSynced(&want.Conditions, "waiting for the syncer to onboard the tenant on the host")
	for i := range want.Conditions {
		want.Conditions[i].LastTransitionTime = obj.Status.Conditions[i].LastTransitionTime
	}
	if !apiequality.Semantic.DeepEqual(obj.Status, want) {
		t.Errorf("status = %+v, want %+v", obj.Status, want)
	}
	if _, ok := obj.Labels[tenancy.TenantLabel]; ok {
		t.Errorf("labels = %v, want no tenant label on a Tenant", obj.Labels)
	}
	expectErrorsAt(t, tenantStrategy.Validate(ctx, obj))

	// A provider may label a Tenant as it likes.
	obj.Labels = map[string]string{tenancy.TenantLabel: "globex"}
	expectErrorsAt(t, tenantStrategy.Validate(ctx, obj))
	updated := obj.DeepCopy()
	updated.Labels = nil
	tenantStrategy.PrepareForUpdate(ctx, updated, obj)
	if len(updated.Labels) != 0 {
		t.Errorf("labels = %v after an update that dropped them, want none", updated.Labels)
	}
	expectErrorsAt(t, tenantStrategy.ValidateUpdate(ctx, updated, obj))
}

func TestPrepareForUpdate(t *testing.T) {
	tests := []struct {
		name           string
		mutate         func(*tenant.Network)
		wantGeneration int64
		wantLabels     map[string]string
		wantErrsAt     []string
	}{
		{
			name:           "no change",
			mutate:         func(*tenant.Network) {},
			wantGeneration: 5,
			wantLabels:     map[string]string{tenancy.TenantLabel: "acme", "app": "web"},
		},
		{
			name:           "metadata change keeps generation",
			mutate:         func(n *tenant.Network) { n.Annotations = map[string]string{"note": "x"}; n.Labels["app"] = "db" },
			wantGeneration: 5,
			wantLabels:     map[string]string{tenancy.TenantLabel: "acme", "app": "db"},
		},
		{
			name:           "status change alone is ignored",
			mutate:         func(n *tenant.Network) { n.Status = tenant.NetworkStatus{NATGatewayIP: "198.51.100.1"} },
			wantGeneration: 5,
			wantLabels:     map[string]string{tenancy.TenantLabel: "acme", "app": "web"},
		},
		{
			name:           "spec change bumps generation",
			mutate:         func(n *tenant.Network) { n.Spec.NATGateway = &tenant.NATGateway{Enabled: true} },
			wantGeneration: 6,
			wantLabels:     map[string]string{tenancy.TenantLabel: "acme", "app": "web"},
		},
		{
			name: "dropped tenant label is restored",
			mutate: func(n *tenant.Network) {
				delete(n.Labels, tenancy.TenantLabel)
			},
			wantGeneration: 5,
			wantLabels:     map[string]string{tenancy.TenantLabel: "acme", "app": "web"},
		},
		{
			name:           "all labels dropped",
			mutate:         func(n *tenant.Network) { n.Labels = nil },
			wantGeneration: 5,
			wantLabels:     map[string]string{tenancy.TenantLabel: "acme"},
		},
		{
			name:           "tenant label changed",
			mutate:         func(n *tenant.Network) { n.Labels[tenancy.TenantLabel] = "globex" },
			wantGeneration: 5,
			wantLabels:     map[string]string{tenancy.TenantLabel: "globex", "app": "web"},
			wantErrsAt:     []string{tenantLabelPath},
		},
		{
			name:           "tenant label emptied",
			mutate:         func(n *tenant.Network) { n.Labels[tenancy.TenantLabel] = "" },
			wantGeneration: 5,
			wantLabels:     map[string]string{tenancy.TenantLabel: "", "app": "web"},
			wantErrsAt:     []string{tenantLabelPath},
		},
		{
			name: "tenant label changed with a spec change",
			mutate: func(n *tenant.Network) {
				n.Labels[tenancy.TenantLabel] = "acme2"
				n.Spec.NATGateway = &tenant.NATGateway{Enabled: true}
			},
			wantGeneration: 6,
			wantLabels:     map[string]string{tenancy.TenantLabel: "acme2", "app": "web"},
			wantErrsAt:     []string{tenantLabelPath},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tenantCtx("acme")
			old := validNetwork(map[string]string{tenancy.TenantLabel: "acme", "app": "web"})
			old.Generation = 5
			old.Status = networkStatus()
			obj := old.DeepCopy()
			obj.Status = tenant.NetworkStatus{}
			tc.mutate(obj)
			networkStrategy.PrepareForUpdate(ctx, obj, old)

			if !apiequality.Semantic.DeepEqual(obj.Status, old.Status) {
				t.Errorf("status = %+v, want the stored %+v", obj.Status, old.Status)
			}
			if obj.Generation != tc.wantGeneration {
				t.Errorf("generation = %d, want %d", obj.Generation, tc.wantGeneration)
			}
			if !reflect.DeepEqual(obj.Labels, tc.wantLabels) {
				t.Errorf("labels = %v, want %v", obj.Labels, tc.wantLabels)
			}
			expectErrorsAt(t, networkStrategy.ValidateUpdate(ctx, obj, old), tc.wantErrsAt...)
		})
	}
}

func TestPrepareForUpdateFloatingIP(t *testing.T) {
	ctx := tenantNSCtx("acme", "dev")
	old := validFloatingIP(map[string]string{tenancy.TenantLabel: "acme"})
	old.Generation = 2
	old.Status = tenant.FloatingIPStatus{Address: "203.0.113.9", Phase: tenant.FloatingIPPhaseAssociated, ObservedGeneration: 2}

	obj := old.DeepCopy()
	obj.Status = tenant.FloatingIPStatus{}
	obj.Labels = nil
	obj.Spec.Ports = append(obj.Spec.Ports, tenant.FloatingIPPort{Port: 80, Protocol: tenant.ProtocolTCP})
	floatingIPStrategy.PrepareForUpdate(ctx, obj, old)
	if obj.Generation != 3 {
		t.Errorf("generation = %d, want 3", obj.Generation)
	}
	if !apiequality.Semantic.DeepEqual(obj.Status, old.Status) {
		t.Errorf("status = %+v, want the stored %+v", obj.Status, old.Status)
	}
	if got := obj.Labels[tenancy.TenantLabel]; got != "acme" {
		t.Errorf("tenant label = %q, want acme restored", got)
	}
	expectErrorsAt(t, floatingIPStrategy.ValidateUpdate(ctx, obj, old))

	moved := old.DeepCopy()
	moved.Labels[tenancy.TenantLabel] = "globex"
	floatingIPStrategy.PrepareForUpdate(ctx, moved, old)
	expectErrorsAt(t, floatingIPStrategy.ValidateUpdate(ctx, moved, old), tenantLabelPath)
}

func TestStatusStrategy(t *testing.T) {
	ctx := tenantCtx("acme")
	old := validNetwork(map[string]string{tenancy.TenantLabel: "acme", "app": "web"})
	old.Annotations = map[string]string{"note": "keep"}
	old.Generation = 4
	// The subnets and NAT address are the registry's (IPAM assigns them
	// when the spec is written): the stored ones.
	old.Status.Subnets, old.Status.NATGatewayIP = networkStatus().Subnets, networkStatus().NATGatewayIP

	obj := old.DeepCopy()
	obj.Status = networkStatus()
	obj.Spec.NATGateway = &tenant.NATGateway{Enabled: true}
	obj.Spec.Subnets = []string{"10.9.0.0/24"}
	obj.Labels = map[string]string{tenancy.TenantLabel: "globex"}
	obj.Annotations = nil
	networkStatusStrategy.PrepareForUpdate(ctx, obj, old)

	if !apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) {
		t.Errorf("spec = %+v, want the stored %+v", obj.Spec, old.Spec)
	}
	if !reflect.DeepEqual(obj.Labels, old.Labels) {
		t.Errorf("labels = %v, want the stored %v", obj.Labels, old.Labels)
	}
	if !reflect.DeepEqual(obj.Annotations, old.Annotations) {
		t.Errorf("annotations = %v, want the stored %v", obj.Annotations, old.Annotations)
	}
	if !apiequality.Semantic.DeepEqual(obj.Status, networkStatus()) {
		t.Errorf("status = %+v, want the written one", obj.Status)
	}
	if obj.Generation != 4 {
		t.Errorf("generation = %d, want 4: a status write changes no spec", obj.Generation)
	}
	expectErrorsAt(t, networkStatusStrategy.ValidateUpdate(ctx, obj, old))

	// A status write cannot change what IPAM assigned.
	moved := old.DeepCopy()
	moved.Status = networkStatus()
	moved.Status.Subnets, moved.Status.NATGatewayIP = []string{"10.9.0.0/24"}, "198.51.100.9"
	networkStatusStrategy.PrepareForUpdate(ctx, moved, old)
	if !apiequality.Semantic.DeepEqual(moved.Status, networkStatus()) {
		t.Errorf("status = %+v, want the written one with the stored subnets and NAT address", moved.Status)
	}

	// The status strategy validates status, not spec.
	bad := obj.DeepCopy()
	bad.Status.NATGatewayIP = "127.0.0.1"
	expectErrorsAt(t, networkStatusStrategy.ValidateUpdate(ctx, bad, old), "status.natGatewayIP")

	fip := validFloatingIP(map[string]string{tenancy.TenantLabel: "acme"})
	newFIP := fip.DeepCopy()
	newFIP.Spec.Target = nil
	newFIP.Status.Phase = tenant.FloatingIPPhaseAllocated
	floatingIPStatusStrategy.PrepareForUpdate(tenantNSCtx("acme", "dev"), newFIP, fip)
	if !apiequality.Semantic.DeepEqual(newFIP.Spec, fip.Spec) || newFIP.Status.Phase != tenant.FloatingIPPhaseAllocated {
		t.Errorf("floating IP after status update = %+v, want the stored spec and the new phase", newFIP)
	}
}

func TestGetResetFields(t *testing.T) {
	tests := []struct {
		name string
		got  map[fieldpath.APIVersion]*fieldpath.Set
		want *fieldpath.Set
	}{
		{
			name: "main resource",
			got:  networkStrategy.GetResetFields(),
			want: fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
		},
		{
			name: "status",
			got:  networkStatusStrategy.GetResetFields(),
			want: fieldpath.NewSet(
				fieldpath.MakePathOrDie("spec"),
				fieldpath.MakePathOrDie("metadata", "labels"),
				fieldpath.MakePathOrDie("metadata", "annotations"),
			),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.got) != 1 {
				t.Fatalf("reset fields for %d versions, want 1: %v", len(tc.got), tc.got)
			}
			set, ok := tc.got["tenant.io/v1alpha1"]
			if !ok {
				t.Fatalf("no reset fields for tenant.io/v1alpha1: %v", tc.got)
			}
			if !set.Equals(tc.want) {
				t.Errorf("reset fields = %v, want %v", set, tc.want)
			}
		})
	}
}

func TestChangeAnnotations(t *testing.T) {
	asUser := func(name string) context.Context {
		return genericapirequest.WithUser(tenantCtx("acme"), &user.DefaultInfo{Name: name})
	}
	forged := map[string]string{hostnames.ChangedByAnnotation: "mallory", hostnames.ChangedAtAnnotation: "2000-01-01T00:00:00Z", "note": "kept"}

	// Create: the caller and now, whatever the request said.
	before := time.Now().UTC()
	created := validNetwork(nil)
	created.Annotations = maps.Clone(forged)
	networkStrategy.PrepareForCreate(asUser("alice"), created)
	if got := created.Annotations[hostnames.ChangedByAnnotation]; got != "alice" {
		t.Errorf("changed-by after create: %q, want alice", got)
	}
	at, err := time.Parse(time.RFC3339Nano, created.Annotations[hostnames.ChangedAtAnnotation])
	if err != nil || at.Before(before) || at.After(time.Now().UTC()) {
		t.Errorf("changed-at after create: %q (%v), want a time of the create", created.Annotations[hostnames.ChangedAtAnnotation], err)
	}
	if created.Annotations["note"] != "kept" {
		t.Errorf("other annotations after create: %v", created.Annotations)
	}

	// An update that leaves the spec alone keeps the stored record, even
	// when the request drops or forges it.
	for _, annotations := range []map[string]string{nil, maps.Clone(forged)} {
		same := created.DeepCopy()
		same.Annotations = annotations
		networkStrategy.PrepareForUpdate(asUser("bob"), same, created)
		for _, k := range []string{hostnames.ChangedByAnnotation, hostnames.ChangedAtAnnotation} {
			if same.Annotations[k] != created.Annotations[k] {
				t.Errorf("%s after an update without spec change (request %v): %q, want %q", k, annotations, same.Annotations[k], created.Annotations[k])
			}
		}
	}

	// An update of the spec records its caller.
	changed := created.DeepCopy()
	changed.Annotations = maps.Clone(forged)
	changed.Spec.Subnets = []string{"10.0.1.0/24"}
	networkStrategy.PrepareForUpdate(asUser("bob"), changed, created)
	if got := changed.Annotations[hostnames.ChangedByAnnotation]; got != "bob" {
		t.Errorf("changed-by after a spec update: %q, want bob", got)
	}
	if got, err := time.Parse(time.RFC3339Nano, changed.Annotations[hostnames.ChangedAtAnnotation]); err != nil || got.Before(at) {
		t.Errorf("changed-at after a spec update: %q (%v), want a time after %s", changed.Annotations[hostnames.ChangedAtAnnotation], err, at)
	}
}

// The strategies never write into the label and annotation maps of the
// objects they are given: a stored object's maps are shared with other
// objects (apiserver.StorageCodec), and an in-process writer may hand the
// stored object back as the new one when it changes nothing.
func TestStrategiesLeaveMapsAlone(t *testing.T) {
	ctx := genericapirequest.WithUser(tenancy.WithTenantUID(tenantCtx("acme"), "uid-1"), &user.DefaultInfo{Name: "alice"})
	stored := validNetwork(map[string]string{tenancy.TenantLabel: "acme", tenancy.TenantUIDLabel: "uid-1", "app": "web"})
	stored.Annotations = map[string]string{hostnames.ChangedByAnnotation: "alice", hostnames.ChangedAtAnnotation: "2026-11-26T04:00:00Z"}
	labels, annotations := maps.Clone(stored.Labels), maps.Clone(stored.Annotations)
	unchanged := func(what string) {
		t.Helper()
		if !maps.Equal(stored.Labels, labels) || !maps.Equal(stored.Annotations, annotations) {
			t.Errorf("%s wrote into the stored object's maps: %v %v", what, stored.Labels, stored.Annotations)
		}
	}
	// The new object is the stored one, or shares its maps.
	networkStrategy.PrepareForUpdate(ctx, stored, stored)
	unchanged("an update handed the stored object")
	for _, mutate := range []func(*tenant.Network){
		func(n *tenant.Network) {},
		func(n *tenant.Network) { n.Spec.Subnets = []string{"10.0.1.0/24"} },
	} {
		n := *stored
		n.Labels, n.Annotations = stored.Labels, stored.Annotations
		mutate(&n)
		networkStrategy.PrepareForUpdate(ctx, &n, stored)
		unchanged("an update sharing the stored object's maps")
		networkStatusStrategy.PrepareForUpdate(ctx, &n, stored)
		unchanged("a status update sharing the stored object's maps")
	}
	// What the request dropped or forged is put right on its own maps.
	n := *stored
	n.Labels = map[string]string{"app": "db"}
	n.Annotations = nil
	networkStrategy.PrepareForUpdate(ctx, &n, stored)
	unchanged("an update dropping labels and annotations")
	if n.Labels[tenancy.TenantLabel] != "acme" || n.Labels[tenancy.TenantUIDLabel] != "uid-1" || n.Annotations[hostnames.ChangedAtAnnotation] != annotations[hostnames.ChangedAtAnnotation] {
		t.Errorf("update kept labels %v, annotations %v", n.Labels, n.Annotations)
	}
	created := validNetwork(nil)
	created.Labels, created.Annotations = stored.Labels, stored.Annotations
	networkStrategy.PrepareForCreate(ctx, created)
	unchanged("a create given shared maps")
}
