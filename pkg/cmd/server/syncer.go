package server

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer"
	"tenant.io/tenant-apiserver/pkg/syncer/onboarding"
)

// SyncerOptions are the options of the syncer that makes tenants real on
// the host (--kubeconfig names the host).
type SyncerOptions struct {
	Enabled bool
	Config  syncer.Config
	// HostQPS and HostBurst limit the syncer's requests to the host.
	HostQPS   float32
	HostBurst int
	// RouteDomain is --route-domain, read by every replica.
	RouteDomain string
	advertise   string
	// flowSchemas is --tenant-flow-schemas (Config.NoFlowSchemas inverted).
	flowSchemas bool
}

// NewSyncerOptions returns the default syncer options.
func NewSyncerOptions() *SyncerOptions {
	return &SyncerOptions{
		Enabled: true,
		Config: syncer.Config{
			LeaseNamespace:   "tenant-system",
			LeaseName:        "tenant-apiserver-syncer",
			LeaseDuration:    15 * time.Second,
			RenewDeadline:    10 * time.Second,
			RetryPeriod:      2 * time.Second,
			Workers:          128,
			CheckPeriod:      30 * time.Second,
			CheckRate:        50,
			MetalLBNamespace: "metallb-system",
			FRRNamespace:     "frr-k8s-system",
			ClusterDomain:    "cluster.local",
		},
		HostQPS:     500,
		HostBurst:   1000,
		advertise:   string(onboarding.AdvertiseL2),
		flowSchemas: true,
	}
}

// AddFlags adds the syncer's flags to fs.
func (o *SyncerOptions) AddFlags(fs *pflag.FlagSet) {
	c := &o.Config
	fs.BoolVar(&o.Enabled, "syncer", o.Enabled, "Run the syncer, which makes tenants real on the host (--kubeconfig), when this replica holds the syncer Lease.")
	fs.StringVar(&c.LeaseNamespace, "syncer-lease-namespace", c.LeaseNamespace, "Namespace of the host Lease that elects the syncer's leader.")
	fs.StringVar(&c.LeaseName, "syncer-lease-name", c.LeaseName, "Name of the host Lease that elects the syncer's leader.")
	fs.DurationVar(&c.LeaseDuration, "syncer-lease-duration", c.LeaseDuration, "How long a standby replica waits before it takes over from a leader that stopped renewing.")
	fs.DurationVar(&c.RenewDeadline, "syncer-renew-deadline", c.RenewDeadline, "How long the leader keeps trying to renew before it stops syncing.")
	fs.DurationVar(&c.RetryPeriod, "syncer-retry-period", c.RetryPeriod, "How often replicas try to acquire or renew the Lease.")
	fs.IntVar(&c.Workers, "syncer-workers", c.Workers, "Workers of the namespace controller (the tenant controller gets half). Each spends most of its time waiting for the host, so many are cheap; see docs/perf/sync.md.")
	fs.DurationVar(&c.CheckPeriod, "syncer-check-period", c.CheckPeriod, "How often orphaned host objects are removed and every object checked for drift.")
	fs.Float64Var(&c.CheckRate, "syncer-check-rate", c.CheckRate, "Objects a second, at most, that each controller checks for drift on the periodic check: a pass over a store larger than "+
		"the rate times the period takes longer, and the next waits for it, so that the check's cost does not grow with the store.")
	fs.StringVar(&c.MetalLBNamespace, "metallb-namespace", c.MetalLBNamespace, "Namespace of MetalLB's pools and advertisements.")
	fs.StringVar(&c.FRRNamespace, "frr-k8s-namespace", c.FRRNamespace, "Namespace of frr-k8s: the VRF peerings' FRRConfigurations and BGP password Secrets (openshift-frr-k8s on OpenShift).")
	fs.StringVar(&c.ClusterDomain, "cluster-domain", c.ClusterDomain, "The cluster's DNS domain, which the alias Services of provider services name.")
	fs.StringVar(&c.TenantDNSAddress, "tenant-dns-address", c.TenantDNSAddress, "The IPv4 address of the provider's tenant DNS server (its Service) as tenants' pods reach it. "+
		"Every pod of a Tenant of spec.isolation Hard resolves names through it alone (docs/deploy.md). Empty: there is none, and Tenants of Hard isolation are refused. "+
		"Read by every replica, syncer or not: give all replicas the same.")
	fs.StringVar(&c.PublicDNSZone, "public-dns-zone", c.PublicDNSZone, "The provider's public DNS zone (e.g. tenants.example.net): the public address of every FloatingIP and LoadBalancer "+
		"is named <name>.<namespace>.<tenant>.<zone> in it, in their status.dnsName, which the tenant DNS server answers. Empty: no names.")
	fs.StringVar(&o.RouteDomain, "route-domain", o.RouteDomain, "The provider's route domain (e.g. apps.example.net): each tenant's HTTPRoutes on the provider's gateways may name <tenant>.<domain> "+
		"and the names below it, and no other (Tenant status.routeDomain; the routes guard policy). Empty: tenants' routes are refused. "+
		"Read by every replica, syncer or not: give all replicas the same.")
	fs.StringVar(&o.advertise, "metallb-advertisement", o.advertise, "How MetalLB announces tenants' public IPs: L2 or BGP.")
	fs.BoolVar(&o.flowSchemas, "tenant-flow-schemas", o.flowSchemas, "Give each tenant a FlowSchema on the host (tenant.io-<tenant>), so that all its requests there are one flow of the tenant-workloads priority level. "+
		"Every host request that matches none of them is tried against all of them first; see docs/deploy.md for the cost per tenant. Off, the syncer deletes the ones it made.")
	fs.Float32Var(&o.HostQPS, "syncer-host-qps", o.HostQPS, "Requests per second the syncer, and the registry's reads of host pods on deletes, may send to the host.")
	fs.IntVar(&o.HostBurst, "syncer-host-burst", o.HostBurst, "Burst of requests the syncer, and the registry's reads of host pods on deletes, may send to the host.")
}

// Validate checks the options. The public DNS zone is checked even when
// the syncer is off: a zone that is not a DNS name is a mistake whatever
// runs.
func (o *SyncerOptions) Validate() []error {
	var errs []error
	// The registry reads the tenant DNS address whether this replica
	// syncs or not.
	if err := validateTenantDNSAddress(o.Config.TenantDNSAddress); err != nil {
		errs = append(errs, err)
	}
	if zone := o.Config.PublicDNSZone; zone != "" {
		if msgs := hostnames.ValidateDNSName(hostnames.CanonicalDNSName(zone)); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--public-dns-zone %q is not a DNS name: %s", zone, strings.Join(msgs, "; ")))
		}
	}
	if o.RouteDomain != "" {
		d := hostnames.CanonicalDNSName(o.RouteDomain)
		msgs := hostnames.ValidateDNSName(d)
		if len(d) > hostnames.MaxRouteDomainLength {
			msgs = append(msgs, fmt.Sprintf("is %d characters, more than %d: with a tenant's name and a name of its own in front it would not be a DNS name", len(d), hostnames.MaxRouteDomainLength))
		}
		if len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--route-domain %q is not a DNS name: %s", o.RouteDomain, strings.Join(msgs, "; ")))
		}
	}
	if !o.Enabled {
		return errs
	}
	o.Config.Advertise = onboarding.Advertisement(o.advertise)
	o.Config.NoFlowSchemas = !o.flowSchemas
	if err := o.Config.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// ApplyTo returns the syncer configuration for the host reached through
// host (nil when the syncer is off).
func (o *SyncerOptions) ApplyTo(host *rest.Config) (*syncer.Config, error) {
	if !o.Enabled {
		return nil, nil
	}
	if host == nil {
		return nil, fmt.Errorf("the syncer needs the host: set --kubeconfig, run in a cluster, or pass --syncer=false")
	}
	c := o.Config
	c.Advertise = onboarding.Advertisement(o.advertise)
	c.Host = rest.CopyConfig(host)
	c.Host.QPS, c.Host.Burst = o.HostQPS, o.HostBurst
	c.Host.UserAgent = "tenant-apiserver/syncer"
	return &c, nil
}

// validateTenantDNSAddress checks --tenant-dns-address: empty, or one IPv4
// address a pod can send queries to.
func validateTenantDNSAddress(address string) error {
	if address == "" {
		return nil
	}
	ip, err := netip.ParseAddr(address)
	switch {
	case err != nil || !ip.Is4() || ip.Zone() != "":
		return fmt.Errorf("--tenant-dns-address %q: want an IPv4 address", address)
	case ip.IsUnspecified() || ip.IsLoopback() || ip.IsMulticast() || ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return fmt.Errorf("--tenant-dns-address %s: want an address a pod can send queries to (the tenant DNS Service's)", address)
	}
	return nil
}
