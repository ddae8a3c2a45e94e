package floatingip_test

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/floatingip"
)

// TestOneFloatingIPPerTarget: a second FloatingIP for a workload is a 409
// naming the first, on create and on retargeting, leaving no address
// claimed; other workloads, other Namespaces and other tenants are free.
func TestOneFloatingIPPerTarget(t *testing.T) {
	r, _ := setup(t)
	vm := func(name string) *tenant.FloatingIPTarget {
		return &tenant.FloatingIPTarget{Kind: tenant.FloatingIPTargetVirtualMachine, Name: name}
	}
	withTarget := func(name string, tg *tenant.FloatingIPTarget) *tenant.FloatingIP {
		f := fip(name, "")
		f.Spec.Target = tg
		return f
	}
	r.mustCreateFIP(t, alice, withTarget("first", vm("web")))

	wantTaken := func(what string, err error) {
		t.Helper()
		var status apierrors.APIStatus
		if !apierrors.IsConflict(err) || !errors.As(err, &status) ||
			!strings.Contains(err.Error(), "VirtualMachine web is already the target of FloatingIP first") ||
			status.Status().Details == nil || len(status.Status().Details.Causes) != 1 ||
			status.Status().Details.Causes[0].Type != floatingip.CauseTypeTargetTaken || status.Status().Details.Causes[0].Field != "spec.target" {
			t.Errorf("%s: %v, want 409 naming FloatingIP first", what, err)
		}
	}
	_, err := r.createFIP(alice, withTarget("second", vm("web")), false)
	wantTaken("a second FloatingIP for VM web", err)
	_, err = r.createFIP(alice, withTarget("second", vm("web")), true)
	wantTaken("the same, dry run", err)

	// A Pod of that name is another workload; so is another VM.
	r.mustCreateFIP(t, alice, withTarget("pod", &tenant.FloatingIPTarget{Kind: tenant.FloatingIPTargetPod, Name: "web"}))
	r.mustCreateFIP(t, alice, withTarget("second", vm("db")))
	_, err = r.updateFIP(alice, "second", func(f *tenant.FloatingIP) { f.Spec.Target = vm("web") }, false)
	wantTaken("retargeting second to VM web", err)
	// Updates that keep the target, or drop it, go through.
	if _, err := r.updateFIP(alice, "first", func(f *tenant.FloatingIP) { f.Spec.Ports = nil }, false); err != nil {
		t.Errorf("an update of first keeping its target: %v", err)
	}
	if _, err := r.updateFIP(alice, "first", func(f *tenant.FloatingIP) { f.Spec.Target = nil }, false); err != nil {
		t.Errorf("dropping first's target: %v", err)
	}
	if _, err := r.updateFIP(alice, "second", func(f *tenant.FloatingIP) { f.Spec.Target = vm("web") }, false); err != nil {
		t.Errorf("retargeting second to VM web once free: %v", err)
	}
	// bob's VM web is his own.
	r.mustCreateFIP(t, bob, withTarget("first", vm("web")))

	// The refused creates claimed nothing: acme's fourth and last public
	// IP is still free for a fourth FloatingIP.
	held := 0
	for _, name := range []string{"first", "pod", "second"} {
		if r.getFIP(t, alice, name).Status.Address != "" {
			held++
		}
	}
	if held != 3 {
		t.Errorf("%d of acme's 3 FloatingIPs hold an address", held)
	}
	if f := r.mustCreateFIP(t, alice, fip("fourth", "")); f.Status.Address == "" {
		t.Errorf("the fourth FloatingIP holds no address: %+v", f.Status)
	}
}
