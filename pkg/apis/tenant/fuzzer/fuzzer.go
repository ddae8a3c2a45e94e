// Package fuzzer holds the randfill functions that keep randomly filled
// tenant.io objects in the shape a decode would give them, for the round-trip
// test of the API group.
package fuzzer

import (
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

// Funcs returns the fuzzer functions of the tenant.io API group. Decoding
// applies the v1alpha1 defaults, so each function fills what defaulting
// would fill; otherwise internal -> v1alpha1 -> JSON -> internal would differ
// from the original without any data being lost.
func Funcs(codecs runtimeserializer.CodecFactory) []interface{} {
	return []interface{}{
		func(q *tenant.TenantQuota, c randfill.Continue) {
			c.FillNoCustom(q)
			defaultInt32(&q.Namespaces, v1alpha1.DefaultQuotaNamespaces)
			defaultInt32(&q.Networks, v1alpha1.DefaultQuotaNetworks)
			defaultInt32(&q.FloatingIPs, v1alpha1.DefaultQuotaFloatingIPs)
			defaultInt32(&q.LoadBalancers, v1alpha1.DefaultQuotaLoadBalancers)
			defaultInt32(&q.HostClaims, v1alpha1.DefaultQuotaHostClaims)
		},
		func(s *tenant.TenantSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.Isolation == "" {
				s.Isolation = tenant.TenantIsolationSoft
			}
		},
		func(p *tenant.TenantPodSecurity, c randfill.Continue) {
			c.FillNoCustom(p)
			if p.Level == "" {
				p.Level = tenant.PodSecurityLevelRestricted
			}
		},
		func(s *tenant.NamespaceSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.Network == "" {
				s.Network = v1alpha1.DefaultNetworkName
			}
		},
		func(s *tenant.NetworkSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.Topology == "" {
				s.Topology = tenant.NetworkTopologyLayer2
			}
			if s.ServiceNetwork == "" {
				s.ServiceNetwork = tenant.ServiceNetworkPrivate
			}
		},
		func(p *tenant.FloatingIPPort, c randfill.Continue) {
			c.FillNoCustom(p)
			if p.Protocol == "" {
				p.Protocol = tenant.ProtocolTCP
			}
		},
		func(p *tenant.LoadBalancerPort, c randfill.Continue) {
			c.FillNoCustom(p)
			if p.Protocol == "" {
				p.Protocol = tenant.ProtocolTCP
			}
			if p.TargetPort.Type == intstr.Int && p.TargetPort.IntVal == 0 {
				p.TargetPort = intstr.FromInt32(p.Port)
			}
		},
		func(s *tenant.HostClassSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.Hardware == "" {
				s.Hardware = tenant.HostHardwareSummary
			}
		},
		func(s *tenant.HostClaimSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.Kind == "" {
				s.Kind = tenant.HostClaimBareMetal
			}
		},
		func(n *tenant.BGPNeighbor, c randfill.Continue) {
			c.FillNoCustom(n)
			defaultInt32(&n.Port, v1alpha1.DefaultBGPPort)
		},
	}
}

func defaultInt32(p **int32, v int32) {
	if *p == nil {
		*p = &v
	}
}
