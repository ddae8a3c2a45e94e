// Package claims is how stored objects hold addresses: an object is
// stored with the IPAM claims it records, or not at all, and no claim
// outlives the object that recorded it.
//
// One mechanism serves every kind (Ledger, with Claim and the write's
// kindstore.Record): a Tenant holds its block and public IPs in the provider's keyspace, an
// AddressPool its space in the pools' keyspace, and in the tenant space
// (TenantSpace) a Network its subnets and NAT address and a FloatingIP or
// LoadBalancer its public IP (PublicIPs). Each kind says which claims a
// stored object records and where to read the object a claim names; its
// create and update hooks make the claims and put them in the update's
// Record. Ledger then does the same for all: an update gives back, once its
// outcome is known, what its tries claimed in vain and what it gave up; a
// delete gives back what the object recorded; the sweepers ask it whether
// an allocation is still recorded (ipam.Recorder); and it claims again
// what objects record and nobody holds.
package claims
