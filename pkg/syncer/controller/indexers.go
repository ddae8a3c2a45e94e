package controller

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// ByTenant is the index of objects by their tenant.io/tenant label, on
// every informer of Sources.
const ByTenant = "tenant"

func indexByTenant(obj interface{}) ([]string, error) {
	if h, ok := obj.(hostnames.LabelReader); ok { // a held host object: no map made
		if t := h.Label(hostnames.TenantLabel); t != "" {
			return []string{t}, nil
		}
		return nil, nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	if t := m.GetLabels()[hostnames.TenantLabel]; t != "" {
		return []string{t}, nil
	}
	return nil, nil
}

// ByVRF is the index of VRFPeerings by status.vrf, and of BGPSessionStates
// by the VRF of their session.
const ByVRF = "vrf"

func indexByVRF(obj interface{}) ([]string, error) {
	vrf := ""
	switch o := obj.(type) {
	case *tenant.VRFPeering:
		vrf = o.Status.VRF
	case *unstructured.Unstructured:
		vrf, _, _ = unstructured.NestedString(o.Object, "status", "vrf")
	}
	if vrf == "" {
		return nil, nil
	}
	return []string{vrf}, nil
}

// indexBySpecTenant indexes VRFPeerings by the tenant they name.
func indexBySpecTenant(obj interface{}) ([]string, error) {
	if p, ok := obj.(*tenant.VRFPeering); ok && p.Spec.Tenant != "" {
		return []string{p.Spec.Tenant}, nil
	}
	return nil, nil
}

// Shared prepares inf, a process-wide informer of every FlowSchema that is
// not started yet, for HostClients.FlowSchemas.
func Shared(inf cache.SharedIndexInformer) error {
	return inf.AddIndexers(cache.Indexers{ByTenant: indexByTenant})
}

// ByConsumer is the index of BareMetalHosts by the HostClaim their
// spec.consumerRef names: "<host namespace>/<name>".
const ByConsumer = "consumer"

// HostClaimConsumerKind and HostClaimConsumerAPIVersion are what the
// syncer writes in the consumerRef of a BareMetalHost bound to a HostClaim.
const (
	HostClaimConsumerKind       = "HostClaim"
	HostClaimConsumerAPIVersion = tenant.GroupName + "/v1alpha1"
)

func indexByConsumer(obj interface{}) ([]string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, nil
	}
	ref, found, _ := unstructured.NestedStringMap(u.Object, "spec", "consumerRef")
	if !found || ref["kind"] != HostClaimConsumerKind || ref["apiVersion"] != HostClaimConsumerAPIVersion {
		return nil, nil
	}
	return []string{ref["namespace"] + "/" + ref["name"]}, nil
}
