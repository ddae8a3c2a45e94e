package tenant

import corev1 "k8s.io/api/core/v1"

// SameTarget says whether two FloatingIP targets name the same workload
// (both nil: neither has one).
func SameTarget(a, b *FloatingIPTarget) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// HostQuota is what the ResourceQuota of each of the tenant's host
// namespaces shares out: the compute quota and the object counts
// together (validation keeps their keys apart). Nil when neither is set.
func (q *TenantQuota) HostQuota() corev1.ResourceList {
	if len(q.Objects) == 0 {
		return q.Compute
	}
	if len(q.Compute) == 0 {
		return q.Objects
	}
	out := make(corev1.ResourceList, len(q.Compute)+len(q.Objects))
	for r, v := range q.Compute {
		out[r] = v
	}
	for r, v := range q.Objects {
		out[r] = v
	}
	return out
}

// ServiceNetworkMode is the spec's service network mode: Private when it
// names none (an object stored before the field existed, or one made
// inside the server without defaulting).
func (s *NetworkSpec) ServiceNetworkMode() ServiceNetworkMode {
	if s.ServiceNetwork == "" {
		return ServiceNetworkPrivate
	}
	return s.ServiceNetwork
}

// SharesServices says whether the network's Services are shared with the
// tenant's other Shared networks.
func (s *NetworkSpec) SharesServices() bool { return s.ServiceNetwork == ServiceNetworkShared }

// HostClaimRebootPending reports whether spec.rebootRequestedAt asks for a
// reboot not carried out yet.
func HostClaimRebootPending(c *HostClaim) bool {
	r := c.Spec.RebootRequestedAt
	return r != nil && (c.Status.LastRebootRequest == nil || r.After(c.Status.LastRebootRequest.Time))
}
