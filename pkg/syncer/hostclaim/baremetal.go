package hostclaim

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostbinding"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// The fields of Metal3's BareMetalHost (metal3.io/v1alpha1, as of
// baremetal-operator v0.10) that the syncer reads. Metal3's own Go types
// do not build with this module's Kubernetes libraries (their webhooks
// need another controller-runtime), so the host's objects are read into
// these and written back field by field (Controller.update), leaving
// every other field as the provider wrote it.
type bareMetalHost struct {
	bmhFields
	// raw is the host's object, as read.
	raw *unstructured.Unstructured
}

// bmhFields are the fields of a BareMetalHost that are decoded.
type bmhFields struct {
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              bmhSpec   `json:"spec,omitempty"`
	Status            bmhStatus `json:"status,omitempty"`
}

type bmhSpec struct {
	BootMACAddress        string                  `json:"bootMACAddress,omitempty"`
	Online                bool                    `json:"online"`
	ConsumerRef           *corev1.ObjectReference `json:"consumerRef,omitempty"`
	Image                 *bmhImage               `json:"image,omitempty"`
	UserData              *corev1.SecretReference `json:"userData,omitempty"`
	MetaData              *corev1.SecretReference `json:"metaData,omitempty"`
	NetworkData           *corev1.SecretReference `json:"networkData,omitempty"`
	ExternallyProvisioned bool                    `json:"externallyProvisioned,omitempty"`
	AutomatedCleaningMode string                  `json:"automatedCleaningMode,omitempty"`
}

type bmhImage struct {
	URL          string  `json:"url"`
	Checksum     string  `json:"checksum,omitempty"`
	ChecksumType string  `json:"checksumType,omitempty"`
	DiskFormat   *string `json:"format,omitempty"`
}

type bmhStatus struct {
	OperationalStatus string       `json:"operationalStatus,omitempty"`
	ErrorType         string       `json:"errorType,omitempty"`
	HardwareDetails   *bmhHardware `json:"hardware,omitempty"`
	Provisioning      struct {
		State string   `json:"state,omitempty"`
		Image bmhImage `json:"image,omitempty"`
	} `json:"provisioning,omitempty"`
	PoweredOn bool `json:"poweredOn"`
}

type bmhHardware struct {
	RAMMebibytes int `json:"ramMebibytes,omitempty"`
	NIC          []struct {
		Name      string `json:"name,omitempty"`
		MAC       string `json:"mac,omitempty"`
		IP        string `json:"ip,omitempty"`
		SpeedGbps int    `json:"speedGbps,omitempty"`
	} `json:"nics,omitempty"`
	Storage []struct {
		SizeBytes int64 `json:"sizeBytes,omitempty"`
	} `json:"storage,omitempty"`
	CPU struct {
		Arch  string `json:"arch,omitempty"`
		Count int    `json:"count,omitempty"`
	} `json:"cpu,omitempty"`
}

// Metal3's provisioning states and operational status the syncer acts on.
const (
	stateNone           = ""
	stateRegistering    = "registering"
	stateInspecting     = "inspecting"
	statePreparing      = "preparing"
	stateReady          = "ready"
	stateAvailable      = "available"
	stateProvisioning   = "provisioning"
	stateProvisioned    = "provisioned"
	stateDeprovisioning = "deprovisioning"
	operationalError    = "error"
	cleaningMetadata    = "metadata"
)

// RebootAnnotation is the reboot request the syncer puts on a claimed
// server for its claim's spec.rebootRequestedAt: Metal3's reboot
// annotation without a suffix, which asks for one power cycle and which
// the baremetal-operator removes once the server is off. (A suffixed one
// would keep the server off until removed.)
const RebootAnnotation = "reboot.metal3.io"

// fromUnstructured returns the BareMetalHost obj holds, and obj.
func fromUnstructured(obj interface{}) (*bareMetalHost, error) {
	u, ok := controller.Unwrap(obj).(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("not a BareMetalHost: %T", obj)
	}
	h := &bareMetalHost{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &h.bmhFields); err != nil {
		return nil, fmt.Errorf("decoding BareMetalHost %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	h.raw = u
	return h, nil
}

// host returns the BareMetalHost h names, from the informer.
func (c *Controller) host(h hostbinding.Host) (*bareMetalHost, bool, error) {
	obj, exists, err := c.src.HostBareMetalHosts.GetStore().GetByKey(h.Namespace + "/" + h.Name)
	if err != nil || !exists {
		return nil, false, err
	}
	bmh, err := fromUnstructured(obj)
	return bmh, err == nil, err
}

// consumerOf returns the BareMetalHosts whose consumerRef names the claim
// name in host namespace ns.
func (c *Controller) consumerOf(ns, name string) ([]*bareMetalHost, error) {
	objs, err := c.src.HostBareMetalHosts.GetIndexer().ByIndex(controller.ByConsumer, ns+"/"+name)
	if err != nil {
		return nil, err
	}
	out := make([]*bareMetalHost, 0, len(objs))
	for _, o := range objs {
		bmh, err := fromUnstructured(o)
		if err != nil {
			return nil, err
		}
		out = append(out, bmh)
	}
	return out, nil
}

// classHosts returns the BareMetalHosts of class, sorted by name.
func (c *Controller) classHosts(class *tenant.HostClass) ([]*bareMetalHost, error) {
	sel := labels.Everything()
	if class.Spec.HostSelector != nil {
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(class.Spec.HostSelector); err != nil {
			return nil, err
		}
	}
	objs, err := c.src.HostBareMetalHosts.GetIndexer().ByIndex(cache.NamespaceIndex, class.Spec.HostNamespace)
	if err != nil {
		return nil, err
	}
	out := make([]*bareMetalHost, 0, len(objs))
	for _, o := range objs {
		bmh, err := fromUnstructured(o)
		if err != nil {
			return nil, err
		}
		if sel.Matches(labels.Set(bmh.Labels)) {
			out = append(out, bmh)
		}
	}
	slices.SortFunc(out, func(a, b *bareMetalHost) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// free says whether a server can be bound: registered and inspected,
// with no image, no consumer and no deletion under way, and not in error.
func free(h *bareMetalHost) bool {
	st := h.Status.Provisioning.State
	return h.DeletionTimestamp == nil && h.Spec.ConsumerRef == nil && h.Spec.Image == nil &&
		(st == stateAvailable || st == stateReady) &&
		h.Status.OperationalStatus != operationalError && !h.Spec.ExternallyProvisioned
}

// cleaned says whether a server given up by its claim is back in the
// pool's state: deprovisioned (its disks cleaned, when cleaning is on) and
// holding no image.
func cleaned(h *bareMetalHost) bool {
	st := h.Status.Provisioning.State
	return h.Spec.Image == nil && h.Status.Provisioning.Image.URL == "" &&
		(st == stateAvailable || st == stateReady || st == stateRegistering ||
			st == stateInspecting || st == stateNone)
}

// update writes the syncer's fields of want (consumer, image, power, data,
// cleaning, reboot annotation) into the host's object it was read from,
// under the resourceVersion it was read at. Status is the
// baremetal-operator's: never written here.
func (c *Controller) update(ctx context.Context, want *bareMetalHost) error {
	u := want.raw.DeepCopy()
	delete(u.Object, "status")
	set := func(v interface{}, fields ...string) error {
		if v == nil || reflect.ValueOf(v).IsNil() {
			unstructured.RemoveNestedField(u.Object, fields...)
			return nil
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
		if err != nil {
			return err
		}
		return unstructured.SetNestedMap(u.Object, m, fields...)
	}
	for _, f := range []struct {
		v    interface{}
		name string
	}{{want.Spec.ConsumerRef, "consumerRef"}, {want.Spec.Image, "image"}, {want.Spec.UserData, "userData"},
		{want.Spec.MetaData, "metaData"}, {want.Spec.NetworkData, "networkData"}} {
		if err := set(f.v, "spec", f.name); err != nil {
			return err
		}
	}
	if err := unstructured.SetNestedField(u.Object, want.Spec.Online, "spec", "online"); err != nil {
		return err
	}
	if err := unstructured.SetNestedField(u.Object, want.Spec.AutomatedCleaningMode, "spec", "automatedCleaningMode"); err != nil {
		return err
	}
	u.SetAnnotations(want.Annotations)
	_, err := c.src.HostDynamic.Resource(controller.BareMetalHosts).Namespace(want.Namespace).Update(ctx, u, metav1.UpdateOptions{FieldManager: FieldManager})
	return err
}

// DeepCopy copies the fields of h the syncer writes; the status and the
// host object read are shared, and never changed.
func (h *bareMetalHost) DeepCopy() *bareMetalHost {
	out := &bareMetalHost{}
	out.Status = h.Status
	h.DeepCopyInto(&out.ObjectMeta)
	out.Spec = h.Spec
	if h.Spec.ConsumerRef != nil {
		r := *h.Spec.ConsumerRef
		out.Spec.ConsumerRef = &r
	}
	if h.Spec.Image != nil {
		i := *h.Spec.Image
		out.Spec.Image = &i
	}
	out.raw = h.raw
	return out
}

// hostRef is the hostbinding name of bmh.
func hostRef(bmh *bareMetalHost) hostbinding.Host {
	return hostbinding.Host{Namespace: bmh.Namespace, Name: bmh.Name}
}
