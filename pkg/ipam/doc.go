// Package ipam allocates IPv4 blocks (tenant networks) and addresses (public
// IPs) from pools, with etcd as the only source of truth.
//
// # Key layout
//
// Every allocation is one key, <prefix>/blocks/v4/<bits>, where <bits> is the
// network prefix of the block written as '0' and '1' (10.42.0.0/16 is
// 0000101000101010; a single address has 32 digits). Its value is the JSON of
// an Allocation: pool, block, owner, creation time. With this spelling the
// blocks inside a block B are exactly the keys that start with B's key, and
// the blocks that contain B are exactly the keys that are prefixes of B's
// key. All pools share the keyspace, so not even two overlapping pools can
// hand out the same address twice.
//
// Next to each allocation, in the same transaction, an empty key
// <prefix>/owners/<tenant UID>/v4/<bits> indexes it by owner, so that
// releasing a tenant reads only that tenant's keys.
//
// # Why no two allocations overlap
//
// Two blocks overlap only if one contains the other (or they are equal), so
// a block B may be written only if no key starts with B's key and no key is
// a proper prefix of it. A claim is one etcd transaction:
//
//	If(   CreateRevision(key(B)) = 0 over the prefix key(B)   // B and everything inside it
//	      CreateRevision(key(A)) = 0 for each ancestor A of B  // /0 ... /len(B)-1
//	) Then( Put(key(B), allocation), Put(owner index key, "") )
//	  Else( read the keys under key(B), to learn who was faster )
//
// etcd applies a compare over a key range to every key in the range and, when
// the range holds no key, to an empty key-value whose revisions are 0 (etcd
// server/etcdserver/txn: applyCompare; TestEtcdRangeCompareSemantics checks
// it on a real etcd). So the first compare holds exactly when no key has the
// prefix. Note that a compare on the VALUE of an empty range always fails,
// which is why the claim compares revisions. Transactions are applied one at
// a time against one revision, so of two overlapping claims the second sees
// the first's key and fails. Ancestors are checked all the way to the /0, not
// only to the pool's own length, so the guarantee does not depend on pool
// definitions. Nothing else is needed: no lock, lease or memory, and a crash
// at any point leaves either the whole claim or nothing.
//
// A single claim of a /n costs n+1 compares, within etcd's default limit of
// 128 operations per transaction. AllocateAddresses puts as many addresses
// into one transaction as the limit allows (their ancestors are shared).
//
// # Finding a free block
//
// Each Allocator keeps a hint: the set of allocated blocks, read once and
// kept current by a watch on the blocks directory, and for each pool a binary
// trie over the address space in which every node knows the largest wholly
// free aligned block below it. The lowest free aligned block of a size is
// then one descent (at most 32 steps), whatever the pool's fill. Calls in one
// process mark the blocks they are claiming, so they do not race each other;
// calls in other processes may pick the same block, and the loser's failed
// transaction reads back the conflicting keys, which go into the hint before
// the next try. The hint can be stale; the transaction cannot.
//
// The fit strategy is first fit: the lowest-addressed free aligned block of
// the requested size inside the pool's available space. It packs allocations
// towards the start of a pool and leaves the largest blocks free at its end.
// Strict first fit makes replicas that allocate at the same moment all aim
// at the same lowest block, and all but one lose. So an allocator whose
// claims lose races widens its aim: it starts its search at a random one of
// the lowest free addresses (16 blocks' worth after the first lost race, up
// to 1024), uniform over free addresses thanks to a free-address count per
// trie node. The width shrinks again by an eighth with every call that wins
// at once, back to strict first fit when replicas stop colliding. A single
// allocator never collides with itself.
package ipam
