package host_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"

	"tenant.io/tenant-apiserver/pkg/host"
	"tenant.io/tenant-apiserver/pkg/hostnames"
)

func hostNamespace(name, owner string) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if owner != "" {
		ns.Annotations = map[string]string{hostnames.OwnerUIDAnnotation: owner}
	}
	return ns
}

// object is the metadata of an object of kind (group/version) in ns.
func object(apiVersion, kind, ns, name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiVersion, Kind: kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
	}
}

func describe(ws []host.Workload) string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, fmt.Sprintf("%s/%s=%s", w.Resource, w.Name, w.State))
	}
	return strings.Join(out, " ")
}

// TestKubeWorkloads lists what runs and what holds disks in one host
// namespace, sorted: pods and VM instances run, a VM runs when its
// instance exists and is stopped otherwise, PVCs and DataVolumes hold
// disks. A host failure is a 503.
func TestKubeWorkloads(t *testing.T) {
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, gv := range []schema.GroupVersion{{Version: "v1"}, {Group: "kubevirt.io", Version: "v1"}, {Group: "cdi.kubevirt.io", Version: "v1beta1"}} {
		for _, kind := range []string{"Pod", "PersistentVolumeClaim", "VirtualMachine", "VirtualMachineInstance", "DataVolume"} {
			scheme.AddKnownTypeWithName(gv.WithKind(kind), &metav1.PartialObjectMetadata{})
			scheme.AddKnownTypeWithName(gv.WithKind(kind+"List"), &metav1.PartialObjectMetadataList{})
		}
	}
	const dev = "acme-1-dev"
	md := metadatafake.NewSimpleMetadataClient(scheme,
		object("v1", "Pod", dev, "web"), object("v1", "Pod", dev, "db"), object("v1", "Pod", "acme-1-qa", "other"),
		object("kubevirt.io/v1", "VirtualMachine", dev, "vm-up"), object("kubevirt.io/v1", "VirtualMachine", dev, "vm-down"),
		object("kubevirt.io/v1", "VirtualMachineInstance", dev, "vm-up"),
		object("v1", "PersistentVolumeClaim", dev, "data"), object("cdi.kubevirt.io/v1beta1", "DataVolume", dev, "vm-down-disk"))
	client := fake.NewClientset(hostNamespace(dev, "uid-dev"), hostNamespace("acme-1-qa", ""))
	w := host.NewWorkloads(client, md)
	ctx := context.Background()

	got, err := host.In(ctx, w, dev, "uid-dev")
	if err != nil {
		t.Fatal(err)
	}
	want := "datavolumes/vm-down-disk=Disk persistentvolumeclaims/data=Disk pods/db=Running pods/web=Running " +
		"virtualmachineinstances/vm-up=Running virtualmachines/vm-down=Stopped virtualmachines/vm-up=Running"
	if describe(got) != want {
		t.Errorf("workloads of %s:\n got %s\nwant %s", dev, describe(got), want)
	}
	if got, err := host.In(ctx, w, "missing", "uid-dev"); err != nil || len(got) != 0 {
		t.Errorf("workloads of a missing namespace: %s, %v", describe(got), err)
	}
	// Someone else's namespace under the would-be name, or one made for
	// an earlier Namespace: what it holds is not the tenant's.
	for _, owner := range []string{"uid-qa", ""} {
		if got, err := host.In(ctx, w, "acme-1-qa", types.UID(owner)); err != nil || len(got) != 0 {
			t.Errorf("workloads of a namespace not made for %q: %s, %v", owner, describe(got), err)
		}
	}

	// A host without KubeVirt or CDI serves none of their kinds: only
	// pods and PVCs count.
	md.PrependReactor("list", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetResource().Group != "" {
			return true, nil, apierrors.NewNotFound(a.GetResource().GroupResource(), "")
		}
		return false, nil, nil
	})
	got, err = host.In(ctx, w, dev, "uid-dev")
	if err != nil || describe(got) != "persistentvolumeclaims/data=Disk pods/db=Running pods/web=Running" {
		t.Errorf("without KubeVirt: %s, %v", describe(got), err)
	}

	md.PrependReactor("list", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	_, err = host.In(ctx, w, dev, "uid-dev")
	if !apierrors.IsServiceUnavailable(err) ||
		!strings.Contains(err.Error(), "cannot check the host for workloads: listing pods in host namespace acme-1-dev: connection refused") {
		t.Errorf("host failure: %v, want 503", err)
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		w    host.Workload
		want string
	}{
		{host.Workload{Resource: "pods", Name: "web", State: host.Running}, "pods dev/web is running in tenant acme"},
		{host.Workload{Resource: "virtualmachines", Name: "db", State: host.Stopped}, "virtualmachines dev/db is stopped in tenant acme; deleting would destroy its disks"},
		{host.Workload{Resource: "datavolumes", Name: "db", State: host.Disk}, "datavolumes dev/db holds a disk in tenant acme; deleting would destroy its data"},
	} {
		if got := tc.w.Describe("dev/"+tc.w.Name, "tenant acme"); got != tc.want {
			t.Errorf("Describe(%+v) = %q, want %q", tc.w, got, tc.want)
		}
	}
}
