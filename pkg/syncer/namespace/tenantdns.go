package namespace

import (
	corev1 "k8s.io/api/core/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// TenantDNS is the provider's tenant DNS server, through which every pod
// of a tenant of Hard isolation resolves names.
type TenantDNS struct {
	// Address is the server's IPv4 address as pods reach it
	// (--tenant-dns-address); empty: there is none.
	Address string
	// ClusterDomain is the cluster's DNS domain (--cluster-domain).
	ClusterDomain string
}

// ReasonNoTenantDNS is a Namespace's HostSynced reason when its Tenant is
// Hard and the syncer knows no tenant DNS server: the host namespace keeps
// the nameserver it had, if any, and new pods there resolve through it.
const ReasonNoTenantDNS = "NoTenantDNS"

// hard says whether t's pods resolve through the tenant DNS server.
func hard(t *tenant.Tenant) bool { return t.Spec.Isolation == tenant.TenantIsolationHard }

// annotations are the tenant DNS annotations of the host namespace of
// tenant Namespace ns of t, whose copy on the host is have (nil when it is
// not there yet): the nameserver and search path for a Hard tenant, none
// for a Soft one. A Hard tenant with no server to name keeps what have
// holds: removing them would send the tenant's new pods to the cluster's
// own DNS, which answers every tenant's names.
func (d TenantDNS) annotations(t *tenant.Tenant, ns *tenant.Namespace, have *corev1.Namespace) map[string]string {
	out := map[string]string{}
	switch {
	case !hard(t):
	case d.Address != "":
		domain := d.ClusterDomain
		if domain == "" {
			domain = "cluster.local"
		}
		out[hostnames.DNSNameserverAnnotation] = d.Address
		out[hostnames.DNSSearchesAnnotation] = hostnames.DNSSearches(ns.Name, domain)
	case have != nil:
		for _, k := range []string{hostnames.DNSNameserverAnnotation, hostnames.DNSSearchesAnnotation} {
			if v, ok := have.Annotations[k]; ok {
				out[k] = v
			}
		}
	}
	return out
}
