package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestBareMetalOperatorStandIn checks that the stack's baremetal-operator
// stand-in treats BareMetalHosts as Metal3's operator does, so that tests
// of what is built on hosts can rely on it: registration and inspection
// to available, provisioning, a reboot by annotation, deprovisioning with
// cleaning, and a registration error until the credentials appear.
func TestBareMetalOperatorStandIn(t *testing.T) {
	s := framework.Current()
	bmo := s.BareMetalOperator()
	if bmo == nil {
		t.Fatal("the package's stack runs without the baremetal-operator stand-in (stack.Options.BareMetalStandIn)")
	}
	ctx := framework.Context(t, 3*time.Minute)
	client, dyn, err := s.Clients(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "metal3-standin"
	t.Cleanup(func() {
		_ = client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	hosts := dyn.Resource(stack.BareMetalHostResource).Namespace(ns)

	// Every change of server-001, from before it exists.
	if err := stack.CreateDemoBareMetalHosts(ctx, dyn, ns, 0, nil); err != nil {
		t.Fatal(err)
	}
	history := watchBareMetalHost(ctx, t, hosts, "server-001")

	start := time.Now()
	if err := stack.CreateDemoBareMetalHosts(ctx, dyn, ns, 2, func(i int) map[string]string {
		return map[string]string{"infra-kind": "medium", "tenant.io/host-class": "medium"}
	}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"server-001", "server-002"} {
		h := waitBareMetalHost(ctx, t, hosts, name, "available", func(h *unstructured.Unstructured) bool { return true })
		checkInspected(t, h)
		if name == "server-001" {
			history.caughtUp(ctx, t, h)
		}
	}
	t.Logf("2 hosts available in %s", time.Since(start).Round(10*time.Millisecond))
	if got, want := history.states(), []string{"registering", "inspecting", "preparing", "available"}; !slices.Equal(got, want) {
		t.Errorf("server-001 went through the states %q, want %q", got, want)
	}
	if h, err := hosts.Get(ctx, "server-002", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if h.GetGeneration() != 1 {
		t.Errorf("server-002 has generation %d after registration: its spec was written", h.GetGeneration())
	}

	t.Run("provision", func(t *testing.T) {
		start := time.Now()
		const url = "http://192.0.2.250/images/ubuntu-24.04.qcow2"
		patchBareMetalHost(ctx, t, hosts, "server-001", fmt.Sprintf(`{"spec":{"online":true,
			"image":{"url":%q,"checksum":%q,"checksumType":"sha256","format":"qcow2"},
			"consumerRef":{"apiVersion":"tenant.io/v1alpha1","kind":"HostClaim","namespace":"acme","name":"worker-0"}}}`, url, url+".sha256sum"))
		h := waitBareMetalHost(ctx, t, hosts, "server-001", "provisioned", poweredOn(true))
		t.Logf("provisioned and powered on in %s", time.Since(start).Round(10*time.Millisecond))
		if got := nestedString(h, "status", "provisioning", "image", "url"); got != url {
			t.Errorf("status.provisioning.image.url = %q, want %q", got, url)
		}
		if got := nestedString(h, "status", "provisioning", "rootDeviceHints", "deviceName"); got != "/dev/sda" {
			t.Errorf("status.provisioning.rootDeviceHints.deviceName = %q, want the unknown profile's /dev/sda", got)
		}
		if got := nestedString(h, "status", "provisioning", "bootMode"); got != "UEFI" {
			t.Errorf("status.provisioning.bootMode = %q, want UEFI", got)
		}
		if nestedString(h, "status", "operationHistory", "provision", "end") == "" {
			t.Error("status.operationHistory.provision.end is not set")
		}
	})

	t.Run("reboot", func(t *testing.T) {
		start := time.Now()
		history.reset()
		patchBareMetalHost(ctx, t, hosts, "server-001", `{"metadata":{"annotations":{"reboot.metal3.io":""}}}`)
		h := waitBareMetalHost(ctx, t, hosts, "server-001", "provisioned", func(h *unstructured.Unstructured) bool {
			_, annotated := h.GetAnnotations()["reboot.metal3.io"]
			return !annotated && poweredOn(true)(h)
		})
		history.caughtUp(ctx, t, h)
		t.Logf("rebooted in %s", time.Since(start).Round(10*time.Millisecond))
		if got := history.power(); !slices.Contains(got, false) || len(got) == 0 || !got[len(got)-1] {
			t.Errorf("server-001's power went %v, want off, then on", got)
		}
		if n := bmo.Reboots(ns, "server-001"); n != 1 {
			t.Errorf("the stand-in counts %d reboots of server-001, want 1", n)
		}
	})

	t.Run("deprovision", func(t *testing.T) {
		start := time.Now()
		history.reset()
		patchBareMetalHost(ctx, t, hosts, "server-001", `{"spec":{"image":null,"consumerRef":null}}`)
		h := waitBareMetalHost(ctx, t, hosts, "server-001", "available", poweredOn(false))
		t.Logf("deprovisioned in %s", time.Since(start).Round(10*time.Millisecond))
		history.caughtUp(ctx, t, h)
		if got := history.states(); !slices.Contains(got, "deprovisioning") || len(got) == 0 || got[len(got)-1] != "available" {
			t.Errorf("server-001 went through the states %q, want deprovisioning, then available", got)
		}
		if got := nestedString(h, "status", "provisioning", "image", "url"); got != "" {
			t.Errorf("status.provisioning.image.url = %q after deprovisioning, want none", got)
		}
		if nestedString(h, "status", "operationHistory", "deprovision", "start") == "" || nestedString(h, "status", "operationHistory", "deprovision", "end") == "" {
			t.Errorf("status.operationHistory.deprovision = %v, want a start and an end", h.Object["status"].(map[string]interface{})["operationHistory"])
		}
		if n := bmo.Cleanings(ns, "server-001"); n != 1 {
			t.Errorf("the stand-in counts %d cleanings of server-001, want 1 (automatedCleaningMode defaults to metadata)", n)
		}
	})

	t.Run("registration error", func(t *testing.T) {
		host := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "metal3.io/v1alpha1", "kind": "BareMetalHost",
			"metadata": map[string]interface{}{"name": "server-nocreds"},
			"spec": map[string]interface{}{"online": false, "bootMACAddress": "02:00:00:00:01:01", "bmc": map[string]interface{}{
				"address": "redfish-virtualmedia://192.0.2.200/redfish/v1/Systems/1", "credentialsName": "server-nocreds-bmc",
			}},
		}}
		if _, err := hosts.Create(ctx, host, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		h := waitBareMetalHost(ctx, t, hosts, "server-nocreds", "registering", func(h *unstructured.Unstructured) bool {
			return nestedString(h, "status", "errorType") == "registration error"
		})
		if got := nestedString(h, "status", "operationalStatus"); got != "error" {
			t.Errorf("status.operationalStatus = %q without credentials, want error", got)
		}
		// The credentials arrive: registration goes on.
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "server-nocreds-bmc"},
			StringData: map[string]string{"username": "admin", "password": "secret"},
		}
		if _, err := client.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		h = waitBareMetalHost(ctx, t, hosts, "server-nocreds", "available", func(h *unstructured.Unstructured) bool { return true })
		if got := nestedString(h, "status", "operationalStatus"); got != "OK" {
			t.Errorf("status.operationalStatus = %q once registered, want OK", got)
		}
	})
}

// checkInspected checks the inventory of an inspected host.
func checkInspected(t *testing.T, h *unstructured.Unstructured) {
	t.Helper()
	name := h.GetName()
	hw, _, _ := unstructured.NestedMap(h.Object, "status", "hardware")
	cpuCount, _, _ := unstructured.NestedInt64(hw, "cpu", "count")
	ram, _, _ := unstructured.NestedInt64(hw, "ramMebibytes")
	nics, _, _ := unstructured.NestedSlice(hw, "nics")
	storage, _, _ := unstructured.NestedSlice(hw, "storage")
	if got := nestedString(h, "status", "hardware", "cpu", "arch"); got != "x86_64" || cpuCount == 0 || ram == 0 || len(storage) == 0 {
		t.Errorf("%s: inspected hardware %v: want an x86_64 CPU count, RAM and storage", name, hw)
	}
	if got := nestedString(h, "status", "hardware", "hostname"); got != name {
		t.Errorf("%s: inspected hostname %q", name, got)
	}
	if len(nics) == 0 || len(nics) > 2 {
		t.Fatalf("%s: inspected NICs %v, want one or two", name, nics)
	}
	nic := nics[0].(map[string]interface{})
	if want := nestedString(h, "spec", "bootMACAddress"); nic["mac"] != want {
		t.Errorf("%s: first NIC's MAC %v, want the boot MAC %s", name, nic["mac"], want)
	}
	if ip, _ := nic["ip"].(string); !strings.HasPrefix(ip, "192.0.2.") {
		t.Errorf("%s: first NIC's IP %q is not of 192.0.2.0/24", name, ip)
	}
	for field, want := range map[string]string{
		"operationalStatus":                "OK",
		"goodCredentials.credentials.name": name + "-bmc",
		"hardwareProfile":                  "unknown",
	} {
		if got := nestedString(h, append([]string{"status"}, strings.Split(field, ".")...)...); got != want {
			t.Errorf("%s: status.%s = %q, want %q", name, field, got, want)
		}
	}
	if on, _, _ := unstructured.NestedBool(h.Object, "status", "poweredOn"); on {
		t.Errorf("%s: powered on after inspection, spec.online false", name)
	}
	for _, field := range []string{"lastUpdated", "operationHistory.register.end", "operationHistory.inspect.end"} {
		if nestedString(h, append([]string{"status"}, strings.Split(field, ".")...)...) == "" {
			t.Errorf("%s: status.%s is not set", name, field)
		}
	}
}

// hostHistory is what a watch saw of one host's status.
type hostHistory struct {
	mu     sync.Mutex
	events []*unstructured.Unstructured
}

func (h *hostHistory) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.events); n > 0 {
		h.events = h.events[n-1:]
	}
}

// caughtUp waits until the watch has delivered version obj of the host,
// which a poll read: the watch may deliver it a moment after the read.
func (h *hostHistory) caughtUp(ctx context.Context, t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	rv := obj.GetResourceVersion()
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, e := range h.events {
			if e.GetResourceVersion() == rv {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the watch of BareMetalHost %s never delivered resource version %s: %v", obj.GetName(), rv, err)
	}
}

// states is the host's provisioning states, each change once, "" left out.
func (h *hostHistory) states() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var states []string
	for _, e := range h.events {
		s := nestedString(e, "status", "provisioning", "state")
		if s != "" && (len(states) == 0 || states[len(states)-1] != s) {
			states = append(states, s)
		}
	}
	return states
}

// power is the host's power states, each change once.
func (h *hostHistory) power() []bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	var power []bool
	for _, e := range h.events {
		on, _, _ := unstructured.NestedBool(e.Object, "status", "poweredOn")
		if len(power) == 0 || power[len(power)-1] != on {
			power = append(power, on)
		}
	}
	return power
}

// watchBareMetalHost records every version of host name until the test ends.
func watchBareMetalHost(ctx context.Context, t *testing.T, hosts dynamic.ResourceInterface, name string) *hostHistory {
	t.Helper()
	w, err := hosts.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	h := &hostHistory{}
	go func() {
		for e := range w.ResultChan() {
			if u, ok := e.Object.(*unstructured.Unstructured); ok {
				h.mu.Lock()
				h.events = append(h.events, u)
				h.mu.Unlock()
			}
		}
	}()
	return h
}

// waitBareMetalHost waits until host name is in state and ok, and returns it.
func waitBareMetalHost(ctx context.Context, t *testing.T, hosts dynamic.ResourceInterface, name, state string, ok func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	var last *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		h, err := hosts.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		last = h
		return nestedString(h, "status", "provisioning", "state") == state && ok(h), nil
	})
	if err != nil {
		var status interface{}
		if last != nil {
			status = last.Object["status"]
		}
		t.Fatalf("waiting for BareMetalHost %s to be %s: %v; its status: %v", name, state, err, status)
	}
	return last
}

func patchBareMetalHost(ctx context.Context, t *testing.T, hosts dynamic.ResourceInterface, name, patch string) {
	t.Helper()
	if _, err := hosts.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patching BareMetalHost %s with %s: %v", name, patch, err)
	}
}

func poweredOn(want bool) func(*unstructured.Unstructured) bool {
	return func(h *unstructured.Unstructured) bool {
		on, _, _ := unstructured.NestedBool(h.Object, "status", "poweredOn")
		return on == want
	}
}

func nestedString(u *unstructured.Unstructured, fields ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, fields...)
	return s
}
