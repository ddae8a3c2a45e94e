package hostclaim

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostbinding"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/hostclass"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/syncer/queue"
)

const (
	tenantLabel    = hostnames.TenantLabel
	namespaceLabel = hostnames.NamespaceLabel
)

// Reasons of a HostClaim's conditions besides the syncer's common ones.
const (
	// ReasonNoHostAvailable: no free server of the class matches the selector.
	ReasonNoHostAvailable = "NoHostAvailable"
	// ReasonClassNotOffered: the class is gone or no longer offered to the tenant.
	ReasonClassNotOffered = "ClassNotOffered"
	// ReasonBound: a server is bound to the claim.
	ReasonBound = "Bound"
	// ReasonHostGone: the provider removed the bound server.
	ReasonHostGone = "HostGone"
	// ReasonHostError: the server reports an error; the provider sees which.
	ReasonHostError = "HostError"
	// ReasonDataNotFound, ReasonDataInvalid: a cloud-init data Secret is
	// missing, or too large or without the expected key.
	ReasonDataNotFound = "DataNotFound"
	ReasonDataInvalid  = "DataInvalid"
	// ReasonProvisioned, ReasonProvisioning, ReasonNoImage,
	// ReasonDeprovisioning, ReasonPowering: where a bound server stands.
	ReasonProvisioned    = "Provisioned"
	ReasonProvisioning   = "Provisioning"
	ReasonNoImage        = "NoImage"
	ReasonDeprovisioning = "Deprovisioning"
	ReasonPowering       = "Powering"
	// ReasonNoBindings: the server runs without a binding record.
	ReasonNoBindings = "NoBindingRecord"
	// ReasonNoBareMetalHosts: the host does not serve Metal3's BareMetalHosts.
	ReasonNoBareMetalHosts = "NoBareMetalHosts"
)

// details are what a sync reports besides the conditions.
type details struct {
	// bound: a server is bound; host is it, as last seen.
	bound bool
	host  *bareMetalHost
	// hardware: the class shows the hardware summary.
	hardware bool
	// rebooted is the reboot request carried out by this sync.
	rebooted *metav1.Time
	// associatedReason and associatedMessage explain Associated.
	associatedReason, associatedMessage string
}

type outcome = controller.Outcome[details]

// claimRef is the hostbinding name of claim hc of tenant t.
func claimRef(t *tenant.Tenant, key queue.Key, hc *tenant.HostClaim) hostbinding.Claim {
	return hostbinding.Claim{TenantUID: t.UID, Tenant: t.Name, Namespace: key.Namespace, Name: hc.Name, UID: hc.UID, Class: hc.Spec.HostClass}
}

func (c *Controller) sync(ctx context.Context, t *tenant.Tenant, hc *tenant.HostClaim, key queue.Key) (outcome, error) {
	bindings := c.src.Storage.HostBindings
	if bindings == nil {
		return outcome{Reason: ReasonNoBindings, Message: "this server keeps no record of server bindings (no etcd): no server is bound"}, nil
	}
	if !c.src.HostBareMetalHosts.HasSynced() {
		// The informer starts once the host serves them (Metal3 installed
		// later); its first list queues the pending claims.
		return outcome{Reason: ReasonNoBareMetalHosts, Message: "the host does not serve Metal3 BareMetalHosts (yet)", RequeueAfter: orphanPeriod, Background: true}, nil
	}
	hostNS := hostnames.Namespace(t.Name, t.UID, key.Namespace)
	b, bound, err := bindings.ByClaim(ctx, hc.UID)
	if err != nil {
		return outcome{}, err
	}
	var class *tenant.HostClass
	if obj, exists, err := c.src.HostClasses.GetStore().GetByKey(hc.Spec.HostClass); err != nil {
		return outcome{}, err
	} else if exists {
		class = obj.(*tenant.HostClass)
	}
	if !bound {
		if class == nil || !hostclass.OfferedTo(t.Name, t.UID, class) {
			// Looked at again when a class is added or changed.
			out := outcome{Synced: true}
			out.Details.associatedReason, out.Details.associatedMessage = ReasonClassNotOffered, fmt.Sprintf("HostClass %q is not offered to this tenant", hc.Spec.HostClass)
			return out, nil
		}
		if b, bound, err = c.bind(ctx, t, key, hc, class); err != nil {
			return outcome{}, err
		}
		if !bound {
			out := outcome{Synced: true}
			out.Details.associatedReason = ReasonNoHostAvailable
			out.Details.associatedMessage = fmt.Sprintf("no free server of HostClass %q matches the selector; the claim waits for one", hc.Spec.HostClass)
			return out, nil
		}
	}
	bmh, exists, err := c.host(b.Host)
	if err != nil {
		return outcome{}, err
	}
	out := outcome{Synced: true}
	out.Details.bound = true
	out.Details.hardware = class == nil || class.Spec.Hardware != tenant.HostHardwareNone
	if !exists {
		out.Details.associatedReason, out.Details.associatedMessage = ReasonHostGone, "the provider removed the server bound to this claim; delete the claim to claim another"
		return out, nil
	}
	// Data first: no image is written before the data it boots with.
	refs, reason, msg, err := c.ensureData(ctx, hc, hostNS, bmh)
	if err != nil {
		return outcome{}, err
	}
	want := bmh.DeepCopy()
	want.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: controller.HostClaimConsumerAPIVersion, Kind: controller.HostClaimConsumerKind,
		Namespace: hostNS, Name: hc.Name, UID: hc.UID}
	want.Spec.Online = hc.Spec.Online
	want.Spec.AutomatedCleaningMode = cleaningMetadata
	want.Spec.UserData, want.Spec.MetaData, want.Spec.NetworkData = refs[0], refs[1], refs[2]
	switch {
	case hc.Spec.Image == nil:
		want.Spec.Image = nil
	case reason == "" && (bmh.Spec.Image != nil || bmh.Status.Provisioning.State == stateAvailable || bmh.Status.Provisioning.State == stateReady):
		// A new image is written once the old one is cleaned off.
		want.Spec.Image = image(hc.Spec.Image)
	}
	if tenant.HostClaimRebootPending(hc) && bmh.Status.PoweredOn && bmh.Status.Provisioning.State == stateProvisioned {
		if want.Annotations == nil {
			want.Annotations = map[string]string{}
		}
		want.Annotations[RebootAnnotation] = ""
		out.Details.rebooted = hc.Spec.RebootRequestedAt
	}
	if !reflect.DeepEqual(want.Spec, bmh.Spec) || !reflect.DeepEqual(want.Annotations, bmh.Annotations) {
		if err := c.update(ctx, want); err != nil {
			if apierrors.IsConflict(err) {
				return outcome{}, controller.Requeue(0, "the server changed while being written")
			}
			return outcome{}, err
		}
		bmh = want
	}
	out.Details.host = bmh
	if reason != "" {
		out.Details.associatedReason, out.Details.associatedMessage = reason, msg
	}
	// No event says when a tenant's Secret appears or changes (the syncer
	// watches no Secrets): a claim waiting for its data looks again.
	if st := bmh.Status.Provisioning.State; reason != "" || st == stateProvisioning || st == stateDeprovisioning || bmh.Status.PoweredOn != hc.Spec.Online {
		out.RequeueAfter, out.Background = stateRecheck, true
	}
	return out, nil
}

// bind binds a free server of class matching hc's selector to hc, exactly
// once: the binding record decides between claims racing for a server.
func (c *Controller) bind(ctx context.Context, t *tenant.Tenant, key queue.Key, hc *tenant.HostClaim, class *tenant.HostClass) (hostbinding.Binding, bool, error) {
	sel := labels.Everything()
	if hc.Spec.HostSelector != nil {
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(hc.Spec.HostSelector); err != nil {
			return hostbinding.Binding{}, false, nil // validated on create
		}
	}
	hosts, err := c.classHosts(class)
	if err != nil {
		return hostbinding.Binding{}, false, err
	}
	var candidates []hostbinding.Host
	for _, h := range hosts {
		if free(h) && sel.Matches(tenantLabelsOf(h, class)) {
			candidates = append(candidates, hostRef(h))
		}
	}
	if len(candidates) == 0 {
		return hostbinding.Binding{}, false, nil
	}
	b, err := c.src.Storage.HostBindings.BindFirstFree(ctx, claimRef(t, key, hc), candidates)
	switch {
	case errors.Is(err, hostbinding.ErrNoHost):
		return hostbinding.Binding{}, false, nil
	case errors.Is(err, hostbinding.ErrContention):
		return hostbinding.Binding{}, false, controller.Requeue(0, "other claims took the free servers first")
	case err != nil:
		return hostbinding.Binding{}, false, err
	}
	return b, true, nil
}

// tenantLabelsOf returns the labels of h that class lets tenants select on.
func tenantLabelsOf(h *bareMetalHost, class *tenant.HostClass) labels.Set {
	out := labels.Set{}
	for _, k := range class.Spec.TenantLabels {
		if v, ok := h.Labels[k]; ok {
			out[k] = v
		}
	}
	return out
}

func image(i *tenant.HostImage) *bmhImage {
	out := &bmhImage{URL: i.URL, Checksum: i.Checksum, ChecksumType: i.ChecksumType}
	if i.Format != "" {
		f := i.Format
		out.DiskFormat = &f
	}
	return out
}

// removeGone gives back the server of a HostClaim that no longer exists.
func (c *Controller) removeGone(ctx context.Context, t *tenant.Tenant, key queue.Key) error {
	bindings := c.src.Storage.HostBindings
	if bindings == nil || t == nil {
		return nil
	}
	hostNS := hostnames.Namespace(t.Name, t.UID, key.Namespace)
	hosts, err := c.consumerOf(hostNS, key.Name)
	if err != nil {
		return err
	}
	for _, h := range hosts {
		if h.Spec.ConsumerRef == nil {
			continue
		}
		b, ok, err := bindings.ByClaim(ctx, h.Spec.ConsumerRef.UID)
		if err != nil {
			return err
		}
		if !ok {
			// Bound by no record: only the reference is left to clear.
			b = hostbinding.Binding{Host: hostRef(h)}
		}
		done, err := c.giveBack(ctx, b)
		if err != nil {
			return err
		}
		if !done {
			return controller.Requeue(stateRecheck, "the server of the deleted claim is being cleaned")
		}
	}
	return nil
}

// giveBack has the server of b deprovisioned and cleaned, then clears its
// consumer, deletes the data copied for it and releases the binding. It
// reports whether the server is back in the pool.
func (c *Controller) giveBack(ctx context.Context, b hostbinding.Binding) (bool, error) {
	bmh, exists, err := c.host(b.Host)
	if err != nil {
		return false, err
	}
	if exists {
		want := bmh.DeepCopy()
		want.Spec.Image, want.Spec.Online = nil, false
		want.Spec.UserData, want.Spec.MetaData, want.Spec.NetworkData = nil, nil, nil
		want.Spec.AutomatedCleaningMode = cleaningMetadata
		delete(want.Annotations, RebootAnnotation)
		if cleaned(bmh) {
			want.Spec.ConsumerRef = nil
		}
		if !reflect.DeepEqual(want.Spec, bmh.Spec) || !reflect.DeepEqual(want.Annotations, bmh.Annotations) {
			if err := c.update(ctx, want); err != nil {
				if apierrors.IsConflict(err) {
					return false, nil
				}
				return false, err
			}
		}
		if !cleaned(bmh) {
			return false, nil
		}
		if err := c.deleteData(ctx, bmh.Namespace, b.Claim.UID); err != nil {
			return false, err
		}
	}
	if b.Claim.UID == "" {
		return true, nil
	}
	return true, c.src.Storage.HostBindings.Release(ctx, b)
}

// setStatus puts out into hc's status.
func (c *Controller) setStatus(t *tenant.Tenant, key queue.Key, hc *tenant.HostClaim, out outcome) func(*tenant.HostClaim) bool {
	d := out.Details
	phase, power := tenant.HostClaimPending, tenant.HostPowerState("")
	ready, readyReason, readyMessage := false, d.associatedReason, d.associatedMessage
	var addresses []tenant.HostAddress
	var nics []tenant.HostNIC
	var hw *tenant.HostHardware
	boot := ""
	if h := d.host; d.bound && h != nil {
		phase, readyReason, readyMessage = hostPhase(h)
		power = tenant.HostPowerOff
		if h.Status.PoweredOn {
			power = tenant.HostPowerOn
		}
		boot = h.Spec.BootMACAddress
		if hd := h.Status.HardwareDetails; hd != nil {
			for _, n := range hd.NIC {
				nics = append(nics, tenant.HostNIC{Name: n.Name, MAC: n.MAC, IP: n.IP, SpeedGbps: int32(n.SpeedGbps)})
				if n.IP != "" {
					addresses = append(addresses, tenant.HostAddress{Type: "InternalIP", Address: n.IP})
				}
			}
			if d.hardware {
				hw = &tenant.HostHardware{CPUArch: hd.CPU.Arch, CPUCount: int32(hd.CPU.Count), RAMMebibytes: int32(hd.RAMMebibytes), NICCount: int32(len(hd.NIC))}
				for _, s := range hd.Storage {
					hw.StorageGigabytes += s.SizeBytes / 1e9
				}
			}
		}
		if phase == tenant.HostClaimProvisioned && h.Status.PoweredOn == hc.Spec.Online && d.associatedReason == "" {
			ready = true
		} else if phase == tenant.HostClaimProvisioned && d.associatedReason == "" {
			readyReason, readyMessage = ReasonPowering, fmt.Sprintf("the server is powering %s", map[bool]string{true: "on", false: "off"}[hc.Spec.Online])
		}
		if d.associatedReason != "" && phase != tenant.HostClaimFailed {
			readyReason, readyMessage = d.associatedReason, d.associatedMessage
		}
	} else if d.bound {
		phase = tenant.HostClaimFailed
	}
	associated, assocReason, assocMessage := d.bound, d.associatedReason, d.associatedMessage
	if d.bound && (assocReason == ReasonDataNotFound || assocReason == ReasonDataInvalid || assocReason == "") {
		assocReason, assocMessage = ReasonBound, fmt.Sprintf("a server of HostClass %q is bound to the claim", hc.Spec.HostClass)
	}
	if !out.Synced {
		// What the server is and holds was not read: the last status
		// stays as it was, and only says that it may be out of date.
		return func(live *tenant.HostClaim) bool {
			s := &live.Status
			gen := live.Generation
			changed := controller.SetCondition(&s.Conditions, gen, tenant.ConditionHostSynced, false, out.Reason, out.Message)
			return controller.SetCondition(&s.Conditions, gen, tenant.ConditionReady, false, out.Reason, out.Message) || changed
		}
	}
	if readyReason == "" {
		readyReason, readyMessage = ReasonNoHostAvailable, "no server is bound yet"
	}
	syncedReason, syncedMessage := out.Reason, out.Message
	if out.Synced {
		syncedReason, syncedMessage = controller.ReasonSynced, "the server's consumer, image, power and data match the claim"
		if !d.bound {
			syncedMessage = "no server is bound: nothing to write"
		}
	}
	return func(live *tenant.HostClaim) bool {
		s := &live.Status
		gen := live.Generation
		prev := s.DeepCopy()
		s.ObservedGeneration, s.Phase, s.Power, s.Addresses, s.NICs, s.Hardware, s.BootMACAddress = gen, phase, power, addresses, nics, hw, boot
		if d.rebooted != nil {
			s.LastRebootRequest = d.rebooted.DeepCopy()
		}
		changed := !reflect.DeepEqual(prev, s)
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionHostSynced, out.Synced, syncedReason, syncedMessage) || changed
		changed = controller.SetCondition(&s.Conditions, gen, ConditionAssociated, associated, assocReason, assocMessage) || changed
		changed = controller.SetCondition(&s.Conditions, gen, tenant.ConditionReady, ready, readyReason, readyMessage) || changed
		return changed
	}
}

// ConditionAssociated is true while a server is bound to the claim.
const ConditionAssociated = "Associated"

// hostPhase returns the claim's phase for its server h, and why the claim
// is not Ready in that phase. Error messages stay the provider's: they
// may name the BMC.
func hostPhase(h *bareMetalHost) (tenant.HostClaimPhase, string, string) {
	if h.Status.OperationalStatus == operationalError {
		return tenant.HostClaimFailed, ReasonHostError, fmt.Sprintf("the server reports a %s; the provider sees the details", h.Status.ErrorType)
	}
	switch h.Status.Provisioning.State {
	case stateProvisioned:
		return tenant.HostClaimProvisioned, ReasonProvisioned, "the server runs the image"
	case stateProvisioning:
		return tenant.HostClaimProvisioning, ReasonProvisioning, "the image is being written"
	case stateDeprovisioning:
		return tenant.HostClaimDeprovisioning, ReasonDeprovisioning, "the image is being removed and the disks cleaned"
	}
	if h.Spec.Image != nil {
		return tenant.HostClaimProvisioning, ReasonProvisioning, "the image is about to be written"
	}
	return tenant.HostClaimBound, ReasonNoImage, "the server is bound and has no image: set spec.image to provision it"
}
