// Package syncer tests the tenant syncer through the whole stack: onboarding
// a Tenant onto the host (namespaces, RoleBindings, MetalLB pool and
// advertisement), ownership of host objects, repair of drift and removal of
// orphans, leader failover between two tenant-apiserver replicas, a host
// outage, and offboarding. It runs a stack of its own whose tenant-apiserver
// has short leader-election, check and IPAM periods, so that each of these
// happens within seconds; the tests poll for outcomes and never assert how
// long they took.
package syncer

import (
	"os"
	"testing"

	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/pkg/tenancy"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// Host users of the tests besides the stack's defaults. Each test onboards a
// tenant of its own with one of them as its member: a user that is a member
// of two tenants may act as neither, so no two tests share one.
const (
	alice        = "alice" // TestOnboarding
	ownerUser    = "dora"  // TestOwnershipHostNameTaken
	driftUser    = "drew"  // TestDriftRepairAndOrphans
	failoverUser = "fay"   // TestLeaderFailover
	outageUser   = "otto"  // TestHostOutage
	offboardUser = "olga"  // TestOffboarding
	networkUser  = "nina"  // TestNetworks
	refusedUser  = "rita"  // TestNetworks: the tenant whose network OVN-Kubernetes refuses
	peeringUser  = "petra" // TestVRFPeering
	offerUserA   = "pia"   // TestProviderServices, tenant A
	offerUserB   = "quinn" // TestProviderServices, tenant B
	// TestProviderServiceConnectsProperty: the members of its three tenants.
	propUser1, propUser2, propUser3 = "ralf", "sven", "tara"
	celUser                         = "vera" // network_cel_test.go: Networks against the host's CUDN CRD
	lbUser                          = "lena" // TestLoadBalancers
	fipUser                         = "finn" // TestFloatingIPs
	publicDNSUser                   = "nora" // TestPublicDNSNames
	isoUserA                        = "ines" // TestPublicIPIsolation, tenant A
	isoUserB                        = "ivan" // TestPublicIPIsolation, tenant B
	vmUser                          = "vic"  // TestVirtualMachines
	quotaUser                       = "cora" // TestComputeQuota
	egressUser                      = "elsa" // TestEgressDisjointProperty

	backDoorUser         = "bob"  // TestHostBackDoors: the attacking tenant's member
	overGrantedUser      = "rex"  // TestHostBackDoors: a member of it with more host RBAC than the product gives
	backDoorVictimUser   = "tom"  // TestHostBackDoors: the victim tenant's member
	podSecurityUser      = "pat"  // TestPodSecurityLevels
	mtbUser              = "mel"  // TestMultiTenancyBenchmark: the tenant member performing the checks
	mtbOverGrantedUser   = "moe"  // TestMultiTenancyBenchmark: its over-granted co-member
	mtbVictimUser        = "max"  // TestMultiTenancyBenchmark: the other tenant's member
	operateUser          = "mia"  // TestMetricsAndAudit
	attachUser           = "ada"  // TestNamespaceNetworkAttached
	deleteUser           = "dina" // TestNamespaceDeleteLeavesNetworkReady
	dnsUser              = "dana" // TestTenantDNS: the member of the Hard tenant
	dnsOverGrantedUser   = "dex"  // TestTenantDNS: a member of it with namespace writes on the host
	softDNSUser          = "sol"  // TestTenantDNS: the member of the Soft tenant
	shareUserA           = "sam"  // TestServiceNetworks, tenant A
	shareUserB           = "uma"  // TestServiceNetworks, tenant B
	hostUserA            = "mira" // TestHostClaims, the tenant that claims first
	hostUserB            = "moss" // TestHostClaims, the tenant that waits
	routeUser            = "ross" // TestRoutes: the attacking tenant's member
	routeOverGrantedUser = "rolf" // TestRoutes: a member of it with more host RBAC than the product gives
	routeVictimUser      = "rhea" // TestRoutes: the member of the tenant whose hostname is attacked

	// TestIdentityGroups: its tenant (a fixed name: iris's group names
	// it), the member users of the Tenant, and iris, a user the identity
	// provider's group sync puts in the tenant's OpenShift Group, and whom
	// the host therefore authenticates with that Group among its groups.
	identityTenant  = "identity"
	identityUser    = "ida"
	identityUser2   = "ivo"
	identityIdPUser = "iris"
)

func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m, stack.Options{
		TenantAPIServerArgs: framework.QuickSyncerArgs(),
		ExtraUsers: []stack.User{
			{Name: ownerUser}, {Name: driftUser}, {Name: failoverUser}, {Name: outageUser}, {Name: offboardUser},
			{Name: networkUser}, {Name: refusedUser}, {Name: celUser}, {Name: peeringUser}, {Name: offerUserA}, {Name: offerUserB}, {Name: propUser1}, {Name: propUser2}, {Name: propUser3},
			{Name: lbUser}, {Name: fipUser}, {Name: publicDNSUser}, {Name: isoUserA}, {Name: isoUserB}, {Name: vmUser}, {Name: quotaUser}, {Name: egressUser},
			{Name: overGrantedUser}, {Name: backDoorVictimUser}, {Name: podSecurityUser},
			{Name: mtbUser}, {Name: mtbOverGrantedUser}, {Name: mtbVictimUser}, {Name: operateUser}, {Name: attachUser}, {Name: deleteUser}, {Name: deleteUser},
			{Name: dnsUser}, {Name: dnsOverGrantedUser}, {Name: softDNSUser},
			{Name: shareUserA}, {Name: shareUserB},
			{Name: hostUserA}, {Name: hostUserB},
			{Name: routeUser}, {Name: routeOverGrantedUser}, {Name: routeVictimUser},
			{Name: identityUser}, {Name: identityUser2}, {Name: identityIdPUser, Groups: []string{tenancy.IdentityGroup(identityTenant)}},
		},
		BareMetalStandIn: true,
		// The provider's gateway, for TestRoutes.
		Gateway: true,
		Setup:   stack.DemoPools,
	}))
}
