// +k8s:deepcopy-gen=package
// +k8s:conversion-gen=tenant.io/tenant-apiserver/pkg/apis/tenant
// +k8s:defaulter-gen=TypeMeta
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=io.tenant.v1alpha1
// +groupName=tenant.io

// Package v1alpha1 is version v1alpha1 of the tenant.io API: tenant-private
// views of a shared OVN-Kubernetes cluster (Tenants, AddressPools,
// ProviderServices, VRFPeerings, Namespaces, Networks, FloatingIPs and
// LoadBalancers).
package v1alpha1
