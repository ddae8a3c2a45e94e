// Package hostbinding records which tenant claim holds which bare-metal
// server, with etcd as the only source of truth, so that a server is bound
// to at most one claim and a claim to at most one server, whatever number
// of tenant-apiserver replicas bind at once and whenever they crash.
//
// # Key layout
//
// A binding of claim C to host H is three keys, written and deleted together
// by one etcd transaction:
//
//	<prefix>/hosts/<H namespace>/<H name>   the Binding as JSON
//	<prefix>/claims/<C UID>                 the same JSON
//	<prefix>/tenants/<C tenant UID>/<C UID> empty: the owner index
//
// Each path segment is URL-path-escaped, so a '/' inside a name cannot make
// two hosts share a key. The host key answers "whose is this server", the
// claim key "which server does this claim hold"; both hold the whole binding
// so that either question is one read. The owner index lets ListTenant read
// only one tenant's keys. A Host is identified by its BareMetalHost's
// namespace and name, a claim by its UID (never reused by Kubernetes), so a
// claim deleted and created again under the same name is a new claim.
//
// # Why no server is bound twice and no claim holds two
//
// Bind is one transaction:
//
//	If(   CreateRevision(host key) = 0      // nobody holds the server
//	      CreateRevision(claim key) = 0     // the claim holds nothing
//	) Then( Put(host key), Put(claim key), Put(owner index key) )
//	  Else( Get(claim key), Get(host key) )
//
// A key that does not exist has create revision 0. etcd applies
// transactions one at a time, each against the state all earlier ones left,
// so of two binds that share the server or the claim, the later one sees the
// earlier one's key and takes the Else branch. Its reads belong to the same
// transaction, so they describe exactly the state that made it fail: if the
// claim is bound, Bind returns that binding (which makes Bind idempotent: a
// caller that crashed after binding, or whose answer was lost, finds its own
// binding on any replica); otherwise the server is another claim's and Bind
// returns ErrHostTaken, naming nobody. No lock, lease or process memory is
// involved; a replica knows nothing the others do not.
//
// Release reads the host and claim keys in one transaction and deletes the
// three keys in a second one that compares the modification revisions it
// read. If the binding was released and the server or claim bound again in
// between, a revision differs and nothing is deleted: a release can only
// ever remove the binding it names.
//
// # What a crash leaves
//
// A process can stop (or its context end, or its connection break) at any
// point; because each write is one transaction, etcd never holds part of a
// binding:
//
//   - Before Bind's transaction reaches etcd: nothing was written.
//   - After it is applied but before the answer arrives: the whole binding
//     exists while the caller saw an error. Binding the claim again, from any
//     replica, returns it. If the claim is deleted before that, the binding is
//     an orphan: Orphans lists it, and the syncer deprovisions the server and
//     releases it.
//   - In Release: the three keys are deleted together or not at all, and
//     releasing again is harmless.
//   - Between deprovisioning an orphan's server and releasing it: the
//     binding stays, so the next orphan check finds it again and
//     deprovisions again (which must be idempotent) before releasing.
//
// # Choosing a free server
//
// BindFirstFree takes the caller's candidates in its order of preference.
// It reads which of them are bound (and whether the claim already holds one)
// at one revision, then binds a random one of the first few free ones. How
// many it chooses among is the ledger's spread: 1 while its binds win at
// once, so the first free candidate is taken, widened to 16 and then 4x per
// lost race up to 1024 when replicas collide, and narrowed by an eighth with
// each call that wins without a lost race — the way pkg/ipam widens its aim.
// Calls in one ledger skip the candidates that other calls of the same
// ledger are binding at that moment, so a burst of claims through one
// replica does not collide with itself; only replicas collide, and they
// learn to spread. After a lost race it reads the candidates again, so
// ErrNoHost means that at one revision every candidate was bound. Neither
// the spread nor the marks decide anything: etcd's transaction does.
//
// Each try reads every candidate, in transactions of up to 128 reads, so a
// caller should pass the servers that fit the claim, not the whole fleet.
package hostbinding
