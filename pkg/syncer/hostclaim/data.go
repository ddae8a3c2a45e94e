package hostclaim

import (
	"context"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/validation"
	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// dataKinds are a claim's cloud-init data, in the order of ensureData's
// references: the claim's field, the key the baremetal-operator reads from
// the Secret, and the suffix of the copy's name.
var dataKinds = [3]struct {
	field, key, suffix string
	ref                func(*tenant.HostClaim) *tenant.HostDataSecret
}{
	{"userData", "userData", "user-data", func(c *tenant.HostClaim) *tenant.HostDataSecret { return c.Spec.UserData }},
	{"metaData", "metaData", "meta-data", func(c *tenant.HostClaim) *tenant.HostDataSecret { return c.Spec.MetaData }},
	{"networkData", "networkData", "network-data", func(c *tenant.HostClaim) *tenant.HostDataSecret { return c.Spec.NetworkData }},
}

// ensureData copies the claim's data Secrets, read from its own host
// namespace hostNS and nowhere else, next to its server bmh in the
// provider's namespace, and returns the references the server gets. A
// Secret missing, too large or without its key is reported (reason and
// message) and gets no copy; the server gets no image until it is fixed.
func (c *Controller) ensureData(ctx context.Context, hc *tenant.HostClaim, hostNS string, bmh *bareMetalHost) ([3]*corev1.SecretReference, string, string, error) {
	var refs [3]*corev1.SecretReference
	reason, message := "", ""
	for i, k := range dataKinds {
		name := hostnames.HostDataSecret(bmh.Name, k.suffix)
		ref := k.ref(hc)
		if ref == nil {
			if err := c.deleteSecret(ctx, bmh.Namespace, name); err != nil {
				return refs, "", "", err
			}
			continue
		}
		src, err := c.src.Host.CoreV1().Secrets(hostNS).Get(ctx, ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			reason, message = ReasonDataNotFound, fmt.Sprintf("spec.%s: Secret %q not found in Namespace %s", k.field, ref.Name, hc.Namespace)
			continue
		}
		if err != nil {
			return refs, "", "", err
		}
		value, msg := dataValue(src, k.key)
		if msg != "" {
			reason, message = ReasonDataInvalid, fmt.Sprintf("spec.%s: Secret %q %s", k.field, ref.Name, msg)
			continue
		}
		want := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: bmh.Namespace, Labels: map[string]string{ClaimLabel: string(hc.UID)}},
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{k.key: value},
		}
		if err := c.applySecret(ctx, want); err != nil {
			return refs, "", "", err
		}
		refs[i] = &corev1.SecretReference{Name: name, Namespace: bmh.Namespace}
	}
	return refs, reason, message, nil
}

// dataValue returns the data of Secret s under key, or its only key, or
// why it has none that may be used.
func dataValue(s *corev1.Secret, key string) ([]byte, string) {
	v, ok := s.Data[key]
	if !ok && len(s.Data) == 1 {
		for _, only := range s.Data {
			v, ok = only, true
		}
	}
	switch {
	case !ok:
		return nil, fmt.Sprintf("has no key %q (and more than one other key)", key)
	case len(v) > validation.MaxHostDataBytes:
		return nil, fmt.Sprintf("holds %d bytes; at most %d are accepted", len(v), validation.MaxHostDataBytes)
	}
	return v, ""
}

func (c *Controller) applySecret(ctx context.Context, want *corev1.Secret) error {
	secrets := c.src.Host.CoreV1().Secrets(want.Namespace)
	got, err := secrets.Get(ctx, want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = secrets.Create(ctx, want, metav1.CreateOptions{FieldManager: FieldManager})
		return err
	}
	if err != nil {
		return err
	}
	if reflect.DeepEqual(got.Data, want.Data) && reflect.DeepEqual(got.Labels, want.Labels) && got.Type == want.Type {
		return nil
	}
	got.Data, got.Labels = want.Data, want.Labels
	_, err = secrets.Update(ctx, got, metav1.UpdateOptions{FieldManager: FieldManager})
	return err
}

func (c *Controller) deleteSecret(ctx context.Context, ns, name string) error {
	err := c.src.Host.CoreV1().Secrets(ns).Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// deleteData deletes the data Secrets copied for claim uid in namespace ns.
func (c *Controller) deleteData(ctx context.Context, ns string, uid types.UID) error {
	if uid == "" {
		return nil
	}
	err := c.src.Host.CoreV1().Secrets(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: ClaimLabel + "=" + string(uid)})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
