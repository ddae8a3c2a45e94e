package ipam

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Purposes an allocation is made for.
const (
	// PurposeTenantNetwork is a tenant's private IPv4 block.
	PurposeTenantNetwork = "TenantNetwork"
	// PurposePublicIP is one of a tenant's public addresses.
	PurposePublicIP = "PublicIP"
)

// Range is the inclusive IPv4 address range First-Last.
type Range struct {
	First netip.Addr
	Last  netip.Addr
}

// String returns the range as "first-last".
func (r Range) String() string { return r.First.String() + "-" + r.Last.String() }

// Pool is the address space an allocation is taken from: the union of CIDRs
// and Ranges, minus Exclude. Pools are passed by value on every call; the
// allocator keeps no registry of them. All pools share one keyspace, so two
// pools that overlap still never hand out the same address.
type Pool struct {
	// Name appears in errors and in the allocations taken from the pool.
	Name string
	// CIDRs are IPv4 network prefixes (10.0.0.0/8, not 10.0.0.1/8).
	CIDRs []netip.Prefix
	// Ranges are inclusive address ranges, decomposed into CIDRs internally.
	Ranges []Range
	// Exclude is never handed out, and explicit claims of it are refused. A
	// single address is a /32.
	Exclude []netip.Prefix
}

// Validate reports what is wrong with the pool, wrapping ErrInvalid.
func (p Pool) Validate() error {
	var errs []error
	if p.Name == "" {
		errs = append(errs, errors.New("pool has no name"))
	}
	if len(p.CIDRs) == 0 && len(p.Ranges) == 0 {
		errs = append(errs, errors.New("pool has neither CIDRs nor ranges"))
	}
	for _, c := range p.CIDRs {
		if err := validateBlock(c); err != nil {
			errs = append(errs, fmt.Errorf("cidr: %w", err))
		}
	}
	for _, r := range p.Ranges {
		if !r.First.Is4() || !r.Last.Is4() {
			errs = append(errs, fmt.Errorf("range %s is not IPv4", r))
		} else if r.Last.Less(r.First) {
			errs = append(errs, fmt.Errorf("range %s ends before it starts", r))
		}
	}
	for _, e := range p.Exclude {
		if err := validateBlock(e); err != nil {
			errs = append(errs, fmt.Errorf("exclude: %w", err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: pool %q: %w", ErrInvalid, p.Name, errors.Join(errs...))
	}
	return nil
}

// Space returns the pool's CIDRs and Ranges as disjoint aligned blocks,
// ignoring Exclude. The pool must be valid.
func (p Pool) Space() []netip.Prefix {
	all := append([]netip.Prefix(nil), p.CIDRs...)
	for _, r := range p.Ranges {
		cidrs, err := RangeToCIDRs(r.First, r.Last)
		if err == nil {
			all = append(all, cidrs...)
		}
	}
	return Normalize(all)
}

// Available returns the space the pool hands out: Space minus Exclude.
func (p Pool) Available() []netip.Prefix { return Subtract(p.Space(), p.Exclude) }

// Capacity returns the number of addresses the pool hands out.
func (p Pool) Capacity() uint64 { return Capacity(p.Available()) }

// compiledPool is a validated pool with its space worked out once per call.
type compiledPool struct {
	name      string
	space     []netip.Prefix
	available []netip.Prefix
	exclude   []netip.Prefix
	// id tells pools apart in the allocator's hint: equal ids have equal
	// available space.
	id string
}

func compile(p Pool) (*compiledPool, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	cp := &compiledPool{name: p.Name, space: p.Space(), exclude: Normalize(p.Exclude)}
	cp.available = Subtract(cp.space, cp.exclude)
	var sb strings.Builder
	sb.WriteString(p.Name)
	for _, b := range cp.available {
		sb.WriteByte(' ')
		sb.WriteString(b.String())
	}
	cp.id = sb.String()
	return cp, nil
}

// overlapsSpace reports whether b shares an address with the pool's space.
func (cp *compiledPool) overlapsSpace(b netip.Prefix) bool {
	for _, s := range cp.space {
		if s.Overlaps(b) {
			return true
		}
	}
	return false
}

func validateBlock(b netip.Prefix) error {
	switch {
	case !b.IsValid():
		return fmt.Errorf("%w: invalid prefix %s", ErrInvalid, b)
	case !b.Addr().Is4():
		return fmt.Errorf("%w: %s is not IPv4", ErrInvalid, b)
	case b.Masked() != b:
		return fmt.Errorf("%w: %s is not a network address (did you mean %s?)", ErrInvalid, b, b.Masked())
	}
	return nil
}

// Owner says who holds an allocation. TenantUID is what release and the
// sweeper go by: a tenant deleted and re-created under the same name is a
// different owner.
type Owner struct {
	Tenant    string `json:"tenant"`
	TenantUID string `json:"tenantUID"`
	// Purpose is PurposeTenantNetwork, PurposePublicIP or another word the
	// caller chooses.
	Purpose string `json:"purpose"`
	// Ref optionally names the object that uses the allocation, such as the
	// FloatingIP that holds a public address.
	Ref string `json:"ref,omitempty"`
}

func (o Owner) validate() error {
	if o.TenantUID == "" {
		return fmt.Errorf("%w: owner of tenant %q has no UID", ErrInvalid, o.Tenant)
	}
	return nil
}

// matches reports whether the stored owner s is o for release: same tenant
// UID, and same purpose unless o leaves the purpose empty.
func (o Owner) matches(s Owner) bool {
	return o.TenantUID == s.TenantUID && (o.Purpose == "" || o.Purpose == s.Purpose)
}

// Claim is one block of a keyspace, claimed for an owner: what an object
// records of an allocation.
type Claim struct {
	Block netip.Prefix
	Owner Owner
}

// Same says whether c and o are the same claim: the same block, for the
// same purpose of the same owner (Ref only names where to look).
func (c Claim) Same(o Claim) bool {
	return c.Block == o.Block && c.Owner.Purpose == o.Owner.Purpose && c.Owner.TenantUID == o.Owner.TenantUID
}

// In says whether c is one of cs.
func (c Claim) In(cs []Claim) bool {
	return slices.ContainsFunc(cs, c.Same)
}

// Allocation is the value stored at BlockKey(Block).
type Allocation struct {
	Pool    string       `json:"pool"`
	Block   netip.Prefix `json:"block"`
	Owner   Owner        `json:"owner"`
	Created time.Time    `json:"created"`
	// ClaimID is unique to the call that wrote the allocation; it lets that
	// call remove what it wrote when etcd's answer was lost.
	ClaimID string `json:"claimID,omitempty"`
	// Revision is the etcd modification revision the allocation was read at.
	Revision int64 `json:"-"`
}

// ErrInvalid is wrapped by errors about malformed input: a bad prefix, a
// pool without space, an owner without UID.
var ErrInvalid = errors.New("invalid")

// ErrContention is returned when an allocation lost the race for free space
// too many times in a row.
var ErrContention = errors.New("too much contention for free space")

// OutsidePoolError is returned for an explicit claim that does not lie wholly
// inside the pool.
type OutsidePoolError struct {
	Pool  string
	Block netip.Prefix
}

func (e *OutsidePoolError) Error() string {
	return fmt.Sprintf("%s is not inside pool %q", e.Block, e.Pool)
}

// ExcludedError is returned for an explicit claim that overlaps excluded
// space of the pool.
type ExcludedError struct {
	Pool     string
	Block    netip.Prefix
	Excluded netip.Prefix
}

func (e *ExcludedError) Error() string {
	return fmt.Sprintf("%s overlaps %s, which pool %q excludes", e.Block, e.Excluded, e.Pool)
}

// TakenError is returned for a claim of space that is already allocated.
type TakenError struct {
	Block netip.Prefix
	// Conflict is an allocation that overlaps Block (equal, containing or
	// inside it), and Holder its owner, when the store said.
	Conflict netip.Prefix
	Holder   *Owner
}

func (e *TakenError) Error() string {
	msg := fmt.Sprintf("%s is already allocated", e.Block)
	if e.Conflict.IsValid() && e.Conflict != e.Block {
		msg = fmt.Sprintf("%s overlaps %s, which is already allocated", e.Block, e.Conflict)
	}
	if e.Holder != nil && e.Holder.Tenant != "" {
		msg += fmt.Sprintf(" to tenant %q", e.Holder.Tenant)
	}
	return msg
}

// ExhaustedError is returned when a pool has no free block of the size
// asked for, or fewer free addresses than asked for.
type ExhaustedError struct {
	Pool      string
	PrefixLen int
	// Requested blocks, and how many of them were free when the allocator
	// gave up.
	Requested int
	Free      int
}

func (e *ExhaustedError) Error() string {
	if e.Requested > 1 {
		return fmt.Sprintf("pool %q exhausted: %d /%d blocks requested, %d free", e.Pool, e.Requested, e.PrefixLen, e.Free)
	}
	return fmt.Sprintf("pool %q exhausted: no free /%d block", e.Pool, e.PrefixLen)
}

// OwnerMismatchError is returned when releasing a block that someone else
// holds.
type OwnerMismatchError struct {
	Block  netip.Prefix
	Holder Owner
}

func (e *OwnerMismatchError) Error() string {
	return fmt.Sprintf("%s is held by tenant %q (uid %s, purpose %s), not by the releaser",
		e.Block, e.Holder.Tenant, e.Holder.TenantUID, e.Holder.Purpose)
}
