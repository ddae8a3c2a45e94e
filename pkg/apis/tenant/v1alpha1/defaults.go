package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Default quota of a Tenant whose spec.quota leaves a field unset.
const (
	DefaultQuotaNamespaces    int32 = 10
	DefaultQuotaNetworks      int32 = 4
	DefaultQuotaFloatingIPs   int32 = 4
	DefaultQuotaLoadBalancers int32 = 4
	DefaultQuotaHostClaims    int32 = 0
)

// DefaultNetworkName is the Network every tenant gets, and the one a
// Namespace attaches to when it names none.
const DefaultNetworkName = "default"

// DefaultBGPPort is the port of a BGP neighbor that names none.
const DefaultBGPPort int32 = 179

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

func defaultInt32(p **int32, v int32) {
	if *p == nil {
		*p = &v
	}
}

// SetDefaults_TenantQuota fills unset quota fields with the defaults.
func SetDefaults_TenantQuota(obj *TenantQuota) {
	defaultInt32(&obj.Namespaces, DefaultQuotaNamespaces)
	defaultInt32(&obj.Networks, DefaultQuotaNetworks)
	defaultInt32(&obj.FloatingIPs, DefaultQuotaFloatingIPs)
	defaultInt32(&obj.LoadBalancers, DefaultQuotaLoadBalancers)
	defaultInt32(&obj.HostClaims, DefaultQuotaHostClaims)
}

// SetDefaults_TenantPodSecurity makes restricted the Pod Security Standard
// of a tenant that names none.
func SetDefaults_TenantPodSecurity(obj *TenantPodSecurity) {
	if obj.Level == "" {
		obj.Level = PodSecurityLevelRestricted
	}
}

// SetDefaults_TenantSpec makes Soft the isolation of a tenant that names none.
func SetDefaults_TenantSpec(obj *TenantSpec) {
	if obj.Isolation == "" {
		obj.Isolation = TenantIsolationSoft
	}
}

// SetDefaults_NamespaceSpec attaches a Namespace to the tenant's default Network.
func SetDefaults_NamespaceSpec(obj *NamespaceSpec) {
	if obj.Network == "" {
		obj.Network = DefaultNetworkName
	}
}

// SetDefaults_NetworkSpec makes Layer2 the default topology, and a
// network's Services private to it unless the tenant shares them.
func SetDefaults_NetworkSpec(obj *NetworkSpec) {
	if obj.Topology == "" {
		obj.Topology = NetworkTopologyLayer2
	}
	if obj.ServiceNetwork == "" {
		obj.ServiceNetwork = ServiceNetworkPrivate
	}
}

// SetDefaults_FloatingIPPort makes TCP the default protocol.
func SetDefaults_FloatingIPPort(obj *FloatingIPPort) {
	if obj.Protocol == "" {
		obj.Protocol = ProtocolTCP
	}
}

// SetDefaults_LoadBalancerPort makes TCP the default protocol and the public
// port the default backend port.
func SetDefaults_LoadBalancerPort(obj *LoadBalancerPort) {
	if obj.Protocol == "" {
		obj.Protocol = ProtocolTCP
	}
	if obj.TargetPort.Type == intstr.Int && obj.TargetPort.IntVal == 0 {
		obj.TargetPort = intstr.FromInt32(obj.Port)
	}
}

// SetDefaults_BGPNeighbor makes 179 the default BGP port.
func SetDefaults_BGPNeighbor(obj *BGPNeighbor) {
	defaultInt32(&obj.Port, DefaultBGPPort)
}

// SetDefaults_HostClaimSpec makes BareMetal the kind of a HostClaim that names none.
func SetDefaults_HostClaimSpec(obj *HostClaimSpec) {
	if obj.Kind == "" {
		obj.Kind = HostClaimBareMetal
	}
}

// SetDefaults_HostClassSpec shows the hardware summary of a class that says nothing.
func SetDefaults_HostClassSpec(obj *HostClassSpec) {
	if obj.Hardware == "" {
		obj.Hardware = HostHardwareSummary
	}
}
